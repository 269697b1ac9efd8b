import Foundation
import HTTPTypes
@testable import ShopAPI
import Testing

/// Issue 27, item 1: what history pages must agree on across answers, and no finding where time explains it.
@Suite struct PagingAgreementTests {
    let start = ContinuousClock.Instant.now

    func body(page: Int, ids: [String], total: Int, perPage: Int = 3, totalPages: Int? = nil) -> [UInt8] {
        let entries = ids.enumerated().map { i, id in #"{"id":"\#(id)","creator":"c","amount":5,"product":"p","date":"2026-11-0\#(9 - min(8, page + i))T00:00:00Z"}"# }
        let pages = totalPages ?? (total + perPage - 1) / perPage
        return Array(#"{"history":[\#(entries.joined(separator: ","))],"page":\#(page),"per_page":\#(perPage),"total_pages":\#(pages),"total_count":\#(total)}"#.utf8)
    }

    /// One answer, asked at `sent` and answered at `answered` (milliseconds from a fixed start).
    func answer(_ body: [UInt8], page: Int, id: String, sent: Int, answered: Int, _ watchdog: inout ContractWatchdog) -> [Finding] {
        let headers = HTTPFields(pairs: [("Content-Type", "application/json"), ("X-Request-Id", id)])
        return watchdog.check(ObservedExchange(operation: .getCheerHistory, pathAndQuery: "/api/v1/cheer_history?user_id=qa-alice&page=\(page)&per_page=3",
                                               status: 200, headers: headers, body: body,
                                               sentAt: start + .milliseconds(sent), answeredAt: start + .milliseconds(answered)))
    }

    @Test func aTotalThatComesBackAfterAnotherIsOneFindingNamingAllThreeAnswers() {
        var w = ContractWatchdog()
        #expect(answer(body(page: 1, ids: ["a", "b", "c"], total: 7), page: 1, id: "rq-1", sent: 0, answered: 10, &w).isEmpty)
        #expect(answer(body(page: 2, ids: ["d", "e", "f"], total: 6), page: 2, id: "rq-2", sent: 20, answered: 30, &w).isEmpty)
        let third = answer(body(page: 1, ids: ["a", "b", "c"], total: 7), page: 1, id: "rq-3", sent: 40, answered: 50, &w)
        #expect(third.map(\.check) == [.paging])
        #expect(third.first?.actual == "total_count 7 on page 1 (rq-1), then 6 on page 2 (rq-2), then 7 on page 1 (rq-3)")
        // The same disagreement again is not a second finding.
        #expect(answer(body(page: 2, ids: ["d", "e", "f"], total: 6), page: 2, id: "rq-4", sent: 60, answered: 70, &w).isEmpty)
        #expect(answer(body(page: 1, ids: ["a", "b", "c"], total: 7), page: 1, id: "rq-5", sent: 80, answered: 90, &w).isEmpty)
    }

    @Test func aGrowingHistoryOrAnswersThatOverlappedAreNoFinding() {
        var w = ContractWatchdog()
        // Entries came in between reads: 6, 7, 8 — no total came back.
        #expect(answer(body(page: 1, ids: ["a", "b", "c"], total: 6), page: 1, id: "rq-1", sent: 0, answered: 10, &w).isEmpty)
        #expect(answer(body(page: 2, ids: ["c", "d", "e"], total: 7), page: 2, id: "rq-2", sent: 20, answered: 30, &w).isEmpty)
        #expect(answer(body(page: 1, ids: ["x", "a", "b"], total: 8), page: 1, id: "rq-3", sent: 40, answered: 50, &w).isEmpty)
        // 8, then 9 and 8 in answers that were out at the same time: the server may have taken them in either order.
        var v = ContractWatchdog()
        #expect(answer(body(page: 1, ids: ["a", "b", "c"], total: 8), page: 1, id: "rq-1", sent: 0, answered: 10, &v).isEmpty)
        #expect(answer(body(page: 2, ids: ["d", "e", "f"], total: 9), page: 2, id: "rq-2", sent: 20, answered: 40, &v).isEmpty)
        #expect(answer(body(page: 3, ids: ["g", "h", "i"], total: 8), page: 3, id: "rq-3", sent: 30, answered: 50, &v).isEmpty)
    }

    @Test func entriesPastTheLastPageAreAFinding() {
        var w = ContractWatchdog()
        // total_count 6, so 2 pages of 3; page 3 still holds two entries.
        let past = answer(body(page: 3, ids: ["g", "h"], total: 6), page: 3, id: "rq-1", sent: 0, answered: 1, &w)
        #expect(past.map(\.check) == [.paging] && past.first?.actual == "page 3 holds 2 entries")
        // An empty page past the end is what the contract's paging gives: no finding.
        #expect(answer(body(page: 3, ids: [], total: 6), page: 3, id: "rq-2", sent: 2, answered: 3, &w).isEmpty)
    }
}

@Suite struct PagingFindingKeyTests {
    @Test func entriesPastTheLastPageAreOneFindingWhateverThePageSizeThatShowedIt() {
        let fifty = Finding(check: .paging, expected: "no entries past the last page (total_pages 4, total_count 200)", actual: "page 5 holds 30 entries",
                            place: .pages(.nothingPastTheLastPage))
        let twoHundred = Finding(check: .paging, expected: "no entries past the last page (total_pages 1, total_count 200)", actual: "page 2 holds 30 entries",
                                 place: .pages(.nothingPastTheLastPage))
        let a = FindingKey(fifty, method: "GET", target: "/api/v1/cheer_history?user_id=qa-alice&page=5&per_page=50")
        let b = FindingKey(twoHundred, method: "GET", target: "/api/v1/cheer_history?page=2&user_id=qa-alice&per_page=200")
        #expect(a == b && a.target == "/api/v1/cheer_history?user_id=qa-alice")
        // Another user's pages are another finding; so is another rule of the pages.
        let bob = FindingKey(fifty, method: "GET", target: "/api/v1/cheer_history?user_id=qa-bob&page=5&per_page=50")
        let total = FindingKey(Finding(check: .paging, expected: "x", actual: "y", place: .pages(.oneTotal)), method: "GET",
                               target: "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50")
        #expect(a != bob && a != total)
    }
}

@Suite struct PagingExtremesTests {
    @Test func pagingNumbersAtTheEndsOfIntAreFindingsNotATrap() {
        var w = ContractWatchdog()
        let headers = HTTPFields(pairs: [("Content-Type", "application/json"), ("X-Request-Id", "rq-x")])
        for (page, total) in [(Int.max, Int.max), (Int.min, Int.max), (1, Int.max), (Int.max, 0)] {
            let body = Array(#"{"history":[{"id":"a","creator":"c","amount":5,"product":"p","date":"2026-11-01T00:00:00Z"}],"page":\#(page),"per_page":3,"total_pages":2,"total_count":\#(total)}"#.utf8)
            let findings = w.check(ObservedExchange(operation: .getCheerHistory, pathAndQuery: "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=3",
                                                    status: 200, headers: headers, body: body, sentAt: .now, answeredAt: .now))
            #expect(findings.contains { $0.check == .paging })
        }
    }
}
