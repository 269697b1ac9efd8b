import Foundation
import JSONTokens
import ShopAPI
import ShopCache
import TerminalText

/// A bug report, as the update function drafts it: what it is about and what led there. The store
/// adds the time, the app's version and the screen as text when it writes the Markdown file.
public struct BugReport: Equatable, Sendable {
    public var title: String
    public var context: ShopContext
    public var steps: [String]
    /// The failing exchange (nil when the error had no request behind it).
    public var exchange: Exchange?
    public var curl: String?
    /// The findings and verifications about that exchange (or the check the report is on).
    public var checks: [CheckRecord]
    public var width: Int
    public var height: Int
    /// A report on a write: the reads its checks depend on, before and after it (else empty).
    public var reads: [ReportRead] = []
    /// The exchange section's heading: the failing exchange, or the write a report is on.
    public var exchangeHeading = "The failing exchange"
    /// What the exchange section says when there is no exchange.
    public var missingExchange = "No request is behind this report (the failure came before one was sent)."

    /// A report on a change the watch paired with the app's write: the verdict and whose fault it is.
    public var verdict: String?
    /// A report on a purchase (the Purchases tab): the App Store's side, as lines of Markdown already
    /// made safe, put before the backend's exchange.
    public var appStoreSide: [String] = []

    /// The body characters quoted from each side of the exchange.
    public static let bodyExcerpt = 4_000

    /// The report as Markdown. Everything from the server is sanitized (no escape sequence or
    /// control character reaches whoever `cat`s the file) and fenced so that it cannot close its fence.
    public func markdown(at time: Date, version: String, screen: String?) -> String {
        var out = "# \(Self.text(title))\n\n"
        out += "- **Environment:** \(context.environment.uppercased())\n"
        out += "- **Base URL:** \(Self.code(context.baseURL))\n"
        out += "- **User:** \(Self.code(context.user))\n"
        out += "- **App:** reiterate-shop \(version)\n"
        out += "- **Time (UTC):** \(Self.utc(time))\n"
        out += "- **Terminal:** \(width)×\(height)\n\n"
        if let verdict { out += "## Verdict\n\n\(Self.text(verdict))\n\n" }
        if !appStoreSide.isEmpty { out += "## The App Store's record\n\n" + appStoreSide.map { $0 + "\n" }.joined() + "\n" }
        out += "## Steps\n\n"
        if steps.isEmpty { out += "(none recorded)\n" }
        for (i, step) in steps.enumerated() { out += "\(i + 1). \(Self.text(step))\n" }
        out += "\n"
        if let e = exchange {
            out += exchangeSection(e)
        } else {
            out += "## \(exchangeHeading)\n\n\(missingExchange)\n\n"
        }
        out += "## Checks\n\n"
        if checks.isEmpty { out += "No finding and no verification involve this request.\n" }
        for c in checks {
            let verdict = c.outcome == .passed ? "✔ passed" : "✗ failed"
            let kind = c.isFinding ? "finding" : "verification"
            // The one finding's fields: its subject, request ids, expected and actual, blame, what it may follow from.
            let f = c.shown(among: checks)
            out += "- \(verdict) \(Self.code(c.name)) (\(kind), \(Self.utc(c.at))) on \(Self.code(f.subject))"
            if f.requestIDs.count == 1 { out += ", request id \(Self.code(f.requestIDs[0]))" }
            if f.requestIDs.count > 1 { out += ", request ids " + f.requestIDs.map(Self.code).joined(separator: ", ") }
            out += ": expected \(Self.text(f.expected)), got \(Self.text(f.actual))"
            if let blame = f.blame, c.outcome == .failed { out += "; \(blame.words)" }
            if let cause = f.causedBy { out += "; \(Self.text(cause))" }
            out += "\n"
        }
        if !reads.isEmpty {
            out += "\n## The reads the checks depend on\n\n"
            for read in reads { out += read.markdown + "\n" }
        }
        out += "\n## The screen\n\n"
        out += screen.map { Self.fence($0, info: "text") } ?? "(not available)\n"
        return out
    }

