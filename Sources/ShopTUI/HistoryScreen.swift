import Foundation
import ShopAPI
import ShopViewModels
import Synchronization
import TerminalText

/// Laid-out history entries, kept between frames: an entry's line and wrapped comments depend only on
/// the entry, the width, whether its comments are open, its product's name and the time zone, so a
/// frame that moves the selection lays out nothing again. Keys compare the whole entry (a changed
/// entry is laid out anew); bounded (256 entries: more than two 400×100 screens), emptied when full.
/// One belongs to a session (`TerminalApp`) and reaches the renderer through its `Frame`: a memo of a
/// pure function, shared by no one else.
public final class HistoryLayoutCache: Sendable {
    public init() {}

    struct Key: Hashable {
        var item: HistoryItem
        var width: Int
        var expanded: Bool
        var product: String
        var zone: Int
        /// The AMOUNT column's width (it follows the widest amount held) and the entry's page (an
        /// unreadable entry's line names it).
        var amountWidth = 0
        var page = 0

        static func == (a: Key, b: Key) -> Bool {
            a.width == b.width && a.expanded == b.expanded && a.zone == b.zone && a.product == b.product && a.item == b.item
                && a.amountWidth == b.amountWidth && a.page == b.page
        }

        func hash(into h: inout Hasher) {
            h.combine(width)
            h.combine(expanded)
            switch item {
            case let .entry(e):
                h.combine(e.id)
                h.combine(e.date)
                h.combine(e.amount)
            case let .unreadable(u):
                h.combine(u.id)
                h.combine(u.index)
            }
        }
    }

    /// A line of an entry: its text, its style when not selected, and whether it is the entry's own row.
    struct Line: Sendable {
        var text: String
        var style: Style
        var isRow: Bool
        /// The text as cells, measured once (a one-row grid, and the columns used): a frame copies
        /// them instead of putting the text again.
        var cells: (row: Grid, used: Int)?

        /// The line with its cells laid out `width` columns wide.
        func measured(width: Int) -> Line {
            var row = Grid(width: max(0, width), height: 1)
            let used = row.put(text, x: 0, y: 0, maxWidth: width, style: style)
            var line = self
            line.cells = (row, used)
            return line
        }
    }

    private let table = Mutex<[Key: [Line]]>([:])

    func lines(_ key: Key, make: () -> [Line]) -> [Line] {
        if let hit = table.withLock({ $0[key] }) { return hit }
        let made = make()
        table.withLock { t in
            if t.count >= 256 { t.removeAll(keepingCapacity: true) }
            t[key] = made
        }
        return made
    }
}

extension Renderer {
    /// A line of the list; `isNew` marks an entry's own row when the watch just saw it come in.
    typealias HistoryLine = (text: String, style: Style, item: Int, cells: (row: Grid, used: Int)?, isNew: Bool)

