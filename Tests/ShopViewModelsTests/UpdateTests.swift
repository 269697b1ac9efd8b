import Foundation
import ShopAPI
import ShopCache
import Testing
@testable import ShopViewModels

@Suite struct BalanceTransitions {
    @Test func startAsksForCacheThenEverything() {
        var d = Driver()
        let effects = d.send(.start)
        #expect(effects.first == .readCache(generation: 1, user: CacheKey(baseURL: "http://shop.test", user: "qa-alice"), shop: CacheKey(baseURL: "http://shop.test", user: nil)))
        #expect(effects.contains(.fetchBalance(generation: 1, user: "qa-alice")) && effects.contains(.fetchPacks(generation: 1)))
        #expect(d.requestID(forPage: 1) != nil)
        #expect(d.state.balance.phase == .loading && d.state.packs.status == .loading)
    }

    @Test func cachedThenLive() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(generation: 1, balance: CacheEntry(value: CheerBalance(balance: 1000), fetchedAt: t0.addingTimeInterval(-720)), packs: nil, firstPage: nil))
        #expect(d.state.balance.phase == .cached(1000, fetchedAt: t0.addingTimeInterval(-720), reason: nil))
        let effects = d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(d.state.balance.phase == .live(1250, fetchedAt: t0))
        #expect(effects == [.writeBalance(key: alice.userKey, CheerBalance(balance: 1250), fetchedAt: t0)])
    }

    @Test func aFailureKeepsTheCachedValueWithTheReason() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(generation: 1, balance: CacheEntry(value: CheerBalance(balance: 1000), fetchedAt: t0), packs: nil, firstPage: nil))
        d.apply(.balanceLoaded(generation: 1, .failure(refused), at: t0))
        #expect(d.state.balance.phase == .cached(1000, fetchedAt: t0, reason: "offline: connection refused"))
        #expect(d.state.notice?.kind == .error && d.state.notice?.text.contains("connection refused") == true)
        // …and a later live value replaces it.
        d.send(.refreshBalance)
        #expect(d.state.balance.phase == .cached(1000, fetchedAt: t0, reason: nil))  // refreshing
        d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 5)), at: t0))
        #expect(d.state.balance.phase == .live(5, fetchedAt: t0) && d.state.balance.lastError == nil)
    }

    @Test func aFailureWithNothingKnownIsFailed() {
        var d = Driver()
        d.send(.start)
        d.apply(.balanceLoaded(generation: 1, .failure(refused), at: t0))
        #expect(d.state.balance.phase == .failed(refused.description))
    }

    @Test func aRefreshWhileLoadingIsCoalesced() {
        var d = Driver()
        d.send(.refreshBalance)
        #expect(d.send(.refreshBalance).isEmpty && d.send(.refresh).filter { if case .fetchBalance = $0 { return true } else { return false } }.isEmpty)
        d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 1)), at: t0))
        #expect(d.send(.refreshBalance) == [.fetchBalance(generation: 1, user: "qa-alice")])
    }

    @Test func answersForAnEarlierContextAreDropped() {
        var d = Driver()
        d.send(.start)
        let first = d.requestID(forPage: 1)
        let effects = d.send(.switchContext(baseURL: "http://other.test", user: "qa-empty"))
        #expect(effects.first == .cancelAll && d.state.generation == 2)
        #expect(effects.contains(.fetchBalance(generation: 2, user: "qa-empty")))
        d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 1250)), at: t0))
        d.apply(.packsLoaded(generation: 1, .success(samplePacks), at: t0))
        d.apply(.historyLoaded(generation: 1, requestID: first ?? 0, page: 1, .success(historyPage(1)), at: t0))
        d.apply(.cacheLoaded(generation: 1, balance: CacheEntry(value: CheerBalance(balance: 3), fetchedAt: t0), packs: nil, firstPage: nil))
        #expect(d.state.balance.phase == .loading && d.state.packs.all.isEmpty && d.state.history.rows.isEmpty)
        d.apply(.balanceLoaded(generation: 2, .success(CheerBalance(balance: 0)), at: t0))
        #expect(d.state.balance.phase == .live(0, fetchedAt: t0) && d.state.context.user == "qa-empty")
    }
}

