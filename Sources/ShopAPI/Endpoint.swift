import Foundation
import JSONTokens

/// Where an endpoint lives: the contract's operation it is, its method and its versioned path
/// `/api/v{N}/{name}` — written here once (a test holds them to the document).
public struct EndpointDescription: Sendable, Hashable, CustomStringConvertible {
    public let operation: OperationID
    public let method: RequestMethod
    public let name: String
    public let version: Int

    public init(_ operation: OperationID, _ method: RequestMethod, _ name: String, version: Int = 1) {
        self.operation = operation
        self.method = method
        self.name = name
        self.version = version
    }

    public var path: String { "/api/v\(version)/\(name)" }
    public var description: String { "\(method.rawValue) \(path)" }
}

/// One operation of the API: it names where it lives, what it sends and what it answers.
/// The app calls it like a function: `try await client.send(Balance(user: "qa-alice")).balance`.
public protocol Endpoint: Sendable {
    associatedtype Response: Sendable

    static var endpoint: EndpointDescription { get }
    /// Sent with `Authorization: Bearer …` (every operation but `auth/refresh`).
    static var requiresAuth: Bool { get }
    /// Query parameters (GET operations).
    var query: [(name: String, value: String)] { get }
    /// The JSON body (POST operations), snake_case.
    func body() throws -> [UInt8]?
    /// Reads a 2xx response body.
    static func decode(_ body: [UInt8]) throws -> Response
    /// The same, given the body's tokens (made once by the client for the watchdog and the preview).
    static func decode(_ body: [UInt8], tokens: [JSONToken]) throws -> Response
}

extension Endpoint {
    public static var requiresAuth: Bool { true }
    public var query: [(name: String, value: String)] { [] }
    public func body() throws -> [UInt8]? { nil }
}

extension Endpoint where Response: Decodable {
    public static func decode(_ body: [UInt8]) throws -> Response { try decodedByFoundation(body) }

    /// `JSONDecoder`'s reading (lone surrogates repaired first, with the body's tokens when they are
    /// already made), which words every problem.
    static func decodedByFoundation(_ body: [UInt8], tokens: [JSONToken]? = nil) throws -> Response {
        let utf8 = JSONRepair.replacingInvalidUTF8(body, tokens: tokens)
        let repaired = utf8 == body ? JSONRepair.replacingLoneSurrogates(body, tokens: tokens) : JSONRepair.replacingLoneSurrogates(utf8)
        return try JSONDecoder().decode(Response.self, from: Data(repaired))
    }

    /// The same, with the tokens the client already made of the body (the repair reuses them).
    public static func decode(_ body: [UInt8], tokens: [JSONToken]) throws -> Response { try decodedByFoundation(body, tokens: tokens) }
}

/// Repairs JSON that other decoders accept but Foundation's rejects as a whole.
public enum JSONRepair {
    /// `\uD800`–`\uDFFF` escapes that do not form a surrogate pair become `\uFFFD`, so one bad string
    /// costs one field (shown as �), not the whole page. Bytes are returned unchanged when there is none
    /// (a body with no backslash is not even tokenized).
    public static func replacingLoneSurrogates(_ bytes: [UInt8], tokens: [JSONToken]? = nil) -> [UInt8] {
        guard bytes.contains(UInt8(ascii: "\\")) else { return bytes }
        return JSONText.replacingLoneSurrogates(bytes, tokens: tokens ?? JSONTokenizer.tokens(bytes))
    }

    /// Bytes inside a string that are not UTF-8 become U+FFFD (shown as �), so one field that is not text
    /// costs that field's bytes, not the whole entry: the entry stays readable, and the contract watchdog
    /// names the field and the byte (`schema`, rule `utf8`). Bytes are returned unchanged when all is UTF-8.
    public static func replacingInvalidUTF8(_ bytes: [UInt8], tokens: [JSONToken]? = nil) -> [UInt8] {
        guard bytes.contains(where: { $0 >= 0x80 }), UTF8Scan.firstInvalid(bytes) != nil else { return bytes }
        let strings = (tokens ?? JSONTokenizer.tokens(bytes)).filter { $0.kind == .string }
        var bad = Set<Int>()
        for t in strings { bad.formUnion(UTF8Scan.invalid(bytes[t.contentRange])) }
        guard !bad.isEmpty else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bad.count * 2)
        for (i, b) in bytes.enumerated() {
            if bad.contains(i) { out += [0xEF, 0xBF, 0xBD] } else { out.append(b) }
        }
        return out
    }
}

/// An endpoint whose body is the endpoint value itself, encoded as JSON.
public protocol JSONBodyEndpoint: Endpoint, Encodable {}

extension JSONBodyEndpoint {
    public func body() throws -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

// MARK: The contract's operations

/// `GET /api/v1/audio_packs` — every pack on sale, in shop order.
public struct AudioPacks: Endpoint {
    public typealias Response = AudioPackList
    public static let endpoint = EndpointDescription(.listAudioPacks, .get, "audio_packs")
    public init() {}
}

/// `GET /api/v1/balance?user_id=` — the user's cheer balance.
public struct Balance: Endpoint {
    public typealias Response = CheerBalance
    public static let endpoint = EndpointDescription(.getBalance, .get, "balance")
    public var user: String
    public init(user: String) { self.user = user }
    public var query: [(name: String, value: String)] { [("user_id", user)] }
}

/// `GET /api/v1/cheer_history?user_id=&page=&per_page=` — one page, newest first.
public struct CheerHistory: Endpoint {
    public typealias Response = CheerHistoryPage
    public static let endpoint = EndpointDescription(.getCheerHistory, .get, "cheer_history")
    public static let maxPerPage = 200

