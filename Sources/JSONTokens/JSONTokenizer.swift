/// One token of JSON text: its kind and its bytes (`start..<end`, quotes included for a string).
public struct JSONToken: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        case beginObject, endObject, beginArray, endArray, colon, comma
        case string, number, literalTrue, literalFalse, literalNull
        /// Bytes that start no JSON token (a word, a stray byte): kept, never dropped.
        case invalid
    }

    public var kind: Kind
    public var start: Int
    public var end: Int
    /// A string holding a backslash escape (it needs unescaping; one without is its bytes).
    public var escaped: Bool
    /// A string that ends before its closing quote (a body cut short).
    public var unterminated: Bool

    public init(kind: Kind, start: Int, end: Int, escaped: Bool = false, unterminated: Bool = false) {
        self.kind = kind
        self.start = start
        self.end = end
        self.escaped = escaped
        self.unterminated = unterminated
    }

    public var range: Range<Int> { start..<end }
    /// A string's content, between its quotes.
    public var contentRange: Range<Int> { (start + 1)..<max(start + 1, end - (unterminated ? 0 : 1)) }
}

/// The one JSON scanner of the project: bytes → tokens with their ranges. Lenient: it never fails,
/// whatever the bytes (cut, invalid, not JSON at all); every byte that is not whitespace between
/// tokens belongs to exactly one token, so a consumer that copies the bytes between tokens loses
/// nothing. The redactor, the pretty-printer, the surrogate repair and the exact parser (`JSONValue`)
/// all read it.
public enum JSONTokenizer {
    @inline(__always)
    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    @inline(__always)
    static func endsWord(_ c: UInt8) -> Bool {
        isSpace(c) || c == UInt8(ascii: "{") || c == UInt8(ascii: "}") || c == UInt8(ascii: "[") || c == UInt8(ascii: "]")
            || c == UInt8(ascii: ":") || c == UInt8(ascii: ",") || c == UInt8(ascii: "\"")
    }

    /// Every token of `bytes`, in order.
    public static func tokens(_ bytes: [UInt8]) -> [JSONToken] {
        var out: [JSONToken] = []
        out.reserveCapacity(bytes.count / 6)
        bytes.withUnsafeBufferPointer { forEach($0) { out.append($0) } }
        return out
    }

    /// Calls `body` with each token of `b`, in order, without an array.
    public static func forEach(_ b: UnsafeBufferPointer<UInt8>, _ body: (JSONToken) -> Void) {
        let n = b.count
        var i = 0
        while i < n {
            let c = b[i]
            if isSpace(c) { i += 1; continue }
            switch c {
            case UInt8(ascii: "{"): body(JSONToken(kind: .beginObject, start: i, end: i + 1)); i += 1
            case UInt8(ascii: "}"): body(JSONToken(kind: .endObject, start: i, end: i + 1)); i += 1
            case UInt8(ascii: "["): body(JSONToken(kind: .beginArray, start: i, end: i + 1)); i += 1
            case UInt8(ascii: "]"): body(JSONToken(kind: .endArray, start: i, end: i + 1)); i += 1
            case UInt8(ascii: ":"): body(JSONToken(kind: .colon, start: i, end: i + 1)); i += 1
            case UInt8(ascii: ","): body(JSONToken(kind: .comma, start: i, end: i + 1)); i += 1
            case UInt8(ascii: "\""):
                let start = i
                var escaped = false
                i += 1
                while i < n {
                    let s = b[i]
                    if s == UInt8(ascii: "\"") { break }
                    if s == UInt8(ascii: "\\") { escaped = true; i += 2; continue }
                    i += 1
                }
                if i < n {
                    i += 1
                    body(JSONToken(kind: .string, start: start, end: i, escaped: escaped))
                } else {
                    body(JSONToken(kind: .string, start: start, end: n, escaped: escaped, unterminated: true))
                    i = n
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let start = i
                i += 1
                while i < n, !endsWord(b[i]) { i += 1 }
                body(JSONToken(kind: .number, start: start, end: i))
            default:
                let start = i
                i += 1
                while i < n, !endsWord(b[i]) { i += 1 }
                body(JSONToken(kind: literal(b, start, i), start: start, end: i))
            }
        }
    }

    static func literal(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> JSONToken.Kind {
        func `is`(_ word: StaticString) -> Bool {
            guard end - start == word.utf8CodeUnitCount else { return false }
            let w = word.utf8Start
            for k in 0..<(end - start) where b[start + k] != w[k] { return false }
            return true
        }
        switch b[start] {
        case UInt8(ascii: "t"): return `is`("true") ? .literalTrue : .invalid
        case UInt8(ascii: "f"): return `is`("false") ? .literalFalse : .invalid
        case UInt8(ascii: "n"): return `is`("null") ? .literalNull : .invalid
        default: return .invalid
        }
    }
}
