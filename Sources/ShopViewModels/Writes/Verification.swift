import Foundation
import ShopAPI
import ShopModel

// The verification of a write: what is read again after it, until the reads settle (SettledReads.swift),
// and the one outcome those reads make (WriteOutcome.swift).

/// A write being verified: what it should have changed, what it answered, and the reads (asked after
/// it, whatever its answer) that settle what happened. Each value is read again while it disagrees
/// with what the write implies (`ReadSeries`: at most three reads over at most two seconds), and the
/// judging reads what the reads settled on (`Settlement`), never a single read.
public struct Verification: Equatable, Sendable {
    var kind: ShopWrite
    var at: Date
    /// Which reads these are: the baseline read right before the write is sent (the TUI's dialog and
    /// `spend`/`buy` alike), or the reads after its answer. One rule settles both.
    var stage: Stage = .after
    /// What this machine knew of the user's state when the reads began (the baseline's point is its latest
    /// once the baseline is settled): a read showing a state it has left is a lagging replica's.
    var timeline = Timeline()
    /// A read of this write (or of its baseline) lagged: a refusal's rule is then not judged on them.
    var lagSeen = false
    /// What was known before the write was sent.
    var before: Before
    /// The write's answer: the balance it said, or its error.
    var answer: Result<Int, ShopAPIError>
    /// The request id the write's answer came with (its checks name it).
    var writeRequestID: String?
    /// The balance and pack reads out (shared with the screen's reload; the history read is `.verificationHistory`).
    var balanceRead: Token?
    var packsRead: Token?
    /// Every read of each value after the write.
    var balanceReads = ReadSeries<Int>()
    var historyReads = ReadSeries<HistoryFacts>()
    var packsReads = ReadSeries<Int?>()
    /// The first history pages read, beside `historyReads` (the one the reads settle on is cached).
    var historyPages: [CheerHistoryPage] = []
    /// What the reads settled on (set when the last read is in), as the judging reads them.
    var balance: Read<Int> = .waiting
    var history: Read<HistoryFacts> = .waiting
    var packs: Read<Int?> = .waiting

    enum Stage: Equatable, Sendable {
        /// Reading the state the write is judged against; then the write is sent (its summary).
        case baseline(summary: String)
        case after
    }

    var isBaseline: Bool { if case .baseline = stage { return true } else { return false } }

    public struct Before: Equatable, Sendable {
        var balance: Int?
        var historyTotal: Int?
        var packCheer: Int?
        /// The refusals the shop owes this write (`WriteExpectation`); empty: it should be taken.
        var refusals: [ExpectedRefusal] = []
        /// A spend's pack as the shop listed it when the write was sent (nil: not listed, or a purchase).
        var packName: String?
        /// A purchase's credit, from the environment's bundles (nil: not a bundle).
        var credit: Int?
    }

    struct HistoryFacts: Equatable, Sendable {
        var newest: CheerHistoryEntry?
        var total: Int

        /// Reads agree on what the spend's check judges: the total and the newest entry's identity and the
        /// fields a spend explains (its id, product, amount and comments). A field that moves between reads
        /// (a date) does not make the others unjudgeable; it is a finding of its own (`drift`).
        static func == (a: HistoryFacts, b: HistoryFacts) -> Bool {
            a.total == b.total && a.newest?.id == b.newest?.id && a.newest?.product == b.newest?.product
                && a.newest?.amount == b.newest?.amount && a.newest?.comments == b.newest?.comments
        }

        /// Reads of one newest entry (by id) whose other fields differ: each read's whole entry, else nil.
        static func drift(_ sightings: [Sighting<HistoryFacts>]) -> [Sighting<HistoryFacts>]? {
            guard let first = sightings.first?.value.newest, first.id != nil else { return nil }
            let same = sightings.filter { $0.value.newest?.id == first.id }
            guard same.count > 1, same.contains(where: { $0.value.newest != first }) else { return nil }
            return same
        }

        /// `total 231, newest s-1 (5 on com.… at 2026-11-28T10:00:00Z)`: every field the reads compare, so
        /// reads that disagree show where.
        var described: String {
            let g = Wording.grouped
            guard let e = newest else { return "total \(g(total)), no newest entry" }
            return "total \(g(total)), newest \(e.id ?? "no id") (\(g(e.amount)) on \(e.product) at \(e.date))"
        }
    }

