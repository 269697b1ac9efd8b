import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// The shop, the app going through the proxy, and the watch, driven through the one update function:
/// the shop's records are what the watch's reads show; the app's writes come as the proxy tells them.
struct PairingWalk {
    var d = Driver.loaded()
    var balance = 1_250
    var entries = WatchTests.older
    var total = 230
    var packTotals = Dictionary(samplePacks.packs.map { ($0.identifier, $0.cheerTotal ?? 0) }, uniquingKeysWith: { a, _ in a })
    var roundNumber = 0

    /// The proxy listening (pairing on), the watch started, and its first round read at `t0`.
    init(firstRound: Bool = true) {
        d.apply(.proxy(.listening(ProxyStatus(address: "127.0.0.1:8877", intercepting: ["shop.test:443"]))))
        d.apply(.action(.watch))
        if firstRound { _ = answerReads(at: t0) }
    }

    /// The shop records a cheer (`entries` times: a server that records one request twice), debiting it `debits` times.
    mutating func recordSpend(_ amount: Int, on product: String = rainPack, comment: String? = nil, at: Date, id: String, entries count: Int = 1, debits: Int = 1) {
        for n in 0..<count {
            entries.insert(CheerHistoryEntry(id: n == 0 ? id : "\(id)-\(n)", creator: "F", amount: amount, product: product, date: at.addingTimeInterval(Double(n)),
                                             comments: comment.map { [CheerComment(signature: "qa-alice", body: $0)] } ?? []), at: 0)
            packTotals[product, default: 0] += amount
        }
        total += count
        balance -= amount * debits
    }

    /// What the proxy tells of an app write: sent, then finished.
    mutating func app(_ write: AppWrite) -> [WatchEvent] {
        sending(write)
        return finished(write)
    }

    mutating func sending(_ write: AppWrite) {
        var out = write
        (out.answeredAt, out.status, out.balance) = (nil, nil, nil)
        d.apply(.proxy(.sending(out)))
    }

    mutating func finished(_ write: AppWrite) -> [WatchEvent] {
        added { $0.d.apply(.proxy(.finished(write))) }
    }

    /// The next round, its reads answered at `at` (each later read `spread` seconds after the one before).
    mutating func round(at: Date, spread: TimeInterval = 0) -> [WatchEvent] {
        guard let token = d.state.token(for: .watchWake) else {
            Issue.record("no round scheduled")
            return []
        }
        d.apply(.woke(token, at: at))
        return answerReads(at: at, spread: spread)
    }

    mutating func answerReads(at: Date, spread: TimeInterval = 0) -> [WatchEvent] {
        roundNumber += 1
        return added { walk in
            var when = at
            func read() {
                while let (token, purpose) = WatchTests.roundRead(walk.d.state.inFlight) {
                    let n = walk.roundNumber
                    let answer: ShopAnswer = purpose == .watch(.balance) ? .balance(CheerBalance(balance: walk.balance))
                        : .history(WatchTests.page(Array(walk.entries.prefix(WatchState.perPage)), total: walk.total))
                    walk.d.apply(.watchLoaded(token, .success(answer), requestID: purpose == .watch(.balance) ? "rq-b\(n)" : "rq-h\(n)", at: when))
                    when = when.addingTimeInterval(spread)
                }
            }
            read()
            // A round that would make a finding is read again before it is judged (settled reads): the shop's
            // reads agree here, so each read again answers the same (with the same request ids).
            while !walk.d.state.watch.suspects.isEmpty, let token = walk.d.state.token(for: .watchWake) {
                walk.d.apply(.woke(token, at: when))
                read()
            }
            if let token = walk.d.state.token(for: .watch(.packs)) {
                var list = samplePacks
                for i in list.packs.indices { list.packs[i].cheerTotal = walk.packTotals[list.packs[i].identifier] }
                walk.d.apply(.watchLoaded(token, .success(.packs(list)), requestID: "rq-p\(walk.roundNumber)", at: when))
            }
        }
    }

    /// The events `change` added to the timeline, oldest first.
    mutating func added(_ change: (inout PairingWalk) -> Void) -> [WatchEvent] {
        let before = d.state.watch.eventCount
        change(&self)
        return Array(d.state.watch.timeline.rows.prefix(d.state.watch.eventCount - before).reversed())
    }

