import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// The Purchases tab (issue 38): one line of each verdict, coloured by what it means, the selected
/// line's verified transaction and the backend's posts of it beside the list, and text from the
/// server (a product id) never reaching the terminal raw.
@Suite struct PurchasesSnapshotTests {
    static func transaction(_ id: String, _ product: String, quantity: Int = 1, revoked: Date? = nil) -> AppStoreTransaction {
        AppStoreTransaction(transactionID: id, bundleID: "com.reiterate.app", productID: product, quantity: quantity, purchaseDate: now - 600,
                            signedDate: now - 600, revocationDate: revoked, revocationReason: revoked == nil ? nil : 0)
    }

    static func event(_ kind: ShopEvent.Kind, _ seconds: Double, status: Int? = 200, balance: Int? = nil, id: String) -> ShopEvent {
        ShopEvent(kind: kind, at: now - 600 + seconds, user: "qa-alice", status: status, balance: balance, requestID: id, source: "app")
    }

    static func post(_ tx: UInt64, _ product: String = "com.reiterate.cheer.200") -> ShopEvent.Kind {
        .purchase(.init(identifier: product, transactionID: .number(tx)))
    }

    /// Every verdict once: credited, not credited (the app's), credit mismatch, credited twice, refunded
    /// (kept: a finding), not paid (a hostile product id), not verified.
    static func state() -> AppState {
        let history: [CheckedRecord] = [
            .verified(transaction("2000000000000001", "com.reiterate.cheer.200")),
            .verified(transaction("2000000000000002", "com.reiterate.cheer.500")),
            .verified(transaction("2000000000000003", "com.reiterate.cheer.100", quantity: 2)),
            .verified(transaction("2000000000000004", "com.reiterate.cheer.50")),
            .verified(transaction("2000000000000005", "com.reiterate.cheer.200", revoked: now - 300)),
            .notVerified(NotVerified(claimedTransactionID: "2000000000000009", reason: .record(.untrustedChain(.otherRoot)))),
        ]
        let events = [
            event(.balance, -1, balance: 1250, id: "rq-b0"), event(.balance, 1, balance: 1250, id: "rq-b1"), event(post(2_000_000_000_000_001), 2, balance: 1450, id: "rq-p1"),
            event(post(2_000_000_000_000_003, "com.reiterate.cheer.100"), 3, balance: 1550, id: "rq-p3"),
            event(post(2_000_000_000_000_004, "com.reiterate.cheer.50"), 4, balance: 1600, id: "rq-p4a"),
            event(post(2_000_000_000_000_004, "com.reiterate.cheer.50"), 5, balance: 1650, id: "rq-p4b"),
            event(post(2_000_000_000_000_005), 6, balance: 1850, id: "rq-p5"),
            event(.purchase(.init(identifier: "com.reiterate.cheer.200\u{1B}[31m\u{202E}", transactionID: 4242)), 7, balance: 2050, id: "rq-p6"),
            event(.balance, 400, balance: 2050, id: "rq-b2"),
        ]
        let catalog = ["com.reiterate.cheer.50": 50, "com.reiterate.cheer.100": 100, "com.reiterate.cheer.200": 200, "com.reiterate.cheer.500": 500]
        let ledger = Ledger.judge(history: history, lookups: ["4242": .unknown], events: events, catalog: catalog)
        var transactions: [String: AppStoreTransaction] = [:]
        for t in history.compactMap(\.transaction) { transactions[t.transactionID] = t }
        var s = loadedState()
        _ = ShopUpdate.update(&s, .ledgerRead(.success(LedgerView(ledger: ledger, transactions: transactions, events: events,
                                                                  anchor: "2000000000000001", readAt: now - 5))))
        _ = ShopUpdate.update(&s, .action(.purchases))
        return s
    }

    @Test func everyVerdictHasItsLineAndTheSelectedOneItsDetail() throws {
        let s = Self.state()
        #expect(s.purchases.list.rows.map(\.verdict) == [.notVerified, .credited, .notCredited, .creditMismatch, .creditedTwice, .refunded, .notPaid])
        for (w, h) in [(80, 24), (120, 40)] {
            assertSnapshot(Renderer.render(frame(s, width: w, height: h)), "purchases-\(w)x\(h)")
        }
        let grid = Renderer.render(frame(s, width: 120, height: 40))
        let text = grid.text
        #expect(text.contains(" 6 Purchases ") && text.contains("7 lines · 6 findings"))
        for verdict in ["credited", "not credited", "credit mismatch", "credited twice", "refunded", "not paid", "not verified"] {
            #expect(text.contains(verdict), "\(verdict)")
        }
        // The server's text is shown cleaned: no escape sequence, no bidi control.
        #expect(!text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
        // The first line (not verified) is selected: its detail says the record is not believed.
        #expect(text.contains("believed; 2000000000000009 is what"))
    }

    @Test func enterShowsTheVerifiedTransactionAndItsPostsFullSize() {
        var s = Self.state()
        _ = ShopUpdate.update(&s, .action(.down))
        _ = ShopUpdate.update(&s, .action(.down))
        _ = ShopUpdate.update(&s, .action(.down))  // the credit mismatch
        _ = ShopUpdate.update(&s, .action(.toggle))
        let grid = Renderer.render(frame(s, width: 120, height: 40))
        assertSnapshot(grid, "purchases-detail-120x40")
        let text = grid.text
        #expect(text.contains("credit mismatch — the server's fault"))
        #expect(text.contains("App Store (signature and chain verified)") && text.contains("product: com.reiterate.cheer.100 × 2 (Consumable)"))
        #expect(text.contains("Backend: 1 post of it") && text.contains("app 200 → balance 1,550 rq-p3"))
    }
}
