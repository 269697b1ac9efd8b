import Foundation
import Hummingbird
import StubCore

/// `/_stub/appstore/*`: the App Store's side made by hand, as StoreKit's sandbox and App Store Connect
/// would make it (no auth, never faulted but for the `keep_refunded` check a refund makes).
///
/// - `POST /_stub/appstore/purchases` `{"product_id", "quantity", "customer", "user", "bundle_id", "type"}`
///   (all but `product_id` optional: 1, `sandbox-1`, `qa-alice`, the stand-in's app, `Consumable`) makes a
///   purchase the App Store has and the shop knows nothing of: 201 with its `transaction_id`.
/// - `POST /_stub/appstore/refunds` `{"transaction_id", "reason"}` revokes it now (`reason` 0 or 1, default
///   0); the shop takes back the cheer it credited for it, unless `keep_refunded` is in force.
/// - `GET /_stub/appstore/transactions` lists every purchase, and what the shop credited for each.
extension StubService {
    /// A purchase made.
    struct Purchased: ResponseEncodable {
        let transactionID: String
        let customer: String
        let user: String
        let productID: String
        let quantity: Int

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", customer, user, productID = "product_id", quantity
        }
    }

    /// A refund made: the shop's user it took cheer back from (null when it had credited nothing) and how much.
    struct Refunded: ResponseEncodable {
        let refunded: String
        let user: String?
        let debited: Int

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: FieldKey.self)
            try c.encode(refunded, forKey: "refunded")
            try c.encode(user, forKey: "user")  // null when the shop credited nothing
            try c.encode(debited, forKey: "debited")
        }
    }

    /// One purchase as `GET /_stub/appstore/transactions` lists it (null where there is nothing).
    struct Listed: Encodable {
        let transaction: AppStoreTransaction
        let credit: ShopStore.Credit?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: FieldKey.self)
            let t = transaction
            try c.encode(t.id, forKey: "transaction_id")
            try c.encode(t.customer, forKey: "customer")
            try c.encode(t.user, forKey: "user")
            try c.encode(t.productID, forKey: "product_id")
            try c.encode(t.quantity, forKey: "quantity")
            try c.encode(t.bundleID, forKey: "bundle_id")
            try c.encode(t.type, forKey: "type")
            try c.encode(t.purchaseDate, forKey: "purchase_date")
            try c.encode(t.revocationDate, forKey: "revocation_date")
            try c.encode(t.revocationReason, forKey: "revocation_reason")
            try c.encode(t.appAccountToken, forKey: "app_account_token")
            try c.encode(credit?.user, forKey: "credited_user")
            try c.encode(credit?.amount ?? 0, forKey: "credited")
            try c.encode(credit?.takenBack ?? 0, forKey: "taken_back")
        }
    }

    struct ListedTransactions: ResponseEncodable {
        let transactions: [Listed]
    }

    func addAppStoreControlRoutes(to router: Router<StubContext>) {
        let store = self.store, faults = self.faults
        router.post("/_stub/appstore/purchases") { request, context in
            let fields = try Self.fields(try await request.decode(as: JSON.self, context: context),
                                         allowed: ["product_id", "quantity", "customer", "user", "bundle_id", "type"])
            guard let productID = try Self.text(fields, "product_id") else {
                throw ShopError.badRequest("product_id is required (a product such as com.reiterate.cheer.200)", code: "invalid_purchase")
            }
            var quantity = 1
            if let value = fields["quantity"] {
                guard let number = value.intValue else { throw ShopError.badRequest("quantity must be a whole number in 1...10", code: "invalid_purchase") }
                quantity = number
            }
            let made = try await store.appStorePurchase(
                productID: productID, quantity: quantity, customer: try Self.text(fields, "customer") ?? "sandbox-1",
                user: try Self.text(fields, "user") ?? SeedData.alice, bundleID: try Self.text(fields, "bundle_id"),
                type: try Self.text(fields, "type") ?? "Consumable", now: Date().timeIntervalSince1970
            )
            return EditedResponse(status: .created, response: Purchased(
                transactionID: made.id, customer: made.customer, user: made.user, productID: made.productID, quantity: made.quantity
            ))
        }
        router.post("/_stub/appstore/refunds") { request, context in
            let fields = try Self.fields(try await request.decode(as: JSON.self, context: context), allowed: ["transaction_id", "reason"])
            let id: String
            if let number = fields["transaction_id"]?.uint64Value {
                id = String(number)
            } else if let text = try Self.text(fields, "transaction_id") {
                id = text
            } else {
                throw ShopError.badRequest("transaction_id is required", code: "invalid_refund")
            }
            var reason = 0
            if let value = fields["reason"] {
                guard let number = value.intValue, [0, 1].contains(number) else { throw ShopError.badRequest("reason must be 0 or 1", code: "invalid_refund") }
                reason = number
            }
            // A control endpoint, but the refund is the shop's to act on: keep_refunded is asked for explicitly.
            let keep = await faults.trigger(kind: .keepRefunded)
            guard let refund = await store.refund(transactionID: id, reason: reason, keepRefunded: keep != nil, now: Date().timeIntervalSince1970) else {
                if let keep { await faults.settle(applied: [], released: [keep]) }
                throw ShopError(status: 404, code: "not_found", message: "the App Store has no transaction \(id)")
            }
            if let keep {
                await faults.settle(applied: refund.kept ? [keep] : [], released: refund.kept ? [] : [keep])
                if refund.kept { context.notes.applied(keep) }
            }
            return Refunded(refunded: id, user: refund.user, debited: refund.debited)
        }
        router.get("/_stub/appstore/transactions") { _, _ in
            var listed: [Listed] = []
            for transaction in await store.appStoreTransactions() {
                listed.append(Listed(transaction: transaction, credit: await store.credit(of: transaction.id)))
            }
            return ListedTransactions(transactions: listed)
        }
    }

    /// A key of a hand-encoded body.
    struct FieldKey: CodingKey, ExpressibleByStringLiteral {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        init(stringLiteral value: String) { stringValue = value }
        var intValue: Int? { nil }
        init?(intValue: Int) { return nil }
    }

    /// The body's fields: a JSON object with no key outside `allowed`.
    static func fields(_ body: JSON, allowed: [String]) throws -> [String: JSON] {
        guard case let .object(pairs) = body else { throw ShopError.badRequest("request body must be a JSON object", code: "invalid_json") }
        var fields: [String: JSON] = [:]
        for (key, value) in pairs {
            guard allowed.contains(key) else { throw ShopError.badRequest("unknown key '\(key)'; keys: " + allowed.joined(separator: ", ")) }
            fields[key] = value
        }
        return fields
    }

    /// A text field; nil when absent or null.
    static func text(_ fields: [String: JSON], _ key: String) throws -> String? {
        guard let value = fields[key], value != .null else { return nil }
        guard let text = value.stringValue else { throw ShopError.badRequest("\(key) must be text") }
        return text
    }
}
