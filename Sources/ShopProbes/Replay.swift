import Foundation
import JSONTokens
import ShopAPI
import ShopModel
import ShopCompare
import TerminalText

/// `replay`'s reads, out of the executable (issue 44, item 5): each recorded read sent again until its
/// verdict rests on two reads that agree, and the reports.
public enum Replay {
    public enum Outcome: String, Sendable { case matched, changed, failed, unsettled }

    /// One recorded read replayed: its outcome, the differences the verdict rests on, the read judged,
    /// every read's request id when more than one was taken, and why it failed.
    public struct Result: Sendable {
        public var recorded: RecordedRead
        public var outcome: Outcome
        public var differences: [Difference] = []
        public var again: RecordedRead?
        public var reads: [String] = []
        public var failure: String?

        public init(recorded: RecordedRead, outcome: Outcome, differences: [Difference] = [], again: RecordedRead? = nil, reads: [String] = [],
                    failure: String? = nil) {
            self.recorded = recorded
            self.outcome = outcome
            self.differences = differences
            self.again = again
            self.reads = reads
            self.failure = failure
        }
    }

    /// A recorded read sent again until its verdict rests on two reads that agree: a second read follows
    /// at once when the first matched the recording, after 0.5 s when it differed; a third, 1 s later,
    /// when those two disagree. Judged on the last two reads: `matched` or `changed` when they agree,
    /// `unsettled` when they do not.
    public static func settled(_ read: RecordedRead, as user: String?, client: ShopClient, rules: IgnoreRules) async throws -> Result {
        func differences(_ a: RecordedRead, _ b: RecordedRead) -> [Difference] {
            var comparison = Comparison(ignore: rules, dates: { ISO8601.parse($0) })
            switch read.what {
            case .balance: comparison.balance(a, b)
            case .packs: comparison.packs(a, b)
            case .history: comparison.history(a: a, b: b)
            }
            return comparison.finish()
        }
        // The one rule (`ReadRule`): the recording is what is expected, and the verdict rests on two reads
        // in a row that agree.
        let rule = ReadRule<RecordedRead>(expecting: { differences(read, $0).isEmpty }, twoAgree: { differences($0, $1).isEmpty })
        let taken = try await rule.reads {
            try Task.checkCancellation()  // a replay stopped (Ctrl-C) sends no more reads
            return try await send(read, as: user, client: client)
        }
        let answers = taken.all
        let last = taken.last
        let changes = differences(read, last)
        let disagreed = answers.dropFirst().contains { !differences(answers[0], $0).isEmpty }
        let ids = disagreed ? answers.map { $0.requestID ?? "—" } : []
        guard taken.met else {
            return Result(recorded: read, outcome: .unsettled, differences: changes, again: last, reads: ids)
        }
        return Result(recorded: read, outcome: changes.isEmpty ? .matched : .changed, differences: changes, again: last, reads: ids)
    }

    /// The recorded read as its endpoint, for `user` when given (else the user it was recorded for).
    public static func send(_ read: RecordedRead, as user: String?, client: ShopClient) async throws -> RecordedRead {
        let who = user ?? read.user ?? "qa-alice"
        switch read.what {
        case .balance: return RecordedRead(try await client.sendRecorded(Balance(user: who)), as: .balance)
        case .packs: return RecordedRead(try await client.sendRecorded(AudioPacks()), as: .packs)
        case let .history(page):
            let perPage = Snapshot.perPage(read) ?? 50
            return RecordedRead(try await client.sendRecorded(CheerHistory(user: who, page: page, perPage: perPage)), as: .history(page: page))
        }
    }

