import Foundation
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// The README's keys table says exactly what the keymap does (the same table dispatches keys, draws
/// the hint bar and the `?` overlay, and is printed by `reiterate-shop keys`).
@Suite struct KeymapReadmeTests {
    /// The table the README must hold, row by row.
    static func expectedRows(_ keymap: Keymap = .standard) -> [String] {
        keymap.bindings.map { b in
            let keys = b.keys.map { "`\($0.display)`" }.joined(separator: " ")
            return "| \(keys) | `\(b.action.rawValue)` | \(b.help) | \(Keymap.whereText(b)) |"
        }
    }

    @Test func readmeKeysTableMatchesTheKeymap() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let start = try #require(text.range(of: "<!-- keys-table"))
        let rows = text[start.upperBound...].split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }.dropFirst(2).map(String.init)
        let expected = Self.expectedRows()
        #expect(rows == expected, "README keys table; expected:\n\(expected.joined(separator: "\n"))")
    }
}
