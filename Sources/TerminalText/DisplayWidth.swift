/// Display width in terminal columns, as wcwidth(3), ncurses and tmux count it: combining marks 0,
/// East Asian Wide/Fullwidth and emoji-presentation characters 2, everything else 1. Meant for text
/// that went through `Sanitizer` (which removes the controls and joiners whose width is undefined).
public enum DisplayWidth {
    public static func of(_ text: String) -> Int {
        // Printable ASCII: a column a byte.
        var ascii = true
        for byte in text.utf8 where byte < 0x20 || byte >= 0x7F {
            ascii = false
            break
        }
        if ascii { return text.utf8.count }
        var width = 0
        for scalar in text.unicodeScalars { width += of(scalar) }
        return width
    }

    public static func of(_ character: Character) -> Int {
        var width = 0
        for scalar in character.unicodeScalars { width += of(scalar) }
        return width
    }

    public static func of(_ s: Unicode.Scalar) -> Int {
        let v = s.value
        if v < 0x300 { return v < 0x20 || (0x7F..<0xA0).contains(v) ? 0 : 1 }
        if Sanitizer.isCombining(s) || s.properties.generalCategory == .format { return 0 }
        if (0x1F1E6...0x1F1FF).contains(v) { return 1 }  // regional indicators: East Asian Width N
        if s.properties.isEmojiPresentation { return 2 }
        return isWide(v) ? 2 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges outside emoji (Unicode 15 EastAsianWidth.txt, merged).
    static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x2E99, 0x2E9B...0x2EF3, 0x2F00...0x2FD5,
        0x2FF0...0x2FFF, 0x3000...0x303E, 0x3041...0x3096, 0x3099...0x30FF, 0x3105...0x312F,
        0x3131...0x318E, 0x3190...0x31E3, 0x31EF...0x321E, 0x3220...0x3247, 0x3250...0x4DBF,
        0x4E00...0xA48C, 0xA490...0xA4C6, 0xA960...0xA97C, 0xAC00...0xD7A3, 0xF900...0xFAFF,
        0xFE10...0xFE19, 0xFE30...0xFE52, 0xFE54...0xFE66, 0xFE68...0xFE6B, 0xFF01...0xFF60,
        0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x16FF0...0x16FF1, 0x17000...0x187F7, 0x18800...0x18CD5,
        0x18D00...0x18D08, 0x1AFF0...0x1B2FB, 0x1F200...0x1F202, 0x1F210...0x1F23B, 0x1F240...0x1F248,
        0x1F250...0x1F251, 0x1F260...0x1F265, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    static func isWide(_ v: UInt32) -> Bool {
        guard v >= 0x1100 else { return false }
        var lo = 0, hi = wideRanges.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            let r = wideRanges[mid]
            if v < r.lowerBound { hi = mid - 1 } else if v > r.upperBound { lo = mid + 1 } else { return true }
        }
        return false
    }
}

