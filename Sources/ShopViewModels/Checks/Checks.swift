import Foundation
import ShopAPI
import ShopLedger


// The Checks tab's records (the verification of a write that makes some of them: Verification.swift).

/// Where a check record comes from.
public enum CheckSource: Equatable, Sendable {
    /// The contract watchdog, on an answer.
    case watchdog
    /// An answer compared with the one pinned for its request (`P`).
    case pins
    /// A write's verification: the reads after it.
    case writeVerification
    /// The watch's reconciliation of the balance and the history.
    case watch
    /// The app's own traffic, seen through the proxy: its errors.
    case appTraffic
    /// The purchase ledger: the App Store's verified records held against the backend's credits.
    case ledger
    /// `explore`'s campaign.
    case explore
}

extension CheckID {
    public var source: CheckSource {
        switch self {
        case .contract(.pinned): return .pins
        case .contract: return .watchdog
        case .write: return .writeVerification
        case .watch: return .watch
        case .appError: return .appTraffic
        case .ledger: return .ledger
        case .explore: return .explore
        }
    }
}

/// One check's result: a write's verification, or a finding (of the contract watchdog or a pin on an
/// answer, of the watch, of the ledger: `isFinding`; a finding that recurs is one record, counted). What
/// it says is one `ShopFinding` (the one finding type, worded once); the record adds when it was seen, how
/// often, and whether it passed.
public struct CheckRecord: Equatable, Sendable {
    public enum Outcome: Equatable, Sendable { case passed, failed }

    /// The kind, the subject (the request it is about: `POST /api/v1/spend_cheer`), the blame, expected
    /// and actual, the request ids, what it may follow from.
    public var finding: ShopFinding
    public var outcome: Outcome
    public var at: Date
    /// What makes a later finding the same one (a watchdog's finding); nil: never grouped.
    public var key: FindingKey?
    /// How many answers showed it (a recurring finding is one record).
    public var count = 1
    /// The first answer that showed it, when it recurred.
    public var first: Sighting?

    /// Which check: `.write(.spendBalance)`, `.contract(.schema)`, …
    public var check: CheckID {
        get { finding.kind }
        set { finding.kind = newValue }
    }
    public var expected: String {
        get { finding.expected }
        set { finding.expected = newValue }
    }
    public var actual: String {
        get { finding.actual }
        set { finding.actual = newValue }
    }
    /// The request it is about: `POST /api/v1/spend_cheer`.
    public var request: String {
        get { finding.subject }
        set { finding.subject = newValue }
    }
    /// The (last) request it was seen on.
    public var requestID: String? {
        get { finding.requestID }
        set { finding.requestIDs = newValue.map { [$0] } ?? [] }
    }
    /// Who is at fault, for a finding on the app's traffic (its request: the app; its answer: the
    /// server), of the watch's pairing and of the ledger; nil on the tool's own (always the server's) and
    /// for checks that blame no one.
    public var blame: Blame? {
        get { finding.blame }
        set { finding.blame = newValue }
    }

    /// The check's name: `spend-balance`, `purchase-balance`, …
    public var name: String { check.name }
    public var source: CheckSource { check.source }
    /// A finding on an answer or of the watch (else a write's verification).
    public var isFinding: Bool { source != .writeVerification && source != .appTraffic }

    /// Where and when a recurring finding was first seen, and what it was then (when that differs).
    public struct Sighting: Equatable, Sendable {
        public var requestID: String?
        public var at: Date
        public var actual: String
    }

    public init(check: CheckID, outcome: Outcome, expected: String, actual: String, request: String, requestID: String?, at: Date,
                key: FindingKey? = nil) {
        self.init(ShopFinding(kind: check, subject: request, expected: expected, actual: actual, requestIDs: requestID.map { [$0] } ?? []),
                  outcome: outcome, at: at, key: key)
    }

    public init(_ finding: ShopFinding, outcome: Outcome = .failed, at: Date, key: FindingKey? = nil) {
        self.finding = finding
        self.outcome = outcome
        self.at = at
        self.key = key
    }

    /// `[spend-balance] expected 1,243, got 1,242` (`ShopFinding.stated`), or `[spend-balance] passed`: a report's title.
    public var stated: String {
        outcome == .passed ? "[\(name)] passed" : ShopFinding.stated(name, expected: expected, actual: actual)
    }

    /// `✗ spend-balance: expected 1,243, got 1,242` or `✔ spend-balance` (`ShopFinding.verdict`).
    public var line: String { finding.verdict(passed: outcome == .passed) }

