import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import Testing
@testable import ShopViewModels

/// The Purchases tab (issue 38): the ledger is read when the tab first opens and on `r` there, never
/// twice at once; a failed read keeps the lines shown; without an App Store table nothing is read.
@Suite struct PurchasesTests {
    static let paid = AppStoreTransaction(transactionID: "2000000000000001", bundleID: "com.reiterate.app", productID: "com.reiterate.cheer.200",
                                          purchaseDate: t0, signedDate: t0)

    static func view(findings: Bool = false) -> LedgerView {
        let post = ShopEvent(kind: .purchase(.init(identifier: "com.reiterate.cheer.200", transactionID: 2_000_000_000_000_001)), at: t0, user: "qa-alice",
                             status: findings ? 503 : 200, balance: findings ? nil : 1450, requestID: "rq-1", source: "app")
        let ledger = Ledger.judge(history: [.verified(paid)], lookups: [:], events: [post], catalog: ["com.reiterate.cheer.200": 200])
        return LedgerView(ledger: ledger, transactions: [paid.transactionID: paid], events: [post], anchor: paid.transactionID, readAt: t0)
    }

    @Test func theTabReadsTheLedgerOnceWhenItFirstOpens() {
        var s = AppState(context: alice, appStore: true)
        #expect(ShopUpdate.update(&s, .action(.purchases)) == [.readLedger])
        #expect(s.screen.tab == .purchases && s.purchases.phase == .loading)
        // Open again while the read is out: nothing more is asked.
        _ = ShopUpdate.update(&s, .action(.shop))
        #expect(ShopUpdate.update(&s, .action(.purchases)) == [])
        _ = ShopUpdate.update(&s, .ledgerRead(.success(Self.view())))
        #expect(s.purchases.phase == .loaded && s.purchases.list.count == 1 && s.purchases.list.selected?.verdict == .credited)
        #expect(s.notice?.text.contains("Purchases: 1 line, 0 findings") == true)
        // `r` on the tab reads it again.
        #expect(ShopUpdate.update(&s, .action(.refresh)).contains(.readLedger))
    }

