import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import StubCore

/// Everything `reiterate-stub` is configured with.
public struct StubSettings: Sendable {
    public var host: String
    public var port: Int
    public var shop: ShopConfig
    public var faults: [FaultSpec]
    /// Print one line per request on stderr.
    public var requestLog: Bool

    public init(host: String = "127.0.0.1", port: Int = 8080, shop: ShopConfig = ShopConfig(), faults: [FaultSpec] = [], requestLog: Bool = true) {
        self.host = host
        self.port = port
        self.shop = shop
        self.faults = faults
        self.requestLog = requestLog
    }
}

/// The stand-in's request handling: the shop API of the contract, the `/_stub` control endpoints and fault injection.
public struct StubService: Sendable {
    public let store: ShopStore
    public let faults: FaultRegistry
    let requestLog: Bool

    /// When set, every request the stand-in receives is kept there (tests read what clients really sent).
    public let recorder: RequestRecorder?

    public init(settings: StubSettings, recorder: RequestRecorder? = nil) {
        store = ShopStore(config: settings.shop, now: Date().timeIntervalSince1970)
        faults = FaultRegistry(seed: settings.shop.seed, initial: settings.faults)
        requestLog = settings.requestLog
        self.recorder = recorder
    }

    enum Route: String {
        case audioPacks = "/api/v1/audio_packs"
        case balance = "/api/v1/balance"
        case history = "/api/v1/cheer_history"
        case purchase = "/api/v2/purchase_cheer"
        case spend = "/api/v1/spend_cheer"
        case refresh = "/api/v1/auth/refresh"

        var method: String {
            switch self {
            case .audioPacks, .balance, .history: return "GET"
            case .purchase, .spend, .refresh: return "POST"
            }
        }
    }

    static let everywhere: Set<FaultKind> = [.latency, .status, .html, .rateLimit, .reset, .hang, .truncate, .contentType, .stall]

    /// Answers one request. Never throws: every failure becomes a JSON error with a request id.
    public func respond(to incoming: Request, context: StubContext) async -> Response {
        var request = incoming
        let recordedBody: [UInt8]?
        if recorder != nil {
            // Buffer the body (it is kept in the request for the handlers) so it can be recorded.
            recordedBody = (try? await request.collectBody(upTo: 1 << 20)).map { Array($0.readableBytesView) }
        } else {
            recordedBody = nil
        }
        let started = ContinuousClock.now
        let requestID = Self.newRequestID()
        let method = request.method.rawValue
        let path = request.uri.path
        var hitNames: [String] = []
        var reply: Reply
        if path == "/_stub" || path.hasPrefix("/_stub/") {
            reply = await control(request, method: method, path: path)
        } else {
            let route = Route(rawValue: path)
            var applicable = Self.everywhere
            if route == .history, method == "GET" { applicable.formUnion([.malformedEntry, .hostile]) }
            if route == .audioPacks, method == "GET" { applicable.insert(.hostile) }
            let hits = await faults.trigger(method: method, path: path, applicable: applicable)
            let applied: [FaultHit]
            (reply, applied) = await api(request, context: context, route: route, method: method, hits: hits)
            let appliedIDs = Set(applied.map(\.id))
            await faults.settle(applied: applied, released: hits.filter { !appliedIDs.contains($0.id) })
            hitNames = applied.map(\.spec.kind.rawValue)
        }
        let millis = Int((ContinuousClock.now - started) / .milliseconds(1))
        if let recorder {
            await recorder.record(RequestRecorder.Seen(
                method: method, uri: request.uri.description,
                headers: request.headers.map { ($0.name.rawName, $0.value) }, body: recordedBody ?? [],
                outcome: reply.abort ?? String(reply.status), requestID: requestID
            ))
        }
        if requestLog {
            RequestLog.write(RequestLog.line(
                method: method, path: path, query: request.uri.query,
                outcome: reply.abort ?? String(reply.status), millis: millis, requestID: requestID, faults: hitNames
            ))
        }
        return Self.response(reply, requestID: requestID, channel: context.channel)
    }

    static func newRequestID() -> String {
        var rng = SystemRandomNumberGenerator()
        return "rq-" + String(rng.next() | (1 << 63), radix: 16)
    }

