import Synchronization
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
/// scalars (é as e + ◌́, an emoji with a modifier) — a number in the shared `Glyphs` table.
public struct Glyph: Sendable, Equatable, Hashable {
    let raw: UInt32
    static let clusterBit: UInt32 = 1 << 31

    static let space = Glyph(raw: 0x20)
    /// The right half of a wide character.
    static let continuation = Glyph(raw: 0)

    init(raw: UInt32) { self.raw = raw }

    init(_ character: Character) {
        let scalars = character.unicodeScalars
        if scalars.count == 1, let only = scalars.first {
            raw = only.value
        } else {
            raw = Glyphs.shared.intern(String(character)) | Self.clusterBit
        }
    }

    /// The text of the cell ("" for a continuation).
    public var text: String {
        if raw == 0 { return "" }
        if raw & Self.clusterBit != 0 { return Glyphs.shared.string(raw & ~Self.clusterBit) }
        return Unicode.Scalar(raw).map { String(Character($0)) } ?? "\u{FFFD}"
    }

    /// Appends the cell's scalars to `out` (the backend's wide string), without making a `String`.
    func append(to out: inout [UInt32]) {
        if raw == 0 { return }
        if raw & Self.clusterBit != 0 {
            out.append(contentsOf: Glyphs.shared.string(raw & ~Self.clusterBit).unicodeScalars.map(\.value))
        } else {
            out.append(raw)
        }
    }
}

/// Grapheme clusters seen on screen, numbered once. Bounded: past `capacity` distinct clusters a new
/// one shows as U+FFFD (hostile text cannot grow it without limit).
final class Glyphs: Sendable {
    static let shared = Glyphs()
    static let capacity = 1 << 16

    private struct Table {
        var strings: [String] = []
        var numbers: [String: UInt32] = [:]
    }

    private let table = Mutex(Table())

    func intern(_ cluster: String) -> UInt32 {
        table.withLock { t in
            if let n = t.numbers[cluster] { return n }
            guard t.strings.count < Self.capacity else { return UInt32.max & ~Glyph.clusterBit }
            let n = UInt32(t.strings.count)
            t.strings.append(cluster)
            t.numbers[cluster] = n
            return n
        }
    }

    func string(_ number: UInt32) -> String {
        table.withLock { t in Int(number) < t.strings.count ? t.strings[Int(number)] : "\u{FFFD}" }
    }
}

/// One terminal cell: a glyph, its display width (computed once, when text is put) and its style.
/// The cell after a wide character is a continuation (width 0) that a backend skips. 8 bytes.
public struct Cell: Sendable, Equatable {
    public var glyph: Glyph
    public var width: UInt8
    public var style: Style

    public init(_ character: Character, width: Int, style: Style = .plain) {
        glyph = Glyph(character)
        self.width = UInt8(width)
        self.style = style
    }

    init(glyph: Glyph, width: UInt8, style: Style) {
        self.glyph = glyph
        self.width = width
        self.style = style
    }

    public var text: String { glyph.text }

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

    /// Copies cells laid out before (by `put` into a one-row grid) to (x, y), clipped to the grid;
    /// `style` replaces theirs (a selected row). The cells must not start or end inside a wide character.
    public mutating func copy(_ row: [Cell], x: Int, y: Int, style: Style? = nil) {
        guard y >= 0, y < height, x >= 0, x < width else { return }
        var n = min(row.count, width - x)
        if n < row.count, n > 0, row[n].width == 0 { n -= 1 }  // never leave half a wide character
        let base = y * width + x
        for i in 0..<n {
            var cell = row[i]
            if let style { cell.style = style }
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
            if column >= 0 { set(Cell(character, width: w, style: style), x: column, y: y, width: w) }
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

    /// The cells that differ from `previous`, as runs (ratatui's diff, by runs of cells): everything
    /// when the size changed. A run never starts on the right half of a wide character, nor ends on
    /// its left half.
    public func diff(from previous: Grid?) -> [Run] {
        guard let previous, previous.width == width, previous.height == height else {
            return (0..<height).map { Run(y: $0, x: 0, count: width) }
        }
        var runs: [Run] = []
        cells.withUnsafeBufferPointer { new in
            previous.cells.withUnsafeBufferPointer { old in
                for y in 0..<height {
                    let row = y * width
                    var x = 0
                    while x < width {
                        guard new[row + x] != old[row + x] else { x += 1; continue }
                        var start = x
                        if new[row + start].width == 0, start > 0 { start -= 1 }  // include the wide character
                        var end = x + 1
                        while end < width, new[row + end] != old[row + end] { end += 1 }
                        if new[row + end - 1].width == 2, end < width { end += 1 }
                        if let last = runs.last, last.y == y, last.x + last.count >= start {
                            runs[runs.count - 1].count = end - last.x
                        } else {
                            runs.append(Run(y: y, x: start, count: end - start))
                        }
                        x = end
                    }
                }
            }
        }
        return runs
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
        for x in 0..<width where self[x, y].width > 0 { line += self[x, y].text }
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
