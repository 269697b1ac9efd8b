import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// A REST core answering from the fixtures at once.
actor FixtureShop: ShopService {
    private(set) var calls: [String] = []
    func send(_ request: ShopRequest) async throws -> (answer: ShopAnswer, requestID: String?) {
        switch request {
        case .balance: calls.append("balance"); return (.balance(CheerBalance(balance: 1250)), nil)
        case .packs: calls.append("packs"); return (.packs(AudioPackList(packs: fixturePacks)), nil)
        case let .history(_, page, _):
            calls.append("history \(page)")
            var p = historyFixture()
            p.page = page
            return (.history(p), nil)
        case let .write(.spend(spend), _): return (.balance(CheerBalance(balance: 1250 - spend.amount)), nil)
        case .write(.purchase, _): return (.balance(CheerBalance(balance: 1450)), nil)
        }
    }
    func exchangeUpdates() async -> AsyncStream<Exchange> { AsyncStream { $0.finish() } }
    func recordedExchanges() async -> SessionExchanges { SessionExchanges(kept: []) }
}

/// The whole front end with no terminal: keys into the backend, the real event loop, the real store
/// and update, frames out of the backend.
@MainActor
@Suite struct EventLoopTests {
    func launch(width: Int = 100, height: Int = 30, cached: CachedShop? = nil) -> (TerminalApp, TestBackend, AppStore) {
        let backend = TestBackend(width: width, height: height)
        let store = AppStore(state: AppState(context: ShopContext(environment: "staging", baseURL: "https://s.invalid", user: "qa-alice")),
                             service: FixtureShop(), cache: nil, now: { now })
        let app = TerminalApp(store: store, backend: backend, scheduling: .immediate, clock: { now })
        app.start(cached: cached)
        return (app, backend, store)
    }

    @Test func keysInFramesOut() async {
        let (app, backend, store) = launch()
        #expect(backend.started && backend.frames >= 1)
        await store.settle()
        #expect(backend.text.contains("Balance 1,250 cheer") && backend.text.contains("Rain on a Tin Roof"))
        backend.press(.char("2"))
        app.pump()
        await store.settle()
        #expect(backend.text.contains("entry 1 of 100,000 · page 1 of 2,000"))
        backend.press(.enter)
        app.pump()
        #expect(backend.text.contains("↳ tomás: I have been listening"))
        backend.press(.char("q"))
        app.pump()
        #expect(app.exitStatus == 0 && !backend.started)
        app.stop()
    }

    @Test func theFirstFrameShowsTheCacheBeforeAnyAnswer() {
        let cached = CachedShop(balance: .init(value: CheerBalance(balance: 999), fetchedAt: now.addingTimeInterval(-600)))
        let (app, backend, _) = launch(cached: cached)
        // Drawn synchronously by start(): no task has run, no answer has come.
        #expect(backend.frames >= 1 && backend.text.contains("Balance 999 cheer · cached 10 min ago"))
        app.stop()
    }

    @Test func aMoveRedrawsOnlyTheCellsThatChanged() async {
        let (app, backend, store) = launch(width: 200, height: 60)
        await store.settle()
        backend.press(.char("j"))
        app.pump()
        // Two list rows change (the selection moves) and the details pane: far fewer than the screen.
        let written = backend.cellsWritten.last ?? 0
        #expect(written > 0 && written < 200 * 60 / 4, "wrote \(written) cells")
        app.stop()
    }

    @Test func aResizeThatChangesNothingDrawsNoFrame() async {
        // curses queues a KEY_RESIZE of its own after every resizeterm; answering each with a new
        // frame (and a forgotten previous one) once made every key repaint the whole screen.
        let (app, backend, store) = launch(width: 120, height: 40)
        await store.settle()
        let frames = backend.frames
        backend.setSize(width: 120, height: 40)
        app.pump()
        #expect(backend.frames == frames)
        backend.press(.char("j"))
        app.pump()
        #expect(backend.frames == frames + 1 && (backend.cellsWritten.last ?? 0) < 120 * 40 / 4)
        backend.setSize(width: 100, height: 30)
        app.pump()
        #expect(backend.frames > frames + 1)  // a real resize is drawn
        #expect(store.state.screen.width == 100 && backend.screen?.width == 100, "\(store.state.screen.width) \(String(describing: backend.screen?.width))")
        app.stop()
    }

    @Test func nothingMovesNoTimer() async {
        let (app, _, store) = launch()
        #expect(app.nextWake == .milliseconds(120))  // loading: the spinner turns
        await store.settle()
        app.render()
        #expect(app.nextWake == nil)  // all live, nothing cached on screen: no wake-ups
        var cachedState = store.state
        cachedState.balance = .loaded(Known(cachedState.balance.value ?? 0, at: now.addingTimeInterval(-90), source: .cached(reason: nil)))
        // "1 min ago" turns into "2 min ago" in 30 s.
        #expect(TerminalApp.nextWake(cachedState, now: now) == .milliseconds(30_005))
        app.stop()
    }