    /// The page size to read on in when a page came back with `served` entries, shorter than asked while
    /// not the last (a server capping its pages below `per_page`): the largest size no larger than what it
    /// serves that lands exactly on `offset` (the entries reached, or a page edge), so no entry is skipped.
    public static func pageSize(landingOn offset: Int, served: Int) -> Int {
        var (x, y) = (abs(offset), abs(served))
        while y != 0 { (x, y) = (y, x % y) }
        return max(1, x)
    }

    /// The smaller page sizes to read on in when the server refuses a `per_page` the contract allows (1–200)
    /// with a 4xx: each divides `asked` (every page edge lands), largest first, the contract's default 50
    /// among them, three at most (a bounded fallback, never a walk down to 1).
    public static func fallbackSizes(below asked: Int) -> [Int] {
        Array([100, 50, 25, 10].filter { $0 < asked && asked % $0 == 0 }.prefix(3))
    }

    /// Whether `error` refuses a history read for its page size: a 400 or 422 (not the sign-in, not a rate
    /// limit, not a failure of the server's).
    public static func refusesPageSize(_ error: ShopAPIError) -> Bool { error.status == 400 || error.status == 422 }

    public var user: String
    public var page: Int
    public var perPage: Int

    public init(user: String, page: Int = 1, perPage: Int = 50) {
        self.user = user
        self.page = max(1, page)
        self.perPage = min(max(1, perPage), Self.maxPerPage)
    }

    public var query: [(name: String, value: String)] {
        [("user_id", user), ("page", String(page)), ("per_page", String(perPage))]
    }

    /// From the tokens when every entry reads plainly (`HistoryPageReader`), else by `JSONDecoder`.
    public static func decode(_ body: [UInt8], tokens: [JSONToken]) throws -> CheerHistoryPage {
        try HistoryPageReader.read(body, tokens: tokens) ?? decodedByFoundation(body, tokens: tokens)
    }

    public static func decode(_ body: [UInt8]) throws -> CheerHistoryPage {
        try decode(body, tokens: JSONTokenizer.tokens(body))
    }
}

/// `POST /api/v2/purchase_cheer` — credit cheer bought in the App Store. Never retried by the client.
public struct PurchaseCheer: Endpoint {
    public typealias Response = CheerBalance
    public static let endpoint = EndpointDescription(.purchaseCheer, .post, "purchase_cheer", version: 2)
    public var purchase: ShopWrite.Purchase
    /// Not in the contract (the token names the user in production); sent as `user_id` in the query
    /// for the local stand-in, which serves several users with one token.
    public var user: String?

    public init(_ purchase: ShopWrite.Purchase, user: String? = nil) {
        self.purchase = purchase
        self.user = user
    }

    public init(identifier: String, transactionID: UInt64, user: String? = nil) {
        self.init(ShopWrite.Purchase(identifier: identifier, transactionID: .number(transactionID)), user: user)
    }

    public func body() throws -> [UInt8]? { ShopWrite.purchase(purchase).body }
    public var query: [(name: String, value: String)] { user.map { [("user_id", $0)] } ?? [] }
}

/// `POST /api/v1/spend_cheer` — cheer for a pack, optionally with a comment. Never retried by the client.
public struct SpendCheer: Endpoint {
    public typealias Response = CheerBalance
    public static let endpoint = EndpointDescription(.spendCheer, .post, "spend_cheer")
    public var spend: ShopWrite.Spend
    /// As in `PurchaseCheer`: `user_id` in the query, for the stand-in.
    public var user: String?

    public init(_ spend: ShopWrite.Spend, user: String? = nil) {
        self.spend = spend
        self.user = user
    }

    public init(amount: Int, product: String, comment: String? = nil, user: String? = nil) {
        self.init(ShopWrite.Spend(product: product, amount: amount, comment: comment), user: user)
    }

    public func body() throws -> [UInt8]? { ShopWrite.spend(spend).body }
    public var query: [(name: String, value: String)] { user.map { [("user_id", $0)] } ?? [] }
}

/// `POST /api/v1/auth/refresh` — a refresh token for a new access token (sent without `Authorization`).
public struct RefreshToken: JSONBodyEndpoint {
    public typealias Response = TokenGrant
    public static let endpoint = EndpointDescription(.refreshToken, .post, "auth/refresh")
    public static var requiresAuth: Bool { false }
    public var refreshToken: String

    public init(refreshToken: String) { self.refreshToken = refreshToken }

    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

/// A write (`SpendCheer`, `PurchaseCheer`) with its JSON body as given, for negative tests only: the
/// bodies the typed endpoints cannot express (a field missing, of the wrong type, a negative
/// transaction id). Sent through `ShopClient` like any other, so its exchange is logged and checked.
public struct RawJSONWrite<Target: Endpoint>: Endpoint where Target.Response == CheerBalance {
    public typealias Response = CheerBalance
    public static var endpoint: EndpointDescription { Target.endpoint }
    /// The body's bytes, sent as they are.
    public var json: [UInt8]
    /// As in `SpendCheer`: `user_id` in the query, for the stand-in.
    public var user: String?

    public init(json: String, user: String? = nil) {
        self.json = Array(json.utf8)
        self.user = user
    }

    public func body() throws -> [UInt8]? { json }
    public var query: [(name: String, value: String)] { user.map { [("user_id", $0)] } ?? [] }
}
