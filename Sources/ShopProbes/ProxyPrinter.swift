import Foundation
import ShopAPI
import ShopProxy
import ShopViewModels
import Synchronization
import TerminalText

// `proxy`'s printing, out of the executable (issue 44, item 5).

/// `proxy`'s output: a line per app exchange on stdout (`14:02:11 app POST /api/v1/spend_cheer 200 2.1 ms rq-…`),
/// each finding as a `warning:` line on stderr; with `--json` one object a line on stdout for each.
public final class ProxyPrinter: Sendable {
    let lines: OutputLines
    let json: Bool
    let count: Int?
    private let exchanges = Mutex(0)

    public init(json: Bool, count: Int?, lines: OutputLines) {
        self.lines = lines
        self.json = json
        self.count = count
    }

    /// Writes the event's lines; true once `count` app exchanges have been written.
    public func write(_ event: ProxyEvent) -> Bool {
        switch event {
        case .exchange(let e):
            exchange(e)
            let n = exchanges.withLock { $0 += 1; return $0 }
            return count.map { n >= $0 } ?? false
        case .tunnel(let t):
            if json {
                var line = ProxyLine(time: t.startedAt, kind: "tunnel", text: Self.tunnelText(t))
                (line.host, line.port, line.bytesUp, line.bytesDown, line.ms) = (t.target.host, t.target.port, t.bytesUp, t.bytesDown, Self.ms(t.duration))
                line.error = t.failure
                out(line)
            } else {
                lines.out("\(Self.clock(t.startedAt)) \(Self.tunnelText(t))\n")
            }
        case .sending:
            break  // its line comes when it ends
        case .injected(let e):
            let method = e.request.key.method.rawValue, path = Redactor.path(e.request.key.target)
            let fault = e.fault?.name ?? "a fault"
            let answer = e.response.map { "answered \($0.status) by the proxy" } ?? "no answer"
            if json {
                var line = ProxyLine(time: e.startedAt, kind: "fault", text: "\(method) \(path): fault \(fault), never reached the server, \(answer)")
                (line.source, line.method, line.path, line.status, line.fault) = (e.source.rawValue, method, path, e.response?.status, fault)
                out(line)
            } else {
                lines.out("\(Self.clock(e.startedAt)) app \(method) \(Sanitizer.line(path)) fault \(fault): never reached the server, \(answer)\n")
            }
            let n = exchanges.withLock { $0 += 1; return $0 }
            return count.map { n >= $0 } ?? false
        case .refused(let r):
            if json {
                var line = ProxyLine(time: r.at, kind: "error", text: r.reason)
                line.status = r.status
                line.error = r.reason
                out(line)
            } else {
                lines.out("\(Self.clock(r.at)) refused \(r.request.map(Sanitizer.line) ?? "a request") → \(r.status): \(Sanitizer.line(r.reason))\n")
            }
        }
        return false
    }

    private func exchange(_ e: HTTPExchange) {
        let method = e.request.key.method.rawValue, path = Redactor.path(e.request.key.target)
        let status = e.response?.status
        let failure = e.failure.map(Self.failureWords)
        if json {
            var line = ProxyLine(time: e.startedAt, kind: "exchange", text: "")
            (line.source, line.method, line.path, line.status, line.requestId, line.ms) = (e.source.rawValue, method, path, status, e.requestID, Self.ms(e.duration))
            line.error = failure
            line.fault = e.fault?.name
            out(line)
            for finding in e.findings {
                var f = ProxyLine(time: e.startedAt, kind: "finding", text: finding.line)
                (f.source, f.method, f.path, f.status, f.requestId) = (e.source.rawValue, method, path, status, e.requestID)
                (f.check, f.blame, f.expected, f.actual) = (finding.check.rawValue, finding.blame.rawValue, finding.expected, finding.actual)
                f.shopFinding = ShopFinding(finding, subject: "\(method) \(path)", requestID: e.requestID)
                out(f)
            }
        } else {
            let answer = status.map(String.init) ?? "no answer (\(failure ?? "cancelled"))"
            let fault = e.fault.map { " (fault \($0.name)\($0.name == InjectedFault.loseAnswer.rawValue ? ": the app never got it" : ""))" } ?? ""
            lines.out("\(Self.clock(e.startedAt)) \(e.source.rawValue) \(method) \(Sanitizer.line(path)) \(answer) \(Self.msText(e.duration)) \(e.requestID.map(Sanitizer.line) ?? "-")\(fault)\n")
        }
        // Blamed on the app for its request, on the server for its answer: the one finding's words.
        for finding in e.findings { lines.err(ShopFinding(finding, subject: "\(method) \(path)", requestID: e.requestID).warningLine) }
    }

    private func out(_ line: ProxyLine) {
        if let text = try? Output.jsonLine(line) { lines.out(text) }
    }

    static func failureWords(_ failure: ExchangeFailure) -> String {
        switch failure {
        case .cancelled: "cancelled: the app closed its connection"
        case .transport(let error): ErrorText.sentence(error)
        }
    }

    static func tunnelText(_ t: TunnelRecord) -> String {
        if let failure = t.failure { return "tunnel \(t.target): \(failure)" }
        return "tunnel \(t.target) \(Wording.grouped(t.bytesUp)) B up, \(Wording.grouped(t.bytesDown)) B down, \(msText(t.duration)) (not decrypted)"
    }

    static func ms(_ d: Duration) -> Double {
        ((Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15) * 10).rounded() / 10
    }

    static func msText(_ d: Duration) -> String { String(format: "%.1f ms", ms(d)) }

    static func clock(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&t, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}

/// One line of `proxy --json`.
struct ProxyLine: Encodable {
    var time: String
    var kind: String
    var source: String?
    var method: String?
    var path: String?
    var status: Int?
    var requestId: String?
    var ms: Double?
    var check: String?
    var blame: String?
    var expected: String?
    var actual: String?
    var host: String?
    var port: Int?
    var bytesUp: Int?
    var bytesDown: Int?
    var error: String?
    /// The fault the proxy put into it (`lose_answer`, …).
    var fault: String?
    var text: String
    /// A finding's one record (`ShopFinding`), as every JSON output that carries a finding has it.
    var shopFinding: ShopFinding?

    enum CodingKeys: String, CodingKey {
        case time, kind, source, method, path, status, ms, check, blame, expected, actual, host, port, error, text, fault
        case requestId = "request_id", bytesUp = "bytes_up", bytesDown = "bytes_down", shopFinding = "shop_finding"
    }

    init(time: Date, kind: String, text: String) {
        self.time = ISO8601.format(time)
        self.kind = kind
        self.text = Sanitizer.line(text)
    }
}
