import Foundation
import NIOSSL
import ProxyCA
import ProxyWire
import ShopAPI
import Synchronization

/// What every connection of one proxy shares: its configuration, the hosts it intercepts, the TLS
/// identities it answers with, the upstream transport, the pipeline its exchanges go through, its counts.
final class ProxyCore: Sendable {
    let configuration: ProxyConfiguration
    let intercepted: Set<HostPort>
    let ca: ProxyCA
    /// Forwards the app's requests on the connection's own event loop (`send(_:on:)`).
    let transport: AsyncHTTPTransport
    let pipeline: ExchangePipeline
    /// What each app request's operation is decided from (none without a watchdog in the pipeline).
    let contract: Contract?
    let stats: ProxyStats
    let events: @Sendable (ProxyEvent) -> Void
    let password: ProxyPassword?
    /// The faults in force (the configuration's at start, then `/_proxy/faults` and the front end's).
    let faults: ProxyFaults
    private let contexts = Mutex<[String: NIOSSLContext]>([:])
    /// The app's requests admitted (out upstream, or answered and waiting for the pipeline), and the ones
    /// waiting to be: past `maxBacklog`, a request waits before it goes upstream, so a burst faster than
    /// the checks can keep up with waits at the sockets instead of piling up in memory.
    private let gate = Mutex<(admitted: Int, waiting: [@Sendable () -> Void])>((0, []))
    static let maxBacklog = 256
    /// Every app exchange goes through the pipeline here, one step after another: when it is sent (a
    /// request that hangs shows while it hangs), and when it is answered. One task does it all, off the
    /// requests' own path (no task a request, no wait on the pipeline's actors before an answer goes out).
    private let recordings: AsyncStream<Recording>.Continuation
    private let recorded: AsyncStream<Recording>

    enum Recording: Sendable {
        case sent(HTTPExchange)
        case answered(UpstreamExchange, UpstreamAnswer)
    }

    init(configuration: ProxyConfiguration, ca: ProxyCA, transport: AsyncHTTPTransport, pipeline: ExchangePipeline, contract: Contract?,
         stats: ProxyStats, events: @escaping @Sendable (ProxyEvent) -> Void) {
        self.configuration = configuration
        self.contract = contract
        intercepted = Set(configuration.interceptedHosts)
        self.ca = ca
        self.transport = transport
        self.pipeline = pipeline
        self.stats = stats
        self.events = events
        password = configuration.password.flatMap { $0.isEmpty ? nil : ProxyPassword($0) }
        faults = ProxyFaults(configuration.faults)
        (recorded, recordings) = AsyncStream.makeStream()
    }

    /// Runs `start` now if the backlog allows, else once an earlier exchange is through the pipeline.
    func admit(_ start: @escaping @Sendable () -> Void) {
        let now = gate.withLock { g -> Bool in
            guard g.admitted < Self.maxBacklog else {
                g.waiting.append(start)
                return false
            }
            g.admitted += 1
            return true
        }
        if now { start() }
    }

    /// An exchange on its way, for the pipeline.
    func recordSent(_ exchange: HTTPExchange) { recordings.yield(.sent(exchange)) }

    /// An answered exchange, for the pipeline.
    func record(_ exchange: UpstreamExchange, _ answer: UpstreamAnswer) { recordings.yield(.answered(exchange, answer)) }

    /// Takes the exchanges through the pipeline until `stopRecording`; each answered one frees its place.
    func recordAll() async {
        for await recording in recorded {
            guard case let .answered(exchange, answer) = recording else {
                if case let .sent(exchange) = recording { await pipeline.sent(exchange) }
                continue
            }
            await exchange.record(answer)
            let next = gate.withLock { g -> (@Sendable () -> Void)? in
                if g.waiting.isEmpty {
                    g.admitted -= 1
                    return nil
                }
                return g.waiting.removeFirst()
            }
            next?()
        }
    }

    func stopRecording() { recordings.finish() }

    /// The TLS server context for an intercepted host: its leaf (made once by the CA) and `http/1.1` by ALPN.
    func tlsContext(for host: String) throws -> NIOSSLContext {
        if let made = contexts.withLock({ $0[host] }) { return made }
        let leaf = try ca.leaf(for: host)
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(leaf.certificateChainPEM.utf8)).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(bytes: Array(leaf.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.applicationProtocols = ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        return contexts.withLock { made in
            if let other = made[host] { return other }
            made[host] = context
            return context
        }
    }

    /// Where an app request for `host` at `target` goes, its key (the base URL's path prefix removed for
    /// the base URL's host) and the operation it is; nil for a host the proxy does not intercept.
    ///
    /// The operation is the one decider's (`RequestKey.operation`), as for HAR files, snapshots and pins:
    /// the ledger reading this session's HAR later sees the same operations. Only a request that is no
    /// operation of the tool's is held against the contract document, which says how it misses (another
    /// version of a path, another method, no path) or, for a `--contract` document with a path of its own,
    /// that it is that document's operation.
    func route(_ method: RequestMethod, scheme: String, host: HostPort, target: String) -> ProxyRoute? {
        guard intercepted.contains(host) else { return nil }
        let base = host == configuration.baseHost ? BasePath(of: configuration.baseURL) : .none
        guard let key = base.key(method: method.rawValue, target: target) else { return nil }
        return ProxyRoute(url: "\(scheme)://\(host)\(target)", key: key, match: Self.match(key, contract: contract),
                          origin: host == configuration.baseHost ? nil : "\(scheme)://\(host)")
    }

    /// What an app request is: the operation `RequestKey.operation` says, else the contract's word on how it misses.
    static func match(_ key: RequestKey, contract: Contract?) -> RequestMatch {
        if let operation = key.operation { return .operation(operation) }
        return contract?.match(method: key.method.rawValue, path: key.path) ?? .unknown
    }
}

/// Where an app request goes upstream, and what it is: its key and the contract's operation.
struct ProxyRoute: Sendable {
    var url: String
    var key: RequestKey
    var match: RequestMatch
    /// `scheme://host:port` for a further host (its key is its own target); nil for the base URL's host.
    var origin: String?
}

/// The password the phone must send (`Proxy-Authorization: Basic`; any user name). Compared in time
/// that does not depend on where it differs; never kept anywhere else, never shown.
struct ProxyPassword: Sendable {
    private let expected: [UInt8]

    init(_ password: String) { expected = Array(password.utf8) }

    /// Whether a `Proxy-Authorization` value carries the password.
    func admits(_ header: String?) -> Bool {
        guard let header else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return false }
        let given = Array(decoded[decoded.index(after: colon)...])
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for i in 0..<expected.count { difference |= expected[i] ^ (i < given.count ? given[i] : 0) }
        return difference == 0
    }
}
