import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// `HTTPTransport` on async-http-client: event-driven (no CPU while waiting — see README),
/// cancellation that closes the connection, per-request deadlines and a connect timeout.
/// Call `shutdown()` before dropping it.
public final class AsyncHTTPTransport: HTTPTransport {
    public struct Configuration: Sendable {
        public var connectTimeout: Duration
        /// A PEM bundle to trust for TLS (staging's private CA), on top of nothing else.
        public var caFile: String?
        public var maxResponseBytes: Int

        public init(connectTimeout: Duration = .seconds(3), caFile: String? = nil, maxResponseBytes: Int = 32 << 20) {
            self.connectTimeout = connectTimeout
            self.caFile = caFile
            self.maxResponseBytes = maxResponseBytes
        }
    }

    private let client: HTTPClient
    private let maxResponseBytes: Int

    public init(configuration: Configuration = Configuration()) throws {
        var config = HTTPClient.Configuration()
        config.timeout = .init(connect: .nanoseconds(Self.nanoseconds(configuration.connectTimeout)))
        config.redirectConfiguration = .disallow
        // Report a refused connection at once instead of re-dialling until the connect timeout;
        // the client's retry policy decides about another attempt.
        config.connectionPool.retryConnectionEstablishment = false
        config.httpVersion = .http1Only
        if let caFile = configuration.caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw TransportError.tls("CA file \(caFile) is missing or unreadable")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            config.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: config)
        maxResponseBytes = configuration.maxResponseBytes
    }

    public func shutdown() async throws {
        try await client.shutdown()
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Sends `request`; the whole exchange — connection, head and body — ends by `request.timeout`.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.url), let host = url.host, !host.isEmpty else {
            throw TransportError.invalidURL(request.url)
        }
        // async-http-client's deadline stops at the response head; a server that stalls in the middle
        // of the body must not hold the caller longer, so the whole exchange races one timer.
        return try await withThrowingTaskGroup(of: TransportResponse?.self) { group in
            group.addTask { try await self.exchange(request, host: host) }
            group.addTask {
                try await Task.sleep(for: request.timeout)
                return nil
            }
            defer { group.cancelAll() }
            do {
                guard let first = try await group.next(), let response = first else { throw TransportError.timeout }
                return response
            } catch {
                throw Self.map(error, host: host)
            }
        }
    }

    private func exchange(_ request: TransportRequest, host: String) async throws -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = request.method == .get ? .GET : .POST
        for field in request.headers { outgoing.headers.add(name: field.name, value: field.value) }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(outgoing, deadline: .now() + .nanoseconds(Self.nanoseconds(request.timeout)))
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maxResponseBytes)
        } catch is NIOTooManyBytesError {
            throw TransportError.responseTooLarge(limit: maxResponseBytes)
        }
        var headers = HeaderFields()
        for (name, value) in response.headers { headers.fields.append((name: name, value: value)) }
        return TransportResponse(status: Int(response.status.code), headers: headers, body: Array(body.readableBytesView))
    }

    /// Maps async-http-client and SwiftNIO errors to `TransportError` (or `CancellationError`).
    static func map(_ error: any Error, host: String) -> any Error {
        if error is CancellationError || error is TransportError { return error }
        if Task.isCancelled { return CancellationError() }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled: return CancellationError()
            case .deadlineExceeded, .readTimeout, .writeTimeout: return TransportError.timeout
            case .connectTimeout, .getConnectionFromPoolTimeout: return TransportError.connectTimeout(host: host)
            case .tlsHandshakeTimeout: return TransportError.tls("TLS handshake timed out")
            case .remoteConnectionClosed: return TransportError.connectionLost("the server closed the connection")
            case .invalidURL, .emptyHost, .emptyScheme: return TransportError.invalidURL(host)
            default:
                // Some cases carry the offending values (header values: a token); keep only the case name.
                let name = String(describing: error).prefix { $0 != "(" }
                if name.contains("invalidHeaderField") { return TransportError.other("a request header holds characters HTTP does not allow") }
                return TransportError.other(String(name))
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
            case ECONNRESET, EPIPE: return TransportError.connectionLost("connection reset by the server")
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return TransportError.offline("network unreachable")
            case ETIMEDOUT: return TransportError.connectTimeout(host: host)
            default: return TransportError.other(error.description)
            }
        }
        if error is SocketAddressError { return TransportError.dns(host: host) }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return TransportError.connectTimeout(host: host)
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed: return TransportError.connectionLost("the connection closed")
            default: return TransportError.other(brief(error))
            }
        }
        if let error = error as? NIOSSLError { return TransportError.tls(String(describing: error)) }
        if let error = error as? BoringSSLError { return TransportError.tls(String(describing: error)) }
        return TransportError.other(brief(error))
    }

    /// A library error's name without its payload (which may echo request data), at most 120 characters.
    static func brief(_ error: any Error) -> String {
        String(String(describing: error).prefix { $0 != "(" }.prefix(120))
    }
}
