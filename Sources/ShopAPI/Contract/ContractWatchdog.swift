import JSONTokens
import Foundation
import HTTPTypes

/// One response as the watchdog sees it: which operation it answers, and what came back.
public struct ObservedExchange: Sendable {
    public var operation: OperationID
    public var pathAndQuery: String
    /// The JSON body sent (a write's), to hold the answer against what was asked.
    public var requestBody: [UInt8]?
    public var status: Int
    public var headers: HTTPFields
    public var body: [UInt8]
    /// The body's tokens, when the caller tokenized it already (an answer is read once).
    public var tokens: [JSONToken]?
    /// When the request was sent and its answer came (the client's clock): which answers came strictly
    /// one after another, so that one of them saw the server's state after the other did.
    public var sentAt: ContinuousClock.Instant?
    public var answeredAt: ContinuousClock.Instant?

    public init(operation: OperationID, pathAndQuery: String, requestBody: [UInt8]? = nil, status: Int, headers: HTTPFields, body: [UInt8],
                tokens: [JSONToken]? = nil, sentAt: ContinuousClock.Instant? = nil, answeredAt: ContinuousClock.Instant? = nil) {
        self.tokens = tokens
        self.sentAt = sentAt
        self.answeredAt = answeredAt
        self.operation = operation
        self.pathAndQuery = pathAndQuery
        self.requestBody = requestBody
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Checks each response against the contract read from its document, and against what earlier
/// responses showed (history pages side by side; transactions credited before). One per pipeline:
/// its `WatchdogObserver` actor owns it, so its memory needs no lock.
public struct ContractWatchdog: Sendable {
    public let contract: Contract
    var history = HistoryMemory()
    var writes = WriteMemory()
    /// The rules the contract implies beyond its schemas (docs/checks.md).
    var implied = ImpliedRules()

    public init(contract: Contract = .builtIn()) { self.contract = contract }

    /// The findings for one response.
    public mutating func check(_ e: ObservedExchange) -> [Finding] {
        guard let operation = contract.operation(e.operation) else { return [] }
        let (_, query) = Self.split(e.pathAndQuery)
        let status = e.status
        var findings: [Finding] = []
        func add(_ check: ContractCheck, _ expected: String, _ actual: String, at place: FindingPlace? = nil) {
            findings.append(Finding(check: check, expected: expected, actual: actual, place: place))
        }

        // status: one the document declares (its 2xx; any 4xx/5xx under `default`); nothing else.
        if !operation.declares(status) {
            let success = operation.successes.map(String.init).joined(separator: " or ")
            add(.status, "\(success.isEmpty ? "a declared status" : success), or a 4xx/5xx error", "\(status)")
        }
        if e.headers[.requestID]?.isEmpty ?? true {
            add(.requestID, "an X-Request-Id header", "none", at: .header("X-Request-Id"))
        }
        if status == 429 {
            let value = e.headers[.retryAfter]?.trimmingCharacters(in: .whitespaces) ?? ""
            if Int(value) == nil, HTTPDate.parse(value) == nil {
                add(.retryAfter, "a Retry-After of seconds or an HTTP date", value.isEmpty ? "none" : "“\(value)”", at: .header("Retry-After"))
            }
        }
        findings += ImpliedRules.retryAfter(status: status, headers: e.headers)
        let declared = operation.response(for: status)
        guard !e.body.isEmpty else {
            if (200..<300).contains(status), status != 204, !(declared?.contentTypes.isEmpty ?? false) { add(.contentType, "a JSON body", "an empty body") }
            return findings
        }
        let tokens = e.tokens ?? JSONTokenizer.tokens(e.body)
        let isJSON = e.body.withUnsafeBufferPointer { JSONCursor.isValid($0, tokens) }
        let contentType = e.headers[.contentType]
        let labelledJSON = contentType.map(ShopClient.isJSON) ?? false
        if isJSON, !labelledJSON {
            add(.contentType, "application/json (or +json)", contentType.map { "“\($0)”" } ?? "none")
        }
        guard isJSON else {
            // A 2xx that is not JSON at all (an HTML page…). A body labelled JSON that does not parse (cut
            // short) is the request's own error already, not a second finding.
            if (200..<300).contains(status), !labelledJSON { add(.contentType, "a JSON body", "\(contentType ?? "no Content-Type"), not JSON") }
            return findings
        }
        // One walk over the tokens: nothing is built for the check but what it reads.
        if let schema = declared?.schema {
            let problems = e.body.withUnsafeBufferPointer { bytes in
                var cursor = JSONCursor(bytes: bytes, tokens: tokens)
                return SchemaCheck.validate(&cursor, schema)
            }
            for problem in problems { add(.schema, problem.expected, problem.actual, at: problem.place) }
        }
        guard (200..<300).contains(status) else { return findings }
        switch e.operation {
        case .getCheerHistory:
            let page = e.body.withUnsafeBufferPointer { HistorySummary($0, tokens) }
            findings += Self.historyPage(page, query: query)
            findings += history.observe(page, user: query["user_id"] ?? "")
            findings += history.observeTotal(page, user: query["user_id"] ?? "", requestID: e.headers[.requestID], sent: e.sentAt, answered: e.answeredAt)
            findings += implied.history(page, serverClock: e.headers[.date].flatMap(HTTPDate.parse))
            Self.nameEntries(&findings, body: e.body, tokens: tokens)
        case .spendCheer:
            findings += JSONValue.parse(e.body, tokens: tokens).map(WriteMemory.spendAccepted) ?? []
        case .purchaseCheer:
            findings += writes.credited(request: e.requestBody, requestID: e.headers[.requestID])
            findings += JSONValue.parse(e.body, tokens: tokens).map(ImpliedRules.balance) ?? []
        case .getBalance:
            findings += JSONValue.parse(e.body, tokens: tokens).map(ImpliedRules.balance) ?? []
        case .listAudioPacks:
            findings += e.body.withUnsafeBufferPointer { ImpliedRules.packs($0, tokens) }
        case .refreshToken:
            findings += JSONValue.parse(e.body, tokens: tokens).map(ImpliedRules.token) ?? []
        }
        return findings
    }

    /// Names the entry each finding inside one history entry is about (`Finding.entry`), so that the finding
    /// keeps its identity when the entry moves down the list. The body is parsed only when there is one.
    static func nameEntries(_ findings: inout [Finding], body: [UInt8], tokens: [JSONToken]) {
        func index(_ f: Finding) -> Int? {
            guard case let .field(path, _)? = f.place, path.hasPrefix("history[") else { return nil }
            return Int(path.dropFirst("history[".count).prefix { $0.isNumber })
        }
        guard findings.contains(where: { index($0) != nil }), case let .object(o)? = JSONValue.parse(body, tokens: tokens),
              case let .array(items)? = o["history"] else { return }
        for i in findings.indices {
            guard let n = index(findings[i]), n < items.count, let key = EntryKey(json: items[n]) else { continue }
            findings[i].entry = key.description
            // Bytes that are not UTF-8 are named by field, entry and byte: the entry is found by its id again.
            if case .field(_, .utf8)? = findings[i].place { findings[i].actual += " — in the entry \(key.description)" }
        }
    }

    /// The findings for one response, by a watchdog that has seen nothing before (the built-in contract).
    public static func check(_ e: ObservedExchange) -> [Finding] {
        var watchdog = ContractWatchdog()
        return watchdog.check(e)
    }

    static func split(_ pathAndQuery: String) -> (String, [String: String]) {
        let parts = pathAndQuery.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                query[String(kv[0])] = kv.count == 2 ? String(kv[1]).removingPercentEncoding ?? String(kv[1]) : ""
            }
        }
        return (parts.first.map(String.init) ?? pathAndQuery, query)
    }

