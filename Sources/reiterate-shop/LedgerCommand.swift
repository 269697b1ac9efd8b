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
            let catalog = Dictionary(zip(settings.bundleIdentifiers, settings.bundles), uniquingKeysWith: { first, _ in first })
            ledger = Ledger.judge(history: read.history.records, refunds: read.refunds.records, lookups: read.lookups, events: events, catalog: catalog)
        }
        var out = ""
        var probeFinding: String?
        if probe {
            // Every paid, unrevoked consumable of the customer, with the App Store's own product id.
            var seen = Set<String>()
            let probes = (read.history.records + read.refunds.records).compactMap(\.transaction).filter {
                $0.isConsumable && !$0.isRevoked && UInt64($0.transactionID) != nil && seen.insert($0.transactionID).inserted
            }
            let sent = try await Self.probe(probes, settings: settings, envName: envName, send: yes)
            if yes {
                ledger = ledger.probed(sent.results)
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
        if ledger.unchecked > 0 { throw ExitCode(ExitStatus.unavailable.rawValue) }
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
        let catalog = Dictionary(zip(settings.bundleIdentifiers, settings.bundles), uniquingKeysWith: { first, _ in first })
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

    /// `2026-11-27 12:00:01  com.reiterate.cheer.200 ×2  2000000000000001  req abc  credited  credited 400`.
    static func text(_ line: LedgerLine) -> String {
        let time = line.at.map(stamp) ?? "-------------------"
        let product = (line.productID.map(Sanitizer.line) ?? "?") + (line.quantity.map { " ×\($0)" } ?? "")
        let ids = line.requestIDs.isEmpty ? "-" : line.requestIDs.map(Sanitizer.line).joined(separator: ",")
        let blame = line.blame.map { " (\($0 == .unknown ? "blame not known" : "the \($0.rawValue)'s fault"))" } ?? ""
        return "\(time)  \(product)  \(Sanitizer.line(line.transactionID))  \(ids)  \(line.verdict.rawValue)\(blame): \(Sanitizer.line(line.words))"
    }

    static func json(_ line: LedgerLine) -> String {
        var w = JSONWriter(capacity: 256)
        w.raw("{\"transaction_id\":")
        w.string(line.transactionID)
        w.raw(",\"product_id\":")
        if let product = line.productID { w.string(product) } else { w.raw("null") }
        w.raw(",\"quantity\":")
        if let quantity = line.quantity { w.int(quantity) } else { w.raw("null") }
        w.raw(",\"verdict\":")
        w.string(line.verdict.rawValue)
        w.raw(",\"blame\":")
        if let blame = line.blame { w.string(blame.rawValue) } else { w.raw("null") }
        w.raw(",\"request_ids\":[")
        for (i, id) in line.requestIDs.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(id)
        }
        w.raw("],\"user\":")
        if let user = line.user { w.string(user) } else { w.raw("null") }
        w.raw(",\"at\":")
        if let at = line.at { w.string(ISO8601.format(at)) } else { w.raw("null") }
        w.raw(",\"finding\":")
        w.raw(line.isFinding ? "true" : "false")
        w.raw(",\"words\":")
        w.string(line.words)
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// The probe's own finding (the balance moved otherwise than its answers say), as a JSON line.
    static func probeJSON(_ words: String) -> String {
        var w = JSONWriter(capacity: 128)
        w.raw("{\"probe\":true,\"finding\":true,\"blame\":\"server\",\"words\":")
        w.string(words)
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func summary(_ ledger: Ledger) -> String {
        var counts: [Verdict: Int] = [:]
        for line in ledger.lines { counts[line.verdict, default: 0] += 1 }
        let parts = Verdict.allCases.compactMap { v in counts[v].map { "\($0) \(v.rawValue)" } }
        let findings = ledger.findings == 1 ? "1 finding" : "\(ledger.findings) findings"
        return "ledger: \(ledger.lines.count) line\(ledger.lines.count == 1 ? "" : "s")" + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")") + "; \(findings)"
    }

    static func stamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }
}
