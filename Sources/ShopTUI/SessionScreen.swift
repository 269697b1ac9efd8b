import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension Renderer {
    // MARK: Session

    /// The Session tab: the open test session as `session show` says it (findings by kind and blame,
    /// purchases, notes, coverage, timeline), scrolled by j/k; or how to open one.
    static func session(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let s = f.app.session
        guard let view = s.view else {
            let lines: [String] = !s.available ? ["Test sessions are not kept here: no state folder (set XDG_STATE_HOME or HOME)."]
                : s.phase == .unknown ? ["Reading the test session…"]
                : ["No test session is open.",
                   "\(f.keys(.sessionStart, in: .browse)) opens one (its name typed), or run `reiterate-shop session start --name NAME --build B --charter C`.",
                   "While it is open, every command and this TUI append to it; `reiterate-shop session close` (or \(f.keys(.sessionClose, in: .browse))) writes its bundle."]
            for (i, line) in lines.enumerated() where i < area.height {
                for (j, part) in Columns.wrap(clean(line), to: max(10, area.width - 2)).enumerated() where area.y + i * 2 + j < area.y + area.height {
                    g.put(part, x: area.x + 1, y: area.y + i * 2 + j, style: i == 0 ? .bold : .muted)
                }
            }
            layout.rows = []
            return
        }
        // Each line wrapped to the width (never cut), then the window from `scroll`.
        var rows: [(String, Style)] = []
        for line in view.lines {
            let style: Style = switch line.kind {
            case .heading: .bold
            case .muted: .muted
            case .warning: Style(foreground: .warning, bold: true)
            case .finding: Style(foreground: .danger)
            case .plain: .plain
            }
            // The summary's indents are its structure (a kind, then its subjects): kept, and a wrapped line indented further.
            let indent = String(repeating: " ", count: line.text.prefix { $0 == " " }.count)
            let parts = Columns.wrap(clean(String(line.text.drop { $0 == " " })), to: max(10, area.width - 2 - indent.count - 2))
            for (j, part) in parts.enumerated() { rows.append((indent + (j == 0 ? "" : "  ") + part, style)) }
        }
        let top = min(s.scroll, max(0, rows.count - area.height))
        for (i, row) in rows.dropFirst(top).prefix(area.height).enumerated() {
            g.put(Columns.truncate(row.0, to: area.width - 1), x: area.x + 1, y: area.y + i, style: row.1)
        }
        layout.rows = []
    }

    /// The tab bar's information on the Session tab.
    static func sessionInfo(_ f: Frame) -> String {
        guard let view = f.app.session.view else { return f.app.session.available ? "no session open" : "not kept here" }
        return "\(clean(view.name)) · \(view.findings) finding\(view.findings == 1 ? "" : "s") · open"
    }
}
