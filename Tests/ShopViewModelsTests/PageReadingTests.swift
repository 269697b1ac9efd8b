import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// Issue 27, item 1: pages that disagree never make the list loop, and never hide an entry the server sent.
@Suite struct PageReadingTests {
    /// A server of `real` entries whose pages say `said(page)` entries in all, each answer with its own request id.
    final class Server: @unchecked Sendable {
        var answers = 0
        let real: Int
        let said: (Int) -> Int
        let shift: (Int) -> Int
        init(real: Int = 230, said: @escaping (Int) -> Int = { _ in 230 }, shift: @escaping (Int) -> Int = { _ in 0 }) {
            self.real = real
            self.said = said
            self.shift = shift
        }

        func page(_ page: Int, _ perPage: Int) -> CheerHistoryPage {
            answers += 1
            let start = max(0, (page - 1) * perPage - shift(page))
            let end = min((page - 1) * perPage + perPage - shift(page), real)
            let items = (start < real ? start..<max(start, end) : real..<real).map { i in
                HistoryItem.entry(entry(i, comments: i == 215 ? [CheerComment(signature: "q", body: "Only past the last page")] : []))
            }
            let total = said(page)
            var answer = CheerHistoryPage(items: items, page: page, perPage: perPage, totalPages: (total + perPage - 1) / perPage, totalCount: total)
            answer.requestID = "rq-\(answers)"
            return answer
        }
    }

    func started(_ server: Server) -> Driver {
        var d = Driver()
        d.send(.start)
        d.serveHistory(server.page)
        return d
    }

    func ids(_ d: Driver) -> [String] {
        (0..<(d.state.history.count ?? 0)).compactMap { i in
            if case let .item(.entry(e)) = d.state.history.item(at: i) { return e.id } else { return nil }
        }
    }

    @Test func aTotalOneLowerAfterTheFirstPageReadsAgainOnceThenStopsAndSaysWhy() {
        let server = Server(said: { $0 == 1 ? 230 : 229 })
        var d = started(server)
        let before = server.answers
        d.send(.historyNextPage)
        let served = d.serveHistory(server.page, limit: 100)
        #expect(served <= 4, "a page turn sent \(served) history requests")
        #expect(server.answers - before == served)
        guard case let .totals(a, b)? = d.state.history.reading.disagreement else {
            Issue.record("no disagreement told: \(String(describing: d.state.history.reading.disagreement))")
            return
        }
        #expect(Set([a.total, b.total]) == [229, 230] && a.requestID != nil && b.requestID != nil && a.requestID != b.requestID)
        let line = d.state.notice?.text ?? ""
        #expect(line.hasPrefix("History pages disagree: page 1 says 230 (rq-") && line.contains("page 2 says 229 (rq-"), "\(line)")
        #expect(d.state.history.newEntries == 0)  // no entry came in: nothing new to see
        // G and the position line: every entry received, the server's other total noted.
        d.send(.historyLast)
        #expect(d.serveHistory(server.page, limit: 100) <= 2)
        #expect(d.state.history.cursor == 229 && d.state.history.selectedItem == .entry(entry(229)))
        #expect(d.state.history.positionText == "entry 230 of 230 · page 5 of 5 · the server's total says 229")
        // Moving on reads no page twice more: the reading is settled until r.
        d.send(.historyFirst)
        #expect(d.serveHistory(server.page, limit: 100) <= 1)
        #expect(d.state.history.reading.disagreement != nil)
        d.send(.refresh)
        #expect(d.state.history.reading.disagreement == nil)
    }

    @Test func aRealEntryComingInBetweenPagesIsReadAgainWithoutAComplaint() {
        var total = 230
        let server = Server(real: 231, said: { _ in total })
        var d = started(server)
        total = 231  // a spend on the phone
        d.send(.historyNextPage)
        d.serveHistory(server.page, limit: 100)
        #expect(d.state.history.reading.disagreement == nil && d.state.history.count == 231)
        let line = d.state.notice?.text ?? ""
        #expect(!line.contains("disagree"))
    }

