import Foundation
import HTTPTypes
import ShopAPI
@testable import ShopViewModels
import Testing

/// A finding that recurs is one row with a count and its first and last request; the status bar's
/// `⚠ N` counts distinct findings (issue 27, item 3).
@Suite struct FindingGroupTests {
    /// An answer as the REST core records it, with the findings the real watchdog gives its body.
    static func answer(_ n: Int, path: String = "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", body: String) -> Exchange {
        let headers = HTTPFields(pairs: [("Content-Type", "application/json"), ("X-Request-Id", "rq-\(n)")])
        let operation: OperationID = path.hasPrefix("/api/v1/balance") ? .getBalance : .getCheerHistory
        var e = Exchange(id: n, method: "GET", path: path, startedAt: t0.addingTimeInterval(Double(n)), duration: .milliseconds(3), status: 200,
                         failure: nil, requestID: "rq-\(n)", attempt: 1, requestBytes: 0, responseBytes: body.utf8.count,
                         requestHeaders: [:], responseHeaders: headers, requestBodyPreview: nil, responseBodyPreview: body)
        e.findings = ContractWatchdog.check(ObservedExchange(operation: operation, pathAndQuery: path, status: 200, headers: headers, body: Array(body.utf8)))
        return e
    }

    /// A history page whose entry 2 has no `amount`; `date` of entry 1 changes from one read to the next.
    static func page(amountless at: Int = 1, badDate: String = "yesterday") -> String {
        var entries: [String] = []
        for i in 0..<3 {
            let amount = i == at ? "" : #""amount": 5, "#
            let date = i == 0 ? badDate : "2026-01-0\(3 - i)T10:00:00Z"
            entries.append(#"{"id": "h\#(i)", \#(amount)"product": "com.reiterate.pack.rain", "date": "\#(date)", "creator": "qa-alice"}"#)
        }
        return #"{"history": [\#(entries.joined(separator: ", "))], "page": 1, "per_page": 50, "total_pages": 1, "total_count": 3}"#
    }

    @Test func fiveRefreshesLeaveTheFindingCountUnchanged() {
        var d = Driver()
        d.apply(.exchangeRecorded(Self.answer(1, body: Self.page())))
        let rows = d.state.checks.records.count
        let distinct = d.state.checks.failures
        #expect(rows == 2 && distinct == 2, "\(d.state.checks.records.map(\.expected))")  // entry 2's amount, entry 1's date
        for n in 2...6 { d.apply(.exchangeRecorded(Self.answer(n, body: Self.page(badDate: "day \(n)")))) }
        #expect(d.state.checks.records.count == rows && d.state.checks.failures == distinct)
        let amount = d.state.checks.records.first { $0.expected.contains("amount") }
        #expect(amount?.count == 6 && amount?.first?.requestID == "rq-1" && amount?.requestID == "rq-6")
        #expect(amount?.recurrence == "×6, first rq-1, last rq-6")
        // The value that changed: the last one shown, the first one kept.
        let date = d.state.checks.records.first { $0.expected.contains("date-time") }
        #expect(date?.actual == "“day 6”" && date?.first?.actual == "“yesterday”" && date?.count == 6)
        // The key is typed: the check, the user's history and the field, by the entry's identity (issue 35: never
        // its position on the page), with the rule it broke.
        #expect(amount?.key?.at == .place(.field(path: "history[id=h1].amount", rule: .required)))
    }

    /// The same rule on another field, another page or another user is another finding.
    @Test func anotherPlaceOrRequestIsAnotherFinding() {
        var d = Driver()
        d.apply(.exchangeRecorded(Self.answer(1, body: Self.page(amountless: 1, badDate: "2026-01-04T10:00:00Z"))))
        #expect(d.state.checks.failures == 1)
        d.apply(.exchangeRecorded(Self.answer(2, body: Self.page(amountless: 2, badDate: "2026-01-04T10:00:00Z"))))  // the slot moved down
        #expect(d.state.checks.failures == 2 && d.state.checks.records.count == 2)
        d.apply(.exchangeRecorded(Self.answer(3, path: "/api/v1/cheer_history?user_id=qa-bob&page=1&per_page=50",
                                              body: Self.page(amountless: 2, badDate: "2026-01-04T10:00:00Z"))))
        #expect(d.state.checks.failures == 3 && d.state.checks.records.count == 3)
        #expect(d.state.checks.records.allSatisfy { $0.count == 1 })
    }

    /// A finding seen again moves to the top; the selection stays on the record it was on.
    @Test func aRecurringFindingMovesUpAndTheSelectionFollowsItsRecord() {
        var d = Driver()
        d.apply(.exchangeRecorded(Self.answer(1, path: "/api/v1/balance?user_id=qa-alice", body: #"{"balance": "12"}"#)))
        d.apply(.exchangeRecorded(Self.answer(2, body: Self.page(badDate: "2026-01-04T10:00:00Z"))))
        #expect(d.state.checks.records.map(\.request) == ["GET /api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", "GET /api/v1/balance?user_id=qa-alice"])
        d.state.checks.list.selectedIndex = 1  // the balance's finding
        d.apply(.exchangeRecorded(Self.answer(3, body: Self.page(badDate: "2026-01-04T10:00:00Z"))))  // the history's again
        #expect(d.state.checks.records.count == 2 && d.state.checks.list.selected?.request == "GET /api/v1/balance?user_id=qa-alice")
        d.apply(.exchangeRecorded(Self.answer(4, path: "/api/v1/balance?user_id=qa-alice", body: #"{"balance": "13"}"#)))
        #expect(d.state.checks.records.first?.request == "GET /api/v1/balance?user_id=qa-alice" && d.state.checks.records.first?.count == 2)
        #expect(d.state.checks.list.selected?.request == "GET /api/v1/balance?user_id=qa-alice" && d.state.checks.failures == 2)
    }

    /// A write's verifications are never grouped: each write is checked on its own.
    @Test func verificationsAreNeverGrouped() {
        var checks = ChecksState()
        let failed = CheckRecord(check: .write(.spendBalance), outcome: .failed, expected: "1,243", actual: "1,242", request: "POST /api/v1/spend_cheer",
                                 requestID: "rq-1", at: t0)
        checks.add([failed])
        checks.add([failed])
        #expect(checks.records.count == 2 && checks.failures == 2)
    }

    /// `print`'s warnings group by the same key: one group per finding, with its count and first and last request.
    @Test func groupsOfARunKeepFirstAndLast() {
        let exchanges = (1...5).map { Self.answer($0, body: Self.page(badDate: "2026-01-04T10:00:00Z")) }
            + [Self.answer(6, path: "/api/v1/balance?user_id=qa-alice", body: #"{"balance": "12"}"#)]
        let groups = FindingGroup.of(exchanges)
        #expect(groups.count == 2)
        #expect(groups.first?.count == 5 && groups.first?.firstRequestID == "rq-1" && groups.first?.lastRequestID == "rq-5")
        #expect(groups.last?.count == 1 && groups.last?.lastRequestID == "rq-6")
    }
}
