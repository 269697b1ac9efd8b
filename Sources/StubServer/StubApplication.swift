import Hummingbird
import Logging
import NIOCore
import StubCore

public enum StubApplication {
    /// The URL a client uses for an address the server is bound to (IPv6 hosts in brackets).
    public static func url(host: String, port: Int) -> String {
        host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
    }

    /// Builds the Hummingbird application. `onListening` receives the bound port (useful with port 0).
    public static func make(
        settings: StubSettings,
        service: StubService? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let service = service ?? StubService(settings: settings)
        var logger = Logger(label: "reiterate-stub") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .critical  // its shutdown chatter is noise; failures to bind throw from run()
        return Application(
            router: service.makeRouter(),
            configuration: ApplicationConfiguration(address: .hostname(settings.host, port: settings.port), serverName: "reiterate-stub"),
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? settings.port)
            },
            logger: logger
        )
    }
}
