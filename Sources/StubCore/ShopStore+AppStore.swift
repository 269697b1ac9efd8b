/// What a refund did: the transaction as revoked, and what the shop took back for it.
public struct AppStoreRefund: Sendable, Equatable {
    public let transaction: AppStoreTransaction
    /// The user the shop had credited the transaction to; nil when it credited nothing for it.
    public let user: String?
    /// The cheer taken back from that user.
    public let debited: Int
    /// The shop kept cheer it would have taken back (the `keep_refunded` fault took effect).
    public let kept: Bool
}

/// The App Store's side, held in the shop's actor (`ShopStore.appStore`): purchases, the API's
/// lookups, refunds and the shop's verified purchases.
extension ShopStore {
    /// A sandbox purchase (`AppStoreLedger.purchase`); the shop's state does not change.
    public func appStorePurchase(productID: String, quantity: Int = 1, customer: String = "sandbox-1", user: String = SeedData.alice,
                                 bundleID: String? = nil, type: String = "Consumable", now: Double) throws(ShopError) -> AppStoreTransaction {
        try appStore.purchase(productID: productID, quantity: quantity, customer: customer, user: user, bundleID: bundleID, type: type, now: now)
    }

    /// Every purchase the App Store holds, oldest first (any app's).
    public func appStoreTransactions() -> [AppStoreTransaction] { appStore.transactions }

    /// Get Transaction Info's lookup (`AppStoreLedger.transaction(id:)`).
    public func appStoreTransaction(id: String) throws(AppStoreError) -> AppStoreTransaction {
        try appStore.transaction(id: id)
    }

    /// A page of Get Transaction History or Get Refund History (`AppStoreLedger.page`).
    public func appStorePage(_ list: AppStoreLedger.List, of transactionID: String, revision: String?) throws(AppStoreError) -> AppStorePage {
        try appStore.page(list, of: transactionID, revision: revision)
    }

    /// The App Store revokes the transaction at `now`; if the shop had credited it, it takes that cheer
    /// back from the user it credited, unless `keepRefunded` (the `keep_refunded` fault). Nil for an
    /// unknown id; a transaction refunded before is answered as it stands, nothing more taken back.
    public func refund(transactionID: String, reason: Int, keepRefunded: Bool = false, now: Double) -> AppStoreRefund? {
        guard let before = appStore.transactions.first(where: { $0.id == transactionID }),
              let revoked = appStore.refund(id: transactionID, reason: reason, now: now)
        else { return nil }
        let credited = credit(of: transactionID)
        let owed = credited.map { $0.amount - $0.takenBack } ?? 0
        if before.isRevoked || owed == 0 {
            return AppStoreRefund(transaction: revoked, user: credited?.user, debited: 0, kept: false)
        }
        if keepRefunded {
            return AppStoreRefund(transaction: revoked, user: credited?.user, debited: 0, kept: true)
        }
        let taken = takeBack(transactionID, now: now)
        return AppStoreRefund(transaction: revoked, user: taken?.user, debited: taken?.amount ?? 0, kept: false)
    }

    /// A purchase verified with the App Store first (`AppStoreLedger.verify`), then credited with what
    /// the App Store's record says (`purchaseLeniently`), in one step. `transaction` is the id's key
    /// (`text:` and the digits for one sent as text: looked up by its digits). Answers the outcome and the
    /// waivers that changed it.
    public func verifiedPurchase(user: String, identifier: String, transaction: String, waivers: Set<AppStoreWaiver> = [],
                                 lenient: Set<Leniency> = [], quirks: Set<WriteQuirk> = [],
                                 now: Double = 0) throws -> (outcome: WriteOutcome, waived: Set<AppStoreWaiver>) {
        let id = transaction.hasPrefix("text:") ? String(transaction.dropFirst(5)) : transaction
        let verified = try appStore.verify(transactionID: id, identifier: identifier, user: user, waivers: waivers)
        let outcome = try purchaseLeniently(user: user, identifier: identifier, transaction: transaction, lenient: lenient, quirks: quirks,
                                            credit: verified.credit, now: now)
        return (outcome, verified.waived)
    }

    /// What the shop credits without asking the App Store differs from what verifying would credit: the
    /// verification would refuse, or credit another amount (the `unverified_credit` fault took effect).
    public func verifyingWouldDiffer(user: String, identifier: String, transaction: String, credited: Int) -> Bool {
        let id = transaction.hasPrefix("text:") ? String(transaction.dropFirst(5)) : transaction
        guard let verified = try? appStore.verify(transactionID: id, identifier: identifier, user: user) else { return true }
        return verified.credit != credited
    }
}