    enum Read<Value: Equatable & Sendable>: Equatable, Sendable {
        case waiting
        case read(Value)
        /// The read failed, or the reads did not agree: this check cannot tell.
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

    var isSpend: Bool { if case .spend = kind { return true } else { return false } }

    /// Every read this write needs is in: a spend changes the balance, the history and the pack's total;
    /// a purchase the balance only.
    var readsAreIn: Bool {
        isSpend ? balanceReads.isDone && historyReads.isDone && packsReads.isDone : balanceReads.isDone
    }

    /// Whether the write may have changed anything: answered 2xx, or no whole answer came. A refusal
    /// (a 4xx, a replay's 409) implies nothing changed.
    var mayHaveApplied: Bool {
        switch answer {
        case .success: return true
        case let .failure(error): return error.category.mayHaveBeenApplied
        }
    }

    /// What the write implies for each value (a read showing it ends that value's reads), and the state
    /// from before it (a read showing that after a write that changed it may be a lagging one).
    func balanceIsTarget(_ value: Int) -> Bool {
        // The baseline: a read that shows no state this machine has left ends the reads.
        if isBaseline { return !timeline.hasLeft(balance: value, now: at) }
        if case let .success(answered) = answer { return value == answered }
        guard let before = before.balance else { return true }
        guard mayHaveApplied, let delta = WriteRules.of(kind, credit: self.before.credit).delta else { return value == before }
        return value == before.plusSaturating(delta)
    }

    func balanceIsOlder(_ value: Int) -> Bool {
        if timeline.hasLeft(balance: value, now: at), !balanceIsTarget(value) { return true }
        guard !isBaseline, let before = before.balance, mayHaveApplied else { return false }
        if case let .success(answered) = answer, answered == before { return false }
        return value == before
    }

    func historyIsTarget(_ facts: HistoryFacts) -> Bool {
        if isBaseline { return !timeline.hasLeft(historyTotal: facts.total, now: at) }
        guard let total = before.historyTotal else { return true }
        guard mayHaveApplied, before.refusals.isEmpty, let spend = kind.spend else { return facts.total == total }
        return facts.total == total.plusSaturating(1) && facts.newest.map(spend.explains) == true
    }

    func historyIsOlder(_ facts: HistoryFacts) -> Bool {
        if timeline.hasLeft(historyTotal: facts.total, now: at), !historyIsTarget(facts) { return true }
        guard !isBaseline, let total = before.historyTotal, mayHaveApplied, before.refusals.isEmpty else { return false }
        return facts.total == total
    }

    func packsIsTarget(_ cheer: Int?) -> Bool {
        guard !isBaseline, let cheer0 = before.packCheer else { return true }
        guard mayHaveApplied, before.refusals.isEmpty, let amount = kind.spend?.amount else { return cheer == cheer0 }
        return cheer == cheer0.plusSaturating(amount)
    }

    func packsIsOlder(_ cheer: Int?) -> Bool {
        guard !isBaseline, let cheer0 = before.packCheer, mayHaveApplied, before.refusals.isEmpty else { return false }
        return cheer == cheer0
    }

    /// The values whose latest read disagrees with the write and may be read again.
    var wanted: (balance: Bool, history: Bool, packs: Bool) {
        (balanceReads.wantsAnother(balanceIsTarget),
         isSpend && historyReads.wantsAnother(historyIsTarget),
         isSpend && packsReads.wantsAnother(packsIsTarget))
    }