    /// The History tab: the whole history as one list, one line per entry and its comments under it
    /// when they are open; a place whose page has not come yet shows as loading. Only the entries
    /// around the cursor are laid out, so the cost follows the screen, not the history's length.
    static func history(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let history = f.app.history
        let dateW = 16, commentsW = 8
        // AMOUNT is as wide as the widest amount of the pages held (a number is never cut); the
        // creator and product columns give way.
        let amounts = history.pages.heldAmounts
        // No cap: the text columns give way (the creator to 10 columns, then both further), never AMOUNT.
        let amountW = Table.numberWidth(title: "AMOUNT", values: [Wording.grouped(amounts.low), Wording.grouped(amounts.high)], minimum: 7)
        let text = max(2, area.width - dateW - amountW - commentsW - 6)
        let creatorW = max(min(10, text / 2), text * 2 / 5)
        let productW = text - creatorW
        let table = Table(columns: [.init(title: "DATE", width: dateW), .init(title: "CREATOR", width: creatorW), .init(title: "PRODUCT", width: productW),
                                    .init(title: "AMOUNT", width: amountW, alignRight: true), .init(title: "COMMENTS", width: commentsW, alignRight: true)],
                          count: 0, selected: nil) { _ in [] }
        let y = area.y + 1
        let rows = area.maxY - y
        guard let count = history.count, count > 0 else {
            // The entries are laid out below (an entry can take several lines): the table draws the
            // titles and the message alone.
            let empty: (String, Bool)
            switch history.current {
            case let .failed(error, nil)?: empty = ("Could not load page \(history.page): \(clean(ErrorText.line(error))) — \(f.keys(.toggle, in: .browse)) retries", true)
            case .loaded?, .failed?: empty = ("No cheers yet.", false)
            default: empty = ("Loading page \(Wording.grouped(history.page))… \(spinner[f.tick % spinner.count])", false)
            }
            table.render(&g, area, empty: empty)
            return
        }
        table.titles(&g, area)
        var names: [String: String] = [:]
        for pack in f.app.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        let zone = f.timeZone.secondsFromGMT()
        let selected = min(max(0, history.cursor), count - 1)
        let marks = f.app.watch.marks
        func lines(_ index: Int) -> [HistoryLine] {
            let style: Style
            let text: String
            switch history.item(at: index) {
            case let .item(item):
                var product = ""
                if case let .entry(e) = item { product = names[e.product] ?? e.product }
                let key = HistoryLayoutCache.Key(item: item, width: area.width, expanded: history.isExpanded(item), product: product, zone: zone,
                                                 amountWidth: amountW, page: history.locate(index).page)
                let laid = f.layouts.lines(key) {
                    entryLines(item, expanded: key.expanded, product: product, page: key.page, f: f, widths: (dateW, creatorW, productW, amountW, commentsW), area: area)
                        .map { $0.measured(width: area.width - 2) }
                }
                let isNew = marks.isNew(item)
                return laid.map { ($0.text, index == selected && $0.isRow ? .selected : $0.style, index, $0.cells, isNew && $0.isRow) }
            case let .loading(page):
                text = "… entry \(Wording.grouped(index + 1)): loading page \(Wording.grouped(page)) \(spinner[f.tick % spinner.count])"
                style = .muted
            case let .failed(page, failure):
                // One row for the page: at the cursor when it is on the page, else at the page's first entry.
                let entries = history.entries(ofPage: page)
                guard index == (history.page == page ? selected : entries.lowerBound - 1) else { return [] }
                text = failedPageLine(page, entries: entries, failure, retry: f.keys(.toggle, in: .browse), width: area.width - 2)
                style = Style(foreground: .danger)
            case let .missing(page):
                text = "⚠ entry \(Wording.grouped(index + 1)) is missing: page \(Wording.grouped(page)) came shorter than the totals say"
                style = Style(foreground: .warning)
            }
            return [(text, index == selected ? .selected : style, index, nil, false)]
        }
        // The cursor's row stays near the middle (at the ends, the list's first or last screenful shows).
        var below: [HistoryLine] = []
        var index = selected
        while index < count, below.count < rows {
            below += lines(index)
            index += 1
        }
        let needAbove = Viewport.rowsAbove(rows: rows, below: below.count)
        var above: [HistoryLine] = []
        index = selected - 1
        while index >= 0, above.count < needAbove {
            above = lines(index) + above
            index -= 1
        }
        let shown = Array((above.suffix(min(above.count, needAbove)) + below).prefix(rows))
        let query = history.find?.query ?? ""
        for (i, line) in shown.enumerated() {
            if line.style == .selected { g.fill(Rect(x: 0, y: y + i, width: area.width, height: 1), style: .selected) }
            if let cells = line.cells {
                g.copy(cells.row, count: cells.used, x: 1, y: y + i, style: line.style == .selected ? .selected : nil)
            } else {
                g.put(line.text, x: 1, y: y + i, maxWidth: area.width - 2, style: line.style)
            }
            if line.isNew { g.put("+", x: 0, y: y + i, maxWidth: 1, style: line.style == .selected ? Style(bold: true, reverse: true) : Style(foreground: .accent, bold: true)) }
            if !query.isEmpty { highlight(query, in: line.text, &g, x: 1, y: y + i, maxWidth: area.width - 2, selected: line.style == .selected) }
            layout.rows.append(RowHit(y: y + i, x: area.x, width: area.width, index: line.item))
        }
    }

