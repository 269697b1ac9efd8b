import JSONTokens
/// A JSON value against a `ContractSchema`: types (null where nullable), required fields, bounds,
/// lengths and date-times; unknown keys and absent optional fields pass, as the contract says.
enum SchemaCheck {
    struct Problem {
        var expected: String
        var actual: String
        /// The field and the rule (what makes it the same problem on a later answer).
        var place: FindingPlace
    }

    /// The problems of the value at the cursor (which moves past it), against `schema`, at most
    /// `limit`. The tokens are known to be one valid JSON value. Nothing is built but what a check
    /// reads (a date-time's bytes, a string whose length is bounded) and, for a problem, its message.
    static func validate(_ c: inout JSONCursor, _ schema: ContractSchema, limit: Int = 5) -> [Problem] {
        var walk = Walk(cursor: c, limit: limit)
        walk.check(schema)
        c = walk.cursor
        return walk.problems
    }

    struct Walk {
        enum Step { case key(Int), index(Int) }

        var cursor: JSONCursor
        let limit: Int
        var problems: [Problem] = []
        /// Where the walk is: keys (as token indexes, made into text only for a message) and indexes.
        var path: [Step] = []

        init(cursor: JSONCursor, limit: Int) {
            self.cursor = cursor
            self.limit = limit
            path.reserveCapacity(8)
        }

        var pathText: String {
            var out = ""
            for step in path {
                switch step {
                case let .key(k):
                    let name = cursor.string(cursor.tokens[k]) ?? "?"
                    out += out.isEmpty ? name : "." + name
                case let .index(n):
                    out += "[\(n)]"
                }
            }
            return out
        }

        mutating func add(_ rule: FieldRule, _ expected: String, _ actual: String, path field: String? = nil) {
            if problems.count < limit { problems.append(Problem(expected: expected, actual: actual, place: .field(path: field ?? pathText, rule: rule))) }
        }

        /// Checks the value at the cursor and moves past it.
        mutating func check(_ schema: ContractSchema) {
            guard let t = cursor.current else { return }
            let start = cursor.index
            let bit: UInt8
            switch t.kind {
            case .beginObject: bit = 64
            case .beginArray: bit = 32
            case .string: bit = 16
            // An integer only when it is one and fits (as the decoder reads it): 1e20 written as digits is a
            // number. A `uint64` fits up to 2⁶⁴ − 1 (purchaseCheer's `transaction_id`).
            case .number: bit = cursor.int(t) != nil || (schema.format == "uint64" && unsigned(t) != nil) ? 4 : 8
            case .literalTrue, .literalFalse: bit = 2
            case .literalNull: bit = 1
            case .endObject, .endArray, .colon, .comma, .invalid: _ = cursor.skipValue(); return
            }
            guard schema.typeMask == 0 || schema.typeMask & bit != 0 else {
                let here = path.isEmpty ? "the body" : pathText
                let value = cursor.value(at: start)
                if schema.type.contains("integer"), case let .double(d)? = value, let beyond = DecodingFailure.beyond64Bits(in: .double(d)) {
                    // A whole number too big for 64 bits: said as the number it is, not as "a number".
                    add(.type, "\(here): integer (64-bit)", "\(beyond.digits), beyond a 64-bit integer")
                } else {
                    add(.type, "\(here): \(schema.type.joined(separator: " or "))", value?.describe ?? "a value")
                }
                _ = cursor.skipValue()
                return
            }
            switch t.kind {
            case .beginObject: object(schema)
            case .beginArray: array(schema)
            case .number:
                cursor.index += 1
                if schema.format == "uint64", schema.minimum == nil, let n = cursor.int(t), n < 0 {
                    add(.minimum, "\(path.isEmpty ? "the body" : pathText) ≥ 0 (uint64)", String(n))
                }
                guard schema.minimum != nil || schema.maximum != nil, let n = cursor.double(t) else { return }
                let shown = cursor.int(t).map(String.init) ?? String(n)
                let here = path.isEmpty ? "the body" : pathText
                if let minimum = schema.minimum, n < minimum || (schema.exclusiveMinimum == true && n == minimum) {
                    add(.minimum, "\(here) \(schema.exclusiveMinimum == true ? ">" : "≥") \(number(minimum))", shown)
                }
                if let maximum = schema.maximum, n > maximum || (schema.exclusiveMaximum == true && n == maximum) {
                    add(.maximum, "\(here) \(schema.exclusiveMaximum == true ? "<" : "≤") \(number(maximum))", shown)
                }
            case .string:
                cursor.index += 1
                // Text that is not UTF-8: named by its field and the byte (the entry stays readable: the
                // decoder reads the byte as �).
                if let bad = UTF8Scan.firstInvalid(cursor.bytes[t.contentRange]) {
                    let here = path.isEmpty ? "the body" : pathText
                    let byte = cursor.bytes[t.contentRange.lowerBound + bad]
                    let hex = String(byte, radix: 16, uppercase: true)
                    add(.utf8, "\(here): text in UTF-8 (a JSON body's charset)", "byte \(bad + 1) of the value is 0x\(hex.count == 1 ? "0" + hex : hex), not UTF-8")
                }
                if schema.minLength != nil || schema.maxLength != nil, let s = cursor.string(t) {
                    let here = path.isEmpty ? "the body" : pathText
                    if let minLength = schema.minLength, s.count < minLength { add(.minLength, "\(here) of at least \(minLength) characters", "“\(s.prefix(40))”") }
                    if let maxLength = schema.maxLength, s.count > maxLength { add(.maxLength, "\(here) of at most \(maxLength) characters", "\(s.count) characters") }
                }
                if schema.format == "date-time" {
                    let readable = cursor.rawContent(t).map { ISO8601.parse(bytes: $0) != nil } ?? cursor.string(t).map { ISO8601.parse($0) != nil } ?? false
                    if !readable {
                        add(.dateTime, "\(path.isEmpty ? "the body" : pathText): an ISO 8601 date-time", "“\((cursor.string(t) ?? "").prefix(40))”")
                    }
                }
            default:
                cursor.index += 1
            }
        }

