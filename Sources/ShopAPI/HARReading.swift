import Foundation
import JSONTokens

// The one HAR reader: every command that reads a HAR 1.2 file (`ledger`, `compare`, `replay`) reads it
// through `HAR.read`, and each entry is keyed and named by `BasePath` and `RequestKey.operation`.

extension HAR {
    /// A HAR file that is not one, in plain words.
    public struct Unreadable: Error, Sendable, Equatable {
        public var reason: String
        public init(reason: String) { self.reason = reason }
    }

    /// One entry of a HAR file as the tool reads it: what was asked (relative to the base URL) and what
    /// came back. Redaction was the writer's; nothing here is trusted text.
    public struct Recorded: Sendable, Equatable {
        /// `GET`, `POST` …, upper case.
        public var method: String
        /// `https://host:8443`.
        public var origin: String
        /// Path and query, relative to the base URL for a request to the base URL's origin.
        public var target: String
        /// The request's key (nil for a method the API does not use).
        public var key: RequestKey?
        /// The operation it is; nil for any other request (another host, another path).
        public var operation: OperationID?
        /// The answer's status; nil when no answer came (a HAR writes 0).
        public var status: Int?
        /// `_requestId`, else the answer's `X-Request-Id`.
        public var requestID: String?
        public var startedAt: Date?
        /// `startedDateTime` + `time`.
        public var endedAt: Date?
        public var requestBody: String?
        /// The answer's body as text (a base64 body decoded); nil when the file has none.
        public var responseBody: String?
        /// `_source` (`tool` or `app`), when the writer said.
        public var source: String?
    }

    /// A HAR file's entries, in its order, and the base URL they were sent to.
    public struct Recording: Sendable, Equatable {
        /// The base URL's origin (`https://host:8443`): the file's `_baseURL`, else the first entry's origin
        /// whose path names an operation (each origin's own prefix is inferred the same way).
        public var origin: String?
        public var basePath: BasePath
        public var entries: [Recorded]

        /// `https://host:8443/staging`.
        public var baseURL: String? { origin.map { $0 + basePath.prefix } }
    }

    /// Reads a HAR file's bytes.
    public static func read(_ bytes: [UInt8]) throws(Unreadable) -> Recording {
        guard case let .object(root)? = JSONValue.parse(bytes) else { throw Unreadable(reason: "it is not JSON") }
        return try read(root)
    }

    /// Reads a HAR document already parsed (a file told apart from a snapshot by its `log`).
    public static func read(_ root: JSONObject) throws(Unreadable) -> Recording {
        guard case let .object(log)? = root["log"], case let .array(items)? = log["entries"] else {
            throw Unreadable(reason: "it is not a HAR file (no log.entries)")
        }
        // The base URL: as the writer said it, else inferred, origin by origin, from the first request whose
        // path ends with an operation's (a browser's or a proxy's file: what comes before that path is that
        // host's base URL's own). An origin is compared in lower case, its default port left out.
        var bases: [String: BasePath] = [:]
        var origin: String?
        var base = BasePath.none
        if case let .string(said)? = log["_baseURL"], let (o, path) = BasePath.split(url: said) {
            origin = o
            base = BasePath(String(path.prefix { $0 != "?" }))
            bases[Self.origin(o)] = base
        } else {
            for case let .object(entry) in items {
                guard case let .object(request)? = entry["request"], case let .string(url)? = request["url"],
                      let (o, target) = BasePath.split(url: url), bases[Self.origin(o)] == nil,
                      let inferred = BasePath(inferredFrom: String(target.prefix { $0 != "?" }))
                else { continue }
                bases[Self.origin(o)] = inferred
                if origin == nil { (origin, base) = (o, inferred) }
            }
        }
        var entries: [Recorded] = []
        entries.reserveCapacity(items.count)
        for case let .object(entry) in items {
            guard case let .object(request)? = entry["request"], case let .string(method)? = request["method"],
                  case let .string(url)? = request["url"], let (o, full) = BasePath.split(url: url)
            else { continue }
            let target = bases[Self.origin(o)]?.relative(full) ?? full
            let key = RequestKey(method: method, target: target)
            var recorded = Recorded(method: method.uppercased(), origin: o, target: target, key: key, operation: key?.operation)
            if case let .object(post)? = request["postData"], case let .string(text)? = post["text"] { recorded.requestBody = text }
            if case let .string(id)? = entry["_requestId"] { recorded.requestID = id }
            if case let .object(response)? = entry["response"] {
                if case let .int(s)? = response["status"], s > 0 { recorded.status = s }
                if recorded.requestID == nil, case let .array(headers)? = response["headers"] {
                    for case let .object(h) in headers {
                        if case let .string(name)? = h["name"], name.lowercased() == "x-request-id", case let .string(value)? = h["value"] { recorded.requestID = value }
                    }
                }
                if case let .object(content)? = response["content"], case let .string(text)? = content["text"] {
                    if case let .string(encoding)? = content["encoding"], encoding.lowercased() == "base64" {
                        // A body that does not decode is kept as it came: it reads as no JSON (a reader says so).
                        recorded.responseBody = Data(base64Encoded: text).map { String(decoding: $0, as: UTF8.self) } ?? text
                    } else {
                        recorded.responseBody = text
                    }
                }
            }
            if case let .string(started)? = entry["startedDateTime"] { recorded.startedAt = ISO8601.parse(started) }
            recorded.endedAt = recorded.startedAt
            switch entry["time"] {
            case let .int(ms)?: recorded.endedAt = recorded.startedAt.map { $0 + Double(max(0, ms)) / 1000 }
            case let .double(ms)? where ms.isFinite: recorded.endedAt = recorded.startedAt.map { $0 + max(0, ms) / 1000 }
            default: break
            }
            if case let .string(who)? = entry["_source"] { recorded.source = who }
            entries.append(recorded)
        }
        return Recording(origin: origin, basePath: base, entries: entries)
    }

    /// `https://Host:443` → `https://host`: an origin as compared (scheme and host in lower case, a default port left out).
    static func origin(_ text: String) -> String {
        let lower = text.lowercased()
        if lower.hasPrefix("https://"), lower.hasSuffix(":443") { return String(lower.dropLast(4)) }
        if lower.hasPrefix("http://"), lower.hasSuffix(":80") { return String(lower.dropLast(3)) }
        return lower
    }
}
