import Foundation
import ShopAPI
import ShopModel
import ShopCache
import Testing
@testable import ShopViewModels

@Suite struct BalanceTransitions {
    @Test func startAsksForCacheThenEverything() {
        var d = Driver()
        let effects = d.send(.start)
        #expect(effects.first == .readCache(d.cacheToken, user: CacheKey(baseURL: "http://shop.test", user: "qa-alice"), shop: CacheKey(baseURL: "http://shop.test", user: nil)))
        #expect(effects.contains(.request(d.balanceToken, .balance(user: "qa-alice"))) && effects.contains(.request(d.packsToken, .packs)))
        #expect(d.requestID(forPage: 1) != nil)
        #expect(d.state.balance.phase == .loading && d.state.packs.list.phase == .loading)
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
        #expect(d.state.balance.phase == .live(5, fetchedAt: t0) && d.state.balance.error == nil)
    }

    @Test func aFailureWithNothingKnownIsFailed() {
        var d = Driver()
        d.send(.start)
        d.apply(.balanceLoaded(d.balanceToken, .failure(refused), at: t0))
        #expect(d.state.balance.phase == .failed(refused))
    }

    @Test func aRefreshWhileLoadingIsCoalesced() {
        var d = Driver()
        func balanceFetches(_ effects: [Effect]) -> [Effect] { effects.filter { if case .request(_, .balance) = $0 { return true } else { return false } } }
        #expect(balanceFetches(d.send(.refresh)).count == 1)
        #expect(balanceFetches(d.send(.refresh)).isEmpty)
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1)), at: t0))
        #expect(balanceFetches(d.send(.refresh)) == [.request(d.balanceToken, .balance(user: "qa-alice"))])
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
        #expect(d.state.packs.list.isLoading && d.state.history.current != nil)
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
            #expect(d.state.packs.shown.rows.map(\.identifier) == expected, "\(needle)")
        }
    }

    @Test func sortsAndKeepsTheSelectedPack() {
        var d = loaded()
        d.send(.selectPack(index: 2))  // 東京 Night Walk
        d.send(.setPackSort(.name))
        #expect(d.state.packs.shown.rows.map(\.name) == ["Café de Flore Mornings", "Rain on a Tin Roof", "Zürich Tram Lines", "東京 Night Walk"])
        #expect(d.state.packs.shown.selected?.name == "東京 Night Walk")
        d.send(.setPackSort(.price))
        #expect(d.state.packs.shown.rows.map(\.priceCents) == [0, 99, 199, 499])
        d.send(.setPackSort(.cheer))
        #expect(d.state.packs.shown.rows.map(\.cheerTotal) == [900, 300, 50, 10])
        d.send(.setPackSort(.shopOrder))
        #expect(d.state.packs.shown.rows == samplePacks.packs && PackSort.cheer.next == .shopOrder)
    }

    @Test func selectionIsClampedAndFollowsTheFilter() {
        var d = loaded()
        d.send(.movePackSelection(10))
        #expect(d.state.packs.shown.selectedIndex == 3)
        d.send(.movePackSelection(-10))
        #expect(d.state.packs.shown.selectedIndex == 0)
        d.send(.setPackFilter("tokyo"))
        #expect(d.state.packs.shown.selected?.identifier == "com.reiterate.pack.tokyo-night")
        d.send(.setPackFilter("no match"))
        #expect(d.state.packs.shown.selected == nil && d.state.packs.shown.selectedIndex == 0)
    }

    @Test func failureAndCache() {
        var d = Driver()
        d.send(.start)
        d.apply(.packsLoaded(d.packsToken, .failure(refused), at: t0))
        #expect(d.state.packs.list.phase == .failed(refused))
        var c = Driver()
        c.send(.start)
        c.apply(.cacheLoaded(c.cacheToken, balance: nil, packs: CacheEntry(value: samplePacks, fetchedAt: t0), firstPage: nil))
        c.apply(.packsLoaded(c.packsToken, .failure(refused), at: t0))
        #expect(c.state.packs.shown.rows.count == 4 && c.state.packs.source == .cached(reason: StaleReason(brief: "offline", full: "offline: connection refused")))
    }
}

@Suite struct HistoryTransitions {
    func started(capacity: Int = 8) -> Driver {
        var d = Driver(capacity: capacity)
        d.send(.start)
        d.loadPage(1)
        return d
    }

    func fetches(_ effects: [Effect]) -> [Int] {
        effects.compactMap { if case let .request(_, .history(_, page, _)) = $0 { return page } else { return nil } }
    }

    @Test func pagesAndTotals() {
        var d = started()
        #expect(d.state.history.rows.count == 50 && d.state.history.positionText == "entry 1 of 230 · page 1 of 5")
        let next = d.send(.historyNextPage)
        #expect(d.state.history.page == 2 && d.state.history.cursor == 50 && fetches(next) == [2])
        #expect(d.state.history.rows.isEmpty && d.state.history.item(at: 50) == .loading(page: 2))
        d.loadPage(2)
        #expect(d.state.history.selectedItem == .entry(entry(50)) && d.state.history.positionText == "entry 51 of 230 · page 2 of 5")
        #expect(d.send(.historyPreviousPage).isEmpty && d.state.history.page == 1)  // resident: no fetch
        for page in 2...5 {
            d.send(.historyNextPage)
            d.loadPage(page)
        }
        #expect(d.state.history.page == 5 && d.state.history.rows.count == 30)
        #expect(d.send(.historyNextPage).isEmpty && d.state.history.cursor == 200)  // no page 6
        for _ in 1...9 { d.send(.historyPreviousPage) }
        #expect(d.state.history.page == 1 && d.state.history.cursor == 0)
    }

    @Test func theCursorCrossesPagesAndTheNextPageIsFetchedAheadOnce() {
        var d = started()
        #expect(fetches(d.send(.moveHistorySelection(30))).isEmpty)
        // The screen (18 rows, the cursor in the middle) comes within 5 entries of page 2.
        var asked: [Int] = []
        for _ in 0..<10 { asked += fetches(d.send(.moveHistorySelection(1))) }
        #expect(asked == [2] && d.state.history.page == 1)
        d.loadPage(2)
        // On across the boundary, one entry a step: no jump, no request.
        var crossed: [Effect] = []
        var seen: [Int] = []
        while d.state.history.cursor < 55 {
            crossed += d.send(.moveHistorySelection(1))
            seen.append(d.state.history.cursor)
        }
        #expect(fetches(crossed).isEmpty && seen == Array(41...55))
        #expect(d.state.history.selectedItem == .entry(entry(55)) && d.state.history.page == 2)
        // Going back up, the page above is held: nothing is asked.
        #expect(fetches(d.send(.moveHistorySelection(-20))).isEmpty && d.state.history.cursor == 35)
    }