    /// `✖ entries 51–100 (page 2) did not load: GET /api/v1/cheer_history → HTTP 500 … (request id …) — Enter retries`,
    /// laid out within `width` (the request, the status and the request id whole).
    static func failedPageLine(_ page: Int, entries: ClosedRange<Int>, _ failure: FailureWords, retry: String, width: Int) -> String {
        let which = entries.count == 1 ? "entry \(Wording.grouped(entries.lowerBound))"
            : "entries \(Wording.grouped(entries.lowerBound))–\(Wording.grouped(entries.upperBound))"
        return MessageLine(lead: "✖ \(which) (page \(Wording.grouped(page))) did not load: ", failure: failure, requestJoin: " → ",
                           verdict: " — \(retry) retries", requestID: failure.requestID, idBeforeVerdict: true).fitted(to: width)
    }

    /// Marks each place `query` occurs in `text` (drawn at x, y), ignoring case and accents as the find does.
    static func highlight(_ query: String, in text: String, _ g: inout Grid, x: Int, y: Int, maxWidth: Int, selected: Bool) {
        var from = text.startIndex
        while from < text.endIndex, let r = text.range(of: query, options: [.caseInsensitive, .diacriticInsensitive], range: from..<text.endIndex) {
            let start = x + DisplayWidth.of(String(text[..<r.lowerBound]))
            let width = min(DisplayWidth.of(String(text[r])), x + maxWidth - start)
            if width <= 0 { break }
            g.restyle(Rect(x: start, y: y, width: width, height: 1)) { _ in selected ? .selectedMatch : .match }
            from = r.upperBound
        }
    }

    /// An entry's line, and its comments when they are open.
    static func entryLines(_ item: HistoryItem, expanded: Bool, product: String, page: Int, f: Frame,
                           widths: (date: Int, creator: Int, product: Int, amount: Int, comments: Int), area: Rect) -> [HistoryLayoutCache.Line] {
        switch item {
        case let .entry(e):
            let cells = HistoryColumns.cells(e, product: product, zone: f.timeZone)
            var line = ""
            for (cell, (width, right)) in zip(cells, [(widths.date, false), (widths.creator, false), (widths.product, false), (widths.amount, true)]) {
                line += Columns.fit(cell, to: width, alignRight: right) + " "
            }
            line += Columns.fit(e.comments.map { $0.isEmpty ? "–" : "\($0.count) ▸" } ?? "–", to: widths.comments, alignRight: true)
            var out = [HistoryLayoutCache.Line(text: line, style: .plain, isRow: true)]
            guard expanded else { return out }
            let comments = e.comments ?? []
            if comments.isEmpty { out.append(.init(text: "      (no comments)", style: .muted, isRow: false)) }
            for comment in comments {
                let who = comment.signature.map(clean) ?? "(anonymous)"
                let body = comment.body.map(clean) ?? "(no text)"
                for (k, part) in Columns.wrap("\(who): \(body)", to: max(10, area.width - 10)).enumerated() {
                    out.append(.init(text: (k == 0 ? "    ↳ " : "      ") + part, style: k == 0 ? Style(foreground: .accent) : .plain, isRow: false))
                }
            }
            return out
        case let .unreadable(u):
            return [.init(text: clean(HistoryColumns.unreadable(u, page: page)), style: Style(foreground: .warning), isRow: true)]
        }
    }
}