    private func exchangeSection(_ e: Exchange) -> String {
        var out = "## \(exchangeHeading)\n\n"
        out += "- **Request:** \(Self.code("\(e.method) \(e.path)"))\n"
        if e.isPending {
            out += "- **Answer:** none yet (still waiting when the report was written)\n"
        } else if let status = e.status {
            out += "- **Status:** \(status) \(ErrorText.reasonPhrase(status))\n"
            if let said = Self.serverWords(e) { out += "- **The server said:** \(said)\n" }
        } else if let failure = e.failure {
            out += "- **Answer:** none: \(ErrorText.sentence(failure))\n"
        }
        if let fault = e.fault {
            out += "- **Fault put in by the proxy:** \(Self.code(fault.name)): \(fault.effect)\n"
        }
        if e.source == .app { out += "- **Sent by:** the app under test, seen through the proxy\n" }
        out += "- **Request id:** \(e.requestID.map(Self.code) ?? "none (no X-Request-Id)")\n"
        let ms = Double(e.duration.components.seconds) * 1000 + Double(e.duration.components.attoseconds) / 1e15
        out += "- **Sent:** \(Self.utc(e.startedAt)), took \(Int(ms.rounded())) ms, attempt \(e.attempt)\n\n"
        if let curl { out += "Reproduce it (the token comes from the environment, never from this file):\n\n" + Self.fence(curl, info: "sh") + "\n" }
        var request = "\(e.method) \(e.path)\n"
        for field in e.requestHeaders { request += "\(field.name.rawName): \(field.value)\n" }
        out += "### Request\n\n" + Self.fence(request + Self.body(e.requestBodyPreview, bytes: e.requestBytes), info: "http") + "\n"
        if let status = e.status {
            var response = "HTTP \(status) \(ErrorText.reasonPhrase(status))\n"
            for field in e.responseHeaders { response += "\(field.name.rawName): \(field.value)\n" }
            out += "### Response\n\n" + Self.fence(response + Self.body(e.responseBodyPreview, bytes: e.responseBytes), info: "http") + "\n"
        }
        return out
    }

    /// The words an error answer sent (`ServerWords`: its `message`, `error`, `detail`, `code`, or the
    /// start of a text body), as Markdown text; nil for a success or an answer without words.
    static func serverWords(_ e: Exchange) -> String? {
        guard let status = e.status, status >= 400, let preview = e.responseBodyPreview else { return nil }
        let words = ServerWords.read(Array(preview.utf8), contentType: e.responseHeaders[.contentType])
        guard let text = words.text ?? words.code else { return nil }
        return "“\(Self.text(text))”" + (words.text != nil ? words.code.map { " [\(Self.text($0))]" } ?? "" : "")
    }

    /// A blank line and the body's first `bodyExcerpt` characters, saying how much was left out.
    private static func body(_ preview: String?, bytes: Int) -> String {
        guard let preview, !preview.isEmpty else { return "" }
        var text = "\n" + String(preview.prefix(bodyExcerpt))
        if preview.count > bodyExcerpt || bytes > preview.utf8.count {
            text += "\n… (an excerpt: the body is \(Wording.grouped(bytes)) bytes)"
        }
        return text + "\n"
    }

    /// Text (server words among it) as Markdown that renders as typed: no control character, and
    /// the characters Markdown or HTML would act on inside a line escaped (`<!--` cannot hide the
    /// rest, `![x](…)` loads nothing; `_` inside words is left, as CommonMark leaves it).
    public static func text(_ raw: String) -> String {
        var out = ""
        for c in Sanitizer.line(raw) {
            if "\\`*[]<>".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// A fenced block whose fence is longer than any run of backticks inside it.
    static func fence(_ text: String, info: String) -> String {
        let clean = Sanitizer.sanitize(text, keepNewlines: true)
        let fence = String(repeating: "`", count: max(3, longestBacktickRun(clean) + 1))
        let body = clean.last == "\n" ? clean : clean + "\n"
        return "\(fence)\(info)\n\(body)\(fence)\n"
    }

    /// Inline code that its content cannot end early.
    static func code(_ text: String) -> String {
        let clean = Sanitizer.line(text)
        let ticks = String(repeating: "`", count: longestBacktickRun(clean) + 1)
        let pad = clean.first == "`" || clean.last == "`" ? " " : ""
        return "\(ticks)\(pad)\(clean)\(pad)\(ticks)"
    }

    private static func longestBacktickRun(_ text: String) -> Int {
        var longest = 0, run = 0
        for c in text.utf8 {
            run = c == UInt8(ascii: "`") ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    static func utc(_ date: Date) -> String { DateText.utcSeconds(date) }

    /// `report-2026-11-23T140509Z.md`: sorts by time; the store adds `-2`, `-3` to a name taken.
    public static func fileStem(at date: Date) -> String {
        let t = utc(date)  // 2026-11-23 14:05:09Z
        return "report-" + t.replacingOccurrences(of: " ", with: "T").replacingOccurrences(of: ":", with: "")
    }
}
