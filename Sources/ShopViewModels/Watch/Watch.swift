import Foundation
import ShopAPI
import ShopModel

/// What the watch reads: the purpose of its reads (`Purpose.watch`), each sent as a `ShopRequest`.
public enum WatchRead: Hashable, Sendable {
    case balance
    /// The newest entries (the first page, `perPage` of them).
    case history(perPage: Int)
    case packs

    func request(user: String) -> ShopRequest {
        switch self {
        case .balance: return .balance(user: user)
        case let .history(perPage): return .history(user: user, page: 1, perPage: perPage)
        case .packs: return .packs
        }
    }
}

/// Watching the user under test (`w`, `--watch`, `reiterate-shop watch`): every interval the balance
/// and the newest history entries are read (the packs every few rounds), each change becomes an event
/// of the `5 Live` timeline, and `Reconciler` explains it or flags it.
public struct WatchState: Equatable, Sendable {
    public static let timelineCapacity = 500
    /// Entries read each round: the newest page, small.
    public static let perPage = 20
    /// The longest wait after failures.
    public static let maxBackoff: Double = 60

    public enum Phase: Equatable, Sendable {
        case off
        case watching
        /// Reads failed: the next round waits `seconds` (doubling, or what `Retry-After` said).
        case backingOff(seconds: Int)
        /// `w` paused it: no reads, and the last ones kept, so resuming reconciles across the pause.
        case paused
    }

    public internal(set) var phase: Phase = .off
    /// Seconds between rounds.
    public var interval: Double
    /// The packs are read every this many rounds.
    public var packsEvery = 5
    /// Newest first, at most `timelineCapacity`, and the selected one.
    public internal(set) var timeline = SelectableList<WatchEvent>()
    /// Events made so far (the timeline keeps the last ones), and findings among them.
    public internal(set) var eventCount = 0
    public internal(set) var findingCount = 0
    /// Rounds completed.
    public internal(set) var rounds = 0
    /// Why the last read of the watch failed, until a round completes again.
    public internal(set) var lastFailure: ShopAPIError?

    var last: Observation?
    var round = Round()
    var failures = 0
    var lastPacks: [AudioPack]?
    var lastPacksRequestID: String?
    /// Amounts of the entries surely made between the last packs read and the next, per pack: a
    /// lower bound of how much each total must grow. Reads are not one snapshot: an entry first seen in
    /// the round right after a packs read may have been made before it, so that round's do not count.
    var cheeredSincePacks: [String: Int] = [:]
    var skipCheersOfNextRound = true
    /// The packs read before the last, and every cheer seen since it (the round right after the last packs
    /// read included): an entry first seen in that round was made after the reads before it, so surely after
    /// the packs read before the last. Over the two reads, no cheer is left out (issue 35: a cheer credited
    /// to another pack in that round was missed).
    var packsBeforeLast: [AudioPack]?
    var packsBeforeLastRequestID: String?
    var cheeredSinceBeforeLast: [String: Int] = [:]
    /// Writes this tool made since the last round.
    var own: [ShopWrite] = []
    /// Rounds held back unjudged: compared with the last reads they made a finding, so the round is read
    /// again (at most twice more, over about 1.5 s) before anything is judged (settled reads).
    var suspects: [Observation] = []
    /// A stale read was told on the timeline (once: the Checks tab counts the rest).
    var staleTold = false
    /// The app's writes seen through the proxy, as they pair with the reads.
    var app = AppWriteBook()
    /// The proxy runs: the app's writes are paired with the reads, and every change names its cause.
    public var pairing = false

    /// One round's reads, in order: the balance, the newest entries, the balance again. The two
    /// balances bracket the entries: when they agree, no write landed between them (a write moves the
    /// balance), so the entries and the balance are one state and can be reconciled. When they do not,
    /// the entries are read again, bracketed by the newer balance.
    struct Round: Equatable, Sendable {
        var opening: (value: Int, requestID: String?)?
        var history: (page: CheerHistoryPage, requestID: String?)?
        /// Times the balance moved while the entries were read.
        var crossed = 0
        /// A write of this tool was out during the round (or answered in it): whether the reads saw
        /// it cannot be told, so the round is not compared; the next one is, with the write counted.
        var ownWriteCrossed = false
        /// When the round's first read was sent: an app write answered after it may or may not show in it.
        var startedAt: Date?

