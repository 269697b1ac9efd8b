import Foundation
import JSONTokens
import ShopCompare
import ShopViewModels
import TerminalText

extension Renderer {
    /// The diff view (`D`): one row a difference, marked by a glyph and a word (never colour alone),
    /// and the selected one's values side by side, A on the left and B on the right.
    static func diff(_ g: inout Grid, _ f: Frame, _ view: DiffViewState, _ area: Rect) {
        let result = view.result
        func side(_ s: SideDescription) -> String { clean(s.name) + (s.user.map { s.name.contains($0) ? "" : " (\(clean($0)))" } ?? "") }
        var title = "\(result.what.rawValue): A \(side(result.a)) · B \(side(result.b))"
        if result.pastTheEdge > 0 { title += " · \(result.pastTheEdge) entries near the last page not judged" }
        g.put(title, x: area.x + 1, y: area.y, maxWidth: area.width - 2, style: .bold)
        let rest = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        guard !result.differences.isEmpty else {
            g.put("The same: no difference." + (result.pastTheEdge > 0 ? " (\(result.pastTheEdge) entries near the last page compared were not judged.)" : ""),
                  x: rest.x + 1, y: rest.y + 1, maxWidth: rest.width - 2, style: Style(foreground: .good))
            return
        }
        let listHeight = max(3, rest.height * 55 / 100)
        let list = Rect(x: rest.x, y: rest.y, width: rest.width, height: listHeight)
        let detail = Rect(x: rest.x, y: rest.y + listHeight, width: rest.width, height: rest.height - listHeight)
        let kindW = 9
        let table = Table(columns: [.init(title: "CHANGE", width: kindW), .init(title: "WHERE", width: list.width - kindW - 4)],
                          count: result.differences.count, selected: view.differences.selectedIndex) { i in
            let d = result.differences[i]
            let (mark, style) = Self.mark(d.kind)
            var whereText = clean(d.path.description)
            if let label = d.label { whereText += "  (" + clean(label) + ")" }
            return [(mark + " " + d.kind.rawValue, style), (whereText, nil)]
        }
        table.render(&g, list)
        guard let selected = view.differences.selected else { return }
        let half = detail.width / 2
        let left = Rect(x: detail.x, y: detail.y, width: half, height: detail.height)
        let right = Rect(x: detail.x + half, y: detail.y, width: detail.width - half, height: detail.height)
        let inner = Panel.inner(left)
        func lines(_ value: JSONValue?, absent: String) -> [(String, Style)] {
            guard let value else { return [(absent, .muted)] }
            var w = JSONWriter()
            w.value(value)
            // Indented as JSON; a line too wide is wrapped under its own indentation.
            return Sanitizer.lines(JSONPretty.format(w.text)).flatMap { wrapIndented($0, to: inner.width) }.map { ($0, Style.plain) }
        }
        switch selected.kind {
        case .moved:
            let places = selected.places.map { ("place \($0.old + 1)", "place \($0.new + 1)") } ?? ("", "")
            Panel.draw(&g, left, title: "A · " + clean(result.a.name), style: .muted, lines: [(places.0, .plain)])
            Panel.draw(&g, right, title: "B · " + clean(result.b.name), style: .muted, lines: [(places.1, .plain)])
        default:
            Panel.draw(&g, left, title: "A · " + clean(result.a.name), style: .muted, lines: lines(selected.old, absent: "(not there)"))
            Panel.draw(&g, right, title: "B · " + clean(result.b.name), style: .muted, lines: lines(selected.new, absent: "(not there)"))
        }
    }

    /// A JSON line as wide as `width` at most: a line too wide is wrapped, and each piece keeps the line's
    /// indentation, so a long string stays under its key (an indentation past half the width is not kept).
    static func wrapIndented(_ line: String, to width: Int) -> [String] {
        guard DisplayWidth.of(line) > width else { return [line] }
        let indent = String(line.prefix { $0 == " " })
        guard !indent.isEmpty, indent.count <= width / 2 else { return Columns.wrap(line, to: width) }
        return Columns.wrap(String(line.dropFirst(indent.count)), to: width - indent.count).map { indent + $0 }
    }

    /// `~ changed`, `+ added`, `− removed`, `↕ moved`.
    static func mark(_ kind: Difference.Kind) -> (String, Style) {
        switch kind {
        case .changed: return ("~", Style(foreground: .warning))
        case .added: return ("+", Style(foreground: .good))
        case .removed: return ("−", Style(foreground: .danger))
        case .moved: return ("↕", Style(foreground: .accent))
        }
    }
}
