import Foundation
import HTTPTypes
import JSONTokens

/// Holds one request of the app under test to the contract: its path and version, its method, its
/// parameters, its body's media type and its body. What it finds is the app's fault (`Blame.app`).
/// The tool's own requests are never held to it: `negative` sends broken ones on purpose.
public struct RequestConformance: Sendable {
    public let contract: Contract

    public init(contract: Contract) { self.contract = contract }

    /// The findings on a request as it went out (its key's path from the base URL's prefix on).
    public func check(_ request: ExchangeRequest) -> [Finding] {
        check(method: request.key.method.rawValue, path: request.key.path, query: request.key.query, headers: request.headers,
              body: request.body, match: request.match)
    }

    /// The findings on one request: `path` from the base URL's prefix on, without its query; `query`
    /// decoded, in the order sent; `match` the operation it was found to be when it was made (else
    /// found here, from the method and path).
    public func check(method: String, path: String, query: [RequestKey.QueryItem], headers: HTTPFields, body: [UInt8]?,
                      match known: RequestMatch? = nil) -> [Finding] {
        var findings: [Finding] = []
        func add(_ check: ContractCheck, _ expected: String, _ actual: String, at place: FindingPlace? = nil) {
            findings.append(Finding(check: check, expected: expected, actual: actual, place: place, blame: .app))
        }
        let method = method.uppercased()
        let id: OperationID
        switch known ?? contract.match(method: method, path: path) {
        case .unknown:
            // Under the API's prefix, a path the contract does not have; elsewhere, not the shop's request.
            if contract.isUnderAPI(path) { add(.requestPath, "a path of the contract", "\(method) \(path)") }
            return findings
        case let .wrongMethod(operation, expected):
            add(.requestMethod, "\(expected) (\(operation.rawValue))", method)
            return findings
        case let .otherVersion(operation, expectedPath):
            add(.requestVersion, "\(expectedPath) (\(operation.rawValue))", path)
            id = operation
        case let .operation(operation):
            id = operation
        }
        guard let operation = contract.operation(id) else { return findings }
        guard operation.method == method else {
            // Another version and another method: its parameters and body are not held to the operation's.
            add(.requestMethod, "\(operation.method) (\(id.rawValue))", method)
            return findings
        }
        for parameter in operation.parameters {
            let values: [String]
            switch parameter.location {
            case .query: values = query.filter { $0.name == parameter.name }.map(\.value)
            case .header: values = HTTPField.Name(parameter.name).map { headers[values: $0] } ?? []
            case .path, .cookie: continue  // a path parameter is there when the path matched; cookies are not the API's
            }
            if values.isEmpty, parameter.required {
                add(.requestParameter, "the \(parameter.location.rawValue) parameter \(parameter.name) (required)", "missing",
                    at: .parameter(name: parameter.name, rule: .required))
            }
            guard let schema = parameter.schema else { continue }
            for value in values {
                for problem in Self.problems(value, parameter.name, schema) {
                    add(.requestParameter, problem.expected, problem.actual, at: .parameter(name: parameter.name, rule: problem.rule))
                }
            }
        }
        findings += Self.body(body ?? [], contentType: headers[.contentType], operation: operation)
        return findings
    }

