import Foundation
import ShopAPI

/// One read of the user under watch: the balance and the newest history entries, with the request
/// ids that brought them (a finding names both sides).
public struct Observation: Equatable, Sendable {
    public var at: Date
    public var balance: Int
    public var balanceRequestID: String?
    /// The newest entries that could be read, newest first (the first history page, in small pages).
    public var entries: [CheerHistoryEntry]
    /// Every row of that page in its place, those that could not be read too (matched by their id).
    public var items: [HistoryItem]
    public var total: Int
    public var historyRequestID: String?

    public init(at: Date, balance: Int, balanceRequestID: String? = nil, entries: [CheerHistoryEntry], total: Int, historyRequestID: String? = nil) {
        self.init(at: at, balance: balance, balanceRequestID: balanceRequestID, items: entries.map(HistoryItem.entry), total: total,
                  historyRequestID: historyRequestID)
    }

    public init(at: Date, balance: Int, balanceRequestID: String? = nil, items: [HistoryItem], total: Int, historyRequestID: String? = nil) {
        self.at = at
        self.balance = balance
        self.balanceRequestID = balanceRequestID
        self.items = items
        entries = items.compactMap { if case let .entry(e) = $0 { return e } else { return nil } }
        self.total = total
        self.historyRequestID = historyRequestID
    }

    var requestIDs: [String] { [balanceRequestID, historyRequestID].compactMap { $0 } }

    /// The same state read twice: the balance, the total and the rows alike (whatever the times and ids).
    func sameState(as other: Observation) -> Bool { balance == other.balance && total == other.total && items == other.items }
}

/// One change seen by the watch: what changed, and how it reconciled.
public struct WatchEvent: Equatable, Sendable {
    public enum Change: Equatable, Sendable {
        case balance(from: Int, to: Int)
        case entry(CheerHistoryEntry)
        case packTotal(product: String, from: Int, to: Int)
        case packs(added: [String], removed: [String], priceChanged: [String])
        case finding(WatchCheck, expected: String, actual: String)
        /// A write the app sent through the proxy, and what became of it.
        case appWrite(AppWrite)
        /// Worth a look, not a failure (a possible double submission).
        case note(String)
        /// A round that failed: the failure in its parts (the Live tab lays them out, keeping the request and
        /// its id whole) and what the watch does about it (` — backing off 4 s`).
        case error(FailureWords, then: String)
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
    /// The finding of the same round this one may follow from (told beside it: "possibly caused by").
    public var causedBy: WatchCause?
    /// The writes that explain the change (the app's with their request ids, this tool's), or
    /// `elsewhere` when none seen does; empty when the watch does not pair (no proxy).
    public var causes: [ChangeCause] = []

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
        case .appWrite: return "app"
        }
    }
}

/// What explains a change the watch saw: a write of the app (seen through the proxy), one of this
/// tool, or none seen ("made elsewhere": another device, a server job).
public enum ChangeCause: Equatable, Sendable {
    case app(requestID: String?)
    case tool
    case elsewhere

    /// `app, rq-1`, `this tool`, `made elsewhere`.
    static func words(_ causes: [ChangeCause]) -> String? {
        guard !causes.isEmpty else { return nil }
        let ids = causes.compactMap { if case let .app(id) = $0 { return id ?? "no request id" } else { return nil } }
        var parts: [String] = []
        if !ids.isEmpty || causes.contains(.app(requestID: nil)) { parts.append((["app"] + ids).joined(separator: ", ")) }
        if causes.contains(.tool) { parts.append("this tool") }
        if causes.contains(.elsewhere) { parts.append("made elsewhere") }
        return parts.joined(separator: "; ")
    }

    /// One line per cause, for the Live tab's detail: `the app's request rq-1`, `this tool's write`, `made elsewhere`.
    public static func list(_ causes: [ChangeCause]) -> [String]? {
        guard !causes.isEmpty else { return nil }
        return causes.map {
            switch $0 {
            case let .app(id): "the app's request " + (id ?? "(no request id)")
            case .tool: "this tool's write"
            case .elsewhere: "made elsewhere (no request seen explains it)"
            }
        }
    }
}

/// What a finding may follow from: another finding of the same round, or an entry the server sent
/// that could not be read (the contract watchdog's finding on that answer).
public enum WatchCause: Equatable, Sendable {
    case finding(WatchCheck)
    case unreadable(position: String, requestID: String?)
    /// The same fault as the contract watchdog's finding on the app's answer.
    case answer(ContractCheck, requestID: String?)

    /// `possibly caused by [entry-vanished] (above)`.
    public var words: String {
        switch self {
        case let .finding(check): return "possibly caused by [\(check.rawValue)] (above)"
        case let .answer(check, requestID):
            return "the same fault as the contract watchdog's [\(check.rawValue)] on that answer (\(requestID ?? "no request id"); on the Checks tab)"
        case let .unreadable(position, requestID):
            return "possibly caused by an entry that could not be read (\(position)\(requestID.map { ", " + $0 } ?? ""); its finding is on the Checks tab)"
        }
    }
}

