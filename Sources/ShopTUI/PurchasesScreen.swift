import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import ShopViewModels
import TerminalText

extension Renderer {
    // MARK: Purchases

    /// The Purchases tab: the App Store's transactions beside the backend's credits, one verdict each,
    /// and the selected line's verified transaction and matched exchanges (beside, or full size).
    static func purchases(_ g: inout Grid, _ f: Frame, _ area: Rect, _ layout: inout Layout) {
        let p = f.app.purchases
        if p.detailFull {
            purchaseDetail(&g, f, area)
            return
        }
        // The detail beside the list only where both have room; else the list alone (Enter: the detail).
        let beside = area.width >= 110
        let (list, detail) = beside ? area.columns(left: area.width * 2 / 3) : (area, Rect(x: area.x + area.width, y: area.y, width: 0, height: 0))
        let lines = p.list.rows
        let verdictW = min(16, Table.numberWidth(title: "VERDICT", values: lines.lazy.map { $0.verdict.rawValue }))
        let table = Table(
            // Every column but PRODUCT at its width, and the gaps between the five (and the gutter).
            columns: [.init(title: "TIME", width: 8), .init(title: "PRODUCT", width: max(8, list.width - 8 - 17 - verdictW - 6 - 6)),
                      .init(title: "TRANSACTION", width: 17), .init(title: "VERDICT", width: verdictW), .init(title: "BLAME", width: 6)],
            count: lines.count, selected: p.list.selectedIndex
        ) { i in
            let l = lines[i]
            let product = clean(l.productID ?? "?") + (l.quantity.map { $0 > 1 ? " ×\($0)" : "" } ?? "")
            let blame = l.blame?.short ?? ""
            return [(l.at.map { clock($0, f.timeZone) } ?? "", nil), (product, nil), (clean(l.transactionID), nil),
                    (l.verdict.rawValue, verdictStyle(l)), (blame, l.blame == nil ? nil : Style(foreground: .warning))]
        }
        let empty: String = switch p.phase {
        case .off: "No App Store here: the environment has no [appstore] table (docs/ledger.md)."
        case .idle, .loading: "Reading the App Store…"
        case let .failed(words): "The App Store could not be read: \(clean(words))"
        case .loaded: "No purchase yet: the App Store lists none for the tester, and the backend credited none."
        }
        layout.rows = table.render(&g, list, empty: (empty, p.phase == .loading))
        if beside { purchaseDetail(&g, f, detail) }
    }

    /// The tab bar's information on the Purchases tab: how many lines and findings, and how old the read is.
    static func purchasesInfo(_ f: Frame, spinner: String) -> String {
        let p = f.app.purchases
        switch p.phase {
        case .off: return "no App Store table"
        case .idle: return "not read yet"
        case .loading: return "reading the App Store \(spinner)"
        case .loaded, .failed:
            let count = p.list.count, findings = p.view?.ledger.findings ?? 0
            var info = "\(count) line\(count == 1 ? "" : "s") · \(findings) finding\(findings == 1 ? "" : "s")"
            if let at = p.view?.readAt { info += " · read \(Wording.age(of: at, now: f.now))" }
            if case .failed = p.phase { info += " · last read failed" }
            return info
        }
    }

    static func verdictStyle(_ line: LedgerLine) -> Style {
        switch line.verdict {
        case .credited: Style(foreground: .good)
        case .refunded where !line.isFinding: Style(foreground: .accent)
        case .notChecked: Style(foreground: .warning)
        default: line.isFinding ? Style(foreground: .danger, bold: true) : .plain
        }
    }

    /// The selected line: its verdict in words, the App Store's record decoded (verified), and the
    /// backend's exchanges it was matched with.
    static func purchaseDetail(_ g: inout Grid, _ f: Frame, _ area: Rect) {
        let p = f.app.purchases
        guard let line = p.list.selected, let view = p.view else {
            Panel.draw(&g, area, title: "Purchase", style: .muted, lines: [])
            return
        }
        // Wrapped lines go on indented: each part fits the width with its indent.
        let width = max(8, Panel.inner(area).width - 2)
        var lines: [(String, Style)] = []
        func add(_ text: String, _ style: Style = .plain) {
            for (k, part) in Columns.wrap(text, to: width).enumerated() { lines.append((k == 0 ? part : "  " + part, style)) }
        }
        let blame = line.blame.map { " — \($0.words)" } ?? ""
        add("\(line.verdict.rawValue)\(blame)", line.isFinding ? .error : verdictStyle(line).with(bold: true))
        add(clean(line.words))
        lines.append(("", .plain))
        if let t = view.transactions[line.transactionID] {
            lines.append(("App Store (signature and chain verified)", .bold))
            add("transaction: \(clean(t.transactionID))")
            add("product: \(clean(t.productID)) × \(t.quantity) (\(clean(t.type)))")
            add("bundle: \(clean(t.bundleID)), \(clean(t.environment))")
            if let at = t.purchaseDate { add("bought: \(date(at, f.timeZone))") }
            add("signed: \(date(t.signedDate, f.timeZone))")
            if let revoked = t.revocationDate {
                add("refunded: \(date(revoked, f.timeZone))" + (t.revocationReason.map { " (reason \($0))" } ?? ""), Style(foreground: .warning))
            }
            if let token = t.appAccountToken { add("app account: \(clean(token))") }
        } else if line.verdict == .notVerified {
            add("App Store: the record is not believed; \(clean(line.transactionID)) is what it claims", Style(foreground: .warning))
        } else {
            add("App Store: no record of it for this customer", Style(foreground: .warning))
        }
        lines.append(("", .plain))
        let posts = view.posts(of: line)
        lines.append(("Backend: \(posts.count) post\(posts.count == 1 ? "" : "s") of it", .bold))
        for e in posts {
            let status = e.status.map(String.init) ?? "no answer"
            let balance = e.balance.map { " → balance \(Wording.grouped($0))" } ?? ""
            add("\(e.at.map { clock($0, f.timeZone) } ?? "--:--:--") \(e.source) \(status)\(balance) \(clean(e.requestID ?? "—"))")
        }
        Panel.draw(&g, area, title: "Purchase", style: .muted, lines: lines)
    }
}
