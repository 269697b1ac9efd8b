import Foundation
import JSONTokens
import ShopAPI

/// A fault the proxy puts into the app's traffic on purpose, scoped by path and method, to a count or a
/// rate. Written as the stand-in's faults are (`--fault KIND,key=value,…`, or the JSON object
/// `POST /_proxy/faults` takes), with the keys that make sense for a proxy.
public struct ProxyFault: Sendable, Equatable {
    public var kind: InjectedFault
    /// Glob over the request's path without its query (`*` any run of characters, `?` one character).
    /// Not used by `offline`, which refuses every request.
    public var path = "/api/*"
    /// The method it applies to (upper case); nil for any. Not used by `offline`.
    public var method: String?
    /// The chance that a matching request is hit (0 < rate ≤ 1); nil for every one.
    public var rate: Double?
    /// Only the next `count` matching requests are hit, then the fault is gone; nil for no limit.
    public var count: Int?
    /// `latency`: the wait before forwarding, and up to `jitter` more (milliseconds).
    public var ms = 1000
    public var jitter = 0
    /// `status` (default 500) and `html` (500, 502, 503 or 504; default 502): the status answered.
    public var status: Int
    /// `rate_limit` (default 5) and optionally `status` and `html`: the `Retry-After` seconds sent.
    public var retryAfter: Int?
    /// `status`: the error body's message (default "injected fault: HTTP N").
    public var message: String?
    /// `truncate`: the body bytes the app gets (default half, always at least one byte fewer than all).
    public var keep: Int?
    /// `hang`: how long the proxy holds the request before it closes the connection.
    public var seconds = 120

    /// A fault of `kind` with its defaults.
    public init(kind: InjectedFault, path: String = "/api/*", method: String? = nil, count: Int? = nil, rate: Double? = nil) {
        self.kind = kind
        self.path = path
        self.method = method?.uppercased()
        self.count = count
        self.rate = rate
        status = switch kind {
        case .html: 502
        case .rateLimit: 429
        default: 500
        }
        if kind == .rateLimit { retryAfter = 5 }
    }

    /// The keys a fault is written with.
    public static let keys = ["kind", "path", "method", "rate", "count", "ms", "jitter", "status", "retry_after", "message", "keep", "seconds"]

    /// Reads `KIND,key=value,…` (the kind first, bare or as `kind=`): `status,status=503,path=/api/v1/balance,count=2`.
    /// Throws `ProxyFaultError`.
    public static func parse(_ text: String) throws -> ProxyFault {
        var fields: [(String, Given)] = []
        for (i, part) in text.split(separator: ",").enumerated() {
            if let eq = part.firstIndex(of: "=") {
                fields.append((part[..<eq].lowercased(), .text(String(part[part.index(after: eq)...]))))
            } else if i == 0 {
                fields.append(("kind", .text(String(part))))
            } else {
                throw ProxyFaultError(description: "fault '\(text)': '\(part)' is not key=value")
            }
        }
        return try make(fields)
    }

    /// Reads the JSON object `POST /_proxy/faults` (and the stand-in's `/_stub/faults`) takes:
    /// `{"kind":"lose_answer","path":"/api/v2/purchase_cheer","method":"POST","count":1}`. Throws `ProxyFaultError`.
    public static func from(json: JSONValue) throws -> ProxyFault {
        guard case let .object(object) = json else { throw ProxyFaultError(description: "a fault is a JSON object with a \"kind\"") }
        return try make(object.members.map { ($0.key, Given.json($0.value)) })
    }

    /// A value as given: text from `--fault`, a JSON value from the control endpoint.
    enum Given {
        case text(String)
        case json(JSONValue)

        var string: String? {
            switch self {
            case .text(let s): s
            case .json(.string(let s)): s
            case .json: nil
            }
        }

        var int: Int? {
            switch self {
            case .text(let s): Int(s)
            case .json(.int(let n)): n
            case .json: nil
            }
        }

        var double: Double? {
            switch self {
            case .text(let s): Double(s)
            case .json(.int(let n)): Double(n)
            case .json(.double(let d)): d
            case .json: nil
            }
        }
    }

    private static var kindNames: String { InjectedFault.allCases.map(\.rawValue).joined(separator: ", ") }

    private static func make(_ fields: [(String, Given)]) throws -> ProxyFault {
        guard let named = fields.last(where: { $0.0 == "kind" })?.1 else {
            throw ProxyFaultError(description: "a fault needs a kind; kinds: \(kindNames)")
        }
        guard let name = named.string, let kind = InjectedFault(rawValue: name) else {
            throw ProxyFaultError(description: "unknown fault kind '\(named.string ?? "")'; kinds: \(kindNames)")
        }
        var fault = ProxyFault(kind: kind)
        for (key, value) in fields {
            try fault.set(key, value)
        }
        if kind == .html, ![500, 502, 503, 504].contains(fault.status) {
            throw ProxyFaultError(description: "an html fault answers 500, 502, 503 or 504")
        }
        if kind == .offline, fields.contains(where: { $0.0 == "path" || $0.0 == "method" }) {
            throw ProxyFaultError(description: "an offline fault takes no path or method: it refuses every request")
        }
        return fault
    }

