import Foundation
import JSONTokens

// Lenient decoding helpers for the response models (Models.swift): a list keeps the entries it can
// read, and a decoding error is worded in one line with the path of its field.

/// Decodes a `T` or, failing that, keeps why (and the `id`, when readable) instead of failing the list.
struct Lossy<T: Decodable>: Decodable {
    struct Failure: Error {
        var id: String?
        var reason: String
    }

    var result: Result<T, Failure>

    private struct IDKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        do {
            result = .success(try T(from: decoder))
        } catch {
            let container = try? decoder.container(keyedBy: IDKey.self)
            let id = (try? container?.decodeIfPresent(String.self, forKey: IDKey(stringValue: "id"))) ?? nil
            // Foundation throws its own (non-DecodingError) error, with no field path, for a number it
            // cannot convert — 1.5 or 1e30 for an Int. The document parsed, so it is a value of this entry.
            var reason = "a value that cannot be converted (a number with a fraction, or out of range?)"
            if let error = error as? DecodingError {
                reason = DecodingFailure.describe(error, relativeTo: decoder.codingPath.count)
            }
            result = .failure(Failure(id: id, reason: reason))
        }
    }
}

extension KeyedDecodingContainer {
    /// A date in any form the contract allows; a present but unreadable date is a decoding error.
    func decodeDateIfPresent(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = ISO8601.parse(text) else {
            let said = "unreadable date '\(text.prefix(40))'"
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: said, underlyingError: UnreadableDate(said: said)))
        }
        return date
    }
}

/// A date the contract's forms do not read (the decoding error's underlying error says so by type).
struct UnreadableDate: Error {
    var said: String
}

/// One-line descriptions of decoding errors, with the path of the field.
public enum DecodingFailure {
    /// The first whole number of `value` beyond a 64-bit integer (its path and digits): what a decoder that
    /// gives up on it calls "not valid JSON" when the JSON is valid.
    public static func beyond64Bits(in value: JSONValue, path: String = "") -> (path: String, digits: String)? {
        switch value {
        case let .double(d) where d.isFinite && d == d.rounded() && (d >= 9_223_372_036_854_775_808 || d < -9_223_372_036_854_775_808):
            return (path, String(format: "%.0f", d))
        case let .array(items):
            for (i, item) in items.enumerated() {
                if let found = beyond64Bits(in: item, path: path + "[\(i)]") { return found }
            }
            return nil
        case let .object(fields):
            for (name, item) in fields {
                if let found = beyond64Bits(in: item, path: path.isEmpty ? name : path + "." + name) { return found }
            }
            return nil
        default:
            return nil
        }
    }

    public static func path(_ codingPath: [any CodingKey]) -> String {
        var path = ""
        for key in codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return path.isEmpty ? "(top level)" : path
    }

    /// What went wrong and where: `amount` / wrong type "a number", `product` / missing …
    /// `relativeTo` drops that many leading path components (a list entry's own path).
    public static func problem(_ error: DecodingError, relativeTo depth: Int = 0) -> DecodeProblem {
        func where_(_ context: DecodingError.Context, extra: (any CodingKey)? = nil) -> String {
            var keys = Array(context.codingPath.dropFirst(depth))
            if let extra { keys.append(extra) }
            return keys.isEmpty ? "" : path(keys)
        }
        switch error {
        case let .typeMismatch(type, context):
            return DecodeProblem(path: where_(context), reason: .wrongType(expected: typeName(type)))
        case let .valueNotFound(type, context):
            return DecodeProblem(path: where_(context), reason: .null(expected: typeName(type)))
        case let .keyNotFound(key, context):
            return DecodeProblem(path: where_(context, extra: key), reason: .missing)
        case let .dataCorrupted(context):
            let text = context.debugDescription
            let reason: DecodeProblem.Reason
            if let unreadable = context.underlyingError as? UnreadableDate {
                reason = .unreadableValue(unreadable.said)
            } else if text.contains("does not fit") || text.contains("out of range") || text.contains("Number") {
                // Foundation's decoder says this only in words.
                reason = .outOfRange
            } else {
                reason = .invalidJSON
            }
            return DecodeProblem(path: where_(context), reason: reason)
        @unknown default:
            return DecodeProblem(path: "", reason: .invalidJSON)
        }
    }

    /// `amount: expected a number`, `product: missing`, `(top level): not valid JSON` … (our own words,
    /// kept beside an unreadable list entry).
    public static func describe(_ error: DecodingError, relativeTo depth: Int = 0) -> String {
        describe(problem(error, relativeTo: depth))
    }

    public static func describe(_ problem: DecodeProblem) -> String {
        let detail: String
        switch problem.reason {
        case .missing: detail = "missing"
        case let .wrongType(expected): detail = "expected \(expected)"
        case let .null(expected): detail = "expected \(expected), found null"
        case .outOfRange: detail = "a number out of range"
        case let .beyond64Bits(digits): return "\(problem.path.isEmpty ? "(top level)" : problem.path) \(digits) is beyond a 64-bit integer"
        case let .unreadableValue(text): detail = text
        case .invalidJSON: detail = "not valid JSON"
        case .cutShort: detail = "cut short"
        case let .errorBody(status, code, _):
            let owed = DecodeProblem.contractStatus(forCode: code).map { "the contract says \($0)" } ?? "the contract gives an error body only with a 4xx or 5xx"
            return "HTTP \(status) with an error body\(code.map { " (\($0))" } ?? ""); \(owed)"
        }
        return "\(problem.path.isEmpty ? "(top level)" : problem.path): \(detail)"
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "text"
        case is Int.Type, is Double.Type, is Int64.Type, is UInt64.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is any DecodedList.Type: return "a list"
        default: return "an object"
        }
    }
}

/// Marks a list among the types a decoding error names (by type, not by its name's spelling).
protocol DecodedList {}
extension Array: DecodedList {}
