import Foundation
import HTTPTypes

/// A test session's record as read back (`SessionJournal` writes it): what it is, every exchange (a
/// write sent and never answered included), every finding (the commands' and those on the answers),
/// notes, commands, files, and what could not be read.
public struct SessionRecord: Sendable {
    public var meta: SessionMeta?
    /// When it was closed, and its bundle.
    public var closed: (at: Date, bundle: String)?
    public var exchanges: [SessionExchange] = []
    public var findings: [SessionFinding] = []
    /// Checks that passed (a write's verification), in order.
    public var passed: [SessionFinding] = []
    public var notes: [SessionNote] = []
    public var commands: [SessionCommandRun] = []
    public var files: [SessionFileWritten] = []
    /// Balances the commands' reads settled, in order.
    public var settled: [SessionSettled] = []
    /// The ledger's verdicts, as each run gave them (the latest last).
    public var verdicts: [SessionVerdict] = []
    /// Lines that could not be read: the last one cut short by a process killed mid-line, or damage.
    public var unreadableLines = 0
    /// Reads past the record's bound that were counted and not kept; whether the bound was reached at all
    /// (a command killed after it never says its count).
    public var droppedReads = 0
    public var boundReached = false
    /// Lines appended after the close (by a command that ran on): not in the bundle, not read here.
    public var afterClose = 0
    /// The HAR entries, in the order they were appended (a write's `sent` replaced by its answer).
    var entries: [HAR.Entry] = []

    public init() {}

    /// The record in `folder`; nil when there is none. A last line still being written by another process is
    /// waited for, briefly (twice 50 ms): only one that stays cut short is counted as unreadable.
    public static func read(folder: String) -> SessionRecord? {
        let path = folder + "/" + SessionJournal.recordName
        guard var data = FileManager.default.contents(atPath: path) else { return nil }
        for _ in 0..<2 where data.last.map({ $0 != UInt8(ascii: "\n") }) == true {
            usleep(50_000)  // another process's write(2) in progress: a bounded wait, not a synchronisation
            guard let again = FileManager.default.contents(atPath: path) else { break }
            data = again
        }
        return read(Array(data))
    }

    public static func read(_ bytes: [UInt8]) -> SessionRecord {
        var record = SessionRecord()
        let decoder = SessionLine.decoder
        var slotByKey: [String: Int] = [:]
        var openCommands: [Int32: Int] = [:]
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        // A last line with no newline is one a process was killed while writing: never read as whole.
        let complete = bytes.last == UInt8(ascii: "\n") ? lines.count : max(0, lines.count - 1)
        if complete < lines.count { record.unreadableLines += 1 }
        for raw in lines.prefix(complete) {
            if record.closed != nil {
                record.afterClose += 1
                continue
            }
            guard let line = try? decoder.decode(SessionLine.self, from: Data(raw)) else {
                record.unreadableLines += 1
                continue
            }
            let at = ISO8601.parse(line.at) ?? Date.distantPast
            switch line.kind {
            case .start:
                if record.meta == nil { record.meta = line.meta }
            case .sent, .exchange:
                guard let entry = line.entry else { continue }
                let exchange = SessionExchange(entry, command: line.command, at: at, answered: line.kind == .exchange)
                if let key = line.key, let slot = slotByKey[key] {
                    record.entries[slot] = entry
                    record.exchanges[slot] = exchange
                } else {
                    if let key = line.key { slotByKey[key] = record.entries.count }
                    record.entries.append(entry)
                    record.exchanges.append(exchange)
                }
                if line.kind == .exchange {
                    for f in entry._findings ?? [] {
                        var finding = SessionFinding(f, subject: "\(entry.request.method) \(SessionExchange.target(entry.request.url))", requestID: entry._requestId)
                        finding.command = line.command
                        finding.at = at
                        finding.pid = line.pid
                        record.findings.append(finding)
                    }
                }
            case .finding, .passed:
                guard var finding = line.finding else { continue }
                finding.command = line.command
                finding.at = at
                finding.pid = line.pid
                if line.kind == .finding { record.findings.append(finding) } else { record.passed.append(finding) }
            case .note:
                record.notes.append(SessionNote(at: at, text: line.text ?? "", command: line.command))
            case .file:
                record.files.append(SessionFileWritten(at: at, path: line.path ?? "", what: line.text ?? "", command: line.command))
            case .commandStart:
                openCommands[line.pid] = record.commands.count
                record.commands.append(SessionCommandRun(command: line.command, arguments: line.arguments ?? [], startedAt: at, pid: line.pid))
            case .commandEnd:
                record.droppedReads += line.droppedReads ?? 0
                if let index = openCommands.removeValue(forKey: line.pid) {
                    record.commands[index].endedAt = at
                    record.commands[index].status = line.status
                }
            case .settled:
                if let user = line.text, let balance = line.balance {
                    record.settled.append(SessionSettled(at: at, user: user, balance: balance, command: line.command, pid: line.pid, base: line.path))
                }
            case .bound:
                record.boundReached = true
            case .verdict:
                record.verdicts.append(SessionVerdict(at: at, transaction: line.transaction ?? "", product: line.text, verdict: line.verdict ?? "",
                                                      blame: line.blame, requestIDs: line.requestIDs ?? [], command: line.command))
            case .close:
                record.closed = (at, line.path ?? "")
            }
        }
        return record
    }