    /// A body against what the operation takes: there when required; labelled with a media type it
    /// takes; JSON, and allowed by the schema, when it takes JSON. No body where none is declared is fine.
    static func body(_ body: [UInt8], contentType: String?, operation: ContractOperation) -> [Finding] {
        guard let declared = operation.requestBody else { return [] }
        var findings: [Finding] = []
        func add(_ check: ContractCheck, _ expected: String, _ actual: String, at place: FindingPlace?) {
            findings.append(Finding(check: check, expected: expected, actual: actual, place: place, blame: .app))
        }
        let types = declared.contentTypes.joined(separator: " or ")
        guard !body.isEmpty else {
            if declared.required { add(.requestBody, "a body (required)\(types.isEmpty ? "" : ": " + types)", "none", at: .field(path: "", rule: .required)) }
            return findings
        }
        let mime = contentType.map(Self.mediaType)
        if !declared.contentTypes.isEmpty, !declared.contentTypes.contains(where: { $0.lowercased() == mime }) {
            add(.requestContentType, types, contentType.map { "“\($0)”" } ?? "none", at: .header("Content-Type"))
        }
        guard declared.takesJSON else { return findings }
        let tokens = JSONTokenizer.tokens(body)
        guard body.withUnsafeBufferPointer({ JSONCursor.isValid($0, tokens) }) else {
            add(.requestBody, "a JSON body", "a body that is not JSON (\(body.count) bytes)", at: .field(path: "", rule: .type))
            return findings
        }
        guard let schema = declared.schema else { return findings }
        let problems = body.withUnsafeBufferPointer { bytes in
            var cursor = JSONCursor(bytes: bytes, tokens: tokens)
            return SchemaCheck.validate(&cursor, schema)
        }
        for problem in problems { add(.requestBody, problem.expected, problem.actual, at: problem.place) }
        return findings
    }

    /// `application/json; charset=utf-8` → `application/json`.
    static func mediaType(_ contentType: String) -> String {
        String(contentType.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased()
    }

    struct Problem: Equatable {
        var expected: String
        var actual: String
        var rule: FieldRule
    }

    /// A parameter's value (text, as sent) against its schema: its type (an integer is digits, with a
    /// sign at most; a number may have a fraction and an exponent; a boolean is `true` or `false`),
    /// bounds, and lengths. Arrays and objects in a query are not read: they pass.
    static func problems(_ value: String, _ name: String, _ schema: ContractSchema) -> [Problem] {
        let integer = Self.isInteger(value)
        let number: Double? = integer || Self.isNumber(value) ? Double(value) : nil
        let fits = schema.type.isEmpty || schema.type.contains { type in
            switch type {
            case "integer": return integer
            case "number": return number != nil
            case "boolean": return value == "true" || value == "false"
            case "null": return value.isEmpty
            default: return true  // string, array, object
            }
        }
        guard fits else { return [Problem(expected: "\(name): \(schema.type.joined(separator: " or "))", actual: "“\(value.prefix(40))”", rule: .type)] }
        var problems: [Problem] = []
        if let n = number, schema.type.contains(where: { $0 == "integer" || $0 == "number" }) {
            if let minimum = schema.minimum, n < minimum || (schema.exclusiveMinimum == true && n == minimum) {
                problems.append(Problem(expected: "\(name) \(schema.exclusiveMinimum == true ? ">" : "≥") \(SchemaCheck.number(minimum))", actual: value, rule: .minimum))
            }
            if let maximum = schema.maximum, n > maximum || (schema.exclusiveMaximum == true && n == maximum) {
                problems.append(Problem(expected: "\(name) \(schema.exclusiveMaximum == true ? "<" : "≤") \(SchemaCheck.number(maximum))", actual: value, rule: .maximum))
            }
        } else if schema.type.contains("string") || schema.type.isEmpty {
            if let minLength = schema.minLength, value.count < minLength {
                problems.append(Problem(expected: "\(name) of at least \(characters(minLength))", actual: "“\(value.prefix(40))”", rule: .minLength))
            }
            if let maxLength = schema.maxLength, value.count > maxLength {
                problems.append(Problem(expected: "\(name) of at most \(characters(maxLength))", actual: characters(value.count), rule: .maxLength))
            }
        }
        return problems
    }

    static func characters(_ n: Int) -> String { "\(n) character\(n == 1 ? "" : "s")" }

    /// `12`, `-3`, `+7`: digits, with a sign at most.
    static func isInteger(_ s: String) -> Bool {
        let digits = s.first == "-" || s.first == "+" ? s.dropFirst() : Substring(s)
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `1.5`, `-2e3`: a decimal number as JSON writes one (no `inf`, `nan` or hexadecimal).
    static func isNumber(_ s: String) -> Bool {
        !s.isEmpty && s.allSatisfy { $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) } && Double(s)?.isFinite == true
    }
}