    var findings: [WatchCheck] {
        d.state.watch.timeline.rows.reversed().compactMap { if case let .finding(c, _, _) = $0.change { return c } else { return nil } }
    }
}

/// Pairing through the update function: the app's writes (from the proxy) with the watch's reads.
@Suite struct AppPairingTests {
    static let names = ReconcileTests.names

    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }
    static func texts(_ events: [WatchEvent]) -> [String] { events.map { $0.text(names: names) } }
    static func finding(_ events: [WatchEvent], _ check: WatchCheck) -> WatchEvent? {
        events.first { if case let .finding(c, _, _) = $0.change { return c == check } else { return false } }
    }

    @Test func anAppSpendIsPairedWithWhatTheReadsShow() {
        var w = PairingWalk()
        #expect(w.d.state.watch.pairing && w.d.state.watch.rounds == 1)
        w.recordSpend(7, comment: "great pack", at: Self.at(1), id: "n1")
        let told = w.app(appSpend(1, 7, comment: "great pack", sent: Self.at(1), balance: 1_243))
        #expect(Self.texts(told) == ["app POST spend_cheer 7 on Rain on a Tin Roof “great pack” → 200 (balance 1,243) rq-a1"])
        #expect(told.first?.requestIDs == ["rq-a1"] && told.first?.kind == "app")
        let round = w.round(at: Self.at(2))
        #expect(Self.texts(round) == ["balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof “great pack” (app, rq-a1)"])
        #expect(round.allSatisfy { $0.outcome == .reconciled && $0.requestIDs == ["rq-b1", "rq-h1", "rq-b2", "rq-h2"] })
        #expect(w.d.state.watch.findingCount == 0 && w.d.state.watch.app.span.isEmpty)
    }

    @Test func aChangeNoWriteExplainsIsMadeElsewhereAndThisToolsSaysSo() {
        var w = PairingWalk()
        w.recordSpend(5, at: Self.at(1), id: "phone")
        #expect(Self.texts(w.round(at: Self.at(2))) == ["balance 1,250 → 1,245 (−5) (made elsewhere)", "new entry: 5 cheer on Rain on a Tin Roof (made elsewhere)"])
        w.d.apply(.write(.spend(product: rainPack, amount: 7, comment: "mine")))
        w.d.apply(.actionFinished(w.d.actionToken, .success(CheerBalance(balance: 1_238)), at: Self.at(3)))
        w.recordSpend(7, comment: "mine", at: Self.at(3), id: "tool")
        let round = w.round(at: Self.at(4))
        #expect(Self.texts(round) == ["balance 1,245 → 1,238 (−7) (this tool)", "new entry: 7 cheer on Rain on a Tin Roof “mine” (this tool)"])
        #expect(round.allSatisfy { $0.outcome == .own } && w.d.state.watch.findingCount == 0)
    }

    @Test func oneAppSpendRecordedTwiceIsTheServers() {
        var w = PairingWalk()
        w.recordSpend(7, comment: "x", at: Self.at(1), id: "n1", entries: 2)
        _ = w.app(appSpend(1, 7, comment: "x", sent: Self.at(1), balance: 1_243))
        let round = w.round(at: Self.at(4))
        #expect(w.findings == [.entryTwice, .debitMismatch] && w.findings.allSatisfy { $0.blame == .server })
        #expect(Self.finding(round, .entryTwice)?.requestIDs == ["rq-a1", "rq-b1", "rq-h1", "rq-b2", "rq-h2"])
        #expect(Self.finding(round, .debitMismatch)?.causedBy == .finding(.entryTwice))
        #expect(!round.contains { $0.text().contains("possible double submission") })
        #expect(w.d.state.checks.records.map(\.name).sorted() == ["debit-mismatch", "entry-twice"])
        let debit = w.d.state.checks.records.first { $0.name == "debit-mismatch" }
        #expect(debit?.finding.causedBy == "possibly caused by [entry-twice] (above)" && debit?.actual.contains("possibly") == false)
        #expect(debit.map { $0.follows(among: w.d.state.checks.records) } == "possibly caused by [entry-twice] (above)")
    }

    @Test func purchasesCreditedWronglyAndAnswersContradictedAreTheServers() {
        var w = PairingWalk()
        w.balance += 400  // bundle 200 credited +400
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1), balance: 1_450))
        let mismatch = w.round(at: Self.at(2))
        #expect(Self.finding(mismatch, .creditMismatch)?.text() == "[credit-mismatch] expected +200 for the app's purchase of com.reiterate.cheer.200 (rq-a1), got +400 credited")
        _ = w.app(appPurchase(2, bundle: 100, transaction: 43, sent: Self.at(3), balance: 1_750))  // +0
        let none = w.round(at: Self.at(4))
        #expect(Self.finding(none, .notCredited)?.requestIDs == ["rq-a2", "rq-b2", "rq-h2", "rq-b3", "rq-h3"])
        w.recordSpend(7, at: Self.at(5), id: "n1")
        _ = w.app(appSpend(3, 7, sent: Self.at(5), balance: 1_600))  // the read shows 1,643
        let contradicted = w.round(at: Self.at(6))
        #expect(Self.finding(contradicted, .answerContradicted)?.text(names: Self.names)
            == "[answer-contradicted] expected balance 1,600, as the answer to the app's POST spend_cheer 7 on Rain on a Tin Roof (rq-a3) said, got balance 1,643 in the next read")
        #expect(w.findings == [.creditMismatch, .notCredited, .answerContradicted] && w.findings.allSatisfy { $0.blame == .server })
    }

    /// Issue 35: the same transaction sent again with its id as text ("42") and credited again is the server's
    /// fault too: one transaction, credited twice, however the app spelled its id.
    @Test func aTransactionCreditedAgainUnderItsIdAsTextIsTheServers() {
        var w = PairingWalk()
        w.balance += 400
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1), balance: 1_450))
        let told = w.app(appPurchase(2, bundle: 200, transaction: .text("42"), sent: Self.at(4), balance: 1_650))
        #expect(w.findings == [.replayCredited] && w.findings.allSatisfy { $0.blame == .server })
        #expect(Self.texts(told).last?.hasPrefix("[replay-credited] expected 409 for transaction \"42\", credited already (rq-a1)") == true)
        #expect(TransactionID(42).sameTransaction(as: .text("42")) && !TransactionID(42).sameTransaction(as: .text("042"))
                && !TransactionID.text("x").sameTransaction(as: .outOfRange("x")))
    }

    @Test func aReplayedTransactionCreditedAgainIsTheServers() {
        var w = PairingWalk()
        w.balance += 400
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1), balance: 1_450))
        let told = w.app(appPurchase(2, bundle: 200, transaction: 42, sent: Self.at(4), balance: 1_650))
        #expect(Self.texts(told).last == "[replay-credited] expected 409 for transaction 42, credited already (rq-a1), got 200, credited again (rq-a2)")
        #expect(told.last?.requestIDs == ["rq-a1", "rq-a2"] && w.findings == [.replayCredited])
        // The reads agree with what the server did: nothing more to say.
        #expect(Self.texts(w.round(at: Self.at(6))) == ["balance 1,250 → 1,650 (+400) (app, rq-a1, rq-a2)"])
        #expect(w.d.state.watch.findingCount == 1)
    }

    @Test(arguments: [(-0.3, "before its answer"), (0.5, "0.5 s after its answer"), (3, nil)] as [(Double, String?)])
    func theSameSpendSentTwiceAtOnceIsTheApps(gap: Double, said: String?) {
        var w = PairingWalk()
        let first = appSpend(1, 7, comment: "x", sent: Self.at(1), answered: Self.at(1.5), balance: 1_243)
        let second = appSpend(2, 7, comment: "x", sent: Self.at(1.5 + gap), answered: Self.at(2.2 + gap), balance: 1_236)
        w.recordSpend(7, comment: "x", at: Self.at(1), id: "n1")
        w.recordSpend(7, comment: "x", at: Self.at(1.5 + gap), id: "n2")
        w.sending(first)
        w.sending(second)
        _ = w.finished(first)
        let told = w.finished(second)
        if let said {
            #expect(Self.texts(told).last == "[double-submission] expected one POST spend_cheer 7 on Rain on a Tin Roof “x” (rq-a1), got sent again \(said) (rq-a2): a possible double submission")
            #expect(told.last?.requestIDs == ["rq-a1", "rq-a2"] && WatchCheck.doubleSubmission.blame == .app)
        }
        #expect(w.findings == (said == nil ? [] : [.doubleSubmission]))
        // The reads: two requests, two entries; nothing more (no note of a double tap: the app's own are judged above).
        let round = w.round(at: Self.at(8))
        #expect(Self.texts(round) == ["balance 1,250 → 1,236 (−14) (app, rq-a1, rq-a2)",
                                      "new entry: 7 cheer on Rain on a Tin Roof “x” (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof “x” (app, rq-a2)"])
        #expect(w.d.state.watch.findingCount == (said == nil ? 0 : 1))
    }

    /// The second answered before the first: told in the order sent all the same.
    @Test func aDoubleSubmissionIsToldInTheOrderSent() {
        var w = PairingWalk()
        let first = appSpend(1, 7, sent: Self.at(1), answered: Self.at(3), balance: 1_236)
        let second = appSpend(2, 7, sent: Self.at(1.4), answered: Self.at(1.6), balance: 1_243)
        w.sending(first)
        w.sending(second)
        #expect(w.finished(second).count == 1)
        let told = w.finished(first)
        #expect(Self.texts(told).last == "[double-submission] expected one POST spend_cheer 7 on Rain on a Tin Roof (rq-a1), got sent again before its answer (rq-a2): a possible double submission")
        #expect(told.last?.requestIDs == ["rq-a1", "rq-a2"] && w.findings == [.doubleSubmission])
    }

    /// A purchase whose answer the proxy lost (the server credited it): what the app does next.
    static func losing(_ w: inout PairingWalk) -> [WatchEvent] {
        w.balance += 200
        return w.app(appPurchase(1, bundle: 200, transaction: 42, sent: at(1), balance: 1_450, fault: .loseAnswer))
    }

    @Test(arguments: [false, true])
    func aLostAnswerRetriedWithTheSameTransactionIsHandledWell(roundBetween: Bool) {
        var w = PairingWalk()
        #expect(Self.texts(Self.losing(&w)) == [
            "app POST purchase_cheer com.reiterate.cheer.200 tx 42 → 200 (balance 1,450), not delivered (lose_answer) rq-a1",
            "the server credited rq-a1 but the app never got the answer: a retry must reuse its transaction id",
        ])
        if roundBetween { #expect(Self.texts(w.round(at: Self.at(2))) == ["balance 1,250 → 1,450 (+200) (app, rq-a1)"]) }
        let retried = w.app(appPurchase(2, bundle: 200, transaction: 42, sent: Self.at(5), status: 409))
        #expect(Self.texts(retried).last == "the app retried rq-a1 with the same transaction id: answered 409")
        let round = w.round(at: Self.at(7))
        let handled = "handled well: retried with the same transaction id 42, answered 409, credited once"
        #expect(Self.texts(round) == (roundBetween ? [handled] : ["balance 1,250 → 1,450 (+200) (app, rq-a1)", handled]))
        #expect(round.last?.requestIDs == ["rq-a1", "rq-a2"] && round.last?.outcome == .reconciled)
        #expect(w.d.state.watch.findingCount == 0 && w.d.state.watch.app.lost.isEmpty)
        #expect(!Self.texts(w.round(at: Self.at(70))).contains { $0.contains("gave up") })
    }

    @Test func aLostAnswerRetriedWithANewTransactionIsTheApps() {
        var w = PairingWalk()
        _ = Self.losing(&w)
        w.balance += 200
        let told = w.app(appPurchase(2, bundle: 200, transaction: 43, sent: Self.at(5), balance: 1_650))
        let finding = Self.finding(told, .retryNewTransaction)
        #expect(finding?.text() == "[retry-new-transaction] expected a retry with the same transaction id 42 (the server answers 409 and credits nothing), got a new purchase, transaction 43 (rq-a2), after the answer to rq-a1 was lost: retried blindly, the user is charged twice")
        #expect(finding?.requestIDs == ["rq-a1", "rq-a2"] && WatchCheck.retryNewTransaction.blame == .app)
        #expect(Self.texts(w.round(at: Self.at(7))) == ["balance 1,250 → 1,650 (+400) (app, rq-a1, rq-a2)"])
        #expect(w.findings == [.retryNewTransaction] && !Self.texts(w.round(at: Self.at(70))).contains { $0.contains("gave up") })
    }

    @Test func aLostAnswerRetriedAndCreditedAgainIsTheServers() {
        var w = PairingWalk()
        _ = Self.losing(&w)
        w.balance += 200
        _ = w.app(appPurchase(2, bundle: 200, transaction: 42, sent: Self.at(5), balance: 1_650))
        _ = w.round(at: Self.at(7))
        #expect(w.findings == [.replayCredited] && !Self.texts(w.round(at: Self.at(9))).contains { $0.hasPrefix("handled well") })
    }

    @Test func aLostAnswerNotRetriedForAMinuteIsGivenUp() {
        var w = PairingWalk()
        _ = Self.losing(&w)
        _ = w.round(at: Self.at(2))
        #expect(w.round(at: Self.at(30)).isEmpty)
        let gaveUp = w.round(at: Self.at(62))
        #expect(Self.texts(gaveUp) == ["the app gave up on its purchase whose answer was lost (rq-a1): the user saw a failure for a purchase that was credited"])
        #expect(gaveUp.first?.requestIDs == ["rq-a1"] && w.round(at: Self.at(64)).isEmpty && w.d.state.watch.findingCount == 0)
    }
}

