import Foundation
import ShopAPI
import ShopLedger
import ShopViewModels
import TerminalText

/// `session show`: a session's findings grouped by kind and blame, its purchases with their verdicts,
/// its notes, its timeline, and what it covered. Made from the record alone (pure), so the CLI, the
/// TUI's Session tab and the bundle's report say the same.
public struct SessionSummary: Sendable, Encodable {
    public struct Group: Sendable, Encodable, Equatable {
        public var kind: String
        public var blame: Blame?
        public var count: Int
        /// Each subject once, with how often.
        public var subjects: [Subject]
        public var commands: [String]

        public struct Subject: Sendable, Encodable, Equatable {
            public var subject: String
            public var count: Int
            public var expected: String
            public var actual: String
            /// The request ids it rests on, every sighting's, in order.
            public var requestIDs: [String]

            enum CodingKeys: String, CodingKey { case subject, count, expected, actual, requestIDs = "request_ids" }
        }
    }

    public struct Purchase: Sendable, Encodable, Equatable {
        public var transaction: String
        public var product: String?
        /// Each post of it this session saw: status (0: no answer), request id, whose, by which command.
        public var posts: [Post]
        /// The latest ledger verdict in the session (nil: never judged here).
        public var verdict: String?
        public var blame: Blame?

        public struct Post: Sendable, Encodable, Equatable {
            public var status: Int
            public var requestID: String?
            public var source: String
            public var command: String

            enum CodingKeys: String, CodingKey { case status, source, command, requestID = "request_id" }
        }
    }

    public struct Covered: Sendable, Encodable, Equatable {
        public var requests: Int
        public var writes: Int
        /// Writes appended as sent whose answer never was (their process ended first).
        public var writesUnanswered: Int
        /// Requests by operation (`getBalance` …), and those that were none.
        public var operations: [String: Int]
        public var users: [String]
        public var historyPages: [Int]
        public var commands: [String]
    }

    public struct Event: Sendable, Encodable, Equatable {
        public var at: Date
        public var command: String
        public var what: String
    }

    public var meta: SessionMeta?
    public var open: Bool
    public var seconds: Double
    public var findings: Int
    /// Each kind and subject once (a finding seen on many answers counts once here).
    public var distinct: Int { groups.reduce(0) { $0 + $1.subjects.count } }
    /// Checks that passed (a write's verification), beside the findings.
    public var passedChecks: Int
    public var groups: [Group]
    public var purchases: [Purchase]
    public var notes: [String]
    public var timeline: [Event]
    public var covered: Covered
    /// What the record lacks, in words (lines cut short, reads dropped, commands that never ended): a
    /// summary that is incomplete says so.
    public var incomplete: [String]
    /// Commands of the session still running (their lines may still come).
    public var stillRunning: [String]

    /// `running`: whether a process still runs (a command with no end line whose process is gone ended
    /// without saying how: killed, or the machine stopped).
    public init(_ record: SessionRecord, now: Date = Date(), running: (Int32) -> Bool = { $0 > 0 && (kill($0, 0) == 0 || errno == EPERM) }) {
        meta = record.meta
        open = record.closed == nil
        let start = record.meta?.startedAt ?? now
        seconds = max(0, (record.closed?.at ?? now).timeIntervalSince(start))
        findings = record.findings.count
        passedChecks = record.passed.count
        groups = Self.groups(record.findings)
        let logged = record.logged()
        purchases = Self.purchases(record, logged: logged)
        notes = record.notes.map(\.text)
        covered = Self.covered(record, logged: logged)
        timeline = Self.timeline(record)
        var lacks: [String] = []
        if record.unreadableLines > 0 {
            lacks.append("\(record.unreadableLines) line\(record.unreadableLines == 1 ? "" : "s") of the record could not be read (a process killed while writing one?)")
        }
        if record.droppedReads > 0 {
            lacks.append("\(Wording.grouped(record.droppedReads)) reads past the record's bound were counted, not kept (every write and finding is)")
        } else if record.boundReached {
            lacks.append("the record reached its bound: later reads were not kept, and not all were counted (every write and finding is)")
        }
        let unended = record.commands.filter { $0.status == nil }
        if record.closed != nil {
            // Whether they still ran then is not known now: said as it is.
            if !unended.isEmpty {
                lacks.append("\(unended.count) command\(unended.count == 1 ? "" : "s") had not said how \(unended.count == 1 ? "it" : "they") ended when the session closed (still running then, or killed)")
            }
            stillRunning = []
        } else {
            let gone = unended.filter { !running($0.pid) }.count
            if gone > 0 {
                lacks.append("\(gone) command\(gone == 1 ? "" : "s") ended without saying how (killed, or the machine stopped)")
            }
            stillRunning = unended.filter { running($0.pid) }.map(\.command)
        }
        if record.afterClose > 0 {
            lacks.append("\(record.afterClose) line\(record.afterClose == 1 ? " was" : "s were") appended after the close (by a command still running then): not in the bundle")
        }
        if covered.writesUnanswered > 0 {
            lacks.append("\(covered.writesUnanswered) write\(covered.writesUnanswered == 1 ? " was" : "s were") sent with no answer recorded: settle \(covered.writesUnanswered == 1 ? "it" : "them") by reading the balance and history again")
        }
        incomplete = lacks
    }