    /// What every value's reads settled on (`balance`, `history`, `packs` set), and the findings the
    /// reads make of their own (a stale read, reads that never agreed).
    ///
    /// The baseline: reads that only show states the timeline has left settle on its latest (the reads
    /// lag). After the write: a refusal's reads of an older state settle on the state before it; a 2xx's
    /// reads that never show it are `behind` (not judged, never a ✔ or a ✗) only when the lag shows in
    /// every value read — a balance that showed the spend beside a history that did not is no lag, and is
    /// judged as read.
    mutating func settle(user: String) -> [CheckRecord] {
        let answerIsNewer = isBaseline ? timeline.latest != nil : answer.isSuccess
        let balanceKnown: Int? = isBaseline ? timeline.latest?.balance : (mayHaveApplied ? nil : before.balance)
        var b = balanceReads.settle(isTarget: balanceIsTarget, isOlder: balanceIsOlder, answerIsNewer: answerIsNewer, known: balanceKnown)
        var h: Settlement<HistoryFacts>?
        var p: Settlement<Int?>?
        if isSpend {
            h = historyReads.settle(isTarget: historyIsTarget, isOlder: historyIsOlder, answerIsNewer: answerIsNewer)
            p = packsReads.settle(isTarget: packsIsTarget, isOlder: packsIsOlder, answerIsNewer: answerIsNewer)
        }
        // A lag shows in the user's reads together (one replica): behind on the balance and, for a spend, on
        // the history. Behind on one value while another showed the write is no lag: that value is judged on
        // its reads (a debit without an entry, an entry without a debit, a pack total that did not move).
        func isBehind<V>(_ s: Settlement<V>?) -> Bool { if case .behind? = s { true } else { false } }
        if !isBaseline, !(isBehind(b) && (!isSpend || isBehind(h))) {
            if isBehind(b) { b = balanceReads.settle(isTarget: balanceIsTarget, isOlder: balanceIsOlder, answerIsNewer: false) }
            if isBehind(h) { h = historyReads.settle(isTarget: historyIsTarget, isOlder: historyIsOlder, answerIsNewer: false) }
        }
        if !isBaseline, isBehind(p), !isBehind(b) {
            p = packsReads.settle(isTarget: packsIsTarget, isOlder: packsIsOlder, answerIsNewer: false)
        }
        balance = b.read
        let g = Wording.grouped
        let what = isBaseline ? "before the write, " : ""
        var findings = ReadAnomaly.records(b, what: "\(what)the balance", request: Balance.endpoint.description, user: user, at: at) { g($0) }
        if isSpend, let h, let p {
            history = h.read
            packs = p.read
            // An entry whose content moved between reads (its id the same): a finding of its own, while the
            // fields the check judges still are.
            if let drift = HistoryFacts.drift(historyReads.sightings) {
                findings += ReadAnomaly.drift(drift, request: CheerHistory.endpoint.description, user: user, at: at)
            }
            // One finding of each kind for the whole write (the key groups them anyway).
            for more in ReadAnomaly.records(h, what: "\(what)the history", request: CheerHistory.endpoint.description, user: user, at: at, describe: { $0.described })
                + ReadAnomaly.records(p, what: "\(what)the pack's cheer total", request: AudioPacks.endpoint.description, user: user, at: at, describe: { $0.map(g) ?? "absent" })
            where !findings.contains(where: { $0.key == more.key }) {
                findings.append(more)
            }
        }
        return findings
    }

    /// The state the reads settled on, as the timeline records it: after a 2xx whose reads lagged, the
    /// answer's balance and the spend's one more entry (what the write made, by the shop's model), so
    /// that a later read of the state before it is known for a lagging one.
    func settledPoint(at: Date) -> Timeline.Point? {
        var balance = self.balance.value
        var total = history.value?.total
        if !isBaseline, case let .success(answered) = answer {
            if balance == nil { balance = answered }
            if total == nil, isSpend, before.refusals.isEmpty, let t = before.historyTotal { total = t.plusSaturating(1) }
        }
        if isBaseline {
            if total == nil, case .unread = history, historyReads.sightings.isEmpty == false { total = timeline.latest?.historyTotal }
        }
        guard balance != nil || total != nil else { return nil }
        let requestID = balanceReads.sightings.last?.requestID
        return Timeline.Point(balance: balance, historyTotal: total, at: at, requestID: requestID)
    }
}

extension ShopUpdate {
    /// After a write's answer (or its loss): read again what it should have changed.
    static func beginVerification(_ kind: ShopWrite, answer: Result<Int, ShopAPIError>, before: Verification.Before, at: Date,
                                  requestID: String? = nil, _ state: inout AppState) -> [Effect] {
        // A verification still out (the write before) cannot finish now: its reads are replaced.
        state.write.verification = nil
        var verification = Verification(kind: kind, at: at, before: before, answer: answer)
        verification.writeRequestID = requestID
        verification.timeline = state.write.timeline
        let effects = verificationReads(&verification, balance: true, history: verification.isSpend, packs: verification.isSpend, &state)
        state.write.verification = verification
        return effects
    }

