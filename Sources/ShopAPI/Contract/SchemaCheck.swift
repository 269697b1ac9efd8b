import JSONTokens
/// A JSON value against a `ContractSchema`: types (null where nullable), required fields, bounds,
/// lengths and date-times; unknown keys and absent optional fields pass, as the contract says.
enum SchemaCheck {
    struct Problem { var expected: String; var actual: String }

    static func validate(_ value: JSONValue, _ schema: ContractSchema, at path: String) -> [Problem] {
        let here = path.isEmpty ? "the body" : path
        guard schema.typeMask == 0 || schema.typeMask & bit(of: value) != 0 else {
            return [Problem(expected: "\(here): \(schema.type.joined(separator: " or "))", actual: value.describe)]
        }
        var problems: [Problem] = []
        func bounds(_ n: Double, _ shown: String) {
            if let minimum = schema.minimum, n < minimum { problems.append(Problem(expected: "\(here) ≥ \(number(minimum))", actual: shown)) }
            if let maximum = schema.maximum, n > maximum { problems.append(Problem(expected: "\(here) ≤ \(number(maximum))", actual: shown)) }
        }
        switch value {
        case let .object(fields):
            for name in schema.required ?? [] where fields[name] == nil {
                problems.append(Problem(expected: "\(path.isEmpty ? "" : path + ".")\(name) (required)", actual: "missing"))
            }
            for (name, child) in schema.propertyList {
                if let v = fields[name] { problems += validate(v, child, at: path.isEmpty ? name : "\(path).\(name)") }
            }
        case let .array(elements):
            if let items = schema.items {
                for (i, element) in elements.enumerated() {
                    problems += validate(element, items, at: "\(path)[\(i)]")
                    if problems.count >= 5 { break }
                }
            }
        case let .int(n):
            bounds(Double(n), "\(n)")
        case let .double(d):
            bounds(d, "\(d)")
        case let .string(s):
            if let minLength = schema.minLength, s.count < minLength { problems.append(Problem(expected: "\(here) of at least \(minLength) characters", actual: "“\(s.prefix(40))”")) }
            if let maxLength = schema.maxLength, s.count > maxLength { problems.append(Problem(expected: "\(here) of at most \(maxLength) characters", actual: "\(s.count) characters")) }
            if schema.format == "date-time", ISO8601.parse(s) == nil {
                problems.append(Problem(expected: "\(here): an ISO 8601 date-time", actual: "“\(s.prefix(40))”"))
            }
        case .null, .bool:
            break
        }
        return problems
    }

    /// A JSON type as a bit; an integer is a number too.
    static func bit(ofType name: String) -> UInt8 {
        switch name {
        case "null": return 1
        case "boolean": return 2
        case "integer": return 4
        case "number": return 8 | 4
        case "string": return 16
        case "array": return 32
        case "object": return 64
        default: return 0x80  // a type no value has: nothing passes it
        }
    }

    static func bit(of value: JSONValue) -> UInt8 {
        switch value {
        case .null: return 1
        case .bool: return 2
        case .int: return 4
        case .double: return 8
        case .string: return 16
        case .array: return 32
        case .object: return 64
        }
    }

    /// A bound as the document wrote it: `0`, not `0.0`.
    static func number(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }
}
