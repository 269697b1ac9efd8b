import Foundation
import ShopAPI
import ShopCompare
import ShopViewModels
import TerminalText

/// Everything a frame depends on. The renderer is a pure function of it: same frame, same grid.
public struct Frame: Sendable {
    public var app: AppState
    /// The keys in effect: the hint bar and the `?` overlay are drawn from it.
    public var keymap: Keymap
    public var width: Int
    public var height: Int
    public var now: Date
    public var timeZone: TimeZone
    /// The session's laid-out history lines (a memo: the grid is the same with a new, empty one).
    public var layouts: HistoryLayoutCache

    /// The model's screen size, unless `width`/`height` are given.
    public init(app: AppState, keymap: Keymap = .standard, width: Int? = nil, height: Int? = nil, now: Date, timeZone: TimeZone = .current,
                layouts: HistoryLayoutCache = HistoryLayoutCache()) {
        self.app = app
        self.layouts = layouts
        self.keymap = keymap
        self.width = width ?? app.screen.width
        self.height = height ?? app.screen.height
        self.now = now
        self.timeZone = timeZone
    }

    var ui: ScreenState { app.screen }

    /// The keys of `action` in `mode`, as "y or Enter" (from the keymap, so rebound keys show).
    func keys(_ action: Action, in mode: Mode) -> String {
        let keys = keymap.bindings.first { $0.action == action && $0.modes.contains(mode) }?.keys.map(\.display) ?? []
        return keys.isEmpty ? "(unbound)" : keys.joined(separator: " or ")
    }
    /// Animation step for the spinner.
    var tick: Int { app.screen.tick }
}

/// View-model state + size → a grid of cells. Every string from the server passes `clean` (the
/// sanitizer) before it reaches a cell.
public enum Renderer {
    public static let minWidth = 60
    public static let minHeight = 16
    static let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")


    public static func render(_ f: Frame) -> Grid { draw(f).grid }

    /// The frame, and where its tabs and list rows went (for mouse clicks). Screens compose widgets:
    /// `Tabs`, `Table`, `Panel`, `StatusBar`, and `Overlay` for the help list and the dialogs.
    public static func draw(_ f: Frame) -> (grid: Grid, layout: Layout) {
        var g = Grid(width: f.width, height: f.height)
        var layout = Layout()
        guard f.width >= minWidth, f.height >= minHeight else {
            tooSmall(&g, f)
            return (g, layout)
        }
        header(&g, f)
        tabs(&g, f, &layout)
        let body = body(f)
        if let view = f.app.diff, f.app.mode == .diff {
            diff(&g, f, view, body)
        } else {
            tab(&g, f, body, &layout)
        }
        messageLine(&g, f)
        let failures = f.app.checks.failures
        StatusBar(hints: f.keymap.hints(for: f.app), alert: failures > 0 ? "⚠ \(Wording.grouped(failures))" : nil)
            .render(&g, Rect(x: 0, y: f.height - 1, width: f.width, height: 1))
        if f.ui.showHelp { help(&g, f) }
        if f.app.dialogShown, let action = f.app.write.action { dialog(&g, f, action) }
        if f.app.mode != .browse { layout.rows = [] }  // an overlay takes the clicks
        return (g, layout)
    }

    static func tab(_ g: inout Grid, _ f: Frame, _ body: Rect, _ layout: inout Layout) {
        switch f.ui.tab {
        case .shop: shop(&g, f, body, &layout)
        case .history: history(&g, f, body, &layout)
        case .requests: requests(&g, f, body, &layout)
        case .checks: checks(&g, f, body, &layout)
        case .live: live(&g, f, body, &layout)
        case .purchases: purchases(&g, f, body, &layout)
        case .session: session(&g, f, body, &layout)
        }
    }

    static func clean(_ s: String) -> String { Sanitizer.line(s) }

    // MARK: Frame parts

    static func tooSmall(_ g: inout Grid, _ f: Frame) {
        let lines = ["Terminal too small: \(f.width)×\(f.height)", "reiterate-shop needs at least \(minWidth)×\(minHeight).", "Enlarge the window, or press \(f.keys(.quit, in: .browse)) to quit."]
        let top = max(0, f.height / 2 - 1)
        for (i, line) in lines.enumerated() where top + i < f.height {
            let cut = Columns.truncate(line, to: f.width)
            g.put(cut, x: max(0, (f.width - DisplayWidth.of(cut)) / 2), y: top + i, style: i == 0 ? .bold : .plain)
        }
    }

