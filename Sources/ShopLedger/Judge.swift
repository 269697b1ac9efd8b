import AppStoreRecord
import Foundation
import ShopAPI

/// The judging of one ledger, over the backend's events in time order. Every verdict rests on what the
/// events show; where they cannot show it (an amount with no balance just before, a purchase outside the
/// time they cover), the line says so and is no finding.
struct Judge {
    let events: [ShopEvent]
    let catalog: [String: Int]
    /// The shop users who posted the customer's purchases.
    let customersUsers: Set<String>
    /// From the first event's start to the last one's: the time the exchanges given cover.
    let window: ClosedRange<Date>?
    /// A purchase is "never posted" only when the exchanges go on at least this long after it: the app
    /// posts right after StoreKit's purchase, and a post still on its way is no finding.
    static let grace: TimeInterval = 5
    /// Statuses that say nothing about the purchase (sign-in, a proxy's, a timeout, rate limits).
    static let silent: Set<Int> = [401, 403, 407, 408, 429]

    init(events: [ShopEvent], catalog: [String: Int], customersUsers: Set<String> = []) {
        self.events = events
        self.catalog = catalog
        self.customersUsers = customersUsers
        let times = events.compactMap(\.at)
        if let first = times.min(), let last = times.max() { window = first...last } else { window = nil }
    }

    func posts(of id: String) -> [Int] {
        events.indices.filter { i in
            switch events[i].purchase?.transactionID {
            case let .number(n)?: String(n) == id
            case let .text(s)?: s == id
            default: false
            }
        }
    }

    /// The cheer `quantity` of `product` credits; nil for a product not among the bundles, a quantity
    /// below 1, or a product past what an Int holds.
    func cheer(_ product: String, _ quantity: Int) -> Int? {
        guard quantity >= 1, let each = catalog[product] else { return nil }
        let (total, overflow) = each.multipliedReportingOverflow(by: quantity)
        return overflow ? nil : total
    }

    /// The cheer a 200 at `index` added: its answer less the same user's balance seen just before it.
    /// Nil when that was not seen: no user named, a write between (or a write of no named user, or one
    /// with no time) whose answer left the balance unknown, or a read that had not ended when the post began.
    func credited(at index: Int) -> (amount: Int, before: ShopEvent)? {
        let post = events[index]
        guard let after = post.balance, let user = post.user, let start = post.at else { return nil }
        guard !events.contains(where: { $0.isWrite && $0.at == nil && ($0.user == nil || $0.user == user) }) else { return nil }
        for i in stride(from: index - 1, through: 0, by: -1) {
            let e = events[i]
            if e.isWrite && e.user == nil { return nil }
            guard e.user == user else { continue }
            if let balance = e.balance {
                guard let end = e.end, end <= start else { return nil }
                let (amount, overflow) = after.subtractingReportingOverflow(balance)
                return overflow ? nil : (amount, e)
            }
            if e.isWrite { return nil }
        }
        return nil
    }

    /// Whether the exchanges cover a purchase made at `date`: they began before it and went on `grace` after it.
    func covers(_ date: Date?) -> Bool {
        guard let date, let window else { return false }
        return window.lowerBound <= date && window.upperBound >= date + Self.grace
    }

    var coverage: String {
        guard let window else { return "no exchanges were given" }
        return "the exchanges given cover \(ISO8601.format(window.lowerBound)) to \(ISO8601.format(window.upperBound))"
    }

