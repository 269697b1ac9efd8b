import Foundation
import ShopAPI
import ShopViewModels
import Synchronization
import TerminalText

/// Laid-out history entries, kept between frames: an entry's line and wrapped comments depend only on
/// the entry, the width, whether its comments are open, its product's name and the time zone, so a
/// frame that moves the selection lays out nothing again. Keys compare the whole entry (a changed
/// entry is laid out anew); bounded (a few screens' worth), emptied when full.
final class HistoryLayoutCache: Sendable {
    static let shared = HistoryLayoutCache()

    struct Key: Hashable {
        var item: HistoryItem
        var width: Int
        var expanded: Bool
        var product: String
        var zone: Int

        static func == (a: Key, b: Key) -> Bool {
            a.width == b.width && a.expanded == b.expanded && a.zone == b.zone && a.product == b.product && a.item == b.item
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
    }

    private let table = Mutex<[Key: [Line]]>([:])

    func lines(_ key: Key, make: () -> [Line]) -> [Line] {
        if let hit = table.withLock({ $0[key] }) { return hit }
        let made = make()
        table.withLock { t in
            if t.count >= 512 { t.removeAll(keepingCapacity: true) }
            t[key] = made
        }
        return made
    }
}

extension Renderer {
    typealias HistoryLine = (text: String, style: Style, item: Int)

    /// The History tab: one line per entry, and its comments under it when they are open. Only the
    /// entries around the selection are laid out, so the cost follows the screen, not the rows loaded.
    static func history(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let history = f.app.history
        let dateW = 16, amountW = 7, commentsW = 8
        let creatorW = max(10, (area.width - dateW - amountW - commentsW - 6) * 2 / 5)
        let productW = area.width - dateW - creatorW - amountW - commentsW - 6
        let table = Table(columns: [.init(title: "DATE", width: dateW), .init(title: "CREATOR", width: creatorW), .init(title: "PRODUCT", width: productW),
                                    .init(title: "AMOUNT", width: amountW, alignRight: true), .init(title: "COMMENTS", width: commentsW, alignRight: true)],
                          count: 0, selected: nil) { _ in [] }
        let y = area.y + 1
        let rows = area.maxY - y
        let items = history.rows
        if items.isEmpty {
            // The entries are laid out below (an entry can take several lines): the table draws the
            // titles and the message alone.
            let empty: (String, Bool)
            switch history.current {
            case let .failed(error, _): empty = ("Could not load page \(history.page): \(clean(error)) — \(f.keys(.toggle, in: .browse)) retries", true)
            case .loaded: empty = ("No cheers yet.", false)
            default: empty = ("Loading page \(Wording.grouped(history.page))… \(spinner[f.tick % spinner.count])", false)
            }
            table.render(&g, area, empty: empty)
            return
        }
        table.titles(&g, area)
        var names: [String: String] = [:]
        for pack in f.app.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        let zone = f.timeZone.secondsFromGMT()
        func lines(_ index: Int) -> [HistoryLine] {
            let item = items[index]
            var product = ""
            if case let .entry(e) = item { product = names[e.product] ?? e.product }
            let key = HistoryLayoutCache.Key(item: item, width: area.width, expanded: history.isExpanded(item, at: index), product: product, zone: zone)
            let laid = HistoryLayoutCache.shared.lines(key) {
                entryLines(item, expanded: key.expanded, product: product, f: f, widths: (dateW, creatorW, productW, amountW, commentsW), area: area)
            }
            let selected = index == history.selectedIndex
            return laid.map { ($0.text, selected && $0.isRow ? .selected : $0.style, index) }
        }
        // The selected row stays near the middle (at the ends, the list's first or last screenful shows).
        let selected = min(max(0, history.selectedIndex), items.count - 1)
        var below: [HistoryLine] = []
        var index = selected
        while index < items.count, below.count < rows {
            below += lines(index)
            index += 1
        }
        let needAbove = max(rows / 2, rows - min(below.count, rows))
        var above: [HistoryLine] = []
        index = selected - 1
        while index >= 0, above.count < needAbove {
            above = lines(index) + above
            index -= 1
        }
        let shown = Array((above.suffix(min(above.count, needAbove)) + below).prefix(rows))
        for (i, line) in shown.enumerated() {
            if line.style == .selected { g.fill(Rect(x: 0, y: y + i, width: area.width, height: 1), style: .selected) }
            g.put(line.text, x: 1, y: y + i, maxWidth: area.width - 2, style: line.style)
            layout.rows.append(RowHit(y: y + i, x: area.x, width: area.width, index: line.item))
        }
    }

    /// An entry's line, and its comments when they are open.
    static func entryLines(_ item: HistoryItem, expanded: Bool, product: String, f: Frame,
                           widths: (date: Int, creator: Int, product: Int, amount: Int, comments: Int), area: Rect) -> [HistoryLayoutCache.Line] {
        switch item {
        case let .entry(e):
            var line = Columns.fit(date(e.date, f.timeZone), to: widths.date) + " "
            line += Columns.fit(clean(e.creator), to: widths.creator) + " "
            line += Columns.fit(clean(product), to: widths.product) + " "
            line += Columns.fit(Wording.grouped(e.amount), to: widths.amount, alignRight: true) + " "
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
            let id = u.id.map { " \(clean($0))" } ?? ""
            return [.init(text: "⚠ unreadable entry\(id): \(clean(u.reason))", style: Style(foreground: .warning), isRow: true)]
        }
    }
}
