import Foundation
import Testing
@testable import ShopTUI

/// The README's keys table says exactly what the keymap does.
@Suite struct KeymapReadmeTests {
    @Test func readmeKeysTableMatchesTheKeymap() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: "<!-- keys-table"))
        let rows = text[start.upperBound...].split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }.dropFirst(2)
        let table = rows.map { row -> String in
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            return cells.joined(separator: " :: ")
        }
        let expected = Keymap.bindings.map { b -> String in
            let keys = b.keys.map { "`\($0)`" }.joined(separator: " ")
            let scope = b.tabs.isEmpty ? "" : " (" + b.tabs.map(\.title).joined(separator: ", ") + ")"
            return "\(keys) :: \(b.help)\(scope)"
        }
        #expect(table == expected)
    }
}
