import Foundation
import ShopAPI

/// The app's writes as the watch pairs them with its reads (`WatchState.app`): those out, those since
/// the last compared reads, the last few (for what the app does next), and the purchases credited.
struct AppWriteBook: Equatable, Sendable {
    /// How long after a purchase's lost answer a purchase of the same bundle counts as its retry, and
    /// after which the app is taken to have given up.
    static let retryWindow: TimeInterval = 60
    /// A second write of the same ask this soon after the first's answer is a double submission.
    static let doubleSubmitWindow: TimeInterval = 1
    /// …or this soon after the first was sent, while it had no answer yet (a tap on a write that hangs
    /// for longer is a user's choice to try again).
    static let unansweredWindow: TimeInterval = 5
    static let recentCapacity = 64
    /// App writes waiting to be paired, at most (beyond: the watch starts afresh).
    static let spanCapacity = 1_000
    /// A write out this long without an end is taken as lost to the watch (the proxy's upstream timeout
    /// is 30 s by default).
    static let outLimit: TimeInterval = 120
    /// Rounds in a row the app's writes may cross before the timeline says so.
    static let crossedRoundsTold = 5
    static let creditedCapacity = 1_000

    /// Sent, no answer yet: a round these cross is not compared.
    var out: [Int: AppWrite] = [:]
    /// Rounds in a row not compared because an app write crossed them.
    var crossedRounds = 0
    /// A write naming no user (the token names it) was seen explained by this user's reads: the app is
    /// signed in as the watched user. Until then such writes are not paired (no verdict on another user's data).
    var userConfirmed = false
    var unconfirmedTold = false
    /// Finished since the last compared round, not yet paired.
    var span: [AppWrite] = []
    var recent: [AppWrite] = []
    /// Transaction ids the server answered 2xx for, oldest first, with the write.
    var credited: [(transaction: TransactionID, write: AppWrite)] = []
    /// Purchases whose answer the app never got, waiting for what it does next.
    var lost: [LostAnswer] = []

    static func == (a: AppWriteBook, b: AppWriteBook) -> Bool {
        a.out == b.out && a.span == b.span && a.recent == b.recent && a.lost == b.lost && a.credited.map(\.write) == b.credited.map(\.write)
            && a.crossedRounds == b.crossedRounds && a.userConfirmed == b.userConfirmed && a.unconfirmedTold == b.unconfirmedTold
    }
}

/// A purchase the server took whose answer the app never got.
struct LostAnswer: Equatable, Sendable {
    var write: AppWrite
    /// Its retry with the same transaction id, once seen.
    var retry: AppWrite?
    /// Compared rounds paired the purchase, and its retry.
    var writePaired = false
    var retryPaired = false
    /// No finding in those rounds.
    var clean = true
}

extension ShopUpdate {
    /// An app write is going to the server: a round it crosses is not compared.
    static func appWriteSent(_ write: AppWrite, _ state: inout AppState) {
        // Kept with the watch off too: one out when `w` is pressed crosses the first reads.
        guard watched(write, state) else { return }
        state.watch.app.out[write.id] = write
    }

