import Foundation
import ShopAPI
import StubCore
import Testing
import TerminalText
@testable import ShopTUI
@testable import ShopViewModels

/// Every screen, overlay and dialog as plain text, at 80×24 and 120×40 (references in __Snapshots__).
@Suite struct SnapshotTests {
    static let sizes = [(80, 24), (120, 40)]

    func both(_ name: String, _ app: AppState, _ ui: UIState = UIState()) {
        for (w, h) in Self.sizes {
            let grid = Renderer.render(frame(app, ui, width: w, height: h))
            assertSnapshot(grid, "\(name)-\(w)x\(h)")
            checkIntegrity(grid)
        }
    }

    /// No control character in any cell, and every row exactly as wide as the grid.
    func checkIntegrity(_ grid: Grid, sourceLocation: SourceLocation = #_sourceLocation) {
        for y in 0..<grid.height {
            #expect(DisplayWidth.of(grid.row(y)) == grid.width, "row \(y) is \(DisplayWidth.of(grid.row(y))) wide", sourceLocation: sourceLocation)
            let bad = grid.row(y).unicodeScalars.filter { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.generalCategory == .format }
            #expect(bad.isEmpty, "row \(y) holds \(bad.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
        }
    }

    @Test func shop() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.selectPack(index: 2)), now: now)
        both("shop", app)
    }

    @Test func shopFiltered() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.setPackFilter("cafe")), now: now)
        var ui = UIState()
        ui.editingFilter = true
        both("shop-filter", app, ui)
    }

    @Test func historyWithCommentsAndAnUnreadableEntry() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.toggleComments), now: now)
        var ui = UIState()
        ui.tab = .history
        both("history", app, ui)
    }

    @Test func requestsWithDetail() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.selectRequest(index: 1)), now: now)
        var ui = UIState()
        ui.tab = .requests
        both("requests", app, ui)
    }

    @Test func requestDetailFullSize() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.selectRequest(index: 1)), now: now)
        var ui = UIState()
        ui.tab = .requests
        ui.requestDetailFull = true
        both("request-detail", app, ui)
    }

    @Test func helpOverlay() {
        var ui = UIState()
        ui.showHelp = true
        both("help", loadedState(), ui)
    }

    @Test func helpOverlayAtTheSmallestSizeShowsEveryBinding() {
        var ui = UIState()
        ui.showHelp = true
        let grid = Renderer.render(frame(loadedState(), ui, width: 60, height: 16))
        assertSnapshot(grid, "help-60x16")
        checkIntegrity(grid)
        for binding in Keymap.bindings {
            #expect(grid.text.contains(binding.keys.joined(separator: " ")), "\(binding.keys)")
        }
    }

    @Test func spendDialogAndConfirmation() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.beginSpend), now: now)
        _ = ShopUpdate.update(&app, .intent(.editSpend(amount: "50", comment: "Lovely 🌧")), now: now)
        both("spend", app)
        _ = ShopUpdate.update(&app, .intent(.submitAction), now: now)
        both("spend-confirm", app)
    }

    @Test func buyDialog() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .intent(.beginPurchase(transactionID: 4_242_424_242)), now: now)
        var ui = UIState()
        ui.dialogField = 1
        both("buy", app, ui)
    }

    @Test func offlineWithTheCachedBalance() {
        var app = AppState(context: ShopContext(environment: "local", baseURL: "http://127.0.0.1:8080", user: "qa-alice"))
        _ = ShopUpdate.update(&app, .intent(.start), now: now)
        _ = ShopUpdate.update(&app, .cacheLoaded(generation: 1, balance: .init(value: CheerBalance(balance: 1250), fetchedAt: now.addingTimeInterval(-720)),
                                                 packs: .init(value: AudioPackList(packs: fixturePacks), fetchedAt: now.addingTimeInterval(-720)), firstPage: nil), now: now)
        let refused = ShopAPIError.transport(.connectionRefused(host: "127.0.0.1"), endpoint: "GET /api/v1/balance")
        _ = ShopUpdate.update(&app, .balanceLoaded(generation: 1, .failure(refused), at: now), now: now)
        _ = ShopUpdate.update(&app, .packsLoaded(generation: 1, .failure(refused), at: now), now: now)
        both("offline", app)
    }

    @Test func firstFrameWhileLoading() {
        var app = AppState(context: ShopContext(environment: "production", baseURL: "https://shop.reiterate.invalid", user: "qa-alice", readOnly: true))
        _ = ShopUpdate.update(&app, .intent(.start), now: now)
        both("loading", app)
    }

    @Test func tooSmall() {
        let grid = Renderer.render(frame(loadedState(), width: 59, height: 16))
        assertSnapshot(grid, "too-small-59x16")
        #expect(grid.text.contains("Terminal too small: 59×16"))
        #expect(!Renderer.render(frame(loadedState(), width: 60, height: 16)).text.contains("too small"))
        #expect(Renderer.render(frame(loadedState(), width: 60, height: 15)).text.contains("too small"))
    }

    @Test func hostileTextIsNeutralisedAndColumnsStayAligned() {
        var app = loadedState()
        let hostile = HostileText.apply(to: Catalog.packs(seed: 1)).map { p in
            AudioPack(identifier: p.identifier, name: p.name, creator: p.creator, description: p.description, priceCents: p.priceCents,
                      currency: p.currency, sampleCount: p.sampleCount, durationSeconds: p.durationSeconds, cheerTotal: p.cheerTotal, tags: p.tags)
        }
        _ = ShopUpdate.update(&app, .packsLoaded(generation: 1, .success(AudioPackList(packs: hostile)), at: now), now: now)
        for (w, h) in Self.sizes {
            let grid = Renderer.render(frame(app, width: w, height: h))
            assertSnapshot(grid, "hostile-\(w)x\(h)")
            checkIntegrity(grid)
            // The price column ends at the same column on every list row.
            let rows = (3..<(h - 2)).map { grid.row($0) }
            let priceEnds = Set(rows.compactMap { row -> Int? in
                guard let r = row.range(of: "$") ?? row.range(of: "free") else { return nil }
                let prefix = String(row[..<r.lowerBound])
                let token = row[r.lowerBound...].prefix { $0 != " " }
                return DisplayWidth.of(prefix) + DisplayWidth.of(String(token))
            })
            #expect(priceEnds.count == 1, "price column ends at \(priceEnds.sorted())")
        }
    }

    @Test func wideCharactersKeepColumnsAligned() {
        let grid = Renderer.render(frame(loadedState(), width: 80, height: 24))
        // CHEER is right-aligned: every pack row ends its number at the same column.
        let ends = Set((3..<9).map { y -> Int in
            let row = grid.row(y)
            let list = String(row.prefix { $0 != "┌" && $0 != "│" })
            return DisplayWidth.of(list.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
        })
        #expect(ends.count == 1, "\(ends)")
    }
}
