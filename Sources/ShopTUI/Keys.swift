import ShopViewModels

/// A key press, as the backend decodes it.
public enum Key: Sendable, Equatable, Hashable {
    case char(Character)
    case up, down, left, right, home, end, pageUp, pageDown
    case enter, escape, tab, backTab, backspace, delete
    case ctrl(Character)
    case resize
}

public enum Tab: Int, Sendable, Equatable, CaseIterable {
    case shop = 1, history, requests

    public var title: String {
        switch self {
        case .shop: return "Shop"
        case .history: return "History"
        case .requests: return "Requests"
        }
    }
}

/// One key binding: the keys, what it does, where it applies. The same list draws the status-bar hints
/// and the `?` overlay (Bubble Tea's key.Binding + help).
public struct Binding: Sendable, Equatable {
    public var keys: [String]
    public var help: String
    /// Where it applies; empty means everywhere.
    public var tabs: [Tab]
    /// Shown in the status bar (the overlay shows all).
    public var hint: String?

    public init(_ keys: [String], _ help: String, tabs: [Tab] = [], hint: String? = nil) {
        self.keys = keys
        self.help = help
        self.tabs = tabs
        self.hint = hint
    }
}

public enum Keymap {
    public static let bindings: [Binding] = [
        Binding(["q", "Ctrl-C"], "quit", hint: "q quit"),
        Binding(["?"], "help", hint: "? help"),
        Binding(["Esc"], "close overlay, dialog or filter"),
        Binding(["Tab", "Shift-Tab"], "next / previous tab"),
        Binding(["1", "2", "3"], "Shop / History / Requests tab", hint: "1-3 tabs"),
        Binding(["j", "k", "↓", "↑"], "move down / up", hint: "j/k move"),
        Binding(["g", "G", "Home", "End"], "first / last row"),
        Binding(["PgDn", "PgUp"], "a screenful down / up", tabs: [.shop, .requests]),
        Binding(["n", "p", "PgDn", "PgUp"], "next / previous page", tabs: [.history], hint: "n/p page"),
        Binding(["Enter"], "show / hide the comments", tabs: [.history], hint: "Enter comments"),
        Binding(["Enter"], "details full size (j/k scroll) or beside the list", tabs: [.requests]),
        Binding(["/"], "filter the packs", tabs: [.shop], hint: "/ filter"),
        Binding(["o"], "sort: shop order, name, price, cheer", tabs: [.shop], hint: "o sort"),
        Binding(["r"], "refresh", hint: "r refresh"),
        Binding(["s"], "spend cheer on the selected pack", tabs: [.shop], hint: "s spend"),
        Binding(["b"], "buy cheer", hint: "b buy"),
        Binding(["y"], "copy the request id (OSC 52)", tabs: [.requests], hint: "y copy id"),
    ]

    /// Hints for the status bar on `tab`: the tab's own keys first, then the global ones.
    public static func hints(for tab: Tab) -> [String] {
        let applicable = bindings.filter { $0.tabs.isEmpty || $0.tabs.contains(tab) }
        let first = applicable.filter { $0.hint != nil && ["q quit", "? help"].contains($0.hint ?? "") }
        let own = applicable.filter { !$0.tabs.isEmpty }
        let rest = applicable.filter { $0.tabs.isEmpty && !first.contains($0) }
        return (first + own + rest).compactMap(\.hint)
    }
}

/// What only the front end knows: the tab, the overlay, the filter being typed, the dialog's field.
public struct UIState: Sendable, Equatable {
    public var tab: Tab = .shop
    public var showHelp = false
    public var editingFilter = false
    /// The dialog field that has the cursor (0 or 1).
    public var dialogField = 0
    /// The request detail fills the body (Enter on the Requests tab).
    public var requestDetailFull = false
    /// First line of the full-size request detail shown (j/k/PgDn/PgUp scroll it).
    public var detailScroll = 0
    /// Rows a list shows (set from the layout; PgDn/PgUp move by it).
    public var pageSize = 10
    public var quit = false

    public init() {}
}

/// Side effects that belong to the terminal, not the view models.
public enum UICommand: Sendable, Equatable {
    case quit
    /// Put this text on the clipboard (OSC 52).
    case copy(String)
}

/// Keys → intents, through the front end's own state: pure, so key handling is a unit test.
public enum KeyHandler {
    public static func handle(_ key: Key, ui: inout UIState, app: AppState, transactionID: UInt64) -> (intents: [Intent], commands: [UICommand]) {
        if key == .ctrl("c") {
            ui.quit = true
            return ([], [.quit])
        }
        if let action = app.action, action.isShown { return dialog(key, action, ui: &ui) }
        if ui.showHelp {
            if [.escape, .char("?"), .char("q")].contains(key) { ui.showHelp = false }
            return ([], [])
        }
        if ui.editingFilter { return filter(key, ui: &ui, app: app) }

        switch key {
        case .char("q"):
            ui.quit = true
            return ([], [.quit])
        case .char("?"): ui.showHelp = true
        case .escape:
            if ui.tab == .requests, ui.requestDetailFull {
                ui.requestDetailFull = false
                return ([], [])
            }
            if !app.packs.filter.isEmpty, ui.tab == .shop { return ([.setPackFilter("")], []) }
            if app.notice != nil { return ([.dismissNotice], []) }
        case .tab: ui.tab = Tab(rawValue: ui.tab.rawValue % 3 + 1) ?? .shop
        case .backTab: ui.tab = Tab(rawValue: (ui.tab.rawValue + 1) % 3 + 1) ?? .shop
        case .char("1"): ui.tab = .shop
        case .char("2"): ui.tab = .history
        case .char("3"): ui.tab = .requests
        case .char("r"): return ([.refresh], [])
        case .char("b"): return ([.beginPurchase(transactionID: transactionID)], [])
        default: return tabKeys(key, ui: &ui, app: app)
        }
        return ([], [])
    }

