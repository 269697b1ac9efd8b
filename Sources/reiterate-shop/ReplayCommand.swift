import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopSettings
import ShopProbes
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

    @Argument(help: "A file written by `snapshot` or `--har`, or an explore case (`explore`'s cases/NAME.json).") var file: String
    @Flag(help: "An explore case that writes: send its writes (as the environment's explore user).") var yes = false
    @Option(help: "A path to leave out, e.g. packs[].cheer_total (repeatable).") var ignore: [String] = []
    @Flag(help: "One JSON object: each read with its outcome and differences, and the writes not sent.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        if let data = FileManager.default.contents(atPath: file), let found = ExploreCaseFile.read(data) {
            let (settings, logger) = try connection.settingsAndLogger()
            guard yes || !found.exploreCase.writes else {
                throw fail(CLIError(message: "\(found.exploreCase.name) writes: add --yes to send it to \(settings.environment.uppercased())", exitCode: .usage))
            }
            return try await ExploreCommand.campaign(settings, logger: logger, connection: connection, only: nil, cases: [found.exploreCase], yes: true, json: json,
                                                     pace: 10, budget: 400, out: nil)
        }
        do {
            let config = try connection.loadConfig()
            let rules = try IgnoreRules.of(config, ignore)
            let recorded = try FileSide.opened(file).snapshot
            let reads = recorded.reads.filter { $0.status / 100 == 2 && $0.body != nil }
            guard !reads.isEmpty else { throw CLIError(message: "\(file) holds no read to send again", exitCode: .usage) }
            let settings = try target(recorded, config: config)
            let logger = try connection.makeLogger(label: "reiterate")
            let user = connection.user
            let results: [Replay.Result] = try await connection.withClient(settings, logger: logger) { client in
                var out: [Replay.Result] = []
                for read in reads {
                    do {
                        out.append(try await Replay.settled(read, as: user, client: client, rules: rules))
                    } catch let error as ShopAPIError {
                        out.append(Replay.Result(recorded: read, outcome: .failed, failure: ErrorText.line(error)))
                    }
                }
                return out
            }
            for result in results where result.reads.count > 1 { Terminal.err(result.disagreement.warningLine); SessionJournal.record(result.disagreement) }
            Terminal.out(json ? Replay.json(results, writes: recorded.writes) : Replay.text(results, writes: recorded.writes, environment: settings.environment, baseURL: settings.baseURL))
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
}
