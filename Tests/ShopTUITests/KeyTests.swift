import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// Keys through the whole loop with no terminal: the keymap resolves each key to a message, the one
/// update function takes it, and the effects a store would run are collected (the random transaction
/// id answered with 77, as the store would with its own number).
struct Loop {
    var app: AppState
    var keymap: Keymap
    /// Effects for the front end (quit, copy).
    var commands: [Effect] = []
    var effects: [Effect] = []

    init(_ app: AppState = loadedState(), keymap: Keymap = .standard) {
        self.app = app
        self.keymap = keymap
    }

    var ui: ScreenState {
        get { app.screen }
        set { app.screen = newValue }
    }

    mutating func press(_ keys: KeyPress...) {
        for key in keys {
            guard let message = keymap.message(for: key, in: app) else { continue }
            send(message)
        }
    }

    mutating func send(_ message: Message) {
        var baseline: [(Token, ShopRequest)] = []
        for effect in ShopUpdate.update(&app, message).flatMap(\.flattened) {
            switch effect {
            case .quit, .copy: commands.append(effect)
            case .makeTransactionID: send(.transactionIDMade(77))
            case let .request(token, request) where app.write.verification?.isBaseline == true:
                baseline.append((token, request))
                effects.append(effect)
            default: effects.append(effect)
            }
        }
        // A write's baseline reads are answered with what the screen holds (the write then goes out).
        for (token, request) in baseline {
            switch request {
            case .balance: send(.replied(token, .success(.balance(CheerBalance(balance: app.balance.value ?? 0))), at: now))
            case .history(_, 1, _):
                let page = app.history.pages[1]?.value
                    ?? CheerHistoryPage(items: [], page: 1, perPage: 50, totalPages: 0, totalCount: app.history.totalCount ?? 0)
                send(.replied(token, .success(.history(page)), at: now))
            case .packs: send(.replied(token, .success(.packs(app.packs.list.value ?? AudioPackList(packs: [], unreadable: []))), at: now))
            default: break
            }
        }
    }

    mutating func type(_ text: String) {
        for c in text { press(.char(c)) }
    }
}

@Suite struct KeyTests {
    @Test func tabsByNumberTabAndShiftTab() {
        var l = Loop()
        l.press(.char("2"))
        #expect(l.ui.tab == .history)
        l.press(.char("3"))
        #expect(l.ui.tab == .requests)
        l.press(.tab)
        #expect(l.ui.tab == .checks)
        l.press(.tab)
        #expect(l.ui.tab == .live)
        l.press(.tab)
        #expect(l.ui.tab == .purchases)
        l.press(.tab)
        #expect(l.ui.tab == .session)
        l.press(.tab)
        #expect(l.ui.tab == .shop)
        l.press(.backTab)
        #expect(l.ui.tab == .session)
        l.press(.backTab)
        #expect(l.ui.tab == .purchases)
        l.press(.backTab)
        #expect(l.ui.tab == .live)
        l.press(.backTab)
        #expect(l.ui.tab == .checks)
        l.press(.backTab)
        #expect(l.ui.tab == .requests)
        l.press(.char("4"))
        #expect(l.ui.tab == .checks)
        l.press(.char("1"))
        #expect(l.ui.tab == .shop)
    }

    @Test func movingInTheShop() {
        var l = Loop()
        l.press(.char("j"), .down, .down)
        #expect(l.app.packs.shown.selectedIndex == 3)
        l.press(.char("k"), .up)
        #expect(l.app.packs.shown.selectedIndex == 1)
        l.press(.char("G"))
        #expect(l.app.packs.shown.selectedIndex == 5)
        l.press(.char("g"))
        #expect(l.app.packs.shown.selectedIndex == 0)
        l.ui.height = 10  // lists show 5 rows (header, tabs, titles, message and hints take 5)
        l.press(.pageDown)
        #expect(l.app.packs.shown.selectedIndex == 5)
        l.press(.end, .home)
        #expect(l.app.packs.shown.selectedIndex == 0)
        l.press(.char("o"))
        #expect(l.app.packs.sort == .name)
    }