        static func == (a: Round, b: Round) -> Bool {
            a.startedAt == b.startedAt && a.opening?.value == b.opening?.value && a.opening?.requestID == b.opening?.requestID
                && a.history?.page == b.history?.page && a.history?.requestID == b.history?.requestID && a.crossed == b.crossed
                && a.ownWriteCrossed == b.ownWriteCrossed
        }
    }

    /// Reads of the entries a round tries before it gives up comparing (the balance kept moving).
    public static let maxCrossings = 4

    /// The stand-in's bundle sizes (its `CheerBundle`s' cheer).
    public static let standInBundles = CheerBundle.standIn.map(\.cheer)

    /// How a finding is told (nil: it is not, beyond the screen).
    public var alert: AlertStyle?
    /// Watching starts with the session (`--watch`, `watch = true`).
    public var onAtStart = false

    public init(interval: Double = 2, alert: AlertStyle? = .bell) {
        self.interval = max(0.2, interval)
        self.alert = alert
    }

    /// Rounds are being read (or waited for after failures): neither off nor paused.
    public var isOn: Bool { phase != .off && phase != .paused }

    /// What the last rounds changed, marked briefly on the other tabs.
    public internal(set) var marks = WatchMarks()

    /// The packs are read after this round's other reads.
    var packsDue: Bool { lastPacks == nil || rounds % max(1, packsEvery) == 0 }

    /// `● watching 2 s`, `● backing off 8 s`, or nil when off.
    public var badge: String? {
        switch phase {
        case .off: return nil
        case .watching: return "● watching \(Self.seconds(interval))"
        case let .backingOff(seconds): return "● backing off \(seconds) s"
        case .paused: return "‖ paused"
        }
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : String(format: "%.1f s", s)
    }

    mutating func add(_ events: [WatchEvent]) {
        guard !events.isEmpty else { return }
        // Newest first; a round's events keep their order, above the older ones.
        // The selected event stays selected (the newest, if it was selected).
        timeline.replace(with: Array((events.reversed() + timeline.rows).prefix(Self.timelineCapacity)), topStays: true) { $0 + events.count }
        eventCount += events.count
        findingCount += events.filter { if case .finding = $0.change { return true } else { return false } }.count
    }
}

extension ShopUpdate {
    /// `w`: starts watching, pauses it, or resumes it.
    static func toggleWatch(_ state: inout AppState) -> [Effect] {
        switch state.watch.phase {
        case .off: return startWatch(&state)
        case .paused: return resumeWatch(&state)
        case .watching, .backingOff: return pauseWatch(&state)
        }
    }

    static func startWatch(_ state: inout AppState) -> [Effect] {
        guard state.watch.phase == .off else { return [] }
        state.watch.phase = .watching
        state.watch.failures = 0
        forget(&state)
        // Stamped with the time its first read is sent (the update's clock is the last answer's, maybe long ago).
        state.watch.add([WatchEvent(at: .distantPast,
                                    change: .status("watching \(state.context.user) every \(WatchState.seconds(state.watch.interval))"))])
        state.notice = Notice(.info, "Watching \(state.context.user): changes show on the Live tab (w pauses)")
        state.steps.add("started watching \(state.context.user) every \(WatchState.seconds(state.watch.interval)) (w)")
        return beginRound(&state)
    }

    /// No reads until `w` again; what was last read is kept, so the first round after reconciles
    /// everything that happened meanwhile.
    static func pauseWatch(_ state: inout AppState) -> [Effect] {
        guard state.watch.isOn else { return [] }
        state.watch.phase = .paused
        state.watch.round = .init()
        state.watch.suspects = []
        state.watch.marks = WatchMarks()
        state.watch.add([WatchEvent(at: state.clock ?? .distantPast, change: .status("paused"))])
        state.notice = Notice(.info, "Watch paused: w resumes, and reconciles what changed meanwhile.")
        state.steps.add("paused the watch (w)")
        return cancelRequests(&state) { $0.isWatch }
    }

    static func resumeWatch(_ state: inout AppState) -> [Effect] {
        guard state.watch.phase == .paused else { return [] }
        state.watch.phase = .watching
        state.watch.failures = 0
        let since = state.watch.last.map { last in state.clock.map { " (compared with the reads of \(Wording.age(of: last.at, now: $0)))" } ?? "" } ?? ""
        state.watch.add([WatchEvent(at: .distantPast, change: .status("resumed\(since)"))])
        state.notice = Notice(.info, "Watching \(state.context.user) again.")
        state.steps.add("resumed the watch (w)")
        return beginRound(&state)
    }