extension WatchEvent {
    /// The event in one line, as the Live tab and `watch` print it (server text not yet made safe:
    /// each front end sanitizes). `names` are the packs' names by identifier.
    public func text(names: [String: String] = [:]) -> String {
        let g = Wording.grouped
        switch change {
        case let .balance(from, to): return "balance \(g(from)) → \(g(to)) (\(Wording.signedDelta(to.minusSaturating(from))))" + causeWords
        case let .entry(e): return "new entry: " + Reconciler.describe(e, names) + causeWords
        case let .appWrite(w): return "app " + w.request(names: names) + " " + w.outcome + (w.requestID.map { " " + $0 } ?? "")
        case let .packTotal(product, from, to): return "\(names[product] ?? product) cheer \(g(from)) → \(g(to))"
        case let .packs(added, removed, repriced):
            let parts = [(added.count, "new"), (removed.count, "gone"), (repriced.count, "price changed")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            return "packs: " + parts.joined(separator: ", ")
        case let .finding(check, expected, actual):
            return ShopFinding.stated(check.rawValue, expected: expected, actual: actual) + (causedBy.map { " — " + $0.words } ?? "")
        case let .error(failure, then): return failure.line + then
        case let .note(text): return text + causeWords
        case let .status(text): return text
        }
    }

    /// ` (app, rq-1)`, ` (made elsewhere)`, or nothing.
    var causeWords: String { ChangeCause.words(causes).map { " (\($0))" } ?? "" }

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

/// What the watch's last rounds changed, marked briefly on the other tabs: the header's balance
/// shows the change, a new history entry and a changed pack carry a mark. A mark lasts until the
/// first round at least `hold` seconds after it was seen (two rounds at the default 2 s).
public struct WatchMarks: Equatable, Sendable {
    public static let hold: TimeInterval = 3

    public enum PackMark: Equatable, Sendable {
        /// New in the list.
        case new
        /// Its total or its price changed.
        case changed
    }

    /// The balance's last change, while it is marked.
    public private(set) var balanceDelta: Int?
    var balanceSeen: Date?
    var entries: [EntryKey: Date] = [:]
    var packs: [String: (PackMark, Date)] = [:]

    public init() {}

    public var isEmpty: Bool { balanceDelta == nil && entries.isEmpty && packs.isEmpty }

    /// Whether a history item came in with the last rounds.
    public func isNew(_ item: HistoryItem) -> Bool { !entries.isEmpty && entries[HistoryState.key(of: item)] != nil }

    public func mark(pack identifier: String) -> PackMark? { packs[identifier]?.0 }

    mutating func seen(_ events: [WatchEvent], balance delta: Int, at: Date) {
        if delta != 0 {
            balanceDelta = delta
            balanceSeen = at
        }
        for case let .entry(e) in events.map(\.change) { entries[Reconciler.key(e)] = at }
    }

    mutating func seen(packs before: [AudioPack], _ after: [AudioPack], at: Date) {
        let old = Dictionary(before.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        for pack in after {
            guard let was = old[pack.identifier] else {
                packs[pack.identifier] = (.new, at)
                continue
            }
            if was.cheerTotal != pack.cheerTotal || was.priceCents != pack.priceCents { packs[pack.identifier] = (.changed, at) }
        }
    }

    mutating func expire(now: Date) {
        func old(_ seen: Date) -> Bool { now.timeIntervalSince(seen) >= Self.hold }
        if let seen = balanceSeen, old(seen) {
            balanceDelta = nil
            balanceSeen = nil
        }
        entries = entries.filter { !old($0.value) }
        packs = packs.filter { !old($0.value.1) }
    }

    public static func == (a: WatchMarks, b: WatchMarks) -> Bool {
        a.balanceDelta == b.balanceDelta && a.balanceSeen == b.balanceSeen && a.entries == b.entries
            && a.packs.mapValues { $0.0 } == b.packs.mapValues { $0.0 } && a.packs.mapValues { $0.1 } == b.packs.mapValues { $0.1 }
    }
}

extension WatchEvent {
    /// The event as the one finding type, when it is a finding: the watch's rule about `user`'s reads, blamed
    /// by its rule (`WatchCheck.blame`), resting on the reads of both rounds, with what it may follow from.
    /// The Checks tab, `watch`'s lines and its JSON read it.
    public func finding(user: String) -> ShopFinding? {
        guard case let .finding(check, expected, actual) = change else { return nil }
        return ShopFinding(kind: .watch(check), subject: "watch of \(user)", blame: check.blame, expected: expected, actual: actual,
                           requestIDs: requestIDs, causedBy: causedBy?.words)
    }
}
