import Foundation
import Testing
import ShopAPI
@testable import ShopViewModels

/// "Send as typed" (issue 27, item 5): a key of the spend and buy forms that turns the client's own
/// input checks off for one write — never in a read-only environment — while the verification still
/// judges what the shop must refuse.
@Suite struct SendAsTypedTests {
    func ready(readOnly: Bool = false) -> Driver { ActionTransitions().ready(readOnly: readOnly) }

    /// Ctrl-U, resolved by the keymap as a front end would.
    func pressSendAsTyped(_ d: inout Driver) {
        guard let message = Keymap.standard.message(for: .ctrl("u"), in: d.state) else { Issue.record("Ctrl-U is not bound here"); return }
        d.apply(message)
    }

    func note(_ d: Driver) -> ActionState.FormNote? {
        if case let .editing(_, note) = d.state.write.action?.phase { return note }
        return nil
    }

    func confirming(_ d: Driver) -> (ShopWrite, String)? {
        if case let .confirming(kind, summary) = d.state.write.action?.phase { return (kind, summary) }
        return nil
    }

    /// The spend form's product field (the third, sent as typed) replaced by `product`.
    func typeProduct(_ product: String, _ d: inout Driver) {
        while d.state.write.action?.field != 2 { d.apply(.action(.nextField)) }
        guard case let .editing(form, _) = d.state.write.action?.phase, form.isSpend else { return }
        let current = form[2]
        for _ in current { d.apply(.action(.deleteChar)) }
        for c in product { d.apply(.text(c)) }
    }

    @Test func ctrlUTogglesSendAsTypedInTheFormOnly() {
        var d = ready()
        #expect(Keymap.standard.message(for: .ctrl("u"), in: d.state) == nil, "not bound outside the form")
        d.send(.beginSpend)
        #expect(d.state.write.action?.asTyped == false)
        pressSendAsTyped(&d)
        #expect(d.state.write.action?.asTyped == true)
        // The spend form gains its product as a third field: Tab goes round all three.
        d.apply(.action(.nextField))
        d.apply(.action(.nextField))
        #expect(d.state.write.action?.field == 2)
        d.apply(.action(.nextField))
        #expect(d.state.write.action?.field == 0)
        pressSendAsTyped(&d)
        #expect(d.state.write.action?.asTyped == false)
        #expect(d.state.steps.steps.suffix(2) == ["turned on send as typed (the client's input checks off for one write)", "turned off send as typed"])
    }

    @Test func anOverspendIsRefusedByTheFormUnlessSentAsTyped() {
        var d = ready()
        d.send(.beginSpend)
        d.send(.editSpend(amount: "1255", comment: ""))
        d.send(.submitAction)
        #expect(note(d) == .problem("That is more than the balance (1,250 cheer)."))
        pressSendAsTyped(&d)
        d.send(.submitAction)
        guard let (kind, summary) = confirming(d) else { Issue.record("not confirming: \(String(describing: d.state.write.action))"); return }
        #expect(kind == .spend(product: "com.reiterate.pack.rain", amount: 1255, comment: nil))
        // What the shop must refuse is said before it is sent.
        #expect(summary == "Spend 1,255 cheer on Rain on a Tin Roof as qa-alice on STAGING? The shop must refuse it: 1,255 cheer is more than the balance (1,250 cheer).")
        #expect(d.state.write.action?.asTyped == true)
        let sent = d.send(.submitAction)
        #expect(sent.contains(.request(d.actionToken, .write(.spend(product: "com.reiterate.pack.rain", amount: 1255, comment: nil), user: "qa-alice"))))
        #expect(d.state.steps.steps.last == "spent 1,255 cheer on “Rain on a Tin Roof” with no comment — sent as typed (the client's input checks off)")
        // Reset once sent: the next write has the client's checks on again.
        #expect(d.state.write.action?.asTyped == false)
        #expect(d.state.write.before?.refusals == [.overspend(amount: 1255, balance: 1250)])
    }