    /// An app write finished (answered, failed, or answered by a fault in the server's stead): on the
    /// timeline, then the verdicts the write alone gives (a double submission, a replay credited, what
    /// the app did after a lost answer).
    static func appWriteFinished(_ write: AppWrite, _ state: inout AppState) -> [Effect] {
        let wasOut = state.watch.app.out.removeValue(forKey: write.id) != nil
        guard watched(write, state) else {
            state.watch.add([WatchEvent(at: write.answeredAt ?? write.sentAt, change: .appWrite(write))])
            return []
        }
        let at = write.answeredAt ?? write.sentAt
        var names: [String: String] = [:]
        for pack in state.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        var events = [WatchEvent(at: at, change: .appWrite(write), requestIDs: [write.requestID].compactMap { $0 })]
        var book = state.watch.app
        let ids = { (ws: [AppWrite]) in ws.compactMap(\.requestID) }
        func finding(_ check: WatchCheck, _ expected: String, _ actual: String, _ writes: [AppWrite]) {
            events.append(WatchEvent(at: at, change: .finding(check, expected: expected, actual: actual), outcome: .flagged, requestIDs: ids(writes)))
        }
        // The same ask twice: the second before the first's answer, or within a second of it (a retry
        // after a lost answer is judged below instead).
        // A purchase sent again with its transaction id and answered 409 is a safe retry, not a double charge.
        let safeRetry = write.purchase != nil && write.status == 409
        if write.reachedServer, !safeRetry, let other = book.recent.last(where: { r in
            guard r.sameAsk(write), r.reachedServer, !r.answerLost else { return false }
            let answered = r.answeredAt ?? .distantFuture
            if write.sentAt < answered { return abs(write.sentAt.timeIntervalSince(r.sentAt)) <= AppWriteBook.unansweredWindow }
            return write.sentAt.timeIntervalSince(answered) <= AppWriteBook.doubleSubmitWindow
        }) {
            // Told in the order sent (the second may have been answered first).
            let (first, again) = other.sentAt <= write.sentAt ? (other, write) : (write, other)
            let gap = first.answeredAt.map { again.sentAt < $0 ? "before its answer" : String(format: "%.1f s after its answer", again.sentAt.timeIntervalSince($0)) } ?? "before its answer"
            finding(.doubleSubmission, "one \(first.request(names: names)) (\(first.requestID ?? "no request id"))", "sent again \(gap) (\(again.requestID ?? "no request id")): a possible double submission", [first, again])
        }
        if let p = write.purchase, write.applied {
            // The same transaction whether its id came as a number or as text ("42"): credited twice is the
            // server's fault however the app spelled it (the app's text is its own finding, on its request).
            if let credited = book.credited.last(where: { $0.transaction.sameTransaction(as: p.transactionID) && $0.write.id != write.id }) {
                finding(.replayCredited, "409 for transaction \(p.transactionID), credited already (\(credited.write.requestID ?? "no request id"))",
                        "\(write.status ?? 200), credited again (\(write.requestID ?? "no request id"))", [credited.write, write])
                if write.answerChecks.contains(.creditedOnce) { events[events.count - 1].causedBy = .answer(.creditedOnce, requestID: write.requestID) }
            }
            book.credited.append((p.transactionID, write))
            if book.credited.count > AppWriteBook.creditedCapacity { book.credited.removeFirst(book.credited.count - AppWriteBook.creditedCapacity) }
        }
        if let p = write.purchase, write.reachedServer, !write.answerLost,
           let i = book.lost.firstIndex(where: { l in
               l.retry == nil && l.write.purchase?.identifier == p.identifier && write.sentAt > (l.write.answeredAt ?? l.write.sentAt)
                   && write.sentAt.timeIntervalSince(l.write.answeredAt ?? l.write.sentAt) <= AppWriteBook.retryWindow
           }) {
            let lost = book.lost[i]
            if lost.write.purchase?.transactionID == p.transactionID {
                book.lost[i].retry = write
                events.append(WatchEvent(at: at, change: .note("the app retried \(lost.write.requestID ?? "its lost purchase") with the same transaction id: answered \(write.status.map(String.init) ?? "nothing")"),
                                         requestIDs: ids([lost.write, write])))
            } else {
                book.lost.remove(at: i)
                finding(.retryNewTransaction, "a retry with the same transaction id \(lost.write.purchase.map { "\($0.transactionID)" } ?? "") (the server answers 409 and credits nothing)",
                        "a new purchase, transaction \(p.transactionID) (\(write.requestID ?? "no request id")), after the answer to \(lost.write.requestID ?? "no request id") was lost: retried blindly, the user is charged twice",
                        [lost.write, write])
            }
        }
        if write.purchase != nil, write.answerLost, write.applied {
            book.lost.append(LostAnswer(write: write))
            events.append(WatchEvent(at: at, change: .note("the server credited \(write.requestID ?? "a purchase") but the app never got the answer: a retry must reuse its transaction id"),
                                     requestIDs: ids([write])))
        }
        // A spend has no transaction id to make its retry safe: sent again after its answer was lost, it is
        // spent twice (the contract: clients never retry it on their own).
        if case .spend = write.kind, write.answerLost, write.applied {
            events.append(WatchEvent(at: at, change: .note("the server took the spend \(write.requestID ?? "") but the app never got the answer: sending it again would spend twice"),
                                     requestIDs: ids([write])))
        }
        if case .spend = write.kind, write.reachedServer, write.applied,
           let lost = book.recent.last(where: { r in
               r.sameAsk(write) && r.answerLost && r.applied && write.sentAt > (r.answeredAt ?? r.sentAt)
                   && write.sentAt.timeIntervalSince(r.answeredAt ?? r.sentAt) <= AppWriteBook.retryWindow
           }) {
            finding(.doubleSubmission, "no second \(lost.request(names: names)) after its answer was lost (\(lost.requestID ?? "no request id")): the server had taken it",
                    "sent again (\(write.requestID ?? "no request id")): spent twice", [lost, write])
        }
        if write.reachedServer, state.watch.phase != .off {
            if !wasOut, let last = state.watch.last, write.sentAt <= last.at {
                // Its going out was never told (a dropped event): the last reads may hold it or not. The next
                // reads start afresh rather than pair it with a change it may not have made.
                state.watch.last = nil
                events.append(WatchEvent(at: at, change: .status("an app write went out unseen by the watch: compared afresh from the next reads")))
            } else {
                book.span.append(write)
            }
            if book.span.count > AppWriteBook.spanCapacity {
                // Paused or failing for a long while: too much to pair at once; start afresh.
                book.span = []
                state.watch.last = nil
                events.append(WatchEvent(at: at, change: .status("over \(AppWriteBook.spanCapacity) app writes since the last compared reads: compared afresh from the next reads")))
            }
        }
        // A lost answer the app never followed (the watch off or not comparing) is forgotten after a while.
        book.lost.removeAll { at.timeIntervalSince($0.write.answeredAt ?? $0.write.sentAt) > 2 * AppWriteBook.retryWindow }
        book.recent.append(write)
        if book.recent.count > AppWriteBook.recentCapacity { book.recent.removeFirst() }
        state.watch.app = book
        return note(events, &state)
    }