    static func response(_ reply: Reply, requestID: String, channel: any Channel) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = reply.contentType
        headers[HeaderName.requestID] = requestID
        for (name, value) in reply.headers {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        let body: ResponseBody
        if let stall = reply.stall {
            // The head promises the whole body; only the first bytes come, then nothing.
            let first = Array(reply.body.prefix(stall.keep))
            body = ResponseBody(contentLength: reply.body.count) { writer in
                try await writer.write(ByteBuffer(bytes: first))
                let deadline = ContinuousClock.now + .seconds(stall.seconds)
                while ContinuousClock.now < deadline, !(await peerHasGone(channel)) {
                    do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
                }
                await resetConnection(channel)
            }
        } else {
            body = ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body))
        }
        return Response(status: HTTPResponse.Status(code: reply.status), headers: headers, body: body)
    }

    // MARK: The API, with faults

    /// The answer, and the faults that shaped it (the others are released, so their counts are kept).
    func api(_ request: Request, context: StubContext, route: Route?, method: String, hits: [FaultHit]) async -> (Reply, [FaultHit]) {
        // Latency first: a slow proxy delays whatever answer follows.
        let latencies = hits.filter { $0.spec.kind == .latency }
        var delay = 0
        var rng = SystemRandomNumberGenerator()
        for hit in latencies {
            delay += hit.spec.ms + (hit.spec.jitter > 0 ? Int(rng.next() % UInt64(hit.spec.jitter + 1)) : 0)
        }
        if delay > 0 { try? await Task.sleep(for: .milliseconds(delay)) }

        if let terminal = hits.first(where: { $0.spec.kind.isTerminal }) {
            return (await terminalReply(terminal.spec, context: context), latencies + [terminal])
        }
        var applied = latencies
        var reply: Reply
        do {
            reply = try await handle(request, route: route, method: method, hits: hits, applied: &applied)
        } catch let error as ShopError {
            reply = .error(error)
        } catch {
            reply = .error(ShopError(status: 500, code: "internal", message: "stand-in error: \(error)"))
        }
        for hit in hits {
            switch hit.spec.kind {
            case .truncate:
                let keep = min(hit.spec.keep ?? reply.body.count / 2, max(reply.body.count - 1, 0))
                reply.body = Array(reply.body.prefix(keep))
                applied.append(hit)
            case .contentType:
                reply.contentType = hit.spec.contentType
                applied.append(hit)
            case .stall:
                reply.stall = (keep: min(hit.spec.keep ?? reply.body.count / 2, max(reply.body.count - 1, 0)), seconds: hit.spec.seconds)
                applied.append(hit)
            default: break
            }
        }
        return (reply, applied)
    }

    func terminalReply(_ spec: FaultSpec, context: StubContext) async -> Reply {
        switch spec.kind {
        case .status:
            return .error(ShopError(
                status: spec.status, code: "injected_fault",
                message: spec.message ?? "injected fault: HTTP \(spec.status)", retryAfter: spec.retryAfter
            ))
        case .html:
            var page = Reply.proxyPage(status: spec.status)
            if let retryAfter = spec.retryAfter { page.headers.append(("Retry-After", String(retryAfter))) }
            return page
        case .rateLimit:
            let seconds = spec.retryAfter ?? 2
            return .error(ShopError(status: 429, code: "rate_limited", message: "too many requests; retry in \(seconds) s", retryAfter: seconds))
        case .reset:
            await Self.resetConnection(context.channel)
            return Reply(status: 0, body: [], contentType: "", abort: "RESET")
        case .hang:
            // Wait until the client closes the connection, or the bound passes (then drop the connection).
            let deadline = ContinuousClock.now + .seconds(spec.seconds)
            var gaveUp = false
            while ContinuousClock.now < deadline {
                if await Self.peerHasGone(context.channel) {
                    gaveUp = true
                    break
                }
                do { try await Task.sleep(for: .milliseconds(50)) } catch { break }
            }
            await Self.resetConnection(context.channel)
            return Reply(status: 0, body: [], contentType: "", abort: gaveUp ? "HANG(client gave up)" : "HANG(timeout)")
        default:
            return .error(ShopError(status: 500, code: "internal", message: "fault \(spec.kind.rawValue) is not terminal"))
        }
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

    func handle(_ request: Request, route: Route?, method: String, hits: [FaultHit], applied: inout [FaultHit]) async throws -> Reply {
        let hostile = hits.first { $0.spec.kind == .hostile }
        guard let route else {
            throw ShopError(status: 404, code: "not_found", message: "no endpoint \(method) \(request.uri.path)")
        }
        guard route.method == method else {
            return .error(
                ShopError(status: 405, code: "method_not_allowed", message: "\(route.rawValue) takes \(route.method), not \(method)"),
                headers: [("Allow", route.method)]
            )
        }
        let now = Date().timeIntervalSince1970
        if route != .refresh {
            try await store.authorize(header: request.headers[.authorization], now: now)
        }
        let query = Self.queryParameters(request)
        switch route {
        case .audioPacks:
            var packs = await store.audioPacks()
            if let hostile {
                packs = HostileText.apply(to: packs)
                applied.append(hostile)
            }
            return .json(.object([("packs", .array(packs.map(\.json)))]))
        case .balance:
            let balance = try await store.balance(user: try Self.requiredUser(query))
            return .json(.object([("balance", .int(balance))]))
        case .history:
            let user = try Self.requiredUser(query)
            let page = try Self.intParameter(query, "page") ?? 1
            let perPage = try Self.intParameter(query, "per_page") ?? Paging.defaultPerPage
            var historyPage = try await store.history(user: user, page: page, perPage: perPage)
            if let hostile, !historyPage.entries.isEmpty {
                historyPage = HostileText.apply(to: historyPage)
                applied.append(hostile)
            }
            var json = historyPage.json
            if let malformed = hits.first(where: { $0.spec.kind == .malformedEntry }), !historyPage.entries.isEmpty {
                let index = min(malformed.spec.index ?? historyPage.entries.count / 2, historyPage.entries.count - 1)
                json = Self.replacingEntry(in: json, at: index, with: HostileText.malformedEntry(id: historyPage.entries[index].id))
                applied.append(malformed)
            }
            return .json(json)
        case .purchase:
            let body = try await Self.jsonBody(request)
            guard let identifier = body["identifier"]?.stringValue else {
                throw ShopError.badRequest("identifier is required (a cheer bundle such as com.reiterate.cheer.200)")
            }
            guard let transactionValue = body["transaction_id"] else {
                throw ShopError.badRequest("transaction_id is required (an unsigned 64-bit integer)")
            }
            guard let transaction = transactionValue.uint64Value else {
                throw ShopError.badRequest("transaction_id must be an unsigned 64-bit integer")
            }
            let balance = try await store.purchase(user: Self.actingUser(query), identifier: identifier, transactionID: transaction)
            return .json(.object([("balance", .int(balance))]))
        case .spend:
            let body = try await Self.jsonBody(request)
            guard let amountValue = body["amount"] else { throw ShopError.badRequest("amount is required", code: "invalid_amount") }
            guard let amount = amountValue.intValue else {
                throw ShopError.badRequest("amount must be a whole number of 1 or more", code: "invalid_amount")
            }
            guard let product = body["product"]?.stringValue else { throw ShopError.badRequest("product is required (an Audio Pack identifier)") }
            var comment: String?
            switch body["comment"] {
            case nil, .some(.null): comment = nil
            case let .some(.string(text)): comment = text
            default: throw ShopError.badRequest("comment must be text")
            }
            let balance = try await store.spend(user: Self.actingUser(query), amount: amount, product: product, comment: comment, now: now)
            return .json(.object([("balance", .int(balance))]))
        case .refresh:
            let body = try await Self.jsonBody(request)
            guard let token = body["refresh_token"]?.stringValue else { throw ShopError.badRequest("refresh_token is required") }
            return .json(try await store.refresh(refreshToken: token, now: now).json)
        }
    }

    /// Query parameters, percent-decoded; the first value wins when a name repeats.
    static func queryParameters(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in request.uri.queryParameters where result[String(key)] == nil {
            result[String(key)] = String(value)
        }
        return result
    }

    static func requiredUser(_ query: [String: String]) throws -> String {
        guard let user = query["user_id"], !user.isEmpty else {
            throw ShopError.badRequest("user_id is required", code: "missing_parameter")
        }
        return user
    }

    /// The contract does not say whose balance a write changes (in production the token names the user);
    /// the stand-in takes `user_id` from the query as GETs do, and qa-alice when it is absent.
    static func actingUser(_ query: [String: String]) -> String {
        query["user_id"].flatMap { $0.isEmpty ? nil : $0 } ?? SeedData.alice
    }

    static func intParameter(_ query: [String: String], _ name: String) throws -> Int? {
        guard let raw = query[name] else { return nil }
        guard let value = Int(raw) else {
            throw ShopError.badRequest("\(name) must be a whole number, not '\(raw)'", code: "invalid_parameter")
        }
        return value
    }

    /// The request body, at most 1 MiB (else 413).
    static func bodyBytes(_ request: Request) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: 1 << 20)
        } catch {
            throw ShopError(status: 413, code: "body_too_large", message: "request body over 1 MiB")
        }
    }

    static func jsonBody(_ request: Request) async throws -> JSON {
        let buffer = try await bodyBytes(request)
        do {
            let json = try JSONDecoder().decode(JSON.self, from: Data(buffer.readableBytesView))
            guard case .object = json else { throw ShopError.badRequest("request body must be a JSON object", code: "invalid_json") }
            return json
        } catch let error as ShopError {
            throw error
        } catch {
            throw ShopError.badRequest("request body is not valid JSON", code: "invalid_json")
        }
    }

    static func replacingEntry(in page: JSON, at index: Int, with entry: JSON) -> JSON {
        guard case var .object(pairs) = page, let h = pairs.firstIndex(where: { $0.0 == "history" }),
              case var .array(items) = pairs[h].1, items.indices.contains(index)
        else { return page }
        items[index] = entry
        pairs[h].1 = .array(items)
        return .object(pairs)
    }
}

enum HeaderName {
    static let requestID: HTTPField.Name = {
        guard let name = HTTPField.Name("X-Request-Id") else { preconditionFailure("valid header name") }
        return name
    }()
}