    /// The environment's tier, named: ` LOCAL `, ` STAGING ` (with the environment's name when it is
    /// another, ` STAGING · EU `), and for a real shop ` ⚠ NAME ` (the glyph says it without the red).
    static func badge(_ context: ShopContext) -> (String, Style) {
        let name = clean(context.environment).uppercased()
        func named(_ tier: String) -> String { name == tier ? " \(tier) " : " \(tier) · \(name) " }
        switch context.tier {
        case .local: return (named("LOCAL"), Style(foreground: .good, bold: true, reverse: true))
        case .staging: return (named("STAGING"), Style(foreground: .warning, bold: true, reverse: true))
        case .production: return (" ⚠ \(name) ", Style(foreground: .danger, bold: true, reverse: true))
        }
    }

    static func header(_ g: inout Grid, _ f: Frame) {
        // The app name gives way on narrow terminals: environment, user and balance matter more.
        let (text, style) = badge(f.app.context)
        let leftWithoutName = 1 + DisplayWidth.of(text) + (f.app.context.readOnly ? 12 : 0) + 2 + min(16, DisplayWidth.of(clean(f.app.context.user)))
        let showName = f.width - leftWithoutName - 17 >= balanceWidth(f) + 2
        var x = showName ? g.put(" reiterate-shop ", x: 0, y: 0, style: .bold) + 1 : 1
        x += g.put(text, x: x, y: 0, style: style)
        if f.app.context.readOnly { x += g.put(" READ-ONLY ", x: x + 1, y: 0, style: Style(foreground: .danger, bold: true, reverse: true)) + 1 }
        x += g.put("  " + Columns.truncate(clean(f.app.context.user), to: 16), x: x, y: 0, style: .bold)
        if let badge = f.app.watch.badge, f.width - x - balanceWidth(f) - 4 > DisplayWidth.of(badge) {
            let style: Style
            switch f.app.watch.phase {
            case .backingOff: style = Style(foreground: .warning)
            case .paused: style = .muted
            default: style = Style(foreground: .accent)
            }
            x += g.put("  " + badge, x: x, y: 0, style: style)
        }
        // The app's proxy: on, and how many of the app's exchanges it has brought.
        if let proxy = f.app.proxy {
            let text = proxy.problem == nil ? "⇄ app proxy \(clean(proxy.address)) · \(Wording.grouped(f.app.appExchangeCount)) app" : "⇄ app proxy off"
            if f.width - x - balanceWidth(f) - 4 > DisplayWidth.of(text) {
                x += g.put("  " + text, x: x, y: 0, style: proxy.problem == nil ? Style(foreground: .accent) : Style(foreground: .warning))
            }
        }
        let spin = String(spinner[f.tick % spinner.count])
        let balance = f.app.balance
        // Longest form first; shorter ones when the line is narrow (the reason shrinks to "offline").
        var forms: [[(String, Style)]] = []
        switch balance.phase {
        case .idle: forms = [[("Balance —", .plain)]]
        case .loading: forms = [[("Balance loading… \(spin)", .muted)]]
        case let .live(value, _):
            // A change the watch just saw is shown beside it, briefly.
            let change = f.app.watch.marks.balanceDelta.map { [(" (\(Wording.signedDelta($0)))", Style(foreground: .accent, bold: true))] } ?? []
            forms = [[("Balance \(Wording.grouped(value)) cheer", .bold)] + change + (balance.isLoading ? [(" \(spin)", .muted)] : []),
                     [("Balance \(Wording.grouped(value)) cheer", .bold)] + (balance.isLoading ? [(" \(spin)", .muted)] : [])]
        case let .cached(value, at, reason):
            let amount = ("Balance \(Wording.grouped(value)) cheer", Style.bold)
            let age = (" · cached \(Wording.age(of: at, now: f.now))", Style(foreground: .warning))
            if let reason {
                forms = [[amount, age, (" · \(clean(reason.full))", Style(foreground: .warning))],
                         [amount, age, (" · \(clean(reason.brief))", Style(foreground: .warning))],
                         [("\(Wording.grouped(value)) cheer", .bold), age, (" · \(clean(reason.brief))", Style(foreground: .warning))]]
            } else {
                forms = [[amount, age, (" \(spin)", .muted)]]
            }
        case .failed: forms = [[("Balance unavailable", .error)]]
        }
        let room = f.width - x - 3
        let right = forms.first { $0.reduce(0) { $0 + DisplayWidth.of($1.0) } <= room } ?? forms.last ?? []
        let total = right.reduce(0) { $0 + DisplayWidth.of($1.0) }
        var rx = max(x + 2, f.width - total - 1)
        for (part, style) in right {
            rx += g.put(part, x: rx, y: 0, maxWidth: max(0, f.width - rx - 1), style: style)
        }
    }

