import AppStoreRecord
import Foundation
import ShopAPI
import ShopModel

// The ledger's read-and-judge, out of the executable (issue 44, item 5): the App Store read `ledger` and the
// Purchases tab share, and `ledger --probe --yes`'s posts. The command parses, sends through these, and prints.

/// What the App Store says of the customer: the history from the first id it knows, the refunds, and a
/// lookup of each credited id the history lacks.
public struct LedgerSources: Sendable {
    public var history: Listing
    public var refunds: Listing
    public var lookups: [String: Lookup]

    /// Credited ids looked up one by one at most (the rest are "not checked").
    public static let maxLookups = 200
    /// Ids tried for the history when the first is unknown to the App Store.
    public static let maxCandidates = 5

    /// The ledger of this read against `events`, by the environment's cheer per product: `ledger` and the TUI judge alike.
    public func judge(_ events: [ShopEvent], catalog: [String: Int]) -> Ledger {
        Ledger.judge(history: history.records, refunds: refunds.records, lookups: lookups, events: events, catalog: catalog)
    }

    /// Every verified transaction read (the history's, the refunds', the lookups'), a refunded record kept over another.
    public var transactions: [String: AppStoreTransaction] {
        var byID: [String: AppStoreTransaction] = [:]
        let looked = lookups.values.compactMap { lookup -> AppStoreTransaction? in
            if case let .record(.verified(t)) = lookup { t } else { nil }
        }
        for t in (history.records + refunds.records).compactMap(\.transaction) + looked where byID[t.transactionID]?.isRevoked != true {
            byID[t.transactionID] = t
        }
        return byID
    }

    /// The ids to start the customer's history from: those given, then those posted in `events`, each once,
    /// at most `maxCandidates`.
    public static func candidates(given: [String], events: [ShopEvent]) -> [String] {
        let learned = events.compactMap { event -> String? in
            if case let .number(n)? = event.purchase?.transactionID { String(n) } else { nil }
        }
        var candidates: [String] = []
        for id in given + learned where !candidates.contains(id) { candidates.append(id) }
        return Array(candidates.prefix(maxCandidates))
    }

    /// The customer's history from the first candidate the App Store knows, the refunds, and a lookup of
    /// every credited id the history lacks (at most `maxLookups`).
    public static func read(client: AppStoreClient, candidates: [String], events: [ShopEvent]) async -> Result<LedgerSources, AppStoreFailure> {
        var history: Listing?
        var anchor = ""
        var lastFailure = AppStoreFailure.apple(status: 404, code: 4_040_010, message: "Transaction id not found.")
        for id in candidates {
            switch await client.history(of: id) {
            case let .success(listing):
                history = listing
                anchor = id
            case let .failure(failure):
                lastFailure = failure
                // Only "not known" moves on to the next id; any other failure is the App Store's state.
                guard case let .apple(404, code, _) = failure, code == nil || code == 4_040_010 else { return .failure(failure) }
            }
            if history != nil { break }
        }
        guard let history else { return .failure(lastFailure) }
        // The listing must be the customer's of the id asked for: it lists that id (unless nothing in it verified).
        let verified = history.records.compactMap(\.transaction)
        if !verified.isEmpty, !verified.contains(where: { $0.transactionID == anchor }) {
            return .failure(.unreadable(what: "the transaction history of \(anchor) (it does not list \(anchor))"))
        }
        let refunds: Listing
        switch await client.refunds(of: anchor) {
        case let .success(listing): refunds = listing
        case let .failure(failure): return .failure(failure)
        }
        var lookups: [String: Lookup] = [:]
        for id in Ledger.lookupsNeeded(history: history.records, refunds: refunds.records, events: events).prefix(maxLookups) {
            switch await client.transaction(id) {
            case let .success(record?): lookups[id] = .record(record)
            case .success(nil): lookups[id] = .unknown
            case let .failure(failure): lookups[id] = .failed(failure)
            }
        }
        return .success(LedgerSources(history: history, refunds: refunds, lookups: lookups))
    }
}

