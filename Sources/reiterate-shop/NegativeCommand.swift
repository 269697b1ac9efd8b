import AppStoreRecord
import ArgumentParser
import Foundation
import JSONTokens
import ShopAPI
import ShopSettings
import ShopProbes
import ShopViewModels
import TerminalText

/// `reiterate-shop negative [--env NAME] [--user ID] [--json] [--yes] [--only CASES]`: writes the shop
/// must refuse, each checked for a 4xx refusal and for nothing changed (docs/checks.md, Negative tests).
struct NegativeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "negative",
        abstract: "Send writes the shop must refuse; check each is refused (4xx) and changed nothing.",
        discussion: """
            Without --yes it lists the cases and sends nothing; always refused in a read-only environment.
            For each case: the user's balance and newest history entry, the total of the pack the case's body
            names (none for a purchase) and a second user's balance are read before and after; a read that
            failed on either side is "not known", never a change. The pack's total and the second user's
            balance count only when they moved by the case's amount; any other move is "moved meanwhile".
            One line a case: `refused 400 (rq-…)`, `ACCEPTED: …` with what changed, `APPLIED, answered …`
            (a 5xx or no answer, and the user's balance or newest entry moved by the case's amount), or
            `not judged: …` when the answer says nothing about the write (401, 407, 408, 429, 5xx, no answer)
            or the case was skipped. An accepted or applied case, or a refused one with a side effect, is a
            finding, also a `warning:` line. The contract watchdog's
            findings on the answers are `warning:` lines too; they change no case's verdict.
            Exit status: 0 every case refused with nothing changed; 65 a finding; 69 no finding but a case not
            judged (not a pass: run it again), or the reads before failed; 78 read-only or a bad setting.
            """
    )

    @Flag(help: "Send them (without this flag the cases are listed and nothing is sent).") var yes = false
    @Flag(help: "One JSON object a case.") var json = false
    @Option(help: ArgumentHelp("Only these cases (comma-separated names, as listed).", valueName: "cases")) var only: String?
    @Option(help: ArgumentHelp("At most this many requests a second (a shared staging sees no burst); 0: no pacing.", valueName: "n")) var pace: Double = 10
    @Option(name: .customLong("transaction"), help: ArgumentHelp("With an [appstore] table: an App Store transaction id of the sandbox tester (its purchases feed the App Store cases).", valueName: "TX"))
    var transaction: String?
    @Option(name: .customLong("other-transaction"), help: ArgumentHelp("With an [appstore] table: a transaction id of another sandbox tester (the case appstore-other-tester).", valueName: "TX"))
    var otherTransaction: String?

    func validate() throws {
        guard pace >= 0, pace <= 1000 else { throw ValidationError("--pace takes 0 (no pacing) to 1000 requests a second") }
        for (flag, id) in [("--transaction", transaction), ("--other-transaction", otherTransaction)] {
            if let id, !AppStoreRead.isTransactionID(id) { throw ValidationError("\(flag) must be an App Store transaction id (1 to 20 digits)") }
        }
    }
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        guard !settings.readOnly else {
            throw fail(CLIError(message: "\(settings.environment.uppercased()) is read-only: negative tests are refused", exitCode: .config))
        }
        let bundles = zip(settings.bundleIdentifiers, settings.bundles).map { CheerBundle(identifier: $0, cheer: $1) }
        let cases: [NegativeCase]
        do {
            cases = try NegativeCase.select(NegativeCase.catalogue(bundles: bundles) + (settings.appStore == nil ? [] : NegativeCase.appStoreCases(bundles: bundles)), only: only)
        } catch { throw fail(CLIError(message: error.words, exitCode: .usage)) }
        let second = settings.users.first { $0 != settings.user } ?? (settings.user == "qa-whale" ? "qa-alice" : "qa-whale")
        guard yes else {
            Terminal.out(try NegativeCase.listing(cases, json: json))
            // With --json, stdout holds the cases alone; the summary goes to stderr.
            let summary = "\(cases.count) cases, nothing sent: add --yes to send them to \(settings.environment.uppercased()) as \(settings.user) (second user \(second))\n"
            if json { Terminal.err(summary) } else { Terminal.out(summary) }
            return
        }
        var appStore: AppStoreFacts?
        if settings.appStore != nil {
            let setup: AppStoreSetup
            do { setup = try AppStoreSetup(settings) } catch { throw fail(error) }
            let read = await AppStoreFacts.read(setup.client, transaction: transaction, other: otherTransaction)
            await setup.close()
            switch read {
            case let .success(facts): appStore = facts
            case let .failure(failure): throw fail(CLIError(message: failure.words + "; no case was sent", exitCode: .unavailable))
            }
        }
        var tally = NegativeRun.Tally()
        let json = self.json
        do {
            tally = try await connection.withClient(settings, logger: logger) { client in
                let run = NegativeRun(client: client, user: settings.user, second: second, bundles: bundles, pacer: Pacer(perSecond: pace), appStore: appStore)
                var tally = try await run.run(cases) { event in
                    switch event {
                    case let .line(line, text): Terminal.out(json ? ((try? Output.jsonLine(line)) ?? "") : text)
                    case let .note(text), let .warning(text): Terminal.err(text)
                    case let .finding(finding): Terminal.err(finding.warningLine); SessionJournal.record(finding)
                    }
                }
                // The contract watchdog's findings on the run's own answers (an error body that is not the Error
                // schema …), grouped, as `spend` and `buy` report theirs: warning lines that change no verdict.
                _ = reportFindings(await client.exchangesWithPinsSettled(), lines: .standard)
                if let lag = tally.lag { Terminal.err(lag.warningLine); SessionJournal.record(lag) }
                if !json {
                    var summary = "\(tally.findings) finding\(tally.findings == 1 ? "" : "s")"
                    if tally.notJudged > 0 { summary += ", \(tally.notJudged) not judged" }
                    Terminal.out(summary + "\n")
                }
                tally.lag = nil
                return tally
            }
        } catch let notSent as NegativeRun.NotSent {
            throw fail(CLIError(message: notSent.words, exitCode: notSent.failure.map { .of($0) } ?? .unavailable))
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if tally.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
        if tally.notJudged > 0 { throw ExitCode(ExitStatus.unavailable.rawValue) }
    }
}
