import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StubCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fault injection for everything but `/_stub/*`, unknown paths included (a proxy in front of the shop
/// fails whatever is asked of it).
///
/// It asks the `FaultRegistry` which faults hit the request (one use of a counted fault is reserved),
/// then: latency first (a slow proxy delays whatever answer follows); a terminal fault (status, html,
/// rate_limit, reset, hang) answers instead of the route; otherwise the route answers, applying the
/// content faults of its operation (hostile, malformed_entry) handed to it in the context, and this
/// layer cuts, stalls or relabels the answer's bytes (truncate, stall, content_type). Only the faults
/// that changed the answer are spent; the others get their reserved use back.
struct FaultMiddleware: RouterMiddleware {
    let registry: FaultRegistry

    /// Faults any request can get; an operation adds the content faults it supports.
    static let everywhere: Set<FaultKind> = [.latency, .status, .html, .rateLimit, .reset, .hang, .truncate, .contentType, .stall, .noRequestID,
                                              .ignoreAuth, .latin1Body, .publicCache]

    func handle(_ request: Request, context: StubContext, next: (Request, StubContext) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if StubRoutes.isControl(path) { return try await next(request, context) }

        // The operation the router matched for this method and path (none: unknown path or method).
        let canonical = StubRoutes.isCanonical(path)
        let operation = canonical ? Operation(endpointPath: context.endpointPath) : nil
        let appStore = canonical ? AppStoreRoute(endpointPath: context.endpointPath) : nil
        let applicable = Self.everywhere.union(operation?.contentFaults ?? []).union(appStore == nil ? [] : AppStoreRoute.contentFaults)
        let hits = await registry.trigger(method: request.method.rawValue, path: path, applicable: applicable)
        let (response, applied) = await answer(request, context: context, hits: hits, next: next)
        let appliedIDs = Set(applied.map(\.id))
        await registry.settle(applied: applied, released: hits.filter { !appliedIDs.contains($0.id) })
        context.notes.replaceApplied(applied)
        return response
    }

    /// The answer, and the faults that shaped it: latencies, then the content faults the route applied,
    /// then the byte faults (the order the request log names them in).
    func answer(
        _ request: Request, context: StubContext, hits: [FaultHit], next: (Request, StubContext) async throws -> Response
    ) async -> (Response, [FaultHit]) {
        let latencies = hits.filter { $0.spec.kind == .latency }
        var delay = 0
        var rng = SystemRandomNumberGenerator()
        for hit in latencies {
            delay += hit.spec.ms + (hit.spec.jitter > 0 ? Int(rng.next() % UInt64(hit.spec.jitter + 1)) : 0)
        }
        if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }

        if let terminal = hits.first(where: { $0.spec.kind.isTerminal }) {
            let apple = AppStoreRoute.isAppStore(request.uri.path)
            return (await Self.terminalAnswer(terminal.spec, context: context, apple: apple), latencies + [terminal])
        }

        var inner = context
        inner.contentFaults = hits.filter {
            !$0.spec.kind.isTerminal && ![.latency, .truncate, .contentType, .noRequestID, .stall, .latin1Body, .publicCache].contains($0.spec.kind)
        }
        var response: Response
        do {
            response = try await next(request, inner)
        } catch {
            response = Responses.internalError(error)
        }
        var applied = latencies + context.notes.appliedFaults

        if let drop = hits.first(where: { $0.spec.kind == .noRequestID }) {
            context.notes.dropRequestID = true
            applied.append(drop)
        }
        if let cache = hits.first(where: { $0.spec.kind == .publicCache }) {
            response.headers[.cacheControl] = "public, max-age=60"
            applied.append(cache)
        }
        let byteFaults = hits.filter { [.truncate, .contentType, .stall, .latin1Body].contains($0.spec.kind) }
        guard !byteFaults.isEmpty else { return (response, applied) }
        var body = await Self.bytes(of: response.body)
        var stall: (keep: Int, seconds: Int)?
        for hit in byteFaults {
            switch hit.spec.kind {
            case .truncate: body = Array(body.prefix(Self.keep(hit.spec, of: body)))
            case .contentType: response.headers[.contentType] = hit.spec.contentType
            case .latin1Body:
                // Only an answer with text beyond ASCII changes; the rest is sent as it is (and the fault kept).
                guard body.contains(where: { $0 >= 0x80 }) else { continue }
                body = String(decoding: body, as: UTF8.self).unicodeScalars.map { $0.value < 0x100 ? UInt8($0.value) : UInt8(ascii: "?") }
            case .stall: stall = (keep: Self.keep(hit.spec, of: body), seconds: hit.spec.seconds)
            default: break
            }
            applied.append(hit)
        }
        if let stall {
            response.body = Self.stalling(body, keep: stall.keep, seconds: stall.seconds, channel: context.channel)
        } else {
            response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        }
        return (response, applied)
    }
}

