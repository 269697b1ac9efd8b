import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

extension PairingWalk {
    /// The proxy listening, the watch not started yet (`w` not pressed).
    init(watchOff: Void) {
        d.apply(.proxy(.listening(ProxyStatus(address: "127.0.0.1:8877", intercepting: ["shop.test:443"]))))
    }

    /// The texts of the timeline's statuses, oldest first.
    var statuses: [String] {
        d.state.watch.timeline.rows.reversed().compactMap { if case let .status(s) = $0.change { return s } else { return nil } }
    }
}

/// The edges of pairing: writes naming no user, the windows of a double submission, this tool's
/// writes during a pause, and the watch's backstops when the proxy's events are late or lost.
@Suite struct AppPairingEdgeTests {
    typealias T = AppPairingTests
    static func at(_ seconds: Double) -> Date { T.at(seconds) }
    static func unconfirmed(_ user: String) -> String {
        "the app's writes name no user, and \(user)'s reads do not show them yet: not paired until they do (is the phone signed in as \(user)?)"
    }

    // MARK: 1. Writes naming no user

    /// The app signed in as someone else: its purchase never shows in qa-alice's reads. No finding, and the status once.
    @Test func anUnnamedPurchaseTheReadsDoNotShowIsHeldBackAndToldOnce() {
        var w = PairingWalk()
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, user: nil, sent: Self.at(1), balance: 207))
        #expect(T.texts(w.round(at: Self.at(2))) == [Self.unconfirmed("qa-alice")])
        _ = w.app(appPurchase(2, bundle: 100, transaction: 43, user: nil, sent: Self.at(3), balance: 307))
        #expect(w.round(at: Self.at(4)).isEmpty)
        #expect(w.findings.isEmpty && !w.d.state.watch.app.userConfirmed && w.d.state.watch.app.span.isEmpty)
        #expect(w.statuses.filter { $0 == Self.unconfirmed("qa-alice") }.count == 1)
    }

    /// Held back, its change reads as made elsewhere: a credit of 400 for a bundle of 200 is no finding
    /// while the app's user is not known to be the watched one.
    @Test func anUnnamedPurchaseTheReadsContradictIsMadeElsewhere() {
        var w = PairingWalk()
        w.balance += 400
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, user: nil, sent: Self.at(1), balance: 1_650))
        let round = w.round(at: Self.at(2))
        #expect(T.texts(round) == ["balance 1,250 → 1,650 (+400) (made elsewhere)", "a purchase of 400 cheer (2 × bundle 200) (made elsewhere)",
                                   Self.unconfirmed("qa-alice")])
        #expect(w.findings.isEmpty && !w.d.state.watch.app.userConfirmed)
    }

    /// A spend the reads explain confirms the app's user: it is paired, and the unnamed writes after it are judged.
    @Test func anUnnamedSpendTheReadsExplainConfirmsTheUser() {
        var w = PairingWalk()
        w.recordSpend(7, at: Self.at(1), id: "n1")
        _ = w.app(appSpend(1, 7, user: nil, sent: Self.at(1), balance: 1_243))
        #expect(T.texts(w.round(at: Self.at(2))) == ["balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof (app, rq-a1)"])
        #expect(w.d.state.watch.app.userConfirmed && w.findings.isEmpty)
        _ = w.app(appPurchase(2, bundle: 100, transaction: 43, user: nil, sent: Self.at(3), balance: 1_343))  // +0 in the reads
        let round = w.round(at: Self.at(4))
        #expect(T.finding(round, .notCredited)?.requestIDs == ["rq-a2", "rq-b2", "rq-h2", "rq-b3", "rq-h3"])
        #expect(w.findings == [.notCredited] && !w.statuses.contains(Self.unconfirmed("qa-alice")))
    }

    /// A user switch forgets whose the app's writes are: held back again, and told again for the new user.
    @Test func aUserSwitchForgetsTheConfirmation() {
        var w = PairingWalk()
        w.recordSpend(7, at: Self.at(1), id: "n1")
        _ = w.app(appSpend(1, 7, user: nil, sent: Self.at(1), balance: 1_243))
        _ = w.round(at: Self.at(2))
        #expect(w.d.state.watch.app.userConfirmed)
        _ = w.d.run([.action(.switchUser)] + "qa-bob".map { .text($0) } + [.action(.runPrompt)])
        #expect(!w.d.state.watch.app.userConfirmed && !w.d.state.watch.app.unconfirmedTold && w.statuses.last == "now watching qa-bob")
        _ = w.answerReads(at: Self.at(3))
        _ = w.app(appPurchase(2, bundle: 100, transaction: 43, user: nil, sent: Self.at(4), balance: 1_343))
        #expect(T.texts(w.round(at: Self.at(5))) == [Self.unconfirmed("qa-bob")])
        #expect(w.findings.isEmpty)
    }

    // MARK: 2. Double submission

    /// A second spend before the first's answer: within 5 s of the first's sending only.
    @Test(arguments: [(6, false), (5.5, false), (4.5, true), (3, true)] as [(Double, Bool)])
    func aSecondSendBeforeTheAnswerCountsWithinFiveSeconds(gap: Double, flagged: Bool) {
        var w = PairingWalk()
        let first = appSpend(1, 7, sent: Self.at(1), answered: Self.at(12), balance: 1_236)
        let second = appSpend(2, 7, sent: Self.at(1 + gap), answered: Self.at(1.5 + gap), balance: 1_243)
        w.sending(first)
        w.sending(second)
        _ = w.finished(second)
        let told = w.finished(first)
        #expect(w.findings == (flagged ? [.doubleSubmission] : []))
        if flagged {
            #expect(T.texts(told).last == "[double-submission] expected one POST spend_cheer 7 on Rain on a Tin Roof (rq-a1), got sent again before its answer (rq-a2): a possible double submission")
        }
    }

    /// A purchase sent again with its transaction id and answered 409 within a second is a safe retry:
    /// no double submission, and the reads credit it once.
    @Test func aSameTransactionRetryAnswered409IsNoDoubleSubmission() {
        var w = PairingWalk()
        w.balance += 200
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1), answered: Self.at(1.2), balance: 1_450))
        let retried = w.app(appPurchase(2, bundle: 200, transaction: 42, sent: Self.at(1.5), answered: Self.at(1.6), status: 409))
        #expect(retried.count == 1 && w.findings.isEmpty)
        _ = w.round(at: Self.at(3))
        #expect(w.findings.isEmpty && w.d.state.watch.findingCount == 0)
        // The same purchase answered 200 within the second is one.
        var twice = PairingWalk()
        _ = twice.app(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1), answered: Self.at(1.2), balance: 1_450))
        _ = twice.app(appPurchase(2, bundle: 200, transaction: 42, sent: Self.at(1.5), answered: Self.at(1.6), balance: 1_450))
        #expect(twice.findings.first == .doubleSubmission)
    }

    // MARK: 3. This tool's writes during a pause

    /// Paused, this tool buys a bundle the environment does not list (credit unknown) and the app buys
    /// 200: on resuming, the rise of 500 is no finding on the app's purchase.
    @Test func aToolPurchaseOfAnUnknownBundleWhilePausedMakesNoAppVerdict() {
        var w = PairingWalk()
        w.d.apply(.action(.watch))
        #expect(w.d.state.watch.phase == .paused)
        w.d.apply(.write(.purchase(identifier: "com.reiterate.cheer.300", transactionID: 7)))
        w.balance += 300
        w.d.apply(.actionFinished(w.d.actionToken, .success(CheerBalance(balance: 1_550)), at: Self.at(1)))
        #expect(w.d.state.watch.own == [.purchase(identifier: "com.reiterate.cheer.300", transactionID: 7)])
        w.balance += 200
        _ = w.app(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(2), balance: 1_750))
        w.d.apply(.action(.watch))
        let round = w.answerReads(at: Self.at(4))
        #expect(T.texts(round) == ["balance 1,250 → 1,750 (+500) (app, rq-a1; this tool)"])
        #expect(w.findings.isEmpty && w.d.state.watch.rounds == 2)
    }

    // MARK: 4. Late, lost and crowded proxy events

    /// A write out when `w` is pressed crosses the first reads: they are not kept, and no backstop is needed.
    @Test func aWriteOutWhenTheWatchStartsCrossesTheFirstReads() {
        var w = PairingWalk(watchOff: ())
        let buy = appPurchase(1, bundle: 200, transaction: 42, sent: t0, answered: Self.at(0.3), balance: 1_450)
        w.sending(buy)
        #expect(w.d.state.watch.app.out.count == 1)
        w.d.apply(.action(.watch))
        w.balance += 200
        _ = w.answerReads(at: Self.at(0.1))
        #expect(w.d.state.watch.rounds == 0 && w.d.state.watch.last == nil)
        #expect(T.texts(w.finished(buy)) == ["app POST purchase_cheer com.reiterate.cheer.200 tx 42 → 200 (balance 1,450) rq-a1"])
        _ = w.round(at: Self.at(2))
        #expect(w.round(at: Self.at(4)).isEmpty && w.findings.isEmpty && w.d.state.watch.rounds == 2)
    }

    /// The app's writes crossing round after round: said once at the fifth; a quiet round compares and starts the count again.
    @Test func fiveRoundsInARowCrossedAreToldOnce() {
        var w = PairingWalk()
        let spend = appSpend(1, 7, sent: Self.at(1), answered: Self.at(12.5), balance: 1_243)
        w.recordSpend(7, at: Self.at(1), id: "n1")
        w.sending(spend)
        for n in 1...4 { #expect(w.round(at: Self.at(2 * Double(n))).isEmpty) }
        #expect(T.texts(w.round(at: Self.at(10))) == ["the app's writes crossed each of the last 5 rounds' reads: compared when the reads are quiet"])
        #expect(w.round(at: Self.at(12)).isEmpty && w.d.state.watch.app.crossedRounds == 6 && w.d.state.watch.rounds == 1)
        _ = w.finished(spend)
        #expect(T.texts(w.round(at: Self.at(14))) == ["balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof (app, rq-a1)"])
        #expect(w.d.state.watch.app.crossedRounds == 0 && w.findings.isEmpty)
    }

    /// A purchase whose sending the watch never saw, sent before reads that already show it: those reads
    /// are dropped (pairing it next would read as not credited). One sent after them is paired as usual.
    @Test func aWriteFinishedUnseenBeforeTheLastReadsStartsAfresh() {
        var w = PairingWalk()
        w.balance += 200
        #expect(T.texts(w.round(at: Self.at(2))) == ["balance 1,250 → 1,450 (+200) (made elsewhere)", "a purchase of 200 cheer (bundle 200) (made elsewhere)"])
        let told = w.finished(appPurchase(1, bundle: 200, transaction: 42, sent: Self.at(1.5), answered: Self.at(2.5), balance: 1_450))
        #expect(T.texts(told).last == "an app write went out unseen by the watch: compared afresh from the next reads")
        #expect(w.d.state.watch.last == nil && w.d.state.watch.app.span.isEmpty)
        _ = w.round(at: Self.at(4))
        #expect(w.round(at: Self.at(6)).isEmpty && w.findings.isEmpty)
        w.recordSpend(7, at: Self.at(7), id: "n2")
        #expect(w.finished(appSpend(2, 7, sent: Self.at(7), balance: 1_443)).count == 1)
        #expect(T.texts(w.round(at: Self.at(8))) == ["balance 1,450 → 1,443 (−7) (app, rq-a2)", "new entry: 7 cheer on Rain on a Tin Roof (app, rq-a2)",
                                                           "Rain on a Tin Roof cheer 50 → 57"])
    }

    /// A write out with no end for over 120 s is dropped: the reads start afresh from the round that says so.
    @Test func aWriteOutOverTwoMinutesIsExpired() {
        var w = PairingWalk()
        w.sending(appSpend(1, 7, sent: Self.at(1), balance: 1_243))
        #expect(w.round(at: Self.at(120)).isEmpty && w.d.state.watch.app.out.count == 1)
        #expect(T.texts(w.round(at: Self.at(122))) == ["1 app write out over 120 s with no end seen: compared afresh from the next reads"])
        #expect(w.d.state.watch.app.out.isEmpty && w.d.state.watch.rounds == 2)
        w.recordSpend(5, at: Self.at(123), id: "phone")
        #expect(T.texts(w.round(at: Self.at(124))) == ["balance 1,250 → 1,245 (−5) (made elsewhere)", "new entry: 5 cheer on Rain on a Tin Roof (made elsewhere)"])
        #expect(w.findings.isEmpty)
    }

    /// Paused a long while with the app busy: over 1,000 writes waiting are dropped and the reads start afresh;
    /// a lost answer the app never followed is forgotten after 120 s.
    @Test func aLongPauseCapsTheSpanAndForgetsLostAnswers() {
        var w = PairingWalk()
        w.d.apply(.action(.watch))
        _ = T.losing(&w)
        #expect(w.d.state.watch.app.lost.count == 1)
        _ = w.app(appSpend(2, 1, sent: Self.at(100), balance: 1_449))
        #expect(w.d.state.watch.app.lost.count == 1)
        for n in 3...1_000 { _ = w.app(appSpend(n, 1, sent: Self.at(Double(100 + 2 * n)), balance: 1_450 - n)) }
        #expect(w.d.state.watch.app.lost.isEmpty && w.d.state.watch.app.span.count == 1_000)
        let told = w.app(appSpend(1_002, 1, sent: Self.at(2_200), balance: 400))
        #expect(T.texts(told).last == "over 1000 app writes since the last compared reads: compared afresh from the next reads")
        #expect(w.d.state.watch.app.span.isEmpty && w.d.state.watch.last == nil && w.findings.isEmpty)
    }
}