    /// A fresh start: no last reads, no marks, no writes of this tool pending.
    static func forget(_ state: inout AppState) {
        state.watch.last = nil
        state.watch.round = .init()
        state.watch.suspects = []
        state.watch.own = []
        state.watch.app.span = []
        state.watch.app.crossedRounds = 0
        state.watch.app.userConfirmed = false
        state.watch.app.unconfirmedTold = false
        state.watch.lastPacks = nil
        state.watch.packsBeforeLast = nil
        state.watch.cheeredSinceBeforeLast = [:]
        state.watch.cheeredSincePacks = [:]
        state.watch.skipCheersOfNextRound = true
        state.watch.marks = WatchMarks()
    }

    /// A user switch moves the watch to the new user: it starts afresh from the new user's first read.
    /// Paused, it stays paused, and will start from the new user's first read.
    static func moveWatch(_ state: inout AppState) -> [Effect] {
        guard state.watch.phase != .off else { return [] }
        forget(&state)
        state.watch.add([WatchEvent(at: .distantPast, change: .status("now watching \(state.context.user)"))])
        return state.watch.isOn ? beginRound(&state) : []
    }

    /// Starts a round: the balance first, then the newest entries, then the balance again (see
    /// `WatchState.Round`). One read of a kind at most. Every few rounds the packs are read after them
    /// (so the entries of the round are surely older than the totals read).
    static func beginRound(_ state: inout AppState) -> [Effect] {
        var effects = cancelRequests(&state) { $0 == .watchWake }
        state.watch.round = .init()
        state.watch.round.ownWriteCrossed = state.inFlight.contains(.write)
        effects += watchAsk(.balance, &state)
        return effects
    }

    static func watchAsk(_ read: WatchRead, _ state: inout AppState) -> [Effect] {
        guard !state.inFlight.contains(.watch(read)) else { return [] }
        return [.request(state.ask(.watch(read)), read.request(user: state.context.user))]
    }

    static func scheduleRound(after seconds: Double, _ state: inout AppState) -> [Effect] {
        guard state.watch.isOn, !state.inFlight.contains(.watchWake) else { return [] }
        return [.wake(state.ask(.watchWake), after: seconds)]
    }

    static func watchWoke(_ state: inout AppState) -> [Effect] {
        guard state.watch.isOn else { return [] }
        return beginRound(&state)
    }

