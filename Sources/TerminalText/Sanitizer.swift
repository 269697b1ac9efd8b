/// Untrusted text (everything a server sends) made safe for a terminal.
///
/// - Escape sequences (CSI, OSC, DCS, SOS, PM, APC, and two-character ESC sequences), in 7-bit and C1
///   form, are removed whole: their payload never reaches the terminal, and neither does its effect.
/// - Other C0 controls, DEL and C1 controls become a visible `�`; tab becomes a space.
/// - Line breaks (LF, CR, CRLF, U+2028/2029) become a space in a one-line context, `\n` otherwise.
/// - Bidi controls and other invisible format characters (zero-width space/joiner, BOM, soft hyphen,
///   word joiner, tags), variation selectors and emoji skin-tone modifiers are dropped, so nothing
///   reorders or hides text and no terminal can join emoji into a glyph of another width than the one
///   counted here (terminals, wcwidth(3) and Python's wcwidth disagree on exactly those).
/// - Combining marks stay, at most `maxCombining` per base character (stacked "zalgo" is cut).
public enum Sanitizer {
    public static let placeholder: Character = "\u{FFFD}"
    public static let maxCombining = 2

    /// One line: no line breaks in the result.
    public static func line(_ text: String) -> String { sanitize(text, keepNewlines: false) }

    /// Several lines: `\n` kept as the only line break, everything else as `line`.
    public static func lines(_ text: String) -> [String] {
        sanitize(text, keepNewlines: true).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    public static func sanitize(_ text: String, keepNewlines: Bool) -> String {
        // Fast path: printable ASCII needs nothing.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var out = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var i = 0
        var combiningRun = 0
        var hasBase = false

        func emit(_ s: Unicode.Scalar) {
            out.append(s)
            combiningRun = 0
            hasBase = true
        }
        func lineBreak() {
            if keepNewlines {
                out.append("\n")
                hasBase = false
            } else {
                out.append(" ")
                hasBase = true
            }
            combiningRun = 0
        }

        while i < scalars.count {
            let s = scalars[i]
            let v = s.value
            switch v {
            case 0x1B:
                i = skipEscape(scalars, from: i)
                continue
            case 0x9B:
                i = skipCSI(scalars, from: i + 1)
                continue
            case 0x9D, 0x90, 0x98, 0x9E, 0x9F:
                i = skipString(scalars, from: i + 1)
                continue
            case 0x0A, 0x2028, 0x2029:
                lineBreak()
            case 0x0D:
                if i + 1 < scalars.count, scalars[i + 1].value == 0x0A { i += 1 }
                lineBreak()
            case 0x09:
                emit(" ")
            case 0x00..<0x20, 0x7F, 0x80..<0xA0:
                emit(placeholder.unicodeScalars.first ?? "?")
            default:
                if isDropped(s) { break }
                if isCombining(s) {
                    if hasBase, combiningRun < maxCombining {
                        out.append(s)
                        combiningRun += 1
                    }
                } else {
                    emit(s)
                }
            }
            i += 1
        }
        return String(out)
    }

    /// Bidi controls, invisible format characters and variation selectors.
    static func isDropped(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if (0xFE00...0xFE0F).contains(v) || (0xE0100...0xE01EF).contains(v) || (0x1F3FB...0x1F3FF).contains(v) { return true }
        return s.properties.generalCategory == .format
    }

    static func isCombining(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return true
        default:  // conjoining Hangul medial vowels and final consonants (Jamo, Jamo Extended-B)
            return (0x1160...0x11FF).contains(s.value) || (0xD7B0...0xD7FF).contains(s.value)
        }
    }

    /// Index after an escape sequence that starts with ESC at `start`.
    static func skipEscape(_ s: [Unicode.Scalar], from start: Int) -> Int {
        let next = start + 1
        guard next < s.count else { return next }
        switch s[next] {
        case "[": return skipCSI(s, from: next + 1)
        case "]", "P", "X", "^", "_": return skipString(s, from: next + 1)
        default:
            // ESC, intermediates (0x20–0x2F), then one final character.
            var i = next
            while i < s.count, (0x20...0x2F).contains(s[i].value) { i += 1 }
            return min(i + 1, s.count)
        }
    }

    /// Index after a CSI body: parameters and intermediates, then a final byte 0x40–0x7E.
    static func skipCSI(_ s: [Unicode.Scalar], from start: Int) -> Int {
        var i = start
        while i < s.count {
            let v = s[i].value
            if (0x40...0x7E).contains(v) { return i + 1 }
            if !(0x20...0x3F).contains(v) { return i }  // malformed: stop before the stray character
            i += 1
        }
        return i
    }

    /// Index after a control string (OSC, DCS, SOS, PM, APC), ended by BEL, ESC \ or C1 ST.
    static func skipString(_ s: [Unicode.Scalar], from start: Int) -> Int {
        var i = start
        while i < s.count {
            switch s[i].value {
            case 0x07, 0x9C: return i + 1
            case 0x1B: return (i + 1 < s.count && s[i + 1] == "\\") ? i + 2 : i + 1
            default: i += 1
            }
        }
        return i
    }
}