/// A spend whose answer was lost: told, and sent again it is spent twice (the app's fault).
@Suite struct LostSpendTests {
    typealias T = AppPairingTests
    static func at(_ seconds: Double) -> Date { T.at(seconds) }

    @Test func aSpendSentAgainAfterItsAnswerWasLostIsSpentTwice() {
        var w = PairingWalk()
        let first = appSpend(1, 7, sent: Self.at(1), balance: 1_243, fault: .loseAnswer)
        w.recordSpend(7, at: Self.at(1), id: "e1")
        let told = T.texts(w.app(first))
        #expect(told.last == "the server took the spend rq-a1 but the app never got the answer: sending it again would spend twice")
        let again = appSpend(2, 7, sent: Self.at(3), balance: 1_236)
        w.recordSpend(7, at: Self.at(3), id: "e2")
        let retried = w.app(again)
        guard case let .finding(check, _, actual)? = retried.last?.change else {
            Issue.record("no finding: \(T.texts(retried))")
            return
        }
        #expect(check == .doubleSubmission && check.blame == .app && actual == "sent again (rq-a2): spent twice")
        #expect(retried.last?.requestIDs == ["rq-a1", "rq-a2"])
        // The reads show both spends, each paired with its own request: nothing more is flagged.
        let round = w.round(at: Self.at(5))
        #expect(!round.contains { if case .finding = $0.change { return true } else { return false } }, "\(T.texts(round))")
    }

    @Test func aSpendWhoseAnswerCameIsNotToldAsLost() {
        var w = PairingWalk()
        w.recordSpend(7, at: Self.at(1), id: "e1")
        let told = T.texts(w.app(appSpend(1, 7, sent: Self.at(1), balance: 1_243)))
        #expect(!told.contains { $0.contains("never got the answer") })
    }
}
