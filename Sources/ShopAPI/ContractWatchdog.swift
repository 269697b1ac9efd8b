import Foundation
import HTTPTypes

/// A way a response deviates from the contract (`../shared/api/reiterate-api.yaml`): the data still
/// shows; the deviation is reported with the check's name, expected against actual.
public struct Finding: Sendable, Equatable, Codable {
    /// `status`, `content-type`, `schema`, `request-id`, `retry-after`, `paging`, `order`, `duplicate`.
    public var check: String
    public var expected: String
    public var actual: String

    public init(check: String, expected: String, actual: String) {
        self.check = check
        self.expected = expected
        self.actual = actual
    }

    /// `[schema] expected balance: integer, got "12"`.
    public var line: String { "[\(check)] expected \(expected), got \(actual)" }
}

/// A JSON schema as the contract writes it (the subset it uses), as data. `reiterate-shop contract`
/// prints these; a test compares them with the YAML, so the two cannot drift apart.
public final class ContractSchema: Sendable, Codable {
    public let type: [String]
    public let required: [String]?
    public let properties: [String: ContractSchema]?
    public let items: ContractSchema?
    public let minimum: Int?
    public let minLength: Int?
    public let format: String?

    init(_ type: [String], required: [String]? = nil, properties: [String: ContractSchema]? = nil, items: ContractSchema? = nil,
         minimum: Int? = nil, minLength: Int? = nil, format: String? = nil) {
        self.type = type
        self.required = required
        self.properties = properties
        self.items = items
        self.minimum = minimum
        self.minLength = minLength
        self.format = format
    }

    static func object(required: [String]? = nil, _ properties: [String: ContractSchema]) -> ContractSchema {
        ContractSchema(["object"], required: required, properties: properties)
    }

    static func array(_ items: ContractSchema, nullable: Bool = false) -> ContractSchema {
        ContractSchema(nullable ? ["array", "null"] : ["array"], items: items)
    }

    static let string = ContractSchema(["string"])
    static let integer = ContractSchema(["integer"])
    static func integer(minimum: Int) -> ContractSchema { ContractSchema(["integer"], minimum: minimum) }
    static let dateTime = ContractSchema(["string"], format: "date-time")
}

/// One operation of the contract: where it is, the 2xx it declares, and its answer's schema.
public struct ContractOperation: Sendable, Codable {
    public let operationId: String
    public let method: String
    public let path: String
    public let success: Int
    public let response: ContractSchema
}

/// The contract as the watchdog knows it (components resolved), from the YAML.
public enum Contract {
    static let audioPack = ContractSchema.object(required: ["identifier", "name"], [
        "identifier": .string, "name": .string, "creator": .string, "description": .string,
        "price_cents": .integer(minimum: 0), "currency": .string, "sample_count": .integer(minimum: 0),
        "duration_seconds": .integer(minimum: 0), "cheer_total": .integer(minimum: 0), "released": .dateTime,
        "tags": .array(.string),
    ])
    static let comment = ContractSchema.object([
        "signature": ContractSchema(["string", "null"]), "body": ContractSchema(["string", "null"]),
    ])
    static let historyEntry = ContractSchema.object(required: ["creator", "amount", "product", "date"], [
        "id": .string, "creator": .string, "amount": .integer, "product": .string, "date": .dateTime,
        "comments": .array(comment, nullable: true),
    ])
    static let balance = ContractSchema.object(required: ["balance"], ["balance": .integer])

    public static let error = ContractSchema.object(required: ["message"], ["message": .string, "code": .string])

    public static let operations: [ContractOperation] = [
        ContractOperation(operationId: "listAudioPacks", method: "GET", path: "/api/v1/audio_packs", success: 200,
                          response: .object(required: ["packs"], ["packs": .array(audioPack)])),
        ContractOperation(operationId: "getBalance", method: "GET", path: "/api/v1/balance", success: 200, response: balance),
        ContractOperation(operationId: "getCheerHistory", method: "GET", path: "/api/v1/cheer_history", success: 200,
                          response: .object(required: ["history"], [
                              "history": .array(historyEntry), "page": .integer(minimum: 1), "per_page": .integer(minimum: 1),
                              "total_pages": .integer(minimum: 0), "total_count": .integer(minimum: 0),
                          ])),
        ContractOperation(operationId: "purchaseCheer", method: "POST", path: "/api/v2/purchase_cheer", success: 200, response: balance),
        ContractOperation(operationId: "spendCheer", method: "POST", path: "/api/v1/spend_cheer", success: 200, response: balance),
        ContractOperation(operationId: "refreshToken", method: "POST", path: "/api/v1/auth/refresh", success: 200,
                          response: .object(required: ["access_token"], [
                              "access_token": .string, "refresh_token": .string, "expires_in": .integer,
                          ])),
    ]