    func line(for t: AppStoreTransaction) -> LedgerLine? {
        let indices = posts(of: t.transactionID)
        let credits = indices.filter { events[$0].status == 200 }
        // Only cheer is the shop's business: another kind of product matters only when it was credited.
        guard t.isConsumable || !credits.isEmpty else { return nil }
        let user = indices.first.flatMap { events[$0].user }
        var line = LedgerLine(at: t.purchaseDate, transactionID: t.transactionID, productID: t.productID, quantity: t.quantity,
                              requestIDs: indices.compactMap { events[$0].requestID }, user: user, verdict: .credited, blame: nil, words: "",
                              isFinding: false)
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
        if credits.isEmpty { return notCredited(t, indices, set) }
        if credits.count >= 2 {
            // A repeat answered 200 that moved nothing is no second credit: a 200 where the contract says 409.
            let repeats = credits.dropFirst().map { credited(at: $0)?.amount }
            if repeats.allSatisfy({ $0 == 0 }) {
                return set(.credited, .server, "credited once; \(credits.count - 1 == 1 ? "a repeat post was" : "repeat posts were") answered 200 instead of 409, and the balance did not move")
            }
            return set(.creditedTwice, .server, "credited \(credits.count) times; the contract credits a transaction once")
        }
        let credit = events[credits[0]]
        let seen = credited(at: credits[0])
        let expected = cheer(t.productID, t.quantity)
        if let posted = credit.purchase?.identifier, posted != t.productID {
            let asPosted = cheer(posted, t.quantity) ?? cheer(posted, 1)
            switch seen?.amount {
            case let amount? where amount == expected:
                return set(.credited, .app, "credited the App Store's \(amount), but the app posted it as \(posted), not \(t.productID)")
            case let amount? where amount == asPosted || amount == cheer(posted, 1):
                return set(.creditMismatch, .server, "posted as \(posted) and credited \(amount) by it, but the App Store sold \(t.quantity) × \(t.productID); the backend took the app's product id instead of the App Store's")
            case let amount?:
                return set(.creditMismatch, .server, "credited \(amount); the App Store sold \(t.quantity) × \(t.productID)" + (expected.map { " = \($0)" } ?? "") + ", and the app posted it as \(posted)")
            case nil:
                line.amountUnjudged = true
                return set(.credited, .app, "the app posted it as \(posted), not the App Store's \(t.productID); the amount credited was not seen")
            }
        }
        guard let expected else {
            line.amountUnjudged = true
            return set(.credited, nil, "credited; \(t.productID) × \(t.quantity) is not among the environment's bundles, so the amount is not judged", finding: false)
        }
        guard let seen else {
            line.amountUnjudged = true
            return set(.credited, nil, "credited; the amount was not seen (no balance of the user just before the post)", finding: false)
        }
        if seen.amount != expected {
            return set(.creditMismatch, .server, "credited \(seen.amount) (balance \(seen.before.balance ?? 0) → \(credit.balance ?? 0)), the App Store's record is \(t.quantity) × \(t.productID) = \(expected)")
        }
        return set(.credited, nil, "credited \(expected)", finding: false)
    }

    /// Paid, and no post of it answered 200: why, and whose fault, as far as the posts show.
    func notCredited(_ t: AppStoreTransaction, _ indices: [Int], _ set: (Verdict, Blame?, String, Bool) -> LedgerLine) -> LedgerLine {
        if indices.isEmpty {
            guard covers(t.purchaseDate) else {
                return set(.notSeen, nil, "paid; no post of it among the exchanges given, which do not cover its time (\(coverage))", false)
            }
            return set(.notCredited, .app, "paid in the App Store, never posted to the backend (the exchanges given cover its time)", true)
        }
        let statuses = indices.compactMap { events[$0].status }
        if statuses.contains(409) {
            var credited = set(.credited, nil, "credited before, by a post not among the exchanges given (answered 409); the amount credited was not seen", false)
            credited.amountUnjudged = true
            return credited
        }
        let unanswered = indices.filter { events[$0].status == nil }
        if !unanswered.isEmpty {
            return set(.notCredited, .unknown, "posted \(Self.times(indices.count)), no credit seen; \(unanswered.count == 1 ? "one answer was" : "\(unanswered.count) answers were") lost, so whether it was credited is not known (read the balance, or run --probe)", true)
        }
        let listed = statuses.map(String.init).joined(separator: ", ")
        let own = indices.filter { events[$0].purchase?.identifier == t.productID }.compactMap { events[$0].status }
        if own.contains(where: { !Self.silent.contains($0) }) {
            return set(.notCredited, .server, "paid in the App Store; the backend refused or failed its post with the App Store's own product id (\(listed))", true)
        }
        if let other = indices.compactMap({ events[$0].purchase?.identifier }).first(where: { $0 != t.productID }) {
            return set(.notCredited, .app, "paid in the App Store; the app posted it as \(other), not \(t.productID), and it was refused (\(listed))", true)
        }
        return set(.notCredited, .unknown, "posted, and refused only for sign-in, a timeout or rate limits (\(listed)): nothing said about the purchase", true)
    }

