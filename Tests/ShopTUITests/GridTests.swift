import Foundation
import Testing
@testable import ShopTUI

@Suite struct GridTests {
    @Test func aCellIsEightBytesWithNoHeapString() {
        #expect(MemoryLayout<Cell>.stride == 8)
        #expect(MemoryLayout<Style>.size == 2)
    }

    @Test func textRoundTripsThroughGlyphsAndClustersKeepTheirMarks() {
        var g = Grid(width: 30, height: 1)
        let used = g.put("ab é́ Z̵̡ 日本 👩‍👩‍👧 e", x: 0, y: 0)
        #expect(g.row(0).hasPrefix("ab é́ Z̵̡ 日本 "))
        #expect(g.text(at: 3, 0) == "é́" && g[3, 0].width == 1)
        #expect(g[7, 0].width == 2 && g[8, 0].width == 0)  // 日 and its continuation
        #expect(used == DisplayWidthProbe.columns(g))
    }

    @Test func styleBitsRoundTrip() {
        for fg in [nil] + Color.allCases.map(Optional.some) {
            for bg in [nil, Color.danger] {
                let s = Style(foreground: fg, background: bg, bold: true, reverse: false, dim: true, underline: true)
                #expect(s.foreground == fg && s.background == bg && s.bold && !s.reverse && s.dim && s.underline)
            }
        }
        #expect(Style.plain != Style.muted && Style.selected.reverse)
    }

    @Test func theDiffIsRunsOfChangedCells() {
        var a = Grid(width: 20, height: 3)
        a.put("hello world", x: 0, y: 1)
        var b = a
        #expect(b.diff(from: a).isEmpty)
        b.put("W", x: 6, y: 1)
        #expect(b.diff(from: a) == [Run(y: 1, x: 6, count: 1)])
        b.put("xyz", x: 10, y: 2, style: .bold)
        #expect(b.diff(from: a) == [Run(y: 1, x: 6, count: 1), Run(y: 2, x: 10, count: 3)])
        // A style change alone is a change.
        var c = a
        c.put("hello", x: 0, y: 1, style: .selected)
        #expect(c.diff(from: a) == [Run(y: 1, x: 0, count: 5)])
        // Another size: everything.
        #expect(Grid(width: 20, height: 2).diff(from: a).count == 2)
        #expect(a.diff(from: nil).count == 3)
    }

    @Test func aRunNeverSplitsAWideCharacter() {
        var a = Grid(width: 10, height: 1)
        a.put("ab日cd", x: 0, y: 0)
        var b = a
        b.put("本", x: 2, y: 0)  // replaces 日: both halves change
        #expect(b.diff(from: a) == [Run(y: 0, x: 2, count: 2)])
        var c = a
        c.put("x", x: 3, y: 0)  // over the right half of 日: the left half is blanked, the run starts there
        let runs = c.diff(from: a)
        #expect(runs == [Run(y: 0, x: 2, count: 2)] && c.text(at: 2, 0) == " " && c.text(at: 3, 0) == "x")
    }
}

enum DisplayWidthProbe {
    /// Columns the row's non-blank cells reach.
    static func columns(_ g: Grid) -> Int {
        var last = 0
        for x in 0..<g.width where g.text(at: x, 0) != " " && g[x, 0].width > 0 { last = x + Int(g[x, 0].width) }
        return last
    }
}