    /// Columns the balance part of the header needs in its shortest useful form.
    static func balanceWidth(_ f: Frame) -> Int {
        switch f.app.balance.phase {
        case let .cached(value, at, reason):
            return DisplayWidth.of("Balance \(Wording.grouped(value)) cheer · cached \(Wording.age(of: at, now: f.now)) · \(reason?.brief ?? "x")")
        case let .live(value, _): return DisplayWidth.of("Balance \(Wording.grouped(value)) cheer ⠋")
        default: return 20
        }
    }

    static func tabs(_ g: inout Grid, _ f: Frame, _ layout: inout Layout) {
        var info = ""
        switch f.ui.tab {
        case .shop:
            let packs = f.app.packs
            info = "\(packs.countText) · sort: \(packs.sort.rawValue)"
            if case let .cached(_, at, reason) = packs.list.phase { info += " · cached \(Wording.age(of: at, now: f.now))\(reason.map { " · " + clean($0.full) } ?? "")" }
        case .history:
            info = f.app.history.positionText
            switch f.app.history.current {
            case .loading?: info += " · loading \(spinner[f.tick % spinner.count])"
            case let slot?:
                if case let .cached(_, at, reason) = slot.phase { info += " · cached \(Wording.age(of: at, now: f.now))\(reason.map { " · " + clean($0.full) } ?? "")" }
            case nil: break
            }
        case .requests:
            info = "\(f.app.requests.rows.count) requests"
            if let shown = f.app.requestsShown { info += shown == .app ? " · the app's only" : " · this tool's only" }
            // The pins of this environment, listed (◉ marks their rows).
            if !f.app.pinned.isEmpty { info += " · ◉ pinned: " + f.app.pinned.map(\.description).sorted().map(clean).joined(separator: ", ") }
        case .checks:
            let c = f.app.checks
            info = "\(c.records.count) check\(c.records.count == 1 ? "" : "s") · \(c.failures) failed"
        case .purchases: info = purchasesInfo(f, spinner: String(spinner[f.tick % spinner.count]))
        case .session: info = sessionInfo(f)
        case .live:
            let w = f.app.watch
            info = "\(Wording.grouped(w.eventCount)) event\(w.eventCount == 1 ? "" : "s") · \(Wording.grouped(w.findingCount)) flagged · \(w.isOn ? "\(Wording.grouped(w.rounds)) rounds" : w.phase == .paused ? "paused" : "not watching")"
        }
        // The other tabs by their number alone when their titles would cut the information short.
        var tabs = Tabs(titles: Tab.allCases.map { ($0, " \($0.rawValue) \($0.title) ") }, current: f.ui.tab)
        if f.width - (1 + tabs.width()) - 2 < DisplayWidth.of(info) {
            tabs.titles = Tab.allCases.map { ($0, $0 == f.ui.tab ? " \($0.rawValue) \($0.title) " : " \($0.rawValue) ") }
        }
        let drawn = tabs.render(&g, x: 1, y: 1)
        layout.tabs = drawn.hits
        let x = drawn.end
        // What does not fit is cut from the end (the position comes first, the reason last).
        let room = f.width - x - 2
        if room > 8 {
            let cut = Columns.truncate(info, to: room)
            g.put(cut, x: f.width - DisplayWidth.of(cut) - 1, y: 1, style: .muted)
        }
    }

