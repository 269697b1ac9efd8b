import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// `HTTPTransport` on async-http-client: event-driven (no CPU while waiting — see docs/benchmarks.md),
/// cancellation that closes the connection, per-request deadlines and a connect timeout.
/// Call `shutdown()` before dropping it.
public final class AsyncHTTPTransport: HTTPTransport {
    public struct Configuration: Sendable {
        public var connectTimeout: Duration
        /// A PEM bundle to trust for TLS (staging's private CA), on top of nothing else.
        public var caFile: String?
        public var maxResponseBytes: Int
        /// An HTTP proxy (HTTPS goes through it with CONNECT); credentials as Basic proxy authorization.
        public var proxy: Proxy?
        /// Connections kept to one host (async-http-client's default is 8; the app's proxy forwards many
        /// requests at once).
        public var maxConnectionsPerHost: Int

        public typealias Proxy = (host: String, port: Int, username: String?, password: String?)

        public init(connectTimeout: Duration = .seconds(3), caFile: String? = nil, maxResponseBytes: Int = 32 << 20, proxy: Proxy? = nil,
                    maxConnectionsPerHost: Int = 8) {
            self.connectTimeout = connectTimeout
            self.caFile = caFile
            self.maxResponseBytes = maxResponseBytes
            self.proxy = proxy
            self.maxConnectionsPerHost = maxConnectionsPerHost
        }
    }

    /// Made on the first request: starting SwiftNIO's event-loop threads costs about 2 ms, which the
    /// first frame (drawn from the cache before any request) does not wait for.
    private let lazyClient: Mutex<ClientState> = Mutex(.notYet)
    private enum ClientState { case notYet, made(HTTPClient), shutDown }
    private let clientConfiguration: HTTPClient.Configuration
    private let maxResponseBytes: Int
    private let hasCAFile: Bool
    /// `host:port` of the proxy in use (its failures are named as the proxy's, not the server's).
    private let proxyAddress: String?

