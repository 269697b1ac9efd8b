import Foundation
import ShopAPI
@testable import ShopProxy
import Synchronization
import Testing
@testable import ShopProbes

/// `proxy`'s printing, out of the executable (issue 44, item 5): a line per app exchange, its findings as
/// warnings with their blame, the count it stops at; the app's text never reaches the terminal raw.
@Suite struct ProxyPrinterTests {
    static func exchange(_ path: String, status: Int, findings: [Finding] = []) -> HTTPExchange {
        var e = HTTPExchange(serial: 1, source: .app, request: ExchangeRequest(key: RequestKey(.post, path), match: .unknown, headers: [:], body: nil), attempt: 1)
        e.response = ExchangeResponse(status: status, headers: [:], body: [], tokens: [])
        e.requestID = "rq-\u{1B}[2J1"
        e.findings = findings
        return e
    }

    @Test func anExchangeIsOneLineItsFindingsWarningsAndTheCountEndsIt() {
        let out = Mutex<[String]>([]), err = Mutex<[String]>([])
        let lines = OutputLines(out: { text in out.withLock { $0.append(text) } }, err: { text in err.withLock { $0.append(text) } })
        let printer = ProxyPrinter(json: false, count: 2, lines: lines)
        let finding = Finding(check: .requestBody, expected: "amount: integer", actual: "string “3”", blame: .app)
        #expect(printer.write(.exchange(Self.exchange("/api/v1/spend_cheer", status: 400, findings: [finding]))) == false)
        #expect(printer.write(.tunnel(TunnelRecord(target: HostPort(host: "cdn.example", port: 443), startedAt: Date(), duration: .milliseconds(3),
                                                   bytesUp: 10, bytesDown: 20, failure: nil))) == false)
        #expect(printer.write(.exchange(Self.exchange("/api/v1/balance", status: 200))) == true)  // the second app exchange: the count
        let printed = out.withLock { $0 }
        #expect(printed.count == 3 && printed[0].contains(" app POST /api/v1/spend_cheer 400 ") && printed[1].contains("cdn.example"))
        #expect(printed.allSatisfy { !$0.contains("\u{1B}") }, "\(printed)")
        let warned = err.withLock { $0 }
        // The one finding's words: the request, the check, expected and actual, whose fault.
        #expect(warned.count == 1 && warned[0].hasPrefix("warning: POST /api/v1/spend_cheer: [request-body] expected amount: integer, got string “3” (the app's fault"), "\(warned)")
    }

    @Test func withJSONEachExchangeAndFindingIsAnObject() throws {
        let out = Mutex<[String]>([])
        let printer = ProxyPrinter(json: true, count: nil, lines: OutputLines(out: { text in out.withLock { $0.append(text) } }, err: { _ in }))
        let finding = Finding(check: .schema, expected: "balance: integer", actual: "string", blame: .server)
        _ = printer.write(.exchange(Self.exchange("/api/v1/balance", status: 200, findings: [finding])))
        let objects = try out.withLock { $0 }.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.map { $0["kind"] as? String } == ["exchange", "finding"])
        #expect(objects[1]["blame"] as? String == "server" && objects[1]["check"] as? String == "schema")
        // The one finding's record, as every JSON output that carries a finding has it.
        let one = try #require(objects[1]["shop_finding"] as? [String: Any])
        #expect(one["kind"] as? String == "schema" && one["subject"] as? String == "POST /api/v1/balance" && one["blame"] as? String == "server", "\(one)")
        #expect(one["expected"] as? String == "balance: integer" && one["actual"] as? String == "string" && one["request_ids"] is [String])
    }
}
