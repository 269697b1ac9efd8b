import HTTPTypes
import TerminalText
import JSONTokens

/// The HTTP layer under the client, small enough to fake: one request in, one whole response out.
/// Header fields are swift-http-types' `HTTPFields` (ordered, case-insensitive, validated names).

/// The methods a request can have: the API's own (GET and POST), and those the app under test may
/// send through the proxy (a request whose method is none of these is refused there).
public enum RequestMethod: String, Sendable, Hashable, Codable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case head = "HEAD"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
    case options = "OPTIONS"
}

extension HTTPFields {
    /// The value of the field called `name` (case-insensitive); nil for a name HTTP does not allow.
    public subscript(named name: String) -> String? {
        guard let field = HTTPField.Name(name) else { return nil }
        return self[field]
    }

    /// Replaces every field called `name` with one holding `value` (a name HTTP does not allow is ignored).
    public mutating func set(_ name: String, _ value: String) {
        guard let field = HTTPField.Name(name) else { return }
        self[field] = value
    }

    /// Builds fields from name/value pairs, in order; pairs whose name HTTP does not allow are skipped.
    public init(pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs {
            if let field = HTTPField.Name(name) { append(HTTPField(name: field, value: value)) }
        }
    }
}

extension HTTPField.Name {
    public static let requestID = HTTPField.Name("X-Request-Id") ?? .contentType
}

public struct TransportRequest: Sendable {
    public var method: RequestMethod
    public var url: String
    public var headers: HTTPFields
    public var body: [UInt8]?
    /// The whole exchange must finish within this (the request deadline).
    public var timeout: Duration

    public init(method: RequestMethod, url: String, headers: HTTPFields = [:], body: [UInt8]? = nil, timeout: Duration) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

public struct TransportResponse: Sendable {
    public var status: Int
    public var headers: HTTPFields
    public var body: [UInt8]
    /// The body's JSON tokens, made once by the client (nil until then).
    public var tokens: [JSONToken]?

    public init(status: Int, headers: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a TLS connection could not be made.
public enum TLSProblem: Sendable, Equatable {
    /// The server's certificate does not chain to a trusted CA.
    case untrusted
    /// The certificate failed verification although a CA file is configured: not signed by that CA,
    /// or expired (BoringSSL reports both the same way).
    case untrustedByCAFile
    /// The certificate is for another host name.
    case hostnameMismatch
    /// The certificate has expired (or is not valid yet).
    case expired
    /// The handshake failed for another reason (protocol, cipher, a plain-HTTP server on the port…).
    case handshake
    /// The configured CA file cannot be read.
    case caFileUnreadable(path: String)
}

/// What can go wrong below HTTP, as facts (the display layer words them). Cancellation is not here:
/// a cancelled request throws `CancellationError`.
public enum TransportError: Error, Sendable, Equatable {
    case connectionRefused(host: String)
    case dns(host: String)
    case tls(TLSProblem)
    /// No connection within the connect timeout.
    case connectTimeout(host: String)
    /// No complete response within the request timeout (`requestID` when the head had come).
    case timeout(requestID: String? = nil)
    /// The connection closed (or was reset) before the whole answer came. `status` and `requestID`
    /// are there when the response head had arrived.
    case cutShort(status: Int?, requestID: String?)
    /// The network itself is unreachable.
    case offline
    /// The answer was larger than `limit` bytes (its head had come: `requestID`).
    case responseTooLarge(limit: Int, requestID: String? = nil)
    case invalidURL
    /// A request header holds characters HTTP does not allow.
    case invalidHeader
    /// The HTTP proxy (`host:port`, never its credentials) failed the request: it refused or dropped
    /// the connection, wanted other credentials (407), or answered CONNECT with an error.
    case proxy(address: String, problem: ProxyFailure)
    /// Anything else; `detail` is a library's own words, for the log file only (never shown).
    case other(detail: String)

    public enum ProxyFailure: Sendable, Equatable { case unreachable, credentials, refusedTunnel }

    /// Worth another try for an idempotent request: the request never reached the application.
    public var isConnectionFailure: Bool {
        switch self {
        case .connectionRefused, .connectTimeout, .offline, .dns: return true
        case .proxy(_, .unreachable): return true
        case .cutShort(let status, _): return status == nil
        default: return false
        }
    }

    /// The request id of a response whose head arrived before the failure.
    public var requestID: String? {
        switch self {
        case let .cutShort(_, id), let .timeout(id), let .responseTooLarge(_, id): return id
        default: return nil
        }
    }

    /// The status of a response whose head arrived before the failure.
    public var status: Int? {
        if case let .cutShort(status, _) = self { return status }
        return nil
    }
}

public protocol HTTPTransport: Sendable {
    /// Sends one request and returns the whole response; throws `TransportError` or `CancellationError`.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

extension TransportError {
    /// What happened, in plain words: the one wording of a failure below HTTP. The CLI's `error:` line and
    /// the Requests tab (`ErrorText` adds what to try), a finding on the app's traffic, the proxy's own 502
    /// or 504 answer and the App Store's reads all say it so. A host or a path in it is sanitized.
    public var words: String {
        switch self {
        case let .connectionRefused(host): "connection refused by \(Sanitizer.line(host))"
        case let .dns(host): "the host name \(Sanitizer.line(host)) could not be found"
        case let .tls(problem): problem.words
        case let .connectTimeout(host): "no connection to \(Sanitizer.line(host)) (connect timed out)"
        case .timeout: "timed out waiting for the server"
        case let .cutShort(status, _):
            status == nil ? "the connection closed before an answer came" : "the connection closed before the answer was complete"
        case .offline: "offline: the network is unreachable"
        case let .responseTooLarge(limit, _): "the answer is larger than \(limit / (1 << 20)) MiB"
        case .invalidURL: "the request's address is not a valid URL"
        case .invalidHeader: "a request header holds characters HTTP does not allow"
        case .other: "the request failed for an unexpected network reason"
        case let .proxy(address, problem):
            switch problem {
            case .unreachable: "the proxy \(Sanitizer.line(address)) could not be reached"
            case .credentials: "the proxy \(Sanitizer.line(address)) wants other credentials (HTTP 407): check the user and password in its URL"
            case .refusedTunnel: "the proxy \(Sanitizer.line(address)) refused to open a tunnel to the server"
            }
        }
    }

    /// `words`, with what came of an answer's head before the failure (` (HTTP 503, request id rq-…)`).
    public var wordsWithHead: String {
        let head = [status.map { "HTTP \($0)" }, requestID.map { "request id \(Sanitizer.line($0))" }].compactMap { $0 }
        return words + (head.isEmpty ? "" : " (" + head.joined(separator: ", ") + ")")
    }
}

extension TLSProblem {
    /// The one wording of a TLS failure.
    public var words: String {
        switch self {
        case .untrusted: "TLS error: the server's certificate is not trusted (set ca_file for this environment)"
        case .untrustedByCAFile: "TLS error: the server's certificate is not signed by the CA in ca_file, or it has expired"
        case .hostnameMismatch: "TLS error: the server's certificate is for another host name"
        case .expired: "TLS error: the server's certificate has expired or is not valid yet"
        case .handshake: "TLS error: the secure connection could not be set up"
        case let .caFileUnreadable(path): "TLS error: the CA file \(Sanitizer.line(path)) is missing or unreadable"
        }
    }
}