    private mutating func set(_ key: String, _ value: Given) throws {
        func whole(_ range: ClosedRange<Int>) throws -> Int {
            guard let n = value.int, range.contains(n) else {
                throw ProxyFaultError(description: "fault key '\(key)' needs a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return n
        }
        func text() throws -> String {
            guard let s = value.string, !s.isEmpty else { throw ProxyFaultError(description: "fault key '\(key)' needs text") }
            return s
        }
        switch key {
        case "kind": break
        case "path":
            path = try text()
            guard path.hasPrefix("/") || path.hasPrefix("*") else { throw ProxyFaultError(description: "fault key 'path' needs a path starting with / (or *)") }
        case "method":
            let given = try text().uppercased()
            guard RequestMethod(rawValue: given) != nil else {
                throw ProxyFaultError(description: "fault key 'method' needs an HTTP method (\(RequestMethod.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            method = given
        case "rate":
            guard let r = value.double, r > 0, r <= 1 else { throw ProxyFaultError(description: "fault key 'rate' needs a number in (0, 1]") }
            rate = r
        case "count": count = try whole(1...1_000_000)
        case "ms": ms = try whole(0...600_000)
        case "jitter": jitter = try whole(0...600_000)
        case "status": status = try whole(400...599)
        case "retry_after": retryAfter = try whole(0...86_400)
        case "message": message = try text()
        case "keep": keep = try whole(0...10_000_000)
        case "seconds": seconds = try whole(1...3600)
        default:
            throw ProxyFaultError(description: "unknown fault key '\(key)'; keys: \(Self.keys.joined(separator: ", "))")
        }
    }

    /// The keys that describe this fault (those of its kind, defaults included), as the control endpoint lists them.
    public var json: JSONObject {
        var o = JSONObject()
        o.append("kind", .string(kind.rawValue))
        if kind != .offline {
            o.append("path", .string(path))
            if let method { o.append("method", .string(method)) }
        }
        if let rate { o.append("rate", .double(rate)) }
        if let count { o.append("count", .int(count)) }
        switch kind {
        case .latency:
            o.append("ms", .int(ms))
            o.append("jitter", .int(jitter))
        case .status, .html:
            o.append("status", .int(status))
            if let retryAfter { o.append("retry_after", .int(retryAfter)) }
            if kind == .status, let message { o.append("message", .string(message)) }
        case .rateLimit: o.append("retry_after", .int(retryAfter ?? 5))
        case .truncate: if let keep { o.append("keep", .int(keep)) }
        case .hang: o.append("seconds", .int(seconds))
        case .reset, .offline, .loseAnswer: break
        }
        return o
    }

    /// The fault in words, for the UI: "lose_answer on POST /api/v2/purchase_cheer, next 1".
    public var summary: String {
        let what = switch kind {
        case .latency: "latency \(ms) ms" + (jitter > 0 ? " (+ up to \(jitter) ms)" : "")
        case .status: "status \(status)"
        case .html: "html \(status) page"
        case .rateLimit: "rate_limit (Retry-After \(retryAfter ?? 5) s)"
        case .hang: "hang up to \(seconds) s"
        case .truncate: "truncate to " + (keep.map { "\($0) bytes" } ?? "half the body")
        case .reset, .offline, .loseAnswer: kind.rawValue
        }
        var words = kind == .offline ? "offline: every request refused" : "\(what) on \(method.map { $0 + " " } ?? "")\(path)"
        if let count { words += ", next \(count)" }
        if let rate { words += ", \(Self.percent(rate)) of requests" }
        return words
    }

    private static func percent(_ rate: Double) -> String {
        let p = rate * 100
        return p == p.rounded() ? "\(Int(p))%" : String(format: "%.1f%%", p)
    }

    /// Whether this fault applies to a request of `method` for `path` (the path without its query).
    func matches(method: String, path: String) -> Bool {
        kind == .offline || ((self.method.map { $0 == method } ?? true) && PathGlob.matches(self.path, path))
    }

    /// `latency`: how long this request waits (`ms`, and a random part of `jitter`).
    func delay() -> Duration {
        .milliseconds(ms + (jitter > 0 ? Int.random(in: 0...jitter) : 0))
    }
}

/// Why a fault could not be read, in one line naming the key or value.
public struct ProxyFaultError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
}

/// A glob over a path: `*` any run of characters (`/` included), `?` one character, anything else itself.
enum PathGlob {
    static func matches(_ pattern: String, _ path: String) -> Bool {
        let p = Array(pattern.utf8), s = Array(path.utf8)
        // After a `*`, where the pattern resumes and the text position it last tried.
        var resume: (pattern: Int, text: Int)?
        var i = 0, j = 0
        while j < s.count {
            if i < p.count, p[i] == UInt8(ascii: "*") {
                resume = (i + 1, j)
                i += 1
            } else if i < p.count, p[i] == s[j] || p[i] == UInt8(ascii: "?") {
                i += 1
                j += 1
            } else if let back = resume {
                resume = (back.pattern, back.text + 1)
                i = back.pattern
                j = back.text + 1
            } else {
                return false
            }
        }
        return p[i...].allSatisfy { $0 == UInt8(ascii: "*") }
    }
}
