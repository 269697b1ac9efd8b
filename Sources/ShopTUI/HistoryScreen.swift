import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

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
        table.titles(&g, area)
        let y = area.y + 1
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
        var names: [String: String] = [:]
        for pack in f.app.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        func lines(_ index: Int) -> [HistoryLine] {
            entryLines(items[index], index: index, history: history, f: f, names: names, widths: (dateW, creatorW, productW, amountW, commentsW), area: area)
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
    static func entryLines(_ item: HistoryItem, index: Int, history: HistoryState, f: Frame, names: [String: String],
                           widths: (date: Int, creator: Int, product: Int, amount: Int, comments: Int), area: Rect) -> [HistoryLine] {
        let selected = index == history.selectedIndex
        switch item {
        case let .entry(e):
            var line = Columns.fit(date(e.date, f.timeZone), to: widths.date) + " "
            line += Columns.fit(clean(e.creator), to: widths.creator) + " "
            line += Columns.fit(clean(names[e.product] ?? e.product), to: widths.product) + " "
            line += Columns.fit(Wording.grouped(e.amount), to: widths.amount, alignRight: true) + " "
            line += Columns.fit(e.comments.map { $0.isEmpty ? "–" : "\($0.count) ▸" } ?? "–", to: widths.comments, alignRight: true)
            var out: [HistoryLine] = [(line, selected ? .selected : .plain, index)]
            guard history.isExpanded(item, at: index) else { return out }
            let comments = e.comments ?? []
            if comments.isEmpty { out.append(("      (no comments)", .muted, index)) }
            for comment in comments {
                let who = comment.signature.map(clean) ?? "(anonymous)"
                let body = comment.body.map(clean) ?? "(no text)"
                for (k, part) in Columns.wrap("\(who): \(body)", to: max(10, area.width - 10)).enumerated() {
                    out.append(((k == 0 ? "    ↳ " : "      ") + part, k == 0 ? Style(foreground: .accent) : .plain, index))
                }
            }
            return out
        case let .unreadable(u):
            let id = u.id.map { " \(clean($0))" } ?? ""
            return [("⚠ unreadable entry\(id): \(clean(u.reason))", selected ? .selected : Style(foreground: .warning), index)]
        }
    }
}
