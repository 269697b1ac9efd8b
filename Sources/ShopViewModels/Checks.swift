import Foundation
import ShopAPI

// The Checks tab's records, and the verification of a write: what is read again after it and the
// one outcome those reads make.

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
}

/// Which check a record is of: the contract's (and the pin's), a write's, or the watch's.
public enum CheckID: Equatable, Sendable {
    case contract(ContractCheck)
    case write(WriteCheck)
    case watch(WatchCheck)
    /// An app request seen through the proxy that ended in an error (a 4xx or 5xx, an answer cut short
    /// or in HTML, the server unreachable): kept, not a finding (the contract allows errors).
    case appError

    /// `spend-balance`, `schema`, …: the name docs/checks.md gives it, as the Checks tab shows it.
    public var name: String {
        switch self {
        case let .contract(check): return check.rawValue
        case let .write(check): return check.rawValue
        case let .watch(check): return check.rawValue
        case .appError: return "app-error"
        }
    }

    public var source: CheckSource {
        switch self {
        case .contract(.pinned): return .pins
        case .contract: return .watchdog
        case .write: return .writeVerification
        case .watch: return .watch
        case .appError: return .appTraffic
        }
    }
}

/// One check's result: a write's verification, or a finding (of the contract watchdog or a pin on an
/// answer, or of the watch: `isFinding`; a finding that recurs is one record, counted).
public struct CheckRecord: Equatable, Sendable {
    public enum Outcome: Equatable, Sendable { case passed, failed }

