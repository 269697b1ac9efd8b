import Foundation
import ShopAPI
import Testing
import TerminalText
@testable import ShopTUI
@testable import ShopViewModels

/// Issue 27: numbers are never cut (a number column is as wide as its widest value; text gives way),
/// negative money reads `−$0.99`, an unreadable pack is shown and counted, positions are numbered as
/// the warnings number them, and a cancelled request says so — on every tab, at 80, 100 and 120 columns.
@Suite struct NumberColumnTests {
    static let sizes = [(80, 24), (100, 30), (120, 40)]

    /// The fixture with numbers wider than the columns used to be: a negative price, a price in
    /// another currency, cheer totals in the billions, history amounts in the millions, an unreadable
    /// pack, a cancelled request and a slow one.
    static func wideState() -> AppState {
        var app = loadedState()
        var packs = fixturePacks
        packs[0].priceCents = -99
        packs[1].priceCents = 123_456_789
        packs[2].currency = "EUR"
        packs[2].priceCents = 105
        packs[3].cheerTotal = 1_234_567_890
        let list = AudioPackList(packs: packs, unreadable: [UnreadableEntry(index: 7, id: "com.reiterate.pack.broken", reason: "name: expected text")])
        _ = ShopUpdate.update(&app, .action(.refresh))
        if let token = app.token(for: .packs) { _ = ShopUpdate.update(&app, .replied(token, .success(.packs(list)), at: now)) }
        if let token = app.token(for: .balance) { _ = ShopUpdate.update(&app, .replied(token, .success(.balance(CheerBalance(balance: 1250))), at: now)) }
        var page = historyFixture()
        page.items[0] = .entry(CheerHistoryEntry(id: "h-230", creator: "Field & Foley", amount: 10_000_000, product: "com.reiterate.pack.rain", date: now.addingTimeInterval(-3_600), comments: nil))
        page.items[1] = .entry(CheerHistoryEntry(id: "h-229", creator: "佐藤 健二", amount: -5, product: "com.reiterate.pack.tokyo-night", date: now.addingTimeInterval(-90_000), comments: nil))
        if let token = app.token(for: .historyPage(1)) { _ = ShopUpdate.update(&app, .replied(token, .success(.history(page)), at: now)) }
        var cancelled = exchangeFixture(5, path: "/api/v1/cheer_history?user_id=qa-alice&page=2&per_page=50", status: nil, failure: .cancelled)
        cancelled.requestID = nil
        _ = ShopUpdate.update(&app, .exchangeRecorded(cancelled))
        var slow = exchangeFixture(6, path: "/api/v1/audio_packs", status: 200, body: "{}")
        slow.duration = .milliseconds(123_456)
        _ = ShopUpdate.update(&app, .exchangeRecorded(slow))
        app.notice = nil
        return app
    }

    /// Every number of the fixture shows whole on its tab, and no row anywhere has a digit cut by `…`.
    @Test func numbersAreNeverCutOnAnyTabAtAnyWidth() {
        let whole: [(Action, [String])] = [
            (.shop, ["−$0.99", "$1234567.89", "1.05 EUR", "1,234,567,890", "6 of 7 packs (1 unreadable)", "⚠ unreadable pack packs[7]"]),
            (.history, ["10,000,000", "-5", "history[2] of page 1"]),
            (.requests, ["cancelled", "123456 ms"]),
            (.checks, []),
            (.live, []),
        ]
        for (w, h) in Self.sizes {
            for (tab, numbers) in whole {
                var app = Self.wideState()
                _ = ShopUpdate.update(&app, .action(tab))
                let grid = Renderer.render(frame(app, width: w, height: h))
                let text = grid.text
                for number in numbers {
                    #expect(text.contains(number), "\(tab) at \(w)x\(h): \(number) is not whole\n\(text)")
                }
                for y in 0..<grid.height {
                    let row = grid.row(y)
                    #expect(row.range(of: #"[0-9][0-9,.]*…"#, options: .regularExpression) == nil || !Self.isTableRow(y, h: h),
                            "\(tab) at \(w)x\(h), row \(y) cuts a number: \(row)")
                }
                // The refused connection is ERR; the cancelled request is not.
                if tab == .requests { #expect(text.components(separatedBy: " ERR ").count == 2, "\(text)") }
            }
        }
    }

