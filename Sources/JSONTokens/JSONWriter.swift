/// JSON text written directly, for output that must be fast (`print history --all --json` writes a
/// line an entry) and safe on a terminal: besides what JSON requires, DEL, the C1 controls and the
/// invisible format characters (bidi controls, zero-width joiners, U+2028/2029) are written as
/// `\uXXXX`, so none reaches stdout raw. Printable ASCII is copied a byte at a time with no lookup.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Punctuation and keys written as they are: `{"amount":`.
    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func int(_ n: Int) { bytes.append(contentsOf: String(n).utf8) }
    /// JSON text made elsewhere, as it is (a value sent as typed).
    public mutating func verbatim(_ json: String) { bytes.append(contentsOf: json.utf8) }

    public mutating func null() { raw("null") }

    /// A whole value, compact, members in their order.
    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case let .bool(b): raw(b ? "true" : "false")
        case let .int(n): int(n)
        case let .double(d): bytes.append(contentsOf: (d.isFinite ? "\(d)" : "null").utf8)
        case let .string(s): string(s)
        case let .array(items):
            raw("[")
            for (i, item) in items.enumerated() {
                if i > 0 { raw(",") }
                value(item)
            }
            raw("]")
        case let .object(o):
            raw("{")
            members(of: o)
            raw("}")
        }
    }

    /// An object's members with no braces around them (`"a":1,"b":2`): for an object written in parts.
    public mutating func members(of o: JSONObject) {
        for (i, member) in o.members.enumerated() {
            if i > 0 { raw(",") }
            string(member.key)
            raw(":")
            value(member.value)
        }
    }

    public mutating func string(_ value: String?) {
        guard var s = value else { return null() }
        bytes.append(UInt8(ascii: "\""))
        s.withUTF8 { utf8 in
            var i = 0
            while i < utf8.count {
                let b = utf8[i]
                if b >= 0x20, b < 0x7F {
                    if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                    bytes.append(b)
                    i += 1
                    continue
                }
                if b < 0x80 {
                    switch b {
                    case 0x08: raw("\\b")
                    case 0x0C: raw("\\f")
                    case 0x0A: raw("\\n")
                    case 0x0D: raw("\\r")
                    case 0x09: raw("\\t")
                    default: escape(UInt32(b))
                    }
                    i += 1
                    continue
                }
                // A multi-byte scalar (the string is valid UTF-8): written raw unless it is invisible or a control.
                let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
                var value = UInt32(b) & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F)
                for k in 1..<length where i + k < utf8.count { value = value << 6 | UInt32(utf8[i + k] & 0x3F) }
                if let scalar = Unicode.Scalar(value), Self.mustEscape(scalar) {
                    escape(value)
                } else {
                    bytes.append(contentsOf: utf8[i..<min(utf8.count, i + length)])
                }
                i += length
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// C1 controls, format characters (bidi, zero-width) and line/paragraph separators.
    public static func mustEscape(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if v < 0xA0 { return v >= 0x7F }
        switch s.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// `\u00e9`, or a UTF-16 surrogate pair beyond the BMP, as JSON writes them.
    mutating func escape(_ v: UInt32) {
        if v > 0xFFFF {
            let u = v - 0x10000
            hex(0xD800 + (u >> 10))
            hex(0xDC00 + (u & 0x3FF))
        } else {
            hex(v)
        }
    }

    mutating func hex(_ unit: UInt32) {
        let digits: StaticString = "0123456789abcdef"
        raw("\\u")
        digits.withUTF8Buffer { d in
            for shift in [12, 8, 4, 0] { bytes.append(d[Int(unit >> UInt32(shift) & 0xF)]) }
        }
    }
}
