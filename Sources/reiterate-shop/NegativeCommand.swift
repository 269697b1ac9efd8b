import AppStoreRecord
import ArgumentParser
import Foundation
import JSONTokens
import ShopAPI
import ShopSettings
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
        var cases = NegativeCase.catalogue(bundles: bundles) + (settings.appStore == nil ? [] : NegativeCase.appStoreCases(bundles: bundles))
        if let only {
            let wanted = Set(only.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let unknown = wanted.subtracting(cases.map(\.name))
            guard unknown.isEmpty else {
                throw fail(CLIError(message: "no case named \(unknown.sorted().joined(separator: ", ")); cases: \(cases.map(\.name).joined(separator: ", "))",
                                    exitCode: .usage))
            }
            cases = cases.filter { wanted.contains($0.name) }
        }
        let second = settings.users.first { $0 != settings.user } ?? (settings.user == "qa-whale" ? "qa-alice" : "qa-whale")
        guard yes else {
            for c in cases {
                if json {
                    Terminal.out(try Output.jsonLine(NegativeCase.Listed(c)))
                } else {
                    Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(c.what)  [\(c.source.text)]\n")
                }
            }
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
        do {
            tally = try await connection.withClient(settings, logger: logger) { client in
                try await NegativeRun(client: client, user: settings.user, second: second, bundles: bundles, json: json,
                                      pacer: Pacer(perSecond: pace), appStore: appStore).run(cases)
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if tally.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
        if tally.notJudged > 0 { throw ExitCode(ExitStatus.unavailable.rawValue) }
    }
}

/// One run of the catalogue against a client.
struct NegativeRun {
    let client: ShopClient
    let user: String
    let second: String
    let bundles: [CheerBundle]
    let json: Bool
    /// Every request waits its turn: at most `--pace` a second.
    let pacer: Pacer
    /// The App Store's facts, when the environment has an App Store table.
    var appStore: AppStoreFacts?

    struct Line: Encodable {
        var name: String
        /// `refused`, `accepted`, `applied` (a 5xx or no answer, and the write applied on the user) or
        /// `not-judged` (also a case skipped).
        var verdict: String
        var refused: Bool
        var status: Int?
        var requestID: String?
        var changed: [String]
        /// What moved by another amount than the write's (other testers' activity): not a change.
        var meanwhile: [String]
        /// What could not be compared (a read failed before or after).
        var unknown: [String]
        var finding: String?
        /// Why a case was not judged.
        var why: String?
    }

    /// Cases with a finding, and cases whose answer did not judge the write.
    struct Tally {
        var findings = 0
        var notJudged = 0
    }

    func run(_ cases: [NegativeCase]) async throws -> Tally {
        let first = try await read()
        // The state the last reads settled on: what the next case's reads before are expected to show.
        var settled = first
        guard let balance = first.balance else {
            let why = first.failure.map { ErrorText.line($0) } ?? "the balance of \(user) could not be read"
            throw CLIError(message: "\(why); no case was sent", exitCode: first.failure.map { .of($0) } ?? .unavailable)
        }
        guard let pack = first.packs?.filter({ $0.value != nil }).keys.sorted().first else {
            throw CLIError(message: "the pack list could not be read: no case was sent", exitCode: .unavailable)
        }
        let bundle = bundles.first?.identifier ?? "com.reiterate.cheer.50"
        // The one write that is meant to be taken: a purchase whose transaction id the replay cases resend.
        // With the App Store, a real one of the tester's, with its own product (a 409 means it was credited
        // before, which serves the replay cases as well); else a fresh id.
        var credited: UInt64 = 0
        var creditedBundle = bundle
        var setupFailed: String?
        if cases.contains(where: { $0.name.hasPrefix("transaction-replayed") || $0.name == "transaction-as-text" }) {
            let real = appStore?.setup
            let id = real.flatMap { UInt64($0.transactionID) } ?? UInt64.random(in: 1_000_000...UInt64(Int64.max))
            let product = real?.productID ?? bundle
            do {
                await pacer.turn()
                let answered = try await client.send(PurchaseCheer(identifier: product, transactionID: id, user: user))
                credited = id
                creditedBundle = product
                settled.balance = answered.balance  // the server's own word on the state after it
                Terminal.err("note: setup: bought \(Sanitizer.line(product)) with transaction \(id) (the replay cases resend it)\n")
            } catch let error as ShopAPIError where error.status == 409 && real != nil {
                credited = id
                creditedBundle = product
                Terminal.err("note: setup: transaction \(id) of the App Store was credited before (409); the replay cases resend it\n")
            } catch let error as ShopAPIError {
                setupFailed = Sanitizer.line(ErrorText.line(error))
                Terminal.err("warning: setup: the purchase the replay cases resend was not taken: \(ErrorText.line(error)); they are skipped (not judged)\n")
            }
            if real == nil, appStore != nil, setupFailed != nil {
                setupFailed = (setupFailed ?? "") + "; give --transaction so that a real purchase of the tester is used"
            }
        }
        let facts = NegativeFacts(pack: Self.quoted(pack), balance: balance, bundle: Self.quoted(bundle), credited: credited,
                                  creditedBundle: Self.quoted(creditedBundle), setupFailed: setupFailed, appStore: appStore)
        var lag = LaggingReads()
        var tally = Tally()
        // Earlier cases' writes that were taken (or may have been) and that no read has shown yet: a change a
        // later case's reads show is theirs when they explain it (by amount and product), never the later case's.
        var unseen: [(name: String, effect: NegativeEffect, answered: Int?)] = []
        if credited != 0, let answered = settled.balance, answered != balance {
            let credit = bundles.first { $0.identifier == creditedBundle }?.cheer ?? answered.minusSaturating(balance)
            unseen.append(("the setup purchase", NegativeEffect(balanceMoves: [credit], packRises: []), answered))
        }
        for c in cases {
            if let why = c.needs(facts) {
                // Not sent: not a pass. Counted as not judged.
                tally.notJudged += 1
                if json {
                    Terminal.out(try Output.jsonLine(Line(name: c.name, verdict: "not-judged", refused: false, status: nil, requestID: nil, changed: [],
                                                          meanwhile: [], unknown: [], finding: nil, why: why)))
                } else {
                    Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) not judged: \(Sanitizer.line(why))\n")
                }
                continue
            }
            let packID: String? = switch c.pack {
            case .none: nil
            case .tested: pack
            case let .named(id): id
            }
            // Reads that settle (docs/checks.md, "Settled reads"): a read that disagrees with the state
            // last settled on is read again, at most three reads over 1.5 s, the latest kept.
            let before = try await settledRead(expecting: settled, pack: packID, lag: &lag)
            // A read that shows the balance a write answered has seen that write (and every one before it).
            if let seen = unseen.lastIndex(where: { $0.answered != nil && $0.answered == before.balance }) { unseen.removeFirst(seen + 1) }
            let target = c.unknownUser ? "qa-negative-nobody-\(UInt32.random(in: 0...UInt32.max))" : user
            var now = facts
            // The balance a case's body is built from (an overspend: one more than it): the higher of what the
            // reads settled on and the latest a write answered while no read has shown it yet (the reads lag).
            now.balance = max(unseen.last?.answered ?? Int.min, before.balance ?? balance)
            let body = c.body(now)
            var status: Int?
            var requestID: String?
            var answeredBalance: Int?
            let answer: NegativeAnswer
            do {
                let sent: (response: CheerBalance, requestID: String?)
                await pacer.turn()
                switch c.write {
                case SpendCheer.endpoint.operation: sent = try await client.sendAnswered(RawJSONWrite<SpendCheer>(json: body, user: target))
                default: sent = try await client.sendAnswered(RawJSONWrite<PurchaseCheer>(json: body, user: target))
                }
                status = 200
                requestID = sent.requestID
                answeredBalance = sent.response.balance
                answer = .accepted("HTTP 2xx, balance \(Wording.grouped(sent.response.balance))")
            } catch let error as ShopAPIError {
                status = error.status
                requestID = error.requestID
                // A 409 on an App Store case says the transaction was credited before: the check the case
                // is about (the App Store's) was never reached.
                answer = c.conflictSaysNothing && error.status == 409
                    ? .notJudged("409: credited before, so the App Store check was not reached (buy a fresh purchase in the sandbox)")
                    : NegativeAnswer.of(error)
            }
            let after = try await settledRead(expecting: before, pack: packID, lag: &lag)
            settled = after
            let effect = NegativeEffect(body: body, write: c.write, bundles: bundles)
            var (changed, unknown, meanwhile) = before.changes(to: after, pack: packID, effect: effect)
            // What an earlier case's write explains is that write's, shown late by a lagging read: named, and
            // no finding of this case's.
            var late: String?
            if !changed.isEmpty, before.explained(after, by: unseen.map(\.effect), pack: packID) {
                late = "; an earlier case's write showed only now (\(unseen.map(\.name).joined(separator: ", ")), a lagging read): \(changed.joined(separator: "; "))"
                changed = []
                unseen = []
                lag.noteLate(before.requestIDs + after.requestIDs)
            }
            let reads = "reads before \(before.requestIDs.joined(separator: ", ")); after \(after.requestIDs.joined(separator: ", "))"
            let id = requestID.map { " (\(Sanitizer.line($0)))" } ?? ""
            let notKnown = (meanwhile.isEmpty ? "" : "; moved meanwhile (not this write's amount): \(meanwhile.joined(separator: "; "))")
                + (unknown.isEmpty ? "" : "; not known (a read failed): \(unknown.joined(separator: ", "))")
            var line: String
            var finding: String?
            var why: String?
            var applied = false
            switch answer {
            case let .refused(code) where changed.isEmpty:
                line = "refused \(code)\(id)\(late ?? "")\(notKnown)"
            case let .refused(code):
                line = "refused \(code)\(id), but it changed: \(changed.joined(separator: "; "))\(notKnown) — \(reads)"
                finding = "refused, with a side effect: \(changed.joined(separator: "; "))"
            case let .accepted(said):
                line = "ACCEPTED\(id): \(said); \(changed.isEmpty ? "nothing changed" : changed.joined(separator: "; "))\(notKnown) — \(reads)"
                finding = "accepted (\(said))" + (changed.isEmpty ? "" : ": \(changed.joined(separator: "; "))")
            case let .notJudged(reason) where before.applied(to: after, effect: effect):
                // A 5xx or no answer, and the user's balance or newest entry moved by the case's amount: the
                // server applied a write it must refuse, and answered an error.
                applied = true
                line = "APPLIED, answered \(reason)\(id): \(changed.joined(separator: "; "))\(notKnown) — \(reads)"
                finding = "applied, answered \(reason): \(changed.joined(separator: "; "))"
            case let .notJudged(reason):
                // Neither a pass nor a finding: the server did not decide on the write.
                why = reason
                line = "not judged: \(reason)\(id)"
                if !changed.isEmpty { line += "; meanwhile it changed: \(changed.joined(separator: "; ")) — \(reads)" }
                line += notKnown
                tally.notJudged += 1
            }
            // A write taken (or maybe taken) whose effect its own reads did not show: a later case's reads may.
            var taken = false
            switch answer {
            case .accepted: taken = true
            case .notJudged: taken = status == nil || (500..<600).contains(status ?? 0)
            case .refused: taken = false
            }
            if taken, changed.isEmpty { unseen.append((c.name, effect, answeredBalance)) }
            if let finding {
                tally.findings += 1
                Terminal.err("warning: negative \(c.name): \(Sanitizer.line(c.what)) must be refused (\(c.source.text)); \(Sanitizer.line(finding))\(id)\n")
            }
            if json {
                let verdict = switch answer {
                case .refused: "refused"
                case .accepted: "accepted"
                case .notJudged: applied ? "applied" : "not-judged"
                }
                let refused = if case .refused = answer { true } else { false }
                Terminal.out(try Output.jsonLine(Line(name: c.name, verdict: verdict, refused: refused, status: status, requestID: requestID, changed: changed,
                                                      meanwhile: meanwhile, unknown: unknown, finding: finding, why: why)))  // one line, newline included
            } else {
                Terminal.out("\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(Sanitizer.line(line))\n")
            }
        }
        // The contract watchdog's findings on the run's own answers (an error body that is not the Error
        // schema …), grouped, as `spend` and `buy` report theirs: warning lines that change no verdict.
        _ = reportFindings(await client.exchangesWithPinsSettled())
        if let line = lag.warning(user: user) {
            // The server's reads went back to an older state: one finding however often, named once.
            tally.findings += 1
            Terminal.err(line)
        }
        if !json {
            var summary = "\(tally.findings) finding\(tally.findings == 1 ? "" : "s")"
            if tally.notJudged > 0 { summary += ", \(tally.notJudged) not judged" }
            Terminal.out(summary + "\n")
        }
        return tally
    }

    /// Reads until they agree with `expected`: at most three reads over 1.5 s, the latest kept (two reads
    /// that agree prove nothing while a replica lags: its stale answers agree too). Reads that disagree,
    /// then come back to what was expected, went back to an older state or forward again: noted in `lag`.
    func settledRead(expecting expected: NegativeReads, pack: String?, lag: inout LaggingReads) async throws -> NegativeReads {
        var reads = [try await read()]
        for pause in [0.5, 1.0] where !reads[reads.count - 1].agrees(with: expected, pack: pack) {
            try? await Task.sleep(for: .milliseconds(Int(pause * 1000)))  // the pause between reads (a pace, not a synchronisation)
            reads.append(try await read())
        }
        if reads.count > 1 { lag.note(reads, expected: expected, pack: pack) }
        return reads[reads.count - 1]
    }

    /// The reads before and after a case; a read that fails is nil (not known).
    func read() async throws -> NegativeReads {
        var ids: [String] = []
        func note(_ id: String?) { if let id { ids.append(id) } }
        var reads = NegativeReads(balance: nil, history: nil, packs: nil, second: nil, requestIDs: [])
        await pacer.turn()
        do {
            let b = try await client.sendAnswered(Balance(user: user))
            reads.balance = b.response.balance
            note(b.requestID)
        } catch let error as ShopAPIError {
            reads.failure = error
        } catch {}
        await pacer.turn()
        if let h = try? await client.sendAnswered(CheerHistory(user: user, page: 1, perPage: 1)) {
            var newest: String?
            var newestAmount: Int?
            var newestProduct: String?
            switch h.response.items.first {
            case let .entry(e)?: newest = "\(e.id ?? "no id") (\(Wording.grouped(e.amount)) on \(e.product))"; newestAmount = e.amount; newestProduct = e.product
            case let .unreadable(u)?: newest = "\(u.id ?? "no id") (unreadable)"
            case nil: newest = nil
            }
            reads.history = NegativeReads.History(total: h.response.totalCount, newest: newest, newestAmount: newestAmount, newestProduct: newestProduct)
            note(h.requestID)
        }
        await pacer.turn()
        if let p = try? await client.sendAnswered(AudioPacks()) {
            var totals: [String: Int?] = [:]
            for pack in p.response.packs where totals[pack.identifier] == nil { totals[pack.identifier] = .some(pack.cheerTotal) }
            for entry in p.response.unreadable { if let id = entry.id, totals[id] == nil { totals[id] = .some(nil) } }
            reads.packs = totals
            note(p.requestID)
        }
        await pacer.turn()
        if let s = try? await client.sendAnswered(Balance(user: second)) { reads.second = s.response.balance; note(s.requestID) }
        reads.requestIDs = ids.map(Sanitizer.line)
        return reads
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var w = JSONWriter()
        w.string(text)
        return w.text
    }
}

/// Reads of the user's state that disagreed with each other with no write taken between them (a lagging
/// replica): one `stale-read` finding for the run, with how often and the reads' request ids.
struct LaggingReads {
    var count = 0
    var first: [String] = []
    var last: [String] = []

    /// Reads of one moment that needed reading again: a finding when they moved and came to agree with
    /// what was expected, or never settled.
    mutating func note(_ reads: [NegativeReads], expected: NegativeReads, pack: String?) {
        guard reads.count > 1 else { return }
        let settledOnExpected = reads[reads.count - 1].agrees(with: expected, pack: pack)
        let moved = zip(reads, reads.dropFirst()).contains { !$0.agrees(with: $1, pack: pack) }
        guard settledOnExpected || moved else { return }  // a real change, read the same three times: not a lag
        count += 1
        let ids = reads.flatMap(\.requestIDs)
        if first.isEmpty { first = ids }
        last = ids
    }

    /// Reads that showed an earlier write only after a later one was sent: the same lag, counted once more.
    mutating func noteLate(_ ids: [String]) {
        count += 1
        if first.isEmpty { first = ids }
        last = ids
    }

    func warning(user: String) -> String? {
        guard count > 0 else { return nil }
        let times = count == 1 ? "once" : "\(count) times"
        let again = count > 1 ? "; last \(last.joined(separator: ", "))" : ""
        return "warning: GET reads of \(Sanitizer.line(user)): [stale-read] expected reads of one state to agree when no write was taken, "
            + "got reads that answered another state, then this one (a lagging replica?), \(times): first \(first.joined(separator: ", "))\(again)\n"
    }
}

/// At most `perSecond` turns a second, one after another: each request of `negative` takes a turn before it
/// is sent (0: no pacing).
actor Pacer {
    let interval: Duration
    private var next = ContinuousClock.now

    init(perSecond: Double) {
        interval = perSecond > 0 ? .milliseconds(Int((1000 / perSecond).rounded(.up))) : .zero
    }

    func turn() async {
        guard interval > .zero else { return }
        let now = ContinuousClock.now
        let at = max(now, next)
        next = at + interval
        if at > now { try? await Task.sleep(until: at, clock: .continuous) }  // the pace itself, not a synchronisation
    }
}
