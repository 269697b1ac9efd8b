/// Byte classes of RFC 9110/9112 and small ASCII helpers.
enum ASCII {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let semicolon = UInt8(ascii: ";")

    /// `tchar`: the characters of a method or header name.
    static func isTokenChar(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    static func isAlpha(_ b: UInt8) -> Bool { lower(b) >= UInt8(ascii: "a") && lower(b) <= UInt8(ascii: "z") }

    /// The value of a hexadecimal digit, nil for any other byte.
    static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(b - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(b - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    /// A byte a field value may hold: HTAB, visible ASCII, space, or obs-text (UTF-8 is checked apart).
    static func isFieldValueByte(_ b: UInt8) -> Bool { b == tab || (b >= 0x20 && b != 0x7F) }

    /// A byte a request target may hold: visible ASCII but `#` (no fragment in a request).
    static func isTargetByte(_ b: UInt8) -> Bool { b > 0x20 && b < 0x7F && b != UInt8(ascii: "#") }

    static func isWhitespace(_ b: UInt8) -> Bool { b == space || b == tab }

    static func lower(_ b: UInt8) -> UInt8 { b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b | 0x20 : b }

    /// The two strings are equal but for ASCII letter case.
    static func sameIgnoringCase(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        return x.count == y.count && zip(x, y).allSatisfy { lower($0) == lower($1) }
    }

    /// The comma-separated elements of a field value, each without surrounding spaces and tabs (empty
    /// elements kept, so a caller can refuse them).
    static func elements(_ value: String) -> [Substring.UTF8View] {
        value.utf8.split(separator: comma, omittingEmptySubsequences: false).map(trimmed)
    }

    static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var s = bytes
        while let f = s.first, isWhitespace(f) { s.removeFirst() }
        while let l = s.last, isWhitespace(l) { s.removeLast() }
        return s
    }

    static func same(_ bytes: Substring.UTF8View, ignoringCase word: String) -> Bool {
        bytes.count == word.utf8.count && zip(bytes, word.utf8).allSatisfy { lower($0) == lower($1) }
    }
}
