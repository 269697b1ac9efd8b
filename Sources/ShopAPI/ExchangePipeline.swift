import Foundation
import HTTPTypes
import JSONTokens
import Synchronization

/// Whose request an exchange was.
public enum ExchangeSource: String, Sendable, Codable {
    /// Sent by this tool's own client (`ShopClient`).
    case tool
    /// Sent by the app under test and seen through the intercepting proxy (`ShopProxy`).
    case app
}

/// What was asked: the request as it went out (its headers still hold the token; an observer that
/// keeps or shows them redacts them: `Redactor`).
public struct ExchangeRequest: Sendable {
    public var key: RequestKey
    /// Which of the contract's operations its method and path are, decided once when the exchange is
    /// made: from the endpoint type for the tool's own; for the app's, `RequestKey.operation`, else how the
    /// contract says it misses (`ProxyCore.match`).
    public let match: RequestMatch
    /// The contract's operation it was for: its method and path are that operation's (nil when it is
    /// none of them, or only another version's path or another method). Set with `match`.
    public let operation: OperationID?
    public var headers: HTTPFields
    public var body: [UInt8]?
    /// `scheme://host:port` of a request sent to another host than the base URL's (a further host the
    /// proxy intercepts): its URL is this + its key's target. Nil: the base URL's (its key is relative to it).
    public var origin: String?

    public init(key: RequestKey, match: RequestMatch, headers: HTTPFields, body: [UInt8]?) {
        self.key = key
        self.match = match
        operation = match.operation
        self.headers = headers
        self.body = body
    }

    /// A request of a known operation (the tool's own: its endpoint type names it), or of none.
    public init(key: RequestKey, operation: OperationID?, headers: HTTPFields, body: [UInt8]?) {
        self.init(key: key, match: operation.map(RequestMatch.operation) ?? .unknown, headers: headers, body: body)
    }
}

/// What came back: the response head, and the body with its JSON tokens (made once, for every observer).
public struct ExchangeResponse: Sendable {
    public var status: Int
    public var headers: HTTPFields
    public var body: [UInt8]
    public var tokens: [JSONToken]

    public init(status: Int, headers: HTTPFields, body: [UInt8], tokens: [JSONToken]) {
        self.status = status
        self.headers = headers
        self.body = body
        self.tokens = tokens
    }
}

/// One request and its answer (or why none came), as every observer of the pipeline sees it.
public struct HTTPExchange: Sendable {
    /// Pairs the exchange's `sent` with its `finished` within one pipeline.
    public let serial: Int
    public var source: ExchangeSource
    public var request: ExchangeRequest
    /// nil while pending, and when no whole answer came (`failure`).
    public var response: ExchangeResponse?
    public var failure: ExchangeFailure?
    /// The wall clock when it was sent (the log's and the HAR's time).
    public var startedAt: Date
    /// The client's clock when it was sent, and when its answer (or failure) came.
    public var sentAt: ContinuousClock.Instant
    public var answeredAt: ContinuousClock.Instant?
    /// The answer's `X-Request-Id`, or the one a failure came with.
    public var requestID: String?
    /// 1 for the first try, 2 for the first retry… (a resend after a token refresh is not a retry).
    public var attempt: Int
    /// What the observers before this one found (the checks run first).
    public var findings: [Finding] = []
    /// A fault the app's proxy put into this exchange (the server's answer, if any, is its own).
    public var fault: FaultNote?

    public init(serial: Int, source: ExchangeSource, request: ExchangeRequest, startedAt: Date = Date(),
                sentAt: ContinuousClock.Instant = .now, attempt: Int) {
        self.serial = serial
        self.source = source
        self.request = request
        self.startedAt = startedAt
        self.sentAt = sentAt
        self.attempt = attempt
    }

    /// From sending to the answer (zero while pending).
    public var duration: Duration { answeredAt.map { $0 - sentAt } ?? .zero }
}

/// Sees every exchange: when it is sent, and when it is finished (answered, failed or cancelled).
public protocol ExchangeObserver: Sendable {
    /// A request on its way, with no answer yet (a hanging write shows while it hangs).
    func sent(_ exchange: HTTPExchange) async
    /// The exchange finished; answers what this observer found in it (a check's findings; others none).
    func finished(_ exchange: HTTPExchange) async -> [Finding]
}

extension ExchangeObserver {
    public func sent(_: HTTPExchange) async {}
}

/// The one ordered list every finished exchange goes through, whichever its source. The standard
/// order: the contract watchdog, the pins (both add findings), the exchange log (which keeps the
/// exchange with those findings for the inspector, reports and the HAR file), the log file's line.
public struct ExchangePipeline: Sendable {
    public let observers: [any ExchangeObserver]
    private let serials = Serials()

    public init(_ observers: [any ExchangeObserver]) { self.observers = observers }

    /// A number for the next exchange (unique within this pipeline).
    public func nextSerial() -> Int { serials.next() }

    public func sent(_ exchange: HTTPExchange) async {
        for observer in observers { await observer.sent(exchange) }
    }

    /// Runs the observers in order; each sees the findings of those before it. Answers the exchange
    /// with every finding.
    @discardableResult
    public func finished(_ exchange: HTTPExchange) async -> HTTPExchange {
        var e = exchange
        for observer in observers { e.findings += await observer.finished(e) }
        return e
    }

    /// The first observer of type `O` (the pins a front end shows, the log it reads).
    public func first<O: ExchangeObserver>(_: O.Type) -> O? {
        observers.lazy.compactMap { $0 as? O }.first
    }

    private final class Serials: Sendable {
        private let last = Mutex(0)
        func next() -> Int { last.withLock { $0 += 1; return $0 } }
    }
}