/// Fitting sanitized text into columns without splitting a grapheme cluster or a wide character.
public enum Columns {
    /// `text` cut to at most `width` columns, ending in `…` when something was cut.
    public static func truncate(_ text: String, to width: Int, ellipsis: Character = "…") -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return text }
        let room = width - DisplayWidth.of(ellipsis)
        var result = ""
        var used = 0
        for character in text {
            let w = DisplayWidth.of(character)
            if used + w > room { break }
            result.append(character)
            used += w
        }
        result.append(ellipsis)
        return result
    }

    /// `text` within `width` columns, shortened in the middle: its head and its end (`tail` of the
    /// room) stay, so a line keeps both what it is about and how it ended. The cut falls between
    /// words when a word boundary is near (within a third of the end, a fifth of the head).
    public static func truncateMiddle(_ text: String, to width: Int, tail: Double = 0.3, ellipsis: Character = "…") -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return text }
        let room = width - DisplayWidth.of(ellipsis)
        var end = ""
        var used = 0
        for character in text.reversed() {
            let w = DisplayWidth.of(character)
            if used + w > Int(Double(room) * tail) { break }
            end.insert(character, at: end.startIndex)
            used += w
        }
        // Snapped to a word boundary only when the cut falls inside a word.
        let cutInsideEnd = end.first != " " && text.dropLast(end.count).last.map { $0 != " " } == true
        if cutInsideEnd, let space = end.firstIndex(of: " "), end.distance(from: end.startIndex, to: space) <= end.count / 3 {
            end = String(end[space...])  // starts at a word (after the space it keeps)
        }
        var head = String(truncate(text, to: room - DisplayWidth.of(end) + 1, ellipsis: ellipsis).dropLast())
        let cutInsideHead = head.last != " " && text.dropFirst(head.count).first.map { $0 != " " } == true
        if cutInsideHead, let space = head.lastIndex(of: " "), head.distance(from: space, to: head.endIndex) <= head.count / 5 {
            head = String(head[...space])
        }
        return head + String(ellipsis) + end
    }

    /// `text` truncated and padded with spaces to exactly `width` columns.
    public static func fit(_ text: String, to width: Int, alignRight: Bool = false) -> String {
        let cut = truncate(text, to: width)
        let pad = String(repeating: " ", count: max(0, width - DisplayWidth.of(cut)))
        return alignRight ? pad + cut : cut + pad
    }

    /// Word-wraps one line of sanitized text to `width` columns. A word longer than a line (a URL, a
    /// query string) is broken after a delimiter (`&`, `?`, `/`, `,`, `;`, then `=`, `-`, `.`, `:`) when
    /// one fits, so `per_page=50` stays whole; else between grapheme clusters. Such a word starts on
    /// the current line when a piece of it fits there.
    public static func wrap(_ text: String, to width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        var currentWidth = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = Substring(word)
            var wordWidth = DisplayWidth.of(String(word))
            if currentWidth > 0, currentWidth + 1 + wordWidth <= width {
                current += " " + word
                currentWidth += 1 + wordWidth
                continue
            }
            if currentWidth > 0 {
                // A word that is broken anyway starts here if a piece of it ends at a delimiter in the room left.
                if wordWidth > width, let (piece, rest) = piece(of: word, room: width - currentWidth - 1, delimitedOnly: true) {
                    current += " " + piece
                    word = rest
                    wordWidth -= DisplayWidth.of(piece)
                }
                lines.append(current)
                current = ""
                currentWidth = 0
            }
            while wordWidth > width {
                // A cluster wider than the whole line (a space carrying a wide mark, at width 1 or 2)
                // cannot be shown: it is cut to `…`, as `truncate` cuts, so no line is ever wider.
                let (piece, rest) = piece(of: word, room: width, delimitedOnly: false) ?? (truncate(String(word.prefix(1)), to: width), word.dropFirst())
                lines.append(piece)
                wordWidth -= DisplayWidth.of(String(word[..<rest.startIndex]))
                word = rest
            }
            current = String(word)
            currentWidth = wordWidth
        }
        if currentWidth > 0 || lines.isEmpty { lines.append(current) }
        return lines
    }

    /// The longest head of `word` within `room` columns that ends after a delimiter (the strongest
    /// first); without one, the longest that fits (nil with `delimitedOnly`, or when nothing fits).
    private static func piece(of word: Substring, room: Int, delimitedOnly: Bool) -> (String, Substring)? {
        guard room > 0 else { return nil }
        var fits = word.startIndex
        var used = 0
        var strong: String.Index?, weak: String.Index?
        for index in word.indices {
            let c = word[index]
            used += DisplayWidth.of(c)
            if used > room { break }
            fits = word.index(after: index)
            if "&?/,;".contains(c) { strong = fits } else if "=-.:".contains(c) { weak = fits }
        }
        // A break very early in the line wastes it: only after a quarter of the room.
        let minimum = word.index(word.startIndex, offsetBy: min(word.count, max(1, room / 4)))
        let cut = [strong, weak].compactMap { $0 }.first { $0 >= minimum } ?? (delimitedOnly ? nil : fits)
        guard let cut, cut > word.startIndex else { return nil }
        return (String(word[..<cut]), word[cut...])
    }
}