    /// `paging` and, within the page, `order` and `duplicate`.
    static func historyPage(_ summary: HistorySummary, query: [String: String]) -> [Finding] {
        guard let entries = summary.entries else { return [] }
        var findings: [Finding] = []
        if let page = summary.page, let perPage = summary.perPage, let totalPages = summary.totalPages, let totalCount = summary.totalCount, perPage > 0 {
            let pages = totalCount.dividedRoundingUp(by: perPage)
            if totalPages != pages {
                findings.append(Finding(check: .paging, expected: "total_pages \(pages) (⌈\(totalCount) / \(perPage)⌉)", actual: "\(totalPages)"))
            }
            if entries.count > perPage {
                findings.append(Finding(check: .paging, expected: "at most \(perPage) entries (per_page)", actual: "\(entries.count)"))
            } else if page < totalPages, entries.count < perPage {
                findings.append(Finding(check: .paging, expected: "\(perPage) entries on page \(page) of \(totalPages) (only the last may be short)", actual: "\(entries.count)"))
            }
            // "A page past the end is empty": entries there are entries the totals do not count.
            if page > totalPages, !entries.isEmpty {
                findings.append(Finding(check: .paging, expected: "no entries past the last page (total_pages \(totalPages), total_count \(totalCount))",
                                        actual: "page \(page) holds \(entries.count) entr\(entries.count == 1 ? "y" : "ies")",
                                        place: .pages(.nothingPastTheLastPage)))
            }
            if let asked = query["page"].flatMap(Int.init), asked != page {
                findings.append(Finding(check: .paging, expected: "page \(asked) (as asked)", actual: "page \(page)"))
            }
            if let asked = query["per_page"].flatMap(Int.init), asked != perPage {
                findings.append(Finding(check: .paging, expected: "per_page \(asked) (as asked)", actual: "per_page \(perPage)"))
            }
        }
        var previous: (date: Date, index: Int)?
        var seen: [String: Int] = [:]
        for (i, entry) in entries.enumerated() {
            if let date = entry.date {
                if let previous, date > previous.date {
                    findings.append(Finding(check: .order, expected: "newest first: entry \(i + 1) not after entry \(previous.index + 1)", actual: "entry \(i + 1) is newer"))
                }
                previous = (date, i)
            }
            if let id = entry.id {
                if let first = seen[id] {
                    findings.append(Finding(check: .duplicate, expected: "each id once", actual: "id “\(id.prefix(40))” at entries \(first + 1) and \(i + 1)"))
                } else {
                    seen[id] = i
                }
            }
        }
        return findings
    }
}

