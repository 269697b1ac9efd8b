import Foundation
import JSONTokens

/// One write to the shop, the one way it is spelled: a spend or a purchase. It travels everywhere a
/// write does — the form's result, the request body (`body`, the one encoder, "send as typed"
/// included), the expectation and its verification, the watch's note of the tool's own write, the
/// app's write read back from the proxy (`init(operation:body:)`, the one decoder), pairing, reports
/// and `negative`'s cases. The endpoint types (`SpendCheer`, `PurchaseCheer`) carry it.
public enum ShopWrite: Hashable, Sendable {
    case spend(Spend)
    case purchase(Purchase)

    /// Cheer spent on a pack, with a comment or none (`spendCheer`).
    public struct Spend: Hashable, Sendable {
        /// The pack's identifier.
        public var product: String
        /// Cheer; 1 or more by the contract (a write sent as typed may carry any whole number).
        public var amount: Int
        /// Nil when none was given (an empty one is none).
        public var comment: String?

        public init(product: String, amount: Int, comment: String? = nil) {
            self.product = product
            self.amount = amount
            self.comment = comment
        }

        /// Whether this spend is that history entry: the same pack and amount, and its comment among the
        /// entry's when it had one. Every verdict that pairs a spend with an entry asks this.
        public func explains(_ entry: CheerHistoryEntry) -> Bool {
            product == entry.product && amount == entry.amount && ((comment ?? "").isEmpty || (entry.comments ?? []).contains { $0.body == comment })
        }
    }

    /// Cheer bought in the App Store, credited by the shop (`purchaseCheer`).
    public struct Purchase: Hashable, Sendable {
        /// The bundle's App Store identifier (`com.reiterate.cheer.200`).
        public var identifier: String
        public var transactionID: TransactionID
        /// What the App Store's signed record says was paid, when it was read (never sent: the contract's
        /// body has no quantity): the expected credit comes from it, not from the identifier typed.
        public var paid: Paid?

        /// A purchase as the App Store recorded it: its product and how many.
        public struct Paid: Hashable, Sendable {
            public var product: String
            public var quantity: Int
            /// The App Store refunded or revoked it: the shop must refuse to credit it.
            public var revoked: Bool
            public init(product: String, quantity: Int, revoked: Bool = false) {
                self.product = product
                self.quantity = quantity
                self.revoked = revoked
            }
        }

        public init(identifier: String, transactionID: TransactionID, paid: Paid? = nil) {
            self.identifier = identifier
            self.transactionID = transactionID
            self.paid = paid
        }
    }

    public static func spend(product: String, amount: Int, comment: String? = nil) -> ShopWrite {
        .spend(Spend(product: product, amount: amount, comment: comment))
    }

    public static func purchase(identifier: String, transactionID: TransactionID) -> ShopWrite {
        .purchase(Purchase(identifier: identifier, transactionID: transactionID))
    }

    /// The contract's operation it is.
    public var operation: OperationID {
        switch self {
        case .spend: SpendCheer.endpoint.operation
        case .purchase: PurchaseCheer.endpoint.operation
        }
    }

    public var spend: Spend? { if case let .spend(s) = self { s } else { nil } }
    public var purchase: Purchase? { if case let .purchase(p) = self { p } else { nil } }

    /// The request body: the contract's fields with their keys sorted, a transaction id sent as typed in
    /// the JSON it was typed as (a number out of range, or text as a string).
    public var body: [UInt8] {
        var w = JSONWriter(capacity: 96)
        switch self {
        case let .spend(s):
            w.raw("{\"amount\":")
            w.int(s.amount)
            if let comment = s.comment {
                w.raw(",\"comment\":")
                w.string(comment)
            }
            w.raw(",\"product\":")
            w.string(s.product)
            w.raw("}")
        case let .purchase(p):
            w.raw("{\"identifier\":")
            w.string(p.identifier)
            w.raw(",\"transaction_id\":")
            w.verbatim(p.transactionID.json)
            w.raw("}")
        }
        return w.bytes
    }

