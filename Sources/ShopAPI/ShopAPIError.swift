/// Every way a call can fail, as facts: what happened, the endpoint, the request id when a response
/// head arrived. Wording (and sanitizing server text) is the display layer's job (`ErrorText` in
/// ShopViewModels), shared by the TUI and `print`. Cancellation is not here: a cancelled call throws
/// `CancellationError`.
public enum ShopAPIError: Error, Sendable, Equatable {
    /// The request did not get a whole HTTP answer.
    case transport(TransportError, endpoint: EndpointKey)
    /// The server answered 4xx/5xx; `message` and `code` from its JSON error body: the contract's
    /// `message`, else the words it sent instead (`error`, `detail`: `ServerWords`; the watchdog
    /// flags such a body, and its words still show).
    case http(status: Int, message: String?, code: String?, requestID: String?, endpoint: EndpointKey, retryAfter: Int?)
    /// The body was not JSON (a proxy's HTML page, a wrong content type); `text`: the start of it,
    /// when it is text (an HTML page's title), as the server sent it.
    case notJSON(status: Int, contentType: String?, requestID: String?, endpoint: EndpointKey, text: String? = nil)
    /// JSON that does not match the contract.
    case undecodable(DecodeProblem, requestID: String?, endpoint: EndpointKey)
    /// The access token was refused and could not be renewed.
    case signInExpired(SignInProblem, requestID: String?)
    /// A setting makes the call impossible.
    case configuration(ConfigurationProblem)

    public var requestID: String? {
        switch self {
        case let .http(_, _, _, id, _, _), let .notJSON(_, _, id, _, _), let .undecodable(_, id, _), let .signInExpired(_, id):
            return id
        case let .transport(error, _): return error.requestID
        case .configuration: return nil
        }
    }

    /// The server's own `message`, when it sent one (raw: sanitize before showing).
    public var serverMessage: String? {
        switch self {
        case let .http(_, message, _, _, _, _), let .notJSON(_, _, _, _, message): if let message, !message.isEmpty { return message }
        case let .signInExpired(.refreshRefused(message), _), let .signInExpired(.renewedTokenRefused(message), _):
            if let message, !message.isEmpty { return message }
        default: break
        }
        return nil
    }

    public var status: Int? {
        switch self {
        case let .http(status, _, _, _, _, _), let .notJSON(status, _, _, _, _): return status
        case let .transport(.cutShort(status, _), _): return status
        default: return nil
        }
    }

    /// `GET /api/v1/balance`, when the error belongs to a request.
    public var endpoint: EndpointKey? {
        switch self {
        case let .transport(_, e), let .http(_, _, _, _, e, _), let .notJSON(_, _, _, e, _), let .undecodable(_, _, e): return e
        case .signInExpired, .configuration: return nil
        }
    }

    /// The one classification every classifier (wording, exit status, outage, "may have been applied") uses.
    public var category: ErrorCategory {
        switch self {
        case let .transport(error, _):
            switch error {
            case .offline: return .offline
            case .connectionRefused: return .refused
            case .dns: return .dns
            case let .tls(problem): return .tls(problem)
            case .connectTimeout, .timeout: return .timeout
            case .cutShort: return .cutShort
            case .responseTooLarge, .invalidURL, .invalidHeader, .other, .proxy: return .network
            }
        case let .http(status, _, _, _, _, _): return .httpStatus(status)
        case .notJSON: return .notJSON
        case .undecodable: return .undecodable
        case .signInExpired: return .signIn
        case .configuration(.unexpected): return .internalFailure
        case .configuration: return .configuration
        }
    }
}

extension ErrorCategory {
    /// The category of any error a call can throw: cancellation included.
    public static func of(_ error: any Error) -> ErrorCategory {
        if error is CancellationError { return .cancelled }
        return (error as? ShopAPIError)?.category ?? .internalFailure
    }
}

