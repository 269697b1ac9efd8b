import ShopAPI
import TerminalText

/// The one place failures become words, for every front end (the TUI and `print`). The REST core
/// reports facts (`ShopAPIError`, `TransportError`); this turns them into one plain line, sanitizes
/// whatever came from the server, and never lets a library's names, numbers or paths through.
public enum ErrorText {
    /// `GET /api/v1/balance: <what happened> (request id rq-…)`: one line, safe for a terminal.
    public static func line(_ error: ShopAPIError) -> String { words(error).line }

    /// What happened, without the endpoint or the request id.
    public static func sentence(_ error: ShopAPIError) -> String { words(error).sentence }

    /// A failure in its parts (the request, our words, the server's own words, the request id), for a
    /// front end that lays them out itself.
    public static func words(_ error: ShopAPIError) -> FailureWords {
        var words = FailureWords(what: "")
        switch error {
        case let .http(status, message, code, _, _, retryAfter):
            words.status = status
            words.what = reasonPhrase(status)
            if let message, !message.isEmpty { words.serverWords = Sanitizer.line(message) }
            if let code, !code.isEmpty { words.after += " [\(Sanitizer.line(code))]" }
            if let retryAfter { words.after += " (retry after \(retryAfter) s)" }
        case let .notJSON(status, contentType, _, _, text):
            let type = contentType.map { Sanitizer.line(String($0.prefix(60))) } ?? "no content type"
            words.status = status
            words.what = "\(reasonPhrase(status)) with a non-JSON body (\(type))"
            words.serverWords = serverWords(text)
        case let .transport(failure, _):
            (words.what, words.advice) = parts(failure)
        case let .signInExpired(.refreshRefused(message), _):
            words.what = "sign-in expired: the refresh token was refused"
            words.serverWords = serverWords(message)
        case let .signInExpired(.renewedTokenRefused(message), _):
            words.what = "sign-in expired: the renewed access token was refused too"
            words.serverWords = serverWords(message)
        default:
            words.what = Sanitizer.line(ourSentence(error))
        }
        words.request = error.endpoint
        words.requestID = error.requestID.map(Sanitizer.line)
        return words
    }

    /// What happened in our words alone, for a failure that brings no words of the server's.
    static func ourSentence(_ error: ShopAPIError) -> String {
        switch error {
        case let .transport(failure, _):
            return sentence(failure)
        case let .http(status, _, _, _, _, _), let .notJSON(status, _, _, _, _):
            return "HTTP \(status) \(reasonPhrase(status))"
        case let .undecodable(problem, _, _):
            switch problem.reason {
            case .cutShort: return "the response is not valid JSON (it ends early: cut short)"
            case .invalidJSON where problem.path.isEmpty: return "the response is not valid JSON"
            case .beyond64Bits: return Sanitizer.line(DecodingFailure.describe(problem))
            // The status is what is wrong: it leads, with the server's words.
            case let .errorBody(_, _, message): return Sanitizer.line(DecodingFailure.describe(problem)) + said(message)
            default: return "unexpected answer: \(Sanitizer.line(DecodingFailure.describe(problem)))"
            }
        case let .signInExpired(problem, _):
            switch problem {
            case .noRefreshToken: return "sign-in expired: the access token was refused and no refresh token is configured"
            case let .refreshRefused(message): return "sign-in expired: the refresh token was refused" + said(message)
            case .refreshAlreadyRefused: return "sign-in expired: the refresh token was already refused; sign in again"
            case let .renewedTokenRefused(message): return "sign-in expired: the renewed access token was refused too" + said(message)
            case .unusableIssuedToken: return "sign-in expired: the server issued an access token that cannot be sent back"
            }
        case let .configuration(problem):
            switch problem {
            case let .invalidBaseURL(shown):
                let url = shown.map { "'\(Sanitizer.line($0))'" } ?? "(a URL with credentials)"
                return "invalid base URL \(url): expected http(s)://host[:port][/path], port 1–65535"
            case .tokenCharacters: return "the access token holds characters a bearer token cannot have (a stray newline?)"
            case let .cannotEncodeRequest(endpoint): return "the \(endpoint) request could not be encoded"
            case .unexpected: return "an unexpected internal failure"
            }
        }
    }

    /// One plain sentence for a failure below HTTP.
    public static func sentence(_ error: TransportError) -> String {
        let (what, advice) = parts(error)
        return what + advice
    }

    /// A failure below HTTP: what happened, and what to try (` — is the server running?`, or empty).
    static func parts(_ error: TransportError) -> (what: String, advice: String) {
        switch error {
        case .connectionRefused: return (error.words, " — is the server running?")
        case .proxy(_, .unreachable): return (error.words, " — is it running? (the proxy comes from HTTPS_PROXY/HTTP_PROXY or the config)")
        default: return (sentenceAlone(error), "")
        }
    }

    /// The one wording of a failure below HTTP (`TransportError.words`, in ShopAPI).
    static func sentenceAlone(_ error: TransportError) -> String { error.words }

    public static func sentence(_ problem: TLSProblem) -> String { problem.words }

    /// How an exchange in the inspector ended without an answer.
    public static func sentence(_ failure: ExchangeFailure) -> String {
        switch failure {
        case .cancelled: return "cancelled"
        case let .transport(error): return sentence(error)
        }
    }

    /// What to do when the server refused the token (empty otherwise).
    public static func signInAdvice(_ error: ShopAPIError, tokenVariable: String) -> String {
        guard error.status == 401 || error.category == .signIn else { return "" }
        return " — set \(tokenVariable) to a valid token or configure refresh_token_env"
    }