    @Test func copyGoesToTheBackendsClipboard() async {
        let (app, backend, store) = launch()
        await store.settle()
        store.send(.exchangeRecorded(exchangeFixture(1, path: "/api/v1/balance", status: 200)))
        backend.press(.char("3"), .char("y"))
        app.pump()
        #expect(backend.clipboard == ["rq-aaaa1"])
        app.stop()
    }

    @Test func clicksPickTabsAndRowsAndTheWheelScrolls() async throws {
        let (app, backend, store) = launch()
        await store.settle()
        _ = try #require(backend.screen)  // a frame was drawn
        // Each tab sits on row 1 (" 2 History ", or " 2 " where the titles do not fit): a click on its number.
        func tabX(_ n: Int, _ title: String) -> Int? {
            guard let row = backend.screen?.row(1) else { return nil }
            if let r = row.range(of: "\(n) \(title)") { return row.distance(from: row.startIndex, to: r.lowerBound) }
            return row.range(of: " \(n) ").map { row.distance(from: row.startIndex, to: $0.lowerBound) + 1 }
        }
        let historyX = try #require(tabX(2, "History"))
        backend.mouse(.press, x: historyX, y: 1)
        app.pump()
        #expect(store.state.screen.tab == .history)
        await store.settle()
        // The list starts on row 3 (titles on row 2): click the fifth entry.
        backend.mouse(.press, x: 10, y: 3 + 4)
        app.pump()
        #expect(store.state.history.selectedIndex == 4)
        backend.mouse(.wheelDown, x: 10, y: 10)
        app.pump()
        #expect(store.state.history.selectedIndex == 7)
        backend.mouse(.wheelUp, x: 10, y: 10)
        app.pump()
        #expect(store.state.history.selectedIndex == 4)
        // Every tab title is a target, the fourth too (it once opened Requests).
        let checksX = try #require(tabX(4, "Checks"))
        backend.mouse(.press, x: checksX, y: 1)
        app.pump()
        #expect(store.state.screen.tab == .checks)
        // With a dialog open, the mouse does nothing.
        backend.press(.char("1"), .char("s"))
        app.pump()
        backend.mouse(.press, x: historyX, y: 1)
        app.pump()
        #expect(store.state.screen.tab == .shop && store.state.mode == .form)
        app.stop()
    }
}

/// The terminal owns the diff (ratatui's `Terminal`): it holds the frame shown and gives the backend
/// only the runs that changed; a size change forgets that frame and clears, so the next is written whole.
@MainActor
@Suite struct TerminalTests {
    /// A 20 × 3 terminal that shows "hello" on its first row.
    func showingHello() -> (TestBackend, Terminal, Grid) {
        let backend = TestBackend(width: 20, height: 3)
        let terminal = Terminal(backend)
        terminal.start()
        var hello = Grid(width: 20, height: 3)
        hello.put("hello", x: 0, y: 0)
        terminal.draw(hello)
        return (backend, terminal, hello)
    }

    @Test func theBackendIsGivenOnlyTheRunsThatChanged() {
        let (backend, terminal, a) = showingHello()
        #expect(backend.cellsWritten == [60] && backend.text == "hello\n\n")
        var b = a
        b.put("J", x: 3, y: 1)
        terminal.draw(b)
        #expect(backend.cellsWritten.last == 1 && terminal.cellsWritten == 1 && backend.text == "hello\n   J\n")
        terminal.draw(b)
        #expect(backend.cellsWritten.last == 0 && backend.frames == 3)
    }

    @Test func aSizeChangeForgetsTheFrameShownAndClears() {
        let (backend, terminal, a) = showingHello()
        // Told of a resize that changed nothing: the frame shown is kept, the same frame writes nothing.
        terminal.resize()
        terminal.draw(a)
        #expect(backend.cellsWritten.last == 0 && backend.text == "hello\n\n")
        backend.setSize(width: 10, height: 2)
        terminal.resize()
        #expect(backend.text.isEmpty)  // cleared: nothing is taken to be on screen
        var small = Grid(width: 10, height: 2)
        small.put("x", x: 2, y: 1)
        terminal.draw(small)
        #expect(backend.cellsWritten.last == 20 && backend.text == "\n  x")
        // Back to the first size: every cell again, and nothing left of the small frame.
        backend.setSize(width: 20, height: 3)
        terminal.resize()
        terminal.draw(a)
        #expect(backend.cellsWritten.last == 60 && backend.text == "hello\n\n")
    }
}
