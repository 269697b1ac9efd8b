import Foundation
import ShopAPI
import TerminalText
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// Clusters of several scalars belong to the grid that shows them: no table is shared or fills up,
/// so no number of distinct clusters turns one into a character the server did not send.
@Suite struct ClusterTests {
    /// Letters of one column (Latin and Cyrillic, both cases), and combining marks of one class (230)
    /// with no decomposition of their own, so marks never reorder and no two clusters made of them are
    /// canonically equivalent. The sanitizer keeps two marks a letter.
    static let bases: [Unicode.Scalar] = [0x61...0x7A, 0x41...0x5A, 0x430...0x44F, 0x410...0x42F].flatMap { $0.compactMap(Unicode.Scalar.init) }
    static let marks: [Unicode.Scalar] = [0x300...0x314, 0x33D...0x33F, 0x342...0x342, 0x346...0x346, 0x34A...0x34C, 0x350...0x352,
                                          0x357...0x357, 0x35B...0x35B, 0x363...0x36F].flatMap { $0.compactMap(Unicode.Scalar.init) }

    /// The `n`th of 116 × 47² (256,244) distinct clusters: a letter and two marks.
    static func cluster(_ n: Int) -> String {
        let scalars = [bases[n % bases.count], marks[n / bases.count % marks.count], marks[n / (bases.count * marks.count) % marks.count]]
        return String(String.UnicodeScalarView(scalars))
    }

    @Test func theClustersAreDistinctAndOneColumnEach() {
        #expect(Self.bases.count * Self.marks.count * Self.marks.count >= 200_000)
        let sample = (0..<4_000).map { Self.cluster($0 * 61) }
        #expect(Set(sample).count == sample.count)
        #expect(sample.allSatisfy { $0.count == 1 && DisplayWidth.of($0) == 1 && Sanitizer.line($0) == $0 })
    }

    @Test func aGridPutOverAndOverKeepsItsTableBoundedAndItsTextExact() {
        var g = Grid(width: 40, height: 2)
        for start in stride(from: 0, to: 200_000, by: 40) {
            let line = (start..<(start + 40)).map(Self.cluster).joined()
            g.put(line, x: 0, y: start / 40 % 2)
            #expect(g.row(start / 40 % 2) == line)
            #expect(g.clusters.count <= 2 * g.cells.count + 64)
        }
        #expect(!g.text.contains("\u{FFFD}"))
    }

    @Test func theDiffComparesClustersByTextNotByNumber() {
        var a = Grid(width: 10, height: 1)
        a.put("é́x", x: 0, y: 0)
        var b = Grid(width: 10, height: 1)
        b.put("ȁ̂", x: 5, y: 0)  // takes number 0 in b, as é́ did in a
        b.put("é́x", x: 0, y: 0)
        b.put(" ", x: 5, y: 0)
        #expect(b.diff(from: a).isEmpty && a == b)  // same text under other numbers: no change
        var c = Grid(width: 10, height: 1)
        c.put("ȁ̂x", x: 0, y: 0)  // another cluster under number 0: a change
        #expect(c.diff(from: a) == [Run(y: 0, x: 0, count: 1)])
    }

    @Test func aCopiedRowBringsItsClustersAlong() {
        var row = Grid(width: 8, height: 1)
        let used = row.put("Zé́日ȁ̂", x: 0, y: 0)
        var g = Grid(width: 12, height: 2)
        g.put("ȁ̂", x: 0, y: 0)  // the target numbers its own clusters first
        g.copy(row, count: used, x: 2, y: 1)
        #expect(g.row(1) == "  Zé́日ȁ̂" + String(repeating: " ", count: 12 - 2 - used))
    }

    /// One session (its layout cache, its terminal) sees 200,000 distinct clusters go by in the
    /// creators of the history, and every frame the terminal shows is exactly the frame drawn.
    @MainActor
    @Test func twoHundredThousandDistinctClustersThroughOneSessionAndEveryFrameIsExact() throws {
        let backend = TestBackend(width: 120, height: 40)
        let terminal = Terminal(backend)  // the frame shown and the diff; the backend writes the runs
        let layouts = HistoryLayoutCache()
        let perCreator = 8, perFrame = 30
        var next = 0
        var frames = 0
        while next < 200_000 {
            var items: [HistoryItem] = []
            var creators: [String] = []
            for i in 0..<perFrame {
                let creator = (next..<(next + perCreator)).map(Self.cluster).joined()
                next += perCreator
                creators.append(creator)
                items.append(.entry(CheerHistoryEntry(id: "h-\(next)", creator: creator, amount: i + 1, product: "com.reiterate.pack.rain",
                                                      date: now.addingTimeInterval(Double(-next)), comments: nil)))
            }
            var app = AppState(context: ShopContext(environment: "staging", baseURL: "https://staging.reiterate.invalid", user: "qa-alice", readOnly: false))
            _ = ShopUpdate.update(&app, .start)
            if let token = app.token(for: .historyPage(1)) {
                _ = ShopUpdate.update(&app, .replied(token, .success(.history(CheerHistoryPage(items: items, page: 1, perPage: 50, totalPages: 1, totalCount: perFrame))), at: now))
            }
            _ = ShopUpdate.update(&app, .resize(width: 120, height: 40))
            _ = ShopUpdate.update(&app, .action(.history))
            let grid = Renderer.render(Frame(app: app, now: now, timeZone: utc, layouts: layouts))
            terminal.draw(grid)
            frames += 1
            let shown = backend.text
            #expect(shown == grid.text, "frame \(frames): the terminal shows another picture than the frame drawn")
            let missing = creators.filter { !shown.contains($0) }
            #expect(missing.isEmpty, "frame \(frames): \(missing.count) creators not shown as sent")
            #expect(!shown.contains("\u{FFFD}"), "frame \(frames) shows U+FFFD")
            if !missing.isEmpty || shown.contains("\u{FFFD}") { break }
        }
        #expect(next >= 200_000 && frames == backend.frames)
    }
}

/// One viewport: how far PgDn moves (the model) is what the list shows (the renderer), at every height.
@Suite struct ViewportTests {
    @Test func thePageTheModelMovesIsTheRowsTheRendererShows() {
        var app = loadedState()
        _ = ShopUpdate.update(&app, .action(.history))
        for height in Renderer.minHeight...50 {
            _ = ShopUpdate.update(&app, .resize(width: 100, height: height))
            let drawn = Renderer.draw(Frame(app: app, now: now, timeZone: utc))
            #expect(drawn.layout.rows.count == app.screen.pageSize, "height \(height)")
        }
    }

    @Test func centringKeepsTheSelectionMidScreenAndFillsAtTheEnds() {
        #expect(Viewport.centred(selected: 0, count: 100, rows: 10).offset == 0)
        #expect(Viewport.centred(selected: 50, count: 100, rows: 10).offset == 45)
        #expect(Viewport.centred(selected: 99, count: 100, rows: 10).offset == 90)
        #expect(Viewport.centred(selected: 3, count: 5, rows: 10).range(count: 5) == 0..<5)
    }
}