    @Test func zeroAndNegativeAmountsAreSentOnlyAsTyped() {
        for amount in [0, -3] {
            var d = ready()
            d.send(.beginSpend)
            d.send(.editSpend(amount: String(amount), comment: ""))
            d.send(.submitAction)
            #expect(note(d) == .problem("The amount is a whole number of cheer, 1 or more."))
            pressSendAsTyped(&d)
            d.send(.submitAction)
            guard let (kind, summary) = confirming(d) else { Issue.record("\(amount) not confirming"); continue }
            #expect(kind == .spend(product: "com.reiterate.pack.rain", amount: amount, comment: nil))
            #expect(summary.hasSuffix("The shop must refuse it: an amount of \(amount) is below the contract's minimum of 1."))
            // Still a whole number: text is not an amount.
            d.send(.cancelAction)
            d.send(.beginSpend)
            pressSendAsTyped(&d)
            d.send(.editSpend(amount: "lots", comment: ""))
            d.send(.submitAction)
            #expect(note(d) == .problem("The amount is a whole number of cheer (sent as typed: 0 or below too)."))
        }
    }

    @Test func aProductNotInThePackListIsTypedAndSentAsTyped() {
        var d = ready()
        d.send(.beginSpend)
        pressSendAsTyped(&d)
        d.send(.editSpend(amount: "5", comment: ""))
        typeProduct("com.reiterate.pack.nope", &d)
        d.send(.submitAction)
        guard let (kind, summary) = confirming(d) else { Issue.record("not confirming"); return }
        #expect(kind == .spend(product: "com.reiterate.pack.nope", amount: 5, comment: nil))
        #expect(summary.hasSuffix("The shop must refuse it: “com.reiterate.pack.nope” is not in the pack list."))
        let sent = d.send(.submitAction)
        #expect(sent.contains(.request(d.actionToken, .write(.spend(product: "com.reiterate.pack.nope", amount: 5, comment: nil), user: "qa-alice"))))
    }

    @Test func turnedOffTheTypedProductGoesBackToTheSelectedPack() {
        var d = ready()
        d.send(.beginSpend)
        pressSendAsTyped(&d)
        typeProduct("com.reiterate.pack.nope", &d)
        pressSendAsTyped(&d)
        #expect(d.state.write.action?.field == 0)
        guard case let .editing(form, _) = d.state.write.action?.phase, form[2] == "com.reiterate.pack.rain", form.packName == "Rain on a Tin Roof" else {
            Issue.record("\(String(describing: d.state.write.action))"); return
        }
    }

