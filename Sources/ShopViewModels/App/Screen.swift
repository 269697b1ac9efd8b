import Foundation

public enum Tab: Int, Sendable, Equatable, Hashable, CaseIterable {
    case shop = 1, history, requests, checks, live, purchases, session

    public var title: String {
        switch self {
        case .shop: return "Shop"
        case .history: return "History"
        case .requests: return "Requests"
        case .checks: return "Checks"
        case .live: return "Live"
        case .purchases: return "Purchases"
        case .session: return "Session"
        }
    }
}

/// The contexts key bindings apply in.
public enum Mode: String, Sendable, Hashable, CaseIterable {
    /// Lists and tabs.
    case browse
    /// Typing a pack filter.
    case filter
    /// The `?` overlay.
    case help
    /// The diff view (`D`).
    case diff
    /// Typing into the go-to (`:`) or find (`/`) prompt.
    case prompt
    /// The spend or buy form.
    case form
    /// "Spend 50 cheer …?"
    case confirm
    /// A spend or purchase is out and its dialog is shown.
    case sending
    /// The dialog shows how a spend or purchase ended.
    case outcome
}

/// What the screen shows besides the data: the tab, the overlay, the field being typed, scroll
/// positions, the size. Plain values — the front end draws it, the update function changes it.
public struct ScreenState: Equatable, Sendable {
    /// What has the keys: one value, so the help overlay, the pack filter, a prompt, the diff and the
    /// write's dialog can never be open at once (the mode is read from it alone).
    public enum Focus: Equatable, Sendable {
        case browse, help, filter
        /// The spend or buy dialog (its phase is the write's, `state.write`).
        case dialog
        case prompt(PromptState)
        /// The diff view (`D`) holds its comparison: no diff is kept that is not shown.
        case diff(DiffViewState)
    }

    public var tab: Tab = .shop
    public var focus: Focus = .browse
    /// The request detail fills the body (toggle on the Requests tab).
    public var requestDetailFull = false
    /// First line of the full-size request detail shown.
    public var detailScroll = 0
    /// The help overlay is open (setting it false closes only the overlay).
    public var showHelp: Bool {
        get { focus == .help }
        set { if newValue { focus = .help } else if focus == .help { focus = .browse } }
    }

    /// The pack filter is being typed.
    public var editingFilter: Bool {
        get { focus == .filter }
        set { if newValue { focus = .filter } else if focus == .filter { focus = .browse } }
    }

    /// The go-to, find or user prompt being typed.
    public var prompt: PromptState? {
        get { if case let .prompt(p) = focus { return p } else { return nil } }
        set {
            if let newValue {
                focus = .prompt(newValue)
            } else if case .prompt = focus {
                focus = .browse
            }
        }
    }
    /// The zone dates are shown in, and a go-to date means.
    public var timeZone: TimeZone = .current
    public var width = 80
    public var height = 24
    /// Animation step of the spinner (moves only while something loads; see `.tick`).
    public var tick = 0

    public init() {}

    /// How far PgDn/PgUp move: the rows a list shows.
    public var pageSize: Int { Viewport.listRows(height: height) }
}

/// Which rows of a list are on screen. Computed here, once, for the update (how far PgDn moves, which
/// history pages to load) and for the renderer (which rows to draw) alike.
public struct Viewport: Sendable, Equatable {
    /// The first row shown.
    public var offset: Int
    /// How many rows the list area holds.
    public var rows: Int

    /// The screen's lines above the body (header, tabs) and the body's height: the screen less those
    /// and the message and hint lines under it.
    public static let bodyTop = 2
    public static func bodyHeight(screenHeight: Int) -> Int { screenHeight - 4 }
    /// Rows a list shows at this height: the body less its column titles.
    public static func listRows(height: Int) -> Int { max(1, bodyHeight(screenHeight: height) - 1) }

    /// Rows to show above the selected one when `below` rows (the selected one first) remain to the
    /// end: half the screen, or more at the end so that the last screenful fills.
    public static func rowsAbove(rows: Int, below: Int) -> Int { max(rows / 2, rows - min(below, rows)) }

    /// The rows of a list of `count` that keep `selected` near the middle (at the ends, the first or
    /// last screenful shows).
    public static func centred(selected: Int, count: Int, rows: Int) -> Viewport {
        let selected = min(max(0, selected), max(0, count - 1))
        return Viewport(offset: selected - min(selected, rowsAbove(rows: rows, below: count - selected)), rows: rows)
    }

    /// The rows shown, as indexes into a list of `count`.
    public func range(count: Int) -> Range<Int> { min(offset, count)..<min(count, offset + rows) }
}

extension ShopUpdate {
    static func openTab(_ tab: Tab, _ state: inout AppState) {
        guard tab != state.screen.tab else { return }
        state.screen.tab = tab
        state.steps.add("opened the \(tab.title) tab")
    }

    /// Quitting cancels every request still out (one operation on the table), then quits.
    static func quit(status: Int32, _ state: inout AppState) -> [Effect] {
        cancelRequests(&state) { _ in true } + [.quit(status: status)]
    }

    /// Tabs, overlay, resize, ticks, signals: the screen's part of the update.
    static func screen(_ message: Message, _ state: inout AppState) -> [Effect]? {
        switch message {
        case let .resize(width, height):
            state.screen.width = max(1, width)
            state.screen.height = max(1, height)
            return []
        case let .tick(n):
            // The spinner turns while something loads (a front end redraws ages on its own clock).
            if state.isBusy { state.screen.tick = n }
            return []
        case let .signal(number):
            switch number {
            case SIGINT: return quit(status: 0, &state)
            case SIGTERM, SIGHUP: return quit(status: 128 + number, &state)
            default: return []
            }
        case let .action(action):
            switch action {
            case .quit, .interrupt: return quit(status: 0, &state)
            case .help:
                state.screen.showHelp.toggle()
                return []
            case .nextTab, .previousTab:
                let step = action == .nextTab ? 0 : Tab.allCases.count - 2
                let tab = Tab(rawValue: (state.screen.tab.rawValue + step) % Tab.allCases.count + 1) ?? .shop
                if tab == .purchases { return openPurchases(&state) }
                if tab == .session { return openSession(&state) }
                openTab(tab, &state)
                return []
            case .shop, .history, .requests, .checks, .live:
                openTab(action == .shop ? .shop : action == .history ? .history : action == .requests ? .requests : action == .checks ? .checks : .live, &state)
                return []
            case .purchases:
                return openPurchases(&state)
            case .session:
                return openSession(&state)
            default:
                return nil
            }
        default:
            return nil
        }
    }
}

/// The one-line prompt of `:` (go to) and `/` (find) on the History tab.
public struct PromptState: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case goTo, find, user, compare, fault, sessionName, sessionNote }
    public var kind: Kind
    public var text: String

    public init(kind: Kind, text: String = "") {
        self.kind = kind
        self.text = text
    }
}

extension ShopUpdate {
    static func promptAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch action {
        case .runPrompt: return runPrompt(&state)
        case .nextField:
            completeUser(&state)
            completeCompare(&state)
            completeFault(&state)
            return []
        case .cancelPrompt:
            state.screen.prompt = nil
            return []
        case .deleteChar:
            if !(state.screen.prompt?.text.isEmpty ?? true) { state.screen.prompt?.text.removeLast() }
            return []
        default:
            return []
        }
    }
}