    @Test func entriesPastTheServersLastPageAreReachedByGAndFind() {
        // The server says 200 entries (4 pages) and still serves page 5 with 30.
        let server = Server(said: { _ in 200 })
        var d = started(server)
        d.send(.historyLast)
        let served = d.serveHistory(server.page, limit: 100)
        #expect(served <= 3, "G sent \(served) history requests")
        #expect(d.state.history.cursor == 229 && d.state.history.count == 230 && d.state.history.reading.beyondLastPage)
        #expect(d.state.history.positionText == "entry 230 of 230 · page 5 of 5 · the server's total says 200")
        #expect(Set(ids(d).suffix(30)) == Set((200..<230).map { "h\($0)" }))
        // `]` from page 4 goes on to page 5.
        d.send(.goTo("p4"))
        d.serveHistory(server.page, limit: 100)
        d.send(.historyNextPage)
        #expect(d.state.history.page == 5)

        // `/` finds the one entry with this comment, past the server's last page (pages of 200: the
        // first is full, the second past the server's last), and the cursor is on it.
        let findServer = Server(said: { _ in 200 })
        var f = started(findServer)
        f.send(.find("past the last"))
        f.serveHistory(findServer.page, limit: 100)
        #expect(f.state.history.find?.matchCount == 1 && f.state.history.count == 230)
        #expect(f.state.history.cursor == 215 && f.state.history.selectedItem.map(HistoryState.key(of:)) == .id("h215"))
    }

    @Test func anEntryOnTwoPagesIsReadAgainOnceThenBothAreShownAndTold() {
        let server = Server(shift: { $0 > 1 ? 1 : 0 })
        var d = started(server)
        d.send(.historyNextPage)
        let served = d.serveHistory(server.page, limit: 100)
        #expect(served <= 4, "a page turn sent \(served) history requests")
        guard case let .overlap(_, a, b)? = d.state.history.reading.disagreement else {
            Issue.record("no overlap told")
            return
        }
        #expect(a.page == 1 && b.page == 2 && a.requestID != b.requestID)
        #expect(d.state.notice?.text.hasPrefix("An entry on pages 1 (rq-") == true)
        // Both places show it: nothing the server sent is dropped.
        #expect(d.state.history.item(at: 49) == .item(.entry(entry(49))) && d.state.history.item(at: 50) == .item(.entry(entry(49))))
    }

    @Test func anEmptyHistoryHasNoPageOfZero() {
        var d = Driver()
        d.send(.start)
        d.serveHistory { page, perPage in CheerHistoryPage(items: [], page: page, perPage: perPage, totalPages: 0, totalCount: 0) }
        #expect(d.state.history.positionText == "no entries")
    }
}

@Suite struct StepsMatchTheScreenTests {
    @Test func aMoveStepSaysWhatThePositionLineSaysOnceThePageCame() {
        // `G` to the end of 230 entries the server counts as 229 after page 1: the count comes with the page.
        let server = PageReadingTests.Server(said: { $0 == 1 ? 230 : 229 })
        var d = Driver()
        d.send(.start)
        d.serveHistory(server.page)
        d.send(.historyLast)
        d.serveHistory(server.page, limit: 100)
        let step = d.state.steps.steps.last ?? ""
        #expect(step == "went to " + d.state.history.positionText, "\(step) / \(d.state.history.positionText)")
        // Entries that come in above are news on the line, not part of the place the step names.
        var n = Driver()
        n.send(.start)
        n.serveHistory { historyPage($0, perPage: $1) }
        n.send(.moveHistorySelection(10))
        n.send(.refresh)
        n.serveHistory { historyPage($0, perPage: $1, total: 231) }
        n.send(.moveHistorySelection(1))
        #expect(n.state.history.positionText == "entry 12 of 231 · page 1 of 5 · 1 new entry · g to see it")
        #expect(n.state.steps.steps.last == "went to entry 12 of 231 · page 1 of 5", "\(n.state.steps.steps)")
    }
}

@Suite struct ShortHistoryPastItsOnePageTests {
    /// A server that says 50 entries on one page and serves the 51st on page 2 (the stand-in's hidden_page
    /// for a user of 51–100 entries): G, and / through its pages of 200, reach the 51st.
    @Test func theEntryPastTheOnlyPageIsReached() {
        let server = PageReadingTests.Server(real: 51, said: { _ in 50 })
        var d = Driver()
        d.send(.start)
        // Page 1 came full on the server's only page: the page after it is asked once, at once (the cursor
        // is on the last page), and holds the 51st.
        #expect(d.serveHistory(server.page) == 2)
        #expect(d.state.history.count == 51)
        d.send(.historyLast)
        #expect(d.serveHistory(server.page, limit: 100) <= 1)
        #expect(d.state.history.count == 51 && d.state.history.cursor == 50 && d.state.history.selectedItem == .entry(entry(50)))
        // Find: the scan's page of 200 holds all 51; the match on the 51st is where the cursor goes.
        var f = Driver()
        f.send(.start)
        f.serveHistory(server.page)
        let findServer = PageReadingTests.Server(real: 51, said: { _ in 50 })
        f.send(.find("h50-no-such"))
        f.serveHistory(findServer.page, limit: 100)
        #expect(f.state.history.count == 51)
        // A server without paging (every page is the whole history, read as page 1) is never paged by it.
        var n = Driver()
        n.send(.start)
        n.serveHistory { _, _ in CheerHistoryPage(items: (0..<50).map { .entry(entry($0)) }, page: 1, perPage: 50, totalPages: 1, totalCount: 50) }
        n.send(.historyLast)
        n.serveHistory({ _, _ in CheerHistoryPage(items: (0..<50).map { .entry(entry($0)) }, page: 1, perPage: 50, totalPages: 1, totalCount: 50) }, limit: 100)
        #expect(n.state.history.count == 50 && n.state.history.cursor == 49)
    }