    public static func operation(method: String, path: String) -> ContractOperation? {
        operations.first { $0.method == method && $0.path == path }
    }
}

/// Checks one response against the contract.
public enum ContractWatchdog {
    /// The findings for a response to `method path?query`.
    public static func check(method: String, pathAndQuery: String, status: Int, headers: HTTPFields, body: [UInt8]) -> [Finding] {
        var memory = HistoryMemory()
        return check(method: method, pathAndQuery: pathAndQuery, status: status, headers: headers, body: body, memory: &memory)
    }

    /// The same, with what earlier history pages showed (`order` and `duplicate` across pages).
    static func check(method: String, pathAndQuery: String, status: Int, headers: HTTPFields, body: [UInt8],
                      memory: inout HistoryMemory) -> [Finding] {
        let (path, query) = split(pathAndQuery)
        guard let operation = Contract.operation(method: method, path: path) else { return [] }
        var findings: [Finding] = []
        func add(_ check: String, _ expected: String, _ actual: String) { findings.append(Finding(check: check, expected: expected, actual: actual)) }

        // status: the declared 2xx, or an error (4xx/5xx); nothing else.
        if (100..<200).contains(status) || (300..<400).contains(status) || ((200..<300).contains(status) && status != operation.success) {
            add("status", "\(operation.success), or a 4xx/5xx error", "\(status)")
        }
        if headers[.requestID]?.isEmpty ?? true {
            add("request-id", "an X-Request-Id header", "none")
        }
        if status == 429 {
            let value = headers[.retryAfter]?.trimmingCharacters(in: .whitespaces) ?? ""
            if Int(value) == nil, HTTPDate.parse(value) == nil {
                add("retry-after", "a Retry-After of seconds or an HTTP date", value.isEmpty ? "none" : "“\(value)”")
            }
        }
        guard !body.isEmpty else {
            if (200..<300).contains(status), status != 204 { add("content-type", "a JSON body", "an empty body") }
            return findings
        }
        let json = JSONValue.parse(body)
        let contentType = headers[.contentType]
        let labelledJSON = contentType.map(ShopClient.isJSON) ?? false
        if json != nil, !labelledJSON {
            add("content-type", "application/json (or +json)", contentType.map { "“\($0)”" } ?? "none")
        }
        guard let json else {
            // A 2xx that is not JSON at all (an HTML page…). A body labelled JSON that does not parse (cut
            // short) is the request's own error already, not a second finding.
            if (200..<300).contains(status), !labelledJSON { add("content-type", "a JSON body", "\(contentType ?? "no Content-Type"), not JSON") }
            return findings
        }
        let schema = (200..<300).contains(status) ? operation.response : ((400..<600).contains(status) ? Contract.error : nil)
        if let schema {
            for problem in validate(json, schema, at: "").prefix(5) { add("schema", problem.expected, problem.actual) }
        }
        if operation.operationId == "getCheerHistory", (200..<300).contains(status) {
            findings += historyPage(json, query: query)
            findings += memory.observe(json, user: query["user_id"] ?? "")
        }
        return findings
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

    struct Problem { var expected: String; var actual: String }

    /// Required fields, types, minimums and date-times; unknown keys and absent optional fields pass.
    static func validate(_ value: JSONValue, _ schema: ContractSchema, at path: String) -> [Problem] {
        let here = path.isEmpty ? "the body" : path
        guard schema.type.contains(value.typeName) || (value.typeName == "integer" && schema.type.contains("number")) else {
            return [Problem(expected: "\(here): \(schema.type.joined(separator: " or "))", actual: value.describe)]
        }
        var problems: [Problem] = []
        switch value {
        case let .object(fields):
            for name in schema.required ?? [] where fields[name] == nil {
                problems.append(Problem(expected: "\(path.isEmpty ? "" : path + ".")\(name) (required)", actual: "missing"))
            }
            for (name, child) in schema.properties ?? [:] {
                if let v = fields[name] { problems += validate(v, child, at: path.isEmpty ? name : "\(path).\(name)") }
            }
        case let .array(elements):
            if let items = schema.items {
                for (i, element) in elements.enumerated() {
                    problems += validate(element, items, at: "\(path)[\(i)]")
                    if problems.count >= 5 { break }
                }
            }
        case let .int(n):
            if let minimum = schema.minimum, n < minimum { problems.append(Problem(expected: "\(here) ≥ \(minimum)", actual: "\(n)")) }
        case let .string(s):
            if let minLength = schema.minLength, s.count < minLength { problems.append(Problem(expected: "\(here) of at least \(minLength) characters", actual: "“\(s)”")) }
            if schema.format == "date-time", ISO8601.parse(s) == nil {
                problems.append(Problem(expected: "\(here): an ISO 8601 date-time", actual: "“\(s.prefix(40))”"))
            }
        default:
            break
        }
        return problems
    }

    /// `paging` and, within the page, `order` and `duplicate`.
    static func historyPage(_ json: JSONValue, query: [String: String]) -> [Finding] {
        guard case let .object(fields) = json, case let .array(entries)? = fields["history"] else { return [] }
        var findings: [Finding] = []
        func int(_ key: String) -> Int? { if case let .int(n)? = fields[key] { return n } else { return nil } }
        if let page = int("page"), let perPage = int("per_page"), let totalPages = int("total_pages"), let totalCount = int("total_count"), perPage > 0 {
            let pages = (totalCount + perPage - 1) / perPage
            if totalPages != pages {
                findings.append(Finding(check: "paging", expected: "total_pages \(pages) (⌈\(totalCount) / \(perPage)⌉)", actual: "\(totalPages)"))
            }
            if entries.count > perPage {
                findings.append(Finding(check: "paging", expected: "at most \(perPage) entries (per_page)", actual: "\(entries.count)"))
            } else if page < totalPages, entries.count < perPage {
                findings.append(Finding(check: "paging", expected: "\(perPage) entries on page \(page) of \(totalPages) (only the last may be short)", actual: "\(entries.count)"))
            }
            if let asked = query["page"].flatMap(Int.init), asked != page {
                findings.append(Finding(check: "paging", expected: "page \(asked) (as asked)", actual: "page \(page)"))
            }
            if let asked = query["per_page"].flatMap(Int.init), asked != perPage {
                findings.append(Finding(check: "paging", expected: "per_page \(asked) (as asked)", actual: "per_page \(perPage)"))
            }
        }
        var previous: (date: Date, index: Int)?
        var seen: [String: Int] = [:]
        for (i, entry) in entries.enumerated() {
            guard case let .object(e) = entry else { continue }
            if case let .string(raw)? = e["date"], let date = ISO8601.parse(raw) {
                if let previous, date > previous.date {
                    findings.append(Finding(check: "order", expected: "newest first: entry \(i + 1) not after entry \(previous.index + 1)", actual: "entry \(i + 1) is newer"))
                }
                previous = (date, i)
            }
            if case let .string(id)? = e["id"] {
                if let first = seen[id] {
                    findings.append(Finding(check: "duplicate", expected: "each id once", actual: "id “\(id.prefix(40))” at entries \(first + 1) and \(i + 1)"))
                } else {
                    seen[id] = i
                }
            }
        }
        return findings
    }
}

/// What the history pages seen lately showed, to compare neighbours: the newest and oldest date and
/// the ids of each page, for one user, page size and total. A page with another total starts afresh
/// (entries came or went: every boundary moved, which is no deviation).
struct HistoryMemory: Sendable {
    struct Seen: Sendable {
        var newest: Date?
        var oldest: Date?
        var ids: Set<String>
    }