extension AppPairingTests {
    /// An app write in flight while the reads were made: whether they saw it cannot be told, so that
    /// round is not compared; the next one is, with the write paired. One answered during the round too.
    @Test(arguments: [false, true])
    func aRoundAnAppWriteCrossesIsComparedTheNext(answeredDuring: Bool) {
        var w = PairingWalk()
        let spend = appSpend(1, 7, sent: Self.at(1), answered: Self.at(2.1), balance: 1_243)
        w.recordSpend(7, at: Self.at(1), id: "n1")
        if answeredDuring { _ = w.app(spend) } else { w.sending(spend) }
        #expect(w.round(at: Self.at(2), spread: 0.1).isEmpty && w.d.state.watch.rounds == 1)
        if !answeredDuring { _ = w.finished(spend) }
        #expect(Self.texts(w.round(at: Self.at(4))) == ["balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof (app, rq-a1)"])
        #expect(w.d.state.watch.rounds == 2 && w.d.state.watch.findingCount == 0)
    }

    /// A pause keeps the app's writes for the first round after it; with the watch off they are not kept.
    @Test func writesDuringAPauseArePairedOnResuming() {
        var w = PairingWalk()
        w.d.apply(.action(.watch))
        w.recordSpend(7, at: Self.at(1), id: "n1")
        _ = w.app(appSpend(1, 7, sent: Self.at(1), balance: 1_243))
        w.d.apply(.action(.watch))
        #expect(Self.texts(w.answerReads(at: Self.at(3))).suffix(2) == ["balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof (app, rq-a1)"])
        var off = PairingWalk(firstRound: false)
        off.d.state.watch.phase = .off
        _ = off.app(appSpend(1, 7, sent: Self.at(1), balance: 1_243))
        #expect(off.d.state.watch.app.span.isEmpty && off.d.state.watch.app.recent.count == 1)
    }

