import Foundation
import ShopAPI
import ShopModel
import ShopLedger
import Testing
@testable import ShopViewModels

/// Issue 44 (one judge): a write is judged against a baseline read right before it and settled by the one
/// rule, against the timeline of states this machine's writes made; a change an earlier write explains is
/// that write's. Each test below failed on the code before it.
@Suite struct OneJudgeTests {
    let transitions = ActionTransitions()

    /// A spend of `amount` confirmed in the dialog, its baseline reads left to the test.
    func confirmed(_ amount: Int, timeline: Timeline? = nil) -> Driver {
        var d = transitions.ready()
        if let timeline { d.state.write.timeline = timeline }
        d.servesBaseline = false
        d.send(.beginSpend)
        d.send(.editSpend(amount: String(amount), comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        return d
    }

    @Test func theDialogReadsItsBaselineSoAnotherWritersSpendIsNoFailedCheck() {
        // The screen read 1,250 when the TUI opened; another tester spent 50 since. The dialog's spend of 4
        // reads the balance first (1,200), and the server answers 1,196: a correct spend, ✔.
        var d = confirmed(4)
        #expect(d.state.token(for: .write) == nil)  // nothing sent before the baseline is read
        transitions.answerReads(&d, balance: 1200, total: 231, rainCheer: 60)
        #expect(d.state.token(for: .write) != nil)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1196)), at: t0))
        transitions.answerReads(&d, balance: 1196, newest: transitions.spendEntry(4, comment: nil), total: 232, rainCheer: 64)
        let outcome = d.state.write.outcome
        #expect(outcome?.failed.isEmpty == true, "\(outcome?.text ?? "no outcome")")
        #expect(outcome?.checks.first { $0.name == "spend-balance" }?.expected == "1,196 (1,200 − 4)")
    }

    @Test func aBaselineReadOfAStateAnEarlierWriteLeftSettlesOnTheTimelineAndIsNamed() {
        // This machine's last spend took the balance from 1,254 to 1,250 (its answer); a replica lagging past
        // that write still answers 1,254 three times. The baseline is 1,250, the lag a stale-read finding.
        var timeline = Timeline()
        timeline.record(.init(balance: 1254, historyTotal: 229, at: t0.addingTimeInterval(-10)))
        timeline.record(.init(balance: 1250, historyTotal: 230, at: t0.addingTimeInterval(-9)))
        var d = confirmed(4, timeline: timeline)
        transitions.answerReads(&d, balance: 1254, total: 229)
        guard case let .pending(_, _, before)? = d.state.write.action?.phase else { Issue.record("not sent"); return }
        #expect(before.balance == 1250 && before.historyTotal == 230)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1246)), at: t0))
        transitions.answerReads(&d, balance: 1246, newest: transitions.spendEntry(4, comment: nil), total: 231, rainCheer: 54)
        let outcome = d.state.write.outcome
        #expect(outcome?.failed.isEmpty == true, "\(outcome?.text ?? "no outcome")")
        #expect(outcome?.readFindings.map(\.name) == ["stale-read"])
        // The timeline now ends at the spend's state.
        #expect(d.state.write.timeline.latest?.balance == 1246 && d.state.write.timeline.latest?.historyTotal == 231)
    }

    @Test func readsThatNeverShowTheWriteLeaveItNotJudgedAndAWrongAnswerFailed() {
        // A replica that stays behind until the next write: every read after the spend shows the state from
        // before it. A right answer alone is no ✔ (no read agrees with it): the balance and the history are
        // "not judged", and say so; a wrong answer fails on its own.
        var d = confirmed(4)
        transitions.answerReads(&d, balance: 1250, total: 230)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1246)), at: t0))
        transitions.answerReads(&d, balance: 1250, total: 230, rainCheer: 54)
        guard let outcome = d.state.write.outcome else { Issue.record("no outcome"); return }
        #expect(outcome.failed.isEmpty, "\(outcome.text)")
        #expect(outcome.checks.first { $0.name == "spend-balance" } == nil)
        #expect(outcome.text.contains("spend-balance not judged: answered 1,246 as expected, but every read still showed"), "\(outcome.text)")
        #expect(outcome.text.contains("spend-history not judged"))
        #expect(outcome.readFindings.map(\.name) == ["stale-read"])
        // A wrong answer is flagged all the same.
        var wrong = confirmed(4)
        transitions.answerReads(&wrong, balance: 1250, total: 230)
        wrong.apply(.actionFinished(wrong.actionToken, .success(CheerBalance(balance: 1245)), at: t0))
        transitions.answerReads(&wrong, balance: 1250, total: 230, rainCheer: 54)
        #expect(wrong.state.write.outcome?.failed.map(\.name) == ["spend-balance"])
    }

    @Test func aBaselineThatCannotBeReadSendsNothing() {
        func confirmedPurchase() -> Driver {
            var d = transitions.ready()
            d.servesBaseline = false
            d.send(.beginPurchase(transactionID: 42))
            d.send(.submitAction)
            d.send(.submitAction)
            return d
        }
        func sentAWrite(_ d: Driver) -> Bool { d.effects.contains { if case .request(_, .write) = $0 { true } else { false } } }
        // The balance read before it fails: there is nothing to judge the purchase against, so it is not sent.
        var failed = confirmedPurchase()
        failed.apply(.balanceLoaded(failed.balanceToken, .failure(http(503, "unavailable")), at: t0))
        #expect(!sentAWrite(failed) && failed.state.write.verification == nil && !failed.state.isWriting)
        #expect(failed.state.notice?.text.hasPrefix("The purchase was not sent: the balance could not be read before it") == true)
        // A quit (or any stop) cancels the baseline's read: the write is never sent after it.
        var quit = confirmedPurchase()
        quit.apply(.cancelled(quit.balanceToken))
        #expect(!sentAWrite(quit) && quit.state.write.verification == nil)
        #expect(quit.state.notice?.text.contains("the read was cancelled") == true)
    }

    @Test func aDebitWithoutAnEntryIsNoLag() {
        // The balance showed the spend; the history never did: judged on the history's reads (✗), never
        // "behind".
        var d = confirmed(4)
        transitions.answerReads(&d, balance: 1250, total: 230)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1246)), at: t0))
        transitions.answerReads(&d, balance: 1246, total: 230, rainCheer: 54)
        #expect(d.state.write.outcome?.failed.map(\.name) == ["spend-history"])
        #expect(d.state.write.outcome?.readFindings.isEmpty == true)
    }

    @Test func aDateThatMovesBetweenReadsLeavesTheEntrysOtherFieldsJudged() {
        // The server stores the comment with "?" for every non-ASCII character and dates the newest entry
        // anew on every read: the comment is still judged (✗), and the moving date is a finding of its own.
        var d = transitions.ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "4", comment: "café"))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1246)), at: t0))
        for read in 0..<ReadSeries<Int>.maxReads {
            var entry = transitions.spendEntry(4, comment: "caf?")
            entry.date = t0.addingTimeInterval(86_400 * Double(read + 1))
            transitions.answerReadsOnce(&d, balance: 1246, newest: entry, total: 231, rainCheer: 54)
            guard let token = d.state.token(for: .verificationWake) else { break }
            d.apply(.woke(token, at: t0))
        }
        guard let outcome = d.state.write.outcome else { Issue.record("no outcome"); return }
        #expect(outcome.failed.map(\.name) == ["spend-history"], "\(outcome.text)")
        #expect(outcome.failed.first?.actual.contains("“caf?”") == true)
        let drift = outcome.readFindings.first { $0.name == "reads-disagree" }
        #expect(drift?.actual.contains("its content moved") == true && drift?.actual.contains("its other fields were judged") == true, "\(outcome.readFindings.map(\.actual))")
    }

    /// The TUI's purchase form, in an environment with an App Store: a purchase form submitted for transaction `id`.
    func purchaseForm(_ id: String, bundle: String) -> (Driver, [Effect]) {
        var d = transitions.ready()
        d.state.purchases = PurchasesState(enabled: true)
        d.send(.beginPurchase(transactionID: 1))
        d.send(.editPurchase(identifier: bundle, transactionID: id))
        let effects = d.send(.submitAction)
        return (d, effects)
    }

    func asksForTheRecord(_ effects: [Effect], _ id: String) -> Bool {
        effects.contains { if case let .readAppStoreRecord(asked) = $0 { asked == id } else { false } }
    }

    @Test func theTUIsPurchaseFormReadsTheAppStoresRecordAndExpectsARefundedOneRefused() {
        // Before, the form sent a refunded transaction with no expectation (only `buy` read the record).
        var (d, effects) = purchaseForm("2000000000000042", bundle: "com.reiterate.cheer.100")
        #expect(asksForTheRecord(effects, "2000000000000042"))
        guard case let .editing(_, note: .reading(reading))? = d.state.write.action?.phase else { Issue.record("no reading note"); return }
        #expect(reading == "Reading the App Store's record of transaction 2000000000000042…")
        #expect(d.send(.submitAction).isEmpty)  // a second Enter while it is read
        d.apply(.text("2"))
        d.apply(.action(.deleteChar))  // typing meanwhile keeps the form saying what it waits for
        guard case .editing(_, note: .reading)? = d.state.write.action?.phase else { Issue.record("the reading note went"); return }
        d.apply(.appStoreRecordRead(AppStoreRecordRead(
            transactionID: "2000000000000042", paid: .init(product: "com.reiterate.cheer.100", quantity: 1, revoked: true),
            line: "note: the App Store's record of 2000000000000042: 1 × com.reiterate.cheer.100, refunded: the shop must refuse to credit it\n")))
        guard case let .editing(_, note: .problem(problem))? = d.state.write.action?.phase else { Issue.record("not refused: \(String(describing: d.state.write.action?.phase))"); return }
        #expect(problem == "The shop must refuse this: the App Store's record says transaction 2000000000000042 was refunded. Send it as typed to try.")
        #expect(d.state.token(for: .write) == nil)
        #expect(d.state.steps.steps.contains { $0.contains("the App Store's record of 2000000000000042: 1 × com.reiterate.cheer.100, refunded") })
    }

    @Test func theTUIsPurchaseFormExpectsTheCreditTheRecordSaysWasPaid() {
        // Two of the 200 bundle, paid in one transaction: the credit expected is 400, not the bundle's 200.
        var (d, effects) = purchaseForm("2000000000000043", bundle: "com.reiterate.cheer.200")
        #expect(asksForTheRecord(effects, "2000000000000043"))
        d.apply(.appStoreRecordRead(AppStoreRecordRead(
            transactionID: "2000000000000043", paid: .init(product: "com.reiterate.cheer.200", quantity: 2),
            line: "note: the App Store's record of 2000000000000043: 2 × com.reiterate.cheer.200; the credit expected comes from it\n")))
        guard case let .confirming(kind, summary)? = d.state.write.action?.phase else { Issue.record("not confirming"); return }
        #expect(kind.purchase?.paid == .init(product: "com.reiterate.cheer.200", quantity: 2))
        #expect(summary.hasPrefix("Buy 400 cheer (com.reiterate.cheer.200), transaction 2000000000000043, as qa-alice on STAGING?"))
        #expect(summary.hasSuffix(" The App Store's record of 2000000000000043: 2 × com.reiterate.cheer.200; the credit expected comes from it."))
        d.send(.submitAction)
        guard case let .pending(_, _, before)? = d.state.write.action?.phase else { Issue.record("not sent"); return }
        #expect(before.credit == 400)
        // A record that answers for another transaction (the form changed meanwhile) is dropped.
        var (e, _) = purchaseForm("2000000000000044", bundle: "com.reiterate.cheer.200")
        e.apply(.appStoreRecordRead(AppStoreRecordRead(transactionID: "7", paid: nil, line: "warning: …\n")))
        guard case .editing(_, note: .reading)? = e.state.write.action?.phase else { Issue.record("taken for another transaction"); return }
    }

    @Test func withoutAnAppStoreThePurchaseFormReadsNoRecord() {
        var d = transitions.ready()
        d.send(.beginPurchase(transactionID: 1))
        d.send(.editPurchase(identifier: "com.reiterate.cheer.200", transactionID: "2000000000000045"))
        #expect(!asksForTheRecord(d.send(.submitAction), "2000000000000045"))
        guard case .confirming? = d.state.write.action?.phase else { Issue.record("not confirming"); return }
    }

    @Test func aPurchaseTheAppStoreSaysWasRefundedOrOfAnotherProductMustBeRefused() {
        let refunded = ShopWrite.purchase(ShopWrite.Purchase(identifier: "com.reiterate.cheer.100", transactionID: 42,
                                                             paid: .init(product: "com.reiterate.cheer.100", quantity: 1, revoked: true)))
        #expect(WriteExpectation.refusals(refunded, balance: 0, packs: nil, bundles: CheerBundle.standIn) == [.revokedInAppStore(42)])
        let other = ShopWrite.purchase(ShopWrite.Purchase(identifier: "com.reiterate.cheer.5000", transactionID: 42,
                                                          paid: .init(product: "com.reiterate.cheer.100", quantity: 1)))
        #expect(WriteExpectation.refusals(other, balance: 0, packs: nil, bundles: CheerBundle.standIn)
                == [.otherProductInAppStore(paid: "com.reiterate.cheer.100", sent: "com.reiterate.cheer.5000")])
        let paid = ShopWrite.purchase(ShopWrite.Purchase(identifier: "com.reiterate.cheer.100", transactionID: 42,
                                                         paid: .init(product: "com.reiterate.cheer.100", quantity: 2)))
        #expect(WriteExpectation.refusals(paid, balance: 0, packs: nil, bundles: CheerBundle.standIn).isEmpty)
    }
}