    /// Whether the write is the watched user's (or names none: the token names the user). The verdicts
    /// of the writes alone are made with the watch off too; pairing with reads needs it on (or paused).
    static func watched(_ write: AppWrite, _ state: AppState) -> Bool {
        write.user.map { $0 == state.context.user } ?? true
    }

    /// A lost answer's story, once the purchase and its same-id retry were both paired with reads: answered
    /// 409, and no finding across them, it was handled well. Answers whether the story is over.
    static func settle(_ lost: LostAnswer, at: Date) -> (over: Bool, events: [WatchEvent]) {
        guard lost.writePaired, lost.retryPaired, let retry = lost.retry, let p = lost.write.purchase else { return (false, []) }
        guard lost.clean, retry.status == 409 else { return (true, []) }  // the findings tell it
        return (true, [WatchEvent(at: at, change: .note("handled well: retried with the same transaction id \(p.transactionID), answered 409, credited once"),
                                  outcome: .reconciled, requestIDs: [lost.write.requestID, retry.requestID].compactMap { $0 })])
    }

    /// The round's span: the app writes the reads surely saw (answered before the round began). Nil when
    /// one crossed the round (out, or answered during it): the round is not compared.
    /// Writes out longer than `outLimit`: their end was lost to the watch (a dropped event). Dropped, and
    /// the next reads start afresh (they may hold such a write or not).
    static func expireOut(now: Date, _ state: inout AppState) -> [WatchEvent] {
        let stale = state.watch.app.out.values.filter { now.timeIntervalSince($0.sentAt) > AppWriteBook.outLimit }
        guard !stale.isEmpty else { return [] }
        for write in stale { state.watch.app.out[write.id] = nil }
        state.watch.last = nil
        return [WatchEvent(at: now, change: .status("\(stale.count) app write\(stale.count == 1 ? "" : "s") out over \(Int(AppWriteBook.outLimit)) s with no end seen: compared afresh from the next reads"))]
    }

    /// A round crossed by the app's writes: after a few in a row, the timeline says why nothing is compared.
    static func appCrossed(at: Date, _ state: inout AppState) -> [WatchEvent] {
        state.watch.app.crossedRounds += 1
        guard state.watch.app.crossedRounds == AppWriteBook.crossedRoundsTold else { return [] }
        return [WatchEvent(at: at, change: .status("the app's writes crossed each of the last \(AppWriteBook.crossedRoundsTold) rounds' reads: compared when the reads are quiet"))]
    }

