import ShopViewModels
import TerminalText

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

/// A list with titled columns (ratatui's Table): cells fitted to their column with `…`, aligned left or
/// right, the selected row highlighted across the area, scrolled so the selection stays near the
/// middle. Only the rows on screen are asked for, so a long list costs what the screen shows.
struct Table {
    struct Column {
        var title: String
        var width: Int
        var alignRight = false
    }

    var columns: [Column]
    var count: Int
    var selected: Int?
    /// Row `i`'s cells (sanitized text) and, per cell, a style of its own (nil: the row's style).
    var cells: (Int) -> [(String, Style?)]
    /// A one-column mark in the gutter left of row `i` (what the watch just saw change), if any.
    var mark: ((Int) -> String?)? = nil

    /// Draws the column titles on the area's first line and the rows below — or, with no rows,
    /// `empty` wrapped under the titles (muted, or in the error style when it is an error). Answers
    /// where each row drawn went (for mouse clicks).
    @discardableResult
    func render(_ g: inout Grid, _ area: Rect, empty: (text: String, isError: Bool) = ("", false)) -> [RowHit] {
        titles(&g, area)
        if count == 0 {
            for (i, line) in Columns.wrap(empty.text, to: area.width - 2).prefix(max(0, area.height - 1)).enumerated() {
                g.put(line, x: area.x + 1, y: area.y + 1 + i, style: empty.isError ? .error : .muted)
            }
            return []
        }
        let rows = area.height - 1
        guard rows > 0, count > 0 else { return [] }
        let viewport = Viewport.centred(selected: selected ?? 0, count: count, rows: rows)
        let start = viewport.offset
        var hits: [RowHit] = []
        for index in viewport.range(count: count) {
            let y = area.y + 1 + index - start
            let isSelected = index == selected
            let rowStyle: Style = isSelected ? .selected : .plain
            if isSelected { g.fill(Rect(x: area.x, y: y, width: area.width, height: 1), style: rowStyle) }
            if let glyph = mark?(index) { g.put(glyph, x: area.x, y: y, maxWidth: 1, style: isSelected ? Style(bold: true, reverse: true) : Style(foreground: .accent, bold: true)) }
            var x = area.x + 1
            for (column, cell) in zip(columns, cells(index)) {
                let style = isSelected ? rowStyle : (cell.1 ?? rowStyle)
                x += g.putFitted(cell.0, x: x, y: y, width: column.width, style: style, alignRight: column.alignRight) + 1
            }
            hits.append(RowHit(y: y, x: area.x, width: area.width, index: index))
        }
        return hits
    }

    /// The width a number column takes: what its title and its widest value need, at least
    /// `minimum`. Number columns get this; the text columns beside them give way (text may be cut
    /// with `…`, a number never is).
    static func numberWidth(title: String, values: some Sequence<String>, minimum: Int = 0) -> Int {
        values.reduce(max(minimum, DisplayWidth.of(title))) { max($0, DisplayWidth.of($1)) }
    }

    func titles(_ g: inout Grid, _ area: Rect) {
        var x = area.x + 1
        for column in columns {
            x += g.putFitted(column.title, x: x, y: area.y, width: column.width, style: .muted, alignRight: column.alignRight) + 1
        }
    }
}

/// Where a list row went on screen.
public struct RowHit: Sendable, Equatable {
    public var y: Int
    public var x: Int
    public var width: Int
    public var index: Int
}

/// The tab titles (` 1 Shop `, …), the current one highlighted; answers where each went.
struct Tabs {
    var titles: [(tab: Tab, label: String)]
    var current: Tab

    /// The columns `render` takes, from `x0` to where it ends.
    func width() -> Int { titles.reduce(0) { $0 + DisplayWidth.of($1.label) + 1 } }

    @discardableResult
    func render(_ g: inout Grid, x x0: Int, y: Int) -> (end: Int, hits: [(Rect, Tab)]) {
        var x = x0
        var hits: [(Rect, Tab)] = []
        for (tab, label) in titles {
            let w = g.put(label, x: x, y: y, style: tab == current ? Style(foreground: .accent, bold: true, reverse: true) : .plain)
            hits.append((Rect(x: x, y: y, width: w, height: 1), tab))
            x += w + 1
        }
        return (x, hits)
    }
}

/// The reverse-video bar of key hints at the bottom: as many hints as fit, in order.
struct StatusBar {
    var hints: [String]
    /// Shown at the right end, first to get room (`⚠ 2`: failed checks).
    var alert: String?

    func render(_ g: inout Grid, _ area: Rect) {
        g.fill(area, style: Style(reverse: true))
        var end = area.maxX
        if let alert {
            let w = DisplayWidth.of(alert)
            end = max(area.x, area.maxX - w - 1)
            g.put(alert, x: end, y: area.y, style: Style(foreground: .warning, bold: true, reverse: true))
        }
        var x = area.x + 1
        for hint in hints {
            let w = DisplayWidth.of(hint)
            if x + w >= end - 1 { break }
            x += g.put(hint, x: x, y: area.y, style: Style(reverse: true)) + 2
        }
    }
}

/// A box drawn over the screen (the help list, a dialog): centered, its area cleared first.
enum Overlay {
    static func centered(in bounds: Rect, width: Int, height: Int) -> Rect {
        let w = min(width, bounds.width - 2), h = min(height, bounds.height - 2)
        return Rect(x: (bounds.width - w) / 2, y: (bounds.height - h) / 2, width: w, height: h)
    }

    /// Clears `rect` and draws a panel with `lines` in it (a Dialog).
    static func dialog(_ g: inout Grid, _ rect: Rect, title: String, style: Style = .bold, lines: [(String, Style)]) {
        g.fill(rect)
        Panel.draw(&g, rect, title: title, style: style, lines: lines)
    }
}

/// Where things went in a frame, for mouse clicks: the tabs and the rows of the list on screen.
public struct Layout: Sendable {
    public var tabs: [(Rect, Tab)] = []
    public var rows: [RowHit] = []

    public init() {}

    /// The tab at (x, y), if a tab title is there.
    public func tab(x: Int, y: Int) -> Tab? { tabs.first { $0.0.contains(x: x, y: y) }?.1 }

    /// The list index at (x, y), if a list row is there.
    public func row(x: Int, y: Int) -> Int? { rows.first { $0.y == y && x >= $0.x && x < $0.x + $0.width }?.index }
}
