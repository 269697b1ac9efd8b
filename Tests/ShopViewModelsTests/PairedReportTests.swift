import Foundation
import HTTPTypes
import ShopAPI
import Testing
@testable import ShopViewModels

/// `R` on a Live event the watch paired with the app's write (issue 30, item 4): the app's request and
/// the server's answer with the fault put in, the watch's reads before and after, the verdict and blame.
@Suite struct PairedReportTests {
    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// An exchange as the log keeps it.
    static func recorded(_ id: Int, method: String, path: String, requestID: String, at: Date, source: ExchangeSource, status: Int = 200,
                         request: String? = nil, response: String, fault: FaultNote? = nil) -> Exchange {
        var e = Exchange(id: id, method: method, path: path, startedAt: at, duration: .milliseconds(5), status: status, failure: nil, requestID: requestID,
                         attempt: 1, requestBytes: request?.utf8.count ?? 0, responseBytes: response.utf8.count,
                         requestHeaders: [.authorization: "<redacted>"], responseHeaders: [.contentType: "application/json"],
                         requestBodyPreview: request, responseBodyPreview: response)
        e.source = source
        e.fault = fault
        // Its operation, as the proxy (the app's) or the endpoint type (the tool's) decided it.
        e.operation = Contract.builtIn().match(method: method, path: String(path.prefix { $0 != "?" })).operation
        return e
    }

    @Test func rOnAPairedFindingHoldsTheAppsRequestTheFaultTheReadsAndTheVerdict() {
        var w = PairingWalk()
        // The first reads (round 1, at t0): the balance read the report names as "before".
        w.d.apply(.exchangeRecorded(Self.recorded(1, method: "GET", path: "/api/v1/balance?user_id=qa-alice", requestID: "rq-b1", at: t0, source: .tool,
                                                  response: #"{"balance":1250}"#)))
        // The app buys bundle 200; its answer is lost on the way (lose_answer); the server credits 400.
        let buy = appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1), balance: 1_650, fault: .loseAnswer)
        w.d.apply(.exchangeRecorded(Self.recorded(2, method: "POST", path: "/api/v2/purchase_cheer?user_id=qa-alice", requestID: "rq-a1", at: Self.at(1),
                                                  source: .app, request: #"{"identifier":"com.reiterate.cheer.200","transaction_id":42}"#,
                                                  response: #"{"balance":1650}"#, fault: .loseAnswer)))
        _ = w.app(buy)
        w.balance += 400
        _ = w.round(at: Self.at(2))
        w.d.apply(.exchangeRecorded(Self.recorded(3, method: "GET", path: "/api/v1/balance?user_id=qa-alice", requestID: "rq-b2", at: Self.at(2), source: .tool,
                                                  response: #"{"balance":1650}"#)))
        // The finding, selected on the Live tab.
        w.d.apply(.action(.live))
        guard let row = w.d.state.watch.timeline.rows.firstIndex(where: { if case .finding(.creditMismatch, _, _) = $0.change { return true } else { return false } }) else {
            Issue.record("no credit-mismatch: \(w.d.state.watch.timeline.rows.map { $0.text() })")
            return
        }
        w.d.state.watch.timeline.select(row)
        guard case let .writeReport(report)? = w.d.apply(.action(.bugReport)).first else {
            Issue.record("no report")
            return
        }
        #expect(report.exchange?.requestID == "rq-a1" && report.exchange?.source == .app && report.exchange?.fault == .loseAnswer)
        #expect(report.verdict?.hasPrefix("[credit-mismatch] — the server's fault: [credit-mismatch] expected +200 for the app's purchase of com.reiterate.cheer.200 (rq-a1)") == true,
                "\(report.verdict ?? "")")
        #expect(report.reads.map(\.when) == [.before, .after])
        #expect(report.reads.map { $0.exchange?.requestID } == ["rq-b1", "rq-b2"])
        #expect(report.reads.map(\.fact) == ["balance 1,250", "balance 1,650"])
        #expect(report.checks.map(\.name) == ["credit-mismatch"] && report.checks.first?.blame == .server)
        let text = report.markdown(at: Self.at(3), version: "test", screen: nil)
        for words in ["## Verdict", "the server's fault", "## The app's request and the server's answer", "**Fault put in by the proxy:** `lose_answer`",
                      "the app's connection closed without it", "**Sent by:** the app under test", "before the write: `GET /api/v1/balance?user_id=qa-alice`",
                      "after the write: `GET /api/v1/balance?user_id=qa-alice`", "balance 1,650", #"{"identifier":"com.reiterate.cheer.200","transaction_id":42}"#] {
            #expect(text.contains(words), "\(words)")
        }
        // Reproduced with curl, the token from the environment; the request as logged, redacted.
        #expect(text.contains(#"-H "Authorization: Bearer $REITERATE_TOKEN""#) && text.contains("Authorization: <redacted>"))
    }

    @Test func rOnAnUnpairedLiveEventFallsBackToTheLastError() {
        var w = PairingWalk()
        w.d.apply(.action(.live))
        // The only event is the watch's start: not paired, no error either.
        let effects = w.d.apply(.action(.bugReport))
        #expect(effects.isEmpty)
        #expect(w.d.state.notice?.text.hasPrefix("Nothing to report") == true)
    }
}
