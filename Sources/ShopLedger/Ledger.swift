import AppStoreRecord
import Foundation
import ShopAPI

/// What the ledger says of one App Store transaction, or of one credit the backend gave.
public enum Verdict: String, Sendable, CaseIterable, Codable {
    /// Posted once, credited the product's cheer × quantity (or credited, the amount not seen).
    case credited
    /// Paid in the App Store; the backend never answered a post of it with a credit.
    case notCredited = "not credited"
    /// Credited another amount than the product's cheer × quantity, or under another product.
    case creditMismatch = "credit mismatch"
    case creditedTwice = "credited twice"
    /// The App Store revoked it (a refund).
    case refunded
    /// A credit with no App Store payment behind it.
    case notPaid = "not paid"
    /// A signed record that did not verify: no verdict rests on it.
    case notVerified = "not verified"
    /// A credit that could not be checked (the App Store could not be read for it).
    case notChecked = "not checked"
}

/// Whose fault a finding is.
public enum Blame: String, Sendable, Codable {
    /// The app: it never posted a purchase it made, or posted it wrong.
    case app
    /// The backend: it refused or failed a real purchase, credited wrongly, or kept refunded cheer.
    case server
    /// The evidence does not say (an answer lost).
    case unknown = "not known"
}

/// One line of the ledger.
public struct LedgerLine: Sendable, Equatable {
    public var at: Date?
    /// The App Store's id (for a record that did not verify: the id it claims, unbelieved).
    public var transactionID: String
    public var productID: String?
    public var quantity: Int?
    /// The backend's request ids of every post of it.
    public var requestIDs: [String]
    public var user: String?
    public var verdict: Verdict
    public var blame: Blame?
    /// What was seen, in plain words.
    public var words: String
    /// Whether it is a finding (a deviation of the backend or the app).
    public var isFinding: Bool

    public init(at: Date?, transactionID: String, productID: String?, quantity: Int?, requestIDs: [String], user: String?, verdict: Verdict,
                blame: Blame?, words: String, isFinding: Bool) {
        self.at = at
        self.transactionID = transactionID
        self.productID = productID
        self.quantity = quantity
        self.requestIDs = requestIDs
        self.user = user
        self.verdict = verdict
        self.blame = blame
        self.words = words
        self.isFinding = isFinding
    }
}

/// What the App Store said of a credited id that is not in the customer's history.
public enum Lookup: Sendable, Equatable {
    /// Not known to the App Store (for this app).
    case unknown
    case record(CheckedRecord)
    case failed(AppStoreFailure)
}

/// The ledger: the App Store's transactions of one customer held against the backend's purchase posts.
public struct Ledger: Sendable, Equatable {
    public var lines: [LedgerLine]
    public var findings: Int { lines.filter(\.isFinding).count }
    public var unchecked: Int { lines.filter { $0.verdict == .notChecked }.count }

    /// Judges. `history` is the customer's listing (every record checked); `refunds` the refund
    /// listing's records (a revocation may show there before the history has it); `lookups` what the
    /// App Store said of each credited id the history lacks; `events` the backend's, in time order;
    /// `catalog` the cheer of each product id (the environment's bundles).
    public static func judge(history: [CheckedRecord], refunds: [CheckedRecord] = [], lookups: [String: Lookup], events: [ShopEvent],
                             catalog: [String: Int]) -> Ledger {
        let events = events.enumerated().sorted { ($0.element.at ?? .distantPast, $0.offset) < ($1.element.at ?? .distantPast, $1.offset) }.map(\.element)
        var lines: [LedgerLine] = []
        var ours: [String: AppStoreTransaction] = [:]
        var order: [String] = []
        for record in history + refunds {
            switch record {
            case let .verified(t):
                if ours[t.transactionID] == nil { order.append(t.transactionID) }
                // A later record of the same transaction (the refund listing's) carries its revocation.
                if ours[t.transactionID]?.isRevoked != true { ours[t.transactionID] = t }
            case let .notVerified(why):
                lines.append(LedgerLine(at: nil, transactionID: why.claimedTransactionID ?? "?", productID: nil, quantity: nil, requestIDs: [],
                                        user: nil, verdict: .notVerified, blame: nil,
                                        words: "the App Store's record is not believed: " + why.words, isFinding: true))
            }
        }
        let judge = Judge(events: events, catalog: catalog)
        for id in order {
            guard let transaction = ours[id] else { continue }
            if let line = judge.line(for: transaction) { lines.append(line) }
        }
        // Every credit the history does not explain.
        var seen = Set<String>()
        for (index, event) in events.enumerated() where event.isCredit {
            guard let purchase = event.purchase else { continue }
            let id = purchase.transactionID.description
            if case let .number(n) = purchase.transactionID, ours[String(n)] != nil { continue }
            if case let .text(s) = purchase.transactionID, ours[s] != nil { continue }
            guard seen.insert(id).inserted else { continue }
            let credits = events[index...].filter { $0.isCredit && $0.purchase?.transactionID == purchase.transactionID }
            lines.append(judge.unpaid(event, purchase, credits: credits, lookup: lookups[id]))
        }
        return Ledger(lines: lines.enumerated().sorted { ($0.element.at ?? .distantPast, $0.offset) < ($1.element.at ?? .distantPast, $1.offset) }.map(\.element))
    }

