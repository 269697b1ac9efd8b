/// The HTTP layer under the client, small enough to fake: one request in, one whole response out.

public enum RequestMethod: String, Sendable, Hashable {
    case get = "GET"
    case post = "POST"
}

/// Header fields in order, looked up case-insensitively.
public struct HeaderFields: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) { fields = elements.map { (name: $0.0, value: $0.1) } }

    public subscript(name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    public mutating func set(_ name: String, _ value: String) {
        let lower = name.lowercased()
        fields.removeAll { $0.name.lowercased() == lower }
        fields.append((name: name, value: value))
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

public struct TransportRequest: Sendable {
    public var method: RequestMethod
    public var url: String
    public var headers: HeaderFields
    public var body: [UInt8]?
    /// The whole exchange must finish within this (the request deadline).
    public var timeout: Duration

    public init(method: RequestMethod, url: String, headers: HeaderFields = [:], body: [UInt8]? = nil, timeout: Duration) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

public struct TransportResponse: Sendable {
    public var status: Int
    public var headers: HeaderFields
    public var body: [UInt8]

    public init(status: Int, headers: HeaderFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What can go wrong below HTTP. Cancellation is not here: a cancelled request throws `CancellationError`.
public enum TransportError: Error, Sendable, Equatable {
    case connectionRefused(host: String)
    case dns(host: String)
    case tls(String)
    /// No connection within the connect timeout.
    case connectTimeout(host: String)
    /// No complete response within the request timeout.
    case timeout
    /// The server closed or reset the connection before a complete response.
    case connectionLost(String)
    /// The network itself is unreachable.
    case offline(String)
    case responseTooLarge(limit: Int)
    case invalidURL(String)
    case other(String)

    /// Worth another try for an idempotent request: the request never reached the application.
    public var isConnectionFailure: Bool {
        switch self {
        case .connectionRefused, .connectTimeout, .connectionLost, .offline, .dns: return true
        default: return false
        }
    }
}

public protocol HTTPTransport: Sendable {
    /// Sends one request and returns the whole response; throws `TransportError` or `CancellationError`.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