    /// Findings grouped by kind and blame, each subject once; the most frequent kind first.
    static func groups(_ findings: [SessionFinding]) -> [Group] {
        struct Key: Hashable { var kind: String; var blame: Blame? }
        var order: [Key] = []
        var byKey: [Key: [SessionFinding]] = [:]
        for f in findings {
            let key = Key(kind: f.kind, blame: f.blame)
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(f)
        }
        return order.map { key in
            let all = byKey[key] ?? []
            var subjects: [Group.Subject] = []
            for f in all {
                if let i = subjects.firstIndex(where: { $0.subject == f.subject }) {
                    subjects[i].count += 1
                    for id in f.requestIDs where !subjects[i].requestIDs.contains(id) { subjects[i].requestIDs.append(id) }
                    subjects[i].actual = f.actual
                } else {
                    subjects.append(Group.Subject(subject: f.subject, count: 1, expected: f.expected, actual: f.actual, requestIDs: f.requestIDs))
                }
            }
            var commands: [String] = []
            for f in all { if let c = f.command, !commands.contains(c) { commands.append(c) } }
            return Group(kind: key.kind, blame: key.blame, count: all.count, subjects: subjects, commands: commands)
        }.sorted { $0.count > $1.count }
    }

    static func purchases(_ record: SessionRecord, logged: [Exchange]) -> [Purchase] {
        var list: [Purchase] = []
        for (e, seen) in zip(logged, record.exchanges) where e.operation == .purchaseCheer {
            guard let event = ShopEvents.from([Self.answered(e)]).first, let purchase = event.purchase else { continue }
            let id = purchase.transactionID.description
            let post = Purchase.Post(status: seen.answered ? seen.status : 0, requestID: e.requestID, source: seen.source, command: seen.command)
            if let i = list.firstIndex(where: { $0.transaction == id }) {
                list[i].posts.append(post)
            } else {
                list.append(Purchase(transaction: id, product: purchase.identifier, posts: [post]))
            }
        }
        for v in record.verdicts {
            if let i = list.firstIndex(where: { $0.transaction == v.transaction }) {
                list[i].verdict = v.verdict
                list[i].blame = v.blame
                if list[i].product == nil { list[i].product = v.product }
            } else {
                list.append(Purchase(transaction: v.transaction, product: v.product, posts: [], verdict: v.verdict, blame: v.blame))
            }
        }
        return list
    }

    /// A write with no answer recorded still says what it posted (the ledger's reader skips pending ones).
    private static func answered(_ e: Exchange) -> Exchange {
        var e = e
        e.isPending = false
        return e
    }

    static func covered(_ record: SessionRecord, logged: [Exchange]) -> Covered {
        var operations: [String: Int] = [:]
        var users: [String] = []
        var pages: Set<Int> = []
        for e in logged {
            operations[e.operation.map { "\($0)" } ?? "other", default: 0] += 1
            if let user = e.key?.value("user_id"), !users.contains(user) { users.append(user) }
            if e.operation == .getCheerHistory, e.status == 200 { pages.insert(e.key?.value("page").flatMap { Int($0) } ?? 1) }
        }
        var commands: [String] = []
        for c in record.commands where !commands.contains(c.command) { commands.append(c.command) }
        return Covered(requests: logged.count, writes: logged.filter { $0.method != "GET" }.count,
                       writesUnanswered: record.exchanges.filter { !$0.answered }.count, operations: operations, users: users,
                       historyPages: pages.sorted(), commands: commands)
    }