    @Test func notABundleIsRefusedByTheFormUnlessSentAsTyped() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 42))
        d.send(.editPurchase(identifier: "com.reiterate.cheer.7", transactionID: "42"))
        d.send(.submitAction)
        #expect(note(d) == .problem("The shop must refuse this: “com.reiterate.cheer.7” is not a bundle this environment sells. Send it as typed to try."))
        pressSendAsTyped(&d)
        d.send(.submitAction)
        guard let (kind, summary) = confirming(d) else { Issue.record("not confirming"); return }
        #expect(kind == .purchase(identifier: "com.reiterate.cheer.7", transactionID: 42))
        #expect(summary == "Buy com.reiterate.cheer.7, transaction 42, as qa-alice on STAGING? The shop must refuse it: “com.reiterate.cheer.7” is not a bundle this environment sells.")
        let sent = d.send(.submitAction)
        #expect(sent.contains(.request(d.actionToken, .write(.purchase(identifier: "com.reiterate.cheer.7", transactionID: 42), user: "qa-alice"))))
        #expect(d.state.steps.steps.last == "bought com.reiterate.cheer.7 with transaction id 42 — sent as typed (the client's input checks off)")
    }

    @Test func aTransactionIDAsTextOrNegativeIsSentAsTyped() {
        for (typed, id) in [("\"42\"", TransactionID.text("42")), ("abc", .text("abc")), ("-5", .outOfRange("-5"))] {
            var d = ready()
            d.send(.beginPurchase(transactionID: 1))
            d.send(.editPurchase(identifier: "com.reiterate.cheer.200", transactionID: typed))
            d.send(.submitAction)
            #expect(note(d) == .problem("The transaction id is a whole number (0 to 18446744073709551615)."), "\(typed)")
            pressSendAsTyped(&d)
            d.send(.submitAction)
            guard let (kind, summary) = confirming(d) else { Issue.record("\(typed) not confirming"); continue }
            #expect(kind == .purchase(identifier: "com.reiterate.cheer.200", transactionID: id))
            #expect(summary.hasSuffix("The shop must refuse it: the transaction id \(id) is not a whole number from 0 to 18446744073709551615."))
            let sent = d.send(.submitAction)
            #expect(sent.contains(.request(d.actionToken, .write(.purchase(identifier: "com.reiterate.cheer.200", transactionID: id), user: "qa-alice"))))
            #expect(d.state.write.before?.refusals == [.transactionNotWhole(id)] && d.state.write.before?.credit == 200)
        }
    }

    @Test func aRepeatedTransactionIDIsSentAndA409LeavesNoFinding() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 42))
        pressSendAsTyped(&d)
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.actionFinished(d.actionToken, .failure(http(409, "duplicate_transaction")), at: t0))
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 1250)), at: t0))
        #expect(d.state.write.outcome?.acceptedRefusable == nil && d.state.write.outcome?.failed.isEmpty == true)
    }

    @Test func theTransactionIDAsTyped() {
        #expect(TransactionID(typed: " 42 ") == .number(42))
        #expect(TransactionID(typed: "18446744073709551615") == .number(.max))
        #expect(TransactionID(typed: "18446744073709551616") == .outOfRange("18446744073709551616"))
        #expect(TransactionID(typed: "-5") == .outOfRange("-5"))
        #expect(TransactionID(typed: "\"42\"") == .text("42"))
        #expect(TransactionID(typed: "-") == .text("-"))
        #expect(TransactionID(typed: "  ") == nil)
        // What goes in the body: a number as digits, text as a JSON string.
        #expect(TransactionID.text("4\"2\\\n").json == #""4\"2\\\u000a""#)
        #expect(TransactionID.outOfRange("-5").json == "-5" && TransactionID.number(7).json == "7")
        #expect(TransactionID.text("42").description == "\"42\"")
    }

    @Test func anOverspendTheServerTakesLeadsTheVerdict() {
        var d = ready()
        d.send(.beginSpend)
        pressSendAsTyped(&d)
        d.send(.editSpend(amount: "1255", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: -5)), at: t0))
        ActionTransitions().answerReads(&d, balance: -5, newest: ActionTransitions().spendEntry(1255, comment: nil), total: 231, rainCheer: 1305)
        guard let outcome = d.state.write.outcome else { Issue.record("no outcome"); return }
        #expect(outcome.failed.first?.name == "refusal-expected" && outcome.acceptedRefusable != nil)
        #expect(outcome.text.hasPrefix("The server accepted a spend it must refuse: 1,255 cheer is more than the balance (1,250 cheer)."))
        #expect(!outcome.checks.contains { $0.outcome == .passed }, "nothing it should not have done is ticked")
        // The next form starts with the client's checks on.
        d.send(.submitAction)
        d.send(.beginSpend)
        #expect(d.state.write.action?.asTyped == false)
    }

    @Test func closingTheFormResetsIt() {
        var d = ready()
        d.send(.beginPurchase(transactionID: 1))
        pressSendAsTyped(&d)
        d.send(.cancelAction)
        d.send(.beginPurchase(transactionID: 2))
        #expect(d.state.write.action?.asTyped == false)
    }

    @Test func refusedInAReadOnlyEnvironment() {
        var d = ready()
        d.send(.beginSpend)
        // The form cannot be opened read-only; were the environment read-only under it, the key is refused.
        d.state.context.readOnly = true
        pressSendAsTyped(&d)
        #expect(d.state.write.action?.asTyped == false)
        #expect(d.state.notice?.text == "STAGING is read-only: sending as typed is disabled.")
        d.send(.editSpend(amount: "1255", comment: ""))
        d.send(.submitAction)
        #expect(note(d) == .problem("That is more than the balance (1,250 cheer)."))
        #expect(!d.effects.contains { if case .request(_, .write(.spend, _)) = $0 { return true } else { return false } })
    }
}
