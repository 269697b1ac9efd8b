import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopSettings
import ShopViewModels
import Synchronization
import TerminalText

/// `reiterate-shop replay FILE`: the recorded reads of a snapshot or HAR sent again, each reported as
/// matched, changed (with its differences) or failed. The writes in the file are listed, never sent.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Send a snapshot's or HAR's recorded reads again and report each as matched, changed (with the diff) or failed; writes are listed, never sent.",
        discussion: """
            The reads go to the environment the file was recorded on (its base URL, or the environment of
            that name in the config), or to --env / --base-url; --user replays them as another user.
            A read that differs from the recording is read again (up to three reads, 0.5 s then 1 s apart):
            the verdict rests on the last two reads when they agree; when they do not, the read is
            "unsettled" (not judged), with every read's request id.
            Exit status: 0 all matched; 1 some changed; 2 some could not be compared (failed, unsettled, or none).
            """
    )

    @Argument(help: "A file written by `snapshot` or `--har`.") var file: String
    @Option(help: "A path to leave out, e.g. packs[].cheer_total (repeatable).") var ignore: [String] = []
    @Flag(help: "One JSON object: each read with its outcome and differences, and the writes not sent.") var json = false
    @OptionGroup var connection: ConnectionOptions

    enum Outcome: String { case matched, changed, failed, unsettled }

    /// One recorded read replayed: its outcome, the differences the verdict rests on, the read judged,
    /// every read's request id when more than one was taken, and why it failed.
    struct Result {
        var recorded: RecordedRead
        var outcome: Outcome
        var differences: [Difference] = []
        var again: RecordedRead?
        var reads: [String] = []
        var failure: String?
    }

    /// The pauses before a second read of a value that differs and before a third (the verification's).
    static let pauses: [Duration] = [.milliseconds(500), .milliseconds(1000)]

    func run() async throws {
        do {
            let config = try connection.loadConfig()
            let rules = try IgnoreRules.of(config, ignore)
            let recorded = try FileSide(path: file).snapshot
            let reads = recorded.reads.filter { $0.status / 100 == 2 && $0.body != nil }
            guard !reads.isEmpty else { throw CLIError(message: "\(file) holds no read to send again", exitCode: .usage) }
            let settings = try target(recorded, config: config)
            let logger = try connection.makeLogger(label: "reiterate")
            let user = connection.user
            let results: [Result] = try await connection.withClient(settings, logger: logger) { client in
                var out: [Result] = []
                for read in reads {
                    do {
                        out.append(try await Self.settled(read, as: user, client: client, rules: rules))
                    } catch let error as ShopAPIError {
                        out.append(Result(recorded: read, outcome: .failed, failure: ErrorText.line(error)))
                    }
                }
                return out
            }
            for result in results where result.reads.count > 1 {
                let ids = result.reads.joined(separator: ", ")
                let judged = result.outcome == .unsettled ? "not judged" : "judged on the last two, which agree"
                Terminal.err("warning: [reads-disagree] \(result.recorded.method) \(Sanitizer.line(result.recorded.target)) answered differently across "
                             + "\(result.reads.count) reads (request ids \(Sanitizer.line(ids))): \(judged)\n")
            }
            Terminal.out(json ? Self.json(results, writes: recorded.writes) : Self.text(results, writes: recorded.writes, on: settings))
            if results.contains(where: { $0.outcome == .failed || $0.outcome == .unsettled }) { throw ExitCode(2) }
            if results.contains(where: { $0.outcome == .changed }) { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw CompareCommand.couldNotCompare(error)
        }
    }

    /// Where to send: --env or --base-url when given; else the environment of the config (or the
    /// built-in `local`) whose base URL the file recorded. A file is not trusted with a token: a base
    /// URL that no environment names is refused, whatever environment name the file claims.
    func target(_ recorded: Snapshot, config: ConfigFile?) throws -> ResolvedSettings {
        guard connection.envName == nil, connection.baseURL == nil else { return try connection.settings(config: config) }
        guard let base = recorded.baseURL else {
            throw CLIError(message: "\(file) does not say where it was recorded: give --env or --base-url", exitCode: .usage)
        }
        let names = ["local"] + (config?.environments.keys.sorted() ?? [])
        for name in names {
            let settings = try connection.settings(config: config, env: name, user: nil)
            if Self.sameServer(settings.baseURL, base) { return try connection.settings(config: config, env: name, user: connection.user) }
        }
        throw CLIError(message: "\(file) was recorded on \(Sanitizer.line(base)), which no environment of the config names: give --env or --base-url to send its reads (and a token) there",
                       exitCode: .usage)
    }

    static func sameServer(_ a: String, _ b: String) -> Bool {
        func norm(_ s: String) -> String { (s.hasSuffix("/") ? String(s.dropLast()) : s).lowercased() }
        return norm(a) == norm(b)
    }

    /// A recorded read sent again until its verdict rests on two reads that agree: a second read follows
    /// at once when the first matched the recording, after 0.5 s when it differed; a third, 1 s later,
    /// when those two disagree. Judged on the last two reads: `matched` or `changed` when they agree,
    /// `unsettled` when they do not.
    static func settled(_ read: RecordedRead, as user: String?, client: ShopClient, rules: IgnoreRules) async throws -> Result {
        func differences(_ a: RecordedRead, _ b: RecordedRead) -> [Difference] {
            var comparison = Comparison(ignore: rules, dates: { ISO8601.parse($0) })
            switch read.what {
            case .balance: comparison.balance(a, b)
            case .packs: comparison.packs(a, b)
            case .history: comparison.history(a: a, b: b)
            }
            return comparison.finish()
        }
        var answers = [try await send(read, as: user, client: client)]
        let pauses: [Duration] = [differences(read, answers[0]).isEmpty ? .zero : Self.pauses[0], Self.pauses[1]]
        for pause in pauses {
            if pause > .zero { try await Task.sleep(for: pause) }
            answers.append(try await send(read, as: user, client: client))
            if differences(answers[answers.count - 2], answers[answers.count - 1]).isEmpty { break }
        }
        let last = answers[answers.count - 1]
        let changes = differences(read, last)
        let disagreed = answers.dropFirst().contains { !differences(answers[0], $0).isEmpty }
        let ids = disagreed ? answers.map { $0.requestID ?? "—" } : []
        guard differences(answers[answers.count - 2], last).isEmpty else {
            return Result(recorded: read, outcome: .unsettled, differences: changes, again: last, reads: ids)
        }
        return Result(recorded: read, outcome: changes.isEmpty ? .matched : .changed, differences: changes, again: last, reads: ids)
    }

    /// The recorded read as its endpoint, for `user` when given (else the user it was recorded for).
    static func send(_ read: RecordedRead, as user: String?, client: ShopClient) async throws -> RecordedRead {
        let who = user ?? read.user ?? "qa-alice"
        switch read.what {
        case .balance: return LiveSide.read(try await client.sendRecorded(Balance(user: who)), .balance)
        case .packs: return LiveSide.read(try await client.sendRecorded(AudioPacks()), .packs)
        case let .history(page):
            let perPage = Snapshot.perPage(read) ?? 50
            return LiveSide.read(try await client.sendRecorded(CheerHistory(user: who, page: page, perPage: perPage)), .history(page: page))
        }
    }

    static func text(_ results: [Result], writes: [RecordedWrite], on settings: ResolvedSettings) -> String {
        var out = "Replayed on \(Sanitizer.line(settings.environment.uppercased())) (\(Sanitizer.line(settings.baseURL))):\n"
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

    static func json(_ results: [Result], writes: [RecordedWrite]) -> String {
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
