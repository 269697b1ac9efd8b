import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension Renderer {
    // MARK: Requests

    /// The Requests tab: the exchanges, newest first, and the selected one's detail (beside, or full size).
    static func requests(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let requests = f.app.requests
        if f.ui.requestDetailFull {
            requestDetail(&g, f, area)
            return
        }
        let listWidth = max(36, area.width / 2)
        let (list, detail) = area.columns(left: listWidth)
        // A request a failed check is about is marked ⚠.
        let flagged = Set(f.app.checks.records.filter { $0.outcome == .failed }.compactMap(\.requestID))
        let pinned = f.app.pinned
        // CODE and TIME are as wide as their widest value (`cancelled`, `120345 ms`): never cut; the
        // request's path gives way.
        let rows = requests.rows
        // Whose request each is, once the app's traffic is in the session (through the proxy).
        let fromW = f.app.proxy != nil || rows.contains(where: { $0.source == .app }) ? 4 : 0
        let codeW = Table.numberWidth(title: "CODE", values: rows.lazy.map { RequestOutcome($0).code })
        let timeW = Table.numberWidth(title: "TIME", values: rows.lazy.map { Self.time($0, f) }, minimum: 8)
        var columns: [Table.Column] = [.init(title: "REQUEST", width: max(1, list.width - codeW - timeW - 5 - (fromW > 0 ? fromW + 1 : 0))),
                                       .init(title: "CODE", width: codeW, alignRight: true), .init(title: "TIME", width: timeW, alignRight: true)]
        if fromW > 0 { columns.insert(.init(title: "FROM", width: fromW), at: 0) }
        var table = Table(
            columns: columns,
            count: requests.rows.count, selected: requests.selectedIndex
        ) { i in
            let e = requests.rows[i]
            // A finding seen again keeps only its first and last request on the Checks tab: each answer's own findings mark it too.
            let mark = !e.findings.isEmpty || e.requestID.map { flagged.contains($0) } == true ? "⚠ " : ""
            let request = (mark + "\(e.method) \(clean(e.path))", mark.isEmpty ? nil : Style(foreground: .warning))
            let outcome = RequestOutcome(e)
            let from: [(String, Style?)] = fromW > 0 ? [(e.source == .app ? "app" : "tool", e.source == .app ? Style(foreground: .accent) : .muted)] : []
            switch outcome {
            case .pending:
                // Sent, no answer yet: how long it has been waiting (it moves with the spinner's timer).
                return from + [request, (outcome.code, .muted), (Self.time(e, f), Style(foreground: .warning))]
            case .cancelled:
                // The app withdrew it: not the server's failure, nor the network's.
                return from + [request, (outcome.code, .muted), (Self.time(e, f), nil)]
            case .answered, .failed:
                return from + [request, (outcome.code, outcome.isFailure ? Style(foreground: .danger) : Style(foreground: .good)), (Self.time(e, f), nil)]
            }
        }
        // A request with a pinned answer: ◉ in the gutter (its detail says so in words).
        if !pinned.isEmpty {
            table.mark = { i in requests.rows[i].key.map(pinned.contains) == true ? "◉" : nil }
        }
        layout.rows = table.render(&g, list, empty: ("No requests yet.", false))
        requestDetail(&g, f, detail)
    }

    /// Draws the selected exchange's detail (`RequestDetail.lines`). Full size, it scrolls: the offset
    /// is clamped to the last screenful, as the update clamps it.
    static func requestDetail(_ g: inout Grid, _ f: Frame, _ detail: Rect) {
        let inner = Panel.inner(detail)
        guard let e = f.app.requests.selected else {
            Panel.draw(&g, detail, title: "Request", style: .muted, lines: [])
            return
        }
        let lines = requestDetailLines(e, f, width: inner.width)
        let scroll = f.ui.requestDetailFull ? min(max(0, f.ui.detailScroll), RequestDetail.maxScroll(lines: lines.count, height: inner.height)) : 0
        var footer: String?
        if lines.count > inner.height {
            footer = f.ui.requestDetailFull ? " \(scroll + 1)–\(min(lines.count, scroll + inner.height)) of \(lines.count) " : " \(f.keys(.toggle, in: .browse)): full size "
        }
        Panel.draw(&g, detail, title: "Request", style: .muted, lines: lines, scroll: scroll, footer: footer)
    }

    /// The TIME column: how long it took, or, while pending, how long it has waited.
    static func time(_ e: Exchange, _ f: Frame) -> String {
        e.isPending ? elapsed(since: e.startedAt, now: f.now) : "\(Int(e.duration / .milliseconds(1))) ms"
    }

    /// `2.4 s` since `start`.
    static func elapsed(since start: Date, now: Date) -> String { RequestDetail.elapsed(since: start, now: now) }

    /// The body area under the header and tabs, above the message and hint lines.
    static func body(_ f: Frame) -> Rect { Rect(x: 0, y: Viewport.bodyTop, width: f.width, height: Viewport.bodyHeight(screenHeight: f.height)) }

    static func requestDetailLines(_ e: Exchange, _ f: Frame, width: Int) -> [(String, Style)] {
        RequestDetail.lines(e, f.app, width: width, now: f.now, date: date(e.startedAt, f.timeZone), pinKeys: f.keys(.pin, in: .browse)).map { line in
            switch line.kind {
            case .title: (line.text, .bold)
            case .plain: (line.text, .plain)
            case .heading: (line.text, .muted)
            case .pinned: (line.text, Style(foreground: .accent))
            }
        }
    }
}
