import Foundation
import NIOCore
import NIOPosix
import ProxyCA
import ShopAPI

/// The intercepting forward proxy: listens, reads each connection's requests (`ProxyConnection`) and
/// hands every app exchange to the pipeline it is given (source `app`), beside the tool's own.
public final class ProxyServer: Sendable {
    public let configuration: ProxyConfiguration
    public let stats: ProxyStats
    /// The faults it puts into the app's traffic: add, list and remove them while it runs.
    public let faults: ProxyFaults
    /// Where it listens (the port the system chose, for port 0).
    public let address: HostPort
    private let channel: any Channel
    private let core: ProxyCore
    private let recorder: Task<Void, Never>

    private init(configuration: ProxyConfiguration, stats: ProxyStats, address: HostPort, channel: any Channel, core: ProxyCore) {
        self.configuration = configuration
        self.stats = stats
        faults = core.faults
        self.address = address
        self.channel = channel
        self.core = core
        recorder = Task { await core.recordAll() }
    }

    /// Starts listening. `transport` sends the app's requests upstream; `events` hears of every exchange,
    /// tunnel and refusal (on the proxy's threads: keep it quick). Throws `ProxyStartError`.
    public static func start(configuration: ProxyConfiguration, ca: ProxyCA, transport: AsyncHTTPTransport, pipeline: ExchangePipeline,
                             events: @escaping @Sendable (ProxyEvent) -> Void = { _ in },
                             group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> ProxyServer {
        if let refusal = configuration.refusal { throw ProxyStartError(description: refusal) }
        let stats = ProxyStats()
        // The watchdog's contract, read once before listening: each app request's operation is decided
        // from it when the exchange is made.
        let contract = await pipeline.first(WatchdogObserver.self)?.contract()
        let core = ProxyCore(configuration: configuration, ca: ca, transport: transport, pipeline: pipeline, contract: contract, stats: stats, events: events)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: false)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxyConnection(core: core))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.listen.host, port: configuration.listen.port).get()
        } catch {
            throw ProxyStartError(description: "the proxy cannot listen on \(configuration.listen): \(Self.words(error))")
        }
        let port = channel.localAddress?.port ?? configuration.listen.port
        return ProxyServer(configuration: configuration, stats: stats, address: HostPort(host: configuration.listen.host, port: port), channel: channel,
                           core: core)
    }

    /// Stops listening (connections open now end as they end); the exchanges answered so far are taken
    /// through the pipeline first.
    public func stop() async {
        try? await channel.close()
        core.stopRecording()
        await recorder.value
    }

    static func words(_ error: any Error) -> String {
        if let error = error as? IOError {
            switch error.errnoCode {
            case EADDRINUSE: return "the address is in use by another program"
            case EACCES: return "this user may not listen on that port"
            case EADDRNOTAVAIL: return "this machine has no such address"
            default: break
            }
        }
        return "the system refused it"
    }
}

/// Why the proxy did not start, in one line.
public struct ProxyStartError: Error, Sendable, CustomStringConvertible {
    public let description: String
}