    @Test func gAndGReachTheEndsOfTheWholeHistoryWithOneRequest() {
        var d = Driver()
        d.send(.start)
        d.loadPage(1, total: 1_000_000)
        #expect(d.state.history.positionText == "entry 1 of 1,000,000 · page 1 of 20,000")
        let last = d.send(.historyLast)
        #expect(fetches(last) == [20_000] && d.state.history.cursor == 999_999)
        d.loadPage(20_000, total: 1_000_000)
        #expect(d.state.history.positionText == "entry 1,000,000 of 1,000,000 · page 20,000 of 20,000")
        #expect(d.state.history.selectedItem == .entry(entry(999_999)))
        #expect(fetches(d.send(.historyFirst)).isEmpty && d.state.history.cursor == 0)  // page 1 is held
    }

    @Test func pageUpAndDownMoveAScreenful() {
        var d = started()
        d.send(.start)
        d.loadPage(1)
        _ = d.run([.action(.history), .action(.pageDown)])
        #expect(d.state.history.cursor == d.state.screen.pageSize)
        _ = d.run([.action(.pageUp), .action(.pageUp)])
        #expect(d.state.history.cursor == 0)
    }

    @Test func residentPagesNeverExceedTheBoundOverAThousandVisits() {
        var d = Driver(capacity: 8)
        d.send(.start)
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
        // On the last page, full, the page after it is asked once (a server's totals may count fewer
        // entries than it has); it is empty here, so the list ends where the totals said.
        #expect(d.state.history.pages.residentPages == Array(994...1_001) && d.state.history.pages[1_001]?.isLoading == true)
        d.serveHistory { page, perPage in historyPage(page, perPage: perPage, total: 50_000) }
        #expect(d.state.history.count == 50_000 && d.state.history.pages[1_001]?.value?.items.isEmpty == true)
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
        guard case let .failed(error, nil)? = d.state.history.current, error.requestID == "rq-1" else { Issue.record("\(String(describing: d.state.history.current))"); return }
        let words = ErrorText.words(error)
        #expect(words.line.contains("HTTP 503") && d.state.notice?.requestID == "rq-1")
        #expect(d.state.history.item(at: 50) == .failed(page: 2, failure: words) && d.state.history.item(at: 99) == .failed(page: 2, failure: words))
        let retry = d.send(.retryHistoryPage)
        #expect(d.requestID(forPage: 2, in: retry) != nil)
        d.loadPage(2)
        #expect(d.state.history.rows.count == 50)
        // Leaving a failed page and coming back retries it too; moving on it does not.
        d.send(.historyNextPage)
        d.apply(.historyLoaded(d.requestID(forPage: 3) ?? Token(-1), page: 3, .failure(refused), at: t0))
        #expect(d.state.history.cursor == 100 && d.state.history.didNotLoad(page: 3))
        // The failed page is one row: a step down leaves it for page 4's first entry, asking page 4, not page 3 again.
        let down = fetches(d.send(.moveHistorySelection(1)))
        #expect(d.state.history.cursor == 150 && !down.contains(3))
        // A step up from page 4 comes onto page 3's row (at its near end) and asks it again.
        #expect(d.requestID(forPage: 3, in: d.send(.moveHistorySelection(-1))) != nil && d.state.history.cursor == 149)
        d.apply(.historyLoaded(d.requestID(forPage: 3) ?? Token(-1), page: 3, .failure(refused), at: t0))
        // Up from anywhere on the failed page leaves it for page 2's last entry.
        d.send(.moveHistorySelection(-1))
        #expect(d.state.history.cursor == 99)
        #expect(d.requestID(forPage: 3, in: d.send(.historyNextPage)) != nil)
    }

