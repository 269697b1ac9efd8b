import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A CONNECT to a host the proxy does not intercept: a connection to that host, glued to the app's, its
/// bytes passed through and never decrypted. Only the host, the byte counts and the times are kept.
enum Tunnel {
    static func open(from context: ChannelHandlerContext, to target: HostPort, core: ProxyCore, handler: ProxyConnection) {
        let app = context.channel
        let started = Date(), clock = ContinuousClock.now
        let meter = TunnelMeter()
        app.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        let bound = NIOLoopBound((handler, context), eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(.seconds(5))
            .connect(host: target.host, port: target.port)
            .whenComplete { result in
                let (handler, context) = bound.value
                @Sendable func record(_ failure: String?) {
                    let counts = meter.counts
                    core.stats.update { $0.tunnels += 1 }
                    core.events(.tunnel(TunnelRecord(target: target, startedAt: started, duration: .now - clock,
                                                     bytesUp: counts.up, bytesDown: counts.down, failure: failure)))
                }
                switch result {
                case .failure:
                    let reason = "the proxy could not open a tunnel to \(target)"
                    handler.tunnelFailed(context, WireResponse.own(502, reason))
                    record(reason)
                case .success(let peer):
                    guard app.isActive else {
                        peer.close(promise: nil)
                        return record("the app closed its connection first")
                    }
                    // Beyond this machine, the address actually reached is judged, not its name: no way
                    // round to the proxy's own machine (127.1, 0x7f000001, a name that resolves there).
                    if !core.configuration.listen.isLoopback, let reached = peer.remoteAddress, TunnelPolicy.isForbidden(reached, proxy: app.localAddress) {
                        peer.close(promise: nil)
                        let reason = "the proxy does not open tunnels to its own machine or to link-local addresses"
                        handler.tunnelFailed(context, WireResponse.own(403, reason))
                        return record(reason)
                    }
                    let (toPeer, toApp) = GlueHandler.pair(meter: meter)
                    do {
                        try app.pipeline.syncOperations.addHandler(toPeer)
                        try peer.pipeline.syncOperations.addHandler(toApp)
                    } catch {
                        peer.close(promise: nil)
                        context.close(promise: nil)
                        return record("the proxy could not join the two connections")
                    }
                    let early = handler.tunnelOpened()
                    context.writeAndFlush(NIOAny(WireResponse(status: 200, fields: [], body: [], bodiless: true).encoded(allocator: app.allocator)),
                                          promise: nil)
                    if !early.isEmpty {
                        meter.add(up: early.count)
                        peer.writeAndFlush(peer.allocator.buffer(bytes: early), promise: nil)
                    }
                    app.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
                    app.closeFuture.and(peer.closeFuture).whenComplete { _ in record(nil) }
                }
            }
    }
}

/// Where a blind tunnel may not go when the proxy listens beyond this machine: this machine itself
/// (loopback, the unspecified address, the proxy's own address) and link-local addresses (the cloud's
/// metadata service at 169.254.169.254).
enum TunnelPolicy {
    static func isForbidden(_ address: SocketAddress, proxy: SocketAddress?) -> Bool {
        guard let ip = address.ipAddress?.lowercased() else { return true }
        if let own = proxy?.ipAddress?.lowercased(), own == ip { return true }
        let v4 = ip.hasPrefix("::ffff:") ? String(ip.dropFirst(7)) : ip
        if v4.contains(".") {
            let octets = v4.split(separator: ".").compactMap { Int($0) }
            guard octets.count == 4 else { return true }
            return octets[0] == 127 || octets[0] == 0 || (octets[0] == 169 && octets[1] == 254)
        }
        return ip == "::1" || ip == "::" || ip.hasPrefix("fe8") || ip.hasPrefix("fe9") || ip.hasPrefix("fea") || ip.hasPrefix("feb")
    }
}

/// The bytes each way through one tunnel.
final class TunnelMeter: Sendable {
    private let state = Mutex((up: 0, down: 0))
    var counts: (up: Int, down: Int) { state.withLock { $0 } }
    func add(up: Int = 0, down: Int = 0) { state.withLock { $0.up += up; $0.down += down } }
}

/// One side of a tunnel: what its channel reads is written to the partner's channel; when one side
/// closes, so does the other; a partner that cannot take more pauses this side's reading.
final class GlueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private let meter: TunnelMeter
    /// The app's side counts bytes up; the host's side bytes down.
    private let isAppSide: Bool
    private var pendingRead = false

    private init(meter: TunnelMeter, isAppSide: Bool) {
        self.meter = meter
        self.isAppSide = isAppSide
    }

    /// The handler for the app's channel, and the one for the host's.
    static func pair(meter: TunnelMeter) -> (GlueHandler, GlueHandler) {
        let app = GlueHandler(meter: meter, isAppSide: true), host = GlueHandler(meter: meter, isAppSide: false)
        app.partner = host
        host.partner = app
        return (app, host)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if isAppSide { meter.add(up: bytes.readableBytes) } else { meter.add(down: bytes.readableBytes) }
        partner?.context?.write(wrapOutboundOut(bytes), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.closeAfterPendingWrites()
        context.fireChannelInactive()
    }

    /// Closes this side once what was written to it has gone out (the other side ended; its last bytes
    /// are still owed to this one).
    private func closeAfterPendingWrites() {
        guard let context else { return }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.resumeReading() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.context?.channel.isWritable ?? true {
            context.read()
        } else {
            pendingRead = true
        }
    }

    private func resumeReading() {
        guard pendingRead, let context else { return }
        pendingRead = false
        context.read()
    }
}
