import AppStoreRecord
import ArgumentParser
import Foundation
import Logging
import ShopAPI
import ShopLedger
import ShopProbes
import ShopCache
import ShopSettings
import ShopViewModels
import TerminalText

/// `reiterate-shop spend --product ID --amount N [--comment TEXT] --yes`.
struct Spend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spend",
        abstract: "Spend cheer on an Audio Pack, then check what it changed (balance, history, the pack's total).",
        discussion: """
            Refused without --yes, and always in a read-only environment. The verdict and each check go to
            stdout; a failed check or a contract finding is also a `warning:` line on stderr.
            Exit status: 0 applied and every check passed (with --strict, also no response the spend depends on
            deviated, and no read went stale: else 65; --strict=all: no response at all deviated); 65 a check failed
            (whatever the answer: a wrong debit, a 402 while the balance covered the amount), or the server took a
            spend the shop must refuse (above the balance, on a pack not in the list, below 1); 1 refused by the server;
            69 no answer, and not applied or not known whether (the verdict says which: never send it again
            blindly); 78 read-only or a bad setting; 64 usage.
            """
    )

    @Option(help: "The Audio Pack's identifier (com.reiterate.pack.…).") var product: String
    @Option(parsing: .unconditional, help: "Cheer to spend (1 or more; with --unchecked any whole number: --amount -3).") var amount: Int
    @Option(help: "A comment sent with it.") var comment: String?
    @Flag(help: "Do it (without this flag nothing is sent).") var yes = false
    @Flag(help: ArgumentHelp("Exit 65 when a check of the write failed or a response about it deviated from the contract (its answer, its verification, the reads it depends on); --strict=all: any response.",
                             valueName: "strict[=all]")) var strict = false
    @Flag(name: .customLong("strict-all"), help: ArgumentHelp("The same as --strict=all.", visibility: .hidden)) var strictAll = false
    @Flag(help: "Send it as typed: no input check (amount above the balance, 0 or below, a product not in the pack list).") var unchecked = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard amount >= 1 || unchecked else { throw ValidationError("--amount must be 1 or more (add --unchecked to send it as typed)") }
    }

    func run() async throws {
        try await WriteRun(connection: connection, yes: yes, strict: .of(strict, all: strictAll), unchecked: unchecked, verb: "spend") { _ in
            let trimmed = comment?.trimmingCharacters(in: .whitespacesAndNewlines)
            return .spend(product: product, amount: amount, comment: trimmed?.isEmpty == false ? trimmed : nil)
        }.run()
    }
}

/// `reiterate-shop buy --bundle ID [--transaction-id N] --yes`.
struct Buy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "buy",
        abstract: "Credit a cheer bundle bought in the App Store, then check the balance.",
        discussion: """
            Without --transaction-id a new one is made and printed, so that a replay can be tried
            (`--transaction-id N` again: the server must refuse it with 409 and leave the balance).
            Refused without --yes, and always in a read-only environment. Exit status as for `spend`.
            """
    )

    @Option(help: "The bundle's App Store identifier (com.reiterate.cheer.N: N cheer).") var bundle: String
    @Option(name: [.customLong("transaction-id"), .customLong("transaction")], parsing: .unconditional,
            help: ArgumentHelp("The App Store transaction id (a whole number; with --unchecked also as typed: -3, abc, or '\"42\"' to send 42 as a JSON string).",
                               valueName: "id")) var transactionID: String?
    @Flag(help: "Do it (without this flag nothing is sent).") var yes = false
    @Flag(help: ArgumentHelp("Exit 65 when a check of the write failed or a response about it deviated from the contract (its answer, its verification, the reads it depends on); --strict=all: any response.",
                             valueName: "strict[=all]")) var strict = false
    @Flag(name: .customLong("strict-all"), help: ArgumentHelp("The same as --strict=all.", visibility: .hidden)) var strictAll = false
    @Flag(help: "Send it as typed: no input check (an identifier that is not one of the environment's bundles, a transaction id that is not a whole number).") var unchecked = false
    @OptionGroup var connection: ConnectionOptions

    /// The id as given: a whole number, or (only with --unchecked) anything else as typed (`TransactionID(typed:)`).
    func validate() throws {
        guard let transactionID else { return }
        guard UInt64(transactionID) != nil || (unchecked && TransactionID(typed: transactionID) != nil) else {
            throw ValidationError("--transaction-id must be a whole number from 0 to 18446744073709551615 (add --unchecked to send it as typed)")
        }
    }

    func run() async throws {
        let made = UInt64.random(in: 1...UInt64.max)
        let transaction = transactionID.flatMap { TransactionID(typed: $0) } ?? .number(made)
        // The id it made, after the verdict (which is stdout's first line).
        let footer = transactionID == nil
            ? "transaction id \(made): made up by this tool, no App Store purchase has it (give --transaction-id for a real one; replay this with --transaction-id \(made))" : nil
        // With the App Store configured, a real transaction's expected credit comes from its signed record.
        var paid: ShopWrite.Purchase.Paid?
        if yes, transactionID != nil, case let .number(n) = transaction, let settings = try? connection.settings(), settings.appStore != nil, !settings.readOnly {
            paid = try await Self.paidInAppStore(String(n), settings: settings)
        }
        let record = paid
        try await WriteRun(connection: connection, yes: yes, strict: .of(strict, all: strictAll), unchecked: unchecked, verb: "buy", footer: footer) { _ in
            .purchase(ShopWrite.Purchase(identifier: bundle, transactionID: transaction, paid: record))
        }.run()
    }

    /// What the App Store's record of `id` says was paid (verified), said on stderr; nil when it cannot
    /// say (unknown, not believed, not readable), which is said too: the credit expected is then the bundle's.
    static func paidInAppStore(_ id: String, settings: ResolvedSettings) async throws -> ShopWrite.Purchase.Paid? {
        let record: AppStoreRecordRead
        do { record = try await AppStoreSetup.record(id, settings: settings) } catch { throw fail(error) }
        Terminal.err(record.line)
        return record.paid
    }
}

/// What `spend` and `buy` share: settings, the refusals, the write through the view models (the same
/// update and verification as the TUI's), and the report.
struct WriteRun {
    let connection: ConnectionOptions
    let yes: Bool
    let strict: StrictScope
    /// `--unchecked`: the client's own input checks are off for this write.
    let unchecked: Bool
    let verb: String
    /// A line after the verdict and its checks (`buy`: the transaction id it made).
    var footer: String? = nil
    let kind: @Sendable (AppState) -> ShopWrite

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        let place = "\(settings.environment.uppercased()) as \(settings.user)"
        guard !settings.readOnly else {
            throw fail(CLIError(message: "\(settings.environment.uppercased()) is read-only: \(verb) is refused", exitCode: .config))
        }
        guard yes else {
            throw fail(CLIError(message: "\(verb) changes the balance on \(place): add --yes to do it", exitCode: .usage))
        }
        var status: Int32 = 0
        do {
            status = try await connection.withClient(settings, logger: logger) { client in
                let cache = CacheStore(directory: connection.resolvedCacheDir, logger: logger)
                let done: WriteSession.Done
                do {
                    done = try await WriteSession(verb: verb, strict: strict != .off, strictAll: strict == .all, unchecked: unchecked, footer: footer, kind: kind)
                        .run(client: client, cache: cache, context: settings.shopContext, lines: .standard)
                } catch let stop as WriteSession.Stop {
                    throw CLIError(message: stop.words, exitCode: stop.usage ? .usage : .unavailable)
                }
                return ExitStatus.of(done.outcome, error: done.error, strict: strict != .off, findings: done.findings)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