/// Issue 44: `/` reads the history in pages of 200; a server that refuses that legal size (a 400) is read on in
/// a smaller one it takes, from the same entry, and the refusal is said — never "Find stopped".
@Suite struct FindPageSizeTests {
    @Test func aRefusedPageSizeIsReadOnInASmallerOne() {
        var d = Driver.loaded()
        d.send(.find("C"))
        func scan() -> (token: Token, page: Int)? {
            for (token, purpose) in d.state.requestsOut { if case let .findScan(page) = purpose { return (token, page) } }
            return nil
        }
        guard let first = scan() else { Issue.record("no scan"); return }
        d.apply(.historyLoaded(first.token, page: first.page, .failure(http(400, "bad_request", "per_page too large")), at: t0))
        #expect(d.state.history.find?.scan?.perPage == 100)
        #expect(d.state.notice?.text.contains("[status] expected per_page=200 taken (the contract allows 1–200)") == true)
        #expect(d.state.notice?.text.contains("read on in pages of 100") == true)
        guard let again = scan() else { Issue.record("the find stopped"); return }
        #expect(again.page == 1 && d.asked(again.token) == .history(user: "qa-alice", page: 1, perPage: 100))
        // Read on: every entry is reached (230 entries: pages 1–3 of 100).
        d.apply(.historyLoaded(again.token, page: 1, .success(historyPage(1, perPage: 100, total: 230)), at: t0))
        #expect(d.state.history.find?.matches.isEmpty == false)
        // A server that refuses every size: bounded, then the find stops with its words.
        var e = Driver.loaded()
        e.send(.find("C"))
        for _ in 0..<5 {
            guard let s = { () -> (Token, Int)? in
                for (token, purpose) in e.state.requestsOut { if case let .findScan(page) = purpose { return (token, page) } }
                return nil
            }() else { break }
            e.apply(.historyLoaded(s.0, page: s.1, .failure(http(400, "bad_request")), at: t0))
        }
        #expect(e.state.history.find?.scan == nil && e.state.notice?.text.hasPrefix("Find stopped") == true)
    }
}
