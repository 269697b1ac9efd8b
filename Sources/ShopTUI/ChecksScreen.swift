import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension Renderer {
    // MARK: Checks

    /// The Checks tab: every verification of a write (and finding), newest first, and the selected
    /// one's detail beside the list.
    static func checks(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let checks = f.app.checks
        let listWidth = max(40, area.width * 3 / 5)
        let (list, detail) = area.columns(left: listWidth)
        let table = Table(
            columns: [.init(title: "TIME", width: 8), .init(title: "", width: 1), .init(title: "CHECK", width: 18),
                      .init(title: "REQUEST", width: max(8, list.width - 32))],
            count: checks.records.count, selected: checks.list.selectedIndex
        ) { i in
            let r = checks.records[i]
            let mark = r.outcome == .passed ? ("✔", Style(foreground: .good)) : ("✗", Style(foreground: .danger, bold: true))
            // A finding seen again is one row: its count beside the check's name.
            let name = r.count > 1 ? "\(clean(r.name)) ×\(Wording.grouped(r.count))" : clean(r.name)
            // Findings on one answer at several places are told apart by the place, ahead of the request.
            var request = clean(r.request)
            if case let .place(.field(path, _))? = r.key?.at, !path.isEmpty { request = clean(path) + " · " + request }
            // On the app's traffic: who is at fault, ahead of the request.
            if let blame = r.blame { request = "\(blame.words) · " + request }
            return [(clock(r.at, f.timeZone), nil), (mark.0, mark.1), (name, nil), (request, nil)]
        }
        let empty = "No checks yet: a spend or a purchase is checked by reading again what it should have changed."
        layout.rows = table.render(&g, list, empty: (empty, false))
        guard let r = checks.list.selected else {
            Panel.draw(&g, detail, title: "Check", style: .muted, lines: [])
            return
        }
        let width = Panel.inner(detail).width
        var lines: [(String, Style)] = []
        lines.append((r.outcome == .passed ? "✔ \(clean(r.name)) passed" : "✗ \(clean(r.name)) failed",
                      r.outcome == .passed ? Style(foreground: .good, bold: true) : .error))
        for (label, value) in [("expected", r.expected), ("actual", r.actual)] {
            // Wrapped to leave room for the indent of the lines after the first: nothing is cut at the panel's edge.
            for (k, part) in Columns.wrap("\(label) \(clean(value))", to: max(1, width - 2)).enumerated() { lines.append((k == 0 ? part : "  " + part, .plain)) }
        }
        if let blame = r.blame {
            let why = r.source != .watchdog ? "" : blame == .app ? " (its request breaks the contract)" : blame == .server ? " (its answer to the app breaks the contract)" : ""
            lines.append(("blame: \(blame.words)\(why)",
                          Style(foreground: .warning, bold: true)))
        } else if r.check == .appError {
            lines.append(("the app's request, seen through the proxy", .muted))
        }
        if let cause = r.follows(among: checks.records) {
            for part in Columns.wrap(clean(cause), to: width) { lines.append((part, Style(foreground: .warning))) }
        }
        lines.append(("", .plain))
        for part in Columns.wrap(clean(r.request), to: width) { lines.append((part, .bold)) }
        if let first = r.first, r.count > 1 {
            lines.append(("seen \(Wording.grouped(r.count)) times", .bold))
            lines.append(("first request id \(clean(first.requestID ?? "—"))", .plain))
            lines.append(("  at \(date(first.at, f.timeZone))", .plain))
            if first.actual != r.actual {
                for (k, part) in Columns.wrap("  actual \(clean(first.actual))", to: width).enumerated() { lines.append((k == 0 ? part : "    " + part, .plain)) }
            }
            lines.append(("last request id \(clean(r.requestID ?? "—"))", .plain))
            lines.append(("  at \(date(r.at, f.timeZone))", .plain))
        } else if r.finding.requestIDs.count > 1 {
            // The reads it rests on (the watch's two rounds), first to last.
            for (k, part) in Columns.wrap("request ids " + r.finding.requestIDs.map(clean).joined(separator: ", "), to: width).enumerated() {
                lines.append((k == 0 ? part : "  " + part, .plain))
            }
            lines.append(("at \(date(r.at, f.timeZone))", .plain))
        } else {
            lines.append(("request id \(clean(r.requestID ?? "—"))", .plain))
            lines.append(("at \(date(r.at, f.timeZone))", .plain))
        }
        Panel.draw(&g, detail, title: "Check", style: .muted, lines: lines)
    }

    /// `14:03:27` in the display zone.
    static func clock(_ at: Date, _ zone: TimeZone) -> String { DateText.timeOfDay(at, zone) }
}
