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
    /// `properties` in name order, made once (a check walks them for every object of every answer).
    let propertyList: [(name: String, schema: ContractSchema)]
    /// `type` as bits (`SchemaCheck.bit`), made once; 0 when any value passes (no type given).
    let typeMask: UInt8
    /// The property names as bytes, in `propertyList`'s order (compared with an answer's keys as they came).
    let propertyNames: [[UInt8]]
    /// `required`, each with its index in `propertyList` (nil for a name listed under no property).
    let requiredProperties: [(name: String, index: Int?)]

    enum CodingKeys: String, CodingKey { case type, required, properties, items, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, format }

    init(_ type: [String], required: [String]? = nil, properties: [String: ContractSchema]? = nil, items: ContractSchema? = nil,
         minimum: Double? = nil, maximum: Double? = nil, exclusiveMinimum: Bool? = nil, exclusiveMaximum: Bool? = nil,
         minLength: Int? = nil, maxLength: Int? = nil, format: String? = nil) {
        self.type = type
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
}

/// One operation of the document: where it is, what it may answer, and the rules its words state.
public struct ContractOperation: Sendable, Encodable {
    public let operationId: String
    public let method: String
    public let path: String
    public let responses: [ContractResponse]

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

    /// The contract built into the binary: the copy of `reiterate-api.yaml` beside this file, embedded
    /// by SwiftPM (a test keeps it equal to the shared file). Read once, on first use.
    public static let bundled: Contract = {
        do {
            return try ContractDocument.read(bundledText, source: "built in")
        } catch {
            // The copy is tested to read; should a library change break that, no check is better
            // than a crash: the operations are empty and every response passes unchecked.
            return Contract(operations: [], error: nil, source: "built in (unreadable: \(error))")
        }
    }()

    /// The built-in contract as a session starts with it: the form OpenAPIKit read of the built-in
    /// document when the package was made (`reiterate-api.contract.json`, written by `make contract`;
    /// a test holds it equal to what OpenAPIKit reads now), when it was read from this very text; else
    /// the document read again, and kept in `cacheDirectory` (a later start reads it back in about a
    /// millisecond instead of 60, and without the heap OpenAPIKit grows).
    public static func builtIn(cacheDirectory: String?) -> Contract {
        let text = bundledText
        if let seed = ContractCache.read(bytes: PackageResources.reiterate_api_contract_json, source: "built in", document: ContractCache.hash(text)) {
            return seed
        }
        return (try? ContractDocument.read(text, source: "built in", cacheDirectory: cacheDirectory)) ?? bundled
    }

    /// The built-in document read by OpenAPIKit, in the kept form (`reiterate-shop contract --kept`,
    /// which `make contract` writes into the package).
    public static func builtInKeptForm() -> String {
        ContractCache.encode(bundled, document: bundledText).map { String(decoding: $0, as: UTF8.self) + "\n" } ?? ""
    }

    /// The text of the built-in copy.
    static var bundledText: String { String(decoding: PackageResources.reiterate_api_yaml, as: UTF8.self) }
}
