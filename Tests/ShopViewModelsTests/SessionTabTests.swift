import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// The Session tab (issue 46): what a read of the open test session changes — the tab, the Checks tab (other
/// commands' findings, kept out of the session: they are in it), the header (a balance another command
/// settled) — and the keys that open, note and close one.
@Suite struct SessionTabTests {
    static func state(balance: Int = 1_250, at: Date = t0) -> AppState {
        var s = AppState(context: alice)
        s.balance = .loaded(Known(balance, at: at, source: .live))
        s.session.available = true
        s.screen.tab = .session
        return s
    }

    static let view = SessionTabView(name: "1.4.3", findings: 1, lines: [SessionTabView.Line("session 1.4.3", .heading)])

    static func other(_ kind: CheckID, outcome: CheckRecord.Outcome = .failed) -> CheckRecord {
        CheckRecord(ShopFinding(kind: kind, subject: "negative overspend (negative, in the session)", blame: .server, expected: "402", actual: "200",
                                requestIDs: ["rq-9"]), outcome: outcome, at: t0)
    }

    @Test func othersFindingsGoToTheChecksTabAndNeverBackIntoTheSession() {
        var s = Self.state()
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view, othersFindings: [Self.other(.write(.refusalExpected)),
                                                                                            Self.other(.write(.purchaseBalance), outcome: .passed)])))
        #expect(s.session.view == Self.view)
        #expect(s.checks.records.map(\.name).sorted() == ["purchase-balance", "refusal-expected"] && s.checks.failures == 1)
        #expect(s.checks.fresh.isEmpty)  // what the session already holds is not appended again
        // A finding this TUI's judges make is (the runner appends `fresh`), and a sighting of one already kept is not.
        let edge = Self.other(.explore(.edgeOutcome))
        s.checks.add([edge])
        #expect(s.checks.fresh.map(\.name) == ["edge-outcome"])
        var keyed = edge
        keyed.key = FindingKey(Finding(check: .schema, expected: "e", actual: "a"), method: "GET", target: "/x")
        s.checks.add([keyed])
        s.checks.add([keyed])
        #expect(s.checks.fresh.isEmpty)
    }

    @Test func theHeaderFollowsABalanceSettledElsewhereOnlyWhenItIsThisUsersAndNewer() {
        var s = Self.state()
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view, settled: SettledBalance(user: "qa-alice", balance: 1_450, at: t0 + 5, command: "buy"))))
        #expect(s.balance.value == 1_450 && s.balance.at == t0 + 5 && s.balance.source == .live)
        // Older than what is shown: kept.
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view, settled: SettledBalance(user: "qa-alice", balance: 900, at: t0 + 1, command: "buy"))))
        #expect(s.balance.value == 1_450)
        // Another user's: kept.
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view, settled: SettledBalance(user: "qa-bob", balance: 7, at: t0 + 9, command: "buy"))))
        #expect(s.balance.value == 1_450)
        // While a read of the balance is out, its answer is what the header waits for.
        var loading = Self.state()
        loading.balance = .loading(Token(99), shown: loading.balance.shown)
        _ = ShopUpdate.update(&loading, .sessionRead(SessionRead(view: Self.view, settled: SettledBalance(user: "qa-alice", balance: 5, at: t0 + 9, command: "buy"))))
        #expect(loading.balance.isLoading && loading.balance.value == 1_250)
    }

    @Test func nOpensOneByTheNameTypedAndIsRefusedWhileOneIsOpen() {
        var s = Self.state()
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: nil)))
        _ = ShopUpdate.update(&s, .action(.sessionStart))
        #expect(s.screen.prompt?.kind == .sessionName)
        for c in "build 9" { _ = ShopUpdate.update(&s, .text(c)) }
        #expect(ShopUpdate.update(&s, .action(.runPrompt)) == [.startSession(name: "build 9")])
        _ = ShopUpdate.update(&s, .action(.sessionStart))
        #expect(ShopUpdate.update(&s, .action(.runPrompt)) == [.startSession(name: "session")])  // nothing typed: the default name
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view)))
        #expect(ShopUpdate.update(&s, .action(.sessionStart)).isEmpty && s.notice?.text == "The session 1.4.3 is open: close it first (C)")
        #expect(s.screen.prompt == nil)
    }

    @Test func nAndCNeedAnOpenSessionAndEachAnswerReadsItAgain() {
        var s = Self.state()
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: nil)))
        #expect(ShopUpdate.update(&s, .action(.sessionClose)).isEmpty && s.notice?.text == "No test session is open: N opens one")
        #expect(ShopUpdate.update(&s, .action(.sessionNote)).isEmpty && s.notice?.kind == .error)
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view)))
        #expect(ShopUpdate.update(&s, .action(.sessionClose)) == [.closeSession])
        _ = ShopUpdate.update(&s, .action(.sessionNote))
        for c in "stale header" { _ = ShopUpdate.update(&s, .text(c)) }
        #expect(ShopUpdate.update(&s, .action(.runPrompt)) == [.noteSession("stale header")])
        #expect(ShopUpdate.update(&s, .sessionChanged(.success("noted in the session"))) == [.readSession] && s.notice?.text == "noted in the session")
        // One read out at a time.
        #expect(ShopUpdate.update(&s, .action(.session)).isEmpty)
        _ = ShopUpdate.update(&s, .sessionRead(SessionRead(view: Self.view)))
        #expect(ShopUpdate.update(&s, .sessionChanged(.failure(SessionFailure("the disk is full")))) == [.readSession] && s.notice?.text == "the disk is full")
    }

    @Test func withNoKeeperTheTabSaysSessionsAreNotKeptHere() {
        var s = Self.state()
        s.session.available = false
        #expect(ShopUpdate.update(&s, .action(.sessionStart)).isEmpty && s.notice?.text.hasPrefix("Test sessions are not kept here") == true)
        #expect(ShopUpdate.update(&s, .action(.session)).isEmpty)
    }

    @Test func aMadeUpTransactionIdIsSaidToBeOneUntilTheTesterChangesIt() {
        var s = Self.state()
        s.screen.tab = .shop
        let asked = ShopUpdate.update(&s, .action(.buy))
        #expect(asked.contains(.makeTransactionID))
        _ = ShopUpdate.update(&s, .transactionIDMade(77))
        #expect(s.write.action?.transactionIsMadeUp == true)
        _ = ShopUpdate.update(&s, .action(.nextField))
        _ = ShopUpdate.update(&s, .action(.deleteChar))
        #expect(s.write.action?.transactionIsMadeUp == false)  // "7" is the tester's, not the tool's
        _ = ShopUpdate.update(&s, .text("7"))
        #expect(s.write.action?.transactionIsMadeUp == true)  // typed back to the made-up id: still no purchase has it
    }

    @Test func theSpendFormSaysWhatTheAmountIsCheckedAgainst() {
        var s = Self.state(at: t0)
        #expect(s.formBalanceWords(now: t0 + 12) == "checked against the balance: 1,250 cheer, read 12 s ago")
        s.balance = .failed(refused, shown: Known(1_250, at: t0, source: .cached(reason: nil)))
        #expect(s.formBalanceWords(now: t0 + 120).hasPrefix("the balance 1,250 cheer is a cached one (2 min ago): the amount is checked against none"))
        s.balance = .idle
        #expect(s.formBalanceWords(now: t0) == "the balance is not read yet: the amount is checked against none")
    }
}