@Suite struct PackTransitions {
    func loaded() -> Driver {
        var d = Driver()
        d.send(.start)
        d.apply(.packsLoaded(generation: 1, .success(samplePacks), at: t0))
        return d
    }

    @Test func filterIsCaseAndDiacriticInsensitiveOverNameCreatorTagAndIdentifier() {
        var d = loaded()
        for (needle, expected) in [("cafe", ["com.reiterate.pack.cafe-flore"]), ("ZURICH", ["com.reiterate.pack.zurich-tram"]),
                                   ("jurg", ["com.reiterate.pack.zurich-tram"]), ("city", ["com.reiterate.pack.tokyo-night"]),
                                   ("東京", ["com.reiterate.pack.tokyo-night"]), ("pack.rain", ["com.reiterate.pack.rain"]),
                                   ("nothing-like-this", []), ("", samplePacks.packs.map(\.identifier))] {
            d.send(.setPackFilter(needle))
            #expect(d.state.packs.visible.map(\.identifier) == expected, "\(needle)")
        }
    }

    @Test func sortsAndKeepsTheSelectedPack() {
        var d = loaded()
        d.send(.selectPack(index: 2))  // 東京 Night Walk
        d.send(.setPackSort(.name))
        #expect(d.state.packs.visible.map(\.name) == ["Café de Flore Mornings", "Rain on a Tin Roof", "Zürich Tram Lines", "東京 Night Walk"])
        #expect(d.state.packs.selected?.name == "東京 Night Walk")
        d.send(.setPackSort(.price))
        #expect(d.state.packs.visible.map(\.priceCents) == [0, 99, 199, 499])
        d.send(.setPackSort(.cheer))
        #expect(d.state.packs.visible.map(\.cheerTotal) == [900, 300, 50, 10])
        d.send(.setPackSort(.shopOrder))
        #expect(d.state.packs.visible == samplePacks.packs && PackSort.cheer.next == .shopOrder)
    }

    @Test func selectionIsClampedAndFollowsTheFilter() {
        var d = loaded()
        d.send(.movePackSelection(10))
        #expect(d.state.packs.selectedIndex == 3)
        d.send(.movePackSelection(-10))
        #expect(d.state.packs.selectedIndex == 0)
        d.send(.setPackFilter("tokyo"))
        #expect(d.state.packs.selected?.identifier == "com.reiterate.pack.tokyo-night")
        d.send(.setPackFilter("no match"))
        #expect(d.state.packs.selected == nil && d.state.packs.selectedIndex == 0)
    }

    @Test func failureAndCache() {
        var d = Driver()
        d.send(.start)
        d.apply(.packsLoaded(generation: 1, .failure(refused), at: t0))
        #expect(d.state.packs.status == .failed(refused.description))
        var c = Driver()
        c.send(.start)
        c.apply(.cacheLoaded(generation: 1, balance: nil, packs: CacheEntry(value: samplePacks, fetchedAt: t0), firstPage: nil))
        c.apply(.packsLoaded(generation: 1, .failure(refused), at: t0))
        #expect(c.state.packs.visible.count == 4 && c.state.packs.source == .cached(reason: "offline: connection refused"))
    }
}

@Suite struct HistoryTransitions {
    func started(capacity: Int = 8) -> Driver {
        var d = Driver(capacity: capacity)
        d.send(.start)
        d.loadPage(1)
        return d
    }

