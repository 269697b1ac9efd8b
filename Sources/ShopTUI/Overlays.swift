import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension Renderer {
    // MARK: Overlays

    static func centered(_ f: Frame, width: Int, height: Int) -> Rect {
        Overlay.centered(in: Rect(x: 0, y: 0, width: f.width, height: f.height), width: width, height: height)
    }

    static func help(_ g: inout Grid, _ f: Frame) {
        let bindings = f.keymap.helpRows(for: f.app)
        let rect = centered(f, width: 96, height: bindings.count + 4)
        g.fill(rect)
        g.box(rect, title: "Keys", style: .bold)
        // Every binding is shown: in as many columns as the height needs.
        let rows = max(1, rect.height - 3)
        let columns = max(1, (bindings.count + rows - 1) / rows)
        let perColumn = (bindings.count + columns - 1) / columns
        let columnWidth = (rect.width - 4) / columns
        // Each column's keys as wide as its widest (the keys matter more than their words when space is short).
        let keyWidths = bindings.map { DisplayWidth.of($0.keys.map(\.display).joined(separator: " ")) }
        for (i, b) in bindings.enumerated() {
            let column = i / perColumn, row = i % perColumn
            guard row < rows else { continue }
            let inColumn = keyWidths[(column * perColumn)..<min(bindings.count, (column + 1) * perColumn)]
            let keysW = max(1, min(inColumn.max() ?? 1, max(columnWidth - 4, columnWidth / 2)))
            let x = rect.x + 2 + column * columnWidth
            g.putFitted(b.keys.map(\.display).joined(separator: " "), x: x, y: rect.y + 1 + row, width: keysW, style: .bold)
            g.put(b.help + b.scope, x: x + keysW + 1, y: rect.y + 1 + row, maxWidth: columnWidth - keysW - 2)
        }
        let close = f.keymap.bindings.first { $0.action == .back && $0.modes.contains(.help) }?.keys.first?.display ?? "?"
        g.put("\(close) closes", x: rect.x + 2, y: rect.maxY - 2, style: .muted)
    }

    /// The mark of a form sent as typed: a glyph and words, never its colour alone.
    static let asTypedMark = "⚠ SEND AS TYPED: the client's checks are off for this write"

    static func dialog(_ g: inout Grid, _ f: Frame, _ action: ActionState) {
        let width = 64
        var lines: [(String, Style)] = []
        let warning = Style(foreground: .warning, bold: true)
        if action.asTyped {
            switch action.phase {
            case .editing, .confirming: lines.append((asTypedMark, warning))
            default: break
            }
        }
        let title: String
        let where_ = "\(f.app.context.environment.uppercased()) · \(clean(f.app.context.user))"
        switch action.phase {
        case let .editing(form, note):
            if form.isSpend {
                title = "Spend cheer"
                // Sent as typed, the pack is the product typed: named if it is in the list.
                let product = form[2]
                let on = action.asTyped ? f.app.packs.all.first { $0.identifier == product }.map { clean($0.name) } ?? "a product not in the pack list"
                                        : clean(form.packName ?? product)
                lines.append(("On: " + on, .bold))
                lines.append((where_, .muted))
            } else {
                title = "Buy cheer"
                lines.append((where_, .muted))
            }
            lines.append(("", .plain))
            // Sent as typed, a spend's product is a field too: any id, in the pack list or not.
            let shown = form.isSpend && !action.asTyped ? 2 : form.text.count
            for (i, label) in form.labels.prefix(shown).enumerated() { lines.append(field(label, form[i], active: action.field == i)) }
            if form.isSpend { for line in Columns.wrap(f.app.formBalanceWords(now: f.now), to: width - 4) { lines.append((line, .muted)) } }
            if action.transactionIsMadeUp {
                for line in Columns.wrap("made up by this tool: no App Store purchase has this id (type a real one to hold it to its record)", to: width - 4) {
                    lines.append((line, .muted))
                }
            }
            lines.append(("", .plain))
            // Each with its glyph: the colour alone would not tell a refusal from the form's own lines.
            switch note {
            // Wrapped, never cut: a refusal's reasons can be longer than the dialog is wide.
            case let .problem(text): for line in Columns.wrap("✖ " + clean(text), to: width - 4) { lines.append((line, .error)) }
            case let .kept(text): for line in Columns.wrap("⚠ " + clean(text), to: width - 4) { lines.append((line, warning)) }
            case let .reading(text): for line in Columns.wrap(clean(text) + " " + String(spinner[f.tick % spinner.count]), to: width - 4) { lines.append((line, .muted)) }
            case nil: break
            }
        case let .confirming(_, summary):
            title = "Confirm"
            for line in Columns.wrap(clean(summary), to: width - 4) { lines.append((line, .bold)) }
            lines.append(("", .plain))
            lines.append(("\(f.keys(.confirm, in: .confirm)): confirm · \(f.keys(.cancel, in: .confirm)): cancel", .muted))
        case let .pending(_, summary, _):
            title = "Sending"
            for line in Columns.wrap(clean(summary), to: width - 4) { lines.append((line, .plain)) }
            lines.append(("", .plain))
            lines.append(("sending… \(spinner[f.tick % spinner.count])", .muted))
        case .succeeded, .failed:
            // The answer's words until the reads after the write are back (nothing is claimed: the balance
            // may be stale), then the outcome's (`WriteFlow.shownOutcome`).
            let shown = f.app.write.shownOutcome ?? (text: "", succeeded: false, requestID: nil)
            let checking = f.app.write.verification != nil
            title = f.app.write.shownTitle
            // Green only once the reads after the write agree: "Checking" claims nothing yet. A refusal
            // every check agrees with is no error.
            let refused = !checking && f.app.write.outcome?.refusal != nil
            let style = checking ? (shown.succeeded ? .bold : .plain) : shown.succeeded || f.app.write.outcome?.refusal == .expected ? Style(foreground: .good, bold: true)
                : refused ? .bold : .error
            for line in Columns.wrap(clean(shown.text), to: width - 4) { lines.append((line, style)) }
            if checking { lines.append(("reading the balance again… \(spinner[f.tick % spinner.count])", .muted)) }
            lines.append(("", .plain))
            lines.append(("\(f.keys(.dismiss, in: .outcome)) closes", .muted))
        }
        // As tall as its lines (the mark and a product field sent as typed add two), never shorter than 11.
        let rect = centered(f, width: width, height: max(11, lines.count + 2))
        Overlay.dialog(&g, rect, title: title, lines: lines)
    }

    static func field(_ label: String, _ value: String, active: Bool) -> (String, Style) {
        let text = Columns.fit(label + ":", to: 13) + "[" + clean(value) + (active ? "▏" : "") + "]"
        return (text, active ? .bold : .plain)
    }
}