    @Test func slashFiltersEscClears() {
        var l = Loop()
        l.press(.char("/"))
        #expect(l.ui.editingFilter)
        l.type("cafe q")  // q is text here, not quit
        #expect(l.app.packs.filter == "cafe q" && l.commands.isEmpty)
        l.press(.backspace, .backspace)
        #expect(l.app.packs.filter == "cafe" && l.app.packs.shown.rows.map(\.name) == ["Café de Flore Mornings"])
        l.press(.enter)
        #expect(!l.ui.editingFilter && l.app.packs.filter == "cafe")
        l.press(.escape)
        #expect(l.app.packs.filter.isEmpty && l.app.packs.shown.rows.count == 6)
    }

    @Test func historyPagingAndComments() {
        var l = Loop()
        l.press(.char("2"), .enter)
        #expect(l.app.history.expanded == [.id("h-230")])
        l.press(.enter)
        #expect(l.app.history.expanded.isEmpty)
        l.press(.char("]"))
        #expect(l.app.history.page == 2 && l.effects.contains { if case .request(_, .history(_, 2, _)) = $0 { return true } else { return false } })
        l.press(.char("["))
        #expect(l.app.history.page == 1)
        l.press(.pageDown)
        #expect(l.app.history.cursor == l.ui.pageSize)
        l.press(.pageUp, .char("j"), .char("j"))
        #expect(l.app.history.page == 1 && l.app.history.cursor == 2)
        // n and p no longer page: n is the next match (nothing found yet: it says so).
        l.press(.char("n"))
        #expect(l.app.history.cursor == 2 && l.app.notice?.text == "Nothing to find yet: / and some text first")
    }

    @Test func goToAndFindPromptsTakeTextAndEscCancels() {
        var l = Loop()
        l.press(.char("2"), .char(":"))
        #expect(l.app.mode == .prompt && l.ui.prompt?.kind == .goTo)
        l.type("q1")  // q is text here, not quit
        l.press(.backspace)
        #expect(l.ui.prompt?.text == "q" && l.commands.isEmpty)
        l.press(.escape)
        #expect(l.ui.prompt == nil && l.app.mode == .browse)
        l.press(.char("/"))
        #expect(l.ui.prompt?.kind == .find)
        l.type("rain")
        l.press(.enter)
        #expect(l.ui.prompt == nil && l.app.history.find?.query == "rain" && l.app.history.find?.scan != nil)
        #expect(l.effects.contains { if case .request(_, .history(_, 1, 200)) = $0 { return true } else { return false } })
    }

    @Test func helpOpensAndEscCloses() {
        var l = Loop()
        l.press(.char("?"))
        #expect(l.ui.showHelp)
        l.press(.char("j"))
        #expect(l.app.packs.shown.selectedIndex == 0)  // the overlay takes the keys
        l.press(.escape)
        #expect(!l.ui.showHelp)
    }

    @Test func spendDialogTypedAndConfirmed() {
        var l = Loop()
        l.press(.char("s"))
        l.type("5x0")
        l.press(.backspace, .backspace)
        l.type("0")
        l.press(.tab)
        l.type("great q")
        guard case let .editing(form, _) = l.app.write.action?.phase, form.isSpend, form[0] == "50", form[1] == "great q" else { Issue.record("\(String(describing: l.app.write.action))"); return }
        l.press(.enter)
        guard case .confirming = l.app.write.action?.phase else { Issue.record("not confirming"); return }
        l.press(.enter)
        guard case .pending? = l.app.write.action?.phase, let token = l.app.token(for: .write) else { Issue.record("not sent"); return }
        #expect(l.effects.last == .request(token, .write(.spend(product: "com.reiterate.pack.rain", amount: 50, comment: "great q"), user: "qa-alice")))
        l.press(.enter, .char("y"))
        #expect(l.effects.filter { if case .request(_, .write(.spend, _)) = $0 { return true } else { return false } }.count == 1)
        #expect(l.commands.isEmpty)
    }