    /// Asks the reads of `v` that are due: the balance and the packs through the screen's own reload (the
    /// answer to *that* request counts), the history page 1 as its own request.
    static func verificationReads(_ v: inout Verification, balance: Bool, history: Bool, packs: Bool, _ state: inout AppState) -> [Effect] {
        var effects: [Effect] = []
        if balance {
            effects += reloadBalance(&state)
            v.balanceRead = state.balance.token
            v.balanceReads.out = true
        }
        if history {
            effects += cancel(.verificationHistory, &state)
            effects.append(.request(state.ask(.verificationHistory), .history(user: state.context.user, page: 1, perPage: HistoryState.defaultPerPage)))
            v.historyReads.out = true
        }
        if packs {
            effects += reloadPacks(&state)
            v.packsRead = state.packs.list.token
            v.packsReads.out = true
        }
        return effects
    }

    /// A balance answer: it counts for the verification when it is the read asked after the write.
    static func verificationBalance(_ token: Token, _ result: Result<CheerBalance, ShopAPIError>, requestID: String?, _ state: inout AppState) -> [Effect] {
        guard var v = state.write.verification, v.balanceRead == token, v.balanceReads.out else { return [] }
        v.balanceRead = nil
        v.balanceReads.answered(result.map { Sighting($0.balance, requestID: requestID) }.mapError(ReadFailure.init))
        state.write.verification = v
        return continueVerification(&state)
    }

    /// Which of a verification's reads.
    enum VerificationRead { case balance, history, packs }

    /// A verification read that will not answer (cancelled): that value's reads stop.
    static func verificationUnread(_ which: VerificationRead, _ words: String, _ state: inout AppState) -> [Effect] {
        guard var v = state.write.verification else { return [] }
        switch which {
        case .balance:
            v.balanceRead = nil
            v.balanceReads.answered(.failure(ReadFailure(words: words)))
        case .packs:
            v.packsRead = nil
            v.packsReads.answered(.failure(ReadFailure(words: words)))
        case .history:
            guard v.historyReads.out else { return [] }
            v.historyReads.answered(.failure(ReadFailure(words: words)))
        }
        state.write.verification = v
        return continueVerification(&state)
    }

    static func verificationPacks(_ token: Token, _ result: Result<AudioPackList, ShopAPIError>, requestID: String?, _ state: inout AppState) -> [Effect] {
        guard var v = state.write.verification, v.packsRead == token, v.packsReads.out, let product = v.kind.spend?.product else { return [] }
        v.packsRead = nil
        v.packsReads.answered(result.map { list in Sighting(list.packs.first { $0.identifier == product }?.cheerTotal, requestID: requestID) }
            .mapError(ReadFailure.init))
        state.write.verification = v
        return continueVerification(&state)
    }

    /// The first history page read for the verification (its own request: the cursor may be anywhere).
    static func verificationHistory(_ result: Result<CheerHistoryPage, ShopAPIError>, requestID: String?, _ state: inout AppState) -> [Effect] {
        guard var v = state.write.verification, v.historyReads.out else { return [] }
        v.historyReads.answered(result.map { page in
            let newest = page.items.first.flatMap { if case let .entry(e) = $0 { return e } else { return nil } }
            return Sighting(.init(newest: newest, total: page.totalCount), requestID: requestID)
        }.mapError(ReadFailure.init))
        if case let .success(page) = result { v.historyPages.append(page) }
        state.write.verification = v
        return continueVerification(&state)
    }

    /// Once every read out is back: another read of each value that disagrees with the write (after a
    /// pause), or, when none does or the bound is reached, the conclusion.
    static func continueVerification(_ state: inout AppState) -> [Effect] {
        guard let v = state.write.verification, v.readsAreIn, !state.inFlight.contains(.verificationWake) else { return [] }
        let wanted = v.wanted
        guard wanted.balance || wanted.history || wanted.packs else { return concludeVerification(&state) }
        let reads = max(v.balanceReads.sightings.count, v.historyReads.sightings.count, v.packsReads.sightings.count)
        let pause = ReadSeries<Int>.pauses[min(max(reads - 1, 0), ReadSeries<Int>.pauses.count - 1)]
        return [.wake(state.ask(.verificationWake), after: pause)]
    }