    /// Another user's write is shown, never paired with this user's reads: no finding, and it keeps no round from being compared.
    @Test func anotherUsersWriteIsNotPaired() {
        var w = PairingWalk()
        let bob = appPurchase(1, bundle: 200, transaction: 42, user: "qa-bob", sent: Self.at(1), balance: 207)
        w.sending(bob)
        #expect(w.d.state.watch.app.out.isEmpty)
        #expect(Self.texts(w.finished(bob)) == ["app POST purchase_cheer com.reiterate.cheer.200 tx 42 → 200 (balance 207) rq-a1"])
        w.recordSpend(7, at: Self.at(1.5), id: "n1")
        #expect(Self.texts(w.round(at: Self.at(2))) == ["balance 1,250 → 1,243 (−7) (made elsewhere)", "new entry: 7 cheer on Rain on a Tin Roof (made elsewhere)"])
        #expect(w.d.state.watch.findingCount == 0 && w.d.state.watch.app.span.isEmpty)
    }

    /// A write that crossed the first round (no reads to compare with yet) is in the reads the next
    /// round keeps as the first; it must not be counted again after them.
    @Test func aWriteCrossingTheFirstRoundIsNotCountedTwice() {
        var w = PairingWalk(firstRound: false)
        let buy = appPurchase(1, bundle: 200, transaction: 42, sent: t0, answered: Self.at(0.3), balance: 1_450)
        w.sending(buy)
        w.balance += 200
        _ = w.answerReads(at: Self.at(0.1))
        _ = w.finished(buy)
        _ = w.round(at: Self.at(2))
        _ = w.round(at: Self.at(4))
        #expect(w.d.state.watch.rounds == 2)
        #expect(w.findings.isEmpty)
    }