    @Test func escCancelsDialogsAndBuyUsesTheTransactionID() {
        var l = Loop()
        l.press(.char("b"))
        guard case let .editing(form, _) = l.app.write.action?.phase, form == .purchase(identifier: "com.reiterate.cheer.200", transactionID: "77") else { Issue.record("\(String(describing: l.app.write.action))"); return }
        l.press(.escape)
        #expect(l.app.write.action == nil)
    }

    @Test func enterOpensTheRequestDetailWhichScrollsEscReturns() {
        var l = Loop()
        l.send(.resize(width: 60, height: 16))
        l.press(.char("3"), .char("j"), .char("j"), .enter)  // an answer with a body: a detail longer than the screen
        #expect(l.ui.requestDetailFull)
        let selected = l.app.requests.selectedIndex
        l.press(.char("j"), .char("j"), .pageDown)
        // As far as the detail goes: no further than its last screenful (`RequestDetail.maxScroll`).
        let end = RequestDetail.maxScroll(l.app)
        #expect(end > 2 && l.ui.detailScroll == min(2 + l.ui.pageSize, end) && l.app.requests.selectedIndex == selected)
        l.press(.char("g"))
        #expect(l.ui.detailScroll == 0)
        l.press(.escape)
        #expect(!l.ui.requestDetailFull)
        l.press(.char("j"))
        #expect(l.app.requests.selectedIndex == selected + 1)  // beside the list, j moves the selection again
    }

    @Test func aPendingWriteCanBePutAwayAndTheAppStaysUsable() {
        var l = Loop()
        l.press(.char("s"))
        l.type("5")
        l.press(.enter, .enter)  // confirm → pending
        guard case .pending = l.app.write.action?.phase else { Issue.record("\(String(describing: l.app.write.action))"); return }
        l.press(.char("2"))
        #expect(l.ui.tab == .shop)  // the dialog still takes the keys…
        l.press(.escape)
        #expect(l.app.write.action != nil && !l.app.dialogShown && l.app.notice?.text == "Still sending; the answer will show here.")
        l.press(.char("2"))
        #expect(l.ui.tab == .history)  // …until it is put away
        // While it is out, spend and buy are disabled: the keys do nothing and leave the hint bar.
        l.press(.char("1"), .char("s"), .char("b"))
        #expect(l.app.write.action != nil && !l.app.dialogShown && l.ui.tab == .shop)
        #expect(!l.keymap.hints(for: l.app).contains { $0.hasSuffix(" spend") || $0.hasSuffix(" buy") })
        guard case .pending? = l.app.write.action?.phase, let token = l.app.token(for: .write) else { Issue.record("not pending"); return }
        l.send(.replied(token, .success(.balance(CheerBalance(balance: 1245))), at: now))
        #expect(l.app.write.action == nil && l.app.notice?.text == "Spent 5 cheer on Rain on a Tin Roof. Balance 1,245 cheer. Checking…")
    }

    @Test func quitAndCopy() {
        var l = Loop()
        l.press(.char("3"), .char("y"))
        #expect(l.commands.isEmpty)  // the newest exchange failed: no request id to copy
        l.press(.char("j"), .char("y"))
        #expect(l.commands == [.copy("rq-aaaa3")] && l.app.notice?.text == "copied request id rq-aaaa3 to the clipboard (OSC 52)")
        l.press(.char("q"))
        #expect(l.commands.last == .quit(status: 0))
        var c = Loop()
        c.press(.char("s"), .ctrl("c"))  // Ctrl-C quits even from a dialog
        #expect(c.commands == [.quit(status: 0)])
    }