    @Test func pagingIntentsAndTotals() {
        var d = started()
        #expect(d.state.history.rows.count == 50 && d.state.history.positionText == "page 1 of 5 · 230 cheers")
        let next = d.send(.historyNextPage)
        #expect(d.state.history.page == 2 && next.count == 1 && d.requestID(forPage: 2, in: next) != nil)
        #expect(d.state.history.rows.isEmpty)  // loading
        d.loadPage(2)
        #expect(d.state.history.rows.first == .entry(entry(50)))
        #expect(d.send(.historyPreviousPage).isEmpty && d.state.history.page == 1)  // resident: no fetch
        d.send(.historyLastPage)
        #expect(d.state.history.page == 5)
        d.loadPage(5)
        #expect(d.state.history.rows.count == 30)
        #expect(d.send(.historyNextPage).isEmpty && d.state.history.page == 5)  // no page 6
        d.send(.historyGoTo(page: 999))
        #expect(d.state.history.page == 5)
        d.send(.historyFirstPage)
        #expect(d.state.history.page == 1)
    }

    @Test func prefetchNearTheEndOfThePage() {
        var d = started()
        #expect(d.send(.moveHistorySelection(40)).isEmpty)
        let near = d.send(.moveHistorySelection(5))  // row 45 of 50
        #expect(d.requestID(forPage: 2, in: near) != nil && d.state.history.page == 1)
        #expect(d.send(.moveHistorySelection(1)).isEmpty)  // already on its way
        d.loadPage(2)
        let next = d.send(.historyNextPage)
        #expect(next.isEmpty && d.state.history.rows.count == 50)  // prefetched: shown at once
        d.send(.historyLastPage)
        d.loadPage(5)
        #expect(d.send(.selectHistoryRow(index: 29)).isEmpty)  // the last page: nothing to prefetch
    }

    @Test func residentPagesNeverExceedTheBoundOverAThousandVisits() {
        var d = started(capacity: 8)
        var maxResident = 0
        var cancels = 0
        for page in 1...1_000 {
            let effects = d.send(.historyGoTo(page: page))
            cancels += effects.filter { if case .cancelHistory = $0 { return true } else { return false } }.count
            d.loadPage(page, total: 50_000)
            maxResident = max(maxResident, d.state.history.pages.residentCount)
            #expect(d.state.history.page == page && d.state.history.rows.count == 50)
        }
        #expect(maxResident == 8 && cancels == 0)
        #expect(d.state.history.pages.residentPages == Array(993...1_000))
    }

    @Test func anEvictedPageInFlightIsCancelledAndItsAnswerDropped() {
        var d = started(capacity: 2)
        let toTwo = d.send(.historyNextPage)
        let id2 = d.requestID(forPage: 2, in: toTwo)
        let toThree = d.send(.historyNextPage)  // evicts the least recent, page 1 (loaded): nothing to cancel
        #expect(!toThree.contains { if case .cancelHistory = $0 { return true } else { return false } })
        let toFour = d.send(.historyNextPage)  // evicts page 2, still in flight
        #expect(toFour.first == .cancelHistory(requestID: id2 ?? -1))
        d.apply(.historyLoaded(generation: 1, requestID: id2 ?? -1, page: 2, .success(historyPage(2)), at: t0))
        #expect(d.state.history.pages[2] == nil)
    }

    @Test func aFailedPageShowsItsErrorAndRetries() {
        var d = started()
        d.send(.historyNextPage)
        let id = d.requestID(forPage: 2) ?? -1
        d.apply(.historyLoaded(generation: 1, requestID: id, page: 2, .failure(http(503, "down")), at: t0))
        guard case .failed(let message, "rq-1") = d.state.history.current else { Issue.record("\(String(describing: d.state.history.current))"); return }
        #expect(message.contains("HTTP 503") && d.state.notice?.requestID == "rq-1")
        let retry = d.send(.retryHistoryPage)
        #expect(d.requestID(forPage: 2, in: retry) != nil)
        d.loadPage(2)
        #expect(d.state.history.rows.count == 50)
        // Leaving a failed page and coming back retries it too.
        d.send(.historyNextPage)
        d.apply(.historyLoaded(generation: 1, requestID: d.requestID(forPage: 3) ?? -1, page: 3, .failure(refused), at: t0))
        d.send(.historyPreviousPage)
        #expect(d.requestID(forPage: 3, in: d.send(.historyNextPage)) != nil)
    }