    static let capacity = 16
    /// Pages by user, page size and total (a scan's pages of 200 and the list's of 50 both stay).
    private var books: [String: [Int: Seen]] = [:]
    private var bookOrder: [String] = []
    private var pageOrder: [String: [Int]] = [:]

    mutating func observe(_ json: JSONValue, user: String) -> [Finding] {
        guard case let .object(fields) = json, case let .array(entries)? = fields["history"],
              case let .int(page)? = fields["page"], case let .int(perPage)? = fields["per_page"], case let .int(total)? = fields["total_count"]
        else { return [] }
        let key = "\(user)|\(perPage)|\(total)"
        if books[key] == nil {
            books[key] = [:]
            bookOrder.append(key)
            if bookOrder.count > 4 {
                let gone = bookOrder.removeFirst()
                books[gone] = nil
                pageOrder[gone] = nil
            }
        }
        let pages = books[key] ?? [:]
        var seen = Seen(ids: [])
        var ids: [String] = []
        for entry in entries {
            guard case let .object(e) = entry else { continue }
            if case let .string(raw)? = e["date"], let date = ISO8601.parse(raw) {
                if seen.newest == nil { seen.newest = date }
                seen.oldest = date
            }
            if case let .string(id)? = e["id"] { ids.append(id) }
        }
        seen.ids = Set(ids)
        var findings: [Finding] = []
        if let above = pages[page - 1], let oldest = above.oldest, let newest = seen.newest, newest > oldest {
            findings.append(Finding(check: "order", expected: "page \(page) older than page \(page - 1) (newest first)",
                                    actual: "its first entry is newer than page \(page - 1)'s last"))
        }
        if let below = pages[page + 1], let oldest = seen.oldest, let newest = below.newest, newest > oldest {
            findings.append(Finding(check: "order", expected: "page \(page + 1) older than page \(page) (newest first)",
                                    actual: "its first entry is newer than page \(page)'s last"))
        }
        for (other, earlier) in pages where other != page {
            if let id = ids.first(where: { earlier.ids.contains($0) }) {
                findings.append(Finding(check: "duplicate", expected: "each id on one page", actual: "id “\(id.prefix(40))” on pages \(min(other, page)) and \(max(other, page))"))
                break
            }
        }
        books[key]?[page] = seen
        var order = pageOrder[key] ?? []
        order.removeAll { $0 == page }
        order.append(page)
        if order.count > Self.capacity { books[key]?[order.removeFirst()] = nil }
        pageOrder[key] = order
        return findings
    }
}

/// `Retry-After` as an HTTP date (RFC 9110).
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}

