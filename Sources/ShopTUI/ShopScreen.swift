import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension Renderer {
    /// The Shop tab: the Audio Pack table and the selected pack's details.
    static func shop(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let packs = f.app.packs
        // The numbers take what the widest of every pack needs (filtering never narrows them), with
        // no cap; the name and creator share the rest, a third to the creator. Numbers too wide for
        // the list's usual share widen it (the details pane gives way).
        func price(_ pack: AudioPack) -> String { Wording.price(cents: pack.priceCents, currency: pack.currency.map(clean)) }
        let priceW = Table.numberWidth(title: "PRICE", values: packs.all.lazy.map(price), minimum: 7)
        let cheerW = Table.numberWidth(title: "CHEER", values: packs.all.lazy.map { $0.cheerTotal.map(Wording.grouped) ?? "" }, minimum: 8)
        let listWidth = min(area.width, max(40, area.width * 58 / 100, priceW + cheerW + 8))
        let (list, details) = area.columns(left: listWidth)
        let creatorW = max(min(8, max(1, (list.width - priceW - cheerW - 6) / 2)), (list.width - priceW - cheerW - 6) / 3)
        let nameW = max(1, list.width - creatorW - priceW - cheerW - 6)
        // Packs the server sent that could not be read: one line each under the table (never hidden),
        // named by their place in the answer as the warnings name them (`packs[7]`).
        let unreadable = packs.unreadable
        let noteLines = unreadable.isEmpty ? 0 : min(unreadable.count, max(1, list.height / 4))
        let tableArea = Rect(x: list.x, y: list.y, width: list.width, height: max(2, list.height - noteLines))
        var table = Table(
            columns: [.init(title: "NAME", width: nameW), .init(title: "CREATOR", width: creatorW),
                      .init(title: "PRICE", width: priceW, alignRight: true), .init(title: "CHEER", width: cheerW, alignRight: true)],
            count: packs.shown.rows.count, selected: packs.shown.selectedIndex
        ) { i in
            let pack = packs.shown.rows[i]
            return [(clean(pack.name), nil), (clean(pack.creator ?? ""), nil), (price(pack), nil), (pack.cheerTotal.map(Wording.grouped) ?? "", nil)]
        }
        let marks = f.app.watch.marks
        if !marks.isEmpty {
            table.mark = { i in
                switch marks.mark(pack: packs.shown.rows[i].identifier) {
                case .new?: return "+"
                case .changed?: return "Δ"
                case nil: return nil
                }
            }
        }
        let empty: (String, Bool)
        switch packs.list.phase {
        case .idle, .loading: empty = ("Loading Audio Packs… \(spinner[f.tick % spinner.count])", false)
        case let .failed(error): empty = ("Could not load the Audio Packs: \(clean(ErrorText.line(error)))", true)
        case .live, .cached: empty = (packs.filter.isEmpty ? "No Audio Packs." : "No pack matches “\(clean(packs.filter))”.", false)
        }
        layout.rows = table.render(&g, tableArea, empty: empty)
        for (i, u) in unreadable.prefix(noteLines).enumerated() {
            let more = i == noteLines - 1 && unreadable.count > noteLines ? " (and \(unreadable.count - noteLines) more: print packs lists them)" : ""
            let text = "⚠ unreadable pack \(ItemPosition.pack(u))\(u.id.map { " (\(clean($0)))" } ?? ""): \(clean(u.reason))"
            g.put(Columns.truncate(text, to: max(1, list.width - 2 - DisplayWidth.of(more))) + more, x: list.x + 1, y: tableArea.maxY + i,
                  maxWidth: list.width - 2, style: Style(foreground: .warning))
        }
        packDetails(&g, f, details)
    }

    static func packDetails(_ g: inout Grid, _ f: Frame, _ area: Rect) {
        let inner = Panel.inner(area)
        guard let pack = f.app.packs.shown.selected else { return Panel.draw(&g, area, title: "Details", style: .muted, lines: []) }
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
}
