import Foundation
import ShopCompare
import Testing
import TerminalText
@testable import ShopTUI
@testable import ShopViewModels

/// The diff view's JSON panes.
@Suite struct DiffScreenTests {
    /// A long string in a nested value wraps under its own key, not at the pane's left edge
    /// (Screenshots/diff.png: the pack's `"description"`).
    @Test func aWrappedStringKeepsItsLinesIndentation() {
        var app = Loop().app
        let long = "Rain drumming on a corrugated tin roof in the middle of a long summer night, recorded close"
        let a = SideDescription(name: "user:qa-alice", environment: "staging", user: "qa-alice", takenAt: nil)
        let b = SideDescription(name: "env:next-build", environment: "next-build", user: "qa-alice", takenAt: nil)
        let removed = Difference(.removed, DiffPath.root("packs").key("com.reiterate.pack.rain"), old: .object(["identifier": .string("com.reiterate.pack.rain"), "description": .string(long)]), label: "Rain")
        app.screen.focus = .diff(DiffViewState(result: DiffResult(what: .packs, a: a, b: b, differences: [removed])))
        let grid = Renderer.render(frame(app, width: 80, height: 40))
        // The left pane's text, row by row: what is between its borders, less the one space of margin.
        let pane = (0..<grid.height).compactMap { y -> String? in
            let row = grid.row(y)
            guard row.hasPrefix("│ "), let end = row.dropFirst().firstIndex(of: "│") else { return nil }
            return String(row[row.index(row.startIndex, offsetBy: 2)..<end])
        }
        guard let open = pane.firstIndex(where: { $0.hasPrefix("{") }), let close = pane.lastIndex(where: { $0.hasPrefix("}") }), open + 3 < close else {
            Issue.record("no JSON in the pane:\n\(pane.joined(separator: "\n"))"); return
        }
        // Inside the braces every row is indented as its key is, the wrapped pieces of the long string too.
        let inside = pane[(open + 1)..<close]
        #expect(inside.allSatisfy { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }, "\(pane.joined(separator: "\n"))")
        #expect(inside.contains { $0.hasPrefix("  \"description\": \"Rain") } && inside.contains { $0.hasPrefix("  corrugated") || $0.hasPrefix("  tin") })
    }

    /// The wrap alone: every piece of an indented line starts with that indentation, and no word is lost.
    @Test func wrapKeepsIndentation() {
        let line = "    \"description\": \"one two three four five six seven eight nine ten\""
        let pieces = Renderer.wrapIndented(line, to: 24)
        #expect(pieces.count > 1)
        #expect(pieces.allSatisfy { $0.hasPrefix("    ") && DisplayWidth.of($0) <= 24 })
        #expect(pieces.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") == line.trimmingCharacters(in: .whitespaces))
        // A line that fits is kept as it is.
        #expect(Renderer.wrapIndented("  \"a\": 1", to: 24) == ["  \"a\": 1"])
    }
}