    @Test func commentsExpandAndCollapsePerEntryAndUnreadableRowsStay() {
        var d = Driver()
        d.send(.start)
        let unreadable = UnreadableEntry(index: 1, id: "h1", reason: "amount: expected a number")
        let page = CheerHistoryPage(items: [.entry(entry(0, comments: [CheerComment(signature: "a", body: "b")])), .unreadable(unreadable), .entry(entry(2, comments: nil))],
                                    page: 1, perPage: 50, totalPages: 1, totalCount: 3)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .success(page), at: t0))
        #expect(d.state.history.rows[1] == .unreadable(unreadable) && d.state.history.positionText == "entry 1 of 3 · page 1 of 1")
        d.send(.toggleComments)
        #expect(d.state.history.isExpanded(d.state.history.rows[0]))
        d.send(.moveHistorySelection(2))
        d.send(.toggleComments)
        #expect(d.state.history.expanded == [.id("h0"), .id("h2")])
        d.send(.selectHistoryRow(index: 0))
        d.send(.toggleComments)
        #expect(d.state.history.expanded == [.id("h2")])
    }

    @Test func aHistoryWithoutPagingIsOnePageWhateverItsLength() {
        var d = Driver()
        d.send(.start)
        // What the decoder makes of an answer without paging fields: 120 entries, one page.
        let items = (0..<120).map { HistoryItem.entry(entry($0)) }
        let page = CheerHistoryPage(items: items, page: 1, perPage: 120, totalPages: 1, totalCount: 120)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .success(page), at: t0))
        let moved = d.send(.moveHistorySelection(100))
        #expect(fetches(moved).isEmpty && d.state.history.selectedItem == .entry(entry(100)))
        #expect(d.state.history.positionText == "entry 101 of 120 · page 1 of 1")
        #expect(fetches(d.send(.historyLast)).isEmpty && d.state.history.cursor == 119)
    }

    @Test func theCachedFirstPageShowsWhileLoadingAndStaysOnFailure() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(d.cacheToken, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50 && d.state.history.totalCount == 230)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .failure(refused), at: t0))
        guard case .cached(_, _, reason: StaleReason(brief: "offline", full: "offline: connection refused"))? = d.state.history.current?.phase else {
            Issue.record("\(String(describing: d.state.history.current))")
            return
        }
        #expect(d.state.history.rows.count == 50)
    }

    /// The first frame reads only the balance and packs; the first history page is read by the first
    /// effect after it (a `.cacheRead` request of the table, so a user switch drops its answer) and
    /// shown while the live page is out.
    @Test func aDeferredCachedFirstPageIsReadFirstAfterTheFirstFrame() {
        var d = Driver()
        let effects = d.apply(.startWithCache(CachedShop(balance: CacheEntry(value: CheerBalance(balance: 1_250), fetchedAt: t0), firstPageDeferred: true)))
        guard case let .readCachedFirstPage(token, user)? = effects.first else { Issue.record("\(effects)"); return }
        #expect(user == alice.userKey && d.state.balance.value == 1_250 && d.state.history.rows.isEmpty)
        #expect(effects.contains { if case .request(_, .history) = $0 { true } else { false } }, "the live page is asked at once as well")
        d.apply(.cacheLoaded(token, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50 && d.state.history.totalCount == 230)
        #expect(d.state.balance.value == 1_250)

        var without = Driver()
        let plain = without.apply(.startWithCache(CachedShop(firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0))))
        #expect(!plain.contains { if case .readCachedFirstPage = $0 { true } else { false } } && without.state.history.rows.count == 50)
    }

    // MARK: a history that changes while it is browsed

    @Test func entriesComingInAboveKeepTheCursorOnItsEntryAndDropMisalignedPages() {
        var d = started()
        d.send(.moveHistorySelection(45))
        d.loadPage(2)
        let before = d.state.history.selectedItem
        // Another process cheers: the history has one entry more, at the top. A refresh asks for the
        // cursor's page again; its answer (shifted by one) says so.
        d.send(.refresh)
        let shifted = CheerHistoryPage(items: (0..<50).map { HistoryItem.entry(entry($0 - 1)) }, page: 1, perPage: 50, totalPages: 5, totalCount: 231)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .success(shifted), at: t0))
        #expect(d.state.history.cursor == 46 && d.state.history.selectedItem == before)
        #expect(d.state.history.positionText == "entry 47 of 231 · page 1 of 5 · 1 new entry · g to see it")
        // Page 2, fetched before, is cut at the old place: dropped and asked again.
        #expect(d.state.history.pages[2].map { if case .loading = $0 { return true } else { return false } } == true)
        d.send(.historyFirst)
        #expect(d.state.history.newEntries == 0 && d.state.history.positionText == "entry 1 of 231 · page 1 of 5")
    }

    @Test func aPageFetchedAfterAChangeElsewhereNeverShowsAnEntryTwice() {
        // Page 1 was read before another process cheered, page 2 after: its first entry is page 1's last.
        var d = started()
        d.send(.moveHistorySelection(30))
        let out = d.send(.moveHistorySelection(6))  // page 2 comes on screen
        let id = d.requestID(forPage: 2, in: out) ?? Token(-1)
        let page2 = CheerHistoryPage(items: (49..<99).map { HistoryItem.entry(entry($0)) }, page: 2, perPage: 50, totalPages: 5, totalCount: 231)
        d.apply(.historyLoaded(id, page: 2, .success(page2), at: t0))
        // Page 1 is dropped and asked again; the cursor moved down one with its entry.
        #expect(d.state.history.cursor == 37 && d.requestID(forPage: 1) != nil && d.state.history.pages[1].map {
            if case .loading = $0 { return true } else { return false } } == true)
        let page1 = CheerHistoryPage(items: (-1..<49).map { HistoryItem.entry(entry($0)) }, page: 1, perPage: 50, totalPages: 5, totalCount: 231)
        d.apply(.historyLoaded(d.requestID(forPage: 1) ?? Token(-1), page: 1, .success(page1), at: t0))
        let keys = (0..<100).compactMap { i -> EntryKey? in
            if case let .item(item) = d.state.history.item(at: i) { return HistoryState.key(of: item) }
            return nil
        }
        #expect(keys.count == 100 && Set(keys).count == 100)
        #expect(d.state.history.selectedItem == .entry(entry(36)))
    }

    // MARK: go to

    /// A history of `total` entries, entry i fifteen minutes before entry i - 1 (as the stand-in's whale).
    func generated(total: Int) -> (Int, Int) -> CheerHistoryPage {
        { page, perPage in
            let start = (page - 1) * perPage
            var items: [HistoryItem] = []
            for i in start..<min(start + perPage, total) {
                let creator: String = i % 7 == 3 ? "Jürg Meier" : "C"
                let comments: [CheerComment] = i == 123_456 ? [CheerComment(signature: "q", body: "Crème brûlée!")] : []
                let date = t0.addingTimeInterval(Double(-900 * i))
                items.append(.entry(CheerHistoryEntry(id: "g\(i)", creator: creator, amount: 5, product: "p", date: date, comments: comments)))
            }
            return CheerHistoryPage(items: items, page: page, perPage: perPage, totalPages: (total + perPage - 1) / perPage, totalCount: total)
        }
    }

    @Test func goToAnEntryOrAPage() {
        var d = Driver()
        d.send(.start)
        d.loadPage(1, total: 1_000_000)
        #expect(fetches(d.send(.goTo("4,512"))) == [91] && d.state.history.cursor == 4_511)
        // The cursor's row is mid-screen: the end of page 1,233 shows above it.
        #expect(fetches(d.send(.goTo("p1234"))) == [1_233, 1_234] && d.state.history.cursor == 61_650 && d.state.history.page == 1_234)
        d.send(.goTo("p99999"))
        #expect(d.state.history.page == 20_000 && d.state.notice?.text == "There are 20,000 pages; went to the last")
        d.send(.goTo("yesterday"))
        #expect(d.state.notice?.kind == .error && d.state.notice?.text.hasPrefix("Go to takes an entry number") == true)
        d.send(.goTo("2026-02-30"))
        #expect(d.state.notice?.text == "“2026-02-30” is not a date")
        #expect(d.state.mode == .browse)
    }

    @Test func goToADateBinarySearchesThePages() {
        var d = Driver()
        d.state.screen.timeZone = TimeZone(identifier: "UTC") ?? .current
        d.send(.start)
        let source = generated(total: 1_000_000)
        d.serveHistory(source)
        // t0 is 2026-11-21 10:26:40 UTC; the newest entry on or before 2026-10-01 is the first one
        // before 2026-10-02 00:00 UTC.
        let before = ISO8601DateFormatter().date(from: "2026-10-02T00:00:00Z") ?? t0
        let expected = Int((t0.timeIntervalSince(before) / 900).rounded(.up))
        d.send(.goTo("2026-10-01"))
        #expect(d.state.history.dateSearch != nil && d.state.isBusy)
        let requests = d.serveHistory(source)
        guard case let .entry(e)? = d.state.history.selectedItem else { Issue.record("no entry under the cursor"); return }
        #expect(d.state.history.cursor == expected && e.date < before && e.date >= before.addingTimeInterval(-900))
        #expect(requests <= 25 && d.state.history.dateSearch == nil)
        #expect(d.state.notice?.text.hasPrefix("Went to 2026-10-01") == true)
        // A day before every entry: it says so and stays.
        let cursor = d.state.history.cursor
        d.send(.goTo("1970-01-01"))
        d.serveHistory(source)
        #expect(d.state.history.cursor == cursor && d.state.notice?.text.hasPrefix("No cheer on or before 1970-01-01") == true)
    }

    @Test func escStopsADateSearch() {
        var d = Driver()
        d.send(.start)
        d.loadPage(1, total: 1_000_000)
        d.send(.goTo("2020-01-01"))
        #expect(d.state.history.dateSearch?.steps == 1)
        d.send(.escape)
        #expect(d.state.history.dateSearch == nil && d.state.notice?.text == "Stopped")
    }

    // MARK: find

    @Test func findScansThePagesGoesToTheFirstMatchAndNAndNGoThroughThem() {
        var d = Driver()
        d.send(.start)
        let source = generated(total: 2_000)
        d.serveHistory(source)
        d.send(.moveHistorySelection(10))
        d.send(.find("jurg"))  // accents and case ignored: "Jürg Meier"
        #expect(d.state.history.find?.scan?.page == 1 && d.state.isBusy)
        // The first scan page (200 entries) goes to the first match after the cursor at once.
        let firstScan = d.effects.compactMap { if case let .request(t, .history(_, 1, 200)) = $0 { return t } else { return nil } }.last ?? Token(-1)
        d.apply(.historyLoaded(firstScan, page: 1, .success(source(1, 200)), at: t0))
        d.answeredHistory.insert(firstScan)
        #expect(d.state.history.cursor == 17 && d.state.history.find?.scan?.page == 2)
        d.serveHistory(source)
        #expect(d.state.history.find?.complete == true && d.state.history.find?.matchCount == 286)
        #expect(d.state.notice?.text == "“jurg”: 286 matches · n/N to go through them")
        d.send(.nextMatch)
        #expect(d.state.history.cursor == 24)
        d.send(.previousMatch)
        d.send(.previousMatch)
        #expect(d.state.history.cursor == 10)
        d.send(.historyLast)
        d.send(.nextMatch)  // round the end
        #expect(d.state.history.cursor == 3)
    }

    @Test func findWrapsRoundTheEndAndSaysWhenNothingMatches() {
        var d = Driver()
        d.send(.start)
        let source = generated(total: 1_000)
        d.serveHistory(source)
        d.send(.historyLast)
        d.serveHistory(source)
        d.send(.find("JÜRG"))
        d.serveHistory(source)
        #expect(d.state.history.cursor == 3)  // the scan came round to the top
        d.send(.find("nobody has this"))
        let asked = d.serveHistory(source)
        // Five pages of 200, and the sixth once, since the fifth (the server's last) is full.
        #expect(asked == 6 && d.state.history.cursor == 3)
        #expect(d.state.notice?.text == "No entry has “nobody has this”")
    }

    @Test func escStopsAFindAndNGoesOnFromThere() {
        var d = Driver()
        d.send(.start)
        let source = generated(total: 1_000_000)
        d.serveHistory(source)
        d.send(.find("crème"))
        d.serveHistory(source, limit: 3)
        #expect(d.state.history.find?.scan != nil && d.state.history.find?.matchCount == 0)
        let out = d.send(.escape)
        #expect(out.contains { if case .cancel = $0 { return true } else { return false } } && d.state.history.find?.scan == nil)
        d.send(.nextMatch)  // not found yet, scan stopped: n searches on
        #expect(d.state.history.find?.scan != nil)
        d.serveHistory(source, limit: 700)
        #expect(d.state.history.cursor == 123_456 && d.state.history.find?.matchCount == 1)
    }
}

