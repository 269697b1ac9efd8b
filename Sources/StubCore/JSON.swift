#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Any JSON value, as read by `JSONDecoder`: what the control endpoint `POST /_stub/faults` receives
/// (an object or an array of them, with any keys and numbers as integers or whole doubles) and what
/// the `--fault key=value` syntax is turned into, so both go through one validation (`FaultSpec.from(json:)`)
/// with messages that name the wrong key. Responses are `Encodable` types written by `StubJSON.encoder`.
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

/// How the stand-in writes JSON: `JSONEncoder` with sorted keys (its only deterministic order: without
/// `.sortedKeys` the key order changes from one response to the next), slashes unescaped, compact.
/// Same seed, same bytes.
public enum StubJSON {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        Array(try encoder.encode(value))
    }
}
