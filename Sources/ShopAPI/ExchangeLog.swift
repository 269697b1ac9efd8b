import Foundation
import HTTPTypes
import JSONTokens

/// Why an exchange has no whole answer.
public enum ExchangeFailure: Sendable, Equatable {
    case cancelled
    case transport(TransportError)
}

/// One request/response as the inspector shows it. Secrets are already redacted when it is built.
public struct Exchange: Sendable, Equatable, Identifiable {
    public var id: Int
    /// The request line's words, as logged; what it is, is `key` (set with them, never apart).
    public let method: String
    /// Path and query, token-like query values redacted.
    public let path: String
    public var startedAt: Date
    public var duration: Duration
    /// nil when no HTTP answer came (see `failure`).
    public var status: Int?
    public var failure: ExchangeFailure?
    public var requestID: String?
    public var attempt: Int
    public var requestBytes: Int
    public var responseBytes: Int
    public var requestHeaders: HTTPFields
    public var responseHeaders: HTTPFields
    /// Up to `Redactor.previewLimit` bytes of each body, token fields redacted.
    public var requestBodyPreview: String?
    public var responseBodyPreview: String?
    /// How the response deviates from the contract (the contract watchdog's findings).
    public var findings: [Finding] = []
    /// Sent, with no answer yet (a hanging write shows while it hangs).
    public var isPending = false
    /// The contract's operation the request was for (nil for one recorded elsewhere).
    public var operation: OperationID?
    /// Whose request it was: this tool's, or the app's seen through the proxy.
    public var source: ExchangeSource = .tool
    /// A fault the app's proxy put into it on purpose (the app never got the server's whole answer
    /// unless it is `latency`).
    public var fault: FaultNote?
    /// `scheme://host:port` of a request to another host than the base URL's (`ExchangeRequest.origin`);
    /// nil: its `path` is relative to the base URL.
    public var origin: String?

    /// The request's key, as logged (token-like query values redacted: its `target` shows the placeholder
    /// percent-encoded, so show `path`); nil for a method the API does not use. Read once, when the
    /// exchange is made: what every consumer asks of the request (`method` and `path` are its words).
    public let key: RequestKey?

    public init(
        id: Int, method: String, path: String, startedAt: Date, duration: Duration, status: Int?, failure: ExchangeFailure?,
        requestID: String?, attempt: Int, requestBytes: Int, responseBytes: Int, requestHeaders: HTTPFields,
        responseHeaders: HTTPFields, requestBodyPreview: String?, responseBodyPreview: String?
    ) {
        self.id = id
        self.method = method
        self.path = path
        key = RequestKey(method: method, target: path)
        self.startedAt = startedAt
        self.duration = duration
        self.status = status
        self.failure = failure
        self.requestID = requestID
        self.attempt = attempt
        self.requestBytes = requestBytes
        self.responseBytes = responseBytes
        self.requestHeaders = requestHeaders
        self.responseHeaders = responseHeaders
        self.requestBodyPreview = requestBodyPreview
        self.responseBodyPreview = responseBodyPreview
    }
}

/// The last `capacity` reads, and every write of the session (up to `writeCapacity`), newest last,
/// observable by the view models. A write is evidence a report or a HAR saved later still needs: the
/// window drops the oldest read first, never a write while fewer than `writeCapacity` are kept. With
/// a spill file, what the window drops goes there (`ExchangeSpill`), and `session()` gives it back.
public actor ExchangeLog {
    public let capacity: Int
    /// Writes (anything but GET) kept however many reads come after them.
    public static let writeCapacity = 1_000
    /// The spill file's bound: 64 MiB (about 4,000 history pages at the 16 KiB preview).
    public static let spillLimit = 64 * 1024 * 1024
    private var entries: [Exchange] = []
    private var nextID = 1
    private var observers: [UUID: AsyncStream<Exchange>.Continuation] = [:]
    private let spill: ExchangeSpill?

    /// The last 100 exchanges (with 16 KiB previews: about 2 MB at most, within the TUI's 40 MB);
    /// those dropped go to `spillFile` (0600, created new) when one is given, up to `spillLimit` bytes.
    public init(capacity: Int = 100, spillFile: String? = nil, spillLimit: Int = ExchangeLog.spillLimit) {
        self.capacity = max(1, capacity)
        spill = spillFile.map { ExchangeSpill(path: $0, limit: spillLimit) }
    }

    public func all() -> [Exchange] { entries }

    /// Every exchange of the session still held, in memory or spilled, for its HAR.
    public func session() -> SessionExchanges {
        guard let spill else { return SessionExchanges(kept: entries) }
        let kept = Set(entries.map(\.id))
        return SessionExchanges(kept: entries, spilled: spill.lines().filter { !kept.contains($0.id) }, droppedReads: spill.droppedReads,
                                spillFailed: spill.failed)
    }

    /// The spill file removed (the session ended, its HAR written).
    public func close() { spill?.remove() }

    /// Numbers and stores an exchange, dropping the oldest beyond `capacity`, and tells every observer.
    @discardableResult
    public func record(_ exchange: Exchange) -> Exchange {
        var e = exchange
        e.id = nextID
        nextID += 1
        entries.append(e)
        evict()
        for observer in observers.values { observer.yield(e) }
        return e
    }

    /// Past the window: the oldest read goes first; a write only when more than `writeCapacity` are
    /// kept. What goes is spilled, when there is a spill file.
    private func evict() {
        let writes = entries.lazy.filter { $0.method != "GET" }.count
        var reads = entries.count - writes
        var writesOver = max(0, writes - Self.writeCapacity)
        guard reads > capacity || writesOver > 0 else { return }
        var kept: [Exchange] = []
        kept.reserveCapacity(entries.count)
        for e in entries {
            let goes: Bool
            if e.method == "GET" {
                goes = reads > capacity
                if goes { reads -= 1 }
            } else {
                goes = writesOver > 0
                if goes { writesOver -= 1 }
            }
            if goes { spill?.append(e) } else { kept.append(e) }
        }
        entries = kept
    }

    /// A request on its way: numbered, stored and told as pending before its answer comes.
    @discardableResult
    public func begin(_ exchange: Exchange) -> Exchange {
        var e = exchange
        e.isPending = true
        return record(e)
    }

    /// The answer (or failure) of an exchange begun before: it takes the pending one's place.
    public func finish(_ exchange: Exchange) {
        var e = exchange
        e.isPending = false
        if let index = entries.lastIndex(where: { $0.id == e.id }) {
            entries[index] = e
        } else {
            spill?.append(e)  // dropped by the window meanwhile: its answer follows it to the spill
        }
        for observer in observers.values { observer.yield(e) }
    }

    /// Every exchange recorded from now on, as it happens.
    public func updates() -> AsyncStream<Exchange> {
        let (stream, continuation) = AsyncStream<Exchange>.makeStream(bufferingPolicy: .bufferingNewest(capacity))
        let key = UUID()
        observers[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(key) }
        }
        return stream
    }

    private func removeObserver(_ key: UUID) { observers[key] = nil }
}

