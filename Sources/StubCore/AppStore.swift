/// The App Store's side of the stand-in (issue 38): the sandbox purchases StoreKit would make, paged
/// as the App Store Server API pages them, refunds, and the checks a shop that verifies each
/// transaction with the App Store makes before it credits. Pure state: the keys, the certificates and
/// the signing are the server's (`StubServer`).

/// The App Store account the stand-in plays: the App Store Connect API key's ids, the app, its environment.
public enum AppStoreAccount {
    /// The API key's id: the `kid` of every token the tool signs.
    public static let keyID = "STUBKEY001"
    /// The issuer (the App Store Connect team): a token's `iss`.
    public static let issuerID = "57246542-96fe-1a63-e053-0824d011072a"
    /// The app: a token's `bid`, and the `bundleId` of every transaction the API answers.
    public static let bundleID = "com.reiterate.app"
    /// The environment every signed transaction names.
    public static let environment = "Sandbox"
    /// The app's Apple id, in history answers.
    public static let appAppleID: Int64 = 1_234_567_890
    /// A token's `aud`.
    public static let audience = "appstoreconnect-v1"
    /// The product types Apple names; a purchase is a consumable unless it says otherwise.
    public static let productTypes = ["Consumable", "Non-Consumable", "Auto-Renewable Subscription", "Non-Renewing Subscription"]
}

/// An error of the App Store Server API, in Apple's shape: the status, and the body `{"errorCode", "errorMessage"}`.
public struct AppStoreError: Error, Sendable, Equatable, Encodable {
    public let status: Int
    public let errorCode: Int
    public let errorMessage: String

    enum CodingKeys: String, CodingKey { case errorCode, errorMessage }

    public static let invalidTransactionID = AppStoreError(status: 400, errorCode: 4_000_006, errorMessage: "Invalid transaction id.")
    public static let invalidRevision = AppStoreError(status: 400, errorCode: 4_000_005, errorMessage: "Invalid revision.")
    public static let transactionNotFound = AppStoreError(status: 404, errorCode: 4_040_010, errorMessage: "Transaction id not found.")
    public static let rateLimitExceeded = AppStoreError(status: 429, errorCode: 4_290_000, errorMessage: "Rate limit exceeded.")
}

/// One purchase as the App Store holds it.
public struct AppStoreTransaction: Sendable, Equatable {
    /// 16 digits, counting up from 2000000000000001.
    public let id: String
    /// The sandbox tester who paid: whose purchases a history lists.
    public let customer: String
    /// The shop user the app bought for (its `appAccountToken`).
    public let user: String
    public let productID: String
    public let quantity: Int
    public let bundleID: String
    /// `Consumable`, or another of `AppStoreAccount.productTypes`.
    public let type: String
    /// UNIX milliseconds.
    public let purchaseDate: Int64
    /// UNIX milliseconds; set by a refund.
    public internal(set) var revocationDate: Int64?
    /// 0 (other) or 1 (an issue in the app), as Apple's `revocationReason`.
    public internal(set) var revocationReason: Int?

    public var isRevoked: Bool { revocationDate != nil }

    /// The user's `appAccountToken`.
    public var appAccountToken: String { AppStoreLedger.appAccountToken(for: user) }

    /// The price in milliunits of USD: 0.99 per 100 cheer of a cheer bundle, 0.99 for any other product.
    public var price: Int { (ShopStore.bundleAmount(of: productID) ?? 100) * 99 / 10 }

    /// What the App Store signs for it at `signedDate` (UNIX ms): Apple's JWSTransactionDecodedPayload.
    public func payload(signedDate: Int64) -> Payload {
        Payload(
            transactionId: id, originalTransactionId: id, bundleId: bundleID, productId: productID, purchaseDate: purchaseDate,
            originalPurchaseDate: purchaseDate, quantity: quantity, type: type, inAppOwnershipType: "PURCHASED", signedDate: signedDate,
            environment: AppStoreAccount.environment, transactionReason: "PURCHASE", storefront: "USA", storefrontId: "143441", price: price,
            currency: "USD", appAccountToken: appAccountToken, revocationDate: revocationDate, revocationReason: revocationReason
        )
    }

