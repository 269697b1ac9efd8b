import Foundation
import HTTPTypes
import JSONTokens
import NIOCore
import ProxyWire
import ShopAPI

/// What came of forwarding one app request: the answer for the app (the server's, or the proxy's own
/// 502/504), and the exchange as the pipeline will see it.
struct UpstreamAnswer: Sendable {
    var response: WireResponse
    var exchange: HTTPExchange
    /// The server's answer as it came (tokenized only once the app has its copy).
    var upstream: TransportResponse?
}

/// One app request forwarded upstream through ShopAPI's transport (which checks the real server as the
/// client does: `ca_file`, the system's trust store, the upstream proxy) and recorded in the pipeline
/// with the source `app`.
struct UpstreamExchange: Sendable {
    let core: ProxyCore
    let method: RequestMethod
    let route: ProxyRoute
    let head: RequestHead
    let body: [UInt8]
    /// A fault that forwards (latency, truncate, lose_answer), kept on the exchange.
    var fault: InjectedFault?

    /// The body as sent (nil for a request without one).
    private var sentBody: [UInt8]? { head.framing == .none && body.isEmpty ? nil : body }

    /// The app's exchange as the pipeline and the front end see it, not sent yet.
    func appExchange() -> HTTPExchange {
        var exchange = HTTPExchange(
            serial: core.pipeline.nextSerial(), source: .app,
            request: ExchangeRequest(key: route.key, match: route.match, headers: HTTPFields(pairs: head.headers.map { ($0.name, $0.value) }), body: sentBody),
            attempt: 1)
        exchange.fault = fault?.note
        exchange.request.origin = route.origin
        return exchange
    }

    /// Sends the request upstream on `eventLoop` (the app's connection's: no thread between the two).
    func send(on eventLoop: any EventLoop) -> EventLoopFuture<UpstreamAnswer> {
        let exchange = appExchange(), sentBody = sentBody
        // Told to the pipeline beside the request going out, not ahead of it (`ProxyCore.recordAll`).
        core.recordSent(exchange)
        core.events(.sending(exchange))
        let request = TransportRequest(method: method, url: route.url,
                                       headers: HTTPFields(pairs: HopByHop.filtered(head.headers).map { ($0.name, $0.value) }),
                                       body: sentBody, timeout: core.configuration.upstreamTimeout)
        let method = method, timeout = core.configuration.upstreamTimeout
        return core.transport.send(request, on: eventLoop).map { answer in
            var answered = exchange
            answered.answeredAt = .now
            answered.requestID = answer.headers[.requestID]
            var fields = HopByHop.filtered(answer.headers.map { HeaderField(name: $0.name.rawName, value: $0.value) }).map { ($0.name, $0.value) }
            if method == .head, let length = answer.headers[.contentLength] { fields.append(("Content-Length", length)) }
            // A 1xx as the final answer (a 101 without the upgrade the proxy does not do) would leave the
            // app reading the next answer as this one's: the app gets the proxy's own 502 instead.
            let response = answer.status < 200
                ? WireResponse.own(502, "the shop's server answered \(answer.status), an interim status, as its final answer", close: true, kind: "upstream-failed")
                : WireResponse(status: answer.status, fields: fields, body: answer.body, bodiless: method == .head)
            return UpstreamAnswer(response: response, exchange: answered, upstream: answer)
        }.recover { error in
            var failed = exchange
            failed.answeredAt = .now
            let transportError = error as? TransportError ?? .other(detail: "not a transport error")
            failed.failure = .transport(transportError)
            failed.requestID = transportError.requestID
            return UpstreamAnswer(response: Self.gatewayAnswer(transportError, timeout: timeout), exchange: failed)
        }
    }

    /// The exchange goes through the pipeline (checks, pins, log, HAR), then to the front end.
    func record(_ answer: UpstreamAnswer) async {
        var exchange = answer.exchange
        if let upstream = answer.upstream {
            exchange.response = ExchangeResponse(status: upstream.status, headers: upstream.headers, body: upstream.body,
                                                 tokens: JSONTokenizer.tokens(upstream.body))
        }
        let finished = await core.pipeline.finished(exchange)
        // An answer the app gave up on itself (it closed its connection) is not an error it met.
        let failed = finished.failure.map { $0 != .cancelled } ?? ((finished.response?.status ?? 0) >= 400)
        core.stats.update { counts in
            counts.exchanges += 1
            counts.findings += finished.findings.count
            if failed { counts.errors += 1 }
        }
        core.events(.exchange(finished))
    }

    /// The proxy's own answer when the server gave none: 504 when it was too slow, else 502; one plain line.
    static func gatewayAnswer(_ error: TransportError, timeout: Duration) -> WireResponse {
        let id = error.requestID.map { " (request id \($0))" } ?? ""
        // The one wording of the failure (`TransportError.words`), as the shop's server's; 504 when it was too slow.
        let status = switch error {
        case .timeout, .connectTimeout: 504
        default: 502
        }
        let after = if case .timeout = error { " (after \(timeout.components.seconds) s)" } else { "" }
        let head = error.status.map { " (HTTP \($0))" } ?? ""
        let words = switch error {
        case .invalidURL, .invalidHeader: "the app's request cannot be sent on: " + error.words  // the app's, not the server's
        default: "the shop's server: " + error.words + after + head + id
        }
        return WireResponse.own(status, words, close: false, kind: status == 504 ? "upstream-timeout" : "upstream-failed")
    }

}

extension TransportError {
    /// The request id an answer's head carried before the failure, if one came.
    var requestID: String? {
        switch self {
        case .timeout(let id), .cutShort(_, let id), .responseTooLarge(_, let id): id
        default: nil
        }
    }
}