    /// A watch read answered.
    static func watchLoaded(_ read: WatchRead, _ reply: ShopReply, _ state: inout AppState) -> [Effect] {
        guard state.watch.isOn else { return [] }
        let at = reply.answeredAt
        switch reply.result {
        case let .failure(error):
            // The packs are news, not the watch's pulse: the round ends, the next read asks again.
            if read == .packs { return scheduleRound(after: state.watch.interval, &state) }
            return watchFailed(error, at: at, &state)
        case let .success(answer):
            switch answer {
            case let .balance(b):
                // The header follows the watch (unless a balance request of its own is out).
                if !state.balance.isLoading { state.balance.succeeded(b.balance, at: at) }
                let read = (value: b.balance, requestID: reply.requestID)
                guard let opening = state.watch.round.opening, state.watch.round.history != nil else {
                    if state.watch.round.opening == nil {
                        state.watch.round.startedAt = reply.sentAt
                        stampUndated(reply.sentAt, &state)
                    }
                    state.watch.round.opening = read
                    return watchAsk(.history(perPage: WatchState.perPage), &state)
                }
                if read.value == opening.value { return finishRound(balance: read, at: at, &state) }
                // A write landed while the entries were read: read them again, after this balance.
                state.watch.round.crossed += 1
                guard state.watch.round.crossed < WatchState.maxCrossings else {
                    state.watch.round = .init()
                    _ = note([WatchEvent(at: at, change: .status("the balance moved during each of \(WatchState.maxCrossings) reads of the entries: compared next round"))], &state)
                    return scheduleRound(after: state.watch.interval, &state)
                }
                state.watch.round.opening = read
                state.watch.round.history = nil
                return watchAsk(.history(perPage: WatchState.perPage), &state)
            case let .history(page):
                state.watch.round.history = (page, reply.requestID)
                return watchAsk(.balance, &state)
            case let .packs(list):
                var effects: [Effect] = []
                if let before = state.watch.lastPacks {
                    let ids = [state.watch.lastPacksRequestID, reply.requestID].compactMap { $0 }
                    let events = Reconciler.comparePacks(before, list.packs, cheered: state.watch.cheeredSincePacks, at: at, requestIDs: ids)
                    effects = note(events, &state)
                    // Over the two reads of the packs: the cheers of the round the last window left out count too.
                    if let older = state.watch.packsBeforeLast {
                        let flagged = Set(events.compactMap { e -> String? in
                            if case let .finding(.packTotal, expected, _) = e.change { return expected } else { return nil }
                        })
                        let wider = Reconciler.comparePacks(older, list.packs, cheered: state.watch.cheeredSinceBeforeLast, at: at,
                                                            requestIDs: [state.watch.packsBeforeLastRequestID, reply.requestID].compactMap { $0 })
                        let names = Set(list.packs.filter { p in flagged.contains { $0.hasPrefix(p.name + " ") } }.map(\.name))
                        effects += note(wider.filter { e in
                            guard case let .finding(.packTotal, expected, _) = e.change else { return false }
                            return !names.contains { expected.hasPrefix($0 + " ") }  // not told twice for one pack
                        }, &state)
                    }
                }
                if let before = state.watch.lastPacks {
                    // The next window over two reads starts at this one's start: its sure cheers (the round right
                    // after that read left out: it may be older), and every cheer from now on.
                    state.watch.packsBeforeLast = before
                    state.watch.packsBeforeLastRequestID = state.watch.lastPacksRequestID
                    state.watch.cheeredSinceBeforeLast = state.watch.cheeredSincePacks
                }
                if let before = state.watch.lastPacks { state.watch.marks.seen(packs: before, list.packs, at: at) }
                state.watch.lastPacks = list.packs
                state.watch.lastPacksRequestID = reply.requestID
                // The Shop tab's totals follow the watch (unless a packs request of its own is out).
                if !state.packs.list.isLoading {
                    state.packs.list.succeeded(list, at: at)
                    state.packs.refresh()
                }
                state.watch.cheeredSincePacks = [:]
                state.watch.skipCheersOfNextRound = true
                return effects + scheduleRound(after: state.watch.interval, &state)
            }
        }
    }

