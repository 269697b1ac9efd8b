import Foundation

/// Where a request goes, without its query: `GET /api/v1/balance`. What an error names, and what a
/// notice is recovered by.
public struct EndpointKey: Hashable, Sendable, Codable, CustomStringConvertible {
    public var method: RequestMethod
    /// The path, from the base URL's prefix on: `/api/v1/balance`.
    public var path: String

    public init(_ method: RequestMethod, _ path: String) {
        self.method = method
        self.path = path
    }

    public static func get(_ path: String) -> EndpointKey { EndpointKey(.get, path) }
    public static func post(_ path: String) -> EndpointKey { EndpointKey(.post, path) }

    /// `GET /api/v1/balance`.
    public var description: String { "\(method.rawValue) \(path)" }
}

/// One request's identity: method, path and query (`GET /api/v1/cheer_history?user_id=qa-alice&page=2`).
/// What pins, errors, notices and the look-up of exchanges key on; its `description` is the request
/// line as the client sends it (the query percent-encoded as `ShopClient` encodes it).
public struct RequestKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// One `name=value` pair of the query, decoded.
    public struct QueryItem: Hashable, Sendable, Codable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public var method: RequestMethod
    public var path: String
    /// In the order sent.
    public var query: [QueryItem]

    public init(_ method: RequestMethod, _ path: String, query: [QueryItem] = []) {
        self.method = method
        self.path = path
        self.query = query
    }

    /// The key of a request line's method and target (`/path?a=1&b=2`), the query decoded; nil for a
    /// method the API does not use.
    public init?(method: String, target: String) {
        guard let method = RequestMethod(rawValue: method.uppercased()) else { return nil }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let query = parts.count > 1 ? parts[1].split(separator: "&").map { pair -> QueryItem in
            let nameValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            func decoded(_ s: String) -> String { s.removingPercentEncoding ?? s }
            return QueryItem(decoded(nameValue[0]), nameValue.count > 1 ? decoded(nameValue[1]) : "")
        } : []
        self.init(method, String(parts[0]), query: query)
    }

    /// Method and path, the query left out.
    public var endpoint: EndpointKey { EndpointKey(method, path) }

    /// The value of the first query item called `name`.
    public func value(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// Path and query as sent: `/api/v1/balance?user_id=qa-alice`.
    public var target: String { path + Self.queryString(query) }

    /// `GET /api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50`.
    public var description: String { "\(method.rawValue) \(target)" }

    /// `?a=1&b=2`, each name and value percent-encoded (all but ASCII letters, digits and `-._~`); "" for none.
    /// A byte loop, not Foundation's encoder: every request line of the app's proxy is keyed.
    static func queryString(_ items: [QueryItem]) -> String {
        guard !items.isEmpty else { return "" }
        func encode(_ s: String) -> String {
            var out: [UInt8] = []
            out.reserveCapacity(s.utf8.count)
            let hex = Array("0123456789ABCDEF".utf8)
            for b in s.utf8 {
                switch b {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    out.append(b)
                default:
                    out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
        return "?" + items.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }
}

extension EndpointDescription {
    /// `GET /api/v1/balance` as a key.
    public var key: EndpointKey { EndpointKey(method, path) }
}

extension Endpoint {
    /// This request's key: the operation's method and path, and this value's query.
    public var requestKey: RequestKey {
        RequestKey(Self.endpoint.method, Self.endpoint.path, query: query.map { RequestKey.QueryItem($0.name, $0.value) })
    }
}