    @Test func commentsExpandAndCollapsePerEntryAndUnreadableRowsStay() {
        var d = Driver()
        d.send(.start)
        let unreadable = UnreadableEntry(index: 1, id: "h1", reason: "amount: expected a number")
        let page = CheerHistoryPage(items: [.entry(entry(0, comments: [CheerComment(signature: "a", body: "b")])), .unreadable(unreadable), .entry(entry(2, comments: nil))],
                                    page: 1, perPage: 50, totalPages: 1, totalCount: 3)
        d.apply(.historyLoaded(generation: 1, requestID: d.requestID(forPage: 1) ?? -1, page: 1, .success(page), at: t0))
        #expect(d.state.history.rows[1] == .unreadable(unreadable) && d.state.history.positionText == "page 1 of 1 · 3 cheers")
        d.send(.toggleComments)
        #expect(d.state.history.isExpanded(d.state.history.rows[0], at: 0))
        d.send(.moveHistorySelection(2))
        d.send(.toggleComments)
        #expect(d.state.history.expanded == ["h0", "h2"])
        d.send(.selectHistoryRow(index: 0))
        d.send(.toggleComments)
        #expect(d.state.history.expanded == ["h2"])
    }

    @Test func theCachedFirstPageShowsWhileLoadingAndStaysOnFailure() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(generation: 1, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50 && d.state.history.totalCount == 230)
        d.apply(.historyLoaded(generation: 1, requestID: d.requestID(forPage: 1) ?? -1, page: 1, .failure(refused), at: t0))
        guard case .loaded(_, _, .cached(reason: "offline: connection refused")) = d.state.history.current else {
            Issue.record("\(String(describing: d.state.history.current))")
            return
        }
        #expect(d.state.history.rows.count == 50)
    }
}

