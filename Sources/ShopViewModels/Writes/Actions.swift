import Foundation
import ShopAPI
import ShopModel
import ShopLedger
import TerminalText

extension ShopUpdate {
    /// `s` and `b`: open the form (refused in a read-only environment and while a write is out).
    static func beginAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        guard refuseIfReadOnly(&state, what: action == .spend ? "spending" : "buying"), refuseIfBusy(&state) else { return [] }
        if action == .spend {
            guard let pack = state.packs.shown.selected else {
                state.notice = Notice(.error, "Select an Audio Pack to cheer for first.")
                return []
            }
            state.openDialog(ActionState(phase: .editing(.spend(on: pack.identifier, named: pack.name), note: nil)))
            return []
        }
        if let lost = state.write.lostPurchase {
            state.openDialog(ActionState(phase: .editing(.purchase(identifier: lost.identifier, transactionID: lost.transactionID.description),
                                                       note: .kept("The last purchase's answer was lost: its transaction id is kept, so the server cannot credit it twice."))))
            return []
        }
        state.openDialog(ActionState(phase: .editing(.purchase(identifier: "com.reiterate.cheer.200", transactionID: ""), note: nil)))
        return [.makeTransactionID]
    }

    static func dialogAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch (state.mode, action) {
        case (.form, .submit), (.confirm, .confirm): return submit(&state)
        case (.form, .cancel), (.confirm, .cancel), (.outcome, .dismiss):
            if action == .cancel { state.steps.add("cancelled the dialog") }
            state.closeDialog()
        case (.form, .nextField):
            let next = ((state.write.action?.field ?? 0) + 1) % formFields(state)
            state.write.action?.field = next
        case (.form, .sendAsTyped): toggleAsTyped(&state)
        case (.form, .deleteChar): editField(&state) { if !$0.isEmpty { $0.removeLast() } }
        case (.sending, .putAway):
            state.steps.add("put the dialog away while it was sending (Esc)")
            state.screen.focus = .browse  // the write stays out; its dialog no longer has the keys
            state.notice = Notice(.pending, "Still sending; the answer will show here.")
        default: break
        }
        return []
    }

    /// The form's fields: two, and a spend sent as typed a third, its product id (any, typed).
    static func formFields(_ state: AppState) -> Int {
        guard let action = state.write.action, case let .editing(form, _) = action.phase, form.isSpend, action.asTyped else { return 2 }
        return 3
    }

    /// The "send as typed" key: the client's own input checks off (or on again) for this one write.
    /// Refused in a read-only environment; turned off, a product typed goes back to the selected pack.
    static func toggleAsTyped(_ state: inout AppState) {
        guard case let .editing(form, _) = state.write.action?.phase else { return }
        guard refuseIfReadOnly(&state, what: "sending as typed") else {
            state.write.action?.asTyped = false
            return
        }
        let on = !(state.write.action?.asTyped ?? false)
        state.write.action?.asTyped = on
        state.steps.add(on ? "turned on send as typed (the client's input checks off for one write)" : "turned off send as typed")
        if !on, form.isSpend, let pack = state.packs.shown.selected, pack.identifier != form[2] {
            state.write.action?.phase = .editing(.spend(on: pack.identifier, named: pack.name, amount: form[0], comment: form[1]), note: nil)
        } else {
            state.write.action?.phase = .editing(form, note: nil)
        }
        if (state.write.action?.field ?? 0) >= formFields(state) { state.write.action?.field = 0 }
    }

    /// Changes the form field that has the cursor.
    static func editField(_ state: inout AppState, _ change: (inout String) -> Void) {
        guard case var .editing(form, _) = state.write.action?.phase else { return }
        let field = min(state.write.action?.field ?? 0, form.text.count - 1)
        change(&form.text[field])
        // While the App Store's record is read, the form says so (Enter waits for it).
        let reading = state.write.action?.readingRecord.map(ActionState.FormNote.readingRecord)
        state.write.action?.phase = .editing(form, note: reading)
    }

    static func actionMessage(_ message: Message, _ state: inout AppState) -> [Effect] {
        switch message {
        case let .transactionIDMade(id):
            // Fills an empty transaction field of the buy form (what the user typed is kept).
            if case .editing(var form, let note) = state.write.action?.phase, !form.isSpend, form[1].isEmpty {
                form[1] = String(id)
                state.write.action?.phase = .editing(form, note: note)
                state.write.action?.madeTransactionID = String(id)
            }
            return []
        default:
            return []
        }
    }

    /// The write's answer (the table has already told it from a stale one).
    static func actionFinished(_ result: Result<CheerBalance, ShopAPIError>, at: Date, requestID: String? = nil, _ state: inout AppState) -> [Effect] {
        guard case let .pending(kind, _, before) = state.write.action?.phase else { return [] }
        let backgrounded = !state.dialogShown
        defer { if backgrounded { state.write.action = nil } }  // put away: the notice carries the outcome
        if let purchase = kind.purchase {
            // Settled (credited, or refused) unless the answer was lost again.
            let lost = (try? result.get()) == nil && result.failureCategory?.mayHaveBeenApplied == true
            state.write.lostPurchase = lost ? purchase : nil
        }
        switch result {
        case let .success(balance):
            noteOwnWrite(kind, &state)
            // The outcome's own words (`WriteRules`), until the reads after say more.
            let text = WriteRules.of(kind, name: before.packName).success(balance.balance) + " Checking…"
            state.write.action = ActionState(phase: .succeeded(text))
            state.notice = Notice(.info, text)
            // Whatever the answer, what the write should have changed is read again and checked.
            return adoptWrittenBalance(balance, at: at, &state)
                + beginVerification(kind, answer: .success(balance.balance), before: before, at: at, requestID: requestID, &state)
        case let .failure(error):
            let notice = explain(error, kind: kind)
            state.write.action = ActionState(phase: .failed(notice.text, requestID: error.requestID))
            state.notice = notice
            // A refusal, or a write that got no whole answer: read again (never send again); the
            // reads say whether it was applied.
            return beginVerification(kind, answer: .failure(error), before: before, at: at, requestID: requestID, &state)
        }
    }

    static func actionCancelled(_ state: inout AppState) {
        guard case let .pending(kind, _, _) = state.write.action?.phase else { return }
        if let purchase = kind.purchase { state.write.lostPurchase = purchase }
        let text = "The request was cancelled before an answer came; it may have been applied — refresh to check."
        if state.dialogShown {
            state.write.action = ActionState(phase: .failed(text, requestID: nil))
        } else {
            state.write.action = nil
            state.notice = Notice(.error, text)
        }
    }

    static func refuseIfReadOnly(_ state: inout AppState, what: String) -> Bool {
        guard state.context.readOnly else { return true }
        state.notice = Notice(.error, "\(state.context.environment.uppercased()) is read-only: \(what) is disabled.")
        return false
    }

    /// One write at a time: a put-away spend or purchase still waiting refuses a new one.
    static func refuseIfBusy(_ state: inout AppState) -> Bool {
        guard state.isWriting else { return true }
        state.notice = Notice(.error, "A spend or purchase is still on its way; wait for its answer.")
        return false
    }

    static func submit(_ state: inout AppState) -> [Effect] {
        guard let action = state.write.action, action.readingRecord == nil else { return [] }  // a second Enter while the record is read
        let where_ = "as \(state.context.user) on \(state.context.environment.uppercased())"
        func problem(_ form: ActionState.Form, _ text: String) -> [Effect] {
            state.write.action?.phase = .editing(form, note: .problem(text))
            return []
        }
        switch action.phase {
        case let .editing(form, _):
            let kind: ShopWrite
            var summary: String
            if form.isSpend {
                let (amountText, comment, product, name) = (form[0], form[1], form[2], form.packName ?? form[2])
                // Sent as typed: any whole number (0 or below too), any product id.
                guard let amount = Int(amountText.trimmingCharacters(in: .whitespaces)), action.asTyped || amount >= 1 else {
                    return problem(form, action.asTyped ? "The amount is a whole number of cheer (sent as typed: 0 or below too)."
                                                        : "The amount is a whole number of cheer, 1 or more.")
                }
                if !action.asTyped, let balance = state.balance.value, amount > balance {
                    return problem(form, "That is more than the balance (\(Wording.grouped(balance)) cheer).")
                }
                let typedProduct = action.asTyped ? product.trimmingCharacters(in: .whitespaces) : product
                let packName = action.asTyped ? state.packs.all.first { $0.identifier == typedProduct }?.name ?? typedProduct : name
                let trimmed = comment.trimmingCharacters(in: .whitespacesAndNewlines)
                kind = .spend(product: typedProduct, amount: amount, comment: trimmed.isEmpty ? nil : trimmed)
                summary = "Spend \(Wording.grouped(amount)) cheer on \(packName) \(where_)?"
            } else {
                let (identifier, transactionText) = (form[0], form[1])
                let id = identifier.trimmingCharacters(in: .whitespaces)
                guard action.asTyped || !id.isEmpty else { return problem(form, "Name the cheer bundle, e.g. com.reiterate.cheer.200.") }
                // Sent as typed: also a number out of the contract's range, or text (sent as a JSON string).
                let typed = TransactionID(typed: transactionText)
                var whole = false
                if case .number? = typed { whole = true }
                guard let transaction = typed, whole || action.asTyped else {
                    return problem(form, action.asTyped ? "Give a transaction id: a number, or text (digits in double quotes go as a string)."
                                                        : "The transaction id is a whole number (0 to 18446744073709551615).")
                }
                // What the App Store's record says was paid, read before the purchase is judged (as `buy` does),
                // when the environment has an App Store: a refunded transaction, or another product, must be refused.
                var paid: ShopWrite.Purchase.Paid?
                var recordWords: String?
                if state.purchases.phase != .off, case let .number(n) = transaction {
                    guard action.record?.transactionID == String(n) else { return readAppStoreRecord(String(n), form: form, &state) }
                    paid = action.record?.paid
                    recordWords = action.record?.words
                }
                let purchase = ShopWrite.Purchase(identifier: id, transactionID: transaction, paid: paid)
                kind = .purchase(purchase)
                // The credit is the App Store record's (its product × quantity), else the environment's bundle's,
                // never read from the identifier typed.
                let amount = WriteExpectation.credit(of: purchase, bundles: state.context.bundles)
                let what = amount.map { "\(Wording.grouped($0)) cheer (\(id))" } ?? id
                summary = "Buy \(what), transaction \(transaction), \(where_)?" + (recordWords.map { " " + $0.prefix(1).uppercased() + $0.dropFirst() + "." } ?? "")
            }
            // What the shop must refuse, by its own data (the live balance and packs, the bundles):
            // not sent unless sent as typed — then said before it is sent, and a finding if taken.
            let refusals = expectedRefusals(kind, state)
            if !refusals.isEmpty {
                let reasons = refusals.map(\.reason).joined(separator: "; ")
                guard action.asTyped else { return problem(form, "The shop must refuse this: \(reasons). Send it as typed to try.") }
                summary += " The shop must refuse it: \(reasons)."
            }
            state.write.action?.phase = .confirming(kind, summary: summary)
            return []
        case let .confirming(kind, summary):
            guard refuseIfReadOnly(&state, what: "this") else { state.closeDialog(); return [] }
            return send(kind, summary: summary, &state)
        case .pending:
            return []  // a second submit while the first is out is refused
        case .succeeded, .failed:
            state.closeDialog()
            return []
        }
    }

    /// Sends the write, noting what its verification will compare against.
    static func send(_ kind: ShopWrite, summary: String, backgrounded: Bool = false, _ state: inout AppState) -> [Effect] {
        // Sent as typed: the steps say so (the next write starts with the client's checks on again).
        let asTyped = state.write.action?.asTyped == true
        state.steps.add(describe(kind, name: state.packName(kind.spend?.product)) + (asTyped ? " — sent as typed (the client's input checks off)" : ""))
        if backgrounded {
            if state.screen.focus == .dialog { state.screen.focus = .browse }
        } else {
            state.screen.focus = .dialog
        }
        state.write.outcome = nil
        state.write.sentAfter = state.exchanges.map(\.id).max() ?? 0
        let product = kind.spend?.product
        let credit = kind.purchase.flatMap { WriteExpectation.credit(of: $0, bundles: state.context.bundles) }
        // What the verification compares against is read first, and settled (`readBaseline`): never the
        // balance from when the screen was last read (another tester may have written meanwhile).
        let before = Verification.Before(balance: nil, historyTotal: nil, packCheer: nil,
                                         refusals: expectedRefusals(kind, state), packName: state.packName(product), credit: credit)
        state.write.action = ActionState(phase: .pending(kind, summary: summary, before: before))
        return readBaseline(kind, summary: summary, before: before, &state)
    }

    /// The baseline is settled: the write goes out, with what its verification compares against.
    static func sendWrite(_ kind: ShopWrite, summary: String, before: Verification.Before, _ state: inout AppState) -> [Effect] {
        guard case .pending? = state.write.action?.phase else { return [] }
        let token = state.ask(.write)
        state.write.action?.phase = .pending(kind, summary: summary, before: before)
        return [.request(token, .write(kind, user: state.context.user))]
    }

    /// A write a script asked for: refused in a read-only environment and while another is out.
    static func writeNow(_ kind: ShopWrite, _ state: inout AppState) -> [Effect] {
        guard refuseIfReadOnly(&state, what: "writing"), refuseIfBusy(&state) else { return [] }
        return send(kind, summary: "", backgrounded: true, &state)
    }

    /// 402 and 409 in plain words; a write without a whole answer says it may have been applied.
    static func explain(_ error: ShopAPIError, kind: ShopWrite) -> Notice {
        if error.category.mayHaveBeenApplied {
            return Notice(.error, "", failure: ErrorText.words(error), verdict: " — it may have been applied; reading the balance again to find out…")
        }
        switch (error.status, kind) {
        case (402, let .spend(spend)):
            let amount = spend.amount
            // Our words once, the server's quoted (whether anything was spent, the reads say next).
            let said = error.serverMessage.map { ": “\(Sanitizer.line($0))”" } ?? ""
            return Notice(.error, "\(error.endpoint ?? SpendCheer.endpoint.key): not enough cheer to spend \(Wording.grouped(amount)) — HTTP 402\(said).",
                          requestID: error.requestID)
        case (409, let .purchase(purchase)):
            return Notice(.error, "Transaction \(purchase.transactionID) was already credited; nothing changed.", requestID: error.requestID)
        default:
            return Notice(.error, "", failure: ErrorText.words(error))
        }
    }
}

extension Result where Failure == ShopAPIError {
    var failureCategory: ErrorCategory? {
        if case let .failure(error) = self { return error.category }
        return nil
    }
}