/// A JSON document as values, read exactly (an integer is not a number with a fraction; `true` is
/// not 1): what the schema check needs and JSONSerialization does not keep apart.
indirect enum JSONValue: Equatable {
    case null, bool(Bool), int(Int), double(Double), string(String), array([JSONValue]), object([String: JSONValue])

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// How a value shows in a finding: its JSON type, and a short sample.
    var describe: String {
        switch self {
        case .null: return "null"
        case let .bool(b): return "boolean \(b)"
        case let .int(n): return "integer \(n)"
        case let .double(d): return "number \(d)"
        case let .string(s): return "string “\(s.prefix(30))”"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var p = Parser(bytes: bytes)
        guard let value = p.value(depth: 0) else { return nil }
        p.skipSpace()
        return p.i == bytes.count ? value : nil
    }

    struct Parser {
        let bytes: [UInt8]
        var i = 0

        mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth < 256 else { return nil }
            skipSpace()
            guard i < bytes.count else { return nil }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                var fields: [String: JSONValue] = [:]
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
                while true {
                    skipSpace()
                    guard let key = string() else { return nil }
                    skipSpace()
                    guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
                    i += 1
                    guard let v = value(depth: depth + 1) else { return nil }
                    fields[key] = v
                    skipSpace()
                    guard i < bytes.count else { return nil }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
                    return nil
                }
            case UInt8(ascii: "["):
                i += 1
                var elements: [JSONValue] = []
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
                while true {
                    guard let v = value(depth: depth + 1) else { return nil }
                    elements.append(v)
                    skipSpace()
                    guard i < bytes.count else { return nil }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
                    return nil
                }
            case UInt8(ascii: "\""):
                return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return number()
            }
        }

        mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
            let w = Array(word.utf8)
            guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else { return nil }
            i += w.count
            return value
        }

        mutating func number() -> JSONValue? {
            let start = i
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            var fraction = false
            while i < bytes.count {
                let c = bytes[i]
                if (0x30...0x39).contains(c) { i += 1; continue }
                if [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-")].contains(c) { fraction = true; i += 1; continue }
                break
            }
            guard i > start, let text = String(bytes: bytes[start..<i], encoding: .utf8) else { return nil }
            if !fraction, let n = Int(text) { return .int(n) }
            return Double(text).map(JSONValue.double)
        }

        /// A string at `i` (its quotes included), unescaped.
        mutating func string() -> String? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return nil }
            let start = i
            i += 1
            var escaped = false
            while i < bytes.count {
                let c = bytes[i]
                if c == UInt8(ascii: "\\") { escaped = true; i += 2; continue }
                if c == UInt8(ascii: "\"") { break }
                i += 1
            }
            guard i < bytes.count else { return nil }
            i += 1
            let raw = bytes[(start + 1)..<(i - 1)]
            if !escaped { return String(decoding: raw, as: UTF8.self) }
            // Escapes are rare in keys and values the checks read: Foundation unescapes them.
            let quoted = Data(bytes[start..<i])
            return (try? JSONDecoder().decode(String.self, from: quoted)) ?? String(decoding: raw, as: UTF8.self)
        }
    }
}
