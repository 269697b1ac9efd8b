import TerminalText

/// Every way a call can fail, each case saying in one line what happened. Cancellation is not here:
/// a cancelled call throws `CancellationError`.
public enum ShopAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request did not get an HTTP answer.
    case transport(TransportError, endpoint: String)
    /// The server answered 4xx/5xx; `message` and `code` from its JSON error body.
    case http(status: Int, message: String?, code: String?, requestID: String?, endpoint: String, retryAfter: Int?)
    /// The body was not JSON (a proxy's HTML page, a wrong content type).
    case notJSON(status: Int, contentType: String?, requestID: String?, endpoint: String)
    /// JSON that does not match the contract; `path` names the field.
    case undecodable(path: String, reason: String, requestID: String?, endpoint: String)
    /// The access token was refused and could not be renewed.
    case signInExpired(reason: String, requestID: String?)
    /// A setting makes the call impossible (a bad base URL, say).
    case configuration(String)

    public var requestID: String? {
        switch self {
        case let .http(_, _, _, id, _, _), let .notJSON(_, _, id, _), let .undecodable(_, _, id, _), let .signInExpired(_, id):
            return id
        case .transport, .configuration: return nil
        }
    }

    /// The server's own `message`, when it sent one.
    public var serverMessage: String? {
        if case let .http(_, message, _, _, _, _) = self, let message, !message.isEmpty { return message }
        return nil
    }

    public var status: Int? {
        switch self {
        case let .http(status, _, _, _, _, _), let .notJSON(status, _, _, _): return status
        default: return nil
        }
    }

    /// One line, safe for a terminal (server text sanitized), ending with the request id when there is one.
    public var description: String {
        let text: String
        switch self {
        case let .transport(error, endpoint):
            text = "\(endpoint): \(Self.describe(error))"
        case let .http(status, message, code, _, endpoint, retryAfter):
            var s = "\(endpoint): HTTP \(status) \(Self.reason(status))"
            if let message, !message.isEmpty { s += ": \(message)" }
            if let code, !code.isEmpty { s += " [\(code)]" }
            if let retryAfter { s += " (retry after \(retryAfter) s)" }
            text = s
        case let .notJSON(status, contentType, _, endpoint):
            text = "\(endpoint): HTTP \(status) \(Self.reason(status)) with a non-JSON body (\(contentType ?? "no content type"))"
        case let .undecodable(path, reason, _, endpoint):
            if reason == "cut short" {
                text = "\(endpoint): the response is not valid JSON (it ends early: cut short)"
            } else if path == "(top level)" && reason.hasSuffix("not valid JSON") {
                text = "\(endpoint): the response is not valid JSON"
            } else {
                text = "\(endpoint): unexpected response: \(reason.hasPrefix(path) ? reason : "\(path): \(reason)")"
            }
        case let .signInExpired(reason, _):
            text = "sign-in expired: \(reason)"
        case let .configuration(message):
            text = message
        }
        let line = Sanitizer.line(text)
        return requestID.map { "\(line) (request id \(Sanitizer.line($0)))" } ?? line
    }

    static func describe(_ error: TransportError) -> String {
        switch error {
        case let .connectionRefused(host): return "connection refused by \(host) — is the server running?"
        case let .dns(host): return "cannot resolve host \(host)"
        case let .tls(detail): return "TLS error: \(detail)"
        case let .connectTimeout(host): return "no connection to \(host) (connect timed out)"
        case .timeout: return "timed out waiting for the server"
        case let .connectionLost(detail): return "connection lost: \(detail)"
        case let .offline(detail): return "offline: \(detail)"
        case let .responseTooLarge(limit): return "response larger than \(limit / (1 << 20)) MiB"
        case let .invalidURL(url): return "invalid URL \(url)"
        case let .other(detail): return "network error: \(detail)"
        }
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 402: return "Payment Required"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return status >= 500 ? "Server Error" : "Client Error"
        }
    }
}