@Suite struct ActionTransitions {
    func ready(readOnly: Bool = false) -> Driver {
        var context = alice
        context.readOnly = readOnly
        var d = Driver(context)
        d.send(.start)
        d.apply(.packsLoaded(generation: 1, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 1250)), at: t0))
        d.loadPage(1)
        return d
    }

    @Test func spendGoesThroughConfirmationAndRefusesASecondSubmit() {
        var d = ready()
        d.send(.beginSpend)
        guard case .editing(.spend("com.reiterate.pack.rain", "Rain on a Tin Roof", "", ""), nil) = d.state.action?.phase else {
            Issue.record("\(String(describing: d.state.action))")
            return
        }
        d.send(.editSpend(amount: "abc", comment: ""))
        d.send(.submitAction)
        guard case .editing(_, problem: .some) = d.state.action?.phase else { Issue.record("no problem shown"); return }
        d.send(.editSpend(amount: "5000", comment: ""))
        d.send(.submitAction)
        guard case .editing(_, problem: "That is more than the balance (1,250 cheer).") = d.state.action?.phase else { Issue.record("over balance"); return }
        d.send(.editSpend(amount: "50", comment: "  Lovely  "))
        #expect(d.send(.submitAction).isEmpty)
        guard case let .confirming(kind, summary) = d.state.action?.phase else { Issue.record("not confirming"); return }
        #expect(summary == "Spend 50 cheer on Rain on a Tin Roof as qa-alice on STAGING?")
        #expect(kind == .spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 50, comment: "Lovely"))
        #expect(d.send(.submitAction) == [.spend(generation: 1, amount: 50, product: "com.reiterate.pack.rain", comment: "Lovely", user: "qa-alice", kind: kind)])
        #expect(d.send(.submitAction).isEmpty)  // pending: a second submit is refused
        d.send(.cancelAction)
        guard case .pending = d.state.action?.phase else { Issue.record("cancel dropped a pending action"); return }
        let after = d.apply(.actionFinished(generation: 1, kind, .success(CheerBalance(balance: 1200)), at: t0))
        #expect(d.state.balance.phase == .live(1200, fetchedAt: t0))
        #expect(d.state.notice?.text == "Spent 50 cheer on Rain on a Tin Roof. Balance 1,200 cheer.")
        #expect(after.contains(.writeBalance(key: alice.userKey, CheerBalance(balance: 1200), fetchedAt: t0)))
        #expect(d.requestID(forPage: 1, in: after) != nil && after.contains(.fetchPacks(generation: 1)))
        #expect(d.state.history.rows.count == 50)  // the old rows stay while the page reloads
    }

    @Test func paymentRequiredAndConflictInPlainWords() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let spend = ActionKind.spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 10, comment: nil)
        let refused = d.apply(.actionFinished(generation: 1, spend, .failure(http(402, "insufficient_balance", "balance 5 is less than 10")), at: t0))
        #expect(d.state.action?.phase == .failed("Not enough cheer to spend 10; nothing was spent. The server says: balance 5 is less than 10. Refreshing the balance.", requestID: "rq-1"))
        #expect(refused == [.fetchBalance(generation: 1, user: "qa-alice", stamp: 0)])  // our balance was out of date
        d.send(.submitAction)  // closes the outcome
        #expect(d.state.action == nil)
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        guard case let .confirming(kind, summary) = d.state.action?.phase else { Issue.record("not confirming"); return }
        #expect(summary == "Buy 200 cheer (com.reiterate.cheer.200), transaction 42, as qa-alice on STAGING?")
        #expect(d.send(.submitAction) == [.purchase(generation: 1, identifier: "com.reiterate.cheer.200", transactionID: 42, user: "qa-alice", kind: kind)])
        d.apply(.actionFinished(generation: 1, kind, .failure(http(409, "duplicate_transaction")), at: t0))
        #expect(d.state.action?.phase == .failed("Transaction 42 was already credited; nothing changed.", requestID: "rq-1"))
    }

    @Test func aWriteWithoutAnAnswerMayHaveBeenAppliedSoEverythingIsReloaded() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let spend = ActionKind.spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 10, comment: nil)
        let timeout = ShopAPIError.transport(.timeout, endpoint: "POST /api/v1/spend_cheer")
        let after = d.apply(.actionFinished(generation: 1, spend, .failure(timeout), at: t0))
        guard case let .failed(text, _) = d.state.action?.phase else { Issue.record("not failed"); return }
        #expect(text.hasSuffix("it may have been applied; refreshing the balance and history."))
        #expect(after.contains(.fetchBalance(generation: 1, user: "qa-alice", stamp: 1)) && d.requestID(forPage: 1, in: after) != nil)
    }

    @Test func purchaseFormValidation() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 1))
        d.send(.editPurchase(identifier: "com.reiterate.cheer.500", transactionID: "-3"))
        d.send(.submitAction)
        guard case .editing(_, problem: .some) = d.state.action?.phase else { Issue.record("accepted -3"); return }
        d.send(.editPurchase(identifier: " ", transactionID: "3"))
        d.send(.submitAction)
        guard case .editing(_, problem: .some) = d.state.action?.phase else { Issue.record("accepted an empty bundle"); return }
        d.send(.cancelAction)
        #expect(d.state.action == nil)
    }

    @Test func readOnlyRefusesWrites() {
        var d = ready(readOnly: true)
        d.send(.beginSpend)
        #expect(d.state.action == nil && d.state.notice?.text == "STAGING is read-only: spending is disabled.")
        d.send(.beginPurchase(transactionID: 1))
        #expect(d.state.action == nil && d.state.notice?.text == "STAGING is read-only: buying is disabled.")
        #expect(!d.effects.contains { if case .spend = $0 { return true }; if case .purchase = $0 { return true }; return false })
    }

    @Test func spendNeedsASelectedPack() {
        var d = ready()
        d.send(.setPackFilter("nothing matches"))
        d.send(.beginSpend)
        #expect(d.state.action == nil && d.state.notice?.text == "Select an Audio Pack to cheer for first.")
    }
}

