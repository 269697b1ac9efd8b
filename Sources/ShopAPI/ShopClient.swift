import Foundation
import JSONTokens
import HTTPTypes
import Logging

/// Sends any `Endpoint`: builds the request, adds the bearer token, retries safe requests, refreshes an
/// expired token once for everyone waiting, and hands every exchange (retries, failures and
/// cancellations too) to its `ExchangePipeline`. Reading the answers: `ShopClient+Answers.swift`.
public actor ShopClient {
    public nonisolated let configuration: ShopClientConfiguration
    /// Every finished exchange goes through it (checks, pins, the exchange log, the log file).
    public nonisolated let pipeline: ExchangePipeline
    public nonisolated let tokens: TokenStore
    private let transport: any HTTPTransport
    private let logger: Logger
    /// The refresh in flight; every caller that meets a 401 meanwhile waits for this one.
    private var refreshTask: Task<String, any Error>?
    /// A refresh token the server refused: not sent again (the user must sign in anew).
    private var refusedRefreshToken: String?
    /// How many refresh calls were made (for tests and the inspector).
    public private(set) var refreshCount = 0

    /// A client of `configuration`'s server; every exchange goes through `pipeline` (the standard one:
    /// the watchdog, the exchange log and the log file's line, `ExchangePipeline.standard`).
    public init(
        configuration: ShopClientConfiguration,
        transport: any HTTPTransport,
        tokens: TokenStore,
        pipeline: ExchangePipeline = .standard(),
        logger: Logger = Logger(label: "reiterate.api", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.transport = transport
        self.tokens = tokens
        self.pipeline = pipeline
        self.logger = logger
    }

    /// The pipeline's exchange log (an empty one when the pipeline keeps none).
    public nonisolated var exchanges: ExchangeLog { pipeline.exchanges ?? ExchangeLog() }

    /// Sends `endpoint` and returns its decoded response. Throws `ShopAPIError`, or `CancellationError`
    /// when the calling task is cancelled (the HTTP request is cancelled with it).
    public func send<E: Endpoint>(_ endpoint: E) async throws -> E.Response {
        try await sendAnswered(endpoint).response
    }

    /// The same, with the request id the answer carried (a watch names the reads on both sides).
    public func sendAnswered<E: Endpoint>(_ endpoint: E) async throws -> (response: E.Response, requestID: String?) {
        let response = try await perform(endpoint)
        return (try Self.decoded(E.self, response), response.headers[.requestID])
    }

    /// A read kept as it came, for snapshots and comparisons: the decoded value (so an answer the app
    /// could not read fails as any read would), the body as JSON values, the request id, the status
    /// and the request line (path and query; the token travels in a header and is not in it).
    public func sendRecorded<E: Endpoint>(_ endpoint: E) async throws -> Recorded<E.Response> {
        let at = Date()
        let response = try await perform(endpoint)
        let value = try Self.decoded(E.self, response)
        // Token-like keys redacted, as the log and the HAR have them: a snapshot or a pin is for sharing.
        let document = JSONValue.parse(Redactor.redacted(response.body, tokens: response.tokens ?? JSONTokenizer.tokens(response.body)))
        return Recorded(value: value, document: document, requestID: response.headers[.requestID], status: response.status,
                        request: endpoint.requestKey, at: at)
    }

    /// Sends `endpoint` once, authenticated as `authorization` says, and returns the answer whatever its
    /// status (`ShopClient.probe(_:query:json:authorization:)`). With the client's own token, a 401 renews
    /// it once and sends again, as any request does; no other retry.
    public func probe<E: Endpoint>(_ endpoint: E, authorization: ProbeAuthorization, mayRenew: Bool = true) async throws -> ProbeAnswer {
        let description = E.endpoint
        let base = try configuration.validatedBaseURL()
        let body: [UInt8]?
        do { body = try endpoint.body() } catch { throw ShopAPIError.configuration(.cannotEncodeRequest(endpoint: description.key)) }
        let key = endpoint.requestKey
        var refreshed = false
        while true {
            try Task.checkCancellation()
            var headers = configuration.headers
            headers[.authorization] = nil
            var sentToken: String?
            switch authorization {
            case .token:
                sentToken = await tokens.accessToken
                if let sentToken {
                    guard TokenStore.isValidBearerToken(sentToken) else { throw ShopAPIError.configuration(.tokenCharacters) }
                    headers[.authorization] = "Bearer \(sentToken)"
                }
            case .none: break
            case let .header(value): headers[.authorization] = value
            }
            if body != nil { headers[.contentType] = "application/json" }
            let request = TransportRequest(method: description.method, url: base + key.target, headers: headers, body: body,
                                           timeout: configuration.requestTimeout)
            let response: TransportResponse
            do {
                response = try await exchange(request, ExchangeRequest(key: key, operation: description.operation, headers: headers, body: body), attempt: 1)
            } catch let error as TransportError {
                throw ShopAPIError.transport(error, endpoint: description.key)
            }
            if response.status == 401, authorization == .token, mayRenew, !refreshed, await tokens.refreshToken != nil {
                refreshed = true
                _ = try await renewedAccessToken(replacing: sentToken)
                continue
            }
            var answer = ProbeAnswer(status: response.status, headers: response.headers, body: response.body)
            answer.renewed = refreshed
            return answer
        }
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
            throw ShopAPIError.configuration(.cannotEncodeRequest(endpoint: description.key))
        }
        let key = endpoint.requestKey
        let url = base + key.target
        let started = ContinuousClock.now
        var attempt = 0
        var refreshed = false

        while true {
            attempt += 1
            try Task.checkCancellation()
            var headers = configuration.headers
            let sentToken = E.requiresAuth ? await tokens.accessToken : nil
            if let sentToken {
                guard TokenStore.isValidBearerToken(sentToken) else {
                    throw ShopAPIError.configuration(.tokenCharacters)
                }
                headers[.authorization] = "Bearer \(sentToken)"
            }
            if body != nil { headers[.contentType] = "application/json" }
            // A retry gets only what is left of the total budget, so the whole call stays within it.
            let remaining = configuration.retry.maxTotal - (.now - started)
            let request = TransportRequest(
                method: description.method, url: url, headers: headers, body: body,
                timeout: attempt == 1 ? configuration.requestTimeout : min(configuration.requestTimeout, remaining)
            )

            let response: TransportResponse
            do {
                response = try await exchange(request, ExchangeRequest(key: key, operation: description.operation, headers: headers, body: body), attempt: attempt)
            } catch let error as TransportError {
                if description.method == .get, error.isConnectionFailure,
                   let wait = configuration.retry.delay(afterAttempt: attempt, retryAfter: nil, elapsed: .now - started, random: configuration.random())
                {
                    logger.warning("retrying \(description) in \(wait) after: \(LogLineObserver.text(error))")
                    try await configuration.sleeper.sleep(wait)
                    continue
                }
                throw ShopAPIError.transport(error, endpoint: description.key)
            }

            if (200..<300).contains(response.status) { return response }

            if response.status == 401, E.requiresAuth, !refreshed, await tokens.refreshToken != nil {
                refreshed = true
                do {
                    _ = try await renewedAccessToken(replacing: sentToken)
                } catch let ShopAPIError.signInExpired(problem, nil) {
                    // The refusal that started it all has a request id: keep it.
                    throw ShopAPIError.signInExpired(problem, requestID: response.headers[.requestID])
                }
                attempt -= 1  // the resend after a refresh is not a retry
                continue
            }
            if response.status == 401, refreshed {
                let failure = Self.httpError(response, endpoint: description.key)
                throw ShopAPIError.signInExpired(.renewedTokenRefused(failure.serverMessage), requestID: failure.requestID)
            }

            let retryAfter = Self.retryAfter(response.headers[.retryAfter], now: Date())
            if description.method == .get, configuration.retry.retryableStatuses.contains(response.status),
               let wait = configuration.retry.delay(
                   afterAttempt: attempt, retryAfter: retryAfter.map { .seconds(min($0, 86_400)) }, elapsed: .now - started, random: configuration.random())
            {
                logger.warning("retrying \(description) in \(wait) after HTTP \(response.status)")
                try await configuration.sleeper.sleep(wait)
                continue
            }
            throw Self.httpError(response, endpoint: description.key)
        }
    }

    /// A fresh access token after `rejected` was refused. Concurrent callers share one refresh; a caller
    /// whose token was already replaced gets the new one without another refresh. A cancelled caller
    /// stops waiting at once; the shared refresh goes on for the others.
    private func renewedAccessToken(replacing rejected: String?) async throws -> String {
        if let running = refreshTask { return try await Self.value(of: running) }
        // No suspension between the check above and the assignment below: exactly one task is started.
        let task = Task { () async throws -> String in
            defer { self.refreshTask = nil }
            if let current = await self.tokens.accessToken, current != rejected { return current }
            guard let refreshToken = await self.tokens.refreshToken else {
                throw ShopAPIError.signInExpired(.noRefreshToken, requestID: nil)
            }
            guard refreshToken != self.refusedRefreshToken else {
                throw ShopAPIError.signInExpired(.refreshAlreadyRefused, requestID: nil)
            }
            return try await self.refresh(using: refreshToken)
        }
        refreshTask = task
        return try await Self.value(of: task)
    }

    private func refresh(using refreshToken: String) async throws -> String {
        refreshCount += 1
        let grant: TokenGrant
        do {
            grant = try await send(RefreshToken(refreshToken: refreshToken))
        } catch let error as ShopAPIError {
            // Only a refusal means the sign-in is over; an outage (5xx, 429, a proxy page) stays itself.
            if let status = error.status, [400, 401, 403].contains(status) {
                refusedRefreshToken = refreshToken
                throw ShopAPIError.signInExpired(.refreshRefused(error.serverMessage), requestID: error.requestID)
            }
            throw error
        }
        guard TokenStore.isValidBearerToken(grant.accessToken) else {
            throw ShopAPIError.signInExpired(.unusableIssuedToken, requestID: nil)
        }
        await tokens.update(accessToken: grant.accessToken, refreshToken: grant.refreshToken)
        logger.info("access token renewed")
        return grant.accessToken
    }

    /// The value of a shared task, or `CancellationError` as soon as the caller is cancelled
    /// (the task itself is not cancelled: others may be waiting for it).
    static func value<T: Sendable>(of task: Task<T, any Error>) async throws -> T {
        let gate = ResumeOnce<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                gate.install(continuation)
                Task { gate.resume(with: await task.result) }
            }
        } onCancel: {
            gate.resume(with: .failure(CancellationError()))
        }
    }

    /// One HTTP exchange through the transport, handed to the pipeline when it was sent and when it
    /// finished (answered, failed or cancelled).
    private func exchange(_ request: TransportRequest, _ sent: ExchangeRequest, attempt: Int) async throws -> TransportResponse {
        var e = HTTPExchange(serial: pipeline.nextSerial(), source: .tool, request: sent, attempt: attempt)
        await pipeline.sent(e)
        do {
            var response = try await transport.send(request)
            e.answeredAt = .now
            // The answer is tokenized once, for every observer and the decoding alike.
            let tokens = JSONTokenizer.tokens(response.body)
            response.tokens = tokens
            e.requestID = response.headers[.requestID]
            e.response = ExchangeResponse(status: response.status, headers: response.headers, body: response.body, tokens: tokens)
            await pipeline.finished(e)
            return response
        } catch {
            e.answeredAt = .now
            let failure: TransportError? = error is CancellationError ? nil : (error as? TransportError ?? .other(detail: AsyncHTTPTransport.brief(error)))
            e.failure = failure.map(ExchangeFailure.transport) ?? .cancelled
            e.requestID = failure?.requestID
            await pipeline.finished(e)
            if let failure { throw failure }
            throw error
        }
    }
}
