import Foundation
import ShopAPI
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

    /// The model's screen size, unless `width`/`height` are given.
    public init(app: AppState, keymap: Keymap = .standard, width: Int? = nil, height: Int? = nil, now: Date, timeZone: TimeZone = .current) {
        self.app = app
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

    /// Rows a list shows at this height (for PgDn/PgUp).
    public static func listRows(height: Int) -> Int { ScreenState.listRows(height: height) }

    public static func render(_ f: Frame) -> Grid {
        var g = Grid(width: f.width, height: f.height)
        guard f.width >= minWidth, f.height >= minHeight else {
            tooSmall(&g, f)
            return g
        }
        header(&g, f)
        tabs(&g, f)
        let body = body(f)
        switch f.ui.tab {
        case .shop: shop(&g, f, body)
        case .history: history(&g, f, body)
        case .requests: requests(&g, f, body)
        }
        messageLine(&g, f)
        hintLine(&g, f)
        if f.ui.showHelp { help(&g, f) }
        if let action = f.app.action, action.isShown { dialog(&g, f, action) }
        return g
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

    static func badge(_ context: ShopContext) -> (String, Style) {
        switch context.environment.lowercased() {
        case "local": return (" LOCAL ", Style(foreground: .good, bold: true, reverse: true))
        case "staging": return (" STAGING ", Style(foreground: .warning, bold: true, reverse: true))
        default: return (" \(clean(context.environment).uppercased()) ", Style(foreground: .danger, bold: true, reverse: true))
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
        let spin = String(spinner[f.tick % spinner.count])
        let balance = f.app.balance
        // Longest form first; shorter ones when the line is narrow (the reason shrinks to "offline").
        var forms: [[(String, Style)]] = []
        switch balance.phase {
        case .idle: forms = [[("Balance —", .plain)]]
        case .loading: forms = [[("Balance loading… \(spin)", .muted)]]
        case let .live(value, _):
            forms = [[("Balance \(Wording.grouped(value)) cheer", .bold)] + (balance.isLoading ? [(" \(spin)", .muted)] : [])]
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

    static func tabs(_ g: inout Grid, _ f: Frame) {
        var x = 1
        for tab in Tab.allCases {
            let label = " \(tab.rawValue) \(tab.title) "
            x += g.put(label, x: x, y: 1, style: tab == f.ui.tab ? Style(foreground: .accent, bold: true, reverse: true) : .plain) + 1
        }
        var info = ""
        switch f.ui.tab {
        case .shop:
            let packs = f.app.packs
            info = "\(packs.visible.count) of \(packs.all.count) packs · sort: \(packs.sort.rawValue)"
            if case let .cached(reason)? = packs.source, let at = packs.fetchedAt { info += " · cached \(Wording.age(of: at, now: f.now))\(reason.map { " · " + clean($0.full) } ?? "")" }
        case .history:
            info = f.app.history.positionText
            switch f.app.history.current {
            case .loading: info += " · loading \(spinner[f.tick % spinner.count])"
            case let .loaded(_, at, .cached(reason)): info += " · cached \(Wording.age(of: at, now: f.now))\(reason.map { " · " + clean($0.full) } ?? "")"
            default: break
            }
        case .requests:
            info = "\(f.app.requests.rows.count) requests"
        }
        // What does not fit is cut from the end (the position comes first, the reason last).
        let room = f.width - x - 2
        if room > 8 {
            let cut = Columns.truncate(info, to: room)
            g.put(cut, x: f.width - DisplayWidth.of(cut) - 1, y: 1, style: .muted)
        }
    }

    static func messageLine(_ g: inout Grid, _ f: Frame) {
        let y = f.height - 2
        if f.ui.editingFilter || (f.ui.tab == .shop && !f.app.packs.filter.isEmpty) {
            let cursor = f.ui.editingFilter ? "▏" : ""
            let x = g.put("/ ", x: 1, y: y, style: .bold)
            g.put(clean(f.app.packs.filter) + cursor, x: 1 + x, y: y, maxWidth: f.width - 4)
            return
        }
        guard let notice = f.app.notice else { return }
        let mark = notice.kind == .error ? "✖ " : "✔ "
        var text = clean(notice.text)
        var suffix = ""
        if let id = notice.requestID {
            // The request id is what QA quotes: it survives truncation, the message is cut instead.
            let marker = " (request id \(clean(id)))"
            if let range = text.range(of: marker) { text.removeSubrange(range) }
            suffix = marker
        }
        let room = f.width - 2 - DisplayWidth.of(suffix)
        g.put(Columns.truncate(mark + text, to: max(1, room)) + suffix, x: 1, y: y, maxWidth: f.width - 2,
              style: notice.kind == .error ? .error : Style(foreground: .good))
    }

    static func hintLine(_ g: inout Grid, _ f: Frame) {
        let y = f.height - 1
        g.fill(Rect(x: 0, y: y, width: f.width, height: 1), style: Style(reverse: true))
        let hints = f.keymap.hints(for: f.app)
        var x = 1
        for hint in hints {
            let w = DisplayWidth.of(hint)
            if x + w >= f.width { break }
            x += g.put(hint, x: x, y: y, style: Style(reverse: true)) + 2
        }
    }

    // MARK: Lists

    /// A list's column titles from column 1: (title, width, right-aligned), one space apart.
    static func columnTitles(_ g: inout Grid, y: Int, _ columns: [(String, Int, Bool)]) {
        var x = 1
        for (title, width, right) in columns {
            x += g.putFitted(title, x: x, y: y, width: width, style: .muted, alignRight: right) + 1
        }
    }

    /// The first row to show so that `selected` stays visible (kept near the middle).
    static func offset(selected: Int, count: Int, visible: Int) -> Int {
        min(max(0, selected - visible / 2), max(0, count - visible))
    }

    static func shop(_ g: inout Grid, _ f: Frame, _ area: Rect) {
        let packs = f.app.packs
        let listWidth = max(40, area.width * 58 / 100)
        let list = Rect(x: area.x, y: area.y, width: listWidth, height: area.height)
        let details = Rect(x: list.maxX, y: area.y, width: area.width - listWidth, height: area.height)
        let priceW = 7, cheerW = 8
        let creatorW = max(8, (list.width - priceW - cheerW - 6) / 3)
        let nameW = list.width - creatorW - priceW - cheerW - 6
        var y = list.y
        columnTitles(&g, y: y, [("NAME", nameW, false), ("CREATOR", creatorW, false), ("PRICE", priceW, true), ("CHEER", cheerW, true)])
        y += 1
        let rows = list.maxY - y
        if packs.visible.isEmpty {
            let message: String
            switch packs.status {
            case .idle, .loading: message = "Loading Audio Packs… \(spinner[f.tick % spinner.count])"
            case let .failed(error): message = "Could not load the Audio Packs: \(clean(error))"
            case .loaded: message = packs.filter.isEmpty ? "No Audio Packs." : "No pack matches “\(clean(packs.filter))”."
            }
            for (i, line) in Columns.wrap(message, to: list.width - 2).prefix(rows).enumerated() {
                g.put(line, x: 1, y: y + i, style: packs.status == .loaded ? .muted : (message.hasPrefix("Could") ? .error : .muted))
            }
        } else {
            let start = offset(selected: packs.selectedIndex, count: packs.visible.count, visible: rows)
            for (i, pack) in packs.visible[start...].prefix(rows).enumerated() {
                let index = start + i
                let style: Style = index == packs.selectedIndex ? .selected : .plain
                if index == packs.selectedIndex { g.fill(Rect(x: 0, y: y + i, width: list.width, height: 1), style: style) }
                var x = 1
                x += g.putFitted(clean(pack.name), x: x, y: y + i, width: nameW, style: style) + 1
                x += g.putFitted(clean(pack.creator ?? ""), x: x, y: y + i, width: creatorW, style: style) + 1
                x += g.putFitted(Wording.price(cents: pack.priceCents, currency: pack.currency.map(clean)), x: x, y: y + i, width: priceW, style: style, alignRight: true) + 1
                g.putFitted(pack.cheerTotal.map(Wording.grouped) ?? "", x: x, y: y + i, width: cheerW, style: style, alignRight: true)
            }
        }
        packDetails(&g, f, details)
    }

    static func packDetails(_ g: inout Grid, _ f: Frame, _ area: Rect) {
        let inner = Panel.inner(area)
        guard let pack = f.app.packs.selected else { return Panel.draw(&g, area, title: "Details", style: .muted, lines: []) }
        var lines: [(String, Style)] = []
        for line in Columns.wrap(clean(pack.name), to: inner.width) { lines.append((line, .bold)) }
        if let creator = pack.creator { lines.append(("by " + clean(creator), .plain)) }
        var facts: [String] = []
        if let price = pack.priceCents { facts.append(Wording.price(cents: price, currency: pack.currency.map(clean))) }
        if let cheer = pack.cheerTotal { facts.append("\(Wording.grouped(cheer)) cheer") }
        if !facts.isEmpty { lines.append((facts.joined(separator: " · "), .plain)) }
        var media: [String] = []
        if let samples = pack.sampleCount { media.append("\(Wording.grouped(samples)) samples") }
        if let seconds = pack.durationSeconds { media.append(duration(seconds)) }
        if !media.isEmpty { lines.append((media.joined(separator: " · "), .plain)) }
        if let released = pack.released { lines.append(("released " + date(released, f.timeZone, withTime: false), .plain)) }
        if let tags = pack.tags, !tags.isEmpty {
            for line in Columns.wrap("tags: " + tags.map(clean).joined(separator: ", "), to: inner.width) { lines.append((line, .muted)) }
        }
        if let description = pack.description, !description.isEmpty {
            lines.append(("", .plain))
            for line in Columns.wrap(clean(description), to: inner.width) { lines.append((line, .plain)) }
        }
        lines.append(("", .plain))
        for line in Columns.wrap(clean(pack.identifier), to: inner.width) { lines.append((line, .muted)) }
        Panel.draw(&g, area, title: "Details", style: .muted, lines: lines)
    }

    static func duration(_ seconds: Int) -> String {
        seconds >= 3600
            ? "\(seconds / 3600) h \(String(format: "%02d", (seconds % 3600) / 60)) min"
            : "\(seconds / 60):\(String(format: "%02d", seconds % 60))"
    }

    static func date(_ date: Date, _ zone: TimeZone, withTime: Bool = true) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let day = String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
        return withTime ? day + String(format: " %02d:%02d", c.hour ?? 0, c.minute ?? 0) : day
    }

    // MARK: History

    static func history(_ g: inout Grid, _ f: Frame, _ area: Rect) {
        let history = f.app.history
        let names = Dictionary(f.app.packs.all.map { ($0.identifier, $0.name) }, uniquingKeysWith: { a, _ in a })
        let dateW = 16, amountW = 7, commentsW = 8
        let creatorW = max(10, (area.width - dateW - amountW - commentsW - 6) * 2 / 5)
        let productW = area.width - dateW - creatorW - amountW - commentsW - 6
        var y = area.y
        columnTitles(&g, y: y, [("DATE", dateW, false), ("CREATOR", creatorW, false), ("PRODUCT", productW, false),
                                ("AMOUNT", amountW, true), ("COMMENTS", commentsW, true)])
        y += 1
        let rows = area.maxY - y
        let items = history.rows
        if items.isEmpty {
            let message: String
            switch history.current {
            case let .failed(error, _): message = "Could not load page \(history.page): \(clean(error)) — \(f.keys(.toggle, in: .browse)) retries"
            case .loaded: message = "No cheers yet."
            default: message = "Loading page \(Wording.grouped(history.page))… \(spinner[f.tick % spinner.count])"
            }
            for (i, line) in Columns.wrap(message, to: area.width - 2).prefix(rows).enumerated() {
                g.put(line, x: 1, y: y + i, style: message.hasPrefix("Could") ? .error : .muted)
            }
            return
        }
        // Each item becomes one line, plus its comments when expanded.
        var lines: [(text: String, style: Style, item: Int, isRow: Bool)] = []
        for (index, item) in items.enumerated() {
            let selected = index == history.selectedIndex
            let rowStyle: Style = selected ? .selected : .plain
            switch item {
            case let .entry(e):
                var line = Columns.fit(date(e.date, f.timeZone), to: dateW) + " "
                line += Columns.fit(clean(e.creator), to: creatorW) + " "
                line += Columns.fit(clean(names[e.product] ?? e.product), to: productW) + " "
                line += Columns.fit(Wording.grouped(e.amount), to: amountW, alignRight: true) + " "
                line += Columns.fit(e.comments.map { $0.isEmpty ? "–" : "\($0.count) ▸" } ?? "–", to: commentsW, alignRight: true)
                lines.append((line, rowStyle, index, true))
                if history.isExpanded(item, at: index) {
                    let comments = e.comments ?? []
                    if comments.isEmpty { lines.append(("      (no comments)", .muted, index, false)) }
                    for comment in comments {
                        let who = comment.signature.map(clean) ?? "(anonymous)"
                        let body = comment.body.map(clean) ?? "(no text)"
                        let wrapped = Columns.wrap("\(who): \(body)", to: max(10, area.width - 10))
                        for (k, part) in wrapped.enumerated() {
                            lines.append(((k == 0 ? "    ↳ " : "      ") + part, k == 0 ? Style(foreground: .accent) : .plain, index, false))
                        }
                    }
                }
            case let .unreadable(u):
                let id = u.id.map { " \(clean($0))" } ?? ""
                lines.append(("⚠ unreadable entry\(id): \(clean(u.reason))", selected ? .selected : Style(foreground: .warning), index, true))
            }
        }
        let selectedLine = lines.firstIndex { $0.item == history.selectedIndex && $0.isRow } ?? 0
        let start = offset(selected: selectedLine, count: lines.count, visible: rows)
        for (i, line) in lines[start...].prefix(rows).enumerated() {
            if line.style == .selected { g.fill(Rect(x: 0, y: y + i, width: area.width, height: 1), style: .selected) }
            g.put(line.text, x: 1, y: y + i, maxWidth: area.width - 2, style: line.style)
        }
    }

    // MARK: Requests

    static func requests(_ g: inout Grid, _ f: Frame, _ area: Rect) {
        let requests = f.app.requests
        if f.ui.requestDetailFull {
            requestDetail(&g, f, area)
            return
        }
        let listWidth = max(36, area.width / 2)
        let list = Rect(x: area.x, y: area.y, width: listWidth, height: area.height)
        let detail = Rect(x: list.maxX, y: area.y, width: area.width - listWidth, height: area.height)
        g.putFitted("REQUEST", x: 1, y: list.y, width: list.width - 16, style: .muted)
        g.putFitted("CODE", x: list.maxX - 15, y: list.y, width: 4, style: .muted, alignRight: true)
        g.putFitted("TIME", x: list.maxX - 10, y: list.y, width: 8, style: .muted, alignRight: true)
        let rows = list.height - 1
        if requests.rows.isEmpty {
            g.put("No requests yet.", x: 1, y: list.y + 1, style: .muted)
        } else {
            let start = offset(selected: requests.selectedIndex, count: requests.rows.count, visible: rows)
            for (i, e) in requests.rows[start...].prefix(rows).enumerated() {
                let y = list.y + 1 + i
                let selected = start + i == requests.selectedIndex
                let style: Style = selected ? .selected : .plain
                if selected { g.fill(Rect(x: 0, y: y, width: list.width, height: 1), style: style) }
                g.putFitted("\(e.method) \(clean(e.path))", x: 1, y: y, width: list.width - 17, style: style)
                let status = e.failure == nil ? e.status.map(String.init) ?? "ERR" : "ERR"
                let statusStyle = selected ? style : ((e.status ?? 500) >= 400 ? Style(foreground: .danger) : Style(foreground: .good))
                g.putFitted(status, x: list.maxX - 15, y: y, width: 4, style: statusStyle, alignRight: true)
                g.putFitted("\(Int(e.duration / .milliseconds(1))) ms", x: list.maxX - 10, y: y, width: 8, style: style, alignRight: true)
            }
        }
        requestDetail(&g, f, detail)
    }

    static func requestDetail(_ g: inout Grid, _ f: Frame, _ detail: Rect) {
        let inner = Panel.inner(detail)
        guard let e = f.app.requests.selected else { return Panel.draw(&g, detail, title: "Request", style: .muted, lines: []) }
        let lines = requestDetailLines(e, f, width: inner.width)
        // Full size, the detail scrolls (the offset is clamped to the last screenful).
        let scroll = f.ui.requestDetailFull ? min(max(0, f.ui.detailScroll), max(0, lines.count - inner.height)) : 0
        var footer: String?
        if lines.count > inner.height {
            footer = f.ui.requestDetailFull ? " \(scroll + 1)–\(min(lines.count, scroll + inner.height)) of \(lines.count) " : " \(f.keys(.toggle, in: .browse)): full size "
        }
        Panel.draw(&g, detail, title: "Request", style: .muted, lines: lines, scroll: scroll, footer: footer)
    }

    /// The body area under the header and tabs, above the message and hint lines.
    static func body(_ f: Frame) -> Rect { Rect(x: 0, y: 2, width: f.width, height: f.height - 4) }

    /// How far the full-size request detail can scroll (nil when it is not shown): the front end
    /// tells the model, so a scroll past the end comes back at once.
    public static func detailMaxScroll(_ f: Frame) -> Int? {
        guard f.ui.tab == .requests, f.ui.requestDetailFull, f.app.mode == .browse, let e = f.app.requests.selected else { return nil }
        let inner = Panel.inner(body(f))
        return max(0, requestDetailLines(e, f, width: inner.width).count - inner.height)
    }

    static func requestDetailLines(_ e: Exchange, _ f: Frame, width: Int) -> [(String, Style)] {
        var lines: [(String, Style)] = []
        for line in Columns.wrap("\(e.method) \(clean(e.path))", to: width) { lines.append((line, .bold)) }
        var outcome = e.status.map { "status \($0)" } ?? "failed"
        if let failure = e.failure { outcome += (e.status == nil ? ": " : ", then ") + clean(ErrorText.sentence(failure)) }
        lines.append(("\(outcome) · \(Int(e.duration / .milliseconds(1))) ms · \(Wording.grouped(e.responseBytes)) B · attempt \(e.attempt)", .plain))
        lines.append(("at \(date(e.startedAt, f.timeZone))", .plain))
        lines.append(("request id \(clean(e.requestID ?? "—"))", .plain))
        lines.append(("", .plain))
        lines.append(("Request headers", .muted))
        for h in e.requestHeaders { lines.append(("  \(clean(h.name.rawName)): \(clean(h.value))", .plain)) }
        lines.append(("Response headers", .muted))
        for h in e.responseHeaders { lines.append(("  \(clean(h.name.rawName)): \(clean(h.value))", .plain)) }
        if let body = e.responseBodyPreview ?? e.requestBodyPreview {
            lines.append(("", .plain))
            lines.append((e.responseBodyPreview != nil ? "Response body" : "Request body", .muted))
            for raw in Sanitizer.lines(JSONPretty.format(body)) {
                for part in Columns.wrap(raw.replacingOccurrences(of: "  ", with: "\u{00A0}\u{00A0}"), to: width) {
                    lines.append((part.replacingOccurrences(of: "\u{00A0}", with: " "), .plain))
                }
            }
        }
        return lines
    }

    // MARK: Overlays

    static func centered(_ f: Frame, width: Int, height: Int) -> Rect {
        let w = min(width, f.width - 2), h = min(height, f.height - 2)
        return Rect(x: (f.width - w) / 2, y: (f.height - h) / 2, width: w, height: h)
    }

    static func help(_ g: inout Grid, _ f: Frame) {
        let bindings = f.keymap.helpRows(for: f.app)
        let rect = centered(f, width: 96, height: bindings.count + 4)
        g.fill(rect)
        g.box(rect, title: "Keys", style: .bold)
        // Every binding is shown: in as many columns as the height needs.
        let rows = max(1, rect.height - 3)
        let columns = max(1, (bindings.count + rows - 1) / rows)
        let perColumn = (bindings.count + columns - 1) / columns
        let columnWidth = (rect.width - 4) / columns
        let keysW = min(bindings.map { DisplayWidth.of($0.keys.map(\.display).joined(separator: " ")) }.max() ?? 1, columnWidth * 2 / 3)
        for (i, b) in bindings.enumerated() {
            let column = i / perColumn, row = i % perColumn
            guard row < rows else { continue }
            let x = rect.x + 2 + column * columnWidth
            g.putFitted(b.keys.map(\.display).joined(separator: " "), x: x, y: rect.y + 1 + row, width: keysW, style: .bold)
            g.put(b.help + b.scope, x: x + keysW + 1, y: rect.y + 1 + row, maxWidth: columnWidth - keysW - 2)
        }
        let close = f.keymap.bindings.first { $0.action == .back && $0.modes.contains(.help) }?.keys.first?.display ?? "?"
        g.put("\(close) closes", x: rect.x + 2, y: rect.maxY - 2, style: .muted)
    }

    static func dialog(_ g: inout Grid, _ f: Frame, _ action: ActionState) {
        let rect = centered(f, width: 64, height: 11)
        g.fill(rect)
        var lines: [(String, Style)] = []
        let title: String
        let where_ = "\(f.app.context.environment.uppercased()) · \(clean(f.app.context.user))"
        switch action.phase {
        case let .editing(form, problem):
            switch form {
            case let .spend(_, name, amount, comment):
                title = "Spend cheer"
                lines.append(("On: " + clean(name), .bold))
                lines.append((where_, .muted))
                lines.append(("", .plain))
                lines.append(field("Amount", amount, active: f.ui.dialogField == 0))
                lines.append(field("Comment", comment, active: f.ui.dialogField == 1))
            case let .purchase(identifier, transaction):
                title = "Buy cheer"
                lines.append((where_, .muted))
                lines.append(("", .plain))
                lines.append(field("Bundle", identifier, active: f.ui.dialogField == 0))
                lines.append(field("Transaction", transaction, active: f.ui.dialogField == 1))
            }
            lines.append(("", .plain))
            if let problem { lines.append((problem, .error)) }
        case let .confirming(_, summary):
            title = "Confirm"
            for line in Columns.wrap(clean(summary), to: rect.width - 4) { lines.append((line, .bold)) }
            lines.append(("", .plain))
            lines.append(("\(f.keys(.confirm, in: .confirm)): confirm · \(f.keys(.cancel, in: .confirm)): cancel", .muted))
        case let .pending(_, summary, _):
            title = "Sending"
            for line in Columns.wrap(clean(summary), to: rect.width - 4) { lines.append((line, .plain)) }
            lines.append(("", .plain))
            lines.append(("sending… \(spinner[f.tick % spinner.count])", .muted))
        case let .succeeded(message):
            title = "Done"
            for line in Columns.wrap(clean(message), to: rect.width - 4) { lines.append((line, Style(foreground: .good, bold: true))) }
            lines.append(("", .plain))
            lines.append(("\(f.keys(.dismiss, in: .outcome)) closes", .muted))
        case let .failed(message, _):
            title = "Failed"
            for line in Columns.wrap(clean(message), to: rect.width - 4) { lines.append((line, .error)) }
            lines.append(("", .plain))
            lines.append(("\(f.keys(.dismiss, in: .outcome)) closes", .muted))
        }
        Panel.draw(&g, rect, title: title, style: .bold, lines: lines)
    }

    static func field(_ label: String, _ value: String, active: Bool) -> (String, Style) {
        let text = Columns.fit(label + ":", to: 13) + "[" + clean(value) + (active ? "▏" : "") + "]"
        return (text, active ? .bold : .plain)
    }
}

/// A box with a title and lines of text inside, scrolled by `scroll` lines, with an optional footer on
/// its bottom edge (pack details, request detail, dialogs).
enum Panel {
    /// Where the text goes: inside the border, one column of padding each side.
    static func inner(_ area: Rect) -> Rect {
        Rect(x: area.x + 2, y: area.y + 1, width: area.width - 4, height: area.height - 2)
    }

    static func draw(_ g: inout Grid, _ area: Rect, title: String, style: Style, lines: [(String, Style)], scroll: Int = 0, footer: String? = nil) {
        g.box(area, title: title, style: style)
        let inner = inner(area)
        for (i, (line, lineStyle)) in lines.dropFirst(scroll).prefix(max(0, inner.height)).enumerated() {
            g.put(line, x: inner.x, y: inner.y + i, maxWidth: inner.width, style: lineStyle)
        }
        if let footer {
            g.put(footer, x: area.maxX - DisplayWidth.of(footer) - 2, y: area.maxY - 1, style: .muted)
        }
    }
}