    static func tabKeys(_ key: Key, ui: inout UIState, app: AppState) -> ([Intent], [UICommand]) {
        let move: Int?
        switch key {
        case .char("j"), .down: move = 1
        case .char("k"), .up: move = -1
        case .pageDown: move = ui.tab == .history ? nil : ui.pageSize
        case .pageUp: move = ui.tab == .history ? nil : -ui.pageSize
        default: move = nil
        }
        switch ui.tab {
        case .shop:
            if let move { return ([.movePackSelection(move)], []) }
            switch key {
            case .char("g"), .home: return ([.selectPack(index: 0)], [])
            case .char("G"), .end: return ([.selectPack(index: Int.max / 2)], [])
            case .char("/"): ui.editingFilter = true
            case .char("o"): return ([.setPackSort(app.packs.sort.next)], [])
            case .char("s"): return ([.beginSpend], [])
            default: break
            }
        case .history:
            if let move { return ([.moveHistorySelection(move)], []) }
            switch key {
            case .char("g"), .home: return ([.selectHistoryRow(index: 0)], [])
            case .char("G"), .end: return ([.selectHistoryRow(index: Int.max / 2)], [])
            case .char("n"), .pageDown: return ([.historyNextPage], [])
            case .char("p"), .pageUp: return ([.historyPreviousPage], [])
            case .enter:
                if case .failed = app.history.current { return ([.retryHistoryPage], []) }
                return ([.toggleComments], [])
            default: break
            }
        case .requests:
            if ui.requestDetailFull {
                // Full size: the movement keys scroll the detail.
                if let move {
                    ui.detailScroll = max(0, ui.detailScroll + move)
                    return ([], [])
                }
                if key == .char("g") || key == .home { ui.detailScroll = 0; return ([], []) }
                if key == .char("G") || key == .end { ui.detailScroll = Int.max / 2; return ([], []) }
            }
            if let move { return ([.moveRequestSelection(move)], []) }
            switch key {
            case .char("g"), .home: return ([.selectRequest(index: 0)], [])
            case .char("G"), .end: return ([.selectRequest(index: Int.max / 2)], [])
            case .char("y"):
                if let id = app.requests.selected?.requestID { return ([], [.copy(id)]) }
            case .enter:
                ui.requestDetailFull.toggle()
                ui.detailScroll = 0
            default: break
            }
        }
        return ([], [])
    }

    static func filter(_ key: Key, ui: inout UIState, app: AppState) -> ([Intent], [UICommand]) {
        var text = app.packs.filter
        switch key {
        case .enter: ui.editingFilter = false
        case .escape:
            ui.editingFilter = false
            return ([.setPackFilter("")], [])
        case .backspace, .delete:
            if !text.isEmpty { text.removeLast() }
            return ([.setPackFilter(text)], [])
        case .down: return ([.movePackSelection(1)], [])
        case .up: return ([.movePackSelection(-1)], [])
        case let .char(c) where !c.isNewline:
            text.append(c)
            return ([.setPackFilter(text)], [])
        default: break
        }
        return ([], [])
    }

    static func dialog(_ key: Key, _ action: ActionState, ui: inout UIState) -> ([Intent], [UICommand]) {
        switch action.phase {
        case let .editing(form, _):
            switch key {
            case .escape:
                ui.dialogField = 0
                return ([.cancelAction], [])
            case .enter:
                return ([.submitAction], [])
            case .tab, .down, .backTab, .up:
                ui.dialogField = 1 - ui.dialogField
                return ([], [])
            case .backspace, .delete:
                return ([edit(form, field: ui.dialogField) { if !$0.isEmpty { $0.removeLast() } }], [])
            case let .char(c) where !c.isNewline:
                return ([edit(form, field: ui.dialogField) { $0.append(c) }], [])
            default:
                return ([], [])
            }
        case .confirming:
            if key == .enter || key == .char("y") { return ([.submitAction], []) }
            if key == .escape || key == .char("n") {
                ui.dialogField = 0
                return ([.cancelAction], [])
            }
        case .pending:
            // The request is out: Esc puts the dialog away (the answer comes as a notice).
            if key == .escape { return ([.backgroundAction], []) }
        case .succeeded, .failed:
            if [.enter, .escape, .char("q")].contains(key) {
                ui.dialogField = 0
                return ([.cancelAction], [])
            }
        }
        return ([], [])
    }

    static func edit(_ form: ActionState.Form, field: Int, _ change: (inout String) -> Void) -> Intent {
        switch form {
        case let .spend(_, _, amount, comment):
            var a = amount, c = comment
            if field == 0 { change(&a) } else { change(&c) }
            return .editSpend(amount: a, comment: c)
        case let .purchase(identifier, transaction):
            var i = identifier, t = transaction
            if field == 0 { change(&i) } else { change(&t) }
            return .editPurchase(identifier: i, transactionID: t)
        }
    }
}
