import Foundation
import ShopAPI
import ShopCache
import Testing
@testable import ShopViewModels

@Suite struct BalanceTransitions {
    @Test func startAsksForCacheThenEverything() {
        var d = Driver()
        let effects = d.send(.start)
        #expect(effects.first == .readCache(d.cacheToken, user: CacheKey(baseURL: "http://shop.test", user: "qa-alice"), shop: CacheKey(baseURL: "http://shop.test", user: nil)))
        #expect(effects.contains(.fetchBalance(d.balanceToken, user: "qa-alice")) && effects.contains(.fetchPacks(d.packsToken)))
        #expect(d.requestID(forPage: 1) != nil)
        #expect(d.state.balance.phase == .loading && d.state.packs.status == .loading)
    }

    @Test func cachedThenLive() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(d.cacheToken, balance: CacheEntry(value: CheerBalance(balance: 1000), fetchedAt: t0.addingTimeInterval(-720)), packs: nil, firstPage: nil))
        #expect(d.state.balance.phase == .cached(1000, fetchedAt: t0.addingTimeInterval(-720), reason: nil))
        let effects = d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(d.state.balance.phase == .live(1250, fetchedAt: t0))
        #expect(effects == [.writeBalance(key: alice.userKey, CheerBalance(balance: 1250), fetchedAt: t0)])
    }

    @Test func aFailureKeepsTheCachedValueWithTheReason() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(d.cacheToken, balance: CacheEntry(value: CheerBalance(balance: 1000), fetchedAt: t0), packs: nil, firstPage: nil))
        d.apply(.balanceLoaded(d.balanceToken, .failure(refused), at: t0))
        #expect(d.state.balance.phase == .cached(1000, fetchedAt: t0, reason: StaleReason(brief: "offline", full: "offline: connection refused")))
        #expect(d.state.notice?.kind == .error && d.state.notice?.text.contains("connection refused") == true)
        // …and a later live value replaces it.
        d.send(.refresh)
        #expect(d.state.balance.phase == .cached(1000, fetchedAt: t0, reason: nil))  // refreshing
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 5)), at: t0))
        #expect(d.state.balance.phase == .live(5, fetchedAt: t0) && d.state.balance.lastError == nil)
    }

    @Test func aFailureWithNothingKnownIsFailed() {
        var d = Driver()
        d.send(.start)
        d.apply(.balanceLoaded(d.balanceToken, .failure(refused), at: t0))
        #expect(d.state.balance.phase == .failed(ErrorText.line(refused)))
    }

    @Test func aRefreshWhileLoadingIsCoalesced() {
        var d = Driver()
        func balanceFetches(_ effects: [Effect]) -> [Effect] { effects.filter { if case .fetchBalance = $0 { return true } else { return false } } }
        #expect(balanceFetches(d.send(.refresh)).count == 1)
        #expect(balanceFetches(d.send(.refresh)).isEmpty)
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1)), at: t0))
        #expect(balanceFetches(d.send(.refresh)) == [.fetchBalance(d.balanceToken, user: "qa-alice")])
    }

    @Test func answersWhoseTokenIsNotCurrentAreDropped() {
        var d = Driver()
        d.send(.start)
        let balance = d.balanceToken
        let stale = Token(999)
        #expect(d.apply(.balanceLoaded(stale, .success(CheerBalance(balance: 3)), at: t0)).isEmpty)
        d.apply(.packsLoaded(stale, .success(samplePacks), at: t0))
        d.apply(.historyLoaded(stale, page: 1, .success(historyPage(1)), at: t0))
        d.apply(.cacheLoaded(stale, balance: CacheEntry(value: CheerBalance(balance: 3), fetchedAt: t0), packs: nil, firstPage: nil))
        d.apply(.cancelled(stale))
        #expect(d.state.balance.phase == .loading && d.state.packs.all.isEmpty && d.state.history.rows.isEmpty)
        #expect(d.state.packs.isLoading && d.state.history.current != nil)
        d.apply(.balanceLoaded(balance, .success(CheerBalance(balance: 0)), at: t0))
        #expect(d.state.balance.phase == .live(0, fetchedAt: t0))
        // A token is answered once: the same answer again changes nothing.
        d.apply(.balanceLoaded(balance, .success(CheerBalance(balance: 5)), at: t0))
        #expect(d.state.balance.phase == .live(0, fetchedAt: t0))
    }
}