    /// Numbers wider than the columns' old caps at 80 columns (PRICE and CHEER a third of the pack
    /// list, 15; AMOUNT a quarter of the screen, 20) are still whole: the text columns give way.
    @Test func numbersWiderThanTheOldCapsAreWholeAt80Columns() {
        var app = Self.wideState()
        var packs = fixturePacks
        packs[0].priceCents = 12_345_678_901_234  // $123456789012.34: 16
        packs[1].cheerTotal = 1_234_567_890_123_456_789  // 25 with its commas
        _ = ShopUpdate.update(&app, .action(.refresh))
        if let token = app.token(for: .packs) { _ = ShopUpdate.update(&app, .replied(token, .success(.packs(AudioPackList(packs: packs))), at: now)) }
        var page = historyFixture()
        page.items[0] = .entry(CheerHistoryEntry(id: "h-230", creator: "Field & Foley", amount: Int.max, product: "com.reiterate.pack.rain", date: now, comments: nil))
        page.items[1] = .entry(CheerHistoryEntry(id: "h-229", creator: "Field & Foley", amount: -1_000_000_000_000_000_000, product: "com.reiterate.pack.rain",
                                                 date: now, comments: nil))
        if let token = app.token(for: .historyPage(1)) { _ = ShopUpdate.update(&app, .replied(token, .success(.history(page)), at: now)) }
        for (tab, numbers) in [(Action.shop, ["$123456789012.34", "1,234,567,890,123,456,789"]),
                               (.history, ["9,223,372,036,854,775,807", "-1,000,000,000,000,000,000"])] {
            _ = ShopUpdate.update(&app, .action(tab))
            for (w, h) in [(80, 24), (60, 20)] {
                let grid = Renderer.render(frame(app, width: w, height: h))
                for number in numbers {
                    #expect(grid.text.contains(number), "\(tab) at \(w)x\(h): \(number) is not whole\n\(grid.text)")
                }
                for y in 0..<grid.height where Self.isTableRow(y, h: h) {
                    #expect(grid.row(y).range(of: #"[0-9][0-9,.]*…"#, options: .regularExpression) == nil, "\(tab) at \(w)x\(h), row \(y) cuts a number: \(grid.row(y))")
                }
            }
        }
    }

    /// The list rows (under the header, tabs and titles, above the message and hint lines).
    static func isTableRow(_ y: Int, h: Int) -> Bool { y >= 3 && y < h - 2 }

    @Test func shopWithWideNumbersAndAnUnreadablePack() {
        for (w, h) in Self.sizes {
            assertSnapshot(Renderer.render(frame(Self.wideState(), width: w, height: h)), "numbers-shop-\(w)x\(h)")
        }
    }

    @Test func historyWithWideAmounts() {
        var app = Self.wideState()
        _ = ShopUpdate.update(&app, .action(.history))
        for (w, h) in Self.sizes {
            assertSnapshot(Renderer.render(frame(app, width: w, height: h)), "numbers-history-\(w)x\(h)")
        }
    }

    @Test func requestsWithACancelledAndASlowRequest() {
        var app = Self.wideState()
        _ = ShopUpdate.update(&app, .action(.requests))
        for (w, h) in Self.sizes {
            assertSnapshot(Renderer.render(frame(app, width: w, height: h)), "numbers-requests-\(w)x\(h)")
        }
        // The cancelled request's detail says who ended it.
        let cancelled = app.requests.rows.firstIndex { $0.failure == .cancelled } ?? 0
        app.requests.selectedIndex = cancelled
        let text = Renderer.render(frame(app, width: 120, height: 40)).text
        #expect(text.contains("cancelled by the app before the answer was complete"), "\(text)")
    }
}