    /// The ids the ledger must look up one by one: credited, numeric, and not in the history.
    public static func lookupsNeeded(history: [CheckedRecord], refunds: [CheckedRecord] = [], events: [ShopEvent]) -> [String] {
        let known = Set((history + refunds).compactMap(\.transaction?.transactionID))
        var needed: [String] = []
        for event in events where event.isCredit {
            guard case let .number(n)? = event.purchase?.transactionID, !known.contains(String(n)), !needed.contains(String(n)) else { continue }
            needed.append(String(n))
        }
        return needed
    }
}

/// The judging of one ledger, over the backend's events in time order.
struct Judge {
    let events: [ShopEvent]
    let catalog: [String: Int]

    func posts(of id: String) -> [Int] {
        events.indices.filter { i in
            switch events[i].purchase?.transactionID {
            case let .number(n)?: String(n) == id
            case let .text(s)?: s == id
            default: false
            }
        }
    }

    /// The cheer a 200 at `index` added: its answer less the same user's balance seen just before it,
    /// with no write between them that left the balance unknown. Nil when that was not seen.
    func credited(at index: Int) -> (amount: Int, before: ShopEvent)? {
        let post = events[index]
        guard let after = post.balance else { return nil }
        for i in stride(from: index - 1, through: 0, by: -1) where events[i].user == post.user {
            let e = events[i]
            if let balance = e.balance { return (after - balance, e) }
            if e.isWrite { return nil }  // a write between with no balance in its answer: the start is unknown
        }
        return nil
    }

    func line(for t: AppStoreTransaction) -> LedgerLine? {
        let indices = posts(of: t.transactionID)
        let credits = indices.filter { events[$0].status == 200 }
        // Only cheer is the shop's business: another kind of product matters only when it was credited.
        guard t.isConsumable || !credits.isEmpty else { return nil }
        let ids = indices.compactMap { events[$0].requestID }
        let user = indices.first.flatMap { events[$0].user }
        let expected = catalog[t.productID].map { $0 * t.quantity }
        var line = LedgerLine(at: t.purchaseDate, transactionID: t.transactionID, productID: t.productID, quantity: t.quantity, requestIDs: ids,
                              user: user, verdict: .credited, blame: nil, words: "", isFinding: false)
        func set(_ verdict: Verdict, _ blame: Blame?, _ words: String, finding: Bool = true) -> LedgerLine {
            line.verdict = verdict
            line.blame = blame
            line.words = words
            line.isFinding = finding
            return line
        }
        if !t.isConsumable {
            return set(.notPaid, .server, "credited as cheer, but the App Store sold it as \(t.type.isEmpty ? "an unknown type" : t.type), not a consumable")
        }
        if let revoked = t.revocationDate { return refunded(t, revoked: revoked, credits: credits, line: &line) }
        if credits.isEmpty {
            if indices.isEmpty { return set(.notCredited, .app, "paid in the App Store, never posted to the backend") }
            let unanswered = indices.filter { events[$0].status == nil }
            if !unanswered.isEmpty {
                return set(.notCredited, .unknown, "posted \(Self.times(indices.count)), no credit seen; \(unanswered.count == 1 ? "one answer was" : "\(unanswered.count) answers were") lost, so whether it was credited is not known (read the balance, or run --probe)")
            }
            let statuses = indices.compactMap { events[$0].status }.map(String.init).joined(separator: ", ")
            return set(.notCredited, .server, "paid in the App Store; the backend refused or failed every post of it (\(statuses))")
        }
        if credits.count >= 2 { return set(.creditedTwice, .server, "credited \(credits.count) times; the contract credits a transaction once") }
        let credit = events[credits[0]]
        if let posted = credit.purchase?.identifier, posted != t.productID {
            let seen = credited(at: credits[0]).map { ", credited \($0.amount)" } ?? ""
            return set(.creditMismatch, .server, "posted as \(posted)\(seen), but the App Store sold \(t.quantity) × \(t.productID); the backend took the app's product id instead of the App Store's")
        }
        guard let expected else {
            return set(.credited, nil, "credited; \(t.productID) is not among the environment's bundles, so the amount is not judged", finding: false)
        }
        guard let seen = credited(at: credits[0]) else {
            return set(.credited, nil, "credited; the amount was not seen (no balance of the user just before the post)", finding: false)
        }
        if seen.amount != expected {
            return set(.creditMismatch, .server, "credited \(seen.amount) (balance \(seen.before.balance ?? 0) → \(credit.balance ?? 0)), the App Store's record is \(t.quantity) × \(t.productID) = \(expected)")
        }
        return set(.credited, nil, "credited \(expected)", finding: false)
    }

