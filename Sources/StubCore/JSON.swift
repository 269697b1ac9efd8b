/// A JSON value with ordered object keys, so every response the stand-in sends is byte-for-byte
/// deterministic, and so faults (a malformed entry, a truncated body) can work on the tree or the bytes.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.int(a), .int(b)): return a == b
        case let (.uint(a), .uint(b)): return a == b
        case let (.int(a), .uint(b)), let (.uint(b), .int(a)): return a >= 0 && UInt64(a) == b
        case let (.double(a), .double(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public static func int(_ value: Int) -> JSON { .int(Int64(value)) }

    /// The value of `key` when this is an object.
    public subscript(key: String) -> JSON? {
        guard case let .object(pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case let .string(s) = self { return s }
        return nil
    }

    /// Integers, and doubles that hold a whole number.
    public var intValue: Int? {
        switch self {
        case let .int(v): return Int(exactly: v)
        case let .uint(v): return Int(exactly: v)
        case let .double(v): return Int(exactly: v)
        default: return nil
        }
    }

    public var uint64Value: UInt64? {
        switch self {
        case let .int(v): return UInt64(exactly: v)
        case let .uint(v): return v
        case let .double(v): return UInt64(exactly: v)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case let .int(v): return Double(v)
        case let .uint(v): return Double(v)
        case let .double(v): return v
        default: return nil
        }
    }

    // MARK: Serialization

    /// Compact UTF-8 serialization (no spaces), keys in insertion order.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    public var text: String { String(decoding: serialized(), as: UTF8.self) }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: Array("null".utf8))
        case let .bool(b): out.append(contentsOf: Array((b ? "true" : "false").utf8))
        case let .int(v): out.append(contentsOf: Array(String(v).utf8))
        case let .uint(v): out.append(contentsOf: Array(String(v).utf8))
        case let .double(v):
            if v.isFinite {
                out.append(contentsOf: Array(String(v).utf8))
            } else {
                out.append(contentsOf: Array("null".utf8))
            }
        case let .string(s): JSON.writeString(s, into: &out)
        case let .array(items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let .object(pairs):
            out.append(UInt8(ascii: "{"))
            for (i, pair) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(pair.0, into: &out)
                out.append(UInt8(ascii: ":"))
                pair.1.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20, 0x7F:
                // Control characters always travel escaped, so hostile text stays valid JSON.
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let u = try? container.decode(UInt64.self) {
            self = .uint(u)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSON].self) {
            self = .array(a)
        } else {
            let dict = try container.decode([String: JSON].self)
            self = .object(dict.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }
}