    /// Apple's JWSTransactionDecodedPayload, with its names; the revocation fields only when refunded.
    /// `bundleId` and `environment` are variables for the `wrong_bundle` and `wrong_environment` faults.
    public struct Payload: Sendable, Equatable, Encodable {
        public let transactionId: String
        public let originalTransactionId: String
        public var bundleId: String
        public let productId: String
        public let purchaseDate: Int64
        public let originalPurchaseDate: Int64
        public let quantity: Int
        public let type: String
        public let inAppOwnershipType: String
        public let signedDate: Int64
        public var environment: String
        public let transactionReason: String
        public let storefront: String
        public let storefrontId: String
        public let price: Int
        public let currency: String
        public let appAccountToken: String
        public let revocationDate: Int64?
        public let revocationReason: Int?
    }
}

/// One page of a history or refund lookup: at most `AppStoreLedger.pageSize` transactions, the revision
/// that asks for the next page, and whether more follow.
public struct AppStorePage: Sendable, Equatable {
    public let transactions: [AppStoreTransaction]
    public let revision: String
    public let hasMore: Bool
}

/// Checks a shop that verifies with the App Store could skip (the stand-in's faults).
public enum AppStoreWaiver: Sendable, Hashable {
    /// A posted product other than the App Store's is credited by the posted one's bundle.
    case trustProduct
    /// One bundle is credited, whatever the quantity.
    case ignoreQuantity
    /// A refunded transaction is credited.
    case keepRefunded
    /// A transaction bought for another user is credited to the one who posts it.
    case anyAccount
}

/// What the App Store's record lets the shop credit for one posted transaction.
public struct VerifiedPurchase: Sendable, Equatable {
    public let transaction: AppStoreTransaction
    /// The cheer to credit.
    public let credit: Int
    /// The waivers that changed the outcome (a check that would have refused, or a different amount).
    public let waived: Set<AppStoreWaiver>
}

/// Every purchase the App Store holds, and the revisions it has issued.
public struct AppStoreLedger: Sendable {
    /// Transactions per page of a history or refund lookup, as Apple's.
    public static let pageSize = 20
    public static let firstID: UInt64 = 2_000_000_000_000_001

    /// Which list a revision pages through.
    public enum List: Sendable, Hashable { case history, refunds }

    /// A place in a customer's list: what a revision stands for.
    struct Position: Sendable, Hashable {
        let list: List
        let customer: String
        let offset: Int
    }

    /// The app whose transactions the API answers.
    public let bundleID: String
    /// Every purchase, oldest first (ids count up with time).
    public private(set) var transactions: [AppStoreTransaction] = []
    private var nextID = firstID
    private var revisions: [String: Position] = [:]
    private var issued: [Position: String] = [:]

    public init(bundleID: String = AppStoreAccount.bundleID) {
        self.bundleID = bundleID
    }

    /// A user's `appAccountToken`: the version 5 UUID of `reiterate:user:` and the name, in the URL
    /// namespace (`uuid.uuid5(uuid.NAMESPACE_URL, "reiterate:user:qa-alice")`).
    public static func appAccountToken(for user: String) -> String {
        NameUUID.v5("reiterate:user:" + user)
    }

    /// A purchase made in the sandbox at `now` (UNIX seconds): the App Store has it; the shop knows nothing.
    public mutating func purchase(productID: String, quantity: Int = 1, customer: String = "sandbox-1", user: String = SeedData.alice,
                                  bundleID: String? = nil, type: String = "Consumable", now: Double) throws(ShopError) -> AppStoreTransaction {
        guard !productID.isEmpty else { throw .badRequest("product_id is required (a product such as com.reiterate.cheer.200)", code: "invalid_purchase") }
        guard (1...10).contains(quantity) else { throw .badRequest("quantity must be a whole number in 1...10", code: "invalid_purchase") }
        guard !customer.isEmpty, !user.isEmpty else { throw .badRequest("customer and user must not be empty", code: "invalid_purchase") }
        guard AppStoreAccount.productTypes.contains(type) else {
            throw .badRequest("type must be one of: " + AppStoreAccount.productTypes.joined(separator: ", "), code: "invalid_purchase")
        }
        let transaction = AppStoreTransaction(
            id: String(nextID), customer: customer, user: user, productID: productID, quantity: quantity,
            bundleID: bundleID.flatMap { $0.isEmpty ? nil : $0 } ?? self.bundleID, type: type, purchaseDate: Self.millis(now)
        )
        nextID += 1
        transactions.append(transaction)
        return transaction
    }

    /// The transaction of this app with the id, as the API looks it up: an id that is not 1–20 digits is
    /// `invalidTransactionID`; an unknown one, or another app's, `transactionNotFound`.
    public func transaction(id: String) throws(AppStoreError) -> AppStoreTransaction {
        guard (1...20).contains(id.utf8.count), id.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { throw .invalidTransactionID }
        guard let found = transactions.first(where: { $0.id == id && $0.bundleID == bundleID }) else { throw .transactionNotFound }
        return found
    }

