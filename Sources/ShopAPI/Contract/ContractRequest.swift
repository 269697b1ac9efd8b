// What the contract says of requests (each operation's parameters and body), and which operation a
// request is for, found from its method and path alone (the app's requests come with no endpoint type).

/// One parameter an operation takes, as the document gives it (`$ref`s resolved).
public struct ContractParameter: Sendable, Encodable {
    /// Where a parameter goes.
    public enum Location: String, Sendable, Encodable {
        case query, header, path, cookie
    }

    public let name: String
    public let location: Location
    /// A path parameter always is; the others when the document says so.
    public let required: Bool
    public let schema: ContractSchema?

    enum CodingKeys: String, CodingKey { case name, location = "in", required, schema }

    public init(name: String, location: Location, required: Bool, schema: ContractSchema?) {
        self.name = name
        self.location = location
        self.required = required || location == .path
        self.schema = schema
    }
}

/// The body an operation takes.
public struct ContractRequestBody: Sendable, Encodable {
    /// Whether a request must carry it.
    public let required: Bool
    /// The media types it may come as (`application/json`).
    public let contentTypes: [String]
    /// The JSON body's schema.
    public let schema: ContractSchema?

    public init(required: Bool, contentTypes: [String], schema: ContractSchema?) {
        self.required = required
        self.contentTypes = contentTypes
        self.schema = schema
    }

    /// Whether it comes as JSON (`application/json`, or a `+json` type).
    public var takesJSON: Bool { contentTypes.contains { ShopClient.isJSON($0) } }
}

/// Which operation a request's method and path are for.
public enum RequestMatch: Equatable, Sendable {
    /// The operation, when the method and path are exactly its (not another version's, not another method).
    public var operation: OperationID? { if case let .operation(id) = self { id } else { nil } }

    /// The operation at this path with this method.
    case operation(OperationID)
    /// A known operation's path with another version segment (`/api/v1/purchase_cheer` where the
    /// contract has `/api/v2/purchase_cheer`); the operation's own path.
    case otherVersion(OperationID, expectedPath: String)
    /// A known operation's path with a method it does not have; the operation's method (`POST`).
    case wrongMethod(OperationID, expected: String)
    /// No operation's path, in any version.
    case unknown
}

extension Contract {
    /// The operation a request is for. `path` is the request's path from the base URL's prefix on,
    /// without its query (`/api/v1/cheer_history`); a `{name}` segment of the document's paths matches
    /// any one non-empty segment. The method and path of an operation first; then the same method on
    /// another version of its path; then another method on its path; then another version with another
    /// method (still the path the request meant: its method is for the caller to hold against it).
    public func match(method: String, path: String) -> RequestMatch {
        let method = method.uppercased()
        let asked = Self.segments(path)
        var samePath: (OperationID, ContractOperation)?
        var otherVersion: (OperationID, ContractOperation)?
        for operation in operations {
            guard let id = OperationID(rawValue: operation.operationId) else { continue }
            let template = Self.segments(operation.path)
            if Self.matches(asked, template, anyVersion: false) {
                if operation.method == method { return .operation(id) }
                samePath = samePath ?? (id, operation)
            } else if Self.matches(asked, template, anyVersion: true) {
                if otherVersion == nil || (otherVersion?.1.method != method && operation.method == method) { otherVersion = (id, operation) }
            }
        }
        if let (id, operation) = otherVersion, operation.method == method { return .otherVersion(id, expectedPath: operation.path) }
        if let (id, operation) = samePath { return .wrongMethod(id, expected: operation.method) }
        if let (id, operation) = otherVersion { return .otherVersion(id, expectedPath: operation.path) }
        return .unknown
    }

    /// Whether `path` is under the API's prefix: its first segment is that of an operation's path
    /// (`/api/…`). A request elsewhere (the app's pictures, another service on the host) is not the API's.
    public func isUnderAPI(_ path: String) -> Bool {
        guard let first = Self.segments(path).dropFirst().first, !first.isEmpty else { return false }
        return operations.contains { Self.segments($0.path).dropFirst().first == first }
    }

    /// `/api/v1/balance` → `["", "api", "v1", "balance"]` (the query, if any, left out; empty segments kept:
    /// `/api/v1/balance/` is not the document's path).
    static func segments(_ path: String) -> [Substring] {
        path.prefix { $0 != "?" }.split(separator: "/", omittingEmptySubsequences: false)
    }

    static func matches(_ asked: [Substring], _ template: [Substring], anyVersion: Bool) -> Bool {
        guard asked.count == template.count else { return false }
        for (a, t) in zip(asked, template) where a != t {
            if t.hasPrefix("{"), t.hasSuffix("}"), !a.isEmpty { continue }
            if anyVersion, isVersion(a), isVersion(t) { continue }
            return false
        }
        return true
    }

    /// `v1`, `v2`, … (a path's version segment).
    static func isVersion(_ segment: Substring) -> Bool {
        segment.count > 1 && segment.first == "v" && segment.dropFirst().allSatisfy(\.isASCII) && segment.dropFirst().allSatisfy(\.isNumber)
    }
}
