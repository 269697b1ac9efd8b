import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import StubCore

public enum StubApplication {
    /// The URL a client uses for an address the server is bound to (IPv6 hosts in brackets).
    public static func url(host: String, port: Int, tls: Bool = false) -> String {
        let scheme = tls ? "https" : "http"
        return host.contains(":") ? "\(scheme)://[\(host)]:\(port)" : "\(scheme)://\(host):\(port)"
    }

    /// The TLS configuration for `--tls-cert`/`--tls-key`; a file that cannot be read throws.
    public static func tlsConfiguration(certificate: String, key: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
        let privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(privateKey))
    }

    /// Builds the Hummingbird application. `onListening` receives the bound port (useful with port 0).
    public static func make(
        settings: StubSettings,
        service: StubService? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let service = try service ?? StubService(settings: settings)
        var logger = Logger(label: "reiterate-stub") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .critical  // its shutdown chatter is noise; failures to bind throw from run()
        let server: HTTPServerBuilder = try settings.tls.map { try .tls(.http1(), tlsConfiguration: tlsConfiguration(certificate: $0.certificate, key: $0.key)) } ?? .http1()
        return Application(
            router: service.makeRouter(),
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(settings.host, port: settings.port), serverName: "reiterate-stub"),
            onServerRunning: { channel in
                await onListening(channel.localAddress?.port ?? settings.port)
            },
            logger: logger
        )
    }
}