/// What the checks across a history page read of it, taken from its tokens: the paging fields, and
/// each entry's date, id and amount (an entry that is not an object has none). `entries` is nil when the
/// body is not an object with a `history` array.
struct HistorySummary {
    typealias Entry = (date: Date?, id: String?, amount: Int?)
    var page: Int?, perPage: Int?, totalPages: Int?, totalCount: Int?
    var entries: [Entry]?

    static let keys = (history: Array("history".utf8), page: Array("page".utf8), perPage: Array("per_page".utf8),
                       totalPages: Array("total_pages".utf8), totalCount: Array("total_count".utf8),
                       date: Array("date".utf8), id: Array("id".utf8), amount: Array("amount".utf8))

    init(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: [JSONToken]) {
        var c = JSONCursor(bytes: bytes, tokens: tokens)
        guard c.current?.kind == .beginObject else { return }
        c.index += 1
        while let key = c.current, key.kind == .string {
            c.index += 2
            guard let value = c.current else { return }
            let k = Self.keys
            if c.string(key, equals: k.history), value.kind == .beginArray {
                entries = Self.entries(&c)
            } else {
                if value.kind == .number {
                    if c.string(key, equals: k.page) { page = c.int(value) }
                    if c.string(key, equals: k.perPage) { perPage = c.int(value) }
                    if c.string(key, equals: k.totalPages) { totalPages = c.int(value) }
                    if c.string(key, equals: k.totalCount) { totalCount = c.int(value) }
                }
                guard c.skipValue() else { return }
            }
            guard c.current?.kind == .comma else { return }
            c.index += 1
        }
    }

    static func entries(_ c: inout JSONCursor) -> [Entry] {
        c.elements((nil, nil, nil) as Entry) { entry, c, key, value in
            if value.kind == .string {
                if c.string(key, equals: keys.date) {
                    entry.date = c.rawContent(value).flatMap { ISO8601.parse(bytes: $0) } ?? c.string(value).flatMap(ISO8601.parse)
                } else if c.string(key, equals: keys.id) {
                    entry.id = c.string(value)
                }
            } else if value.kind == .number, c.string(key, equals: keys.amount) {
                entry.amount = c.int(value)
            }
        }
    }
}