    /// What this finding may follow from: what its judge said (`ShopFinding.causedBy`: the watch's), else,
    /// among the other checks, a total that came back across the history's pages while reads lag behind
    /// the writes (a `stale-read` finding is there) is possibly that lag, not a paging bug of its own. Nil
    /// when nothing explains it.
    public func follows(among records: [CheckRecord]) -> String? {
        if let causedBy = finding.causedBy { return causedBy }
        guard key?.check == .paging, case .place(.pages(.oneTotal))? = key?.at,
              records.contains(where: { $0.check == .contract(.staleRead) }) else { return nil }
        return "possibly caused by reads that lag behind the writes (stale-read)"
    }

    /// The finding as the Checks tab shows it, with what it may follow from among `records`.
    public func shown(among records: [CheckRecord]) -> ShopFinding {
        var f = finding
        f.causedBy = follows(among: records)
        if let first, count > 1, let id = first.requestID, !f.requestIDs.contains(id) { f.requestIDs.insert(id, at: 0) }
        return f
    }

    /// `×5, first rq-1, last rq-9` for a finding seen more than once (nil otherwise).
    public var recurrence: String? {
        guard count > 1, let first else { return nil }
        return "×\(Wording.grouped(count)), first \(first.requestID ?? "no request id"), last \(requestID ?? "no request id")"
    }

    /// The same finding seen again: the count, and the latest answer's words and request.
    mutating func seenAgain(_ later: CheckRecord) {
        if first == nil { first = Sighting(requestID: requestID, at: at, actual: actual) }
        count += later.count
        expected = later.expected
        actual = later.actual
        requestID = later.requestID
        at = later.at
    }
}

/// Every check made, newest first (the Checks tab), and the selection. A finding that recurs (the
/// same `FindingKey`) is one record, moved to the top with its count.
public struct ChecksState: Equatable, Sendable {
    public static let capacity = 500

    /// Newest first, and the selected one.
    public internal(set) var list = SelectableList<CheckRecord>()
    /// Distinct failed checks so far (the status bar's `⚠ N`), including those no longer kept: a
    /// finding seen again does not count again.
    public private(set) var failures = 0
    /// The keys of every finding seen (what `failures` counted once).
    private var seen: Set<FindingKey> = []
    /// The judges' checks (failed: findings) the last `add` made new (not those on an answer, which travel with their
    /// exchange, nor those read back from the session; not a sighting of one already kept), and a number that changes with each `add`:
    /// what the runner appends to an open test session (`AppStore`).
    public private(set) var fresh: [CheckRecord] = []
    public private(set) var generation = 0

    public init() {}

    public var records: [CheckRecord] { list.rows }

    mutating func add(_ new: [CheckRecord], journaled: Bool = true) {
        guard !new.isEmpty else { return }
        generation += 1
        fresh = []
        var top: [CheckRecord] = []  // a write's checks keep their order, above the older ones
        var moved: [Int] = []  // indexes (before) of the records a new one joined
        for record in new {
            if let key = record.key {
                if let i = top.firstIndex(where: { $0.key == key }) {
                    top[i].seenAgain(record)
                    continue
                }
                if let i = records.firstIndex(where: { $0.key == key }) {
                    var joined = records[i]
                    joined.seenAgain(record)
                    top.append(joined)
                    moved.append(i)
                    continue
                }
                if record.outcome == .failed, seen.insert(key).inserted { failures += 1 }
            } else if record.outcome == .failed {
                failures += 1
            }
            if journaled, record.source != .appTraffic { fresh.append(record) }
            top.append(record)
        }
        // The selection stays on its record as new ones come in above it (the newest stays selected):
        // a record joined by a new one is now in `top`, any other moved down past the new ones.
        let old = records
        var kept = old
        for i in moved.sorted(by: >) { kept.remove(at: i) }
        list.replace(with: Array((top + kept).prefix(Self.capacity)), topStays: true) { index in
            if let k = moved.firstIndex(of: index), let key = old[index].key { return top.firstIndex { $0.key == key } ?? k }
            return index + top.count - moved.filter { $0 < index }.count
        }
    }
}

extension Result where Success == Int, Failure == ShopAPIError {
    var failureRequestID: String? { if case let .failure(e) = self { return e.requestID } else { return nil } }
    var isSuccess: Bool { if case .success = self { return true } else { return false } }
}