/// Keeps secrets out of the exchange log, log files and anything built from them.
public enum Redactor {
    public static let placeholder = "<redacted>"
    /// 16 KiB of each body: enough to read a page of history in the inspector, and 100 exchanges stay
    /// within a few MB (the TUI's memory target is 40 MB in all).
    public static let previewLimit = 16 * 1024

    static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"]

    static func isSecretName(_ name: String) -> Bool {
        // Bytes, not Foundation's string search: this runs for every key of every body (a history
        // page of 200 entries has thousands), where NSString's search cost more than decoding.
        let n = Array(name.lowercased().utf8)
        return secretWords.contains { word in
            n.count >= word.count && (0...(n.count - word.count)).contains { i in n[i..<(i + word.count)].elementsEqual(word) }
        }
    }

    static let secretWords: [[UInt8]] = ["token", "secret", "password", "api_key", "apikey"].map { Array($0.utf8) }

    public static func headers(_ headers: HTTPFields) -> HTTPFields {
        var out = HTTPFields()
        for field in headers {
            let name = field.name.canonicalName
            let secret = secretHeaders.contains(name) || isSecretName(name)
            out.append(HTTPField(name: field.name, value: secret ? placeholder : field.value))
        }
        return out
    }

    /// A path with a query string, token-like parameter values redacted.
    public static func path(_ path: String) -> String {
        guard let q = path.firstIndex(of: "?") else { return path }
        let query = path[path.index(after: q)...].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let eq = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<eq])
            return isSecretName(name.removingPercentEncoding ?? name) ? "\(name)=\(placeholder)" : String(pair)
        }
        return String(path[..<q]) + "?" + query.joined(separator: "&")
    }

    /// The whole body with the string value of every token-like JSON key redacted (what snapshots,
    /// pins and comparisons keep: nothing meant for sharing holds a secret a server let slip).
    public static func redacted(_ body: [UInt8], tokens: [JSONToken]) -> [UInt8] {
        JSONText.replacingValues(body, tokens: tokens, placeholder: placeholder, isSecret: isSecretName)
    }

    /// The first 16 KiB of a body as text, with the string value of every token-like JSON key redacted.
    /// Works on invalid or cut JSON too: it reads tokens rather than parsing. `tokens` are the whole
    /// body's, when the caller has them already (the answer is tokenized once).
    public static func bodyPreview(_ body: [UInt8], tokens: [JSONToken]? = nil) -> String? {
        guard !body.isEmpty else { return nil }
        // Only what is shown is redacted. A secret cut by the limit is still replaced: an unterminated
        // string after a secret key is replaced to its end.
        let cut = body.count > previewLimit
        let shown = cut ? Array(body.prefix(previewLimit)) : body
        let shownTokens = cut || tokens == nil ? JSONTokenizer.tokens(shown) : tokens ?? []
        var text = String(decoding: JSONText.replacingValues(shown, tokens: shownTokens, placeholder: placeholder, isSecret: isSecretName), as: UTF8.self)
        if cut { text += "\n… (\(body.count - previewLimit) more bytes)" }
        return text
    }
}
