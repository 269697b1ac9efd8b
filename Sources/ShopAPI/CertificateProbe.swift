import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// After a certificate chain failed verification, the server's certificate is fetched once more with
/// nothing verified — a handshake only, no request is sent and nothing is trusted — to tell an
/// expired (or not yet valid) certificate from an untrusted one. BoringSSL reports a chain checked
/// against `ca_file` only as "verify failed", whatever the reason.
enum CertificateProbe {
    /// Whether the certificate `host:port` presents is outside its validity dates at `now`; nil when
    /// it cannot be told (no connection, no certificate, the time limit).
    static func isOutOfDate(host: String, port: Int, now: Date = Date(), timeout: TimeAmount = .seconds(3)) async -> Bool? {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        guard let context = try? NIOSSLContext(configuration: tls) else { return nil }
        let group = MultiThreadedEventLoopGroup.singleton
        let handshake = group.next().makePromise(of: NIOSSLCertificate?.self)
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let ssl = try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
                    try channel.pipeline.syncOperations.addHandler(ssl)
                    try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(ssl: ssl, done: handshake))
                }
            }
        guard let channel = try? await bootstrap.connect(host: host, port: port).get() else {
            handshake.fail(ChannelError.connectTimeout(timeout))
            return nil
        }
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { handshake.fail(ChannelError.connectTimeout(timeout)) }
        let certificate = try? await handshake.futureResult.get()
        deadline.cancel()
        try? await channel.close()
        guard let certificate = certificate ?? nil else { return nil }
        let t = time_t(now.timeIntervalSince1970)
        return t > certificate.notValidAfter || t < certificate.notValidBefore
    }

    /// Answers the peer's certificate once the handshake is done (or fails the promise).
    private final class HandshakeWatcher: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let ssl: NIOSSLClientHandler
        private let done: EventLoopPromise<NIOSSLCertificate?>

        init(ssl: NIOSSLClientHandler, done: EventLoopPromise<NIOSSLCertificate?>) {
            self.ssl = ssl
            self.done = done
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case TLSUserEvent.handshakeCompleted = event { done.succeed(ssl.peerCertificate) }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            done.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.fail(ChannelError.eof)
            context.fireChannelInactive()
        }
    }
}