@Suite struct PackTransitions {
    func loaded() -> Driver {
        var d = Driver()
        d.send(.start)
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
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
        d.apply(.packsLoaded(d.packsToken, .failure(refused), at: t0))
        #expect(d.state.packs.status == .failed(ErrorText.line(refused)))
        var c = Driver()
        c.send(.start)
        c.apply(.cacheLoaded(c.cacheToken, balance: nil, packs: CacheEntry(value: samplePacks, fetchedAt: t0), firstPage: nil))
        c.apply(.packsLoaded(c.packsToken, .failure(refused), at: t0))
        #expect(c.state.packs.visible.count == 4 && c.state.packs.source == .cached(reason: StaleReason(brief: "offline", full: "offline: connection refused")))
    }
}

@Suite struct HistoryTransitions {
    func started(capacity: Int = 8) -> Driver {
        var d = Driver(capacity: capacity)
        d.send(.start)
        d.loadPage(1)
        return d
    }

    @Test func pagingAndTotals() {
        var d = started()
        #expect(d.state.history.rows.count == 50 && d.state.history.positionText == "page 1 of 5 · 230 cheers")
        let next = d.send(.historyNextPage)
        #expect(d.state.history.page == 2 && next.count == 1 && d.requestID(forPage: 2, in: next) != nil)
        #expect(d.state.history.rows.isEmpty)  // loading
        d.loadPage(2)
        #expect(d.state.history.rows.first == .entry(entry(50)))
        #expect(d.send(.historyPreviousPage).isEmpty && d.state.history.page == 1)  // resident: no fetch
        for page in 2...5 {
            d.send(.historyNextPage)
            d.loadPage(page)
        }
        #expect(d.state.history.page == 5 && d.state.history.rows.count == 30)
        #expect(d.send(.historyNextPage).isEmpty && d.state.history.page == 5)  // no page 6
        for _ in 1...9 { d.send(.historyPreviousPage) }
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
        for page in 3...5 {
            d.send(.historyNextPage)
            d.loadPage(page)
        }
        #expect(d.send(.selectHistoryRow(index: 29)).isEmpty)  // the last page: nothing to prefetch
    }

