import ArgumentParser
import Foundation
import Logging
import ShopAPI
import ShopProbes
import ShopSettings
import ShopViewModels
import TerminalText

/// `reiterate-shop explore [--yes] [--only …] [--pace N] [--budget N] [--out DIR] [--json]`: a bounded campaign
/// the contract's document and the shop's model make, judged by them (docs/checks.md, "Explore").
struct ExploreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explore",
        abstract: "Find the bugs nobody described: a campaign from the contract and the shop's model (legal requests, tokens, edges, writes at once, text, identity).",
        discussion: """
            Without --yes it lists the cases, what it will spend and buy, and what it does not cover; nothing is sent.
            Refused in a read-only or production-tier environment. Writes go only as the environment's explore_users
            (on a local tier, its user). Every request takes its turn at --pace and counts against --budget; a case the
            budget has no room for is not run (the result says it is incomplete). Ctrl-C stops it with the findings so far.
            A failing case with several writes is shrunk to the fewest that still fail. The folder (--out, else the state
            folder's explore/) gets report.md, findings.jsonl, and for each failing case a replay case
            (`reiterate-shop replay cases/NAME.json --yes`) and a curl script.
            Exit status: 0 no finding; 65 a finding; 69 no finding but a case not judged or not run; 78 refused.
            """
    )

    @Flag(help: "Send the cases (without it they are listed and nothing is sent).") var yes = false
    @Flag(help: "One JSON object a case.") var json = false
    @Option(help: ArgumentHelp("Only these families or cases (comma-separated: legal, auth, edges, concurrent, text, identity, or case names).", valueName: "names"))
    var only: String?
    @Option(help: ArgumentHelp("At most this many requests a second; 0: no pacing.", valueName: "n")) var pace: Double = 10
    @Option(help: ArgumentHelp("At most this many requests in all.", valueName: "n")) var budget: Int = 400
    @Option(help: ArgumentHelp("The folder for the report, the findings and the replay cases.", valueName: "dir")) var out: String?
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard pace >= 0, pace <= 1000 else { throw ValidationError("--pace takes 0 (no pacing) to 1000 requests a second") }
        guard budget >= 1, budget <= 100_000 else { throw ValidationError("--budget takes 1 to 100000 requests") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        try await Self.campaign(settings, logger: logger, connection: connection, only: only, yes: yes, json: json, pace: pace, budget: budget, out: out)
    }

    static func inputs(_ settings: ResolvedSettings, connection: ConnectionOptions) throws -> (ExploreInputs, String?) {
        let expired = connection.environment["REITERATE_EXPIRED_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return (ExploreInputs(contract: try connection.contract(settings)(), bundles: zip(settings.bundleIdentifiers, settings.bundles).map { CheerBundle(identifier: $0, cheer: $1) },
                              writers: settings.exploreUsers, appStoreVerifies: settings.appStore != nil, expiredToken: expired != nil), expired)
    }

    /// The TUI's `X`: none in a read-only or production-tier environment.
    static func explorer(_ settings: ResolvedSettings, client: ShopClient, connection: ConnectionOptions, stateDirectory: String) -> SessionExplorer? {
        guard !settings.readOnly, settings.tier != .production, let (inputs, expired) = try? inputs(settings, connection: connection) else { return nil }
        return SessionExplorer(client: client, inputs: inputs, reader: settings.user, expiredToken: expired, stateDirectory: stateDirectory,
                               files: ExploreFiles(folder: "", environment: settings.environment, baseURL: settings.baseURL, tokenVariable: settings.tokenEnv))
    }

    /// The campaign, or the one case of a replay file (`only` given as its case).
    static func campaign(_ settings: ResolvedSettings, logger: Logger, connection: ConnectionOptions, only: String?, cases given: [ExploreCase]? = nil,
                         yes: Bool, json: Bool, pace: Double, budget: Int, out: String?) async throws {
        guard !settings.readOnly, settings.tier != .production else {
            throw fail(CLIError(message: "\(settings.environment.uppercased()) is \(settings.readOnly ? "read-only" : "a production tier"): explore is refused", exitCode: .config))
        }
        let (inputs, expired) = try inputs(settings, connection: connection)
        let bundles = inputs.bundles
        let (all, omitted) = ExploreCase.catalogue(inputs)
        let cases: [ExploreCase]
        do { cases = try ExploreCase.select(given ?? all, only: only) } catch {
            throw fail(CLIError(message: "no family or case named \(error.names.joined(separator: ", ")) (the list: explore without --yes)", exitCode: .usage))
        }
        let writer = settings.exploreUsers.first
        let plan = "\(cases.count) cases to \(settings.environment.uppercased()) as \(settings.user): at most \(budget) requests, \(pace > 0 ? "\(Int(pace)) a second" : "unpaced"); "
            + ExploreListing.writes(cases, bundles: bundles, writer: writer)
        guard yes else {
            Terminal.out(json ? ExploreListing.json(cases, omitted: omitted) : ExploreListing.text(cases, omitted: omitted))
            Terminal.err("\(plan)\nnothing sent: add --yes to send them\n")
            return
        }
        Terminal.err("explore: \(plan)\n")
        let state = EvidenceFiles.stateDirectory(environment: connection.environment)
        let files = ExploreFiles(folder: out ?? ExploreFiles.defaultFolder(stateDirectory: state, environment: settings.environment), environment: settings.environment,
                                 baseURL: settings.baseURL, tokenVariable: settings.tokenEnv)
        let result: ExploreCampaign.Result
        do {
            result = try await connection.withClient(settings, logger: logger) { client in
                try await ExploreCampaign.on(client, pace: pace, budget: budget, reader: settings.user, writer: writer, bundles: bundles, expiredToken: expired,
                                             files: files, lines: .standard, json: json, progress: isatty(STDERR_FILENO) == 1).go(cases, omitted: omitted, budget: budget)
            }
        } catch let notStarted as ExploreRun.NotStarted {
            throw fail(CLIError(message: notStarted.words, exitCode: .unavailable))
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        for f in result.contract { Terminal.err(f.warningLine) }
        for f in result.outcomes.flatMap(\.findings) { SessionJournal.record(f) }
        SessionJournal.wrote(files.folder, what: "explore's report, findings and cases")
        Terminal.err((result.stopped.map { "explore \($0): " } ?? "") + result.summary.line + "\n")
        Terminal.err("note: wrote the report, the findings and the replay cases to \(Sanitizer.line(files.folder))\n")
        if result.exitStatus != 0 { throw ExitCode(result.exitStatus) }
    }
}
