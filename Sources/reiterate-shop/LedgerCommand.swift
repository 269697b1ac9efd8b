import AppStoreRecord
import ArgumentParser
import Foundation
import JSONTokens
import ShopAPI
import ShopProbes
import ShopLedger
import ShopSettings
import TerminalText

/// `reiterate-shop ledger`: the App Store's signed record of the sandbox tester's purchases, held against
/// what the backend credited (issue 38; docs/ledger.md).
struct LedgerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Hold the App Store's signed record of every sandbox purchase against what the backend credited.",
        discussion: """
            Reads the customer's transactions from the App Store Server API (the environment's
            [environments.NAME.appstore] table), believes each only once its signature and chain verify,
            and judges each against the backend's purchase_cheer exchanges: the open test session's
            (`session start`: every command's, the TUI's and the app's through the proxy), then the HAR
            files given with --read-har: credited, not credited, credit mismatch, credited twice,
            refunded, not paid, not verified.
            Without --transaction, the ids posted there are tried in turn.
            Exit status: 0 when every record is credited, 65 when there is a finding, 69 when the App
            Store cannot be read (or a credit could not be checked), 78 for a setting.
            """
    )

    @Option(name: .customLong("transaction"), help: ArgumentHelp("Any App Store transaction id of the sandbox tester.", valueName: "TX"))
    var transaction: String?
    @Option(name: .customLong("env"), help: "A named environment from the config file (env REITERATE_ENV).")
    var envName: String?
    @Option(name: [.customLong("read-har"), .customLong("har")], parsing: .upToNextOption,
            help: ArgumentHelp("HAR files to read besides the open session (an input here; elsewhere --har names a file to write).", valueName: "FILE"))
    var harFiles: [String] = []
    @Flag(help: "One JSON object per line.") var json = false
    @Option(name: .customLong("log-file"), help: "With --probe --yes: append its request log here (tokens are never logged).") var logFile: String?
    @Flag(help: "Post each App Store transaction to purchase_cheer once more, with its own product id: a credited one must answer 409 and change nothing; a 200 is a purchase never credited before.")
    var probe = false
    @Flag(help: "With --probe: send (without it the probe lists what it would send and sends nothing).") var yes = false

    func validate() throws {
        if let transaction, !AppStoreRead.isTransactionID(transaction) {
            throw ValidationError("--transaction must be an App Store transaction id (1 to 20 digits)")
        }
        if yes, !probe { throw ValidationError("--yes goes with --probe (the ledger alone sends nothing to the shop)") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let config: ConfigFile?
        let settings: ResolvedSettings
        do {
            config = try ConfigFile.load(path: ConfigFile.defaultPath(environment: environment))
            settings = try ResolvedSettings.resolve(flags: .init(env: envName), environment: environment, config: config)
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
        let (sessionEvents, session) = SessionLedger.sessionEvents(TestSessions(environment: environment))
        let events: [ShopEvent]
        do { events = SessionLedger.merged(sessionEvents, try ShopEvents.read(harFiles: harFiles)) } catch { throw CLIError(message: error.words, exitCode: .usage) }
        let candidates = LedgerSources.candidates(given: (transaction.map { [$0] } ?? []) + (settings.appStore?.transaction.map { [$0] } ?? []), events: events)
        guard !candidates.isEmpty else {
            throw CLIError(message: "give --transaction TX (any App Store transaction id of the sandbox tester), or --read-har files with a purchase posted in them"
                           + (session.map { " (the session \(Sanitizer.line($0)) has none yet)" } ?? " (no test session is open)"),
                           exitCode: .usage)
        }
        let setup = try AppStoreSetup(settings)
        let client = setup.client
        let outcome = await LedgerSources.read(client: client, candidates: candidates, events: events)
        await setup.close()
        var ledger: Ledger
        let read: LedgerSources
        switch outcome {
        case let .failure(failure):
            throw CLIError(message: failure.words, exitCode: .unavailable)
        case let .success(r):
            read = r
            ledger = read.judge(events, catalog: settings.cheerByProduct)
        }
        var out = ""
        var probeFinding: String?
        if probe {
            // Every paid consumable of the customer, with the App Store's own product id — the refunded ones too:
            // the backend must refuse those, and the probe judges what it answers.
            let (probes, refunded) = read.probeCandidates
            let sent = try await Self.probe(probes, settings: settings, connection: (envName.map { ["--env", $0] } ?? []) + (logFile.map { ["--log-file", $0] } ?? []), send: yes)
            if yes {
                ledger = ledger.probed(sent.results, refunded: refunded)
                if let change = sent.balanceWords, !sent.balanceFinding { FileHandle.standardError.write(Data("probe: \(change)\n".utf8)) }
            } else {
                for t in probes {
                    out += "probe would post: purchase_cheer {\"identifier\": \"\(Sanitizer.line(t.productID))\", \"transaction_id\": \(t.transactionID)} as \(settings.user)\n"
                }
                out += "probe: nothing was sent (\(probes.count) post\(probes.count == 1 ? "" : "s")); add --yes to send\n"
            }
            if sent.balanceFinding { probeFinding = sent.balanceWords }
        }
        SessionLedger.record(ledger)
        for line in ledger.lines { out += (json ? line.json : line.text) + "\n" }
        if let probeFinding { out += (json ? LedgerProbe.findingJSON(probeFinding) : "probe: finding: " + probeFinding) + "\n" }
        if !json { out += ledger.summary + "\n" }
        FileHandle.standardOutput.write(Data(out.utf8))
        if ledger.findings > 0 || probeFinding != nil { throw ExitCode(ExitStatus.dataError.rawValue) }
        // An all-clear covers only what was judged: a line not seen, or a credit whose amount was not, leaves it incomplete.
        if ledger.unchecked > 0 || ledger.amountsUnjudged > 0 { throw ExitCode(ExitStatus.unavailable.rawValue) }
    }

    /// `--probe --yes`: each transaction posted once, between two settled balance reads (two reads
    /// that agree), in an environment that is not read-only. Without `yes`, nothing is sent.
    static func probe(_ transactions: [AppStoreTransaction], settings: ResolvedSettings, connection arguments: [String], send: Bool) async throws -> LedgerProbe.Run {
        guard send else { return LedgerProbe.Run() }
        guard !settings.readOnly else {
            throw CLIError(message: "\(settings.environment.uppercased()) is read-only: the probe is refused (it posts purchases)", exitCode: .config)
        }
        let connection = try ConnectionOptions.parse(arguments)
        let logger = try connection.makeLogger(label: "reiterate")
        return try await connection.withClient(settings, logger: logger) { client in
            try await LedgerProbe.run(transactions, client: client, user: settings.user, catalog: settings.cheerByProduct)
        }
    }
}
