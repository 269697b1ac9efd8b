import TerminalText

/// Semantic colours; a backend maps them to what the terminal has (or to none: NO_COLOR).
public enum Color: UInt8, Sendable, Equatable, CaseIterable {
    case accent, good, warning, danger, muted
}

/// A cell's look, packed in 16 bits (foreground 3, background 3, four flags), so cells compare in
/// one instruction.
public struct Style: Sendable, Equatable, Hashable {
    var bits: UInt16

    public init(foreground: Color? = nil, background: Color? = nil, bold: Bool = false, reverse: Bool = false, dim: Bool = false, underline: Bool = false) {
        bits = UInt16(foreground.map { $0.rawValue + 1 } ?? 0) | UInt16(background.map { $0.rawValue + 1 } ?? 0) << 3
        if bold { bits |= 1 << 6 }
        if reverse { bits |= 1 << 7 }
        if dim { bits |= 1 << 8 }
        if underline { bits |= 1 << 9 }
    }

    public var foreground: Color? {
        get { Color(rawValue: UInt8(bits & 7) &- 1) }
        set { bits = bits & ~7 | UInt16(newValue.map { $0.rawValue + 1 } ?? 0) }
    }
    public var background: Color? {
        get { Color(rawValue: UInt8(bits >> 3 & 7) &- 1) }
        set { bits = bits & ~(7 << 3) | UInt16(newValue.map { $0.rawValue + 1 } ?? 0) << 3 }
    }
    public var bold: Bool { get { flag(6) } set { set(6, newValue) } }
    public var reverse: Bool { get { flag(7) } set { set(7, newValue) } }
    public var dim: Bool { get { flag(8) } set { set(8, newValue) } }
    public var underline: Bool { get { flag(9) } set { set(9, newValue) } }

    private func flag(_ bit: UInt16) -> Bool { bits & (1 << bit) != 0 }
    private mutating func set(_ bit: UInt16, _ on: Bool) { if on { bits |= 1 << bit } else { bits &= ~(1 << bit) } }

    public static let plain = Style()
    public static let bold = Style(bold: true)
    public static let selected = Style(reverse: true)
    public static let muted = Style(foreground: .muted, dim: true)
    public static let error = Style(foreground: .danger, bold: true)
    /// Text a find matched (on the selected row: underlined, keeping the selection's look).
    public static let match = Style(foreground: .warning, bold: true, reverse: true)
    public static let selectedMatch = Style(bold: true, reverse: true, underline: true)
}

/// What a cell shows, without a heap string: a Unicode scalar inline, or — for a cluster of several
/// scalars (é as e + ◌́, an emoji with a modifier) — a number in its grid's `Clusters` table. The
/// number means something only in the grid the cell belongs to: cells move between grids through
/// `Grid.copy`, which carries the cluster's text along.
public struct Glyph: Sendable, Equatable, Hashable {
    let raw: UInt32
    static let clusterBit: UInt32 = 1 << 31

    static let space = Glyph(raw: 0x20)
    /// The right half of a wide character.
    static let continuation = Glyph(raw: 0)

    init(raw: UInt32) { self.raw = raw }

    var isCluster: Bool { raw & Self.clusterBit != 0 }
    var clusterNumber: Int { Int(raw & ~Self.clusterBit) }
}

/// The grapheme clusters of one grid, numbered in the order they were first put. It belongs to its
/// grid (no table is shared between sessions or outlives the grids that use it), and stays bounded:
/// once it holds more numbers than twice the grid's cells, the grid renumbers the clusters its cells
/// still show and drops the rest (`Grid.reclaimClusters`). A cluster is never replaced by another
/// character for want of room.
struct Clusters: Sendable {
    private(set) var strings: [String] = []
    private var numbers: [String: UInt32] = [:]

    var count: Int { strings.count }

    mutating func number(of cluster: String) -> UInt32 {
        if let n = numbers[cluster] { return n }
        let n = UInt32(strings.count)
        strings.append(cluster)
        numbers[cluster] = n
        return n
    }

    func string(_ number: Int) -> String { strings[number] }

    /// The number `cluster` has in this table, if it has one.
    func existingNumber(of cluster: String) -> UInt32? { numbers[cluster] }
}

/// One terminal cell: a glyph, its display width (computed once, when text is put) and its style.
/// The cell after a wide character is a continuation (width 0) that a backend skips. 8 bytes. Its
/// text is read through its grid (`Grid.text(at:_:)`), which holds the clusters.
public struct Cell: Sendable, Equatable {
    public var glyph: Glyph
    public var width: UInt8
    public var style: Style

    init(glyph: Glyph, width: UInt8, style: Style) {
        self.glyph = glyph
        self.width = width
        self.style = style
    }