    @Test func statusHintsAndHelpComeFromTheKeymap() {
        var shop = loadedState()
        var history = loadedState()
        history.screen.tab = .history
        let keymap = Keymap.standard
        #expect(keymap.hints(for: shop).contains("/ filter") && !keymap.hints(for: history).contains("/ filter"))
        #expect(keymap.hints(for: history).contains("]/[ page") && keymap.hints(for: history).contains("/ find"))
        shop.screen.width = 120
        shop.screen.height = 40
        let bar = Renderer.render(Frame(app: shop, now: now, timeZone: utc)).row(39)
        for hint in keymap.hints(for: shop) { #expect(bar.contains(hint), "\(hint)") }
        shop.screen.showHelp = true
        let help = Renderer.render(Frame(app: shop, now: now, timeZone: utc)).text
        for binding in keymap.helpRows(for: shop) { #expect(help.contains(binding.help), "\(binding.help)") }
    }

    @Test func readOnlyRemovesWritesFromEveryPlace() {
        var l = Loop(loadedState(readOnly: true))
        #expect(!l.keymap.hints(for: l.app).contains { $0.hasSuffix(" spend") || $0.hasSuffix(" buy") })
        #expect(!l.keymap.helpRows(for: l.app).contains { $0.writes })
        l.app.screen.showHelp = true
        l.app.screen.width = 120
        l.app.screen.height = 40
        let help = Renderer.render(Frame(app: l.app, now: now, timeZone: utc)).text
        #expect(!help.contains("spend cheer") && !help.contains("buy cheer"))
        l.app.screen.showHelp = false
        l.press(.char("s"), .char("b"))
        #expect(l.app.write.action == nil && l.effects.isEmpty)
    }

    @Test func reboundKeysDriveDispatchHintsAndHelp() throws {
        let keymap = try Keymap.standard.rebound(with: [(action: "quit", keys: ["x", "ctrl-q"], line: nil), (action: "refresh", keys: ["f5"], line: nil)])
        var l = Loop(keymap: keymap)
        l.press(.char("q"))
        #expect(l.commands.isEmpty)  // q no longer quits
        l.press(.function(5))
        #expect(l.effects.contains { if case .request(_, .balance) = $0 { return true } else { return false } })
        #expect(keymap.hints(for: l.app).first == "x quit" && keymap.hints(for: l.app).contains("F5 refresh"))
        l.app.screen.showHelp = true
        l.app.screen.width = 120
        l.app.screen.height = 40
        let help = Renderer.render(Frame(app: l.app, keymap: keymap, now: now, timeZone: utc)).text
        #expect(help.contains("x Ctrl-Q") && !help.contains("q               quit"))
        l.app.screen.showHelp = false
        l.press(.char("x"))
        #expect(l.commands == [.quit(status: 0)])
    }

    @Test func rebindingRefusesUnknownNamesAndClashes() {
        #expect(throws: KeymapError(action: "launch", line: 3, message: "unknown action; actions: " + Action.allCases.map(\.rawValue).joined(separator: ", "))) {
            try Keymap.standard.rebound(with: [(action: "launch", keys: ["x"], line: 3)])
        }
        do {
            _ = try Keymap.standard.rebound(with: [(action: "quit", keys: ["hyper-q"], line: 4)])
            Issue.record("accepted an unknown key name")
        } catch {
            #expect(error.line == 4 && error.message.hasPrefix("unknown key name 'hyper-q'"))
        }
        do {
            _ = try Keymap.standard.rebound(with: [(action: "refresh", keys: ["j"], line: 7)])
            Issue.record("accepted a clash")
        } catch {
            #expect(error.line == 7 && error.message == "'j' would do both down and refresh (in browse mode)")
        }
        // One key in two modes is fine: Tab goes to the next tab in the lists and keeps a filter being typed.
        #expect((try? Keymap.standard.rebound(with: [(action: "keep_filter", keys: ["enter", "tab"], line: nil)])) != nil)
    }

    @Test func aReboundCharacterStaysTypeableInTheFilterAndTheForm() throws {
        let keymap = try Keymap.standard.rebound(with: [(action: "cancel", keys: ["n", "esc"], line: 2), (action: "down", keys: ["j", "down"], line: 3)])
        var l = Loop(keymap: keymap)
        l.press(.char("/"))
        l.type("jn")
        #expect(l.app.packs.filter == "jn")  // j is text in the filter
        l.press(.escape, .char("s"))
        l.type("5")
        l.press(.tab)
        l.type("nice")
        guard case let .editing(form, _) = l.app.write.action?.phase, form.isSpend, form[0] == "5", form[1] == "nice" else { Issue.record("\(String(describing: l.app.write.action))"); return }
        l.press(.enter, .char("n"))  // in the confirmation, n cancels
        #expect(l.app.write.action == nil)
    }

    @Test func keysATerminalCannotSendAreRefusedWithAdvice() {
        do {
            _ = try Keymap.standard.rebound(with: [(action: "refresh", keys: ["ctrl-i"], line: 5)])
            Issue.record("accepted ctrl-i")
        } catch {
            #expect(error.message == "'ctrl-i' reaches a program as tab; name it tab")
        }
        #expect(KeyPress(name: "ctrl-q") == .ctrl("q") && KeyPress(name: "F5") == .function(5) && KeyPress(name: "space") == .char(" "))
    }

    @Test func qClosesTheHelpAndTheOutcome() {
        var l = Loop()
        l.press(.char("?"))
        #expect(l.ui.showHelp)
        l.press(.char("q"))
        #expect(!l.ui.showHelp && l.commands.isEmpty)
        l.press(.char("s"))
        l.type("5")
        l.press(.enter, .enter)
        guard case .pending? = l.app.write.action?.phase, let token = l.app.token(for: .write) else { Issue.record("not sent"); return }
        l.send(.replied(token, .success(.balance(CheerBalance(balance: 1245))), at: now))
        l.press(.char("q"))
        #expect(l.app.write.action == nil && l.commands.isEmpty)
    }

    /// The update stops the full-size detail at its last screenful (`RequestDetail.maxScroll`, the
    /// renderer's own clamp): scrolled on past the end, one `k` moves it up at once. No frame is drawn
    /// in between: nothing the renderer measures comes back into the update.
    @Test func afterTheLastLineOfTheDetailUpScrollsAtOnce() throws {
        var l = Loop()
        l.send(.resize(width: 60, height: 16))
        l.press(.char("3"), .char("j"), .enter, .char("G"))
        let end = l.ui.detailScroll
        #expect(end > 1 && end == RequestDetail.maxScroll(l.app))
        for _ in 0..<50 { l.press(.char("j")) }
        l.press(.pageDown)
        #expect(l.ui.detailScroll == end)
        l.press(.char("k"))
        #expect(l.ui.detailScroll == end - 1)
        // What the renderer shows is where the model is: the footer counts from the line after the offset.
        let footer = try #require(Self.footer(Renderer.render(frame(l.app, width: 60, height: 16)).text))
        #expect(footer.first == end && footer.last == footer.total - 1)
        l.press(.char("G"))
        let last = try #require(Self.footer(Renderer.render(frame(l.app, width: 60, height: 16)).text))
        #expect(l.ui.detailScroll == end && last.first == end + 1 && last.last == last.total)
    }

    /// The full-size detail's footer, ` 12–21 of 40 `.
    static func footer(_ screen: String) -> (first: Int, last: Int, total: Int)? {
        guard let match = screen.firstMatch(of: /(\d+)–(\d+) of (\d+)/), let first = Int(match.1), let last = Int(match.2), let total = Int(match.3) else { return nil }
        return (first, last, total)
    }
}

@Suite struct AlertTests {
    /// A finding told by OSC 9 carries its line made safe: no escape, BEL or bidi control of the
    /// server's ends the sequence early or reaches the terminal raw.
    @Test func anOSC9NotificationCannotCarryTheServersEscapes() {
        let hostile = "reiterate-shop: [entry-changed] expected 7 cheer on \u{1B}]52;c;aGk=\u{07}Rain\u{202E} \u{9B}31m, got"
        let bytes = CursesTerminal.alertBytes(.osc9, hostile)
        #expect(bytes.hasPrefix("\u{1B}]9;") && bytes.hasSuffix("\u{07}"))
        let inner = bytes.dropFirst(3).dropLast()
        #expect(!inner.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) || $0.value == 0x202E })
        #expect(inner.contains("[entry-changed]") && inner.contains("Rain"))
        #expect(CursesTerminal.alertBytes(.bell, hostile) == "\u{07}")
    }
}