    @Test func residentPagesNeverExceedTheBoundOverAThousandVisits() {
        var d = started(capacity: 8)
        d.loadPage(1, total: 50_000)
        var maxResident = 0
        var cancels = 0
        for page in 2...1_000 {
            let effects = d.send(.historyNextPage)
            cancels += effects.filter { if case .cancel = $0 { return true } else { return false } }.count
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
        #expect(!toThree.contains { if case .cancel = $0 { return true } else { return false } })
        let toFour = d.send(.historyNextPage)  // evicts page 2, still in flight
        #expect(toFour.first == .cancel(id2 ?? Token(-1)))
        d.apply(.historyLoaded(id2 ?? Token(-1), page: 2, .success(historyPage(2)), at: t0))
        #expect(d.state.history.pages[2] == nil)
    }

    @Test func aFailedPageShowsItsErrorAndRetries() {
        var d = started()
        d.send(.historyNextPage)
        let id = d.requestID(forPage: 2) ?? Token(-1)
        d.apply(.historyLoaded(id, page: 2, .failure(http(503, "down")), at: t0))
        guard case .failed(let message, "rq-1") = d.state.history.current else { Issue.record("\(String(describing: d.state.history.current))"); return }
        #expect(message.contains("HTTP 503") && d.state.notice?.requestID == "rq-1")
        let retry = d.send(.retryHistoryPage)
        #expect(d.requestID(forPage: 2, in: retry) != nil)
        d.loadPage(2)
        #expect(d.state.history.rows.count == 50)
        // Leaving a failed page and coming back retries it too.
        d.send(.historyNextPage)
        d.apply(.historyLoaded(d.requestID(forPage: 3) ?? Token(-1), page: 3, .failure(refused), at: t0))
        d.send(.historyPreviousPage)
        #expect(d.requestID(forPage: 3, in: d.send(.historyNextPage)) != nil)
    }

    @Test func commentsExpandAndCollapsePerEntryAndUnreadableRowsStay() {
        var d = Driver()
        d.send(.start)
        let unreadable = UnreadableEntry(index: 1, id: "h1", reason: "amount: expected a number")
        let page = CheerHistoryPage(items: [.entry(entry(0, comments: [CheerComment(signature: "a", body: "b")])), .unreadable(unreadable), .entry(entry(2, comments: nil))],
                                    page: 1, perPage: 50, totalPages: 1, totalCount: 3)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .success(page), at: t0))
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
        d.apply(.cacheLoaded(d.cacheToken, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50 && d.state.history.totalCount == 230)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .failure(refused), at: t0))
        guard case .loaded(_, _, .cached(reason: StaleReason(brief: "offline", full: "offline: connection refused"))) = d.state.history.current else {
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
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
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
        #expect(d.send(.submitAction) == [.spend(d.actionToken, amount: 50, product: "com.reiterate.pack.rain", comment: "Lovely", user: "qa-alice")])
        #expect(d.send(.submitAction).isEmpty)  // pending: a second submit is refused
        d.send(.cancelAction)
        guard case .pending = d.state.action?.phase else { Issue.record("cancel dropped a pending action"); return }
        let after = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1200)), at: t0))
        #expect(d.state.balance.phase == .live(1200, fetchedAt: t0))
        #expect(d.state.notice?.text == "Spent 50 cheer on Rain on a Tin Roof. Balance 1,200 cheer.")
        #expect(after.contains(.writeBalance(key: alice.userKey, CheerBalance(balance: 1200), fetchedAt: t0)))
        #expect(d.requestID(forPage: 1, in: after) != nil && after.contains(.fetchPacks(d.packsToken)))
        #expect(d.state.history.rows.count == 50)  // the old rows stay while the page reloads
    }

    @Test func paymentRequiredAndConflictInPlainWords() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        guard case .pending(.spend(_, _, 10, nil), _, _) = d.state.action?.phase else { Issue.record("not sent"); return }
        let refused = d.apply(.actionFinished(d.actionToken, .failure(http(402, "insufficient_balance", "balance 5 is less than 10")), at: t0))
        #expect(d.state.action?.phase == .failed("Not enough cheer to spend 10; nothing was spent. The server says: balance 5 is less than 10. Refreshing the balance.", requestID: "rq-1"))
        #expect(refused == [.fetchBalance(d.balanceToken, user: "qa-alice")])  // our balance was out of date
        d.send(.submitAction)  // closes the outcome
        #expect(d.state.action == nil)
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        guard case let .confirming(.purchase(_, 42), summary) = d.state.action?.phase else { Issue.record("not confirming"); return }
        #expect(summary == "Buy 200 cheer (com.reiterate.cheer.200), transaction 42, as qa-alice on STAGING?")
        #expect(d.send(.submitAction) == [.purchase(d.actionToken, identifier: "com.reiterate.cheer.200", transactionID: 42, user: "qa-alice")])
        d.apply(.actionFinished(d.actionToken, .failure(http(409, "duplicate_transaction")), at: t0))
        #expect(d.state.action?.phase == .failed("Transaction 42 was already credited; nothing changed.", requestID: "rq-1"))
    }

    @Test func aWriteWithoutAnAnswerMayHaveBeenAppliedSoEverythingIsReloaded() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let timeout = ShopAPIError.transport(.timeout(), endpoint: "POST /api/v1/spend_cheer")
        let after = d.apply(.actionFinished(d.actionToken, .failure(timeout), at: t0))
        guard case let .failed(text, _) = d.state.action?.phase else { Issue.record("not failed"); return }
        #expect(text.hasSuffix("it may have been applied; refreshing the balance and history."))
        #expect(after.contains(.fetchBalance(d.balanceToken, user: "qa-alice")) && d.requestID(forPage: 1, in: after) != nil)
    }

    @Test func aWriteAnsweredByAProxysGatewayTimeoutIsReadAgainNeverResent() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        d.send(.submitAction)
        let gateway = ShopAPIError.http(status: 504, message: nil, code: nil, requestID: "rq-9", endpoint: "POST /api/v2/purchase_cheer", retryAfter: nil)
        let after = d.apply(.actionFinished(d.actionToken, .failure(gateway), at: t0))
        #expect(after.contains(.fetchBalance(d.balanceToken, user: "qa-alice")) && after.contains(.fetchPacks(d.packsToken)))
        #expect(d.requestID(forPage: 1, in: after) != nil)
        #expect(!after.contains { if case .purchase = $0 { return true } else { return false } })
        // The next buy offers the same transaction id, so the server can refuse a double credit.
        d.send(.cancelAction)
        let again = d.send(.beginPurchase(transactionID: 77))
        guard case .editing(.purchase("com.reiterate.cheer.200", "42"), .some) = d.state.action?.phase else { Issue.record("\(String(describing: d.state.action))"); return }
        #expect(!again.contains(.makeTransactionID))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.actionFinished(d.actionToken, .failure(http(409, "duplicate_transaction")), at: t0))
        #expect(d.state.lostPurchase == nil)  // settled: it had been credited
    }

    @Test func refusalsBeforeTheServerActedAreNotReadAgain() {
        for category in [ErrorCategory.refused, .dns, .tls(.untrusted), .offline, .httpStatus(400), .httpStatus(403)] {
            #expect(!category.mayHaveBeenApplied, "\(category)")
        }
        for category in [ErrorCategory.timeout, .cutShort, .network, .notJSON, .undecodable, .httpStatus(500), .httpStatus(502)] {
            #expect(category.mayHaveBeenApplied, "\(category)")
        }
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
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
        let refresh = d.send(.refresh)
        let asked = d.balanceToken
        #expect(refresh.contains(.fetchBalance(asked, user: "qa-alice")))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "50", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let done = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1200)), at: t0))
        #expect(done.contains(.cancel(asked)))  // the request asked before the spend is not wanted any more
        let late = d.apply(.balanceLoaded(asked, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(late.isEmpty && d.state.balance.phase == .live(1200, fetchedAt: t0) && !d.state.balance.isLoading)
        d.send(.submitAction)  // closes the outcome
        #expect(d.send(.refresh).contains(.fetchBalance(d.balanceToken, user: "qa-alice")) && d.balanceToken > asked)
    }

    @Test func packsInFlightDuringASpendAreFetchedAgain() {
        var d = Driver()
        d.send(.start)  // packs request out
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
        d.apply(.cacheLoaded(d.cacheToken, balance: nil, packs: CacheEntry(value: samplePacks, fetchedAt: t0), firstPage: nil))
        let asked = d.packsToken
        d.send(.beginSpend)
        d.send(.editSpend(amount: "5", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let after = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1245)), at: t0))
        // The request out predates the spend: it is cancelled and asked again at once.
        #expect(after.contains(.cancel(asked)) && after.contains(.fetchPacks(d.packsToken)) && d.packsToken > asked)
        #expect(d.apply(.packsLoaded(asked, .success(samplePacks), at: t0)).isEmpty)
    }

    @Test func cancelledRequestsLeaveNothingStuck() {
        var d = Driver()
        d.send(.start)
        d.apply(.cancelled(d.balanceToken))
        d.apply(.cancelled(d.packsToken))
        d.apply(.cancelled(d.requestID(forPage: 1) ?? Token(-1)))
        #expect(!d.state.balance.isLoading && !d.state.packs.isLoading && d.state.history.pages[1] == nil)
        let again = d.send(.refresh)
        #expect(again.filter { if case .fetchBalance = $0 { return true } else { return false } }.count == 1)
        #expect(again.contains(.fetchPacks(d.packsToken)) && d.requestID(forPage: 1, in: again) != nil)
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 10)), at: t0))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "5", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.cancelled(d.actionToken))
        guard case .failed = d.state.action?.phase else { Issue.record("a cancelled spend stayed pending"); return }
    }

    @Test func thePageOnScreenIsNeverEvicted() {
        var d = Driver(capacity: 2)
        d.send(.start)
        d.loadPage(1)
        d.send(.historyNextPage)  // page 2 asked
        d.send(.historyPreviousPage)  // back on page 1: the most recent
        d.loadPage(2)  // an answer for a page not on screen does not make it the most recent
        #expect(d.state.history.pages.residentPages == [2, 1])
        d.send(.historyNextPage)
        d.send(.historyNextPage)  // page 3 asked: page 1 goes, not page 2 (on screen until now) nor 3
        #expect(d.state.history.page == 3 && d.state.history.pages.residentPages == [2, 3])
        d.send(.historyPreviousPage)
        #expect(d.state.history.rows.count == 50)
    }

    @Test func tokensAreNeverReused() {
        var d = Driver()
        d.send(.start)
        var seen: [Token] = []
        for _ in 0..<5 {
            for effect in d.send(.refresh) + d.send(.historyNextPage) {
                switch effect {
                case let .fetchBalance(t, _), let .fetchPacks(t), let .fetchHistory(t, _, _, _): seen.append(t)
                default: break
                }
            }
            d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1)), at: t0))
            d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
        }
        #expect(Set(seen).count == seen.count && seen == seen.sorted())
    }

    @Test func totalsFollowTheNewestRequestAndAShrinkMovesThePage() {
        var d = Driver()
        d.send(.start)
        d.loadPage(1, total: 230)
        for page in 2...5 {
            d.send(.historyNextPage)
            d.loadPage(page, total: 230)
        }
        #expect(d.state.history.totalPages == 5 && d.state.history.page == 5)
        d.send(.refresh)
        let fresh = d.requestID(forPage: 5) ?? Token(-1)
        d.apply(.historyLoaded(fresh, page: 5, .success(historyPage(5, total: 120)), at: t0))
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
        #expect(!again.contains { if case .fetchHistory = $0 { return true }; if case .cancel = $0 { return true }; return false })
    }

    @Test func aPageShownFromTheCacheIsFetchedLiveOnRevisit() {
        var d = Driver()
        d.send(.startBalance)
        d.apply(.cacheLoaded(d.cacheToken, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50)
        d.send(.historyNextPage)
        let back = d.send(.historyPreviousPage)
        #expect(d.requestID(forPage: 1, in: back) != nil && d.state.history.rows.count == 50)
    }
}
