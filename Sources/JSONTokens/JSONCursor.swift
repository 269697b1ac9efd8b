/// A walk over the tokens of one JSON document that builds nothing: what a check that only reads
/// needs (the watchdog validates a 200-entry history page with no value made but the dates and ids it
/// compares). Use it inside `bytes.withUnsafeBufferPointer`.
public struct JSONCursor {
    public let bytes: UnsafeBufferPointer<UInt8>
    public let tokens: [JSONToken]
    public var index = 0

    public init(bytes: UnsafeBufferPointer<UInt8>, tokens: [JSONToken]) {
        self.bytes = bytes
        self.tokens = tokens
    }

    public var current: JSONToken? { index < tokens.count ? tokens[index] : nil }

    /// `tokens` are exactly one JSON value (what `JSONValue.parse` would read).
    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: [JSONToken]) -> Bool {
        var c = JSONCursor(bytes: bytes, tokens: tokens)
        return c.skipValue() && c.index == tokens.count
    }

    /// Moves past one whole value; false when the tokens there are not one.
    public mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 256, let t = current else { return false }
        index += 1
        switch t.kind {
        case .beginObject:
            if current?.kind == .endObject { index += 1; return true }
            while true {
                guard let key = current, key.kind == .string, JSONString.isValid(bytes, key) else { return false }
                index += 1
                guard current?.kind == .colon else { return false }
                index += 1
                guard skipValue(depth: depth + 1) else { return false }
                guard let next = current else { return false }
                index += 1
                if next.kind == .comma { continue }
                return next.kind == .endObject
            }
        case .beginArray:
            if current?.kind == .endArray { index += 1; return true }
            while true {
                guard skipValue(depth: depth + 1), let next = current else { return false }
                index += 1
                if next.kind == .comma { continue }
                return next.kind == .endArray
            }
        case .string: return JSONString.isValid(bytes, t)
        case .number: return JSONNumber.shape(bytes, t) != nil
        case .literalTrue, .literalFalse, .literalNull: return true
        case .endObject, .endArray, .colon, .comma, .invalid: return false
        }
    }

    /// The value starting at token `at`, built (to show it in a message).
    public func value(at: Int) -> JSONValue? {
        var reader = JSONValue.Reader(bytes: bytes, tokens: tokens)
        reader.next = at
        return reader.value(depth: 0)
    }

    public func string(_ t: JSONToken) -> String? { JSONString.decode(bytes, t) }

    /// A number token's value as an integer, when it is one and fits.
    public func int(_ t: JSONToken) -> Int? {
        guard t.kind == .number, JSONNumber.shape(bytes, t) == .integer else { return nil }
        if case let .int(n)? = JSONNumber.read(bytes, t) { return n }
        return nil
    }

    /// A number token's value.
    public func double(_ t: JSONToken) -> Double? {
        switch JSONNumber.read(bytes, t) {
        case let .int(n)?: return Double(n)
        case let .double(d)?: return d
        default: return nil
        }
    }

    /// Whether a string token (a key) is `name`, compared as bytes when it has no escape.
    public func string(_ t: JSONToken, equals name: [UInt8]) -> Bool {
        guard t.kind == .string, !t.unterminated else { return false }
        if t.escaped { return string(t).map { Array($0.utf8) == name } ?? false }
        let range = t.contentRange
        guard range.count == name.count else { return false }
        var k = 0
        for i in range {
            if bytes[i] != name[k] { return false }
            k += 1
        }
        return true
    }

    /// A string token's content bytes (no escape in it), for readers that take bytes.
    public func rawContent(_ t: JSONToken) -> UnsafeBufferPointer<UInt8>? {
        guard t.kind == .string, !t.escaped, !t.unterminated else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[t.contentRange])
    }
}

extension JSONNumber {
    public enum Shape: Sendable { case integer, fraction }

    /// A number token's shape by JSON's grammar, or nil when it is not a number.
    public static func shape(_ b: UnsafeBufferPointer<UInt8>, _ t: JSONToken) -> Shape? {
        var i = t.start
        let end = t.end
        func digit(_ k: Int) -> Bool { k < end && b[k] >= UInt8(ascii: "0") && b[k] <= UInt8(ascii: "9") }
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard digit(i) else { return nil }
        if b[i] == UInt8(ascii: "0"), digit(i + 1) { return nil }
        var fraction = false
        while digit(i) { i += 1 }
        if i < end, b[i] == UInt8(ascii: ".") {
            fraction = true
            i += 1
            guard digit(i) else { return nil }
            while digit(i) { i += 1 }
        }
        if i < end, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            fraction = true
            i += 1
            if i < end, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digit(i) else { return nil }
            while digit(i) { i += 1 }
        }
        guard i == end else { return nil }
        return fraction ? .fraction : .integer
    }
}

extension JSONString {
    /// Whether a string token reads (closed, and every escape a JSON escape), without making it.
    public static func isValid(_ b: UnsafeBufferPointer<UInt8>, _ t: JSONToken) -> Bool {
        guard t.kind == .string, !t.unterminated else { return false }
        guard t.escaped else { return true }
        var i = t.contentRange.lowerBound
        let end = t.contentRange.upperBound
        while i < end {
            guard b[i] == UInt8(ascii: "\\") else { i += 1; continue }
            guard i + 1 < end else { return false }
            switch b[i + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                 UInt8(ascii: "r"), UInt8(ascii: "t"):
                i += 2
            case UInt8(ascii: "u"):
                guard hex4(b, i + 2, end) != nil else { return false }
                i += 6
            default:
                return false
            }
        }
        return true
    }
}