    /// Why a value shown is not live: a word or two (`offline`), and the longer form.
    public static func staleReason(_ error: ShopAPIError) -> StaleReason {
        let brief: String
        let detail: String
        switch error.category {
        case .refused: (brief, detail) = ("offline", "connection refused")
        case .dns: (brief, detail) = ("offline", "host not found")
        case .tls: (brief, detail) = ("TLS error", "certificate or handshake")
        case .timeout: (brief, detail) = ("offline", "timed out")
        case .cutShort: (brief, detail) = ("offline", "connection lost")
        case .offline: (brief, detail) = ("offline", "network unreachable")
        case .network: (brief, detail) = ("offline", "network error")
        case let .httpStatus(status): (brief, detail) = (statusWord(status), "HTTP \(status)")
        case .notJSON: (brief, detail) = (statusWord(error.status ?? 500), "HTTP \(error.status.map(String.init) ?? "?"), not JSON")
        case .undecodable: (brief, detail) = ("unreadable response", "")
        case .signIn: (brief, detail) = ("sign-in expired", "")
        case .cancelled: (brief, detail) = ("cancelled", "")
        case .configuration: (brief, detail) = ("configuration error", "")
        case .internalFailure: (brief, detail) = ("internal error", "")
        }
        return StaleReason(brief: brief, full: detail.isEmpty ? brief : "\(brief): \(detail)")
    }

    /// A failed status in a word or two for the header: only a 5xx is the server's error.
    static func statusWord(_ status: Int) -> String {
        switch status {
        case 401: return "sign-in refused"
        case 403: return "forbidden"
        case 404: return "not found"
        case 429: return "rate limited"
        case 400..<500: return "client error"
        default: return "server error"
        }
    }

    /// `… (request id rq-1)` when there is one.
    static func withRequestID(_ text: String, _ id: String?) -> String {
        id.map { "\(text) (request id \(Sanitizer.line($0)))" } ?? text
    }

    /// `warning: GET /api/v1/cheer_history: [status] expected per_page=200 taken (the contract allows 1–200),
    /// got HTTP 400 …; read on in pages of 100` — a legal page size refused, and what the reading did.
    public static func pageSizeRefused(_ error: ShopAPIError, asked: Int, readOn: Int?) -> String {
        let then = readOn.map { "; read on in pages of \($0)" } ?? "; no smaller page size was taken either"
        return "\(CheerHistory.endpoint.description): [status] expected per_page=\(asked) taken (the contract allows 1–\(CheerHistory.maxPerPage)), "
            + "got \(sentence(error))\(error.requestID.map { " (request id \(Sanitizer.line($0)))" } ?? "")\(then)"
    }

    static func said(_ message: String?) -> String {
        serverWords(message).map { ": \($0)" } ?? ""
    }

    /// The server's own words, sanitized (nil when it said nothing).
    static func serverWords(_ message: String?) -> String? {
        guard let message, !message.isEmpty else { return nil }
        return Sanitizer.line(message)
    }

    /// The standard reason phrase, or a generic one for a code it does not name (`HTTPStatusWords`).
    public static func reasonPhrase(_ status: Int) -> String { HTTPStatusWords.reasonPhrase(status) }
}

/// A failure in its parts: `GET /api/v1/balance` (`request`), `HTTP 503` (`status`), `Service Unavailable`
/// (`what`, our words), `maintenance` (`serverWords`, sanitized, perhaps long), ` [internal] (retry after 7 s)`
/// (`after`, our words again) and the request id. `line` is the one sentence `ErrorText.line` prints.
public struct FailureWords: Equatable, Sendable {
    /// The method and the path (the endpoint key the error names).
    public var request: EndpointKey?
    /// The HTTP status, when an answer came.
    public var status: Int?
    public var what: String
    public var serverWords: String?
    public var after: String
    /// What to try, after the rest (` — is the server running?`): kept whole while the line is shortened.
    public var advice = ""
    public var requestID: String?

    public init(request: EndpointKey? = nil, status: Int? = nil, what: String, serverWords: String? = nil, after: String = "", requestID: String? = nil) {
        self.request = request
        self.status = status
        self.what = what
        self.serverWords = serverWords
        self.after = after
        self.requestID = requestID
    }

    /// What happened, without the request or the request id.
    public var sentence: String { statusWords + what + (serverWords.map { ": \($0)" } ?? "") + after + advice }

    /// `HTTP 503 ` ahead of `what`, or nothing.
    public var statusWords: String { status.map { "HTTP \($0)" + (what.isEmpty ? "" : " ") } ?? "" }

    /// `GET /api/v1/balance: HTTP 503 Service Unavailable: maintenance (request id rq-1)`.
    public var line: String {
        let text = request.map { "\(Sanitizer.line($0.description)): \(sentence)" } ?? sentence
        return requestID.map { "\(text) (request id \($0))" } ?? text
    }
}

/// Why a value on screen is not live: `brief` fits a narrow header (`offline`); `full` says more
/// (`offline: connection refused`).
public struct StaleReason: Equatable, Sendable {
    public var brief: String
    public var full: String

    public init(brief: String, full: String) {
        self.brief = brief
        self.full = full
    }

    /// The same reason for a refresh of data that was live.
    public var afterRefresh: StaleReason { StaleReason(brief: "refresh failed", full: "refresh failed: \(full)") }
}
