import Foundation
import NIOCore
import NIOSSL
import ProxyCA
import ProxyWire
import ShopAPI

/// One connection from the app: reads its requests (`RequestReader`), answers CONNECT by intercepting
/// (TLS with the host's leaf) or tunnelling blind, forwards each request of a shop host upstream and
/// writes the answer back, one request at a time (reading pauses while one is out). Lives on its
/// channel's event loop, and so does its upstream exchange (`AsyncHTTPTransport.send(_:on:)`); the
/// pipeline hears of it afterwards, off that path (`ProxyCore.recordAll`). The faults in force are put
/// into the requests it forwards (`ProxyConnection+Forwarding.swift`).
final class ProxyConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Mode: Equatable {
        /// Plain HTTP to the proxy: absolute-form requests, CONNECT, the setup page.
        case plain
        /// Decrypted requests inside a CONNECT to an intercepted host.
        case intercepted(HostPort)
        /// A blind tunnel being opened: bytes that come meanwhile are kept for it (up to `earlyLimit`).
        case opening
        /// A blind tunnel: bytes pass to the glue behind this handler, unread.
        case tunnel
        /// Closing: reads nothing more.
        case done
    }

    let core: ProxyCore
    var reader: RequestReader
    var mode = Mode.plain
    /// A request is out upstream (or a tunnel is being opened): the next waits in the reader.
    var busy = false
    /// The password was given on this connection (a CONNECT's authorizes the requests inside it).
    private var authorized: Bool
    var headTimer: Scheduled<Void>?
    var idleTimer: Scheduled<Void>?
    private var counted = false
    /// No head has come yet for the request being read (its bytes are timed by the head timeout).
    var awaitingHead = true
    /// A request's head has come and its body is being read (timed by the body timeout).
    var readingBody = false
    /// Reading stopped until the app takes the answers written (it reads no faster than this).
    private var waitingForWrites = false
    /// Bytes the app sent while its blind tunnel was being opened.
    private var early: [UInt8] = []
    static let earlyLimit = 1 << 20

    init(core: ProxyCore) {
        self.core = core
        reader = RequestReader(limits: core.configuration.limits)
        authorized = core.password == nil
    }

    // MARK: Channel events

    func channelActive(context: ChannelHandlerContext) {
        var over = false
        core.stats.update { counts in
            over = counts.openConnections >= core.configuration.maxConnections
            if !over { counts.openConnections += 1 }
        }
        if over {
            refuse(context, WireResponse.own(503, "the proxy has \(core.configuration.maxConnections) connections open, its limit: try again"),
                   request: nil)
            return
        }
        counted = true
        armIdle(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted { core.stats.update { $0.openConnections -= 1 } }
        counted = false
        headTimer?.cancel()
        idleTimer?.cancel()
        mode = .done
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard mode != .done else { return }
        if case .tunnel = mode { return context.fireChannelRead(data) }
        let buffer = unwrapInboundIn(data)
        if case .opening = mode {
            early += buffer.readableBytesView
            if early.count > Self.earlyLimit { close(context) }
            return
        }
        buffer.withUnsafeReadableBytes { reader.append($0) }
        armIdle(context)
        if headTimer == nil, awaitingHead, !busy { armHead(context) }
        process(context)
    }

    /// An app that does not read its answers stops the reading of its requests (no answers pile up).
    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, waitingForWrites {
            waitingForWrites = false
            if !busy {
                context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
                process(context)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset, a TLS alert from a client that does not trust the CA…: the connection ends; the app
        // sees its own error. Nothing of the library's words goes anywhere a user reads.
        mode = .done
        context.close(promise: nil)
    }

    // MARK: Requests

    /// Takes every whole request the reader holds, one at a time.
    private func process(_ context: ChannelHandlerContext) {
        while !busy, mode != .done {
            guard context.channel.isWritable else {
                waitingForWrites = true
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                return
            }
            let event: WireEvent?
            do {
                event = try reader.next()
            } catch {
                refuse(context, WireResponse.own(error.status, error.reason), request: nil)
                return
            }
            guard let event else { return }
            switch event {
            case .head(let head):
                awaitingHead = false
                headTimer?.cancel()
                headTimer = nil
                if let early = admit(head) ?? routeProblem(head) {
                    refuse(context, early, request: "\(head.method) \(Self.shown(head.target))")
                    return
                }
                if head.framing != .none { armBody(context) }
                if head.expectsContinue { write(context, WireResponse(status: 100, fields: [], body: [], bodiless: true)) }
            case .request(var head, let body):
                awaitingHead = true
                readingBody = false
                headTimer?.cancel()
                headTimer = nil
                // A proxy keeps no persistent connection with an HTTP/1.0 client (RFC 9112 §9.3): it is
                // answered, then closed, whatever its Connection header asked.
                if head.minorVersion == 0 { head.keepAlive = false }
                handle(context, head, body)
                if !busy, mode != .done { armHead(context) }
            }
        }
    }

    /// What refuses a request before its body is read: a wrong password, a method or target the proxy
    /// does not take. Nil when it may go on.
    private func admit(_ head: RequestHead) -> WireResponse? {
        let target = RequestTarget(head.target, method: head.method)
        let forProxyItself = if case .origin = target, mode == .plain { true } else { false }
        if !authorized, !forProxyItself {
            if core.password?.admits(head.value("Proxy-Authorization")) == true {
                authorized = true
            } else {
                core.stats.update { $0.authFailures += 1 }
                return WireResponse.own(407, "the proxy needs its password (Proxy-Authorization: Basic)",
                                        extra: [("Proxy-Authenticate", "Basic realm=\"reiterate-shop\"")])
            }
        }
        if head.method != "CONNECT", RequestMethod(rawValue: head.method) == nil {
            return WireResponse.own(501, "the proxy does not forward \(head.method) requests")
        }
        return nil
    }

    /// What refuses a request by where it goes, known from its head (before a body is asked for with
    /// 100 Continue): a Host that disagrees with its target, a host the proxy does not forward to.
    private func routeProblem(_ head: RequestHead) -> WireResponse? {
        switch (mode, RequestTarget(head.target, method: head.method)) {
        case (.plain, .absolute(let scheme, let host, _)):
            if head.value("Host").map({ host.matches(hostHeader: $0, defaultPort: scheme == "https" ? 443 : 80) }) == false {
                return WireResponse.own(400, "the request's Host header names another host than its URL, which parsers can read two ways")
            }
            if !core.intercepted.contains(host) { return notForwarded }
        case (.intercepted(let host), .origin):
            if !(head.value("Host").map { host.matches(hostHeader: $0, defaultPort: 443) } ?? false) {
                return WireResponse.own(400, "the request's Host header names another host than the tunnel's (\(host))")
            }
        case (.intercepted(let host), .absolute(_, let named, _)) where named != host:
            return WireResponse.own(400, "inside a tunnel only requests for the tunnel's own host are taken")
        default:
            break
        }
        return nil
    }

    var notForwarded: WireResponse {
        WireResponse.own(403, "the proxy forwards only the shop's hosts (\(core.intercepted.map(\.description).sorted().joined(separator: ", "))); HTTPS to any other passes as a tunnel")
    }

    private func handle(_ context: ChannelHandlerContext, _ head: RequestHead, _ body: [UInt8]) {
        let line = "\(head.method) \(head.target)"
        let target = RequestTarget(head.target, method: head.method)
        switch (mode, target) {
        case (.plain, .authority(let host)):
            if refusedOffline(context, counted: core.intercepted.contains(host)) { return }
            connect(context, to: host)
        case (.plain, .absolute(let scheme, let host, let path)):
            guard head.value("Host").map({ host.matches(hostHeader: $0, defaultPort: scheme == "https" ? 443 : 80) }) ?? true else {
                return refuse(context, WireResponse.own(400, "the request's Host header names another host than its URL, which parsers can read two ways"), request: line)
            }
            forward(context, head, body, scheme: scheme, host: host, target: path)
        case (.plain, .origin(let path)):
            answerForItself(context, head, body, path: path)
        case (.intercepted(let host), .origin(let path)):
            guard let named = head.value("Host"), host.matches(hostHeader: named, defaultPort: 443) else {
                return refuse(context, WireResponse.own(400, "the request's Host header names another host than the tunnel's (\(host))"), request: line)
            }
            forward(context, head, body, scheme: "https", host: host, target: path)
        case (.intercepted(let host), .absolute(_, let named, let path)) where named == host:
            forward(context, head, body, scheme: "https", host: host, target: path)
        case (.intercepted, _):
            refuse(context, WireResponse.own(400, "inside a tunnel only requests for the tunnel's own host are taken"), request: line)
        case (_, .unreadable), (.plain, _), (.done, _), (.tunnel, _), (.opening, _):
            refuse(context, WireResponse.own(400, "the request's target is not one a proxy can read: \(Self.shown(head.target))"), request: line)
        }
    }

    // MARK: Forwarding (ProxyConnection+Forwarding.swift)

    /// The next request of the connection may be read (its last exchange is answered, and the pipeline
    /// is not too far behind).
    func readOn(_ context: ChannelHandlerContext) {
        guard mode != .done, context.channel.isActive else { return }
        busy = false
        context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        armIdle(context)
        armHead(context)
        process(context)
    }

    // MARK: CONNECT

    private func connect(_ context: ChannelHandlerContext, to host: HostPort) {
        if core.intercepted.contains(host) {
            let tls: NIOSSLContext
            do {
                tls = try core.tlsContext(for: host.host)
            } catch {
                let why = (error as? ProxyCAError)?.description ?? "its certificate could not be made"
                return refuse(context, WireResponse.own(502, "the proxy could not intercept \(host.host): \(why)"), request: "CONNECT \(host)")
            }
            write(context, WireResponse(status: 200, fields: [], body: [], bodiless: true))
            mode = .intercepted(host)
            let early = reader.takeRemaining()
            reader = RequestReader(limits: core.configuration.limits)
            do {
                try context.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
            } catch {
                return close(context)
            }
            armHead(context)
            if !early.isEmpty { context.pipeline.syncOperations.fireChannelRead(NIOAny(context.channel.allocator.buffer(bytes: early))) }
            return
        }
        if !core.configuration.listen.isLoopback, host.isLoopback || host == core.configuration.listen {
            return refuse(context, WireResponse.own(403, "the proxy does not open tunnels to its own machine"), request: "CONNECT \(host)")
        }
        busy = true
        mode = .opening
        headTimer?.cancel()
        idleTimer?.cancel()
        early = reader.takeRemaining()
        Tunnel.open(from: context, to: host, core: core, handler: self)
    }

    // MARK: The proxy's own pages

    /// The setup page and the CA, or the fault control (`/_proxy/faults`, from this machine only).
    private func answerForItself(_ context: ChannelHandlerContext, _ head: RequestHead, _ body: [UInt8], path: String) {
        var response: WireResponse
        if FaultControl.owns(path) {
            guard FaultControl.admits(peer: context.channel.remoteAddress) else {
                return refuse(context, WireResponse.own(403, "the proxy's faults are changed only from this machine"), request: "\(head.method) \(Self.shown(path))")
            }
            // A web page open on this machine can post to it too: such a request names its Origin, and cannot
            // label a body application/json without asking first (CORS); either is refused.
            if let refusal = FaultControl.crossSiteRefusal(method: head.method, origin: head.value("Origin"), contentType: head.value("Content-Type")) {
                return refuse(context, WireResponse.own(403, refusal), request: "\(head.method) \(Self.shown(path))")
            }
            response = FaultControl.answer(method: head.method, path: path, body: body, faults: core.faults)
        } else {
            guard head.method == "GET" || head.method == "HEAD" else {
                return refuse(context, WireResponse.own(405, "the proxy's own pages are read with GET"), request: "\(head.method) \(Self.shown(path))")
            }
            response = SetupPage.answer(path: path, core: core)
            response.bodiless = head.method == "HEAD"
        }
        guard head.keepAlive else {
            response.fields.append(("Connection", "close"))
            return finish(context, with: response)
        }
        write(context, response)
    }

    // MARK: Writing, refusing, closing

    func write(_ context: ChannelHandlerContext, _ response: WireResponse) {
        context.writeAndFlush(wrapOutboundOut(response.encoded(allocator: context.channel.allocator)), promise: nil)
    }

    /// Answers with the proxy's own error and closes: the request never went upstream.
    func refuse(_ context: ChannelHandlerContext, _ response: WireResponse, request: String?) {
        core.stats.update { $0.refused += 1 }
        let reason = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .newlines)
        core.events(.refused(Refusal(at: Date(), status: response.status, request: request, reason: reason)))
        finish(context, with: response)
    }

    /// Writes the last answer, then closes once it has gone out whole (a close at once would drop what
    /// the socket had not taken yet).
    func finish(_ context: ChannelHandlerContext, with response: WireResponse) {
        mode = .done
        headTimer?.cancel()
        idleTimer?.cancel()
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(response.encoded(allocator: channel.allocator))).whenComplete { _ in channel.close(promise: nil) }
    }

    func close(_ context: ChannelHandlerContext) {
        mode = .done
        headTimer?.cancel()
        idleTimer?.cancel()
        context.close(promise: nil)
    }

    /// Called by the tunnel once it holds the connection: bytes pass through from now on. Answers the
    /// bytes that came while it was being opened (the host gets them first).
    func tunnelOpened() -> [UInt8] {
        busy = false
        mode = .tunnel
        defer { early = [] }
        return early
    }

    /// The tunnel could not be opened: its answer goes out, then the connection ends.
    func tunnelFailed(_ context: ChannelHandlerContext, _ response: WireResponse) {
        early = []
        finish(context, with: response)
    }
}
