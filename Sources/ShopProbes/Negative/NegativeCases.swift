import AppStoreRecord
import Foundation
import JSONTokens
import ShopAPI
import ShopViewModels
import TerminalText

/// One write the shop must refuse: its name, what it sends and why it must be refused.
public struct NegativeCase: Sendable {
    /// The pack whose `cheer_total` the case's write could change: the one its body names.
    public enum Pack: Sendable, Equatable {
        /// The body names no pack (a purchase, a spend without a product or with one that is not text).
        case none
        /// The pack of the live list the run spends on (`NegativeFacts.pack`).
        case tested
        /// A pack identifier the body names, not in the list.
        case named(String)
    }

    /// Where a case's rule comes from.
    public enum Source: Sendable, Equatable {
        /// A request field's rule in the contract's schema: `field` nil is the body itself.
        case field(OperationID, field: String?, rule: FieldRule)
        /// The contract's words about an answer of the operation (a 402, a 409).
        case words(OperationID, String)
        /// The shop's own data: its packs, users, the environment's bundles.
        case shop(String)

        /// A request field's rule (what the contract's schema says of it).
        public enum FieldRule: String, Sendable, Encodable {
            case type, required, minimum, format
        }

        /// `contract: spendCheer amount minimum 1`.
        public var text: String {
            switch self {
            case let .field(operation, field, rule):
                let detail: String
                switch (operation, field, rule) {
                case (_, _, .required): detail = ""
                case (.spendCheer, "amount", .minimum): detail = " 1"
                case (_, "transaction_id", .format): detail = " uint64"
                case (_, nil, .type): detail = " object"
                case (_, "transaction_id", .type), (_, "amount", .type): detail = " integer"
                case (_, _, .type): detail = " string"
                default: detail = ""
                }
                return "contract: \(operation.rawValue) \(field ?? "body") \(rule.rawValue)\(detail)"
            case let .words(operation, words): return "contract: \(operation.rawValue) \(words)"
            case let .shop(rule): return "shop rule: \(rule)"
            }
        }
    }

    /// A case as `--json` lists it (nothing sent): its name, what it sends, and its rule's source.
    public struct Listed: Encodable, Sendable {
        var name: String
        var what: String
        var source: String
        var operation: String?
        var field: String?
        var rule: String?

        public init(_ c: NegativeCase) {
            name = c.name
            what = c.what
            source = c.source.text
            switch c.source {
            case let .field(operation, field, rule): (self.operation, self.field, self.rule) = (operation.rawValue, field ?? "", rule.rawValue)
            case let .words(operation, _): self.operation = operation.rawValue
            case .shop: break
            }
        }
    }

    public var name: String
    public var what: String
    /// Where the rule comes from: the contract's field (type, required, minimum, format), its words, or a shop rule.
    public var source: Source
    /// The write's operation: its body goes as it is (`RawJSONWrite`), the contract's endpoint for it.
    public var write: OperationID
    /// Whether it sends for an unknown user (else the user tested).
    public var unknownUser = false
    /// The pack whose total it could change (the only one compared before and after).
    public var pack: Pack
    /// The body, from what the run knows (a pack, the balance, a bundle, a credited transaction id).
    public var body: @Sendable (NegativeFacts) -> String
    /// A 409 says nothing of this case's rule: the transaction was credited before, so the check the
    /// case is about (the App Store's) was never reached. Such an answer is not judged.
    public var conflictSaysNothing = false
    /// Why the case cannot be sent with what the run knows (it is then not judged); nil: it can.
    public var needs: @Sendable (NegativeFacts) -> String? = { _ in nil }