    /// The round's reads agree (the balance did not move while the entries were read): compare with
    /// the last round, then wait for the next.
    static func finishRound(balance: (value: Int, requestID: String?), at: Date, _ state: inout AppState) -> [Effect] {
        guard let history = state.watch.round.history else { return [] }
        let expired = state.watch.pairing ? expireOut(now: at, &state) : []
        let appSpan = state.watch.pairing ? appSpan(roundStart: state.watch.round.startedAt ?? at, roundEnd: at, state) : []
        if state.watch.round.ownWriteCrossed || state.inFlight.contains(.write) || appSpan == nil {
            // A write (this tool's, or the app's) crossed the round: compared next round, from the same last reads.
            state.watch.round = .init()
            var told = expired
            if appSpan == nil { told += appCrossed(at: at, &state) }
            let effects = note(told, &state)
            return effects + scheduleRound(after: state.watch.interval, &state)
        }
        state.watch.app.crossedRounds = 0
        let observation = Observation(at: at, balance: balance.value, balanceRequestID: balance.requestID, items: history.page.items,
                                      total: history.page.totalCount, historyRequestID: history.requestID)
        state.watch.round = .init()
        // Settled reads: a round that would make a finding is read again before it is judged, and judged only
        // on reads that held still: the last two reads of it agree.
        if let last = state.watch.last {
            var trial = state  // the round's comparison as it would be made, on a copy: nothing of it is kept
            let preview = pairedCompare(last, observation, span: appSpan, names: [:], &trial)
            if preview.contains(where: { if case .finding = $0.change { return true } else { return false } }) {
                if state.watch.suspects.count < ReadSeries<Int>.maxReads - 1 {
                    state.watch.suspects.append(observation)
                    return scheduleRound(after: ReadSeries<Int>.pauses[state.watch.suspects.count - 1], &state)
                }
                if let previous = state.watch.suspects.last, !previous.sameState(as: observation) {
                    // Still moving after three reads (writes keep landing, a replica keeps lagging): not judged
                    // now; the next round compares from the same last reads.
                    state.watch.suspects = []
                    return scheduleRound(after: state.watch.interval, &state)
                }
            }
        }
        let heldBack = state.watch.suspects
        state.watch.suspects = []
        state.watch.rounds += 1
        state.watch.lastFailure = nil
        stampUndated(at, &state)
        if state.watch.failures > 0 {
            state.watch.failures = 0
            state.watch.phase = .watching
            _ = note([WatchEvent(at: at, change: .status("the reads answer again"))], &state)
        }
        var effects: [Effect] = []
        state.watch.marks.expire(now: at)
        if let last = state.watch.last {
            var names: [String: String] = [:]
            for pack in state.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
            let events = expired + pairedCompare(last, observation, span: appSpan, names: names, &state)
            // An entry recorded twice for one request counts once (the app cheered once).
            for event in events where event.causedBy != .finding(.entryTwice) {
                guard case let .entry(e) = event.change else { continue }
                if !state.watch.skipCheersOfNextRound {
                    state.watch.cheeredSincePacks[e.product, default: 0] = state.watch.cheeredSincePacks[e.product, default: 0].plusSaturating(e.amount)
                }
                // Every cheer, the left-out round's too: surely after the packs read before the last.
                state.watch.cheeredSinceBeforeLast[e.product, default: 0] = state.watch.cheeredSinceBeforeLast[e.product, default: 0].plusSaturating(e.amount)
            }
            let moved = heldBack.contains { !$0.sameState(as: observation) }
            if moved, !events.contains(where: { if case .finding = $0.change { return true } else { return false } }) {
                // The reads held back answered a state the reads after them do not keep: a lagging read.
                effects += noteStaleRead(heldBack, settled: observation, last: last, &state)
            }
            effects += note(events, &state)
            state.watch.marks.seen(events, balance: observation.balance.minusSaturating(last.balance), at: at)
            // What changed shows on the other tabs too: the history list takes the new entries.
            if observation.total != last.total || events.contains(where: { if case .entry = $0.change { return true } else { return false } }) {
                effects += invalidateHistory(&state, merge: true)
            }
        }
        if state.watch.last == nil, state.watch.pairing {
            // The first reads: the app's writes answered before them are in them, with nothing to compare.
            effects += note(expired, &state)
            _ = pairedRound(appSpan ?? [], events: [], at: at, &state)
        }
        state.watch.skipCheersOfNextRound = false
        state.watch.own = []
        state.watch.last = observation
        // The packs, when due, after this round's reads; the next round waits for them.
        if state.watch.packsDue, !state.inFlight.contains(.watch(.packs)) {
            return effects + watchAsk(.packs, &state)
        }
        return effects + scheduleRound(after: state.watch.interval, &state)
    }

    /// A start, a resume or a switch takes the time its first read was sent (or, failing that, of its first round).
    static func stampUndated(_ at: Date, _ state: inout AppState) {
        for (i, event) in state.watch.timeline.rows.enumerated() where event.at == .distantPast {
            var dated = event
            dated.at = at
            state.watch.timeline.update(at: i, dated)
        }
    }

    /// A read failed: said once per outage, and the next round waits longer (or as `Retry-After` says).
    static func watchFailed(_ error: ShopAPIError, at: Date, _ state: inout AppState) -> [Effect] {
        state.watch.round = .init()
        state.watch.failures += 1
        state.watch.lastFailure = error
        let doubled = state.watch.interval * pow(2, Double(min(state.watch.failures, 10)))
        var wait = min(WatchState.maxBackoff, doubled)
        var why = ""
        if case let .http(429, _, _, _, _, retryAfter?) = error {
            wait = Double(max(1, retryAfter))
            why = " (the server asked for \(retryAfter) s)"
        }
        let seconds = Int(wait.rounded(.up))
        state.watch.phase = .backingOff(seconds: seconds)
        var effects = cancelRequests(&state) { if case .watch = $0 { return true } else { return false } }
        _ = note([WatchEvent(at: at, change: .error(ErrorText.words(error), then: " — backing off \(seconds) s" + why),
                             requestIDs: error.requestID.map { [$0] } ?? [])], &state)
        effects += scheduleRound(after: wait, &state)
        return effects
    }
}