    /// Issue 44: a ledger finding is on the Checks tab and in the ⚠ count, once however often the ledger is read.
    @Test func aLedgerFindingGoesToTheChecksTabOnce() {
        var s = AppState(context: alice, appStore: true)
        _ = ShopUpdate.update(&s, .action(.purchases))
        _ = ShopUpdate.update(&s, .ledgerRead(.success(Self.view(findings: true))))
        let record = s.checks.records.first { $0.name == "ledger-not-credited" }
        #expect(record?.outcome == .failed && record?.requestID == "rq-1" && record?.check.source == .ledger)
        // One finding type: the transaction by identity is its subject, its blame said ("not known" when the ledger cannot say).
        #expect(record?.request == "transaction 2000000000000001 (com.reiterate.cheer.200 ×1)" && record?.actual.hasPrefix("not credited: ") == true,
                "\(record?.request ?? "") \(record?.actual ?? "")")
        #expect(record?.blame != nil && record?.finding.line.hasPrefix("✗ ledger-not-credited (") == true, "\(record?.finding.line ?? "")")
        #expect(s.checks.failures == 1)
        _ = ShopUpdate.update(&s, .action(.refresh))
        _ = ShopUpdate.update(&s, .ledgerRead(.success(Self.view(findings: true))))
        #expect(s.checks.records.filter { $0.name == "ledger-not-credited" }.count == 1 && s.checks.failures == 1)
        // A ledger with no finding adds nothing.
        var clean = AppState(context: alice, appStore: true)
        _ = ShopUpdate.update(&clean, .action(.purchases))
        _ = ShopUpdate.update(&clean, .ledgerRead(.success(Self.view())))
        #expect(clean.checks.records.isEmpty)
    }

    @Test func aFailedReadKeepsTheLinesAndSaysWhy() {
        var s = AppState(context: alice, appStore: true)
        _ = ShopUpdate.update(&s, .action(.purchases))
        _ = ShopUpdate.update(&s, .ledgerRead(.success(Self.view(findings: true))))
        #expect(s.purchases.list.selected?.verdict == .notCredited && s.notice?.kind == .error)
        _ = ShopUpdate.update(&s, .action(.refresh))
        _ = ShopUpdate.update(&s, .ledgerRead(.failure(LedgerFailure("the App Store refused the token (401)"))))
        #expect(s.purchases.phase == .failed("the App Store refused the token (401)") && s.purchases.list.count == 1)
        #expect(s.notice?.text == "The App Store could not be read: the App Store refused the token (401)")
    }

    @Test func withoutAnAppStoreTableNothingIsRead() {
        var s = AppState(context: alice)
        #expect(ShopUpdate.update(&s, .action(.purchases)) == [])
        #expect(s.screen.tab == .purchases && s.purchases.phase == .off)
        #expect(ShopUpdate.update(&s, .action(.refresh)).contains(.readLedger) == false)
        #expect(s.notice?.text.contains("[appstore] table") == true)
    }

    @Test func enterShowsTheDetailFullSizeAndEscapeClosesIt() {
        var s = AppState(context: alice, appStore: true)
        _ = ShopUpdate.update(&s, .action(.purchases))
        _ = ShopUpdate.update(&s, .ledgerRead(.success(Self.view())))
        _ = ShopUpdate.update(&s, .action(.toggle))
        #expect(s.purchases.detailFull)
        _ = ShopUpdate.update(&s, .action(.back))
        #expect(!s.purchases.detailFull)
    }

    @Test func rWritesAReportWithBothSides() throws {
        var s = AppState(context: alice, appStore: true)
        _ = ShopUpdate.update(&s, .action(.purchases))
        _ = ShopUpdate.update(&s, .ledgerRead(.success(Self.view(findings: true))))
        guard case let .writeReport(report)? = ShopUpdate.update(&s, .action(.bugReport)).first else {
            Issue.record("no report")
            return
        }
        #expect(report.title == "Purchase 2000000000000001: not credited (the server's fault)")
        let text = report.markdown(at: t0, version: "test", screen: nil)
        #expect(text.contains("## The App Store's record") && text.contains("Signature and chain verified."))
        #expect(text.contains("`com.reiterate.cheer.200` × 1 (Consumable)"))
        #expect(text.contains("by the app: HTTP 503, request id `rq-1`"))
        #expect(text.contains("## The backend's post") && text.contains("No post of it is among this session's exchanges."))
    }

    @Test func whileTheWatchRunsTheLedgerIsReadAgainAndANewFindingIsToldOnce() {
        var s = AppState(context: alice, appStore: true)
        s.clock = t0
        #expect(ShopUpdate.liveLedger(&s) == [])  // the watch is off
        _ = ShopUpdate.startWatch(&s)
        #expect(ShopUpdate.liveLedger(&s) == [.readLedger])  // never read: read now
        #expect(ShopUpdate.liveLedger(&s) == [])  // one read at a time
        let effects = ShopUpdate.update(&s, .ledgerRead(.success(Self.view(findings: true))))
        #expect(effects == [.alert(.bell, "Purchase 2000000000000001: not credited (the server's fault): see 6 Purchases")])
        #expect(s.notice?.kind == .error && s.notice?.text.hasPrefix("Purchase 2000000000000001: not credited") == true)
        // Read again later: the same finding is not told again.
        s.clock = t0 + 10
        #expect(ShopUpdate.liveLedger(&s) == [])  // 10 s after the last read: not yet
        s.clock = t0 + PurchasesState.liveInterval + 1
        #expect(ShopUpdate.liveLedger(&s) == [.readLedger])
        #expect(ShopUpdate.update(&s, .ledgerRead(.success(Self.view(findings: true)))).isEmpty)
    }

    /// The store hands the reader the session's exchanges and the answer back to the update.
    @MainActor
    @Test func theStoreReadsThroughTheProgramsReader() async {
        let reader = CountingReader(view: Self.view())
        let store = AppStore(state: AppState(context: alice, appStore: true), service: FakeShop(), cache: nil, now: { t0 })
        store.ledgerReader = reader
        store.send(.action(.purchases))
        #expect(await eventually { store.state.purchases.phase == .loaded })
        #expect(await reader.reads == 1 && store.state.purchases.list.selected?.transactionID == "2000000000000001")
    }
}

actor CountingReader: LedgerReader {
    let view: LedgerView
    private(set) var reads = 0
    init(view: LedgerView) { self.view = view }
    func readLedger(exchanges: [Exchange]) async -> Result<LedgerView, LedgerFailure> {
        reads += 1
        return .success(view)
    }
    func appStoreRecord(_ transactionID: String) async -> AppStoreRecordRead {
        AppStoreRecordRead(transactionID: transactionID, paid: nil, line: "warning: the App Store does not know transaction \(transactionID)\n")
    }
}