    static func timeline(_ record: SessionRecord) -> [Event] {
        var events: [Event] = []
        for c in record.commands {
            events.append(Event(at: c.startedAt, command: c.command, what: "ran " + (c.arguments.isEmpty ? c.command : c.arguments.joined(separator: " "))))
            if let end = c.endedAt { events.append(Event(at: end, command: c.command, what: "\(c.command) ended (exit \(c.status ?? 0))")) }
        }
        for e in record.exchanges where e.isWrite {
            let status = e.answered ? (e.status > 0 ? "\(e.status)" : "no answer") : "sent, no answer recorded"
            events.append(Event(at: e.at, command: e.command, what: "\(e.source == "app" ? "the app: " : "")\(e.method) \(e.target.prefix { $0 != "?" }) → \(status)"
                                    + (e.requestID.map { " (\($0))" } ?? "")))
        }
        for f in record.findings {
            events.append(Event(at: f.at ?? .distantPast, command: f.command ?? "", what: "finding [\(f.kind)] \(f.subject)"))
        }
        for n in record.notes { events.append(Event(at: n.at, command: n.command, what: "note: \(n.text)")) }
        for f in record.files { events.append(Event(at: f.at, command: f.command, what: "wrote \(f.what): \(f.path)")) }
        if let closed = record.closed { events.append(Event(at: closed.at, command: "session close", what: "closed into \(closed.bundle)")) }
        return events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }

    // MARK: Words

    /// The summary as text (sanitized: the server's words and the tester's never reach a terminal raw).
    public func text(zone: TimeZone = .current) -> String {
        var out = ""
        let name = meta.map { Sanitizer.line($0.name) } ?? "(no start line)"
        out += "session \(name)" + (meta.map { " (\($0.id))" } ?? "") + (open ? " · open" : " · closed") + " · \(Wording.duration(seconds))\n"
        if let meta {
            out += "  build: \(meta.build.map(Sanitizer.line) ?? "not given") · \(meta.environment.uppercased()) \(Sanitizer.line(meta.baseURL)) as \(Sanitizer.line(meta.user))\n"
            if let charter = meta.charter { out += "  charter: \(Sanitizer.line(charter))\n" }
        }
        for lack in incomplete { out += "  incomplete: \(lack)\n" }
        if !stillRunning.isEmpty { out += "  still running: \(stillRunning.map(Sanitizer.line).joined(separator: ", "))\n" }
        out += "\nfindings: \(findings)\(findings > distinct ? " (\(distinct) distinct)" : "") · checks passed: \(passedChecks)\n"
        for g in groups {
            out += "  [\(Sanitizer.line(g.kind))] \(g.blame?.words ?? "no blame") ×\(g.count)\n"
            for s in g.subjects {
                let ids = s.requestIDs.isEmpty ? "no request id"
                    : s.requestIDs.count > 2 ? "\(Sanitizer.line(s.requestIDs[0])) … \(Sanitizer.line(s.requestIDs[s.requestIDs.count - 1])), \(s.requestIDs.count) request ids"
                    : s.requestIDs.map(Sanitizer.line).joined(separator: ", ")
                out += "    \(Sanitizer.line(s.subject))\(s.count > 1 ? " ×\(s.count)" : ""): expected \(Sanitizer.line(s.expected)), got \(Sanitizer.line(s.actual)) (\(ids))\n"
            }
        }
        out += "\npurchases: \(purchases.count)\n"
        for p in purchases {
            let posts = p.posts.isEmpty ? "not posted in this session"
                : p.posts.map { "\($0.source == "app" ? "the app" : $0.command) posted → \($0.status == 0 ? "no answer" : "\($0.status)")\($0.requestID.map { " \(Sanitizer.line($0))" } ?? "")" }.joined(separator: "; ")
            let verdict = p.verdict.map { "\(Sanitizer.line($0))\(p.blame.map { " (\($0.words))" } ?? "")" } ?? "not judged yet (run reiterate-shop ledger)"
            out += "  \(Sanitizer.line(p.transaction)) \(Sanitizer.line(p.product ?? "?")): \(verdict) — \(posts)\n"
        }
        out += "\nnotes: \(notes.count)\n"
        for n in notes { out += "  - \(Sanitizer.line(n))\n" }
        out += "\ncovered: \(covered.requests) request\(covered.requests == 1 ? "" : "s"), \(covered.writes) write\(covered.writes == 1 ? "" : "s")"
        out += "; operations " + (covered.operations.isEmpty ? "none" : covered.operations.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
        out += "; users " + (covered.users.isEmpty ? "none" : covered.users.map(Sanitizer.line).joined(separator: ", "))
        out += "; history pages " + (covered.historyPages.isEmpty ? "none" : covered.historyPages.map(String.init).joined(separator: ", "))
        out += "; commands " + (covered.commands.isEmpty ? "none" : covered.commands.map(Sanitizer.line).joined(separator: ", ")) + "\n"
        out += "\ntimeline:\n"
        for e in timeline { out += "  \(DateText.timeOfDay(e.at, zone)) \(Sanitizer.line(e.what))\n" }
        return out
    }

    /// One JSON object.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }
}