extension FaultMiddleware {
    /// Bytes a truncate or stall keeps: `keep`, by default half, and always at least one byte fewer than all.
    static func keep(_ spec: FaultSpec, of body: [UInt8]) -> Int {
        min(spec.keep ?? body.count / 2, max(body.count - 1, 0))
    }

    /// The answer of a terminal fault, in place of the route's. `apple`: an App Store Server API path, whose
    /// `rate_limit` answers as Apple's (its body, and `Retry-After` as a UNIX time in milliseconds).
    static func terminalAnswer(_ spec: FaultSpec, context: StubContext, apple: Bool = false) async -> Response {
        switch spec.kind {
        case .status:
            return Responses.error(ShopError(
                status: spec.status, code: "injected_fault",
                message: spec.message ?? "injected fault: HTTP \(spec.status)", retryAfter: spec.retryAfter
            ))
        case .html:
            return Responses.proxyPage(status: spec.status, retryAfter: spec.retryAfter)
        case .rateLimit where apple:
            let until = (Date().timeIntervalSince1970 + Double(spec.retryAfter ?? 2)) * 1000
            let error = AppStoreError.rateLimitExceeded
            return StubService.apple(error, status: error.status, headers: [.retryAfter: String(Int64(until.rounded(.down)))])
        case .rateLimit:
            let seconds = spec.retryAfter ?? 2
            return Responses.error(ShopError(status: 429, code: "rate_limited", message: "too many requests; retry in \(seconds) s", retryAfter: seconds))
        case .reset:
            await resetConnection(context.channel)
            context.notes.abort = "RESET"
            return Response(status: .internalServerError)  // never sent: the connection is gone
        case .hang:
            // Wait until the client closes the connection, or the bound passes (then drop the connection).
            let deadline = ContinuousClock.now + .seconds(spec.seconds)
            var gaveUp = false
            while ContinuousClock.now < deadline {
                if await peerHasGone(context.channel) {
                    gaveUp = true
                    break
                }
                do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
            }
            await resetConnection(context.channel)
            context.notes.abort = gaveUp ? "HANG(client gave up)" : "HANG(timeout)"
            return Response(status: .internalServerError)  // never sent
        default:
            return Responses.error(ShopError(status: 500, code: "internal", message: "fault \(spec.kind.rawValue) is not terminal"))
        }
    }

    /// A body whose head promises all of `body`; only the first `keep` bytes come, then nothing until the
    /// client gives up or `seconds` pass, then a reset.
    static func stalling(_ body: [UInt8], keep: Int, seconds: Int, channel: any Channel) -> ResponseBody {
        let first = Array(body.prefix(keep))
        return ResponseBody(contentLength: body.count) { writer in
            try await writer.write(ByteBuffer(bytes: first))
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline, !(await peerHasGone(channel)) {
                do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
            }
            await resetConnection(channel)
        }
    }

    /// The bytes of an answer's body (the routes' bodies are one buffer, so this copies it once).
    static func bytes(of body: ResponseBody) async -> [UInt8] {
        let collector = BodyCollector()
        try? await body.write(collector)
        return collector.bytes
    }

    /// Whether the client closed its side. HTTP/1 pipelining stops reading while a request is in
    /// flight, so the channel never sees the client's FIN; the kernel's TCP state does (CLOSE_WAIT).
    static func peerHasGone(_ channel: any Channel) async -> Bool {
        guard channel.isActive else { return true }
        #if os(Linux)
        if let provider = channel as? any SocketOptionProvider, let info = try? await provider.getTCPInfo().get() {
            return info.tcpi_state != 1  // TCP_ESTABLISHED
        }
        #endif
        return false
    }

    /// Closes the connection with a TCP RST (SO_LINGER 0) rather than a FIN.
    static func resetConnection(_ channel: any Channel) async {
        if let provider = channel as? any SocketOptionProvider {
            try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close()
    }
}

/// A `ResponseBodyWriter` that keeps what is written.
private final class BodyCollector: ResponseBodyWriter {
    var bytes: [UInt8] = []

    func write(_ buffer: ByteBuffer) async throws {
        bytes.append(contentsOf: buffer.readableBytesView)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
