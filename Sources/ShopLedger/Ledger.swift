import AppStoreRecord
import Foundation
import ShopAPI

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
    /// A credit whose amount was not judged (not seen, or not among the bundles): the line says so, and an
    /// all-clear counts it as not covered.
    public var amountUnjudged = false

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
    /// Lines that judge nothing: the ledger is incomplete (a credit not checked, a purchase not seen).
    public var unchecked: Int { lines.filter { $0.verdict == .notChecked || $0.verdict == .notSeen }.count }
    /// Credited lines whose amount was not judged: what an all-clear did not cover.
    public var amountsUnjudged: Int { lines.filter { $0.amountUnjudged && !$0.isFinding }.count }

    /// Judges. `history` is the customer's listing (every record checked); `refunds` the refund
    /// listing's records (a revocation may show there before the history has it); `lookups` what the
    /// App Store said of each credited id the history lacks; `events` the backend's, in time order;
    /// `catalog` the cheer of each product id (the environment's bundles).
    public static func judge(history: [CheckedRecord], refunds: [CheckedRecord] = [], lookups: [String: Lookup], events: [ShopEvent],
                             catalog: [String: Int]) -> Ledger {
        // The same exchange read twice (a HAR given twice, two HARs that overlap) counts once.
        var kept = Set<String>()
        let unique = events.filter { e in
            guard let id = e.requestID else { return true }
            return kept.insert("\(id) \(e.at?.timeIntervalSince1970 ?? 0) \(e.source)").inserted
        }
        let events = unique.enumerated().sorted { ($0.element.at ?? .distantPast, $0.offset) < ($1.element.at ?? .distantPast, $1.offset) }.map(\.element)
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
        // The shop users who posted this customer's purchases: another customer's credit is this ledger's for them.
        let customersUsers = Set(events.filter { e in
            guard let p = e.purchase else { return false }
            return ours[p.transactionID.description] != nil
        }.compactMap(\.user))
        let judge = Judge(events: events, catalog: catalog, customersUsers: customersUsers)
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
