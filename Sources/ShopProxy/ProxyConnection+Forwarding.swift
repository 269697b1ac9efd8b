import Foundation
import HTTPTypes
import JSONTokens
import NIOCore
import NIOSSL
import ProxyWire
import ShopAPI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// An app request on its way upstream, and the faults the tester put in its way (`ProxyFaults`): some
// answer in the server's stead and never forward (status, html, rate_limit, hang, reset, offline), the
// others forward and then delay, cut or drop the server's answer (latency, truncate, lose_answer).
extension ProxyConnection {
    func forward(_ context: ChannelHandlerContext, _ head: RequestHead, _ body: [UInt8], scheme: String, host: HostPort, target: String) {
        guard let method = RequestMethod(rawValue: head.method), let route = core.route(method, scheme: scheme, host: host, target: target) else {
            return refuse(context, notForwarded, request: "\(head.method) \(Self.shown(head.target))")
        }
        let fault = core.faults.take(method: method.rawValue, path: route.key.path)
        if fault != nil { core.stats.update { $0.faults += 1 } }
        var exchange = UpstreamExchange(core: core, method: method, route: route, head: head, body: body)
        if let fault, !fault.kind.forwards { return inject(context, fault, exchange, keepAlive: head.keepAlive) }
        exchange.fault = fault?.kind
        busy = true
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let keepAlive = head.keepAlive
        let core = core, loop = context.eventLoop
        let go: @Sendable () -> Void = { [exchange] in
            core.admit {
                exchange.send(on: loop).whenSuccess { answer in
                    // Queued for the pipeline before the app can have it (the queue is drained as the proxy
                    // stops): a proxy stopped the moment the app has its answer still writes that answer into
                    // its HAR, not a request without one. The pipeline's own work comes later, off this loop.
                    core.record(exchange, answer)
                    let (connection, context) = bound.value
                    connection.answered(context, answer, keepAlive: keepAlive, fault: fault)
                }
            }
        }
        if let fault, fault.kind == .latency {
            loop.scheduleTask(in: .nanoseconds(Self.nanoseconds(fault.delay())), go)
        } else {
            go()
        }
    }

    /// The upstream's answer (or the proxy's own 502/504) goes back to the app, whole, cut short
    /// (`truncate`) or not at all (`lose_answer`); the next request follows.
    private func answered(_ context: ChannelHandlerContext, _ answer: UpstreamAnswer, keepAlive: Bool, fault: ProxyFault?) {
        guard mode != .done, context.channel.isActive else { return }
        var response = answer.response
        switch fault?.kind {
        case .loseAnswer?:
            return cut(context)
        case .truncate?:
            let whole = response.encoded(allocator: context.channel.allocator)
            let body = response.sendsBody ? response.body.count : 0
            let keep = min(fault?.keep ?? body / 2, max(body - 1, 0))
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            mode = .done
            context.writeAndFlush(wrapOutboundOut(whole.getSlice(at: whole.readerIndex, length: whole.readableBytes - body + keep) ?? whole))
                .whenComplete { _ in bound.value.0.cut(bound.value.1) }
            return
        default:
            break
        }
        if !keepAlive { response.fields.append(("Connection", "close")) }
        guard keepAlive, !response.fields.contains(where: { $0.0 == "Connection" && $0.1 == "close" }) else {
            return finish(context, with: response)
        }
        write(context, response)
        readOn(context)
    }

    /// A fault that answers in the server's stead: the request never goes upstream and never goes through
    /// the pipeline (the answer is not the server's); the front end hears of it as `.injected`.
    private func inject(_ context: ChannelHandlerContext, _ fault: ProxyFault, _ upstream: UpstreamExchange, keepAlive: Bool) {
        var exchange = upstream.appExchange()
        exchange.fault = fault.kind.note
        let core = core
        switch fault.kind {
        case .status, .html, .rateLimit:
            var response = fault.answer
            exchange.answeredAt = .now
            exchange.response = ExchangeResponse(status: response.status, headers: HTTPFields(pairs: response.fields), body: response.body,
                                                 tokens: JSONTokenizer.tokens(response.body))
            core.events(.injected(exchange))
            response.bodiless = upstream.method == .head
            guard keepAlive else {
                response.fields.append(("Connection", "close"))
                return finish(context, with: response)
            }
            write(context, response)
        case .hang:
            // Nothing more is read or answered; the app's close (or the bound) ends it.
            mode = .done
            headTimer?.cancel()
            idleTimer?.cancel()
            let channel = context.channel, hung = exchange
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let bounded = context.eventLoop.scheduleTask(in: .seconds(Int64(fault.seconds))) { bound.value.0.cut(bound.value.1) }
            channel.closeFuture.whenComplete { _ in
                bounded.cancel()
                var ended = hung
                ended.answeredAt = .now
                core.events(.injected(ended))
            }
            channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        case .reset, .offline:
            cut(context, reset: fault.kind == .reset)
            exchange.answeredAt = .now
            core.events(.injected(exchange))
        case .latency, .truncate, .loseAnswer:
            // These forward: applied on the way back (`answered`), never here.
            assertionFailure("a forwarded fault is not injected")
            cut(context)
        }
    }

    /// A CONNECT while an `offline` fault is in force: closed at once, with no 200 and no answer, as if
    /// the network were gone. Answers whether it was. Only one to a shop host spends the fault's count (the
    /// phone's tunnels elsewhere are refused too, but do not use up "the app's next N requests").
    func refusedOffline(_ context: ChannelHandlerContext, counted: Bool) -> Bool {
        guard counted ? core.faults.takeForConnect() != nil : core.faults.offlineInForce else { return false }
        core.stats.update { $0.faults += 1 }
        cut(context)
        return true
    }

    /// Ends the app's connection as a network failure would: past TLS (no close_notify), with a TCP reset
    /// (SO_LINGER 0) when `reset`, else a plain close.
    func cut(_ context: ChannelHandlerContext, reset: Bool = false) {
        mode = .done
        headTimer?.cancel()
        idleTimer?.cancel()
        let outermost = (try? context.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self)) ?? context
        guard reset, let socket = context.channel as? any SocketOptionProvider else { return outermost.close(promise: nil) }
        let bound = NIOLoopBound(outermost, eventLoop: context.eventLoop)
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in bound.value.close(promise: nil) }
    }
}

extension ProxyFault {
    /// The proxy's answer for `status`, `html` and `rate_limit`: a JSON error body as the contract's
    /// `Error` (`{"code":…,"message":…}`), or a page as nginx in front of a server sends one.
    var answer: WireResponse {
        var fields: [(String, String)] = [("X-Reiterate-Proxy", "fault")]
        let seconds = kind == .rateLimit ? retryAfter ?? 5 : retryAfter
        if let seconds { fields.append(("Retry-After", String(seconds))) }
        if kind == .html {
            let title = "\(status) \(WireResponse.reason(status))"
            let page = "<html>\r\n<head><title>\(title)</title></head>\r\n<body>\r\n<center><h1>\(title)</h1></center>\r\n"
                + "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            return WireResponse(status: status, fields: [("Content-Type", "text/html")] + fields, body: Array(page.utf8))
        }
        let (code, words, answered) = kind == .rateLimit
            ? ("rate_limited", "too many requests; retry in \(seconds ?? 5) s", 429)
            : ("injected_fault", message ?? "injected fault: HTTP \(status)", status)
        var json = JSONWriter()
        json.value(.object(["code": .string(code), "message": .string(words)]))
        return WireResponse(status: answered, fields: [("Content-Type", "application/json")] + fields, body: json.bytes)
    }
}