    /// A server whose total_pages says 10¹² while its pages run out: one `/` reads the pages there are.
    @Test func findStopsAtTheFirstEmptyPagePastWhatWasReceived() {
        var d = Driver()
        d.send(.start)
        let lying: (Int, Int) -> CheerHistoryPage = { page, perPage in
            let start = (page - 1) * perPage
            let items = (start..<max(start, min(start + perPage, 230))).map { HistoryItem.entry(entry($0)) }
            return CheerHistoryPage(items: items, page: page, perPage: perPage, totalPages: 1_000_000_000_000, totalCount: 230)
        }
        d.serveHistory(lying)
        d.send(.find("nothing has this"))
        let served = d.serveHistory(lying, limit: 1_000)
        #expect(served <= 4, "one find sent \(served) requests")
        #expect(d.state.history.find?.complete == true)
    }

    /// Paging numbers at the ends of Int are read and judged, never a trap.
    @Test func extremePagingNumbersDoNotTrap() {
        var d = Driver()
        d.send(.start)
        d.serveHistory({ page, perPage in
            CheerHistoryPage(items: (0..<50).map { .entry(entry($0)) }, page: page, perPage: perPage, totalPages: .max, totalCount: .max)
        }, limit: 20)
        d.send(.historyLast)
        d.serveHistory({ page, perPage in
            CheerHistoryPage(items: (0..<50).map { .entry(entry($0)) }, page: page, perPage: perPage, totalPages: .max, totalCount: .max)
        }, limit: 20)
        d.send(.find("x"))
        d.serveHistory({ page, perPage in CheerHistoryPage(items: [], page: page, perPage: perPage, totalPages: .max, totalCount: .max) }, limit: 20)
        #expect(d.state.history.count == .max)
        _ = d.state.history.positionText
    }
}

/// Issue 35: pages read far apart tell of different moments of a history that grows; `r` starts afresh.
@Suite struct ReadingSpanTests {
    /// Answers every history request out, at `at`, from a history of `total` entries (the newest at the top).
    func serve(_ d: inout Driver, total: Int, at: Date) {
        for _ in 0..<20 {
            let cancelled = Set(d.effects.compactMap { if case let .cancel(t) = $0 { return t } else { return nil } })
            guard let next = d.effects.first(where: {
                if case let .request(t, .history(_, _, _)) = $0 { return !d.answeredHistory.contains(t) && !cancelled.contains(t) }
                return false
            }), case let .request(token, .history(_, page, perPage)) = next else { return }
            d.answeredHistory.insert(token)
            d.apply(.historyLoaded(token, page: page, .success(historyPage(page, perPage: perPage, total: total)), at: at))
        }
    }

    @Test func pagesReadFarApartWhileTheHistoryGrowsDoNotDisagree() {
        var d = Driver()
        d.send(.start)
        serve(&d, total: 1_254, at: t0)
        // 85 s later a page further down says one more (an entry came in at the top meanwhile)…
        d.send(.historyNextPage)
        serve(&d, total: 1_255, at: t0.addingTimeInterval(85))
        // …and 85 s after that, one more again: each a new moment, never "pages disagree".
        d.send(.historyNextPage)
        serve(&d, total: 1_256, at: t0.addingTimeInterval(170))
        #expect(d.state.history.reading.disagreement == nil && d.state.notice?.text.hasPrefix("History pages disagree") != true)
        #expect(d.state.history.totalCount == 1_256)
    }

    @Test func pagesThatDisagreeWithinTheSpanAreStillTold_AndRClearsTheLine() {
        var d = Driver()
        d.send(.start)
        serve(&d, total: 1_254, at: t0)
        d.send(.historyNextPage)
        serve(&d, total: 1_255, at: t0.addingTimeInterval(1))
        d.send(.historyNextPage)
        serve(&d, total: 1_254, at: t0.addingTimeInterval(2))
        #expect(d.state.history.reading.disagreement != nil && d.state.notice?.text.hasPrefix("History pages disagree") == true)
        d.send(.refresh)
        #expect(d.state.history.reading.disagreement == nil && d.state.notice?.text.hasPrefix("History pages disagree") != true)
    }
}