    func refunded(_ t: AppStoreTransaction, revoked: Date, credits: [Int], line: inout LedgerLine) -> LedgerLine {
        line.verdict = .refunded
        line.blame = nil
        line.isFinding = false
        let reason = t.revocationReason == 1 ? " (reason: an issue in the app)" : t.revocationReason == 0 ? " (reason: other)" : ""
        guard let first = credits.first else {
            line.words = "refunded by the App Store\(reason); it was never credited, so there was nothing to take back"
            return line
        }
        let amount = credited(at: first)?.amount ?? catalog[t.productID].map { $0 * t.quantity }
        let user = events[first].user
        // The user's balance seen last before the refund and first after it, with no write between.
        let before = events.lastIndex { $0.user == user && $0.balance != nil && ($0.at ?? .distantFuture) < revoked }
        let after = events.firstIndex { $0.user == user && $0.balance != nil && ($0.at ?? .distantPast) >= revoked }
        guard let amount, let before, let after, before < after, let from = events[before].balance, let to = events[after].balance,
              !events[(before + 1)..<after].contains(where: { $0.user == user && $0.isWrite })
        else {
            line.words = "refunded by the App Store\(reason); whether the backend took the cheer back was not seen (no balance read before and after the refund with no write between)"
            return line
        }
        if to == from - amount {
            line.words = "refunded by the App Store\(reason); the backend took back \(amount) (balance \(from) → \(to))"
        } else if to == from {
            line.words = "refunded by the App Store\(reason); the backend kept the \(amount) cheer (balance \(from) before and after)"
            line.blame = .server
            line.isFinding = true
        } else {
            line.words = "refunded by the App Store\(reason); the balance moved by \(to - from) across the refund, not by −\(amount): not judged"
        }
        return line
    }

    /// A credit whose transaction is not in the customer's history.
    func unpaid(_ event: ShopEvent, _ purchase: ShopWrite.Purchase, credits: [ShopEvent], lookup: Lookup?) -> LedgerLine {
        var line = LedgerLine(at: event.at, transactionID: purchase.transactionID.description, productID: purchase.identifier, quantity: nil,
                              requestIDs: credits.compactMap(\.requestID), user: event.user, verdict: .notPaid, blame: .server, words: "", isFinding: true)
        let twice = credits.count > 1 ? " (credited \(credits.count) times)" : ""
        guard case .number = purchase.transactionID else {
            line.words = "credited\(twice), but \(purchase.transactionID) is not an App Store transaction id"
            return line
        }
        switch lookup {
        case nil:
            line.verdict = .notChecked
            line.blame = nil
            line.isFinding = false
            line.words = "credited\(twice); not looked up in the App Store (past the ledger's bound of lookups)"
        case .unknown?:
            line.words = "credited\(twice), but the App Store does not know this transaction (for this app); the contract says the backend verifies first"
        case let .failed(failure)?:
            line.verdict = .notChecked
            line.blame = nil
            line.isFinding = false
            line.words = "credited\(twice); its App Store record could not be read: " + failure.words
        case let .record(.notVerified(why))?:
            line.verdict = .notVerified
            line.blame = nil
            line.words = "credited\(twice); the App Store's record of it is not believed: " + why.words
        case let .record(.verified(t))?:
            line.quantity = t.quantity
            if !t.isConsumable {
                line.words = "credited\(twice), but the App Store sold it as \(t.type), not a consumable"
            } else {
                line.words = "credited\(twice), but it is another customer's purchase (not in this customer's App Store history)"
            }
        }
        return line
    }

    static func times(_ n: Int) -> String { n == 1 ? "once" : n == 2 ? "twice" : "\(n) times" }
}