    /// Ordinary app spends and purchases, some crossing a round, with changes from elsewhere and
    /// another user's writes between: the reads always agree with them, so never a finding.
    @Test func randomOrdinaryAppTrafficMakesNoFinding() {
        var w = PairingWalk()
        var rng = SeededGenerator(seed: 60)
        var now = 1.0, serial = 0, transaction = 500, phone = 60
        let products = samplePacks.packs.map(\.identifier)
        func appWrite(at sent: Double, answered: Double) -> AppWrite {
            serial += 1
            if Bool.random(using: &rng), w.balance > 100 {
                let amount = Int.random(in: 1...60, using: &rng), product = products.randomElement(using: &rng) ?? rainPack
                let comment = Bool.random(using: &rng) ? "nice" : nil
                w.recordSpend(amount, on: product, comment: comment, at: Self.at(sent), id: "s\(serial)")
                return appSpend(serial, amount, on: product, comment: comment, sent: Self.at(sent), answered: Self.at(answered), balance: w.balance)
            }
            let bundle = CheerBundle.standIn.randomElement(using: &rng)?.cheer ?? 50
            w.balance += bundle
            transaction += 1
            return appPurchase(serial, bundle: bundle, transaction: TransactionID(integerLiteral: UInt64(transaction)), sent: Self.at(sent), answered: Self.at(answered), balance: w.balance)
        }
        while now < 90 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4:
                let write = appWrite(at: now, answered: now + 0.2)
                _ = w.app(write)
                now += Double.random(in: 1.3...3, using: &rng)
            case 4..<7:
                _ = w.round(at: Self.at(now))
                now += 0.5
            case 7:
                let crossing = appWrite(at: now, answered: now + 0.5)
                w.sending(crossing)
                _ = w.round(at: Self.at(now + 0.3))
                _ = w.finished(crossing)
                now += 1.8
            case 8 where w.balance > 200:
                phone += 1  // amounts no app spend has: no twin within seconds
                w.recordSpend(phone, at: Self.at(now), id: "phone\(phone)")
                now += 0.5
            default:
                serial += 1
                _ = w.app(appSpend(serial, 9, user: "qa-bob", sent: Self.at(now), balance: 9))
                now += 0.5
            }
        }
        _ = w.round(at: Self.at(now))
        let rows = w.d.state.watch.timeline.rows
        #expect(w.findings.isEmpty, "\(Self.texts(rows.reversed().filter { if case .finding = $0.change { return true } else { return false } }))")
        #expect(w.d.state.watch.rounds > 20 && !rows.contains { $0.text().contains("possible double submission") })
        // Each entry names its own cause: the app's request that made it, or elsewhere for the phone's.
        for row in rows {
            guard case let .entry(e) = row.change, let id = e.id else { continue }
            let expected: ChangeCause = id.hasPrefix("phone") ? .elsewhere : .app(requestID: "rq-a" + id.dropFirst())
            #expect(row.causes == [expected], "\(id): \(row.causes)")
        }
    }
}