    /// The text report: one line a read (a changed one with its differences), the writes not sent, the counts.
    public static func text(_ results: [Result], writes: [RecordedWrite], environment: String, baseURL: String) -> String {
        var out = "Replayed on \(Sanitizer.line(environment.uppercased())) (\(Sanitizer.line(baseURL))):\n"
        for result in results {
            let (read, outcome, differences, again, failure) = (result.recorded, result.outcome, result.differences, result.again, result.failure)
            let ids = ([read.requestID] + (result.reads.isEmpty ? [again?.requestID] : result.reads.map(Optional.some))).compactMap { $0 }.joined(separator: " → ")
            out += Columns.fit(outcome.rawValue, to: 9) + " \(read.method) \(Sanitizer.line(read.target))" + (ids.isEmpty ? "" : "  (\(Sanitizer.line(ids)))")
            switch outcome {
            case .matched: out += "\n"
            case .failed: out += ": \(failure ?? "")\n"
            case .unsettled: out += ": not judged: the reads disagree\n"
            case .changed:
                out += ": " + DiffReport.summary(differences) + "\n"
                let table = DiffReport.text(differences, a: .init(name: "recorded", environment: nil, user: nil, takenAt: read.at),
                                            b: .init(name: "now", environment: nil, user: nil, takenAt: again?.at))
                for line in table.split(separator: "\n").dropFirst(3).dropLast() { out += "          " + line + "\n" }
            }
        }
        for write in writes { out += "not sent  \(write.method) \(Sanitizer.line(write.target))  (a write: replay never sends one)\n" }
        let count = { (o: Outcome) in results.filter { $0.outcome == o }.count }
        out += "\(results.count) read\(results.count == 1 ? "" : "s"): \(count(.matched)) matched, \(count(.changed)) changed, \(count(.failed)) failed"
        if count(.unsettled) > 0 { out += ", \(count(.unsettled)) unsettled" }
        out += writes.isEmpty ? "\n" : "; \(writes.count) write\(writes.count == 1 ? "" : "s") not sent\n"
        return out
    }

    /// The `--json` report: each read's outcome and differences (as `compare --json` gives them), the writes not sent.
    public static func json(_ results: [Result], writes: [RecordedWrite]) -> String {
        var w = JSONWriter(capacity: 1024)
        w.raw("{\"reads\":[")
        for (i, result) in results.enumerated() {
            let (read, outcome, differences, again, failure) = (result.recorded, result.outcome, result.differences, result.again, result.failure)
            w.raw(i == 0 ? "\n" : ",\n")
            var o: JSONObject = ["outcome": .string(outcome.rawValue), "method": .string(read.method), "target": .string(read.target),
                                 "recorded_request_id": read.requestID.map(JSONValue.string) ?? .null,
                                 "request_id": again?.requestID.map(JSONValue.string) ?? .null]
            if let failure { o.append("error", .string(failure)) }
            if !result.reads.isEmpty { o.append("request_ids", .array(result.reads.map(JSONValue.string))) }
            // The differences as `compare --json` gives them.
            if case let .object(report)? = JSONValue.parse(Array(DiffReport.json(differences, a: .init(name: "recorded", environment: nil, user: nil, takenAt: nil),
                                                                                     b: .init(name: "now", environment: nil, user: nil, takenAt: nil), requestIDs: ([], [])).utf8)),
               let list = report["differences"] {
                o.append("differences", list)
            }
            w.value(.object(o))
        }
        w.raw("\n],\"writes_not_sent\":")
        w.value(.array(writes.map { .object(["method": .string($0.method), "target": .string($0.target)]) }))
        w.raw("}\n")
        return w.text
    }
}

extension Replay.Result {
    /// Reads of one recorded request that answered differently, as the one finding type: `reads-disagree`,
    /// blame not known (a lagging replica, or another writer), every read's request id.
    public var disagreement: ShopFinding {
        let judged = outcome == .unsettled ? "not judged" : "judged on the last two, which agree"
        return ShopFinding(kind: .contract(.readsDisagree), subject: "\(recorded.method) \(recorded.target)", blame: .unknown,
                           expected: "two reads in a row that agree", actual: "\(reads.count) reads that answered differently: \(judged)",
                           requestIDs: reads)
    }
}
