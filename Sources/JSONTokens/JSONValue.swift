/// A JSON document as values, read exactly (an integer is not a number with a fraction; `true` is
/// not 1): what the schema check needs and JSONSerialization does not keep apart. Read from the
/// tokenizer's tokens; nil for anything that is not one whole JSON value. Not `indirect`: arrays and
/// objects hold their elements in arrays already, and a box for every string and number of every
/// entry of every page cost more than the rest of the tree.
public enum JSONValue: Equatable, Sendable {
    case null, bool(Bool), int(Int), double(Double), string(String), array([JSONValue]), object(JSONObject)

    /// How a value shows in a finding: its JSON type, and a short sample.
    public var describe: String {
        switch self {
        case .null: return "null"
        case let .bool(b): return "boolean \(b)"
        case let .int(n): return "integer \(n)"
        case let .double(d): return "number \(d)"
        case let .string(s): return "string “\(s.prefix(30))”"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        parse(bytes, tokens: JSONTokenizer.tokens(bytes))
    }

    /// The value of `tokens` (made from `bytes`), when they are exactly one.
    public static func parse(_ bytes: [UInt8], tokens: [JSONToken]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { b in
            var reader = Reader(bytes: b, tokens: tokens)
            guard let value = reader.value(depth: 0), reader.next == tokens.count else { return nil }
            return value
        }
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let tokens: [JSONToken]
        var next = 0

        mutating func take() -> JSONToken? {
            guard next < tokens.count else { return nil }
            defer { next += 1 }
            return tokens[next]
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth < 256, let t = take() else { return nil }
            switch t.kind {
            case .beginObject:
                var fields = JSONObject()
                if next < tokens.count, tokens[next].kind == .endObject { next += 1; return .object(fields) }
                while true {
                    guard let key = take(), key.kind == .string, let name = JSONString.decode(bytes, key),
                          take()?.kind == .colon, let v = value(depth: depth + 1) else { return nil }
                    fields.append(name, v)
                    switch take()?.kind {
                    case .comma?: continue
                    case .endObject?: return .object(fields)
                    default: return nil
                    }
                }
            case .beginArray:
                var elements: [JSONValue] = []
                if next < tokens.count, tokens[next].kind == .endArray { next += 1; return .array(elements) }
                while true {
                    guard let v = value(depth: depth + 1) else { return nil }
                    elements.append(v)
                    switch take()?.kind {
                    case .comma?: continue
                    case .endArray?: return .array(elements)
                    default: return nil
                    }
                }
            case .string: return JSONString.decode(bytes, t).map(JSONValue.string)
            case .number: return JSONNumber.read(bytes, t)
            case .literalTrue: return .bool(true)
            case .literalFalse: return .bool(false)
            case .literalNull: return .null
            case .endObject, .endArray, .colon, .comma, .invalid: return nil
            }
        }
    }
}

/// A JSON object's members in the order they came. Objects in answers have a handful of keys, so a
/// lookup walks them (a dictionary would hash every key of every entry of every page to build); a key
/// given twice means its last value, as a dictionary would.
public struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var members: [(key: String, value: JSONValue)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements.map { (key: $0.0, value: $0.1) }
    }

    public mutating func append(_ key: String, _ value: JSONValue) { members.append((key, value)) }

    public subscript(key: String) -> JSONValue? {
        var i = members.count
        while i > 0 {
            i -= 1
            if members[i].key == key { return members[i].value }
        }
        return nil
    }

    public var count: Int { members.count }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { members.makeIterator() }

    /// As objects: the same keys with the same (last) values, in any order.
    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        let x = Dictionary(a.members, uniquingKeysWith: { $1 }), y = Dictionary(b.members, uniquingKeysWith: { $1 })
        return x == y
    }
}

/// A number token as JSON's grammar reads it: an integer when it has no fraction or exponent and fits.
public enum JSONNumber {
    static func read(_ b: UnsafeBufferPointer<UInt8>, _ t: JSONToken) -> JSONValue? {
        var i = t.start
        let end = t.end
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) else { return nil }
        if b[i] == UInt8(ascii: "0"), i + 1 < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i + 1]) { return nil }  // 01
        var fraction = false
        while i < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) { i += 1 }
        if i < end, b[i] == UInt8(ascii: ".") {
            fraction = true
            i += 1
            let digits = i
            while i < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) { i += 1 }
            guard i > digits else { return nil }
        }
        if i < end, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            fraction = true
            i += 1
            if i < end, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[i]) { i += 1 }
            guard i > digits else { return nil }
        }
        guard i == end else { return nil }
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[t.start..<t.end]), as: UTF8.self)
        if !fraction, let n = Int(text) { return .int(n) }
        return Double(text).map(JSONValue.double)
    }
}

/// A string token's text: its bytes when it has no escape (the fast path), else unescaped here —
/// `\uD83D\uDE00` pairs joined, a lone surrogate as U+FFFD. Nil for a cut string or a bad escape.
public enum JSONString {
    public static func decode(_ b: UnsafeBufferPointer<UInt8>, _ t: JSONToken) -> String? {
        guard t.kind == .string, !t.unterminated else { return nil }
        let content = t.contentRange
        if !t.escaped { return String(decoding: UnsafeBufferPointer(rebasing: b[content]), as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(content.count)
        var i = content.lowerBound
        let end = content.upperBound
        while i < end {
            let c = b[i]
            guard c == UInt8(ascii: "\\") else { out.append(c); i += 1; continue }
            guard i + 1 < end else { return nil }
            let e = b[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4(b, i, end) else { return nil }
                i += 4
                var scalar = Unicode.Scalar(UInt32(unit))
                if (0xD800..<0xDC00).contains(unit), i + 1 < end, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u"),
                   let low = hex4(b, i + 2, end), (0xDC00..<0xE000).contains(low) {
                    scalar = Unicode.Scalar(0x10000 + (UInt32(unit) - 0xD800) << 10 + (UInt32(low) - 0xDC00))
                    i += 6
                }
                out.append(contentsOf: String(Character(scalar ?? "\u{FFFD}")).utf8)
            default:
                return nil
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The four hex digits at `i`, if there are four.
    static func hex4(_ b: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int) -> UInt16? {
        guard i + 4 <= end else { return nil }
        var v: UInt16 = 0
        for k in i..<(i + 4) {
            let c = b[k]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            v = v << 4 | UInt16(d)
        }
        return v
    }
}
