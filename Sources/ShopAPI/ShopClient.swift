import Foundation
import Logging

/// The tokens a client sends. An actor, so refreshes and readers never race; the client is the only writer.
public actor TokenStore {
    public private(set) var accessToken: String?
    public private(set) var refreshToken: String?

    public init(accessToken: String?, refreshToken: String? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
    }

    public func update(accessToken: String, refreshToken: String?) {
        self.accessToken = accessToken
        if let refreshToken { self.refreshToken = refreshToken }
    }
}

public struct ShopClientConfiguration: Sendable {
    public static let appVersion = "0.1.0"

    /// `http(s)://host[:port][/prefix]`; endpoint paths are appended.
    public var baseURL: String
    public var headers: HeaderFields
    public var requestTimeout: Duration
    public var retry: RetryPolicy

    public init(
        baseURL: String,
        headers: HeaderFields = ["Accept": "application/json", "User-Agent": "reiterate-shop/\(appVersion) (Swift; Linux)"],
        requestTimeout: Duration = .seconds(10),
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.requestTimeout = requestTimeout
        self.retry = retry
    }

    /// The base URL without a trailing slash, or a configuration error naming what is wrong.
    public func validatedBaseURL() throws -> String {
        guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.query == nil
        else {
            throw ShopAPIError.configuration("invalid base URL '\(baseURL)': expected http(s)://host[:port][/path]")
        }
        return baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
    }
}

/// Waits between retries; a test passes its own to make timing exact.
public struct Sleeper: Sendable {
    public let sleep: @Sendable (Duration) async throws -> Void
    public init(_ sleep: @escaping @Sendable (Duration) async throws -> Void) { self.sleep = sleep }
    public static let live = Sleeper { try await Task.sleep(for: $0) }
}

