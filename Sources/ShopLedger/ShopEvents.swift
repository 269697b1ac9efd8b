import Foundation
import JSONTokens
import ShopAPI

/// What the backend did that the ledger weighs: a balance it showed, a purchase posted (with its
/// answer), a spend. Read from HAR files (the tool's own `--har`, the proxy's `proxy --har`).
public struct ShopEvent: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A balance read.
        case balance
        /// A `purchase_cheer` post.
        case purchase(ShopWrite.Purchase)
        /// A `spend_cheer` post.
        case spend
        /// A `purchase_cheer` post whose body could not be read: a write whose effect is not known.
        case unreadablePurchase
    }

    public var kind: Kind
    public var at: Date?
    /// When its answer had come (its start and duration), when known.
    public var end: Date?
    /// The shop user it was for (`user_id`), when the request named one.
    public var user: String?
    /// The answer's status; nil when no answer came.
    public var status: Int?
    /// The balance the answer showed (a read's, or a write's new balance), when it was a readable 200.
    public var balance: Int?
    public var requestID: String?
    /// Whose request: `tool` or `app` (the HAR's `_source`), and the file it came from.
    public var source: String

    public init(kind: Kind, at: Date?, end: Date? = nil, user: String?, status: Int?, balance: Int?, requestID: String?, source: String) {
        self.kind = kind
        self.at = at
        self.end = end ?? at
        self.user = user
        self.status = status
        self.balance = balance
        self.requestID = requestID
        self.source = source
    }

    public var purchase: ShopWrite.Purchase? { if case let .purchase(p) = kind { p } else { nil } }
    public var isWrite: Bool { kind != .balance }
    /// A write the server answered 200: applied, by the contract.
    public var isCredit: Bool { purchase != nil && status == 200 }
}

/// A HAR file that is not one, in plain words.
public struct UnreadableHAR: Error, Sendable, Equatable {
    public var reason: String
}

public enum ShopEvents {
    /// The shop's events in a HAR 1.2 file, in its order. Entries that are none of the three (packs,
    /// history, other hosts) are skipped; `source` names the file when an entry has no `_source`.
    public static func read(har bytes: [UInt8], source: String) throws(UnreadableHAR) -> [ShopEvent] {
        guard case let .object(root)? = JSONValue.parse(bytes) else { throw UnreadableHAR(reason: "it is not JSON") }
        guard case let .object(log)? = root["log"], case let .array(entries)? = log["entries"] else {
            throw UnreadableHAR(reason: "it is not a HAR file (no log.entries)")
        }
        var events: [ShopEvent] = []
        events.reserveCapacity(entries.count)
        for case let .object(entry) in entries {
            if let event = event(entry, source: source) { events.append(event) }
        }
        return events
    }

    static func event(_ entry: JSONObject, source: String) -> ShopEvent? {
        guard case let .object(request)? = entry["request"], case let .string(method)? = request["method"],
              case let .string(url)? = request["url"], let (path, query) = split(url)
        else { return nil }
        // A base URL may have a path of its own: the operation's path ends it.
        let kind: ShopEvent.Kind
        switch method.uppercased() {
        case "GET" where path.hasSuffix(Balance.endpoint.path): kind = .balance
        case "POST" where path.hasSuffix(SpendCheer.endpoint.path): kind = .spend
        case "POST" where path.hasSuffix(PurchaseCheer.endpoint.path):
            if case let .object(post)? = request["postData"], case let .string(text)? = post["text"],
               let purchase = ShopWrite(operation: PurchaseCheer.endpoint.operation, body: Array(text.utf8))?.purchase {
                kind = .purchase(purchase)
            } else {
                kind = .unreadablePurchase
            }
        default: return nil
        }
        var status: Int?
        var balance: Int?
        var requestID: String?
        if case let .string(id)? = entry["_requestId"] { requestID = id }
        if case let .object(response)? = entry["response"] {
            if case let .int(s)? = response["status"], s > 0 { status = s }
            if requestID == nil, case let .array(headers)? = response["headers"] {
                for case let .object(h) in headers {
                    if case let .string(name)? = h["name"], name.lowercased() == "x-request-id", case let .string(value)? = h["value"] { requestID = value }
                }
            }
            if status == 200, case let .object(content)? = response["content"], case let .string(text)? = content["text"],
               case let .object(body)? = JSONValue.parse(Array(text.utf8)), case let .int(b)? = body["balance"] {
                balance = b
            }
        }
        var at: Date?
        if case let .string(started)? = entry["startedDateTime"] { at = ISO8601.parse(started) }
        var end = at
        switch entry["time"] {
        case let .int(ms)?: end = at.map { $0 + Double(max(0, ms)) / 1000 }
        case let .double(ms)? where ms.isFinite: end = at.map { $0 + max(0, ms) / 1000 }
        default: break
        }
        let who: String = if case let .string(s)? = entry["_source"] { s } else { source }
        return ShopEvent(kind: kind, at: at, end: end, user: query["user_id"], status: status, balance: balance, requestID: requestID, source: who)
    }

    /// `http://host/api/v1/balance?user_id=x` → (`/api/v1/balance`, `["user_id": "x"]`).
    static func split(_ url: String) -> (String, [String: String])? {
        guard let components = URLComponents(string: url) else { return nil }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return (components.path, query)
    }
}

extension ShopEvents {
    /// The shop's events among a session's exchanges (the tool's own and the app's through the proxy),
    /// in the order made. A pending exchange is left out (its answer is not known yet); a fault the proxy
    /// injected leaves the app without the server's answer, not the server: the server's status is kept.
    public static func from(_ exchanges: [Exchange]) -> [ShopEvent] {
        exchanges.compactMap { e in
            guard !e.isPending, let operation = e.operation else { return nil }
            let kind: ShopEvent.Kind
            switch operation {
            case Balance.endpoint.operation: kind = .balance
            case SpendCheer.endpoint.operation: kind = .spend
            case PurchaseCheer.endpoint.operation:
                if let body = e.requestBodyPreview, let purchase = ShopWrite(operation: operation, body: Array(body.utf8))?.purchase {
                    kind = .purchase(purchase)
                } else {
                    kind = .unreadablePurchase
                }
            default: return nil
            }
            var balance: Int?
            if e.status == 200, let body = e.responseBodyPreview, case let .object(o)? = JSONValue.parse(Array(body.utf8)), case let .int(b)? = o["balance"] {
                balance = b
            }
            let query = split("http://host" + e.path)?.1 ?? [:]
            let seconds = Double(e.duration.components.seconds) + Double(e.duration.components.attoseconds) / 1e18
            return ShopEvent(kind: kind, at: e.startedAt, end: e.startedAt + max(0, seconds), user: query["user_id"], status: e.status, balance: balance,
                             requestID: e.requestID, source: e.source.rawValue)
        }
    }
}