/// `ledger --probe --yes`: each transaction posted once more with its own product id, between two settled
/// balance reads.
public enum LedgerProbe {
    public struct Run: Sendable {
        public var results: [String: ProbeResult] = [:]
        /// What the balance did across the probe, when it was read; a finding when it moved otherwise than the 200s say.
        public var balanceWords: String?
        public var balanceFinding = false
        public init() {}
    }

    /// Posts each of `transactions` for `user` and judges what the balance did across them (`catalog`: the cheer
    /// of each product the environment sells).
    public static func run(_ transactions: [AppStoreTransaction], client: ShopClient, user: String, catalog: [String: Int]) async throws -> Run {
        var run = Run()
        let before = await settledBalance(client, user: user)
        var credited = 0
        // A credit whose cheer is not known (a product outside the bundles) leaves the balance unjudged.
        var creditKnown = true
        for t in transactions {
            guard let id = UInt64(t.transactionID) else { continue }
            let post = PurchaseCheer(ShopWrite.Purchase(identifier: t.productID, transactionID: .number(id)), user: user)
            do {
                let answer = try await client.sendAnswered(post)
                run.results[t.transactionID] = .credited(requestID: answer.requestID)
                let (cheer, overflow) = (catalog[t.productID] ?? 0).multipliedReportingOverflow(by: t.quantity)
                let (sum, past) = credited.addingReportingOverflow(cheer)
                if catalog[t.productID] == nil || overflow || past { creditKnown = false } else { credited = sum }
            } catch let error as ShopAPIError {
                if error.status == 409 {
                    run.results[t.transactionID] = .alreadyCredited(requestID: error.requestID)
                } else if let status = error.status, case let .http(_, _, code, _, _, _) = error {
                    run.results[t.transactionID] = .refused(status: status, code: code, requestID: error.requestID)
                } else if let status = error.status {
                    run.results[t.transactionID] = .refused(status: status, code: nil, requestID: error.requestID)
                } else {
                    run.results[t.transactionID] = .unanswered
                }
            }
        }
        let after = await settledBalance(client, user: user)
        if let before, let after, creditKnown {
            let unanswered = run.results.values.contains(.unanswered)
            let (moved, overflow) = after.subtractingReportingOverflow(before)
            if overflow {
                run.balanceWords = "the balance before and after the probe is past what can be compared: not judged"
            } else if moved == credited {
                run.balanceWords = "the balance went from \(before) to \(after), as the probe's answers say"
            } else if !unanswered {
                run.balanceWords = "the balance went from \(before) to \(after); the probe's answers account for +\(credited) (its 200s), so it moved otherwise than they say"
                run.balanceFinding = true
            }
        } else if !creditKnown {
            run.balanceWords = "a probe credited a product outside the environment's bundles: what it changed is not judged"
        } else {
            run.balanceWords = "the balance before and after the probe was not settled (two reads disagreed or failed): what the probe changed is not judged"
        }
        return run
    }

    /// The balance when two reads in a row agree, by the one rule (`ReadRule`: a third read after 1 s when the
    /// first two disagree); nil when no two agree (or a read fails).
    static func settledBalance(_ client: ShopClient, user: String) async -> Int? {
        guard let reads = try? await ReadRule<Int>(twoAgree: ==).reads({ try await client.send(Balance(user: user)).balance }), reads.met else { return nil }
        return reads.last
    }

}

extension LedgerSources {
    /// What `ledger --probe` posts: every paid consumable of the customer with the App Store's own product id, the
    /// refunded ones too (the backend must refuse those, and the probe judges what it answers), each once; and
    /// which of them were refunded.
    public var probeCandidates: (probes: [AppStoreTransaction], refunded: Set<String>) {
        var seen = Set<String>()
        let records = (history.records + refunds.records).compactMap(\.transaction)
        let refunded = Set(records.filter(\.isRevoked).map(\.transactionID))
        return (records.filter { $0.isConsumable && UInt64($0.transactionID) != nil && seen.insert($0.transactionID).inserted }, refunded)
    }
}