    /// The pause before the next reads is over: read again what still disagrees.
    static func verificationWoke(_ state: inout AppState) -> [Effect] {
        guard var v = state.write.verification else { return [] }
        let wanted = v.wanted
        let effects = verificationReads(&v, balance: wanted.balance, history: wanted.history, packs: wanted.packs, &state)
        state.write.verification = v
        return effects + continueVerification(&state)
    }

    /// Once every read is settled: the write's one outcome, and from it the checks, the notice and the
    /// dialog. The header shows the balance the reads settled on (never a read that flipped).
    static func concludeVerification(_ state: inout AppState) -> [Effect] {
        guard var v = state.write.verification else { return [] }
        state.write.verification = nil
        if case let .baseline(summary) = v.stage { return concludeBaseline(&v, summary: summary, &state) }
        let anomalies = v.settle(user: state.context.user)
        v.lagSeen = !(anomalies + state.write.baselineFindings).isEmpty
        let requestID = v.answer.failureRequestID ?? v.writeRequestID ?? state.lastWriteExchange?.requestID
        var outcome = WriteOutcome.judge(v, requestID: requestID)
        outcome.readFindings = state.write.baselineFindings + anomalies
        state.write.baselineFindings = []
        if case let .read(settled) = v.balance { outcome.settledBalance = settled }
        // What the write made is what this machine knows of the user now: a later read of the state before
        // it is a lagging one (the timeline, kept in the cache for the next run).
        var effects: [Effect] = []
        if outcome.applied == .yes || outcome.answer == .refused, let point = v.settledPoint(at: v.at) {
            state.write.timeline.record(point)
            effects.append(.writeTimeline(key: state.context.userKey, state.write.timeline))
        }
        if outcome.settlesLostPurchase, case .purchase = v.kind { state.write.lostPurchase = nil }
        // What the reads settled on is what this machine knows now: the cache holds it (the next run's
        // baseline is checked against it), and the history list reads its pages again, after the lag.
        if case let .read(facts) = v.history, let i = v.historyReads.sightings.lastIndex(where: { $0.value == facts }), i < v.historyPages.count {
            outcome.settledFirstPage = v.historyPages[i]
            effects.append(.writeFirstPage(key: state.context.userKey, v.historyPages[i], fetchedAt: v.at))
        }
        if v.isSpend { effects += reloadHistory(settled: outcome.settledFirstPage, at: v.at, &state) }
        state.write.outcome = outcome
        if case let .read(settled) = v.balance, !state.balance.isLoading {
            state.balance.succeeded(settled, at: state.balance.at ?? v.at)
            effects.append(.writeBalance(key: state.context.userKey, CheerBalance(balance: settled), fetchedAt: state.balance.at ?? v.at))
        }
        state.checks.add(anomalies + outcome.checks)
        // The dialog, if it is still open on this write, says the outcome (`WriteFlow.shownOutcome`).
        state.notice = outcome.notice
        return effects
    }
}

extension ShopUpdate {
    /// After a spend: the history list drops its pages and takes page 1 as the reads settled on it, with no
    /// read of its own (a read now could answer the lag's older page again and show a flip); another page
    /// under the cursor is read again.
    static func reloadHistory(settled: CheerHistoryPage?, at: Date, _ state: inout AppState) -> [Effect] {
        var effects = invalidateHistory(&state, merge: false)
        guard let settled, state.history.page == 1, settled.perPage == state.history.perPage, let token = state.history.pages[1]?.token else {
            return effects
        }
        effects.removeAll { if case let .request(t, _) = $0 { return t == token } else { return false } }
        return effects + pageLoaded(1, token, .success(settled), at: at, &state)
    }
}

extension ReadFailure {
    /// A failed read in our words (`ErrorText`).
    init(_ error: ShopAPIError) { self.init(words: ErrorText.line(error)) }
}