    /// One page of `list` for the customer who owns `transactionID`: their transactions of this app,
    /// oldest first (`history`: all, refunded ones included; `refunds`: the revoked ones). Without a
    /// revision, the first page; with one, the page it names. A revision this ledger did not issue for
    /// this list and customer is `invalidRevision`.
    public mutating func page(_ list: List, of transactionID: String, revision: String?) throws(AppStoreError) -> AppStorePage {
        let owner = try transaction(id: transactionID)
        var offset = 0
        if let revision {
            guard let position = revisions[revision], position.list == list, position.customer == owner.customer else { throw .invalidRevision }
            offset = position.offset
        }
        let all = transactions.filter { $0.customer == owner.customer && $0.bundleID == bundleID && (list == .history || $0.isRevoked) }
        let end = min(offset + Self.pageSize, all.count)
        let page = offset < end ? Array(all[offset..<end]) : []
        return AppStorePage(transactions: page, revision: revisionToken(Position(list: list, customer: owner.customer, offset: max(end, offset))),
                            hasMore: end < all.count)
    }

    /// The revision for a place in a list (the same place gives the same revision).
    private mutating func revisionToken(_ position: Position) -> String {
        if let token = issued[position] { return token }
        let token = (position.list == .history ? "hist-" : "refund-") + String(SeededGenerator.mix(UInt64(issued.count + 1)), radix: 16)
        issued[position] = token
        revisions[token] = position
        return token
    }

    /// Marks the transaction revoked at `now` (UNIX seconds) with `reason`; nil when there is no such id
    /// (of any app). A transaction already revoked keeps its first revocation.
    public mutating func refund(id: String, reason: Int, now: Double) -> AppStoreTransaction? {
        guard let i = transactions.firstIndex(where: { $0.id == id }) else { return nil }
        if transactions[i].revocationDate == nil {
            transactions[i].revocationDate = Self.millis(now)
            transactions[i].revocationReason = reason
        }
        return transactions[i]
    }

    /// What a shop that verifies with the App Store credits for `transactionID` posted by `user` as
    /// `identifier`: the App Store's product's cheer × its quantity. Refused (400, nothing credited): an
    /// id the App Store does not know or of another app, or not a consumable (`unverified_transaction`);
    /// refunded (`refunded_transaction`); posted under another product (`product_mismatch`); bought for
    /// another user (`not_this_users_transaction`); a product that is no cheer bundle (`unknown_product`).
    /// Each waiver skips its check; those that changed the outcome are in `waived`.
    public func verify(transactionID: String, identifier: String, user: String, waivers: Set<AppStoreWaiver> = []) throws(ShopError) -> VerifiedPurchase {
        guard let record = transactions.first(where: { $0.id == transactionID && $0.bundleID == bundleID }) else {
            throw .badRequest("the App Store does not know transaction \(transactionID) of \(bundleID)", code: "unverified_transaction")
        }
        guard record.type == "Consumable" else {
            throw .badRequest("transaction \(transactionID) is a \(record.type), not a consumable", code: "unverified_transaction")
        }
        var waived: Set<AppStoreWaiver> = []
        if record.isRevoked {
            guard waivers.contains(.keepRefunded) else {
                throw .badRequest("transaction \(transactionID) was refunded by the App Store", code: "refunded_transaction")
            }
            waived.insert(.keepRefunded)
        }
        var product = record.productID
        if identifier != record.productID {
            guard waivers.contains(.trustProduct) else {
                throw .badRequest("transaction \(transactionID) bought \(record.productID), not \(identifier)", code: "product_mismatch")
            }
            product = identifier
            waived.insert(.trustProduct)
        }
        if record.appAccountToken != Self.appAccountToken(for: user) {
            guard waivers.contains(.anyAccount) else {
                throw .badRequest("transaction \(transactionID) was bought for another user, not \(user)", code: "not_this_users_transaction")
            }
            waived.insert(.anyAccount)
        }
        guard let amount = ShopStore.bundleAmount(of: product) else {
            throw .badRequest("unknown cheer bundle '\(product)'", code: "unknown_product")
        }
        var quantity = record.quantity
        if waivers.contains(.ignoreQuantity), quantity != 1 {
            quantity = 1
            waived.insert(.ignoreQuantity)
        }
        return VerifiedPurchase(transaction: record, credit: amount * quantity, waived: waived)
    }

    static func millis(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded(.down)) }
}
