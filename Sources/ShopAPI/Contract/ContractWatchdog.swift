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

    public init(operation: OperationID, pathAndQuery: String, requestBody: [UInt8]? = nil, status: Int, headers: HTTPFields, body: [UInt8],
                tokens: [JSONToken]? = nil) {
        self.tokens = tokens
        self.operation = operation
        self.pathAndQuery = pathAndQuery
        self.requestBody = requestBody
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Checks each response against the contract read from its document, and against what earlier
/// responses showed (history pages side by side; transactions credited before). One per client:
/// the client actor owns it, so its memory needs no lock.
public struct ContractWatchdog: Sendable {
    public let contract: Contract
    var history = HistoryMemory()
    var writes = WriteMemory()

    public init(contract: Contract = .bundled) { self.contract = contract }

    /// The findings for one response.
    public mutating func check(_ e: ObservedExchange) -> [Finding] {
        guard let operation = contract.operation(e.operation) else { return [] }
        let (_, query) = Self.split(e.pathAndQuery)
        let status = e.status
        var findings: [Finding] = []
        func add(_ check: ContractCheck, _ expected: String, _ actual: String) { findings.append(Finding(check: check, expected: expected, actual: actual)) }

        // status: one the document declares (its 2xx; any 4xx/5xx under `default`); nothing else.
        if !operation.declares(status) {
            let success = operation.successes.map(String.init).joined(separator: " or ")
            add(.status, "\(success.isEmpty ? "a declared status" : success), or a 4xx/5xx error", "\(status)")
        }
        if e.headers[.requestID]?.isEmpty ?? true {
            add(.requestID, "an X-Request-Id header", "none")
        }
        if status == 429 {
            let value = e.headers[.retryAfter]?.trimmingCharacters(in: .whitespaces) ?? ""
            if Int(value) == nil, HTTPDate.parse(value) == nil {
                add(.retryAfter, "a Retry-After of seconds or an HTTP date", value.isEmpty ? "none" : "“\(value)”")
            }
        }
        let declared = operation.response(for: status)
        guard !e.body.isEmpty else {
            if (200..<300).contains(status), status != 204, !(declared?.contentTypes.isEmpty ?? false) { add(.contentType, "a JSON body", "an empty body") }
            return findings
        }
        let json = JSONValue.parse(e.body, tokens: e.tokens ?? JSONTokenizer.tokens(e.body))
        let contentType = e.headers[.contentType]
        let labelledJSON = contentType.map(ShopClient.isJSON) ?? false
        if json != nil, !labelledJSON {
            add(.contentType, "application/json (or +json)", contentType.map { "“\($0)”" } ?? "none")
        }
        guard let json else {
            // A 2xx that is not JSON at all (an HTML page…). A body labelled JSON that does not parse (cut
            // short) is the request's own error already, not a second finding.
            if (200..<300).contains(status), !labelledJSON { add(.contentType, "a JSON body", "\(contentType ?? "no Content-Type"), not JSON") }
            return findings
        }
        if let schema = declared?.schema {
            for problem in SchemaCheck.validate(json, schema, at: "").prefix(5) { add(.schema, problem.expected, problem.actual) }
        }
        guard (200..<300).contains(status) else { return findings }
        switch e.operation {
        case .getCheerHistory:
            findings += Self.historyPage(json, query: query)
            findings += history.observe(json, user: query["user_id"] ?? "")
        case .spendCheer:
            findings += WriteMemory.spendAccepted(json)
        case .purchaseCheer:
            findings += writes.credited(request: e.requestBody.flatMap(JSONValue.parse), requestID: e.headers[.requestID])
        case .listAudioPacks, .getBalance, .refreshToken:
            break
        }
        return findings
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
    static func historyPage(_ json: JSONValue, query: [String: String]) -> [Finding] {
        guard case let .object(fields) = json, case let .array(entries)? = fields["history"] else { return [] }
        var findings: [Finding] = []
        func int(_ key: String) -> Int? { if case let .int(n)? = fields[key] { return n } else { return nil } }
        if let page = int("page"), let perPage = int("per_page"), let totalPages = int("total_pages"), let totalCount = int("total_count"), perPage > 0 {
            let pages = (totalCount + perPage - 1) / perPage
            if totalPages != pages {
                findings.append(Finding(check: .paging, expected: "total_pages \(pages) (⌈\(totalCount) / \(perPage)⌉)", actual: "\(totalPages)"))
            }
            if entries.count > perPage {
                findings.append(Finding(check: .paging, expected: "at most \(perPage) entries (per_page)", actual: "\(entries.count)"))
            } else if page < totalPages, entries.count < perPage {
                findings.append(Finding(check: .paging, expected: "\(perPage) entries on page \(page) of \(totalPages) (only the last may be short)", actual: "\(entries.count)"))
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
            guard case let .object(e) = entry else { continue }
            if case let .string(raw)? = e["date"], let date = ISO8601.parse(raw) {
                if let previous, date > previous.date {
                    findings.append(Finding(check: .order, expected: "newest first: entry \(i + 1) not after entry \(previous.index + 1)", actual: "entry \(i + 1) is newer"))
                }
                previous = (date, i)
            }
            if case let .string(id)? = e["id"] {
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
