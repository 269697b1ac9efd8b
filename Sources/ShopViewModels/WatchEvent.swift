import Foundation
import ShopAPI

/// One read of the user under watch: the balance and the newest history entries, with the request
/// ids that brought them (a finding names both sides).
public struct Observation: Equatable, Sendable {
    public var at: Date
    public var balance: Int
    public var balanceRequestID: String?
    /// The newest entries, newest first (the first history page, in small pages).
    public var entries: [CheerHistoryEntry]
    public var total: Int
    public var historyRequestID: String?

    public init(at: Date, balance: Int, balanceRequestID: String? = nil, entries: [CheerHistoryEntry], total: Int, historyRequestID: String? = nil) {
        self.at = at
        self.balance = balance
        self.balanceRequestID = balanceRequestID
        self.entries = entries
        self.total = total
        self.historyRequestID = historyRequestID
    }

    var requestIDs: [String] { [balanceRequestID, historyRequestID].compactMap { $0 } }
}

/// What the watch flags: a rule of the shop that two reads break.
public enum WatchCheck: String, Sendable, Equatable, CaseIterable {
    /// The balance fell by other than the new entries' amounts (and no bundle explains the rest).
    case debitMismatch = "debit-mismatch"
    /// The balance fell with no new entry.
    case debitWithoutEntry = "debit-without-entry"
    /// A new entry with no debit of its amount.
    case entryWithoutDebit = "entry-without-debit"
    /// The balance rose by what no sum of the environment's bundles makes.
    case creditUnexplained = "credit-unexplained"
    /// An entry seen before is gone, or changed.
    case entryVanished = "entry-vanished"
    case entryChanged = "entry-changed"
    /// The history's total fell.
    case historyShrank = "history-shrank"
    case balanceNegative = "balance-negative"
    /// A pack's total did not grow by the amounts cheered for it.
    case packTotal = "pack-total"
}

/// One change seen by the watch: what changed, and how it reconciled.
public struct WatchEvent: Equatable, Sendable {
    public enum Change: Equatable, Sendable {
        case balance(from: Int, to: Int)
        case entry(CheerHistoryEntry)
        case packTotal(product: String, from: Int, to: Int)
        case packs(added: [String], removed: [String], priceChanged: [String])
        case finding(WatchCheck, expected: String, actual: String)
        /// Worth a look, not a failure (a possible double submission).
        case note(String)
        case error(String)
        /// Watching started, stopped, moved to another user, or backed off.
        case status(String)
    }

    public enum Outcome: Equatable, Sendable {
        case reconciled
        case flagged
        /// Made by this tool (counted once: its own verification checks it).
        case own
        case none
    }

    public var at: Date
    public var change: Change
    public var outcome: Outcome
    /// The reads on both sides, oldest first.
    public var requestIDs: [String]

    public init(at: Date, change: Change, outcome: Outcome = .none, requestIDs: [String] = []) {
        self.at = at
        self.change = change
        self.outcome = outcome
        self.requestIDs = requestIDs
    }

    /// The kind, as `watch --json` names it.
    public var kind: String {
        switch change {
        case .balance: return "balance"
        case .entry: return "entry"
        case .packTotal: return "pack"
        case .packs: return "packs"
        case .finding: return "finding"
        case .note: return "note"
        case .error: return "error"
        case .status: return "status"
        }
    }
}

/// A write this tool made since the last read (the watch does not count it as the phone's).
public enum OwnWrite: Equatable, Sendable {
    case spend(product: String, amount: Int, comment: String?)
    case purchase(amount: Int?)
}

extension WatchEvent {
    /// The event in one line, as the Live tab and `watch` print it (server text not yet made safe:
    /// each front end sanitizes). `names` are the packs' names by identifier.
    public func text(names: [String: String] = [:]) -> String {
        let g = Wording.grouped
        switch change {
        case let .balance(from, to): return "balance \(g(from)) → \(g(to)) (\(Wording.signedDelta(to - from)))"
        case let .entry(e): return "new entry: " + Reconciler.describe(e, names)
        case let .packTotal(product, from, to): return "\(names[product] ?? product) cheer \(g(from)) → \(g(to))"
        case let .packs(added, removed, repriced):
            let parts = [(added.count, "new"), (removed.count, "gone"), (repriced.count, "price changed")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            return "packs: " + parts.joined(separator: ", ")
        case let .finding(check, expected, actual): return "[\(check.rawValue)] expected \(expected), got \(actual)"
        case let .note(text), let .error(text), let .status(text): return text
        }
    }

    /// How it reconciled, in a word.
    public var outcomeWord: String? {
        switch outcome {
        case .reconciled: return "reconciled"
        case .flagged: return "flagged"
        case .own: return "this tool's write"
        case .none: return nil
        }
    }
}