    /// The session's exchanges as one HAR 1.2 document (what `ledger` reads, and the bundle's HAR).
    public func har(creator: String, version: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let base = meta.map { $0.baseURL.hasSuffix("/") ? String($0.baseURL.dropLast()) : $0.baseURL }
        return try encoder.encode(HAR.Document(log: HAR.Log(creator: HAR.Creator(name: creator, version: version), entries: entries, _baseURL: base)))
    }
}

extension SessionRecord {
    /// The session's exchanges as the inspector's log holds them (a request to the session's base URL by
    /// its path under it; to another host with its own origin): what the ledger's events and curl lines are
    /// made from. A write with no answer recorded is pending.
    public func logged() -> [Exchange] {
        let base = meta.map { $0.baseURL.hasSuffix("/") ? String($0.baseURL.dropLast()) : $0.baseURL } ?? ""
        return zip(entries, exchanges).enumerated().map { index, pair in
            let (entry, seen) = pair
            let url = entry.request.url
            let underBase = !base.isEmpty && url.hasPrefix(base) && url.dropFirst(base.count).first.map { $0 == "/" || $0 == "?" } == true
            let path = underBase ? String(url.dropFirst(base.count)) : seen.target
            var fields = HTTPFields()
            for h in entry.request.headers { if let name = HTTPField.Name(h.name) { fields.append(HTTPField(name: name, value: h.value)) } }
            var answer = HTTPFields()
            for h in entry.response.headers { if let name = HTTPField.Name(h.name) { answer.append(HTTPField(name: name, value: h.value)) } }
            var e = Exchange(id: index + 1, method: entry.request.method, path: path, startedAt: ISO8601.parse(entry.startedDateTime) ?? seen.at,
                             duration: .milliseconds(Int(exactly: (entry.time.isFinite ? min(max(0, entry.time), 8.64e10) : 0).rounded()) ?? 0), status: seen.answered && seen.status > 0 ? seen.status : nil,
                             failure: nil, requestID: entry._requestId, attempt: 1, requestBytes: max(0, entry.request.bodySize),
                             responseBytes: max(0, entry.response.content.size), requestHeaders: fields, responseHeaders: answer,
                             requestBodyPreview: entry.request.postData?.text, responseBodyPreview: entry.response.content.text)
            e.isPending = !seen.answered
            e.findings = entry._findings ?? []
            e.source = ExchangeSource(rawValue: entry._source) ?? .tool
            e.origin = underBase ? nil : seen.origin
            e.operation = e.key?.operation
            return e
        }
    }
}

/// One exchange of a session, as `session show` and its coverage read it.
public struct SessionExchange: Sendable, Equatable {
    public var method: String
    /// The path and query (the origin taken off).
    public var target: String
    public var origin: String
    /// 0 when no answer came.
    public var status: Int
    public var requestID: String?
    /// `tool` or `app`.
    public var source: String
    public var command: String
    public var at: Date
    /// False for a write appended as sent whose answer never was (its process ended first).
    public var answered: Bool
    public var error: String?

    init(_ entry: HAR.Entry, command: String, at: Date, answered: Bool) {
        method = entry.request.method
        target = Self.target(entry.request.url)
        origin = String(entry.request.url.dropLast(target.count))
        status = entry.response.status
        requestID = entry._requestId
        source = entry._source
        self.command = command
        self.at = at
        self.answered = answered
        error = entry._error
    }

    public var isWrite: Bool { method != "GET" }

    /// The path and query of a URL (`https://h/api/v1/balance?user_id=a` → `/api/v1/balance?user_id=a`).
    static func target(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        guard let slash = url[scheme.upperBound...].firstIndex(of: "/") else { return "/" }
        return String(url[slash...])
    }
}

public struct SessionSettled: Sendable, Equatable {
    public var at: Date
    public var user: String
    public var balance: Int
    public var command: String
    public var pid: Int32
    /// The base URL of the shop it was read from.
    public var base: String?
}

public struct SessionVerdict: Sendable, Equatable {
    public var at: Date
    public var transaction: String
    public var product: String?
    public var verdict: String
    public var blame: Blame?
    public var requestIDs: [String]
    public var command: String
}

public struct SessionNote: Sendable, Equatable {
    public var at: Date
    public var text: String
    public var command: String
}

public struct SessionFileWritten: Sendable, Equatable {
    public var at: Date
    public var path: String
    public var what: String
    public var command: String
}

public struct SessionCommandRun: Sendable, Equatable {
    public var command: String
    public var arguments: [String]
    public var startedAt: Date
    /// The process that ran it (a command with no end line whose process is gone was killed).
    public var pid: Int32 = 0
    public var endedAt: Date?
    /// nil while running, or when its process ended without saying (killed).
    public var status: Int32?
}