    /// Which check: `.write(.spendBalance)`, `.contract(.schema)`, …
    public var check: CheckID
    public var outcome: Outcome
    public var expected: String
    public var actual: String
    /// The request it is about: `POST /api/v1/spend_cheer`.
    public var request: String
    /// The (last) request it was seen on.
    public var requestID: String?
    public var at: Date
    /// What makes a later finding the same one (a watchdog's finding); nil: never grouped.
    public var key: FindingKey?
    /// How many answers showed it (a recurring finding is one record).
    public var count = 1
    /// The first answer that showed it, when it recurred.
    public var first: Sighting?
    /// Who is at fault, for a finding on the app's traffic (its request: the app; its answer: the
    /// server); nil on the tool's own (always the server's) and for checks that blame no one.
    public var blame: Blame?

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
        self.check = check
        self.outcome = outcome
        self.expected = expected
        self.actual = actual
        self.request = request
        self.requestID = requestID
        self.at = at
        self.key = key
    }

    /// `✗ spend-balance: expected 1,243, got 1,242` or `✔ spend-balance`.
    public var line: String {
        outcome == .passed ? "✔ \(name)" : "✗ \(name): expected \(expected), got \(actual)"
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

    public init() {}

    public var records: [CheckRecord] { list.rows }

    mutating func add(_ new: [CheckRecord]) {
        guard !new.isEmpty else { return }
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

/// A write being verified: what it should have changed, what it answered, and the reads (asked after
/// it, whatever its answer) that settle what happened.
public struct Verification: Equatable, Sendable {
    var kind: ActionKind
    var at: Date
    /// What was known before the write was sent.
    var before: Before
    /// The write's answer: the balance it said, or its error.
    var answer: Result<Int, ShopAPIError>
    /// The balance and pack reads asked after the write (its history read is `.verificationHistory`).
    var balanceRead: Token?
    var packsRead: Token?
    var balance: Read<Int> = .waiting
    var history: Read<HistoryFacts> = .waiting
    var packs: Read<Int?> = .waiting

    struct Before: Equatable, Sendable {
        var balance: Int?
        var historyTotal: Int?
        var packCheer: Int?
        /// The refusals the shop owes this write (`WriteExpectation`); empty: it should be taken.
        var refusals: [ExpectedRefusal] = []
        /// A purchase's credit, from the environment's bundles (nil: not a bundle).
        var credit: Int?
    }

    struct HistoryFacts: Equatable, Sendable {
        var newest: CheerHistoryEntry?
        var total: Int
    }

    enum Read<Value: Equatable & Sendable>: Equatable, Sendable {
        case waiting
        case read(Value)
        /// The read failed: this check cannot tell.
        case unread(String)

        var isDone: Bool { self != .waiting }
        var value: Value? { if case let .read(v) = self { return v } else { return nil } }
    }

    /// The write's endpoint (its path written once, by the endpoint type).
    var endpoint: EndpointDescription {
        switch kind {
        case .spend: return SpendCheer.endpoint
        case .purchase: return PurchaseCheer.endpoint
        }
    }

    /// `POST /api/v1/spend_cheer`.
    var request: String { endpoint.description }

    /// Which reads this write needs: a spend changes the balance, the history and the pack's total;
    /// a purchase the balance only.
    var isComplete: Bool {
        switch kind {
        case .spend: return balance.isDone && history.isDone && packs.isDone
        case .purchase: return balance.isDone
        }
    }
}

extension ShopUpdate {
    /// After a write's answer (or its loss): read again what it should have changed.
    static func beginVerification(_ kind: ActionKind, answer: Result<Int, ShopAPIError>, before: Verification.Before, at: Date,
                                  _ state: inout AppState) -> [Effect] {
        // A verification still out (the write before) cannot finish now: its reads are replaced.
        var effects = reloadBalance(&state)
        var verification = Verification(kind: kind, at: at, before: before, answer: answer, balanceRead: state.balance.token)
        if case .spend = kind {
            effects += cancel(.verificationHistory, &state)
            effects.append(.request(state.ask(.verificationHistory), .history(user: state.context.user, page: 1, perPage: HistoryState.defaultPerPage)))
            effects += reloadPacks(&state)
            verification.packsRead = state.packs.list.token
            effects += invalidateHistory(&state, merge: false)
        }
        state.write.verification = verification
        return effects
    }

    /// A balance answer: it counts for the verification when it is the read asked after the write.
    static func verificationBalance(_ token: Token, _ result: Result<CheerBalance, ShopAPIError>, _ state: inout AppState) {
        switch result {
        case let .success(b): verificationBalance(token, .read(b.balance), &state)
        case let .failure(error): verificationBalance(token, .unread(ErrorText.line(error)), &state)
        }
    }

    static func verificationBalance(_ token: Token, _ read: Verification.Read<Int>, _ state: inout AppState) {
        guard var v = state.write.verification, v.balanceRead == token, !v.balance.isDone else { return }
        v.balance = read
        state.write.verification = v
        concludeVerification(&state)
    }

    static func verificationPacks(_ token: Token, _ result: Result<AudioPackList, ShopAPIError>, _ state: inout AppState) {
        guard case let .spend(product, _, _, _)? = state.write.verification?.kind else { return }
        switch result {
        case let .success(list): verificationPacks(token, .read(list.packs.first { $0.identifier == product }?.cheerTotal), &state)
        case let .failure(error): verificationPacks(token, .unread(ErrorText.line(error)), &state)
        }
    }

    static func verificationPacks(_ token: Token, _ read: Verification.Read<Int?>, _ state: inout AppState) {
        guard var v = state.write.verification, v.packsRead == token, !v.packs.isDone, case .spend = v.kind else { return }
        v.packs = read
        state.write.verification = v
        concludeVerification(&state)
    }

    /// The first history page read for the verification (its own request: the cursor may be anywhere).
    static func verificationHistory(_ result: Result<CheerHistoryPage, ShopAPIError>, _ state: inout AppState) {
        switch result {
        case let .success(page):
            let newest = page.items.first.flatMap { if case let .entry(e) = $0 { return e } else { return nil } }
            verificationHistory(.read(.init(newest: newest, total: page.totalCount)), &state)
        case let .failure(error):
            verificationHistory(.unread(ErrorText.line(error)), &state)
        }
    }

    static func verificationHistory(_ read: Verification.Read<Verification.HistoryFacts>, _ state: inout AppState) {
        guard var v = state.write.verification, !v.history.isDone else { return }
        v.history = read
        state.write.verification = v
        concludeVerification(&state)
    }

    /// Once every read is back: the write's one outcome, and from it the checks, the notice and the
    /// dialog.
    static func concludeVerification(_ state: inout AppState) {
        guard let v = state.write.verification, v.isComplete else { return }
        state.write.verification = nil
        let requestID = v.answer.failureRequestID ?? state.lastWriteExchange?.requestID
        let outcome = WriteOutcome.judge(v, requestID: requestID)
        state.write.outcome = outcome
        if outcome.settlesLostPurchase, case .purchase = v.kind { state.write.lostPurchase = nil }
        state.checks.add(outcome.checks)
        let text = outcome.text
        state.notice = outcome.notice
        // The dialog, if it is still open on this write's outcome, says the same.
        if state.dialogShown, let action = state.write.action {
            switch action.phase {
            case .succeeded, .failed:
                state.write.action = ActionState(phase: outcome.succeeded ? .succeeded(text) : .failed(text, requestID: outcome.requestID))
            default:
                break
            }
        }
    }
}

extension Result where Success == Int, Failure == ShopAPIError {
    var failureRequestID: String? { if case let .failure(e) = self { return e.requestID } else { return nil } }
    var isSuccess: Bool { if case .success = self { return true } else { return false } }
}