/// Sends any `Endpoint`: builds the request, adds the bearer token, retries safe requests, refreshes an
/// expired token once for everyone waiting, decodes the answer, and records every exchange.
public actor ShopClient {
    public nonisolated let configuration: ShopClientConfiguration
    public nonisolated let exchanges: ExchangeLog
    public nonisolated let tokens: TokenStore
    private let transport: any HTTPTransport
    private let logger: Logger
    private let sleeper: Sleeper
    private let random: @Sendable () -> Double
    private var refreshTask: Task<String, any Error>?
    /// How many refresh calls were made (for tests and the inspector).
    public private(set) var refreshCount = 0

    public init(
        configuration: ShopClientConfiguration,
        transport: any HTTPTransport,
        tokens: TokenStore,
        exchanges: ExchangeLog = ExchangeLog(),
        logger: Logger = Logger(label: "reiterate.api", factory: { _ in SwiftLogNoOpLogHandler() }),
        sleeper: Sleeper = .live,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.transport = transport
        self.tokens = tokens
        self.exchanges = exchanges
        self.logger = logger
        self.sleeper = sleeper
        self.random = random
    }

    /// Sends `endpoint` and returns its decoded response. Throws `ShopAPIError`, or `CancellationError`
    /// when the calling task is cancelled (the HTTP request is cancelled with it).
    public func send<E: Endpoint>(_ endpoint: E) async throws -> E.Response {
        let response = try await perform(endpoint)
        do {
            return try E.decode(response.body)
        } catch let error as DecodingError {
            let requestID = response.headers["X-Request-Id"]
            if let contentType = response.headers["Content-Type"], !Self.isJSON(contentType) {
                throw ShopAPIError.notJSON(status: response.status, contentType: contentType, requestID: requestID, endpoint: E.endpoint.description)
            }
            let reason = DecodingFailure.describe(error)
            let path = reason.split(separator: ":", maxSplits: 1).first.map(String.init) ?? "(top level)"
            throw ShopAPIError.undecodable(path: path, reason: reason, requestID: requestID, endpoint: E.endpoint.description)
        }
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mime = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return mime == "application/json" || mime.hasSuffix("+json")
    }

    // MARK: Sending, retrying, refreshing

    /// A 2xx response for `endpoint`, after retries and at most one token refresh.
    private func perform<E: Endpoint>(_ endpoint: E) async throws -> TransportResponse {
        let description = E.endpoint
        let base = try configuration.validatedBaseURL()
        let body: [UInt8]?
        do {
            body = try endpoint.body()
        } catch {
            throw ShopAPIError.configuration("cannot encode the \(description) request: \(error)")
        }
        let pathAndQuery = description.path + Self.queryString(endpoint.query)
        let started = ContinuousClock.now
        var attempt = 0
        var refreshed = false

        while true {
            attempt += 1
            try Task.checkCancellation()
            var headers = configuration.headers
            let sentToken = E.requiresAuth ? await tokens.accessToken : nil
            if let sentToken { headers.set("Authorization", "Bearer \(sentToken)") }
            if body != nil { headers.set("Content-Type", "application/json") }
            let request = TransportRequest(
                method: description.method, url: base + pathAndQuery, headers: headers, body: body,
                timeout: configuration.requestTimeout
            )

            let response: TransportResponse
            do {
                response = try await exchange(request, pathAndQuery: pathAndQuery, attempt: attempt)
            } catch let error as TransportError {
                if description.method == .get, error.isConnectionFailure,
                   let wait = configuration.retry.delay(afterAttempt: attempt, retryAfter: nil, elapsed: .now - started, random: random())
                {
                    logger.warning("retrying \(description) in \(wait) after: \(ShopAPIError.describe(error))")
                    try await sleeper.sleep(wait)
                    continue
                }
                throw ShopAPIError.transport(error, endpoint: description.description)
            }

            if (200..<300).contains(response.status) { return response }

            if response.status == 401, E.requiresAuth, !refreshed, await tokens.refreshToken != nil {
                refreshed = true
                _ = try await renewedAccessToken(replacing: sentToken)
                attempt -= 1  // the resend after a refresh is not a retry
                continue
            }
            if response.status == 401, refreshed {
                let failure = Self.httpError(response, endpoint: description.description)
                throw ShopAPIError.signInExpired(reason: "the renewed token was refused too (\(failure.description))", requestID: failure.requestID)
            }

            let retryAfter = Self.retryAfter(response.headers["Retry-After"])
            if description.method == .get, configuration.retry.retryableStatuses.contains(response.status),
               let wait = configuration.retry.delay(
                   afterAttempt: attempt, retryAfter: retryAfter.map { .seconds($0) }, elapsed: .now - started, random: random())
            {
                logger.warning("retrying \(description) in \(wait) after HTTP \(response.status)")
                try await sleeper.sleep(wait)
                continue
            }
            throw Self.httpError(response, endpoint: description.description)
        }
    }

    /// A fresh access token after `rejected` was refused. Concurrent callers share one refresh; a caller
    /// whose token was already replaced gets the new one without another refresh.
    private func renewedAccessToken(replacing rejected: String?) async throws -> String {
        if let current = await tokens.accessToken, current != rejected { return current }
        if let running = refreshTask { return try await running.value }
        guard let refreshToken = await tokens.refreshToken else {
            throw ShopAPIError.signInExpired(reason: "the access token was refused and no refresh token is configured", requestID: nil)
        }
        let task = Task { try await self.refresh(using: refreshToken) }
        refreshTask = task
        defer { refreshTask = nil }
        return try await task.value
    }

    private func refresh(using refreshToken: String) async throws -> String {
        refreshCount += 1
        let grant: TokenGrant
        do {
            grant = try await send(RefreshToken(refreshToken: refreshToken))
        } catch let error as ShopAPIError {
            switch error {
            case .http, .notJSON, .undecodable:
                let detail: String
                if case let .http(_, message, _, _, _, _) = error, let message { detail = message } else { detail = error.description }
                throw ShopAPIError.signInExpired(reason: "the refresh token was refused: \(detail)", requestID: error.requestID)
            default:
                throw error  // offline, timeout …: not a sign-in problem
            }
        }
        await tokens.update(accessToken: grant.accessToken, refreshToken: grant.refreshToken)
        logger.info("access token renewed")
        return grant.accessToken
    }

    /// One HTTP exchange through the transport, recorded in the exchange log and the log file.
    private func exchange(_ request: TransportRequest, pathAndQuery: String, attempt: Int) async throws -> TransportResponse {
        let startedAt = Date()
        let clockStart = ContinuousClock.now
        var record = Exchange(
            id: 0, method: request.method.rawValue, path: Redactor.path(pathAndQuery), startedAt: startedAt,
            duration: .zero, status: nil, failure: nil, requestID: nil, attempt: attempt,
            requestBytes: request.body?.count ?? 0, responseBytes: 0,
            requestHeaders: Redactor.headers(request.headers), responseHeaders: [:],
            requestBodyPreview: request.body.flatMap(Redactor.bodyPreview), responseBodyPreview: nil
        )
        do {
            let response = try await transport.send(request)
            record.duration = .now - clockStart
            record.status = response.status
            record.requestID = response.headers["X-Request-Id"]
            record.responseBytes = response.body.count
            record.responseHeaders = Redactor.headers(response.headers)
            record.responseBodyPreview = Redactor.bodyPreview(response.body)
            await exchanges.record(record)
            logger.info("\(record.method) \(record.path) \(response.status) \(Self.millis(record.duration))ms \(record.requestID ?? "-")")
            return response
        } catch {
            record.duration = .now - clockStart
            if error is CancellationError {
                record.failure = "cancelled"
            } else if let error = error as? TransportError {
                record.failure = ShopAPIError.describe(error)
            } else {
                record.failure = String(describing: error)
            }
            await exchanges.record(record)
            logger.info("\(record.method) \(record.path) failed after \(Self.millis(record.duration))ms: \(record.failure ?? "")")
            if error is CancellationError || error is TransportError { throw error }
            throw TransportError.other(String(describing: error))
        }
    }

    static func millis(_ d: Duration) -> Int {
        Int(d / .milliseconds(1))
    }

    static func httpError(_ response: TransportResponse, endpoint: String) -> ShopAPIError {
        let requestID = response.headers["X-Request-Id"]
        let contentType = response.headers["Content-Type"]
        let retryAfter = retryAfter(response.headers["Retry-After"])
        guard let contentType, isJSON(contentType) else {
            return .notJSON(status: response.status, contentType: contentType, requestID: requestID, endpoint: endpoint)
        }
        let body = try? JSONDecoder().decode(ErrorBody.self, from: Data(response.body))
        return .http(status: response.status, message: body?.message, code: body?.code, requestID: requestID, endpoint: endpoint, retryAfter: retryAfter)
    }

    /// `Retry-After` in seconds (the HTTP-date form is not used by this API).
    static func retryAfter(_ value: String?) -> Int? {
        guard let value, let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return seconds
    }

    static func queryString(_ items: [(name: String, value: String)]) -> String {
        guard !items.isEmpty else { return "" }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func encode(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return "?" + items.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&")
    }
}