/// The kinds of failure, for every decision that depends on one.
public enum ErrorCategory: Sendable, Equatable {
    case offline, refused, dns
    case tls(TLSProblem)
    case timeout
    /// The connection ended before the whole answer came.
    case cutShort
    /// Another failure below HTTP (a response too large, a header HTTP refuses, an unexpected failure).
    case network
    case httpStatus(Int)
    case notJSON, undecodable, signIn, cancelled, configuration
    /// A failure of this program, not of the server or the network.
    case internalFailure

    /// No usable answer: a cached value may stand in (a refusal such as 401/403/404 is an answer to act on).
    public var isOutage: Bool {
        switch self {
        case .offline, .refused, .dns, .tls, .timeout, .cutShort, .network, .notJSON, .undecodable: return true
        case let .httpStatus(status): return status >= 500 || status == 408 || status == 429
        case .signIn, .cancelled, .configuration, .internalFailure: return false
        }
    }

    /// A write that may have been applied although no usable answer came back: settle it by reading
    /// again, never by sending it again. Only failures that provably happened before the request
    /// reached the application are "not applied": no connection (refused, DNS, TLS, offline), a
    /// refusal (4xx, sign-in), a setting. A timeout, a cut or unreadable answer, a 5xx (a proxy's
    /// 502/504 included) may all follow a write the server did.
    public var mayHaveBeenApplied: Bool {
        switch self {
        case .timeout, .cutShort, .network, .cancelled, .notJSON, .undecodable, .internalFailure: return true
        case let .httpStatus(status): return status >= 500
        case .offline, .refused, .dns, .tls, .signIn, .configuration: return false
        }
    }
}

extension ShopAPIError {
    /// The server answered, in valid JSON, a number beyond a 64-bit integer: a fault in its data, not an
    /// outage (no cached value stands in for it as if the server could not be reached).
    public var isBeyond64Bits: Bool {
        if case let .undecodable(problem, _, _) = self, case .beyond64Bits = problem.reason { return true }
        return false
    }
}

/// Why a body could not be read as the contract's type.
public struct DecodeProblem: Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        case missing
        /// `expected` is a kind of value: "text", "a number", "a list", "an object", "true or false".
        case wrongType(expected: String)
        case null(expected: String)
        case outOfRange
        /// A whole number the contract types as an integer, written in valid JSON, beyond a 64-bit integer
        /// (its digits: `100000000000000000000`).
        case beyond64Bits(String)
        /// A value of the right type that does not read (a date that is not ISO 8601…); `detail` is ours.
        case unreadableValue(String)
        /// The body is not JSON at all.
        case invalidJSON
        /// The body is JSON cut off before its end.
        case cutShort
        /// A 2xx whose body is the contract's Error object (its `message`, and `code`) in place of the
        /// answer: the status is the deviation, not a field (`status`: the 2xx sent).
        case errorBody(status: Int, code: String?, message: String?)
    }

    /// The contract's status for an error `code` it names (402 `insufficient_balance`, 409
    /// `duplicate_transaction`, 401 `unauthorized`); nil for another code.
    public static func contractStatus(forCode code: String?) -> Int? {
        switch code {
        case "insufficient_balance"?: return 402
        case "duplicate_transaction"?: return 409
        case "unauthorized"?: return 401
        default: return nil
        }
    }

    /// `items[3].amount`, or "" for the whole body.
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }
}

/// Why the sign-in is over.
public enum SignInProblem: Sendable, Equatable {
    case noRefreshToken
    /// The server refused the refresh token (its message, when it sent one).
    case refreshRefused(String?)
    case refreshAlreadyRefused
    /// The renewed access token was refused too.
    case renewedTokenRefused(String?)
    /// The server issued an access token that cannot travel in a header.
    case unusableIssuedToken
}

/// A setting that makes a call impossible.
public enum ConfigurationProblem: Sendable, Equatable {
    /// `shown` is the URL as given, or nil when it carries credentials (never echoed).
    case invalidBaseURL(shown: String?)
    case tokenCharacters
    case cannotEncodeRequest(endpoint: EndpointKey)
    case unexpected
}