@Suite struct FaultMatrixFindings {
    @Test func anErrorLineTurnsIntoARecoveredLineWhenItsRequestAnswersAgain() {
        var d = Driver()
        d.send(.start)
        let failure = ShopAPIError.http(status: 500, message: "boom", code: nil, requestID: "rq-5", endpoint: .get("/api/v1/balance"), retryAfter: nil)
        d.apply(.balanceLoaded(d.balanceToken, .failure(failure), at: t0))
        #expect(d.state.notice?.kind == .error && d.state.notice?.endpoint == .get("/api/v1/balance"))
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))  // another operation: the line stays
        #expect(d.state.notice?.kind == .error)
        d.send(.refresh)
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(d.state.notice == Notice(.recovered, "recovered: GET /api/v1/balance answers again (it had failed)"))
    }

    @Test func clientErrorsAreNotServerErrorsAndARefusedTokenSaysWhatToDo() {
        func header(_ status: Int) -> String {
            ErrorText.staleReason(.http(status: status, message: nil, code: nil, requestID: nil, endpoint: .get("/x"), retryAfter: nil)).brief
        }
        #expect([400, 401, 403, 404, 409, 429, 500, 503].map(header)
                == ["client error", "sign-in refused", "forbidden", "not found", "client error", "rate limited", "server error", "server error"])
        var context = alice
        context.tokenVariable = "STAGING_TOKEN"
        let refused = Notice.error(.http(status: 401, message: "unknown access token", code: nil, requestID: "rq-1", endpoint: .get("/x"), retryAfter: nil), context)
        #expect(refused.text.hasSuffix("— set STAGING_TOKEN to a valid token or configure refresh_token_env"))
        #expect(!Notice.error(http(500, "x"), context).text.contains("STAGING_TOKEN"))
    }

    @Test func aPutAwaySendIsPendingNotDoneAndTheNextFormStartsInItsFirstField() {
        var d = ActionTransitions().ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "3", comment: "x"))  // the cursor is left in the comment field
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.action(.putAway))
        #expect(d.state.notice?.kind == .pending)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1247)), at: t0))
        d.send(.beginSpend)
        #expect(d.state.write.action?.field == 0)
    }
}