        /// A number token's value as an unsigned 64-bit integer, when it is a whole number that fits.
        func unsigned(_ t: JSONToken) -> UInt64? {
            guard JSONNumber.shape(cursor.bytes, t) == .integer else { return nil }
            return UInt64(String(decoding: UnsafeBufferPointer(rebasing: cursor.bytes[t.start..<t.end]), as: UTF8.self))
        }

        /// Required fields first (in the schema's order), then each member's problems in the order of
        /// the schema's properties, as the document lists them.
        mutating func object(_ schema: ContractSchema) {
            let objectStart = cursor.index
            cursor.index += 1  // {
            var seen = [Bool](repeating: false, count: schema.propertyList.count)
            var memberProblems: [(order: Int, problem: Problem)] = []
            if cursor.current?.kind == .endObject {
                cursor.index += 1
            } else {
                while let key = cursor.current {
                    let keyIndex = cursor.index
                    cursor.index += 2  // the key and the colon
                    let p = schema.propertyList.indices.first { cursor.string(key, equals: schema.propertyNames[$0]) }
                    if let p {
                        seen[p] = true
                        path.append(.key(keyIndex))
                        let before = problems.count
                        check(schema.propertyList[p].schema)
                        path.removeLast()
                        for found in problems[before...] { memberProblems.append((p, found)) }
                        problems.removeSubrange(before...)
                    } else {
                        _ = cursor.skipValue()
                    }
                    let next = cursor.current?.kind
                    cursor.index += 1
                    if next != .comma { break }
                }
            }
            for (name, p) in schema.requiredProperties {
                if let p, seen[p] { continue }
                if p == nil, objectHas(name, from: objectStart) { continue }
                add(.required, "\(path.isEmpty ? "" : pathText + ".")\(name) (required)", "missing", path: path.isEmpty ? name : pathText + "." + name)
            }
            for (_, problem) in memberProblems.sorted(by: { $0.order < $1.order }) where problems.count < limit { problems.append(problem) }
        }

        /// Whether the object starting at token `start` has the key `name` (for a required name the
        /// schema lists under no property: walked again, as it is rare).
        func objectHas(_ name: String, from start: Int) -> Bool {
            var c = cursor
            c.index = start + 1
            let bytes = Array(name.utf8)
            while let key = c.current, key.kind == .string {
                if c.string(key, equals: bytes) { return true }
                c.index += 2
                guard c.skipValue(), c.current?.kind == .comma else { return false }
                c.index += 1
            }
            return false
        }

        mutating func array(_ schema: ContractSchema) {
            cursor.index += 1  // [
            if cursor.current?.kind == .endArray { cursor.index += 1; return }
            var n = 0
            while cursor.current != nil {
                if let items = schema.items, problems.count < limit {
                    path.append(.index(n))
                    check(items)
                    path.removeLast()
                } else {
                    _ = cursor.skipValue()
                }
                n += 1
                let next = cursor.current?.kind
                cursor.index += 1
                if next != .comma { break }
            }
        }
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

    /// A bound as the document wrote it: `0`, not `0.0`.
    static func number(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
    }
}
