import Foundation

/// The operations of the contract, by their `operationId`: each endpoint type names its own once
/// (`EndpointDescription.operation`), and the watchdog finds the document's operation by it.
public enum OperationID: String, Sendable, Codable, CaseIterable {
    case listAudioPacks, getBalance, getCheerHistory, purchaseCheer, spendCheer, refreshToken
}

/// A JSON schema as the document gives it (references resolved), reduced to what the watchdog
/// checks: types (`null` among them when nullable), required fields, properties, items, bounds,
/// lengths and formats. Printed by `reiterate-shop contract`.
public final class ContractSchema: Sendable, Encodable {
    public let type: [String]
    public let required: [String]?
    public let properties: [String: ContractSchema]?
    public let items: ContractSchema?
    public let minimum: Double?
    public let maximum: Double?
    /// The bound itself is out (`exclusiveMinimum`); nil when it is in.
    public let exclusiveMinimum: Bool?
    public let exclusiveMaximum: Bool?
    public let minLength: Int?
    public let maxLength: Int?
    public let format: String?
    /// A number's `default` (the value a parameter left out takes); nil for none, or not a number.
    public let defaultNumber: Double?
    /// `properties` in name order, made once (a check walks them for every object of every answer).
    let propertyList: [(name: String, schema: ContractSchema)]
    /// `type` as bits (`SchemaCheck.bit`), made once; 0 when any value passes (no type given).
    let typeMask: UInt8
    /// The property names as bytes, in `propertyList`'s order (compared with an answer's keys as they came).
    let propertyNames: [[UInt8]]
    /// `required`, each with its index in `propertyList` (nil for a name listed under no property).
    let requiredProperties: [(name: String, index: Int?)]

    enum CodingKeys: String, CodingKey { case type, required, properties, items, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, format, defaultNumber = "default" }

    public init(_ type: [String], required: [String]? = nil, properties: [String: ContractSchema]? = nil, items: ContractSchema? = nil,
         minimum: Double? = nil, maximum: Double? = nil, exclusiveMinimum: Bool? = nil, exclusiveMaximum: Bool? = nil,
         minLength: Int? = nil, maxLength: Int? = nil, format: String? = nil, defaultNumber: Double? = nil) {
        self.type = type
        self.defaultNumber = defaultNumber
        self.exclusiveMinimum = exclusiveMinimum == true ? true : nil
        self.exclusiveMaximum = exclusiveMaximum == true ? true : nil
        self.required = required
        self.properties = properties
        self.items = items
        self.minimum = minimum
        self.maximum = maximum
        self.minLength = minLength
        self.maxLength = maxLength
        self.format = format
        propertyList = (properties ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        typeMask = type.reduce(0) { $0 | SchemaCheck.bit(ofType: $1) }
        propertyNames = propertyList.map { Array($0.name.utf8) }
        let list = propertyList
        requiredProperties = (required ?? []).map { name in (name, list.firstIndex { $0.name == name }) }
    }
}

/// The answers an operation declares for one status (`200`, `402`, `4XX`, or `default`: any other).
public struct ContractResponse: Sendable, Encodable {
    /// As the document writes it: a code (`200`), a range (`4XX`) or `default`.
    public let status: String
    /// The media types of its body (`application/json`); empty when it declares no body.
    public let contentTypes: [String]
    /// The JSON body's schema.
    public let schema: ContractSchema?

    public init(status: String, contentTypes: [String], schema: ContractSchema?) {
        self.status = status
        self.contentTypes = contentTypes
        self.schema = schema
    }
}

/// One operation of the document: where it is, what it takes, and what it may answer.
public struct ContractOperation: Sendable, Encodable {
    public let operationId: String
    public let method: String
    public let path: String
    /// Its parameters (the path item's and its own; its own win), `$ref`s resolved.
    public let parameters: [ContractParameter]
    /// The body it takes; nil when it declares none.
    public let requestBody: ContractRequestBody?
    public let responses: [ContractResponse]
    /// Whether it takes a token: the document's `security` (the operation's own, else the document's) names
    /// a scheme. `auth/refresh` says `security: []`.
    public let requiresAuth: Bool

    public init(operationId: String, method: String, path: String, parameters: [ContractParameter] = [],
                requestBody: ContractRequestBody? = nil, responses: [ContractResponse], requiresAuth: Bool = true) {
        self.requiresAuth = requiresAuth
        self.operationId = operationId
        self.method = method
        self.path = path
        self.parameters = parameters
        self.requestBody = requestBody
        self.responses = responses
    }

    /// The 2xx codes it declares (the contract declares one per operation).
    public var successes: [Int] { responses.compactMap { Int($0.status) }.filter { (200..<300).contains($0) } }

    /// What answers `status`: its own code, else its range (`4XX`), else `default` for an error (the
    /// document's conventions: errors are 4xx/5xx; a `default` does not make a 3xx or a 201 right).
    public func response(for status: Int) -> ContractResponse? {
        if let own = responses.first(where: { $0.status == String(status) }) { return own }
        if let range = responses.first(where: { $0.status == "\(status / 100)XX" }) { return range }
        guard (400..<600).contains(status) else { return nil }
        return responses.first { $0.status == "default" }
    }

    /// Whether the document allows `status`: a declared one, or any 4xx/5xx where `default` is declared.
    public func declares(_ status: Int) -> Bool { response(for: status) != nil }
}

/// The contract the watchdog checks against, read from an OpenAPI document (`ContractDocument`):
/// the built-in copy of `reiterate-api.yaml`, or another version given with `--contract`.
public struct Contract: Sendable {
    public let operations: [ContractOperation]
    /// The document's `Error` schema (`components/schemas/Error`), if it has one.
    public let error: ContractSchema?
    /// Where it came from: "built in" or the file's path (shown by `config check` and `contract`).
    public let source: String

    public init(operations: [ContractOperation], error: ContractSchema?, source: String) {
        self.operations = operations
        self.error = error
        self.source = source
    }

    public func operation(_ id: OperationID) -> ContractOperation? {
        operations.first { $0.operationId == id.rawValue }
    }

    /// The contract built into the binary: the form OpenAPIKit read of the built-in copy of
    /// `reiterate-api.yaml` (`reiterate-api.contract.json`, written by `make contract` with
    /// `reiterate-contract --built-in`; a test holds it equal to what OpenAPIKit reads now, and the copy
    /// equal to the shared document). Read in about a millisecond, with no OpenAPIKit in the app.
    public static func builtIn() -> Contract {
        if let kept = ContractCache.read(bytes: PackageResources.reiterate_api_contract_json, source: "built in",
                                         document: ContractCache.hash(builtInText)) {
            return kept
        }
        // Out of step with the copy (a test and `make contract` prevent it): no check is better than a
        // wrong one; every response passes unchecked.
        return Contract(operations: [], error: nil, source: "built in (its kept form is out of date: run make contract)")
    }

    /// The text of the built-in copy of the document.
    public static var builtInText: String { String(decoding: PackageResources.reiterate_api_yaml, as: UTF8.self) }

    /// This contract in the kept form, as read from the document `text` (what `reiterate-contract`
    /// prints and the cache folder keeps).
    public func keptForm(document text: String) -> String {
        ContractCache.encode(self, document: text).map { String(decoding: $0, as: UTF8.self) + "\n" } ?? ""
    }
}

/// Why a contract document could not be used, in plain words.
public struct ContractLoadError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}
