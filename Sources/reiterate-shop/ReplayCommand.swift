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
            Exit status: 0 all matched; 1 some changed; 2 some could not be compared (failed, or none).
            """
    )

    @Argument(help: "A file written by `snapshot` or `--har`.") var file: String
    @Option(help: "A path to leave out, e.g. packs[].cheer_total (repeatable).") var ignore: [String] = []
    @Flag(help: "One JSON object: each read with its outcome and differences, and the writes not sent.") var json = false
    @OptionGroup var connection: ConnectionOptions

    enum Outcome: String { case matched, changed, failed }

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
            let results: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)] = try await connection.withClient(settings, logger: logger) { client in
                var out: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)] = []
                for read in reads {
                    do {
                        let again = try await Self.send(read, as: user, client: client)
                        var comparison = Comparison(ignore: rules, dates: { ISO8601.parse($0) })
                        switch read.what {
                        case .balance: comparison.balance(read, again)
                        case .packs: comparison.packs(read, again)
                        case .history: comparison.history(a: read, b: again)
                        }
                        let differences = comparison.finish()
                        out.append((read, differences.isEmpty ? .matched : .changed, differences, again, nil))
                    } catch let error as ShopAPIError {
                        out.append((read, .failed, [], nil, ErrorText.line(error)))
                    }
                }
                return out
            }
            Terminal.out(json ? Self.json(results, writes: recorded.writes) : Self.text(results, writes: recorded.writes, on: settings))
            if results.contains(where: { $0.1 == .failed }) { throw ExitCode(2) }
            if results.contains(where: { $0.1 == .changed }) { throw ExitCode(1) }
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

    static func text(_ results: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)], writes: [RecordedWrite], on settings: ResolvedSettings) -> String {
        var out = "Replayed on \(Sanitizer.line(settings.environment.uppercased())) (\(Sanitizer.line(settings.baseURL))):\n"
        for (read, outcome, differences, again, failure) in results {
            let ids = [read.requestID, again?.requestID].compactMap { $0 }.joined(separator: " → ")
            out += Columns.fit(outcome.rawValue, to: 8) + " \(read.method) \(Sanitizer.line(read.target))" + (ids.isEmpty ? "" : "  (\(Sanitizer.line(ids)))")
            switch outcome {
            case .matched: out += "\n"
            case .failed: out += ": \(failure ?? "")\n"
            case .changed:
                out += ": " + DiffReport.summary(differences) + "\n"
                let table = DiffReport.text(differences, a: .init(name: "recorded", environment: nil, user: nil, takenAt: read.at),
                                            b: .init(name: "now", environment: nil, user: nil, takenAt: again?.at))
                for line in table.split(separator: "\n").dropFirst(3).dropLast() { out += "         " + line + "\n" }
            }
        }
        for write in writes { out += "not sent \(write.method) \(Sanitizer.line(write.target))  (a write: replay never sends one)\n" }
        let count = { (o: Outcome) in results.filter { $0.1 == o }.count }
        out += "\(results.count) read\(results.count == 1 ? "" : "s"): \(count(.matched)) matched, \(count(.changed)) changed, \(count(.failed)) failed"
        out += writes.isEmpty ? "\n" : "; \(writes.count) write\(writes.count == 1 ? "" : "s") not sent\n"
        return out
    }

    static func json(_ results: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)], writes: [RecordedWrite]) -> String {
        var w = JSONWriter(capacity: 1024)
        w.raw("{\"reads\":[")
        for (i, (read, outcome, differences, again, failure)) in results.enumerated() {
            w.raw(i == 0 ? "\n" : ",\n")
            var o: JSONObject = ["outcome": .string(outcome.rawValue), "method": .string(read.method), "target": .string(read.target),
                                 "recorded_request_id": read.requestID.map(JSONValue.string) ?? .null,
                                 "request_id": again?.requestID.map(JSONValue.string) ?? .null]
            if let failure { o.append("error", .string(failure)) }
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
