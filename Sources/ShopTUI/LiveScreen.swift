import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension Renderer {
    // MARK: Live

    /// The Live tab: the watch's timeline, newest first — each change, how it reconciled — and the
    /// selected event's detail beside it. Every mark has its word (not colour alone).
    static func live(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let watch = f.app.watch
        let listWidth = max(40, area.width * 3 / 5)
        let (list, detail) = area.columns(left: listWidth)
        var names: [String: String] = [:]
        for pack in f.app.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        let table = Table(
            columns: [.init(title: "TIME", width: 8), .init(title: "", width: 1), .init(title: "WHAT CHANGED", width: max(10, list.width - 13))],
            count: watch.timeline.count, selected: watch.timeline.selectedIndex
        ) { i in
            let e = watch.timeline.rows[i]
            let (mark, style) = liveMark(e)
            // An error keeps its request id in sight however narrow the column.
            let shown: String
            if case let .error(failure, then) = e.change {
                shown = MessageLine(lead: "", failure: failure, verdict: Sanitizer.line(then), requestID: failure.requestID, idBeforeVerdict: true)
                    .fitted(to: max(10, list.width - 13))
            } else if case let .appWrite(w) = e.change, let id = w.requestID {
                // The request id is what ties the row to the "(app, rq-…)" of the changes: kept in sight.
                let tail = " " + clean(id), width = max(10, list.width - 13)
                let head = clean("app " + w.request(names: names) + " " + w.outcome)
                shown = DisplayWidth.of(head) + DisplayWidth.of(tail) <= width ? head + tail
                    : Columns.truncate(head, to: max(1, width - DisplayWidth.of(tail))) + tail
            } else {
                shown = clean(e.text(names: names))
            }
            return [(clock(e.at, f.timeZone), nil), (mark, style), (shown, e.outcome == .flagged ? Style(foreground: .danger) : nil)]
        }
        let empty = watch.isOn ? "Watching: nothing has changed yet." : "Not watching. \(f.keys(.watch, in: .browse)) watches this user: every change the app makes shows here, reconciled or flagged."
        layout.rows = table.render(&g, list, empty: (empty, false))
        guard let e = watch.timeline.selected else {
            Panel.draw(&g, detail, title: "Event", style: .muted, lines: [])
            return
        }
        let width = Panel.inner(detail).width
        var lines: [(String, Style)] = []
        let (mark, style) = liveMark(e)
        var heading = style
        heading.bold = true
        lines.append(("\(mark) \(e.outcomeWord ?? e.kind)", heading))
        for part in Columns.wrap(clean(e.text(names: names)), to: width) { lines.append((part, .plain)) }
        lines.append(("", .plain))
        if case let .finding(check, _, _) = e.change, f.app.watch.pairing {
            lines.append(("blame: \(check.blame.words)", .bold))
        }
        if let causes = ChangeCause.list(e.causes) {
            lines.append(("explained by", .bold))
            for cause in causes { lines.append(("  " + clean(cause), .plain)) }
        }
        if !e.requestIDs.isEmpty {
            lines.append((f.app.watch.pairing ? "requests (oldest first)" : "reads (oldest first)", .bold))
            for id in e.requestIDs { lines.append(("  request id \(clean(id))", .plain)) }
        }
        if e.at != .distantPast { lines.append(("at \(date(e.at, f.timeZone))", .plain)) }
        Panel.draw(&g, detail, title: "Event", style: .muted, lines: lines)
    }

    /// ✔ reconciled, ✗ flagged, ◆ this tool's, ⚑ a note, ⇄ the app's write, ! an error, · anything else.
    static func liveMark(_ e: WatchEvent) -> (String, Style) {
        switch (e.outcome, e.change) {
        case (.flagged, _): return ("✗", Style(foreground: .danger, bold: true))
        case (.reconciled, _): return ("✔", Style(foreground: .good))
        case (.own, _): return ("◆", Style(foreground: .accent))
        case (_, .note): return ("⚑", Style(foreground: .warning))
        case (_, .appWrite): return ("⇄", Style(foreground: .accent))
        case (_, .error): return ("!", Style(foreground: .danger))
        default: return ("·", .muted)
        }
    }
}