    public init(configuration: Configuration = Configuration()) throws {
        var config = HTTPClient.Configuration()
        config.timeout = .init(connect: .nanoseconds(Self.nanoseconds(configuration.connectTimeout)))
        config.redirectConfiguration = .disallow
        // Report a refused connection at once instead of re-dialling until the connect timeout;
        // the client's retry policy decides about another attempt.
        config.connectionPool.retryConnectionEstablishment = false
        config.httpVersion = .http1Only
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maxConnectionsPerHost
        if let caFile = configuration.caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw TransportError.tls(.caFileUnreadable(path: caFile))
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            config.tlsConfiguration = tls
        }
        if let proxy = configuration.proxy {
            let authorization = proxy.username.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
            config.proxy = .server(host: proxy.host, port: proxy.port, authorization: authorization)
        }
        clientConfiguration = config
        proxyAddress = configuration.proxy.map { "\($0.host.contains(":") ? "[\($0.host)]" : $0.host):\($0.port)" }
        maxResponseBytes = configuration.maxResponseBytes
        hasCAFile = configuration.caFile != nil
    }

    /// The client, made on first use; nil once the transport is shut down.
    private func client() -> HTTPClient? {
        lazyClient.withLock { state in
            switch state {
            case .made(let client): return client
            case .shutDown: return nil
            case .notYet:
                let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
                state = .made(client)
                return client
            }
        }
    }

    public func shutdown() async throws {
        let made = lazyClient.withLock { state -> HTTPClient? in
            defer { state = .shutDown }
            if case .made(let client) = state { return client }
            return nil
        }
        try await made?.shutdown()
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Sends `request`; the whole exchange — connection, head and body — ends by `request.timeout`.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.url), let host = url.host, !host.isEmpty else {
            throw TransportError.invalidURL
        }
        // The response head, once it has come: a failure later in the body still names its request id.
        let head = HeadBox()
        // async-http-client's deadline stops at the response head; a server that stalls in the middle
        // of the body must not hold the caller longer, so the whole exchange races one timer.
        return try await withThrowingTaskGroup(of: TransportResponse?.self) { group in
            group.addTask { try await self.exchange(request, head: head) }
            group.addTask {
                try await CancellableSleep.sleep(for: request.timeout)
                return nil
            }
            defer { group.cancelAll() }
            do {
                guard let first = try await group.next(), let response = first else {
                    throw TransportError.timeout(requestID: head.value?.requestID)
                }
                return response
            } catch {
                var mapped = Self.map(error, host: host, head: head.value)
                if let proxy = proxyAddress, let failure = Self.proxyFailure(error, mapped: mapped) {
                    mapped = TransportError.proxy(address: proxy, problem: failure)
                }
                if case TransportError.tls(.untrusted)? = mapped as? TransportError {
                    // "Verify failed" says not why: an out-of-date certificate is told apart by its dates.
                    if proxyAddress == nil, let port = url.port ?? (url.scheme == "https" ? 443 : nil),
                       await CertificateProbe.isOutOfDate(host: host, port: port) == true
                    {
                        throw TransportError.tls(.expired)
                    }
                    if hasCAFile { throw TransportError.tls(.untrustedByCAFile) }
                }
                throw mapped
            }
        }
    }

    /// The same exchange for a caller on a SwiftNIO event loop (the app's proxy): the connection and the
    /// answer stay on `eventLoop`, with no task and no timer of its own (the deadline covers the whole
    /// exchange, head and body). Fails with `TransportError` (never a library's error). It is not the
    /// caller's to cancel: an app that goes away does not withdraw a request the server may be applying.
    public func send(_ request: TransportRequest, on eventLoop: any EventLoop) -> EventLoopFuture<TransportResponse> {
        guard let url = URL(string: request.url), let host = url.host, !host.isEmpty else {
            return eventLoop.makeFailedFuture(TransportError.invalidURL)
        }
        guard let client = client() else { return eventLoop.makeFailedFuture(CancellationError()) }
        var headers = HTTPHeaders()
        for field in request.headers { headers.add(name: field.name.rawName, value: field.value) }
        let outgoing: HTTPClient.Request
        do {
            outgoing = try HTTPClient.Request(url: request.url, method: HTTPMethod(rawValue: request.method.rawValue), headers: headers,
                                              body: request.body.map { .bytes($0) })
        } catch {
            return eventLoop.makeFailedFuture(TransportError.invalidURL)
        }
        let delegate = WholeAnswer(limit: maxResponseBytes)
        let deadline = NIODeadline.now() + .nanoseconds(Self.nanoseconds(request.timeout))
        let hasCAFile = hasCAFile, proxyAddress = proxyAddress
        return client.execute(request: outgoing, delegate: delegate, eventLoop: .delegate(on: eventLoop), deadline: deadline)
            .futureResult.flatMapErrorThrowing { error in
                let head = delegate.head
                if case TransportError.responseTooLarge? = error as? TransportError {
                    throw TransportError.responseTooLarge(limit: delegate.limit, requestID: head?.requestID)
                }
                var mapped = Self.map(error, host: host, head: head)
                if mapped is CancellationError { mapped = TransportError.cutShort(status: head?.status, requestID: head?.requestID) }
                if let proxy = proxyAddress, let failure = Self.proxyFailure(error, mapped: mapped) {
                    mapped = TransportError.proxy(address: proxy, problem: failure)
                }
                if case TransportError.tls(.untrusted)? = mapped as? TransportError, hasCAFile { throw TransportError.tls(.untrustedByCAFile) }
                throw mapped
            }
    }

    /// Collects one answer whole on its event loop: the head (kept for a failure later in the body), the
    /// body up to `limit` bytes.
    final class WholeAnswer: HTTPClientResponseDelegate {
        typealias Response = TransportResponse
        let limit: Int
        private let state = Mutex<(head: Head?, fields: HTTPFields, body: [UInt8])>((nil, [:], []))

        init(limit: Int) { self.limit = limit }

        var head: Head? { state.withLock { $0.head } }

        func didReceiveHead(task: HTTPClient.Task<TransportResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            let fields = HTTPFields(pairs: head.headers.map { ($0.name, $0.value) })
            state.withLock { $0 = (Head(status: Int(head.status.code), requestID: head.headers.first(name: "X-Request-Id")), fields, []) }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<TransportResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            let fits = state.withLock { s -> Bool in
                guard s.body.count + buffer.readableBytes <= limit else { return false }
                s.body.append(contentsOf: buffer.readableBytesView)
                return true
            }
            return fits ? task.eventLoop.makeSucceededVoidFuture()
                : task.eventLoop.makeFailedFuture(TransportError.responseTooLarge(limit: limit, requestID: head?.requestID))
        }

        func didFinishRequest(task: HTTPClient.Task<TransportResponse>) throws -> TransportResponse {
            try state.withLock { s in
                guard let head = s.head else { throw TransportError.cutShort(status: nil, requestID: nil) }
                return TransportResponse(status: head.status, headers: s.fields, body: s.body)
            }
        }
    }

    /// With a proxy in use: a failure to connect is the proxy's (the app connects only to it), and so
    /// are a 407 and a refused CONNECT.
    static func proxyFailure(_ error: any Error, mapped: any Error) -> TransportError.ProxyFailure? {
        if let error = error as? HTTPClientError {
            if error == .proxyAuthenticationRequired { return .credentials }
            if error == .invalidProxyResponse { return .refusedTunnel }
        }
        switch mapped as? TransportError {
        case .connectionRefused?, .connectTimeout?, .dns?: return .unreachable
        default: return nil
        }
    }

    /// The status and request id of a response whose head has arrived.
    struct Head: Sendable, Equatable {
        var status: Int
        var requestID: String?
    }

    final class HeadBox: Sendable {
        private let state = Mutex<Head?>(nil)
        var value: Head? { state.withLock { $0 } }
        func set(_ head: Head) { state.withLock { $0 = head } }
    }

    private func exchange(_ request: TransportRequest, head: HeadBox) async throws -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        guard let client = client() else { throw CancellationError() }  // shut down: the app is ending
        let response = try await client.execute(outgoing, deadline: .now() + .nanoseconds(Self.nanoseconds(request.timeout)))
        let status = Int(response.status.code)
        head.set(Head(status: status, requestID: response.headers.first(name: "X-Request-Id")))
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maxResponseBytes)
        } catch is NIOTooManyBytesError {
            throw TransportError.responseTooLarge(limit: maxResponseBytes, requestID: head.value?.requestID)
        }
        let headers = HTTPFields(pairs: response.headers.map { ($0.name, $0.value) })
        return TransportResponse(status: status, headers: headers, body: Array(body.readableBytesView))
    }

    /// Maps async-http-client, SwiftNIO and BoringSSL errors to `TransportError` (or `CancellationError`).
    /// Only facts leave here: a library's own text goes into `.other(detail:)`, which is logged, never shown.
    static func map(_ error: any Error, host: String, head: Head? = nil) -> any Error {
        if error is CancellationError { return error }
        if let error = error as? TransportError {
            // A timeout after the head came keeps the request id.
            if case .timeout = error, let head { return TransportError.timeout(requestID: head.requestID) }
            return error
        }
        if Task.isCancelled { return CancellationError() }
        // The head came, then the body broke off: whatever the library calls it, the answer was cut short.
        if let head, !(error is HTTPClientError && Self.isTimeout(error)) {
            return TransportError.cutShort(status: head.status, requestID: head.requestID)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return CancellationError()
            case .deadlineExceeded, .readTimeout, .writeTimeout: return TransportError.timeout(requestID: head?.requestID)
            case .connectTimeout, .getConnectionFromPoolTimeout: return TransportError.connectTimeout(host: host)
            case .tlsHandshakeTimeout: return TransportError.tls(.handshake)
            case .remoteConnectionClosed: return TransportError.cutShort(status: nil, requestID: nil)
            case .invalidURL, .emptyHost, .emptyScheme: return TransportError.invalidURL
            default:
                // Some cases carry the offending values (header values: a token); keep only the case name.
                let name = brief(error)
                if name.contains("invalidHeaderField") { return TransportError.invalidHeader }
                return TransportError.other(detail: name)
            }
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return TransportError.dns(host: host)
            }
            if let first = error.connectionErrors.first?.error { return map(first, host: host) }
            return TransportError.connectionRefused(host: host)
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return TransportError.connectionRefused(host: host)
            case ECONNRESET, EPIPE: return TransportError.cutShort(status: nil, requestID: nil)
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return TransportError.offline
            case ETIMEDOUT: return TransportError.connectTimeout(host: host)
            default: return TransportError.other(detail: brief(error))
            }
        }
        if error is SocketAddressError { return TransportError.dns(host: host) }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return TransportError.connectTimeout(host: host)
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed: return TransportError.cutShort(status: nil, requestID: nil)
            default: return TransportError.other(detail: brief(error))
            }
        }
        if error is HTTPParserError { return TransportError.cutShort(status: nil, requestID: nil) }
        if let problem = tlsProblem(error) { return TransportError.tls(problem) }
        return TransportError.other(detail: brief(error))
    }

    static func isTimeout(_ error: any Error) -> Bool {
        guard let error = error as? HTTPClientError else { return false }
        return [.deadlineExceeded, .readTimeout, .writeTimeout].contains(error)
    }

    /// What a TLS failure means, read from NIOSSL's and BoringSSL's errors.
    static func tlsProblem(_ error: any Error) -> TLSProblem? {
        if let extra = error as? NIOSSLExtraError {
            return extra == .failedToValidateHostname ? .hostnameMismatch : .handshake
        }
        let text: String
        if let error = error as? NIOSSLError {
            text = String(describing: error)
        } else if let error = error as? BoringSSLError {
            text = String(describing: error)
        } else {
            return nil
        }
        if text.contains("CERTIFICATE_EXPIRED") || text.contains("certificate has expired") { return .expired }
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return .untrusted }
        return .handshake
    }

    /// A library error's name without its payload (which may echo request data), at most 120 characters.
    /// For the log file only.
    static func brief(_ error: any Error) -> String {
        String(String(describing: error).prefix { $0 != "(" }.prefix(120))
    }
}
