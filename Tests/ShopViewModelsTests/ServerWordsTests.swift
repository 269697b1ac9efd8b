import Foundation
import HTTPTypes
@testable import ShopAPI
@testable import ShopViewModels
import Testing

/// Issue 27, item 6: an error body that does not follow the Error schema is flagged, and the words
/// the server did send are still shown (sanitized, bounded), on the error line and in the report.
@Suite struct ServerWordsTests {
    static func error(_ status: Int, _ body: String, contentType: String = "application/json") -> ShopAPIError {
        let response = TransportResponse(status: status, headers: HTTPFields(pairs: [("Content-Type", contentType), ("X-Request-Id", "rq-404")]),
                                         body: Array(body.utf8))
        return ShopClient.httpError(response, endpoint: .get("/api/v1/balance"))
    }

    @Test func anErrorKeyInsteadOfMessageIsStillSaid() {
        let e = Self.error(404, #"{"error": "no user 'qa-nobody'"}"#)
        #expect(ErrorText.line(e) == "GET /api/v1/balance: HTTP 404 Not Found: no user 'qa-nobody' (request id rq-404)")
        // The deviation is still flagged by the watchdog: `message` is required by the Error schema.
        let findings = ContractWatchdog.check(ObservedExchange(operation: .getBalance, pathAndQuery: "/api/v1/balance?user_id=qa-nobody", status: 404,
                                                               headers: HTTPFields(pairs: [("Content-Type", "application/json"), ("X-Request-Id", "rq-404")]),
                                                               body: Array(#"{"error": "no user 'qa-nobody'"}"#.utf8)))
        #expect(findings.map(\.line) == ["[schema] expected message (required), got missing"])
    }

    @Test func theContractsMessageComesFirstThenErrorThenDetailAndAnyCode() {
        #expect(ErrorText.sentence(Self.error(400, #"{"detail": "bad page", "error": "invalid", "message": "page must be ≥ 1", "code": "invalid_parameter"}"#))
            == "HTTP 400 Bad Request: page must be ≥ 1 [invalid_parameter]")
        #expect(ErrorText.sentence(Self.error(400, #"{"detail": "per_page is 500", "code": 4001}"#)) == "HTTP 400 Bad Request: per_page is 500 [4001]")
        #expect(ErrorText.sentence(Self.error(404, #"{"error": {"message": "no such pack", "code": "unknown_product"}}"#))
            == "HTTP 404 Not Found: no such pack [unknown_product]")
        #expect(ErrorText.sentence(Self.error(503, #""down for maintenance""#)) == "HTTP 503 Service Unavailable: down for maintenance")
        #expect(ErrorText.sentence(Self.error(500, #"{"message": "", "trace": [1, 2]}"#)) == "HTTP 500 Internal Server Error")
    }

    @Test func aTextBodySaysItsStartAndAnHTMLPageItsTitle() {
        #expect(ErrorText.sentence(Self.error(404, "no user 'qa-nobody'\n", contentType: "text/plain"))
            == "HTTP 404 Not Found with a non-JSON body (text/plain): no user 'qa-nobody'")
        #expect(ErrorText.sentence(Self.error(502, "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>",
                                              contentType: "text/html"))
            == "HTTP 502 Bad Gateway with a non-JSON body (text/html): 502 Bad Gateway")
        #expect(ErrorText.sentence(Self.error(502, "<html><body>no title</body></html>", contentType: "text/html"))
            == "HTTP 502 Bad Gateway with a non-JSON body (text/html)")
    }

    /// Server text is untrusted: escapes and controls never reach the terminal, and a long body is cut.
    @Test func theWordsAreSanitizedAndBounded() {
        let hostile = Self.error(404, #"{"error": "\u001b]52;c;ZXZpbA==\u0007gone\u001b[2J"}"#)
        let line = ErrorText.line(hostile)
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(line)")
        #expect(line.contains("gone"))
        let long = Self.error(500, "{\"error\": \"" + String(repeating: "overloaded ", count: 100) + "\"}")
        guard case let .http(_, message?, _, _, _, _) = long else { Issue.record("\(long)"); return }
        #expect(message.count == ServerWords.limit && message.hasSuffix("…"))
        let text = Self.error(500, String(repeating: "line\n", count: 2000), contentType: "text/plain")
        guard case let .notJSON(_, _, _, _, start?) = text else { Issue.record("\(text)"); return }
        #expect(start.count == ServerWords.limit && !start.contains("\n"))
        // Binary says nothing.
        #expect(ServerWords.read([0x89, 0x50, 0x4E, 0x47, 0, 0, 1], contentType: "image/png").isEmpty)
    }

    /// The bug report on that answer says the words too: in its title and beside the status.
    @Test func theReportOnTheAnswerSaysWhatTheServerSaid() {
        var d = Driver.loaded()
        var e = EvidenceTests().exchange(method: "GET", path: "/api/v1/balance?user_id=qa-nobody", headers: [], body: nil)
        e.status = 404
        e.requestID = "rq-404"
        e.responseHeaders = HTTPFields(pairs: [("Content-Type", "application/json"), ("X-Request-Id", "rq-404")])
        e.responseBodyPreview = #"{"error": "no user 'qa-nobody' <b>", "code": "unknown_user"}"#
        d.apply(.exchangeRecorded(e))
        d.send(.selectRequest(index: 0))
        guard case let .writeReport(report)? = d.apply(.action(.bugReport)).first else { Issue.record("no report"); return }
        #expect(report.title == "GET /api/v1/balance?user_id=qa-nobody → HTTP 404 Not Found: no user 'qa-nobody' <b>")
        let md = report.markdown(at: t0, version: "1", screen: nil)
        #expect(md.contains(#"- **The server said:** “no user 'qa-nobody' \<b\>” [unknown_user]"#), "\(md)")
        #expect(md.hasPrefix(#"# GET /api/v1/balance?user_id=qa-nobody → HTTP 404 Not Found: no user 'qa-nobody' \<b\>"#), "\(md)")
    }
}