    static func messageLine(_ g: inout Grid, _ f: Frame) {
        let y = f.height - 2
        if let prompt = f.ui.prompt {
            let label: String, hint: String
            switch prompt.kind {
            case .goTo: (label, hint) = ("go to: ", "   an entry (4512), a page (p91) or a date (2026-10-01)")
            case .find: (label, hint) = ("find: ", "   in products, creators and comments")
            case .sessionName: (label, hint) = ("session name: ", "   Enter opens it (every command and this TUI append to it) · Esc cancels")
            case .sessionNote: (label, hint) = ("note: ", "   Enter adds it to the session · Esc cancels")
            case .user:
                let others = f.app.context.users.filter { $0 != f.app.context.user }.map(clean)
                (label, hint) = ("user: ", others.isEmpty ? "   any user id" : "   Tab: " + others.joined(separator: ", ") + " · or any user id")
            case .fault:
                let choice = FaultChoice.common.first { $0.spec == prompt.text }
                (label, hint) = ("fault: ", choice.map { "   " + $0.words + " · Tab: the next · Enter puts it in" }
                                    ?? "   Tab: lose_answer, offline, latency, status, html, rate_limit, reset, truncate, hang, clear · or KIND,key=value")
            case .compare:
                (label, hint) = ("compare the \(ComparedPart.of(f.ui.tab).rawValue) with: ", "   env:NAME, user:ID, env:NAME/user:ID or a snapshot file"
                                    + (f.app.compareTargets.isEmpty ? "" : " · Tab: " + f.app.compareTargets.prefix(4).map(clean).joined(separator: ", ")))
            }
            let x = g.put(label, x: 1, y: y, style: .bold)
            let typed = clean(prompt.text) + "▏"
            let used = g.put(typed, x: 1 + x, y: y, maxWidth: f.width - 3 - x)
            // The user prompt keeps its list in sight (Tab goes through it).
            if prompt.text.isEmpty || prompt.kind == .user || prompt.kind == .fault { g.put(hint, x: 1 + x + used, y: y, maxWidth: max(0, f.width - 3 - x - used), style: .muted) }
            return
        }
        if f.ui.tab == .history, let progress = searchProgress(f) {
            g.put(progress, x: 1, y: y, maxWidth: f.width - 2, style: Style(foreground: .accent))
            return
        }
        if f.ui.editingFilter || (f.ui.tab == .shop && !f.app.packs.filter.isEmpty) {
            let cursor = f.ui.editingFilter ? "▏" : ""
            let x = g.put("/ ", x: 1, y: y, style: .bold)
            g.put(clean(f.app.packs.filter) + cursor, x: 1 + x, y: y, maxWidth: f.width - 4)
            return
        }
        guard let notice = f.app.notice else { return }
        let mark: String, style: Style
        switch notice.kind {
        case .error: (mark, style) = ("✖ ", .error)
        case .info: (mark, style) = ("✔ ", Style(foreground: .good))
        case .pending: (mark, style) = ("… ", Style(foreground: .accent))
        case .recovered: (mark, style) = ("↺ ", .muted)
        }
        g.put(MessageLine(notice, mark: mark).fitted(to: max(1, f.width - 2)), x: 1, y: y, maxWidth: f.width - 2, style: style)
    }

    /// `searching “rain” ▕████░░░░▏ page 37 of 500 · 2 matches · Esc stops`, or the date search's step.
    static func searchProgress(_ f: Frame) -> String? {
        let spin = spinner[f.tick % spinner.count]
        if let search = f.app.history.dateSearch {
            return "going to \(clean(search.day)) \(spin) step \(search.steps) · Esc stops"
        }
        guard let find = f.app.history.find, let scan = find.scan else { return nil }
        let cells = 12
        let done = min(cells, scan.pagesScanned * cells / max(1, scan.totalPages))
        let bar = "▕" + String(repeating: "█", count: done) + String(repeating: "░", count: cells - done) + "▏"
        let matches = "\(Wording.grouped(find.matchCount)) match\(find.matchCount == 1 ? "" : "es")"
        return "searching “\(clean(find.query))” \(spin) \(bar) page \(Wording.grouped(min(scan.pagesScanned + 1, scan.totalPages))) of \(Wording.grouped(scan.totalPages)) · \(matches) · Esc stops"
    }

    static func duration(_ seconds: Int) -> String {
        seconds >= 3600
            ? "\(seconds / 3600) h \(String(format: "%02d", (seconds % 3600) / 60)) min"
            : "\(seconds / 60):\(String(format: "%02d", seconds % 60))"
    }

    /// `2026-11-21 21:20` (or the day alone) in `zone`.
    static func date(_ date: Date, _ zone: TimeZone, withTime: Bool = true) -> String {
        withTime ? DateText.minute(date, zone) : DateText.day(date, zone)
    }
}
