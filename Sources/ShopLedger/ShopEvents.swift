import Foundation
import JSONTokens
import ShopAPI
import TerminalText

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

/// A HAR file that is not one, in plain words (the one HAR reader's).
public typealias UnreadableHAR = HAR.Unreadable

public enum ShopEvents {
    /// The shop's events in a HAR 1.2 file (read by the one HAR reader, `HAR.read`), in its order. Entries
    /// that are none of the three (packs, history, other hosts) are skipped; `source` names the file when
    /// an entry has no `_source`.
    public static func read(har bytes: [UInt8], source: String) throws(UnreadableHAR) -> [ShopEvent] {
        try HAR.read(bytes).entries.compactMap { e in
            guard let operation = e.operation else { return nil }
            return event(operation, requestBody: e.requestBody, status: e.status, responseBody: e.responseBody, user: e.key?.value("user_id"),
                         at: e.startedAt, end: e.endedAt, requestID: e.requestID, source: e.source ?? source)
        }
    }

    /// The event an exchange of `operation` is (nil for one that is none of the three), its balance the
    /// one a 200 answer says, read by the operation's endpoint type.
    static func event(_ operation: OperationID, requestBody: String?, status: Int?, responseBody: String?, user: String?,
                      at: Date?, end: Date?, requestID: String?, source: String) -> ShopEvent? {
        let kind: ShopEvent.Kind
        switch operation {
        case .getBalance: kind = .balance
        case .spendCheer: kind = .spend
        case .purchaseCheer:
            if let body = requestBody, let purchase = ShopWrite(operation: operation, body: Array(body.utf8))?.purchase {
                kind = .purchase(purchase)
            } else {
                kind = .unreadablePurchase
            }
        default: return nil
        }
        let balance = status == 200 ? responseBody.flatMap { operation.answeredBalance(Array($0.utf8)) } : nil
        return ShopEvent(kind: kind, at: at, end: end, user: user, status: status, balance: balance, requestID: requestID, source: source)
    }
}

extension ShopEvents {
    /// The shop's events among a session's exchanges (the tool's own and the app's through the proxy),
    /// in the order made. A pending exchange is left out (its answer is not known yet); a fault the proxy
    /// injected leaves the app without the server's answer, not the server: the server's status is kept.
    public static func from(_ exchanges: [Exchange]) -> [ShopEvent] {
        exchanges.compactMap { e in
            guard !e.isPending, let operation = e.operation else { return nil }
            let seconds = Double(e.duration.components.seconds) + Double(e.duration.components.attoseconds) / 1e18
            return event(operation, requestBody: e.requestBodyPreview, status: e.status, responseBody: e.responseBodyPreview,
                         user: RequestKey(method: e.method, target: e.path)?.value("user_id"), at: e.startedAt, end: e.startedAt + max(0, seconds),
                         requestID: e.requestID, source: e.source.rawValue)
        }
    }
}

extension ShopEvents {
    /// A HAR file given to `ledger` that could not be used, in words (its name, never its folder).
    public struct UnusableFile: Error, Sendable { public var words: String }

    /// The shop's events in each of `harFiles`, file after file.
    public static func read(harFiles: [String]) throws(UnusableFile) -> [ShopEvent] {
        var events: [ShopEvent] = []
        for file in harFiles {
            let name = Sanitizer.line(URL(fileURLWithPath: file).lastPathComponent)
            guard let data = FileManager.default.contents(atPath: file) else { throw UnusableFile(words: "the HAR file \(name) cannot be read") }
            do { events += try read(har: Array(data), source: URL(fileURLWithPath: file).lastPathComponent) } catch {
                throw UnusableFile(words: "the HAR file \(name) is not readable: \(error.reason)")
            }
        }
        return events
    }
}
