import Foundation

// The lines of a test session's record (`SessionJournal` writes them, `SessionRecord` reads them): what a
// session is, a finding as it keeps one, and one line's fields.

/// What a session is: its name, the build under test, its charter, where it tests.
public struct SessionMeta: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var build: String?
    public var charter: String?
    public var environment: String
    public var baseURL: String
    public var user: String
    public var startedAt: Date

    public init(id: String, name: String, build: String?, charter: String?, environment: String, baseURL: String, user: String, startedAt: Date) {
        self.id = id
        self.name = name
        self.build = build
        self.charter = charter
        self.environment = environment
        self.baseURL = baseURL
        self.user = user
        self.startedAt = startedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, name, build, charter, environment, user
        case baseURL = "base_url", startedAt = "started_at"
    }
}

/// A finding as a session keeps it (the words of `ShopFinding`, its kind by name), with the command
/// that made it.
public struct SessionFinding: Codable, Sendable, Hashable {
    public var kind: String
    public var subject: String
    public var blame: Blame?
    public var expected: String
    public var actual: String
    public var requestIDs: [String]
    public var causedBy: String?
    /// The command that made it; and when (both filled in by the reader from the line).
    public var command: String?
    public var at: Date?
    /// The process that appended it (filled in by the reader; never written inside the finding).
    public var pid: Int32? = nil

    public init(_ f: ShopFinding) {
        kind = f.kind.name
        subject = f.subject
        blame = f.blame
        expected = f.expected
        actual = f.actual
        requestIDs = f.requestIDs
        causedBy = f.causedBy.map { $0 + (f.recurrence.map { "; \($0)" } ?? "") } ?? f.recurrence
    }

    public init(_ f: Finding, subject: String, requestID: String?) { self.init(ShopFinding(f, subject: subject, requestID: requestID)) }

    enum CodingKeys: String, CodingKey {
        case kind, subject, blame, expected, actual, command, at
        case requestIDs = "request_ids", causedBy = "caused_by"
    }
}

/// One line of the record.
struct SessionLine: Codable, Sendable {
    enum Kind: String, Codable, Sendable {
        case start, sent, exchange, finding, passed, note, file, close, verdict, settled
        /// The record reached its bound: reads from here on are counted, not kept.
        case bound
        case commandStart = "command", commandEnd = "command-end"
    }

    var kind: Kind
    var at: String = ISO8601.format(Date())
    var pid: Int32 = getpid()
    var command: String
    var meta: SessionMeta?
    /// Pairs a write's `sent` line with its `exchange` line.
    var key: String?
    var entry: HAR.Entry?
    var finding: SessionFinding?
    var text: String?
    var path: String?
    var arguments: [String]?
    var status: Int32?
    var droppedReads: Int?
    var transaction: String?
    var verdict: String?
    var blame: Blame?
    var requestIDs: [String]?
    var balance: Int?

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    init(kind: Kind, command: String, meta: SessionMeta? = nil) {
        self.kind = kind
        self.command = command
        self.meta = meta
    }

    enum CodingKeys: String, CodingKey {
        case kind, at, pid, command, meta, key, entry, finding, text, path, arguments, status
        case droppedReads = "dropped_reads", transaction, verdict, blame, requestIDs = "request_ids", balance
    }
}