    func refunded(_ t: AppStoreTransaction, revoked: Date, credits: [Int], line: inout LedgerLine) -> LedgerLine {
        line.verdict = .refunded
        line.blame = nil
        line.isFinding = false
        let reason = t.revocationReason == 1 ? " (reason: an issue in the app)" : t.revocationReason == 0 ? " (reason: other)" : ""
        guard let first = credits.first else {
            // "Never credited" is a fact only where the exchanges cover the purchase and the refund; else no
            // credit was seen, which is not the same (a post outside the exchanges given may have credited it).
            guard covers(t.purchaseDate), let window, window.upperBound >= revoked else {
                line.verdict = .notSeen
                line.words = "refunded by the App Store\(reason); no credit of it among the exchanges given, which do not cover it (\(coverage)): "
                    + "whether it was credited, and taken back, was not seen"
                return line
            }
            line.words = "refunded by the App Store\(reason); it was never credited (the exchanges given cover it), so there was nothing to take back"
            return line
        }
        if let late = credits.first(where: { (events[$0].at ?? .distantPast) > revoked }) {
            line.words = "refunded by the App Store\(reason), then credited by the backend at \(events[late].at.map(ISO8601.format) ?? "?"): a refunded transaction must be refused"
            line.blame = .server
            line.isFinding = true
            return line
        }
        let amount = credited(at: first)?.amount ?? cheer(t.productID, t.quantity)
        let user = events[first].user
        // The user's balance seen last before the refund, and last after it with no write between (the
        // backend learns of a refund late: the latest read is its latest word).
        let before = events.lastIndex { $0.user == user && user != nil && $0.balance != nil && ($0.at ?? .distantFuture) < revoked }
        var after: Int?
        if let before {
            for i in (before + 1)..<events.count {
                let e = events[i]
                if e.isWrite && (e.user == user || e.user == nil) { break }
                if e.user == user, e.balance != nil, (e.at ?? .distantPast) >= revoked { after = i }
            }
        }
        guard let amount, let before, let after, let from = events[before].balance, let to = events[after].balance else {
            line.words = "refunded by the App Store\(reason); whether the backend took the cheer back was not seen (no balance read before and after the refund with no write between)"
            return line
        }
        if to == from &- amount {
            line.words = "refunded by the App Store\(reason); the backend took back \(amount) (balance \(from) → \(to))"
        } else if to == from, let seen = events[after].at, seen < revoked + Self.grace {
            // The App Store tells the backend of a refund by a notification: a read right after it proves nothing yet.
            line.words = "refunded by the App Store\(reason); the latest balance read came \(Int(seen.timeIntervalSince(revoked))) s after the refund, "
                + "before the backend could be expected to have taken the cheer back (\(Int(Self.grace)) s): not judged yet"
        } else if to == from {
            line.words = "refunded by the App Store\(reason); the backend kept the \(amount) cheer (balance \(from) before and after)"
            line.blame = .server
            line.isFinding = true
        } else {
            line.words = "refunded by the App Store\(reason); the balance moved by \(to &- from) across the refund, not by −\(amount): not judged"
        }
        return line
    }

    /// A credit whose transaction is not in the customer's history.
    func unpaid(_ event: ShopEvent, _ purchase: ShopWrite.Purchase, credits: [ShopEvent], lookup: Lookup?) -> LedgerLine {
        var line = LedgerLine(at: event.at, transactionID: purchase.transactionID.description, productID: purchase.identifier, quantity: nil,
                              requestIDs: credits.compactMap(\.requestID), user: event.user, verdict: .notPaid, blame: .server, words: "", isFinding: true)
        let twice = credits.count > 1 ? " (credited \(credits.count) times)" : ""
        func notJudged(_ verdict: Verdict, _ words: String) -> LedgerLine {
            line.verdict = verdict
            line.blame = nil
            line.isFinding = verdict == .notVerified
            line.words = words
            return line
        }
        guard case .number = purchase.transactionID else {
            line.words = "credited\(twice), but \(purchase.transactionID) is not an App Store transaction id"
            return line
        }
        switch lookup {
        case nil:
            return notJudged(.notChecked, "credited\(twice); not looked up in the App Store (past the ledger's bound of lookups)")
        case .unknown?:
            line.words = "credited\(twice), but the App Store does not know this transaction (for this app); the contract says the backend verifies first"
        case let .failed(failure)?:
            return notJudged(.notChecked, "credited\(twice); its App Store record could not be read: " + failure.words)
        case let .record(.notVerified(why))?:
            return notJudged(.notVerified, "credited\(twice); the App Store's record of it is not believed: " + why.words)
        case let .record(.verified(t))?:
            line.quantity = t.quantity
            if !t.isConsumable {
                line.words = "credited\(twice), but the App Store sold it as \(t.type), not a consumable"
            } else if let user = event.user, !customersUsers.contains(user) {
                // Another tester's purchase for another shop user: not this customer's ledger.
                return notJudged(.notChecked, "credited\(twice) to \(user): another App Store customer's purchase, for a user who posted none of this customer's")
            } else {
                line.words = "credited\(twice), but it is another customer's purchase (not in this customer's App Store history)"
            }
        }
        return line
    }

    static func times(_ n: Int) -> String { n == 1 ? "once" : n == 2 ? "twice" : "\(n) times" }
}