@Suite struct RequestsTransitions {
    @Test func newestFirstBoundedAndSelectionFollowsItsExchange() {
        var d = Driver()
        for id in 1...3 { d.apply(.exchangeRecorded(exchange(id))) }
        #expect(d.state.requests.rows.map(\.id) == [3, 2, 1])
        d.send(.selectRequest(index: 1))
        d.apply(.exchangeRecorded(exchange(4)))
        #expect(d.state.requests.selected?.id == 2)
        for id in 5...300 { d.apply(.exchangeRecorded(exchange(id))) }
        #expect(d.state.requests.rows.count == RequestsState.capacity && d.state.requests.rows.first?.id == 300)
    }

    @Test func prettyJSONKeepsKeyOrderAndSurvivesCutBodies() {
        #expect(JSONPretty.format(#"{"b":1,"a":[1,{"x":"y,z"}],"e":{}}"#) == """
            {
              "b": 1,
              "a": [
                1,
                {
                  "x": "y,z"
                }
              ],
              "e": {}
            }
            """)
        #expect(JSONPretty.format(#"{"history":[{"id":"h1","cre"#) == "{\n  \"history\": [\n    {\n      \"id\": \"h1\",\n      \"cre")
        #expect(JSONPretty.format("<html>") == "<html>")
    }
}

@Suite struct WordingTests {
    @Test func ages() {
        #expect(Wording.age(of: t0, now: t0) == "just now")
        #expect(Wording.age(of: t0, now: t0.addingTimeInterval(42)) == "42 s ago")
        #expect(Wording.age(of: t0, now: t0.addingTimeInterval(720)) == "12 min ago")
        #expect(Wording.age(of: t0, now: t0.addingTimeInterval(3 * 3600 + 5)) == "3 h ago")
        #expect(Wording.age(of: t0, now: t0.addingTimeInterval(2 * 86_400)) == "2 d ago")
        #expect(Wording.grouped(100_000) == "100,000" && Wording.grouped(-1250) == "-1,250" && Wording.grouped(7) == "7")
        #expect(Wording.price(cents: 499, currency: "USD") == "$4.99" && Wording.price(cents: 0, currency: nil) == "free" && Wording.price(cents: 105, currency: "EUR") == "1.05 EUR")
    }
}

@Suite struct ReviewRegressionTests {
    @Test func aBalanceAskedBeforeASpendDoesNotOverwriteItsResult() {
        var d = Driver()
        d.send(.start)
        d.apply(.packsLoaded(generation: 1, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 1250)), at: t0))
        let refresh = d.send(.refreshBalance)
        #expect(refresh == [.fetchBalance(generation: 1, user: "qa-alice", stamp: 0)])
        d.send(.beginSpend)
        d.send(.editSpend(amount: "50", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let kind = ActionKind.spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 50, comment: nil)
        d.apply(.actionFinished(generation: 1, kind, .success(CheerBalance(balance: 1200)), at: t0))
        let late = d.apply(.balanceLoaded(generation: 1, stamp: 0, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(late.isEmpty && d.state.balance.phase == .live(1200, fetchedAt: t0) && !d.state.balance.isLoading)
        #expect(d.send(.refreshBalance) == [.fetchBalance(generation: 1, user: "qa-alice", stamp: 1)])
    }

    @Test func packsInFlightDuringASpendAreFetchedAgain() {
        var d = Driver()
        d.send(.start)  // packs request out
        d.apply(.balanceLoaded(generation: 1, .success(CheerBalance(balance: 1250)), at: t0))
        d.apply(.cacheLoaded(generation: 1, balance: nil, packs: CacheEntry(value: samplePacks, fetchedAt: t0), firstPage: nil))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "5", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let kind = ActionKind.spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 5, comment: nil)
        let after = d.apply(.actionFinished(generation: 1, kind, .success(CheerBalance(balance: 1245)), at: t0))
        #expect(!after.contains(.fetchPacks(generation: 1)))  // one is out already…
        let answered = d.apply(.packsLoaded(generation: 1, .success(samplePacks), at: t0))
        #expect(answered.contains(.fetchPacks(generation: 1)))  // …and it predates the spend: ask again
    }

    @Test func cancelledRequestsLeaveNothingStuck() {
        var d = Driver()
        d.send(.start)
        d.apply(.cancelled(generation: 1, .balance))
        d.apply(.cancelled(generation: 1, .packs))
        let page1 = d.requestID(forPage: 1) ?? -1
        d.apply(.cancelled(generation: 1, .history(requestID: page1, page: 1)))
        #expect(!d.state.balance.isLoading && !d.state.packs.isLoading && d.state.history.pages[1] == nil)
        #expect(d.send(.refreshBalance).count == 1)
        #expect(d.requestID(forPage: 1, in: d.send(.historyFirstPage)) != nil)
        d.apply(.packsLoaded(generation: 1, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(generation: 1, stamp: 0, .success(CheerBalance(balance: 10)), at: t0))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "5", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.cancelled(generation: 1, .action))
        guard case .failed = d.state.action?.phase else { Issue.record("a cancelled spend stayed pending"); return }
    }

    @Test func thePageOnScreenIsNeverEvicted() {
        var d = Driver(capacity: 2)
        d.send(.start)
        d.loadPage(1)
        d.send(.historyGoTo(page: 3))
        d.send(.historyFirstPage)
        d.loadPage(3)  // an answer for a page not on screen does not make it the most recent
        d.send(.selectHistoryRow(index: 46))  // prefetches page 2
        #expect(d.state.history.page == 1 && d.state.history.rows.count == 50)
        #expect(Set(d.state.history.pages.residentPages) == [1, 2])
    }

    @Test func requestIDsAreNeverReusedAcrossUsers() {
        var d = Driver()
        d.send(.start)
        let first = d.requestID(forPage: 1) ?? -1
        let effects = d.send(.switchContext(baseURL: "http://shop.test", user: "qa-empty"))
        #expect((d.requestID(forPage: 1, in: effects) ?? -1) > first)
    }

    @Test func totalsFollowTheNewestRequestAndAShrinkMovesThePage() {
        var d = Driver()
        d.send(.start)
        d.loadPage(1, total: 230)
        d.send(.historyLastPage)  // page 5
        let id5 = d.requestID(forPage: 5) ?? -1
        d.apply(.historyLoaded(generation: 1, requestID: id5, page: 5, .success(historyPage(5, total: 230)), at: t0))
        #expect(d.state.history.totalPages == 5)
        d.send(.refresh)
        let fresh = d.requestID(forPage: 5) ?? -1
        d.apply(.historyLoaded(generation: 1, requestID: fresh, page: 5, .success(historyPage(5, total: 120)), at: t0))
        #expect(d.state.history.totalPages == 3 && d.state.history.page == 3)
    }

    @Test func pagingWorksBeforeTotalsAreKnown() {
        var d = Driver()
        d.send(.historyNextPage)
        #expect(d.state.history.page == 2)
    }

    @Test func aRefreshWhileThePageLoadsSendsNothingMore() {
        var d = Driver()
        d.send(.start)
        let again = d.send(.refresh)
        #expect(!again.contains { if case .fetchHistory = $0 { return true }; if case .cancelHistory = $0 { return true }; return false })
    }

    @Test func aPageShownFromTheCacheIsFetchedLiveOnRevisitAndRetry() {
        var d = Driver()
        d.send(.startBalance)
        d.apply(.cacheLoaded(generation: 1, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50)
        let start = d.send(.historyFirstPage)
        #expect(d.requestID(forPage: 1, in: start) != nil && d.state.history.rows.count == 50)
    }
}