@Suite struct ActionTransitions {
    func ready(readOnly: Bool = false, users: [String] = []) -> Driver {
        var context = alice
        context.readOnly = readOnly
        context.users = users
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
        guard case let .editing(form, nil) = d.state.write.action?.phase, form == .spend(on: "com.reiterate.pack.rain", named: "Rain on a Tin Roof") else {
            Issue.record("\(String(describing: d.state.write.action))")
            return
        }
        d.send(.editSpend(amount: "abc", comment: ""))
        d.send(.submitAction)
        guard case .editing(_, note: .problem) = d.state.write.action?.phase else { Issue.record("no problem shown"); return }
        d.send(.editSpend(amount: "5000", comment: ""))
        d.send(.submitAction)
        guard case .editing(_, note: .problem("That is more than the balance (1,250 cheer).")) = d.state.write.action?.phase else { Issue.record("over balance"); return }
        d.send(.editSpend(amount: "50", comment: "  Lovely  "))
        #expect(d.send(.submitAction).isEmpty)
        guard case let .confirming(kind, summary) = d.state.write.action?.phase else { Issue.record("not confirming"); return }
        #expect(summary == "Spend 50 cheer on Rain on a Tin Roof as qa-alice on STAGING?")
        #expect(kind == .spend(product: "com.reiterate.pack.rain", amount: 50, comment: "Lovely"))
        // The baseline is read first (answered by the driver with what the screen holds), then the write goes.
        let confirmed = d.send(.submitAction)
        #expect(confirmed.contains { if case .request(_, .balance(user: "qa-alice")) = $0 { true } else { false } })
        #expect(confirmed.last == .request(d.actionToken, .write(.spend(product: "com.reiterate.pack.rain", amount: 50, comment: "Lovely"), user: "qa-alice")))
        #expect(d.send(.submitAction).isEmpty)  // pending: a second submit is refused
        d.send(.cancelAction)
        guard case .pending = d.state.write.action?.phase else { Issue.record("cancel dropped a pending action"); return }
        let after = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1200)), at: t0))
        #expect(d.state.balance.phase == .live(1200, fetchedAt: t0))
        #expect(d.state.notice?.text == "Spent 50 cheer on Rain on a Tin Roof. Balance 1,200 cheer. Checking…")
        #expect(after.contains(.writeBalance(key: alice.userKey, CheerBalance(balance: 1200), fetchedAt: t0)))
        #expect(d.requestID(forPage: 1, in: after) != nil && after.contains(.request(d.packsToken, .packs)))
        #expect(d.state.history.rows.count == 50)  // the old rows stay while the page reloads
    }

    // MARK: verification of every write

    /// Sends a spend of `amount` (with `comment`) from a ready driver.
    func spent(_ amount: Int, comment: String = "") -> Driver {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: String(amount), comment: comment))
        d.send(.submitAction)
        d.send(.submitAction)
        return d
    }

    /// Answers the verification's reads as a server whose reads agree would: the balance, the first history
    /// page (newest entry and total), the packs (the rain pack's cheer total) — the same again each time a
    /// value that disagreed with the write is read again (settled reads: at most three).
    func answerReads(_ d: inout Driver, balance: Int, newest: CheerHistoryEntry? = nil, total: Int = 230, rainCheer: Int = 50) {
        answerReadsOnce(&d, balance: balance, newest: newest, total: total, rainCheer: rainCheer)
        for _ in 1..<ReadSeries<Int>.maxReads {
            guard let token = d.state.token(for: .verificationWake) else { return }
            d.apply(.woke(token, at: t0))
            answerReadsOnce(&d, balance: balance, newest: newest, total: total, rainCheer: rainCheer)
        }
    }

    func answerReadsOnce(_ d: inout Driver, balance: Int, newest: CheerHistoryEntry? = nil, total: Int = 230, rainCheer: Int = 50) {
        if d.state.token(for: .balance) != nil { d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: balance)), at: t0)) }
        if let token = d.state.token(for: .verificationHistory) {
            var items = (0..<49).map { HistoryItem.entry(entry($0)) }
            if let newest { items.insert(.entry(newest), at: 0) }
            d.apply(.historyLoaded(token, page: 1, .success(CheerHistoryPage(items: items, page: 1, perPage: 50, totalPages: 5, totalCount: total)), at: t0))
        }
        if d.state.token(for: .packs) != nil {
            var packs = samplePacks
            packs.packs[0].cheerTotal = rainCheer
            d.apply(.packsLoaded(d.packsToken, .success(packs), at: t0))
        }
    }

    func spendEntry(_ amount: Int, comment: String?) -> CheerHistoryEntry {
        CheerHistoryEntry(id: "new", creator: "Field & Foley", amount: amount, product: "com.reiterate.pack.rain", date: t0,
                          comments: comment.map { [CheerComment(signature: "qa-alice", body: $0)] } ?? [])
    }

    @Test func aSpendIsCheckedByReadingAgainWhatItChanged() {
        var d = spent(50, comment: "Lovely")
        let after = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1200)), at: t0))
        // The balance, the first history page (its own request) and the packs are read again.
        #expect(after.contains(.request(d.balanceToken, .balance(user: "qa-alice"))) && after.contains(.request(d.packsToken, .packs)))
        #expect(d.state.token(for: .verificationHistory) != nil && d.state.isBusy)
        // The write's request id comes from its own exchange (found by its operation, not its path).
        var write = exchange(7, method: "POST", path: "/api/v1/spend_cheer")
        (write.requestID, write.operation) = ("rq-spend", .spendCheer)
        var read = exchange(8)
        read.operation = .getBalance
        d.apply(.exchangeRecorded(write))
        d.apply(.exchangeRecorded(read))
        answerReads(&d, balance: 1200, newest: spendEntry(50, comment: "Lovely"), total: 231, rainCheer: 100)
        #expect(d.state.checks.records.allSatisfy { $0.requestID == "rq-spend" })
        #expect(d.state.write.verification == nil)
        #expect(d.state.checks.records.map(\.name) == ["spend-balance", "spend-history", "spend-pack-total"])
        #expect(d.state.checks.records.allSatisfy { $0.outcome == .passed } && d.state.checks.failures == 0)
        #expect(d.state.notice == Notice(.info, "Spent 50 cheer on Rain on a Tin Roof. Balance 1,200 cheer. ✔ 3 checks passed"))
        #expect(d.state.write.shownOutcome?.text == "Spent 50 cheer on Rain on a Tin Roof. Balance 1,200 cheer. ✔ 3 checks passed")
        #expect(d.state.write.shownOutcome?.succeeded == true)
    }

    @Test func aSpendThatDebitsTheWrongAmountFailsItsCheck() {
        var d = spent(50)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1199)), at: t0))
        answerReads(&d, balance: 1199, newest: spendEntry(50, comment: nil), total: 231, rainCheer: 100)
        let failed = d.state.checks.records.filter { $0.outcome == .failed }
        #expect(failed.map(\.name) == ["spend-balance"] && d.state.checks.failures == 1)
        #expect(failed.first?.expected == "1,200 (1,250 − 50)" && failed.first?.actual == "1,199")
        #expect(d.state.notice?.kind == .error && d.state.notice?.text.hasSuffix("✗ spend-balance: expected 1,200 (1,250 − 50), got 1,199") == true)
    }

    @Test func aSpendWhoseHistoryOrPackTotalIsWrongSaysWhich() {
        var d = spent(20, comment: "nice")
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1230)), at: t0))
        // The server recorded a cut comment, did not count the entry, and left the pack's total.
        answerReads(&d, balance: 1230, newest: spendEntry(20, comment: "ni"), total: 230, rainCheer: 50)
        let failed = d.state.checks.records.filter { $0.outcome == .failed }.map(\.name)
        #expect(failed == ["spend-history", "spend-pack-total"])
        #expect(d.state.checks.records.first { $0.name == "spend-history" }?.actual == "newest 20 on com.reiterate.pack.rain “ni”, total 230")
    }

    @Test func aSpendWhoseAnswerWasLostIsSettledByReadingTheBalance() {
        let cut = ShopAPIError.transport(.cutShort(status: 200, requestID: "rq-cut"), endpoint: .post("/api/v1/spend_cheer"))
        var applied = spent(7)
        applied.apply(.actionFinished(applied.actionToken, .failure(cut), at: t0))
        guard case .failed = applied.state.write.action?.phase else { Issue.record("not failed"); return }
        answerReads(&applied, balance: 1243, newest: spendEntry(7, comment: nil), total: 231, rainCheer: 57)
        #expect(applied.state.notice?.kind == .info)
        #expect(applied.state.notice?.text.contains("the spend was applied (balance 1,243 = 1,250 − 7)") == true)
        #expect(applied.state.balance.phase == .live(1243, fetchedAt: t0))  // the header shows the fresh balance
        // The dialog says the outcome (held by the outcome alone), not the answer's error any more.
        #expect(applied.state.write.shownOutcome?.succeeded == true && applied.state.write.shownOutcome?.text.contains("the spend was applied") == true)
        var notApplied = spent(7)
        notApplied.apply(.actionFinished(notApplied.actionToken, .failure(.transport(.timeout(), endpoint: .post("/api/v1/spend_cheer"))), at: t0))
        answerReads(&notApplied, balance: 1250)
        #expect(notApplied.state.notice?.kind == .error && notApplied.state.notice?.text.contains("the spend was not applied (balance 1,250, unchanged)") == true)
        #expect(notApplied.state.checks.records.map(\.name) == ["spend-balance"] && notApplied.state.checks.failures == 0)
        #expect(applied.state.checks.records.map(\.name) == ["spend-balance", "spend-history", "spend-pack-total"] && applied.state.checks.failures == 0)
    }

    @Test func refusalsAndReplaysLeaveTheBalanceUnchanged() {
        var d = spent(10)
        d.apply(.actionFinished(d.actionToken, .failure(http(402, "insufficient_balance")), at: t0))
        answerReads(&d, balance: 1250)
        // Refused for the balance while the balance (1,250, before and after) covered the 10: the shop's rule
        // says 402 only below the amount, so that refusal is a failed check of its own.
        #expect(Set(d.state.checks.records.map(\.name)) == ["insufficient-balance", "refused-unchanged"] && d.state.checks.failures == 1, "\(d.state.checks.records.map(\.line))")
        #expect(d.state.checks.records.first { $0.name == "insufficient-balance" }?.actual == "refused HTTP 402 with the balance at 1,250 before and 1,250 after")
        d.send(.submitAction)
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.actionFinished(d.actionToken, .failure(http(409, "duplicate_transaction")), at: t0))
        answerReads(&d, balance: 1450)  // the replay credited again: a server bug
        let replay = d.state.checks.records.first
        #expect(replay?.name == "replay-unchanged" && replay?.outcome == .failed && replay?.actual == "1,450")
        #expect(d.state.checks.failures == 2)
    }

    @Test func aPurchaseIsCheckedAgainstItsBundle() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        d.send(.submitAction)
        let after = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1450)), at: t0))
        #expect(!after.contains { if case .request(_, .packs) = $0 { return true } else { return false } })
        answerReads(&d, balance: 1450)
        #expect(d.state.checks.records.map(\.name) == ["purchase-balance"] && d.state.checks.records.first?.outcome == .passed)
        #expect(d.state.notice?.text == "Bought com.reiterate.cheer.200. Balance 1,450 cheer. ✔ 1 check passed")
    }

    @Test func aScriptsWriteGoesWithoutADialogAndIsRefusedWhenReadOnlyOrBusy() {
        var d = ready()
        let kind = ShopWrite.spend(product: "com.reiterate.pack.rain", amount: 5, comment: nil)
        let sent = d.apply(.write(kind))
        #expect(sent.last == .request(d.actionToken, .write(.spend(product: "com.reiterate.pack.rain", amount: 5, comment: nil), user: "qa-alice")))
        #expect(d.state.write.action != nil && !d.state.dialogShown && d.state.mode == .browse)  // no dialog takes the keys
        #expect(d.apply(.write(kind)).isEmpty && d.state.notice?.text == "A spend or purchase is still on its way; wait for its answer.")
        var readOnly = ready(readOnly: true)
        #expect(readOnly.apply(.write(kind)).isEmpty && readOnly.state.notice?.text == "STAGING is read-only: writing is disabled.")
    }

    @Test func paymentRequiredAndConflictInPlainWords() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        guard case let .pending(.spend(spend), _, _) = d.state.write.action?.phase, spend.amount == 10, spend.comment == nil else { Issue.record("not sent"); return }
        let refused = d.apply(.actionFinished(d.actionToken, .failure(http(402, "insufficient_balance", "balance 5 is less than 10")), at: t0))
        #expect(d.state.write.action?.phase == .failed("POST /x: not enough cheer to spend 10 — HTTP 402: “balance 5 is less than 10”.", requestID: "rq-1"))
        #expect(refused.contains(.request(d.balanceToken, .balance(user: "qa-alice"))))  // our balance was out of date
        #expect(!refused.contains { if case .request(_, .write(.spend, _)) = $0 { return true } else { return false } })
        d.send(.submitAction)  // closes the outcome
        #expect(d.state.write.action == nil)
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        guard case let .confirming(.purchase(purchase), summary) = d.state.write.action?.phase, purchase.transactionID == 42 else { Issue.record("not confirming"); return }
        #expect(summary == "Buy 200 cheer (com.reiterate.cheer.200), transaction 42, as qa-alice on STAGING?")
        #expect(d.send(.submitAction).last == .request(d.actionToken, .write(.purchase(identifier: "com.reiterate.cheer.200", transactionID: 42), user: "qa-alice")))
        d.apply(.actionFinished(d.actionToken, .failure(http(409, "duplicate_transaction")), at: t0))
        #expect(d.state.write.action?.phase == .failed("Transaction 42 was already credited; nothing changed.", requestID: "rq-1"))
    }

    @Test func aWriteWithoutAnAnswerMayHaveBeenAppliedSoEverythingIsReloaded() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        let timeout = ShopAPIError.transport(.timeout(), endpoint: .post("/api/v1/spend_cheer"))
        let after = d.apply(.actionFinished(d.actionToken, .failure(timeout), at: t0))
        guard case let .failed(text, _) = d.state.write.action?.phase else { Issue.record("not failed"); return }
        #expect(text.hasSuffix("it may have been applied; reading the balance again to find out…"))
        #expect(after.contains(.request(d.balanceToken, .balance(user: "qa-alice"))) && d.requestID(forPage: 1, in: after) != nil)
    }

    @Test func aWriteAnsweredByAProxysGatewayTimeoutIsReadAgainNeverResent() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 42))
        d.send(.submitAction)
        d.send(.submitAction)
        let gateway = ShopAPIError.http(status: 504, message: nil, code: nil, requestID: "rq-9", endpoint: .post("/api/v2/purchase_cheer"), retryAfter: nil)
        let after = d.apply(.actionFinished(d.actionToken, .failure(gateway), at: t0))
        // A purchase changes the balance only: that is what is read again.
        #expect(after.contains(.request(d.balanceToken, .balance(user: "qa-alice"))))
        #expect(!after.contains { if case .request(_, .write(.purchase, _)) = $0 { return true } else { return false } })
        // The next buy offers the same transaction id, so the server can refuse a double credit.
        d.send(.cancelAction)
        let again = d.send(.beginPurchase(transactionID: 77))
        guard case let .editing(form, .some) = d.state.write.action?.phase, form == .purchase(identifier: "com.reiterate.cheer.200", transactionID: "42") else { Issue.record("\(String(describing: d.state.write.action))"); return }
        #expect(!again.contains(.makeTransactionID))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.actionFinished(d.actionToken, .failure(http(409, "duplicate_transaction")), at: t0))
        #expect(d.state.write.lostPurchase == nil)  // settled: it had been credited
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
        guard case .editing(_, note: .problem) = d.state.write.action?.phase else { Issue.record("accepted -3"); return }
        d.send(.editPurchase(identifier: " ", transactionID: "3"))
        d.send(.submitAction)
        guard case .editing(_, note: .problem) = d.state.write.action?.phase else { Issue.record("accepted an empty bundle"); return }
        d.send(.cancelAction)
        #expect(d.state.write.action == nil)
    }

    @Test func readOnlyRefusesWrites() {
        var d = ready(readOnly: true)
        d.send(.beginSpend)
        #expect(d.state.write.action == nil && d.state.notice?.text == "STAGING is read-only: spending is disabled.")
        d.send(.beginPurchase(transactionID: 1))
        #expect(d.state.write.action == nil && d.state.notice?.text == "STAGING is read-only: buying is disabled.")
        #expect(!d.effects.contains { if case .request(_, .write) = $0 { return true }; return false })
    }

    @Test func spendNeedsASelectedPack() {
        var d = ready()
        d.send(.setPackFilter("nothing matches"))
        d.send(.beginSpend)
        #expect(d.state.write.action == nil && d.state.notice?.text == "Select an Audio Pack to cheer for first.")
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
        #expect(refresh.contains(.request(asked, .balance(user: "qa-alice"))))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "50", comment: ""))
        d.send(.submitAction)
        let confirmed = d.send(.submitAction)
        let done = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1200)), at: t0))
        // The request asked before the spend is not wanted any more: the baseline's own read replaces it.
        #expect((confirmed + done).contains(.cancel(asked)))
        let late = d.apply(.balanceLoaded(asked, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(late.isEmpty && d.state.balance.phase == .live(1200, fetchedAt: t0))
        // The verification's own read, asked after the spend, is the one that counts.
        #expect(d.state.balance.isLoading && d.balanceToken > asked)
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1200)), at: t0))
        d.send(.submitAction)  // closes the outcome
        #expect(d.send(.refresh).contains(.request(d.balanceToken, .balance(user: "qa-alice"))) && d.balanceToken > asked)
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
        let confirmed = d.send(.submitAction)
        let after = d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1245)), at: t0))
        // The request out predates the spend: it is cancelled and asked again at once (by the baseline).
        #expect((confirmed + after).contains(.cancel(asked)) && after.contains(.request(d.packsToken, .packs)) && d.packsToken > asked)
        #expect(d.apply(.packsLoaded(asked, .success(samplePacks), at: t0)).isEmpty)
    }

    @Test func cancelledRequestsLeaveNothingStuck() {
        var d = Driver()
        d.send(.start)
        d.apply(.cancelled(d.balanceToken))
        d.apply(.cancelled(d.packsToken))
        d.apply(.cancelled(d.requestID(forPage: 1) ?? Token(-1)))
        #expect(!d.state.balance.isLoading && !d.state.packs.list.isLoading && d.state.history.pages[1] == nil)
        let again = d.send(.refresh)
        #expect(again.filter { if case .request(_, .balance) = $0 { return true } else { return false } }.count == 1)
        #expect(again.contains(.request(d.packsToken, .packs)) && d.requestID(forPage: 1, in: again) != nil)
        d.apply(.packsLoaded(d.packsToken, .success(samplePacks), at: t0))
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 10)), at: t0))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "5", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.cancelled(d.actionToken))
        guard case .failed = d.state.write.action?.phase else { Issue.record("a cancelled spend stayed pending"); return }
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
                case let .request(t, .balance), let .request(t, .packs), let .request(t, .history(_, _, _)): seen.append(t)
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

    @Test func beforeAnyPageHasComeThereIsNothingToPageThrough() {
        var d = Driver()
        #expect(d.send(.historyNextPage).isEmpty && d.send(.historyLast).isEmpty)
        #expect(d.state.history.page == 1 && d.state.history.cursor == 0 && d.state.history.positionText == "page 1")
    }

    @Test func aRefreshWhileThePageLoadsSendsNothingMore() {
        var d = Driver()
        d.send(.start)
        let again = d.send(.refresh)
        #expect(!again.contains { if case .request(_, .history) = $0 { return true }; if case .cancel = $0 { return true }; return false })
    }

    @Test func aPageShownFromTheCacheIsFetchedLiveOnRevisit() {
        var d = Driver()
        d.send(.startBalance)
        d.apply(.cacheLoaded(d.cacheToken, balance: nil, packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        #expect(d.state.history.rows.count == 50)
        // Page 1, from the cache, is still on screen above page 2's first entry: it is asked for live.
        let next = d.send(.historyNextPage)
        #expect(d.requestID(forPage: 1, in: next) != nil)
        d.send(.historyPreviousPage)
        #expect(d.state.history.rows.count == 50)
    }
}

@Suite struct UserSwitchTests {
    func ready() -> Driver { ActionTransitions().ready(users: ["qa-alice", "qa-whale", "qa-bob"]) }

    mutating func switchTo(_ d: inout Driver, tabs: Int = 0, typed: String = "") -> [Effect] {
        var out = d.apply(.action(.switchUser))
        for _ in 0..<tabs { out += d.apply(.action(.nextField)) }
        for c in typed { out += d.apply(.text(c)) }
        return out + d.apply(.action(.runPrompt))
    }

    @Test mutating func uSwitchesWithTheCachedBalanceFirstAndSwitchingBackKeepsThePlace() {
        var d = ready()
        d.send(.moveHistorySelection(57))
        d.loadPage(2)
        #expect(d.state.history.cursor == 57)
        let balanceBefore = d.balanceToken
        // Tab goes through the environment's users, skipping the one looked at.
        d.apply(.action(.switchUser))
        d.apply(.action(.nextField))
        #expect(d.state.screen.prompt?.text == "qa-whale")
        d.apply(.action(.nextField))
        #expect(d.state.screen.prompt?.text == "qa-bob")
        d.apply(.action(.nextField))
        let out = d.apply(.action(.runPrompt))
        #expect(d.state.context.user == "qa-whale" && d.state.balance.value == nil && d.state.history.cursor == 0)
        // The cache is read first (the header shows its balance at once), then the live reads go out for qa-whale.
        let reads = out.compactMap { if case let .readCache(_, key, _) = $0 { return key } else { return nil } }
        let firstFetch = out.firstIndex { if case .request(_, .balance) = $0 { return true } else { return false } }
        let firstRead = out.firstIndex { if case .readCache = $0 { return true } else { return false } }
        #expect(reads == [CacheKey(baseURL: alice.baseURL, user: "qa-whale")] && firstRead ?? 99 < firstFetch ?? 0, "\(out)")
        #expect(d.effects.contains(.request(d.balanceToken, .balance(user: "qa-whale"))) && d.balanceToken != balanceBefore)
        d.apply(.cacheLoaded(d.cacheToken, balance: CacheEntry(value: CheerBalance(balance: 1_000_000), fetchedAt: t0), packs: nil, firstPage: nil))
        #expect(d.state.balance.value == 1_000_000)
        // Back to qa-alice: where she was, her own cache key.
        _ = switchTo(&d, typed: "qa-alice")
        #expect(d.state.context.user == "qa-alice" && d.state.history.cursor == 57 && d.state.notice?.text == "Back to qa-alice, where you were.")
        #expect(d.state.steps.steps.suffix(2) == ["switched to user qa-whale (u)", "switched to user qa-alice (u)"])
    }

    @Test mutating func anAnswerForTheUserLeftNeverReachesTheNewOne() {
        var d = ready()
        d.send(.refresh)
        let aliceToken = d.balanceToken
        let out = switchTo(&d, typed: "qa-whale")
        #expect(out.contains(.cancel(aliceToken)))
        d.apply(.balanceLoaded(aliceToken, .success(CheerBalance(balance: 1250)), at: t0))  // late
        #expect(d.state.balance.value == nil)
    }

    @Test mutating func noSwitchWhileAWriteIsOut() {
        var d = ActionTransitions().ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "3", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.action(.putAway))
        d.apply(.action(.switchUser))
        #expect(d.state.screen.prompt == nil && d.state.notice?.text == "A spend or purchase is still on its way; wait for its answer.")
    }
}
