import Foundation
import JSONTokens
import ShopAPI
import ShopViewModels
import TerminalText

/// Text and JSON renderings for `print`. Every server string passes the sanitizer before it is printed.
public enum Output {
    public static func balance(_ balance: CheerBalance, user: String) -> String {
        "\(Wording.grouped(balance.balance)) cheer  (\(Sanitizer.line(user)))\n"
    }

    public static func packs(_ list: AudioPackList) -> String {
        var rows = list.packs.map { p in
            [
                Sanitizer.line(p.name), Sanitizer.line(p.creator ?? ""), price(p.priceCents, p.currency),
                p.cheerTotal.map(Wording.grouped) ?? "", Sanitizer.line(p.identifier),
            ]
        }
        rows.insert(["NAME", "CREATOR", "PRICE", "CHEER", "IDENTIFIER"], at: 0)
        var text = table(rows, caps: [36, 24, 9, 9, 40], rightAligned: [2, 3])
        for u in list.unreadable {
            text += "⚠ unreadable pack \(ItemPosition.pack(u))\(u.id.map { " (\(Sanitizer.line($0)))" } ?? ""): \(Sanitizer.line(u.reason))\n"
        }
        text += list.unreadable.isEmpty
            ? "\(list.packs.count) packs\n"
            : "\(list.packs.count) of \(list.packs.count + list.unreadable.count) packs (\(list.unreadable.count) unreadable)\n"
        return text
    }

    public static func history(_ page: CheerHistoryPage, user: String) -> String {
        var rows: [[String]] = [HistoryColumns.titles]
        var notes: [Int: String] = [:]
        for item in page.items {
            switch item {
            case let .entry(e):
                rows.append(HistoryColumns.printed(e, zone: .current))
            case let .unreadable(u):
                notes[rows.count] = HistoryColumns.unreadable(u, page: page.page)
                rows.append(["", "", "", "", ""])
            }
        }
        let lines = table(rows, caps: [16, 24, 40, 8, 8], rightAligned: [3, 4]).split(separator: "\n", omittingEmptySubsequences: false)
        var text = ""
        for (i, line) in lines.enumerated() where i < rows.count {
            text += (notes[i] ?? String(line)) + "\n"
        }
        if page.items.isEmpty { text += "(no cheers on this page)\n" }
        text += "page \(Wording.grouped(page.page)) of \(Wording.grouped(page.totalPages)) · \(Wording.grouped(page.totalCount)) cheers · \(Sanitizer.line(user))\n"
        return text
    }

    /// Columns padded by display width (wide characters count 2); a text column cut with `…` at its
    /// cap, a right-aligned (number) column as wide as its widest value: a number is never cut.
    public static func table(_ rows: [[String]], caps: [Int], rightAligned: Set<Int>) -> String {
        guard let columns = rows.first?.count else { return "" }
        let widths = (0..<columns).map { c in
            let widest = rows.map { DisplayWidth.of($0[c]) }.max() ?? 0
            return rightAligned.contains(c) ? widest : min(caps[c], widest)
        }
        return rows.map { row in
            (0..<columns).map { c in
                c == columns - 1 && !rightAligned.contains(c)
                    ? Columns.truncate(row[c], to: widths[c])
                    : Columns.fit(row[c], to: widths[c], alignRight: rightAligned.contains(c))
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    public static func price(_ cents: Int?, _ currency: String?) -> String {
        Wording.price(cents: cents, currency: currency.map(Sanitizer.line))
    }

    /// One line of JSON (JSON Lines), escaped as `json`.
    public static func jsonLine<T: Encodable>(_ value: T) throws -> String {
        try json(value, pretty: false)
    }

    /// One history entry as a line of JSON, written directly (`print history --all --json` writes a
    /// million): the same keys, order and escaping as `json`.
    public static func jsonLine(_ e: CheerHistoryEntry) -> String {
        var w = JSONWriter()
        w.raw("{\"amount\":")
        w.int(e.amount)
        w.raw(",\"comments\":")
        if let comments = e.comments {
            w.raw("[")
            for (i, c) in comments.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"body\":")
                w.string(c.body)
                w.raw(",\"signature\":")
                w.string(c.signature)
                w.raw("}")
            }
            w.raw("]")
        } else {
            w.null()
        }
        w.raw(",\"creator\":")
        w.string(e.creator)
        w.raw(",\"date\":")
        w.string(ISO8601.format(e.date))
        if let id = e.id {
            w.raw(",\"id\":")
            w.string(id)
        }
        w.raw(",\"product\":")
        w.string(e.product)
        w.raw("}\n")
        return w.text
    }

    /// Pretty JSON with snake_case keys; invisible and control characters escaped so none reach stdout
    /// raw (`JSONWriter.mustEscape`). Printable ASCII, most of any answer, is passed on as it is.
    public static func json<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        guard text.utf8.contains(where: { $0 >= 0x7F }) else { return text + "\n" }
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v >= 0x7F, JSONWriter.mustEscape(scalar) {
                if v > 0xFFFF {  // JSON escapes beyond the BMP as a UTF-16 surrogate pair
                    let u = v - 0x10000
                    out += String(format: "\\u%04x\\u%04x", 0xD800 + (u >> 10), 0xDC00 + (u & 0x3FF))
                } else {
                    out += String(format: "\\u%04x", v)
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\n"
    }
}

/// Where a run's lines go: stdout's (`out`: what the run answers) and stderr's (`err`: progress, notes and
/// warnings). The executable passes the terminal's; a test collects them.
public struct OutputLines: Sendable {
    public var out: @Sendable (String) -> Void
    public var err: @Sendable (String) -> Void

    public init(out: @escaping @Sendable (String) -> Void, err: @escaping @Sendable (String) -> Void) {
        self.out = out
        self.err = err
    }
}