    /// The catalogue: the contract's request fields (spendCheer: amount integer, minimum 1, required;
    /// product string, required; comment string. purchaseCheer: identifier string, required; transaction_id integer,
    /// uint64, required) and the shop's rules (packs, bundles, users, balance, transactions).
    public static func catalogue(bundles: [CheerBundle]) -> [NegativeCase] {
        let notABundle = ["com.reiterate.cheer.7", "com.reiterate.negative.7"].first { id in !bundles.contains { $0.identifier == id } } ?? "negative.7"
        let unknownPack = "com.reiterate.pack.negative-test-unknown"
        func spend(_ name: String, _ what: String, _ source: Source, unknownUser: Bool = false, pack: Pack = .tested,
                   _ body: @escaping @Sendable (NegativeFacts) -> String) -> NegativeCase {
            NegativeCase(name: name, what: what, source: source, write: SpendCheer.endpoint.operation, unknownUser: unknownUser, pack: pack, body: body)
        }
        func buy(_ name: String, _ what: String, _ source: Source, unknownUser: Bool = false, _ body: @escaping @Sendable (NegativeFacts) -> String) -> NegativeCase {
            NegativeCase(name: name, what: what, source: source, write: PurchaseCheer.endpoint.operation, unknownUser: unknownUser, pack: .none, body: body)
        }
        /// A case that resends the setup purchase: not sent when the setup was not taken.
        func replay(_ c: NegativeCase) -> NegativeCase {
            var c = c
            c.needs = { facts in facts.credited == 0 ? "skipped, the setup purchase it resends was not taken" + (facts.setupFailed.map { " (\($0))" } ?? "") : nil }
            return c
        }
        return [
            spend("unknown-pack", "a spend of 1 on a product not in the pack list", .shop("packs"), pack: .named(unknownPack)) { _ in
                #"{"amount":1,"product":"\#(unknownPack)"}"# },
            spend("overspend", "a spend of the balance + 1", .words(.spendCheer, "402, balance too low")) {
                #"{"amount":\#($0.balance.plusSaturating(1)),"product":\#($0.pack)}"# },
            spend("amount-zero", "a spend of 0", .field(.spendCheer, field: "amount", rule: .minimum)) { #"{"amount":0,"product":\#($0.pack)}"# },
            spend("amount-negative", "a spend of −3", .field(.spendCheer, field: "amount", rule: .minimum)) { #"{"amount":-3,"product":\#($0.pack)}"# },
            spend("amount-fraction", "a spend of 1.5", .field(.spendCheer, field: "amount", rule: .type)) { #"{"amount":1.5,"product":\#($0.pack)}"# },
            spend("amount-as-text", "a spend with amount \"1\"", .field(.spendCheer, field: "amount", rule: .type)) { #"{"amount":"1","product":\#($0.pack)}"# },
            spend("amount-missing", "a spend without amount", .field(.spendCheer, field: "amount", rule: .required)) { #"{"product":\#($0.pack)}"# },
            spend("product-missing", "a spend without product", .field(.spendCheer, field: "product", rule: .required), pack: .none) { _ in #"{"amount":1}"# },
            spend("product-not-text", "a spend with product 42", .field(.spendCheer, field: "product", rule: .type), pack: .none) { _ in #"{"amount":1,"product":42}"# },
            spend("comment-not-text", "a spend with comment 42", .field(.spendCheer, field: "comment", rule: .type)) {
                #"{"amount":1,"product":\#($0.pack),"comment":42}"# },
            spend("body-not-object", "a spend whose body is an array", .field(.spendCheer, field: nil, rule: .type), pack: .none) { _ in "[]" },
            spend("unknown-user-spend", "a spend of 1 for a user the shop does not know", .shop("users"), unknownUser: true) {
                #"{"amount":1,"product":\#($0.pack)}"# },
            buy("not-a-bundle", "a purchase of \(notABundle)", .shop("bundles (the environment's list)")) {
                #"{"identifier":"\#(notABundle)","transaction_id":\#($0.freshTransaction)}"# },
            replay(buy("transaction-replayed", "a purchase with a transaction id already credited", .words(.purchaseCheer, "409, credited once")) {
                #"{"identifier":\#($0.creditedBundle),"transaction_id":\#($0.credited)}"# }),
            replay(buy("transaction-as-text", "the credited transaction id again, as a string", .field(.purchaseCheer, field: "transaction_id", rule: .type)) {
                #"{"identifier":\#($0.creditedBundle),"transaction_id":"\#($0.credited)"}"# }),
            buy("transaction-negative", "a purchase with transaction id −1", .field(.purchaseCheer, field: "transaction_id", rule: .format)) {
                #"{"identifier":\#($0.bundle),"transaction_id":-\#($0.freshTransaction % 1_000_000_000 + 1)}"# },
            buy("transaction-fraction", "a purchase with transaction id 1.5", .field(.purchaseCheer, field: "transaction_id", rule: .type)) {
                #"{"identifier":\#($0.bundle),"transaction_id":1.5}"# },
            buy("transaction-missing", "a purchase without transaction_id", .field(.purchaseCheer, field: "transaction_id", rule: .required)) { #"{"identifier":\#($0.bundle)}"# },
            buy("identifier-missing", "a purchase without identifier", .field(.purchaseCheer, field: "identifier", rule: .required)) {
                #"{"transaction_id":\#($0.freshTransaction)}"# },
            buy("identifier-not-text", "a purchase with identifier 42", .field(.purchaseCheer, field: "identifier", rule: .type)) {
                #"{"identifier":42,"transaction_id":\#($0.freshTransaction)}"# },
            buy("purchase-body-not-object", "a purchase whose body is an array", .field(.purchaseCheer, field: nil, rule: .type)) { _ in "[]" },
            buy("unknown-user-purchase", "a purchase for a user the shop does not know", .shop("users"), unknownUser: true) {
                #"{"identifier":\#($0.bundle),"transaction_id":\#($0.freshTransaction)}"# },
        ]
    }
}

/// What the cases' bodies are made from, read before they are sent.
public struct NegativeFacts: Sendable {
    /// A pack in the live list, as a JSON string.
    var pack: String
    var balance: Int
    /// A bundle of the environment, as a JSON string.
    var bundle: String
    /// A transaction id credited by the run's one setup purchase (0 when it was not).
    var credited: UInt64
    /// The bundle the setup purchase was posted with (a JSON string): with the App Store, its own product.
    var creditedBundle: String
    /// Why the setup purchase was not taken.
    var setupFailed: String?
    /// What the App Store said, when the environment has an App Store table (`negative`'s App Store cases).
    var appStore: AppStoreFacts?
    /// A transaction id never sent before (random).
    var freshTransaction: UInt64 { UInt64.random(in: 1_000_000...UInt64(Int64.max)) }
}

extension NegativeCase {
    /// Names given to `--only` that no case has (the error lists every case's).
    public struct UnknownNames: Error, Sendable { public var words: String }

    /// The cases `only` names (comma-separated); all of them when nil.
    public static func select(_ cases: [NegativeCase], only: String?) throws(UnknownNames) -> [NegativeCase] {
        guard let only else { return cases }
        let wanted = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        let unknown = wanted.subtracting(cases.map(\.name))
        guard unknown.isEmpty else {
            throw UnknownNames(words: "no case named \(unknown.sorted().joined(separator: ", ")); cases: \(cases.map(\.name).joined(separator: ", "))")
        }
        return cases.filter { wanted.contains($0.name) }
    }

    /// The cases listed, nothing sent: a line each (`--json`: an object each).
    public static func listing(_ cases: [NegativeCase], json: Bool) throws -> String {
        try cases.map { c in
            json ? try Output.jsonLine(Listed(c)) : "\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(c.what)  [\(c.source.text)]\n"
        }.joined()
    }
}