    public static let blank = Cell(glyph: .space, width: 1, style: .plain)
    static func blank(_ style: Style) -> Cell { Cell(glyph: .space, width: 1, style: style) }
    static func continuation(_ style: Style) -> Cell { Cell(glyph: .continuation, width: 0, style: style) }
}

public struct Rect: Sendable, Equatable {
    public var x: Int, y: Int, width: Int, height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = max(0, width)
        self.height = max(0, height)
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }

    public func contains(x px: Int, y py: Int) -> Bool { px >= x && px < maxX && py >= y && py < maxY }

    /// The rect cut in two side by side: `left` columns (a tab's list), and the rest (its detail).
    public func columns(left: Int) -> (left: Rect, right: Rect) {
        (Rect(x: x, y: y, width: left, height: height), Rect(x: x + left, y: y, width: width - left, height: height))
    }
}

/// A changed stretch of one row: cells `x..<x+count` of row `y` (never starting or ending inside a
/// wide character).
public struct Run: Sendable, Equatable {
    public var y: Int
    public var x: Int
    public var count: Int
}

/// A screen's worth of cells; widgets draw into it, a backend shows it (ratatui's Buffer).
public struct Grid: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]
    /// The text of the cells that show a cluster of several scalars.
    private(set) var clusters = Clusters()

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public var bounds: Rect { Rect(x: 0, y: 0, width: width, height: height) }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Two grids are equal when they show the same: same size, and cell by cell the same text,
    /// width and style (whatever numbers their clusters have in each grid).
    public static func == (a: Grid, b: Grid) -> Bool {
        a.width == b.width && a.height == b.height && b.diff(from: a).isEmpty
    }

    /// The text of the cell at (x, y) ("" for the right half of a wide character).
    public func text(at x: Int, _ y: Int) -> String { text(of: cells[y * width + x]) }

    func text(of cell: Cell) -> String {
        let raw = cell.glyph.raw
        if raw == 0 { return "" }
        if cell.glyph.isCluster { return clusters.string(cell.glyph.clusterNumber) }
        return Unicode.Scalar(raw).map { String(Character($0)) } ?? "\u{FFFD}"
    }

    /// Appends the scalars of the cell at `index` to `out` (a backend's wide string), without making a
    /// `String` for a single scalar.
    func appendScalars(at index: Int, to out: inout [UInt32]) {
        let glyph = cells[index].glyph
        if glyph.raw == 0 { return }
        if glyph.isCluster {
            out.append(contentsOf: clusters.string(glyph.clusterNumber).unicodeScalars.map(\.value))
        } else {
            out.append(glyph.raw)
        }
    }

    /// The glyph of `character` in this grid: its scalar, or its number in `clusters`.
    private mutating func glyph(_ character: Character) -> Glyph {
        let scalars = character.unicodeScalars
        if scalars.count == 1, let only = scalars.first { return Glyph(raw: only.value) }
        return cluster(String(character))
    }

    private mutating func cluster(_ text: String) -> Glyph {
        if clusters.count >= 2 * cells.count + 64 { reclaimClusters() }
        return Glyph(raw: clusters.number(of: text) | Glyph.clusterBit)
    }

    /// Renumbers the clusters the cells still show and forgets the others. Called when the table has
    /// grown past twice the cells (text put over text many times), so it costs nothing per put.
    mutating func reclaimClusters() {
        var kept = Clusters()
        for i in cells.indices where cells[i].glyph.isCluster {
            let number = kept.number(of: clusters.string(cells[i].glyph.clusterNumber))
            cells[i].glyph = Glyph(raw: number | Glyph.clusterBit)
        }
        clusters = kept
    }

    /// Fills `rect` with blanks of `style`; a wide character cut by its edge is blanked whole.
    public mutating func fill(_ rect: Rect, style: Style = .plain) {
        let x0 = max(0, rect.x), x1 = min(width, rect.maxX)
        guard x0 < x1 else { return }
        let blank = Cell.blank(style)
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            let row = y * width
            if cells[row + x0].width == 0, x0 > 0 { cells[row + x0 - 1] = .blank(cells[row + x0 - 1].style) }
            if cells[row + x1 - 1].width == 2, x1 < width { cells[row + x1] = .blank(cells[row + x1].style) }
            for x in x0..<x1 { cells[row + x] = blank }
        }
    }

    /// Copies the first `count` cells of `row`'s first line (laid out before by `put` into a one-row
    /// grid) to (x, y), clipped to the grid, with their clusters; `style` replaces theirs (a selected
    /// row). The cells must not start or end inside a wide character.
    public mutating func copy(_ row: Grid, count: Int, x: Int, y: Int, style: Style? = nil) {
        guard y >= 0, y < height, x >= 0, x < width, row.height > 0 else { return }
        let available = min(count, row.width)
        var n = min(available, width - x)
        if n < available, n > 0, row.cells[n].width == 0 { n -= 1 }  // never leave half a wide character
        let base = y * width + x
        for i in 0..<n {
            var cell = row.cells[i]
            if let style { cell.style = style }
            if cell.glyph.isCluster { cell.glyph = cluster(row.clusters.string(cell.glyph.clusterNumber)) }
            cells[base + i] = cell
        }
    }

    /// Changes the style of the cells in `rect`, keeping their text (a find's matches, highlighted).
    public mutating func restyle(_ rect: Rect, _ change: (Style) -> Style) {
        let x0 = max(0, rect.x), x1 = min(width, rect.maxX)
        guard x0 < x1 else { return }
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            for x in x0..<x1 { cells[y * width + x].style = change(cells[y * width + x].style) }
        }
    }

    /// Writes already-sanitized text at (x, y), clipped to `maxWidth` columns (and the grid), never
    /// splitting a wide character or a grapheme cluster. Each character's width is measured here, once;
    /// ASCII takes a fast path. Answers the columns used.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, maxWidth: Int? = nil, style: Style = .plain) -> Int {
        guard y >= 0, y < height, x < width else { return 0 }
        let limit = min(maxWidth ?? (width - x), width - max(x, 0))
        guard limit > 0 else { return 0 }
        var column = x
        var used = 0
        let utf8 = text.utf8
        var index = utf8.startIndex
        // ASCII: one byte, one column, no width table — unless a non-ASCII byte follows, which may be
        // a combining mark of the same cluster (e + ◌́): the cluster loop below takes it from there.
        while index < utf8.endIndex {
            let byte = utf8[index]
            guard byte < 0x80 else { break }
            let next = utf8.index(after: index)
            if next < utf8.endIndex, utf8[next] >= 0x80 { break }
            index = next
            guard byte >= 0x20, byte != 0x7F else { continue }  // sanitized already; never a control
            if used + 1 > limit { return used }
            if column >= 0 { set(Cell(glyph: Glyph(raw: UInt32(byte)), width: 1, style: style), x: column, y: y, width: 1) }
            column += 1
            used += 1
        }
        guard index < utf8.endIndex else { return used }
        // The rest, a grapheme cluster at a time.
        for character in text[index...] {
            let w = DisplayWidth.of(character)
            if w == 0 { continue }
            if used + w > limit { break }
            if column >= 0 { set(Cell(glyph: glyph(character), width: UInt8(w), style: style), x: column, y: y, width: w) }
            column += w
            used += w
        }
        return used
    }

    /// Stores `cell` of width `w` at (x, y), blanking the other half of any wide character it overwrites.
    private mutating func set(_ cell: Cell, x: Int, y: Int, width w: Int) {
        let row = y * width
        if cells[row + x].width == 0, x > 0 { cells[row + x - 1] = .blank(cells[row + x - 1].style) }
        if x + w < width, cells[row + x + w - 1].width == 2 { cells[row + x + w] = .blank(cells[row + x + w].style) }
        cells[row + x] = cell
        if w == 2 { cells[row + x + 1] = .continuation(cell.style) }
    }

    /// `text` truncated with `…` and padded to exactly `width` columns.
    @discardableResult
    public mutating func putFitted(_ text: String, x: Int, y: Int, width: Int, style: Style = .plain, alignRight: Bool = false) -> Int {
        guard width > 0 else { return 0 }
        return put(Columns.fit(text, to: width, alignRight: alignRight), x: x, y: y, maxWidth: width, style: style)
    }

    /// Draws a box border around `rect` with an optional title.
    public mutating func box(_ rect: Rect, title: String? = nil, style: Style = .plain) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        let horizontal = String(repeating: "─", count: rect.width - 2)
        put("┌" + horizontal + "┐", x: rect.x, y: rect.y, style: style)
        put("└" + horizontal + "┘", x: rect.x, y: rect.maxY - 1, style: style)
        for y in (rect.y + 1)..<(rect.maxY - 1) {
            put("│", x: rect.x, y: y, style: style)
            put("│", x: rect.maxX - 1, y: y, style: style)
        }
        if let title, rect.width > 6 {
            put(" " + Columns.truncate(title, to: rect.width - 6) + " ", x: rect.x + 2, y: rect.y, style: style.with(bold: true))
        }
    }

    /// The rows as plain text (continuations skipped, trailing spaces trimmed): what a snapshot stores.
    public var text: String {
        (0..<height).map { y in
            var line = row(y)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// One row as text, untrimmed.
    public func row(_ y: Int) -> String {
        var line = ""
        for x in 0..<width where self[x, y].width > 0 { line += text(at: x, y) }
        return line
    }
}

extension Style {
    func with(bold: Bool) -> Style {
        var s = self
        s.bold = bold
        return s
    }
}
