import Foundation
import HTTPTypes

/// The session's exchanges as a HAR 1.2 file (http://www.softwareishard.com/blog/har-12-spec/), for
/// a proxy or browser devtools to open. Headers and bodies are the inspector's: redacted the same
/// way (no token, no cookie). Each entry keeps its `X-Request-Id` and, as `_findings`, what the
/// contract watchdog found.
public enum HAR {
    struct Document: Codable, Sendable {
        var log: Log
    }

    struct Log: Codable, Sendable {
        var version = "1.2"
        var creator: Creator
        var entries: [Entry]
        /// The base URL the entries were sent to (the readers take its path off each entry's): a custom
        /// field, which HAR readers that do not know it pass over.
        var _baseURL: String?
    }

    struct Creator: Codable, Sendable {
        var name: String
        var version: String
    }

    struct NameValue: Codable, Sendable {
        var name: String
        var value: String
    }

    struct Entry: Codable, Sendable {
        var startedDateTime: String
        var time: Double
        var request: Request
        var response: Response
        var cache = Cache()
        var timings: Timings
        var _requestId: String?
        var _findings: [Finding]?
        var _error: String?
        /// Whose request it was: `tool` (this tool's own) or `app` (seen through the proxy).
        var _source: String
        /// The fault the app's proxy put into it on purpose (`lose_answer`, …), if any.
        var _fault: String?
        /// HAR 1.2's own comment: the entry's findings in the one finding's words (`ShopFinding.line`), a line
        /// each, for a viewer that shows comments (`_findings` keeps them as data).
        var comment: String?
    }

    struct Request: Codable, Sendable {
        var method: String
        var url: String
        var httpVersion = "HTTP/1.1"
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        var headersSize = -1
        var bodySize: Int
    }

    struct PostData: Codable, Sendable {
        var mimeType: String
        var text: String
    }

    struct Response: Codable, Sendable {
        var status: Int
        var statusText: String
        var httpVersion = "HTTP/1.1"
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var content: Content
        var redirectURL = ""
        var headersSize = -1
        var bodySize: Int
    }

    struct Content: Codable, Sendable {
        var size: Int
        var mimeType: String
        var text: String?
    }

    struct Cache: Codable, Sendable {}

    struct Timings: Codable, Sendable {
        var send: Double = 0
        var wait: Double
        var receive: Double = 0
    }

    /// The HAR document for `exchanges` (oldest first in the file), requests sent to `baseURL`.
    public static func encode(_ exchanges: [Exchange], baseURL: String, creator: String, version: String) throws -> Data {
        try encode(SessionExchanges(kept: exchanges), baseURL: baseURL, creator: creator, version: version)
    }

    /// The HAR document for a session: the exchanges kept in memory and those spilled, oldest first.
    public static func encode(_ session: SessionExchanges, baseURL: String, creator: String, version: String) throws -> Data {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        var numbered = session.spilled.map { (id: $0.id, entry: $0.entry) } + session.kept.map { (id: $0.id, entry: entry($0, base: "")) }
        numbered.sort { $0.id < $1.id }
        let entries = numbered.map { item -> Entry in
            var entry = item.entry
            // A path is the base URL's; a request to another host already holds its own origin.
            if entry.request.url.hasPrefix("/") { entry.request.url = base + entry.request.url }
            return entry
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(Document(log: Log(creator: Creator(name: creator, version: version), entries: entries, _baseURL: base)))
    }

    /// One exchange as a HAR entry, its URL `base` + its path (its own origin + its path for a request to
    /// another host than the base URL's).
    static func entry(_ e: Exchange, base: String) -> Entry {
        let ms = Double(e.duration.components.seconds) * 1000 + Double(e.duration.components.attoseconds) / 1e15
        let (_, query) = ContractWatchdog.split(e.path)
        let requestType = e.requestHeaders[.contentType] ?? "application/json"
        let responseType = e.responseHeaders[.contentType] ?? ""
        let status = e.status ?? 0
        return Entry(
            startedDateTime: ISO8601.format(e.startedAt), time: ms,
            request: Request(method: e.method, url: (e.origin ?? base) + e.path, headers: pairs(e.requestHeaders),
                             queryString: query.sorted { $0.key < $1.key }.map { NameValue(name: $0.key, value: $0.value) },
                             postData: e.requestBodyPreview.map { PostData(mimeType: requestType, text: $0) }, bodySize: e.requestBytes),
            response: Response(status: status, statusText: e.status.flatMap(HTTPStatusWords.known) ?? "",
                               headers: pairs(e.responseHeaders),
                               content: Content(size: e.responseBytes, mimeType: responseType, text: e.responseBodyPreview), bodySize: e.responseBytes),
            timings: Timings(wait: ms),
            _requestId: e.requestID, _findings: e.findings.isEmpty ? nil : e.findings,
            _error: e.isPending ? "no answer yet when the session ended" : e.failure.map { _ in "no complete answer: see the request in the app" },
            _source: e.source.rawValue, _fault: e.fault?.name,
            comment: e.findings.isEmpty ? nil : e.findings.map { f in
                var one = ShopFinding(f, subject: "\(e.method) \(e.path)", requestID: e.requestID)
                if e.source != .app { one.blame = nil }  // the tool's own answers: the server's, unsaid (as on the Checks tab)
                return one.line
            }.joined(separator: "\n"))
    }

    static func pairs(_ fields: HTTPFields) -> [NameValue] { fields.map { NameValue(name: $0.name.rawName, value: $0.value) } }
}