    /// The span's writes the reads may be compared with: those naming the user, and those naming none once
    /// the app is known to be signed in as the user (`userConfirmed`). Answers whether writes were held back.
    static func pairable(_ span: [AppWrite], _ state: AppState) -> (writes: [AppWrite], heldBack: [AppWrite]) {
        guard !state.watch.app.userConfirmed else { return (span, []) }
        return (span.filter { $0.user != nil }, span.filter { $0.user == nil })
    }

    /// The watch's comparison of two reads, paired with the app's writes of the span when the proxy runs.
    static func pairedCompare(_ last: Observation, _ now: Observation, span: [AppWrite]?, names: [String: String], _ state: inout AppState) -> [WatchEvent] {
        let bundles = state.context.bundles
        func compare(_ app: [AppWrite]?) -> [WatchEvent] {
            Reconciler.compare(last, now, bundles: bundles.map(\.cheer), own: state.watch.own, names: names, app: app, catalog: bundles)
        }
        guard state.watch.pairing, let span else { return compare(nil) }
        let (writes, heldBack) = pairable(span, state)
        var events = compare(writes)
        if !heldBack.isEmpty {
            // Writes naming no user: paired once they are seen to be this user's (explained by the reads,
            // with nothing flagged), so that an app signed in as someone else makes no finding here.
            let trial = compare(span)
            let held = Set(heldBack.compactMap(\.requestID))
            let explained = trial.contains { e in e.causes.contains { if case let .app(id?) = $0 { return held.contains(id) } else { return false } } }
            let flagged = trial.contains { if case .finding = $0.change { return true } else { return false } }
            if explained, !flagged {
                state.watch.app.userConfirmed = true
                events = trial
            } else if !state.watch.app.unconfirmedTold {
                state.watch.app.unconfirmedTold = true
                let user = state.context.user
                events.append(WatchEvent(at: now.at, change: .status("the app's writes name no user, and \(user)'s reads do not show them yet: not paired until they do (is the phone signed in as \(user)?)")))
            }
        }
        return events + pairedRound(span, events: events, at: now.at, &state)
    }

    static func appSpan(roundStart: Date, roundEnd: Date, _ state: AppState) -> [AppWrite]? {
        if state.watch.app.out.values.contains(where: { $0.sentAt <= roundEnd }) { return nil }
        if state.watch.app.span.contains(where: { ($0.answeredAt ?? roundEnd) >= roundStart && $0.sentAt <= roundEnd }) { return nil }
        return state.watch.app.span.filter { ($0.answeredAt ?? roundEnd) < roundStart }
    }

    /// After a compared round: the writes it paired leave the span; lost answers learn whether they were
    /// credited once, and those the app did nothing about for a minute are told.
    static func pairedRound(_ paired: [AppWrite], events: [WatchEvent], at: Date, _ state: inout AppState) -> [WatchEvent] {
        let pairedIDs = Set(paired.map(\.id))
        state.watch.app.span.removeAll { pairedIDs.contains($0.id) }
        let clean = !events.contains { if case .finding = $0.change { return true } else { return false } }
        var told: [WatchEvent] = []
        var kept: [LostAnswer] = []
        for var lost in state.watch.app.lost {
            if pairedIDs.contains(lost.write.id) {
                lost.writePaired = true
                lost.clean = lost.clean && clean
            }
            if let retry = lost.retry, pairedIDs.contains(retry.id) {
                lost.retryPaired = true
                lost.clean = lost.clean && clean
            }
            let (over, events) = settle(lost, at: at)
            told += events
            if over { continue }
            if lost.retry == nil, at.timeIntervalSince(lost.write.answeredAt ?? lost.write.sentAt) > AppWriteBook.retryWindow {
                told.append(WatchEvent(at: at, change: .note("the app gave up on its purchase whose answer was lost (\(lost.write.requestID ?? "no request id")): the user saw a failure for a purchase that was credited"),
                                       requestIDs: [lost.write.requestID].compactMap { $0 }))
                continue
            }
            kept.append(lost)
        }
        state.watch.app.lost = kept
        return told
    }
}
