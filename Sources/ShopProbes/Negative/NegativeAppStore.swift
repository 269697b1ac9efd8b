import AppStoreRecord
import Foundation
import ShopAPI
import ShopViewModels

/// What `negative`'s App Store cases send, read from the App Store before the run (issue 38): real
/// transactions of the sandbox tester, verified, and an id the App Store confirms it does not know.
/// A fact that could not be had leaves its case not judged, with why.
public struct AppStoreFacts: Sendable {
    /// The tester's oldest unrefunded consumable: the setup purchase the replay cases resend.
    var setup: AppStoreTransaction?
    /// Its newest other unrefunded consumable: posted under another product id.
    var spare: AppStoreTransaction?
    /// A refunded one.
    var refunded: AppStoreTransaction?
    /// An id the App Store said it does not know.
    var unknownID: UInt64?
    /// Another sandbox tester's transaction (`--other-transaction`), verified, not in this tester's history.
    var otherTester: AppStoreTransaction?
    /// Why a fact is missing, by the case that needs it.
    var missing: [String: String] = [:]

    /// At most this many random ids are tried for one the App Store does not know.
    static let unknownTries = 3

    public static func read(_ client: AppStoreClient, transaction: String?, other: String?) async -> Result<AppStoreFacts, AppStoreFailure> {
        var facts = AppStoreFacts()
        guard let transaction else {
            let why = "needs --transaction (an App Store transaction id of the sandbox tester)"
            facts.missing = ["appstore-other-product": why, "appstore-refunded": why]
            return await facts.withUnknownAndOther(client, other: other, known: [])
        }
        let history: Listing
        switch await client.history(of: transaction) {
        case let .success(listing): history = listing
        case let .failure(failure): return .failure(failure)
        }
        let refunds: Listing
        switch await client.refunds(of: transaction) {
        case let .success(listing): refunds = listing
        case let .failure(failure): return .failure(failure)
        }
        var byID: [String: AppStoreTransaction] = [:]
        for t in (history.records + refunds.records).compactMap(\.transaction) where UInt64(t.transactionID) != nil && t.isConsumable {
            if byID[t.transactionID]?.isRevoked != true { byID[t.transactionID] = t }
        }
        let ordered = byID.values.sorted { ($0.purchaseDate ?? .distantPast, $0.transactionID) < ($1.purchaseDate ?? .distantPast, $1.transactionID) }
        let unrefunded = ordered.filter { !$0.isRevoked }
        facts.setup = unrefunded.first
        facts.spare = unrefunded.count >= 2 ? unrefunded.last : nil
        facts.refunded = ordered.last { $0.isRevoked }
        if facts.spare == nil {
            facts.missing["appstore-other-product"] = "the tester has fewer than two unrefunded purchases: buy one more in the sandbox"
        }
        if facts.refunded == nil {
            facts.missing["appstore-refunded"] = "the tester has no refunded purchase: refund one in the sandbox (Settings → App Store → Sandbox Account)"
        }
        return await facts.withUnknownAndOther(client, other: other, known: Set(byID.keys))
    }

    private func withUnknownAndOther(_ client: AppStoreClient, other: String?, known: Set<String>) async -> Result<AppStoreFacts, AppStoreFailure> {
        var facts = self
        for _ in 0..<Self.unknownTries {
            let id = UInt64.random(in: 1_000_000_000...UInt64(Int64.max))
            switch await client.transaction(String(id)) {
            case .success(nil): facts.unknownID = id
            case .success: continue
            case let .failure(failure): return .failure(failure)
            }
            break
        }
        if facts.unknownID == nil { facts.missing["appstore-unknown-id"] = "every random id tried is known to the App Store" }
        guard let other else {
            facts.missing["appstore-other-tester"] = "needs --other-transaction (a transaction id of another sandbox tester)"
            return .success(facts)
        }
        switch await client.transaction(other) {
        case let .success(.verified(t)?) where !known.contains(t.transactionID) && t.isConsumable && UInt64(t.transactionID) != nil:
            facts.otherTester = t
        case .success(.verified?):
            facts.missing["appstore-other-tester"] = "--other-transaction is in this tester's own history (or not a consumable)"
        case let .success(.notVerified(why)?):
            facts.missing["appstore-other-tester"] = "--other-transaction's record is not believed: " + why.words
        case .success(nil):
            facts.missing["appstore-other-tester"] = "the App Store does not know --other-transaction"
        case let .failure(failure):
            return .failure(failure)
        }
        return .success(facts)
    }
}

extension NegativeCase {
    /// The cases of an environment with an App Store table: real transactions the shop must refuse.
    public static func appStoreCases(bundles: [CheerBundle]) -> [NegativeCase] {
        let verifies = Source.words(.purchaseCheer, "verifies the transaction with the App Store before it credits")
        func buy(_ name: String, _ what: String, _ body: @escaping @Sendable (NegativeFacts) -> String?) -> NegativeCase {
            var c = NegativeCase(name: name, what: what, source: verifies, write: PurchaseCheer.endpoint.operation, pack: .none) { body($0) ?? "" }
            c.needs = { facts in body(facts) == nil ? facts.appStore?.missing[name] ?? "the App Store was not read" : nil }
            c.conflictSaysNothing = true
            return c
        }
        /// A bundle of the environment other than `product` (as a JSON string).
        let identifiers = bundles.map(\.identifier)
        let another: @Sendable (String) -> String = { product in
            NegativeRun.quoted(identifiers.first { $0 != product } ?? "com.reiterate.cheer.50")
        }
        return [
            buy("appstore-unknown-id", "a purchase with a transaction id the App Store does not know") { f in
                f.appStore?.unknownID.map { #"{"identifier":\#(f.bundle),"transaction_id":\#($0)}"# } },
            buy("appstore-other-product", "a real transaction posted under another bundle's product id") { f in
                f.appStore?.spare.map { #"{"identifier":\#(another($0.productID)),"transaction_id":\#($0.transactionID)}"# } },
            buy("appstore-refunded", "a transaction the App Store refunded") { f in
                f.appStore?.refunded.map { #"{"identifier":\#(NegativeRun.quoted($0.productID)),"transaction_id":\#($0.transactionID)}"# } },
            buy("appstore-other-tester", "another sandbox tester's transaction, for this user") { f in
                f.appStore?.otherTester.map { #"{"identifier":\#(NegativeRun.quoted($0.productID)),"transaction_id":\#($0.transactionID)}"# } },
        ]
    }
}
