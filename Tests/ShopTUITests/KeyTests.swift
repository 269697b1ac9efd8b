import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// Keys through the whole update loop: KeyHandler → intents → the view models' update function.
struct Loop {
    var app: AppState
    var ui = UIState()
    var commands: [UICommand] = []
    var effects: [Effect] = []

    init(_ app: AppState = loadedState()) { self.app = app }

    mutating func press(_ keys: Key...) {
        for key in keys {
            let (intents, cmds) = KeyHandler.handle(key, ui: &ui, app: app, transactionID: 77)
            commands += cmds
            for intent in intents { effects += ShopUpdate.update(&app, .intent(intent), now: now) }
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
        #expect(l.ui.tab == .shop)
        l.press(.backTab)
        #expect(l.ui.tab == .requests)
        l.press(.char("1"))
        #expect(l.ui.tab == .shop)
    }

    @Test func movingInTheShop() {
        var l = Loop()
        l.press(.char("j"), .down, .down)
        #expect(l.app.packs.selectedIndex == 3)
        l.press(.char("k"), .up)
        #expect(l.app.packs.selectedIndex == 1)
        l.press(.char("G"))
        #expect(l.app.packs.selectedIndex == 5)
        l.press(.char("g"))
        #expect(l.app.packs.selectedIndex == 0)
        l.ui.pageSize = 4
        l.press(.pageDown)
        #expect(l.app.packs.selectedIndex == 4)
        l.press(.end, .home)
        #expect(l.app.packs.selectedIndex == 0)
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
        #expect(l.app.packs.filter == "cafe" && l.app.packs.visible.map(\.name) == ["Café de Flore Mornings"])
        l.press(.enter)
        #expect(!l.ui.editingFilter && l.app.packs.filter == "cafe")
        l.press(.escape)
        #expect(l.app.packs.filter.isEmpty && l.app.packs.visible.count == 6)
    }

    @Test func historyPagingAndComments() {
        var l = Loop()
        l.press(.char("2"), .enter)
        #expect(l.app.history.expanded == ["h-230"])
        l.press(.enter)
        #expect(l.app.history.expanded.isEmpty)
        l.press(.char("n"))
        #expect(l.app.history.page == 2 && l.effects.contains { if case .fetchHistory(_, _, _, 2, _) = $0 { return true } else { return false } })
        l.press(.char("p"))
        #expect(l.app.history.page == 1)
        l.press(.pageDown)
        #expect(l.app.history.page == 2)
        l.press(.pageUp, .char("j"), .char("j"))
        #expect(l.app.history.page == 1 && l.app.history.selectedIndex == 2)
    }

    @Test func helpOpensAndEscCloses() {
        var l = Loop()
        l.press(.char("?"))
        #expect(l.ui.showHelp)
        l.press(.char("j"))
        #expect(l.app.packs.selectedIndex == 0)  // the overlay takes the keys
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
        guard case .editing(.spend(_, _, "50", "great q"), _) = l.app.action?.phase else { Issue.record("\(String(describing: l.app.action))"); return }
        l.press(.enter)
        guard case .confirming = l.app.action?.phase else { Issue.record("not confirming"); return }
        l.press(.enter)
        #expect(l.effects.last == .spend(generation: 1, amount: 50, product: "com.reiterate.pack.rain", comment: "great q", user: "qa-alice",
                                         kind: .spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 50, comment: "great q")))
        l.press(.enter, .char("y"))
        #expect(l.effects.filter { if case .spend = $0 { return true } else { return false } }.count == 1)
        #expect(l.commands.isEmpty)
    }

    @Test func escCancelsDialogsAndBuyUsesTheTransactionID() {
        var l = Loop()
        l.press(.char("b"))
        guard case .editing(.purchase("com.reiterate.cheer.200", "77"), _) = l.app.action?.phase else { Issue.record("\(String(describing: l.app.action))"); return }
        l.press(.escape)
        #expect(l.app.action == nil)
    }

    @Test func enterOpensTheRequestDetailWhichScrollsEscReturns() {
        var l = Loop()
        l.press(.char("3"), .enter)
        #expect(l.ui.requestDetailFull)
        let selected = l.app.requests.selectedIndex
        l.press(.char("j"), .char("j"), .pageDown)
        #expect(l.ui.detailScroll == 2 + l.ui.pageSize && l.app.requests.selectedIndex == selected)
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
        guard case .pending = l.app.action?.phase else { Issue.record("\(String(describing: l.app.action))"); return }
        l.press(.char("2"))
        #expect(l.ui.tab == .shop)  // the dialog still takes the keys…
        l.press(.escape)
        #expect(l.app.action?.backgrounded == true && l.app.notice?.text == "Still sending; the answer will show here.")
        l.press(.char("2"))
        #expect(l.ui.tab == .history)  // …until it is put away
        l.press(.char("1"), .char("s"))
        #expect(l.app.notice?.text == "A spend or purchase is still on its way; wait for its answer.")
        let kind = ActionKind.spend(product: "com.reiterate.pack.rain", productName: "Rain on a Tin Roof", amount: 5, comment: nil)
        _ = ShopUpdate.update(&l.app, .actionFinished(generation: 1, kind, .success(CheerBalance(balance: 1245)), at: now), now: now)
        #expect(l.app.action == nil && l.app.notice?.text == "Spent 5 cheer on Rain on a Tin Roof. Balance 1,245 cheer.")
    }

    @Test func quitAndCopy() {
        var l = Loop()
        l.press(.char("3"), .char("y"))
        #expect(l.commands.isEmpty)  // the newest exchange failed: no request id to copy
        l.press(.char("j"), .char("y"))
        #expect(l.commands == [.copy("rq-aaaa3")])
        l.press(.char("q"))
        #expect(l.commands.last == .quit && l.ui.quit)
        var c = Loop()
        c.press(.char("s"), .ctrl("c"))  // Ctrl-C quits even from a dialog
        #expect(c.commands == [.quit])
    }

    @Test func statusHintsComeFromTheKeymap() {
        #expect(Keymap.hints(for: .shop).contains("/ filter") && !Keymap.hints(for: .history).contains("/ filter"))
        #expect(Keymap.hints(for: .history).contains("n/p page"))
        let grid = Renderer.render(frame(loadedState(), width: 120, height: 40))
        let bar = grid.row(39)
        for hint in Keymap.hints(for: .shop) { #expect(bar.contains(hint), "\(hint)") }
        var ui = UIState()
        ui.showHelp = true
        let help = Renderer.render(frame(loadedState(), ui, width: 120, height: 40)).text
        for binding in Keymap.bindings { #expect(help.contains(binding.help), "\(binding.help)") }
    }
}
