import AppStoreRecord
import ArgumentParser
import Foundation
import JSONTokens
import ShopAPI
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
            and judges each against the backend's purchase_cheer exchanges in the HAR files given
            (this tool's own `--har`, the app's through `proxy --har`): credited, not credited, credit
            mismatch, credited twice, refunded, not paid, not verified.
            Without --transaction, the ids posted in the HAR files are tried in turn.
            Exit status: 0 when every record is credited, 65 when there is a finding, 69 when the App
            Store cannot be read (or a credit could not be checked), 78 for a setting.
            """
    )

    @Option(name: .customLong("transaction"), help: ArgumentHelp("Any App Store transaction id of the sandbox tester.", valueName: "TX"))
    var transaction: String?
    @Option(name: .customLong("env"), help: "A named environment from the config file (env REITERATE_ENV).")
    var envName: String?
    @Option(name: .customLong("har"), parsing: .upToNextOption, help: ArgumentHelp("HAR files of the backend's exchanges (repeatable).", valueName: "FILE"))
    var harFiles: [String] = []
    @Flag(help: "One JSON object per line.") var json = false
    @Flag(help: "Post each App Store transaction to purchase_cheer once more, with its own product id: a credited one must answer 409 and change nothing; a 200 is a purchase never credited before.")
    var probe = false
    @Flag(help: "With --probe: send (without it the probe lists what it would send and sends nothing).") var yes = false

    /// Credited ids looked up one by one at most (the rest are "not checked").
    static let maxLookups = 200
    /// Ids tried for the history when the first is unknown to the App Store.
    static let maxCandidates = 5

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
        var events: [ShopEvent] = []
        for file in harFiles {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CLIError(message: "the HAR file \(Sanitizer.line(URL(fileURLWithPath: file).lastPathComponent)) cannot be read", exitCode: .usage)
            }
            do {
                events += try ShopEvents.read(har: Array(data), source: URL(fileURLWithPath: file).lastPathComponent)
            } catch {
                throw CLIError(message: "the HAR file \(Sanitizer.line(URL(fileURLWithPath: file).lastPathComponent)) is not readable: \(error.reason)", exitCode: .usage)
            }
        }
        let learned = events.compactMap { event -> String? in
            if case let .number(n)? = event.purchase?.transactionID { String(n) } else { nil }
        }
        var candidates: [String] = []
        for id in (transaction.map { [$0] } ?? []) + (settings.appStore?.transaction.map { [$0] } ?? []) + learned where !candidates.contains(id) { candidates.append(id) }
        guard !candidates.isEmpty else {
            throw CLIError(message: "give --transaction TX (any App Store transaction id of the sandbox tester), or --har files with a purchase posted in them",
                           exitCode: .usage)
        }
        let setup = try AppStoreSetup(settings)
        let client = setup.client
        let outcome = await Self.read(client: client, candidates: Array(candidates.prefix(Self.maxCandidates)), events: events)
        await setup.close()
        var ledger: Ledger
        let read: Read
        switch outcome {
        case let .failure(failure):
            throw CLIError(message: failure.words, exitCode: .unavailable)
        case let .success(r):
            read = r
            ledger = read.judge(events, settings: settings)
        }
        var out = ""
        var probeFinding: String?
        if probe {
            // Every paid consumable of the customer, with the App Store's own product id — the refunded ones too:
            // the backend must refuse those, and the probe judges what it answers.
            var seen = Set<String>()
            let records = (read.history.records + read.refunds.records).compactMap(\.transaction)
            let refunded = Set(records.filter(\.isRevoked).map(\.transactionID))
            let probes = records.filter {
                $0.isConsumable && UInt64($0.transactionID) != nil && seen.insert($0.transactionID).inserted
            }
            let sent = try await Self.probe(probes, settings: settings, envName: envName, send: yes)
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
        for line in ledger.lines { out += (json ? Self.json(line) : Self.text(line)) + "\n" }
        if let probeFinding { out += (json ? Self.probeJSON(probeFinding) : "probe: finding: " + probeFinding) + "\n" }
        if !json { out += Self.summary(ledger) + "\n" }
        FileHandle.standardOutput.write(Data(out.utf8))
        if ledger.findings > 0 || probeFinding != nil { throw ExitCode(ExitStatus.dataError.rawValue) }
        // An all-clear covers only what was judged: a line not seen, or a credit whose amount was not, leaves it incomplete.
        if ledger.unchecked > 0 || ledger.amountsUnjudged > 0 { throw ExitCode(ExitStatus.unavailable.rawValue) }
    }

    struct ProbeRun {
        var results: [String: ProbeResult] = [:]
        /// What the balance did across the probe, when it was read; a finding when it moved otherwise than the 200s say.
        var balanceWords: String?
        var balanceFinding = false
    }

    /// `--probe --yes`: each transaction posted once, between two settled balance reads (two reads
    /// that agree), in an environment that is not read-only. Without `yes`, nothing is sent.
    static func probe(_ transactions: [AppStoreTransaction], settings: ResolvedSettings, envName: String?, send: Bool) async throws -> ProbeRun {
        guard send else { return ProbeRun() }
        guard !settings.readOnly else {
            throw CLIError(message: "\(settings.environment.uppercased()) is read-only: the probe is refused (it posts purchases)", exitCode: .config)
        }
        let connection = try ConnectionOptions.parse(envName.map { ["--env", $0] } ?? [])
        let logger = try connection.makeLogger(label: "reiterate")
        let catalog = settings.cheerByProduct
        return try await connection.withClient(settings, logger: logger) { client in
            var run = ProbeRun()
            let before = await settledBalance(client, user: settings.user)
            var credited = 0
            // A credit whose cheer is not known (a product outside the bundles) leaves the balance unjudged.
            var creditKnown = true
            for t in transactions {
                guard let id = UInt64(t.transactionID) else { continue }
                let post = PurchaseCheer(ShopWrite.Purchase(identifier: t.productID, transactionID: .number(id)), user: settings.user)
                do {
                    let answer = try await client.sendAnswered(post)
                    run.results[t.transactionID] = .credited(requestID: answer.requestID)
                    let (cheer, overflow) = (catalog[t.productID] ?? 0).multipliedReportingOverflow(by: t.quantity)
                    let (sum, past) = credited.addingReportingOverflow(cheer)
                    if catalog[t.productID] == nil || overflow || past { creditKnown = false } else { credited = sum }
                } catch let error as ShopAPIError {
                    if error.status == 409 {
                        run.results[t.transactionID] = .alreadyCredited(requestID: error.requestID)
                    } else if let status = error.status, case let .http(_, _, code, _, _, _) = error {
                        run.results[t.transactionID] = .refused(status: status, code: code, requestID: error.requestID)
                    } else if let status = error.status {
                        run.results[t.transactionID] = .refused(status: status, code: nil, requestID: error.requestID)
                    } else {
                        run.results[t.transactionID] = .unanswered
                    }
                }
            }
            let after = await settledBalance(client, user: settings.user)
            if let before, let after, creditKnown {
                let unanswered = run.results.values.contains(.unanswered)
                let (moved, overflow) = after.subtractingReportingOverflow(before)
                if overflow {
                    run.balanceWords = "the balance before and after the probe is past what can be compared: not judged"
                } else if moved == credited {
                    run.balanceWords = "the balance went from \(before) to \(after), as the probe's answers say"
                } else if !unanswered {
                    run.balanceWords = "the balance went from \(before) to \(after); the probe's answers account for +\(credited) (its 200s), so it moved otherwise than they say"
                    run.balanceFinding = true
                }
            } else if !creditKnown {
                run.balanceWords = "a probe credited a product outside the environment's bundles: what it changed is not judged"
            } else {
                run.balanceWords = "the balance before and after the probe was not settled (two reads disagreed or failed): what the probe changed is not judged"
            }
            return run
        }
    }

    /// The balance when two reads in a row agree; nil when they do not (or a read fails).
    static func settledBalance(_ client: ShopClient, user: String) async -> Int? {
        guard let first = try? await client.send(Balance(user: user)).balance, let second = try? await client.send(Balance(user: user)).balance,
              first == second
        else { return nil }
        return first
    }

    struct Read: Sendable {
        var history: Listing
        var refunds: Listing
        var lookups: [String: Lookup]
    }

    /// The customer's history from the first candidate the App Store knows, the refunds, and a lookup of
    /// every credited id the history lacks (at most `maxLookups`).
    static func read(client: AppStoreClient, candidates: [String], events: [ShopEvent]) async -> Result<Read, AppStoreFailure> {
        var history: Listing?
        var anchor = ""
        var lastFailure = AppStoreFailure.apple(status: 404, code: 4_040_010, message: "Transaction id not found.")
        for id in candidates {
            switch await client.history(of: id) {
            case let .success(listing):
                history = listing
                anchor = id
            case let .failure(failure):
                lastFailure = failure
                // Only "not known" moves on to the next id; any other failure is the App Store's state.
                guard case let .apple(404, code, _) = failure, code == nil || code == 4_040_010 else { return .failure(failure) }
            }
            if history != nil { break }
        }
        guard let history else { return .failure(lastFailure) }
        // The listing must be the customer's of the id asked for: it lists that id (unless nothing in it verified).
        let verified = history.records.compactMap(\.transaction)
        if !verified.isEmpty, !verified.contains(where: { $0.transactionID == anchor }) {
            return .failure(.unreadable(what: "the transaction history of \(anchor) (it does not list \(anchor))"))
        }
        let refunds: Listing
        switch await client.refunds(of: anchor) {
        case let .success(listing): refunds = listing
        case let .failure(failure): return .failure(failure)
        }
        var lookups: [String: Lookup] = [:]
        for id in Ledger.lookupsNeeded(history: history.records, refunds: refunds.records, events: events).prefix(maxLookups) {
            switch await client.transaction(id) {
            case let .success(record?): lookups[id] = .record(record)
            case .success(nil): lookups[id] = .unknown
            case let .failure(failure): lookups[id] = .failed(failure)
            }
        }
        return .success(Read(history: history, refunds: refunds, lookups: lookups))
    }
}
