import TerminalText

/// Semantic colours; a backend maps them to what the terminal has (or to none: NO_COLOR).
public enum Color: UInt8, Sendable, Equatable, CaseIterable {
    case accent, good, warning, danger, muted
}

public struct Style: Sendable, Equatable {
    public var foreground: Color?
    public var background: Color?
    public var bold = false
    public var reverse = false
    public var dim = false
    public var underline = false

    public init(foreground: Color? = nil, background: Color? = nil, bold: Bool = false, reverse: Bool = false, dim: Bool = false, underline: Bool = false) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.reverse = reverse
        self.dim = dim
        self.underline = underline
    }

    public static let plain = Style()
    public static let bold = Style(bold: true)
    public static let selected = Style(reverse: true)
    public static let muted = Style(foreground: .muted, dim: true)
    public static let error = Style(foreground: .danger, bold: true)
}

/// One terminal cell: a grapheme cluster and its display width. The cell after a wide character is a
/// continuation (width 0, empty text) that the backend skips.
public struct Cell: Sendable, Equatable {
    public var text: String
    public var width: UInt8
    public var style: Style

    public static let blank = Cell(text: " ", width: 1, style: .plain)
    static let continuation = Cell(text: "", width: 0, style: .plain)
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
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            if self[x0, y].width == 0, x0 > 0 { self[x0 - 1, y] = Cell(text: " ", width: 1, style: self[x0 - 1, y].style) }
            if self[x1 - 1, y].width == 2, x1 < width { self[x1, y] = Cell(text: " ", width: 1, style: self[x1, y].style) }
            for x in x0..<x1 {
                self[x, y] = Cell(text: " ", width: 1, style: style)
            }
        }
    }

    /// Writes already-sanitized text at (x, y), clipped to `maxWidth` columns (and the grid), never
    /// splitting a wide character or a grapheme cluster. Answers the columns used.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, maxWidth: Int? = nil, style: Style = .plain) -> Int {
        guard y >= 0, y < height, x < width else { return 0 }
        let limit = min(maxWidth ?? (width - x), width - max(x, 0))
        var column = x
        var used = 0
        for character in text {
            let w = DisplayWidth.of(character)
            if w == 0 { continue }
            if used + w > limit { break }
            if column >= 0 {
                // Overwriting half of a wide character: blank its other half.
                if self[column, y].width == 0, column > 0 { self[column - 1, y] = Cell(text: " ", width: 1, style: self[column - 1, y].style) }
                if column + w < width, self[column + w - 1, y].width == 2 { self[column + w, y] = Cell(text: " ", width: 1, style: self[column + w, y].style) }
                self[column, y] = Cell(text: String(character), width: UInt8(w), style: style)
                if w == 2 { self[column + 1, y] = Cell(text: "", width: 0, style: style) }
            }
            column += w
            used += w
        }
        return used
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
            var line = ""
            for x in 0..<width where self[x, y].width > 0 { line += self[x, y].text }
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
