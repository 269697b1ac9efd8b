import Foundation
import JSONTokens
import Logging
import Synchronization

extension ExchangePipeline {
    /// The standard pipeline: the contract watchdog (`contract` read from the first request on), the
    /// pins (when there are), the exchange log, the log file's line; then `extra`, in that order.
    public static func standard(
        exchanges: ExchangeLog = ExchangeLog(),
        contract: @escaping @Sendable () -> Contract = { .builtIn() },
        pins: (any AnswerPins)? = nil,
        logger: Logger = Logger(label: "reiterate.api", factory: { _ in SwiftLogNoOpLogHandler() }),
        extra: [any ExchangeObserver] = []
    ) -> ExchangePipeline {
        let checks: [any ExchangeObserver] = [WatchdogObserver(contract: contract)] + (pins.map { [PinsObserver($0)] } ?? [])
        return ExchangePipeline(checks + [ExchangeLogObserver(exchanges), LogLineObserver(logger)] + extra)
    }

    /// The exchange log of the standard pipeline.
    public var exchanges: ExchangeLog? { first(ExchangeLogObserver.self)?.log }
    /// The pins every answer is checked against, if any.
    public var pins: (any AnswerPins)? { first(PinsObserver.self)?.pins }
}

/// Checks every answer against the contract, and against what earlier answers showed
/// (`ContractWatchdog`): the server's findings. The app's requests (`ExchangeSource.app`) are held to
/// the contract too (`RequestConformance`): the app's findings, ahead of its answer's. The tool's own
/// requests are not (`negative` sends broken ones on purpose). The contract is read in the background
/// from the first request on (not at start: the first frame does not share the CPU with it, and the
/// request does not wait for it).
public actor WatchdogObserver: ExchangeObserver {
    private let readContract: @Sendable () -> Contract
    private var contract: Task<Contract, Never>?
    /// Made on the first answer, from the contract read meanwhile.
    private var watchdog: ContractWatchdog?

    public init(contract: @escaping @Sendable () -> Contract = { .builtIn() }) { readContract = contract }

    /// The contract being read (started by the first request).
    private func contractReading() -> Task<Contract, Never> {
        if let contract { return contract }
        let read = readContract
        let task = Task.detached(priority: .utility) { read() }
        contract = task
        return task
    }

    public func sent(_: HTTPExchange) {
        _ = contractReading()  // read while the request is out
    }

    /// The contract the watchdog holds answers to, read once (the proxy reads it before it listens, to
    /// decide each app request's operation when it is made).
    public func contract() async -> Contract { await contractReading().value }

    public func finished(_ e: HTTPExchange) async -> [Finding] {
        let isApp = e.source == .app
        guard isApp || (e.response != nil && e.request.operation != nil) else { return [] }
        if watchdog == nil {
            let read = await contractReading().value
            if watchdog == nil { watchdog = ContractWatchdog(contract: read) }  // another answer may have made it meanwhile
        }
        guard let contract = watchdog?.contract else { return [] }
        var findings: [Finding] = []
        // Decided when the exchange was made (the app's by its method and path): an answer on a path the
        // contract does not have, or with a method it does not take, is not held to another's.
        let operation = e.request.operation
        if isApp { findings = RequestConformance(contract: contract).check(e.request) }
        if isApp, case let .transport(error)? = e.failure {
            findings.append(Finding(check: .noAnswer, expected: "a whole answer from the server", actual: error.wordsWithHead, blame: .server))
        }
        // An app's answer labelled JSON that does not parse came cut short (for the tool's own it is the
        // request's error already; the app's is told by no one else).
        if isApp, let response = e.response, !response.body.isEmpty, response.headers[.contentType].map(ShopClient.isJSON) == true,
           !response.body.withUnsafeBufferPointer({ JSONCursor.isValid($0, response.tokens) }) {
            findings.append(Finding(check: .noAnswer, expected: "a whole answer from the server",
                                    actual: "HTTP \(response.status) with a JSON body that does not parse (cut short?)", blame: .server))
        }
        guard let response = e.response, let operation else { return findings }
        return findings + (watchdog?.check(ObservedExchange(operation: operation, pathAndQuery: e.request.key.target, requestBody: e.request.body,
                                                            status: response.status, headers: response.headers, body: response.body,
                                                            tokens: response.tokens, sentAt: e.sentAt, answeredAt: e.answeredAt)) ?? [])
    }
}


