import Foundation
import ProxyCA
import ShopAPI
import StubServer
import Synchronization
import Testing
@testable import ShopProxy

/// Keeps every app exchange the pipeline finished.
actor Seen: ExchangeObserver {
    private(set) var exchanges: [HTTPExchange] = []
    func finished(_ e: HTTPExchange) -> [Finding] {
        exchanges.append(e)
        return []
    }
}

/// Every event the proxy told its front end, in order.
final class Events: Sendable {
    let list = Mutex<[ProxyEvent]>([])
    func add(_ e: ProxyEvent) { list.withLock { $0.append(e) } }
    var refusals: [Refusal] { list.withLock { $0.compactMap { if case .refused(let r) = $0 { r } else { nil } } } }
    var injected: [HTTPExchange] { list.withLock { $0.compactMap { if case .injected(let e) = $0 { e } else { nil } } } }
}

/// The proxy in this process on 127.0.0.1 in front of the stand-in (plain HTTP), for a suite to drive
/// with `RawClient`.
protocol ProxyTesting {}

extension ProxyTesting {
    func start(password: String? = nil, events: Events = Events(), headTimeout: Duration = .seconds(10),
               bodyTimeout: Duration = .seconds(60), faults: [ProxyFault] = [], extraHosts: @Sendable (Int) -> [HostPort] = { _ in [] })
        async throws -> (RunningStub, ProxyServer, AsyncHTTPTransport, Seen) {
        let stub = try await RunningStub.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-ca-\(UUID().uuidString)")
        let ca = try ProxyCA.loadOrCreate(folder: folder, permitted: PermittedNames(hosts: ["127.0.0.1"]))
        let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
        let seen = Seen()
        var configuration = ProxyConfiguration(listen: HostPort(host: "127.0.0.1", port: 0), password: password,
                                               baseURL: try #require(URL(string: stub.url)), headTimeout: headTimeout)
        configuration.bodyTimeout = bodyTimeout
        configuration.faults = faults
        configuration.extraHosts = extraHosts(stub.port)
        let proxy = try await ProxyServer.start(configuration: configuration, ca: ca, transport: transport,
                                                pipeline: .standard(extra: [seen]), events: { events.add($0) })
        return (stub, proxy, transport, seen)
    }

    func stop(_ stub: RunningStub, _ proxy: ProxyServer, _ transport: AsyncHTTPTransport) async {
        await proxy.stop()
        try? await transport.shutdown()
        await stub.stop()
    }

    /// Waits until `condition` holds, or records a failure after 10 s (at the caller's line).
    func waitFor(sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(20))  // pace of the poll
        }
        Issue.record("timed out after 10 s waiting for the condition", sourceLocation: sourceLocation)
    }
}