    /// A write's body read back (the app's, seen through the proxy): nil when `operation` is no write,
    /// or the body lacks what the write needs (the contract's request checks say why). A transaction id
    /// is read from its digits, so every 64-bit value survives; text is kept as text.
    public init?(operation: OperationID?, body: [UInt8]) {
        guard let operation, case let .object(json)? = JSONValue.parse(body) else { return nil }
        switch operation {
        case SpendCheer.endpoint.operation:
            guard case let .string(product)? = json["product"], case let .int(amount)? = json["amount"] else { return nil }
            let comment: String? = if case let .string(c)? = json["comment"] { c } else { nil }
            self = .spend(product: product, amount: amount, comment: comment)
        case PurchaseCheer.endpoint.operation:
            guard let named = json["identifier"], let sent = json["transaction_id"] else { return nil }
            // An identifier sent as a whole JSON number (`42`) is kept as its digits: a credit made for it is still
            // one the ledger and the watch weigh (the request's own `request-body` finding says it is not text).
            // Anything else that is not text (a fraction, null, an object) is no purchase to weigh.
            let identifier: String
            switch named {
            case let .string(s): identifier = s
            case let .int(n): identifier = String(n)
            default: return nil
            }
            let transaction: TransactionID
            switch sent {
            case let .string(s): transaction = .text(s)
            case let .int(n): transaction = n >= 0 ? .number(UInt64(n)) : .outOfRange(String(n))
            case let .double(d):
                // Past what an Int holds: the top-level number's own digits (never a nested key's of the same name).
                let digits = WriteMemory.transactionDigits(body).flatMap { Double($0) == d ? $0 : nil } ?? String(d)
                transaction = UInt64(digits).map(TransactionID.number) ?? .outOfRange(digits)
            default: transaction = .text(sent.describe)  // neither a number nor text: kept in words
            }
            self = .purchase(identifier: identifier, transactionID: transaction)
        default:
            return nil
        }
    }
}

/// A purchase's transaction id as sent. The contract's is a whole number from 0 to 2⁶⁴ − 1; only a
/// purchase sent as typed carries anything else: a whole number out of that range (sent as a JSON
/// number, `-5`), or text (sent as a JSON string: typed `"42"` or `abc`).
public enum TransactionID: Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    case number(UInt64)
    case outOfRange(String)
    case text(String)

    public init(integerLiteral value: UInt64) { self = .number(value) }

    /// A form's field read as typed: digits (with a leading `-`) are a number, text in double quotes
    /// the text inside them, anything else the text itself. Nil when nothing was typed.
    public init?(typed: String) {
        let t = typed.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty else { return nil }
        let digits = t.first == "-" ? t.dropFirst() : Substring(t)
        // Out of range, it goes as typed: only a JSON number's digits (no leading zero) go as a number.
        let wholeNumber = !digits.isEmpty && digits.allSatisfy({ $0.isASCII && $0.isNumber }) && (digits.count == 1 || digits.first != "0")
        if let n = UInt64(t) {
            self = .number(n)
        } else if t.count >= 2, t.first == "\"", t.last == "\"" {
            self = .text(String(t.dropFirst().dropLast()))
        } else if wholeNumber {
            self = .outOfRange(t)
        } else {
            self = .text(t)
        }
    }

    /// As the form shows it and the words say it: `42`, `-5`, `"42"` (text in double quotes).
    public var description: String {
        switch self {
        case let .number(n): return String(n)
        case let .outOfRange(digits): return digits
        case let .text(text): return "\"" + text + "\""
        }
    }

    /// The JSON value sent as `transaction_id`.
    public var json: String {
        switch self {
        case let .number(n): return String(n)
        case let .outOfRange(digits): return digits
        case let .text(text): return Self.jsonString(text)
        }
    }

    /// Whether two ids name one transaction as a server reading them would: `42` and `"42"` do (text
    /// of digits alone is that number).
    public func sameTransaction(as other: TransactionID) -> Bool {
        func plain(_ id: TransactionID) -> String {
            guard case let .text(text) = id, !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return id.description }
            return text
        }
        return plain(self) == plain(other)
    }

    /// `text` as a JSON string, quoted and escaped.
    public static func jsonString(_ text: String) -> String {
        var out = "\""
        for u in text.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
