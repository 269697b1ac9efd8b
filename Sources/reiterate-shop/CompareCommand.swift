import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopProbes
import ShopSettings
import ShopViewModels
import Synchronization
import TerminalText

/// `reiterate-shop compare A B`: the same reads on two sides, as a diff that knows the shop's data.
struct CompareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two environments, two users, or a saved snapshot (or HAR), keyed by the shop's identities.",
        discussion: """
            A side is env:NAME, user:ID (in the current environment), env:NAME/user:ID, or a file written
            by `snapshot` or `--har`. Only reads are sent, never a write. Packs are matched by identifier,
            history entries by id, fields by JSON path; each difference is added, removed, changed (old →
            new) or moved (order only). Ignore a path with --ignore packs[].cheer_total (or [compare]
            ignore = [...] in the config). Exit status: 0 the same; 1 different; 2 could not compare.
            """
    )

    @Argument(help: "The first side: env:NAME, user:ID, env:NAME/user:ID, or a snapshot or HAR file.") var a: String
    @Argument(help: "The second side.") var b: String
    @Option(help: "What to compare: balance, packs, history (comma-separated; default all three).") var what: String = "balance,packs,history"
    @Option(name: .customLong("history-pages"), help: "History pages to compare (of 200 entries when read live; default 1).") var historyPages = 1
    @Option(help: "A path to leave out, e.g. packs[].cheer_total or history[].comments[].body (repeatable).") var ignore: [String] = []
    @Flag(help: "One JSON object: the sides, the differences (kind, path, rule, old, new), the counts.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard historyPages >= 0, historyPages <= 100_000 else { throw ValidationError("--history-pages takes 0 to 100000") }
        for part in what.split(separator: ",") where ComparedPart(rawValue: part.trimmingCharacters(in: .whitespaces)) == nil {
            throw ValidationError("--what takes balance, packs, history (comma-separated), not “\(part)”")
        }
    }

    var parts: Set<ComparedPart> { Set(what.split(separator: ",").compactMap { ComparedPart(rawValue: $0.trimmingCharacters(in: .whitespaces)) }) }

    func run() async throws {
        do {
            let config = try connection.loadConfig()
            let rules = try IgnoreRules.of(config, ignore)
            let sideA = try CompareSide.given(a), sideB = try CompareSide.given(b)
            let logger = try connection.makeLogger(label: "reiterate")
            let (parts, pages) = (parts, historyPages)
            let outcome = try await connection.withSide(sideA, name: a, config: config, logger: logger) { readerA in
                try await connection.withSide(sideB, name: b, config: config, logger: logger) { readerB in
                    try await CompareRun.compare(readerA, readerB, parts: parts, historyPages: pages, ignore: rules)
                }
            }
            if let note = DiffReport.edgeNote(outcome.pastTheEdge) { Terminal.err(note + "\n") }
            Terminal.out(json ? DiffReport.json(outcome.differences, a: outcome.a, b: outcome.b, requestIDs: outcome.requestIDs)
                              : DiffReport.text(outcome.differences, a: outcome.a, b: outcome.b))
            if !outcome.differences.isEmpty { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw Self.couldNotCompare(error)
        }
    }

    /// Exit status 2, with the reason on one line.
    static func couldNotCompare(_ error: any Error) -> ExitCode {
        // A setting that is wrong is that, whatever the command: 78, as every command says it.
        if let error = error as? CLIError, error.exitCode == .config { return fail(error) }
        Terminal.err("error: could not compare: \(reason(error))\n")
        return ExitCode(2)
    }

    /// Why a comparison could not be made, in plain words (a setting's or an argument's failure, or the run's).
    static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as CLIError: return Sanitizer.line(failure.message)
        case let failure as ValidationError: return Sanitizer.line(failure.message)
        default: return CompareRun.reason(error)
        }
    }
}

extension IgnoreRules {
    /// The config's `[compare] ignore` and the command's `--ignore`; a rule that is not a path is a
    /// usage error naming it.
    static func of(_ config: ConfigFile?, _ flags: [String]) throws -> IgnoreRules {
        do {
            return try IgnoreRules((config?.compareIgnore ?? []) + flags)
        } catch {
            throw CLIError(message: "\(error)", exitCode: .usage)
        }
    }
}

extension ConnectionOptions {
    /// Settings for a side: `env:NAME` reads that environment as the config names it (the current
    /// environment's variables and --base-url do not reach it); `user:ID` another user.
    func settings(config: ConfigFile?, env: String?, user: String?) throws -> ResolvedSettings {
        var vars = environment
        var flags = ResolvedSettings.Flags(env: envName, baseURL: baseURL, user: user ?? self.user, timeout: timeout, contract: contract)
        if let env {
            vars["REITERATE_ENV"] = nil
            vars["REITERATE_BASE_URL"] = nil
            flags.env = env
            flags.baseURL = nil
            if user == nil { flags.user = nil; vars["REITERATE_USER"] = nil }
        }
        do {
            return try ResolvedSettings.resolve(flags: flags, environment: vars, config: config)
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
    }

    /// The balance and history total this machine last settled on for `settings`' environment and user
    /// (the cache), where it has them.
    func settledState(_ settings: ResolvedSettings, logger: Logger) async -> SettledState {
        let cache = CacheStore(directory: resolvedCacheDir, logger: logger)
        let key = CacheKey(baseURL: settings.baseURL, user: settings.user)
        return SettledState(balance: await cache.read(CheerBalance.self, kind: .balance, key: key)?.value.balance,
                            historyTotal: await cache.read(CheerHistoryPage.self, kind: .historyFirstPage, key: key)?.value.totalCount)
    }

    /// `body` with a reader for `side`: a file's, or a client's for an environment and user.
    func withSide<T: Sendable>(_ side: CompareSide, name: String, config: ConfigFile?, logger: Logger, _ body: (any SideReader) async throws -> T) async throws -> T {
        switch side {
        case let .file(path):
            return try await body(try FileSide.opened(path))
        case let .live(env, user):
            let settings = try settings(config: config, env: env, user: user)
            return try await withClient(settings, logger: logger) { client in
                let result = try await body(LiveSide(client: client, user: settings.user, environment: settings.environment, name: name,
                                                             settled: await settledState(settings, logger: logger), warn: { Terminal.err($0) }))
                // The side's answers were held to the contract as they came (pages that disagree too):
                // each deviation is a `warning:` line; the comparison's status is its own.
                _ = reportFindings(await client.exchangesWithPinsSettled(), lines: .standard)
                return result
            }
        }
    }
}
