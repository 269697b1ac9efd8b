import Foundation

/// A transaction as the App Store signed it: the fields of Apple's `JWSTransactionDecodedPayload` the
/// ledger reads. Made only from a record whose signature and chain verified (`CheckedRecord`).
public struct AppStoreTransaction: Sendable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String?
    public var bundleID: String
    public var productID: String
    /// `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
    public var type: String
    /// How many of the product were bought (1 when the record leaves it out).
    public var quantity: Int
    public var purchaseDate: Date?
    public var signedDate: Date
    /// `Sandbox`, `Production`, `Xcode` or `LocalTesting`.
    public var environment: String
    /// When the App Store revoked it (a refund), and why (0: other, 1: an issue in the app).
    public var revocationDate: Date?
    public var revocationReason: Int?
    /// The UUID the app set on the purchase (the customer's account in the app), when it set one.
    public var appAccountToken: String?

    public var isConsumable: Bool { type == "Consumable" }
    public var isRevoked: Bool { revocationDate != nil }

    public init(transactionID: String, bundleID: String, productID: String, type: String = "Consumable", quantity: Int = 1,
                purchaseDate: Date? = nil, signedDate: Date, environment: String = "Sandbox", revocationDate: Date? = nil,
                revocationReason: Int? = nil, appAccountToken: String? = nil) {
        self.transactionID = transactionID
        self.originalTransactionID = transactionID
        self.bundleID = bundleID
        self.productID = productID
        self.type = type
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.signedDate = signedDate
        self.environment = environment
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.appAccountToken = appAccountToken
    }

    /// The payload of a verified record; nil when it lacks a transaction id, bundle or product.
    init?(record: VerifiedRecord) {
        guard let fields = try? JSONSerialization.jsonObject(with: record.payload) as? [String: Any],
              let id = Self.text(fields["transactionId"]), let bundle = fields["bundleId"] as? String,
              let product = fields["productId"] as? String
        else { return nil }
        // A quantity, when the record has one, is 1 or more: anything else is no purchase to judge.
        if let q = fields["quantity"] { guard let n = q as? NSNumber, n.doubleValue >= 1, n.doubleValue <= 1_000_000 else { return nil } }
        self.init(transactionID: id, bundleID: bundle, productID: product, type: fields["type"] as? String ?? "",
                  quantity: (fields["quantity"] as? NSNumber)?.intValue ?? 1, purchaseDate: Self.date(fields["purchaseDate"]),
                  signedDate: record.signedDate, environment: fields["environment"] as? String ?? "",
                  revocationDate: Self.date(fields["revocationDate"]), revocationReason: (fields["revocationReason"] as? NSNumber)?.intValue,
                  appAccountToken: fields["appAccountToken"] as? String)
        originalTransactionID = Self.text(fields["originalTransactionId"])
    }

    /// Apple sends ids as strings; a number is read as its digits.
    static func text(_ value: Any?) -> String? {
        if let s = value as? String, !s.isEmpty { return s }
        if let n = value as? NSNumber { return n.stringValue }
        return nil
    }

    /// Apple's dates: milliseconds since 1970.
    static func date(_ value: Any?) -> Date? {
        (value as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
    }

    /// What the transaction id claims in a record that did not verify: shown beside "not verified", never believed.
    static func claimedID(_ compact: String) -> String? {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
              let fields = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return nil }
        return text(fields["transactionId"]).map { String($0.prefix(40)) }
    }
}

/// One signed transaction as the ledger may use it: verified and ours, or not verified (and then it
/// gives no verdict; what it claims is shown as a claim).
public enum CheckedRecord: Sendable, Equatable {
    case verified(AppStoreTransaction)
    case notVerified(NotVerified)

    public var transaction: AppStoreTransaction? { if case let .verified(t) = self { t } else { nil } }
}

/// A record that is not believed: why, and the transaction id it claims (unverified, for the finding's line).
public struct NotVerified: Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// Its signature or chain did not verify.
        case record(RecordRejection)
        /// Verified, but for another app (`bundleId`), or another App Store environment.
        case bundle(found: String, expected: String)
        case environment(found: String, expected: String)
        /// Verified, but without a transaction id, bundle or product, or with a quantity below 1.
        case incomplete
        /// Verified, but the record of another transaction than the one asked for.
        case answeredFor(asked: String)
    }

    public var claimedTransactionID: String?
    public var reason: Reason

    public init(claimedTransactionID: String?, reason: Reason) {
        self.claimedTransactionID = claimedTransactionID
        self.reason = reason
    }

    public var words: String {
        switch reason {
        case let .record(rejection): rejection.words
        case let .bundle(found, expected): "it is a record of another app (bundle \(found), not \(expected))"
        case let .environment(found, expected): "it is a record of the App Store's \(found) environment, not \(expected)"
        case .incomplete: "it lacks a transaction id, bundle or product, or its quantity is below 1"
        case let .answeredFor(asked): "it is the record of another transaction than \(asked), the one asked for"
        }
    }
}

/// Checks a signed transaction: its signature and chain (`SignedRecordVerifier`), then that it is the
/// configured app's, in the configured App Store environment.
public struct TransactionChecker: Sendable {
    public let verifier: SignedRecordVerifier
    public let bundleID: String
    public let environment: String

    public init(verifier: SignedRecordVerifier, bundleID: String, environment: String = "Sandbox") {
        self.verifier = verifier
        self.bundleID = bundleID
        self.environment = environment
    }

    public func check(_ compact: String) async -> CheckedRecord {
        let claimed = AppStoreTransaction.claimedID(compact)
        switch await verifier.verify(compact) {
        case let .failure(rejection):
            return .notVerified(NotVerified(claimedTransactionID: claimed, reason: .record(rejection)))
        case let .success(record):
            guard let transaction = AppStoreTransaction(record: record) else {
                return .notVerified(NotVerified(claimedTransactionID: claimed, reason: .incomplete))
            }
            guard transaction.bundleID == bundleID else {
                return .notVerified(NotVerified(claimedTransactionID: claimed, reason: .bundle(found: transaction.bundleID, expected: bundleID)))
            }
            guard transaction.environment == environment else {
                return .notVerified(NotVerified(claimedTransactionID: claimed, reason: .environment(found: transaction.environment, expected: environment)))
            }
            return .verified(transaction)
        }
    }
}