/// Answers pinned by the tester: a later answer that differs is a finding `pinned`.
public struct PinsObserver: ExchangeObserver {
    public let pins: any AnswerPins

    public init(_ pins: any AnswerPins) { self.pins = pins }

    public func finished(_ e: HTTPExchange) async -> [Finding] {
        guard let response = e.response else { return [] }
        return await pins.check(e.request.key, status: response.status, body: response.body, tokens: response.tokens, requestID: e.requestID)
    }
}

/// Keeps every exchange, redacted, with the findings of the checks before it, in the `ExchangeLog`
/// the inspector, reports and comparisons read. HAR recording is this record: `HAR.encode` writes the
/// log's exchanges (findings included) when the session ends or the tester asks.
public final class ExchangeLogObserver: ExchangeObserver {
    public let log: ExchangeLog
    /// The log's number of each exchange sent and not yet finished, by its serial.
    private let pending = Mutex<[Int: Int]>([:])

    public init(_ log: ExchangeLog) { self.log = log }

    public func sent(_ e: HTTPExchange) async {
        let begun = await log.begin(Self.record(e))
        pending.withLock { $0[e.serial] = begun.id }
    }

    public func finished(_ e: HTTPExchange) async -> [Finding] {
        var record = Self.record(e)
        guard let id = pending.withLock({ $0.removeValue(forKey: e.serial) }) else {
            await log.record(record)  // never seen as sent
            return []
        }
        record.id = id
        await log.finish(record)
        return []
    }

    /// The exchange as the inspector shows it: secrets redacted, bodies previewed.
    static func record(_ e: HTTPExchange) -> Exchange {
        var record = Exchange(
            id: 0, method: e.request.key.method.rawValue, path: Redactor.path(e.request.key.target), startedAt: e.startedAt,
            duration: e.duration, status: e.response?.status ?? e.failure?.status, failure: e.failure, requestID: e.requestID,
            attempt: e.attempt, requestBytes: e.request.body?.count ?? 0, responseBytes: e.response?.body.count ?? 0,
            requestHeaders: Redactor.headers(e.request.headers), responseHeaders: e.response.map { Redactor.headers($0.headers) } ?? [:],
            requestBodyPreview: e.request.body.flatMap { Redactor.bodyPreview($0) },
            responseBodyPreview: e.response.flatMap { Redactor.bodyPreview($0.body, tokens: $0.tokens) }
        )
        record.operation = e.request.operation
        record.source = e.source
        record.fault = e.fault
        record.origin = e.request.origin
        record.findings = e.findings
        return record
    }
}

/// One line per finished exchange in the log file (developers read it; the screen gets `ErrorText`).
public struct LogLineObserver: ExchangeObserver {
    let logger: Logger

    public init(_ logger: Logger) { self.logger = logger }

    public func finished(_ e: HTTPExchange) async -> [Finding] {
        let method = e.request.key.method.rawValue, path = Redactor.path(e.request.key.target), ms = Self.millis(e.duration)
        if let response = e.response {
            logger.info("\(method) \(path) \(response.status) \(ms)ms \(e.requestID ?? "-")")
        } else {
            let failure: TransportError? = if case let .transport(error) = e.failure { error } else { nil }
            logger.info("\(method) \(path) failed after \(ms)ms: \(failure.map(Self.text) ?? "cancelled")")
        }
        return []
    }

    /// A failure for the log file.
    static func text(_ error: TransportError) -> String {
        if case let .other(detail) = error { return "other: \(detail)" }
        return String(describing: error)
    }

    static func millis(_ d: Duration) -> Int { Int(d / .milliseconds(1)) }
}

extension ExchangeFailure {
    /// The status of an answer cut short, if one came.
    var status: Int? {
        if case let .transport(error) = self { return error.status }
        return nil
    }
}
