import AppStoreRecord
import Foundation
import JSONTokens
import ShopAPI
import ShopModel
import ShopViewModels
import TerminalText

/// One run of the catalogue against a client.
public struct NegativeRun {
    let client: ShopClient
    let user: String
    let second: String
    let bundles: [CheerBundle]
    /// Every request waits its turn: at most `--pace` a second.
    let pacer: Pacer
    /// The App Store's facts, when the environment has an App Store table.
    var appStore: AppStoreFacts?

    public init(client: ShopClient, user: String, second: String, bundles: [CheerBundle], pacer: Pacer, appStore: AppStoreFacts?) {
        self.client = client
        self.user = user
        self.second = second
        self.bundles = bundles
        self.pacer = pacer
        self.appStore = appStore
    }

    /// What a run tells as it goes: a case's line (as text, and as `--json` writes it), a note on its setup,
    /// and a finding's warning line (each ends with a newline).
    public enum Event: Sendable {
        case line(Line, text: String)
        case note(String)
        case warning(String)
        /// A case's finding (a write the shop must refuse, taken), as the one finding type: the command
        /// prints its `warningLine`.
        case finding(ShopFinding)
    }

    /// Why no case was sent: the reads before failed (with the failure, when an answer said why).
    public struct NotSent: Error, Sendable {
        public var words: String
        public var failure: ShopAPIError?
    }

    public struct Line: Encodable, Sendable {
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
        /// The case's finding as the one finding type (`shop_finding`, as in every JSON output that carries one).
        var shopFinding: ShopFinding?

        enum CodingKeys: String, CodingKey {
            case name, verdict, refused, status, requestID, changed, meanwhile, unknown, finding, why
            case shopFinding = "shop_finding"
        }
    }

    /// Cases with a finding, and cases whose answer did not judge the write.
    public struct Tally: Sendable {
        public var findings = 0
        public var notJudged = 0
        /// The lagging reads' one finding (counted in `findings`): the command prints its `warningLine`.
        public var lag: ShopFinding?
        public init() {}
    }

    /// Sends each case and judges it; `tell` gets each event as it comes. The watchdog's findings on the
    /// answers and the summary are the caller's to tell after.
    public func run(_ cases: [NegativeCase], tell: (Event) -> Void) async throws -> Tally {
        let first = try await read()
        // The state the last reads settled on: what the next case's reads before are expected to show.
        var settled = first
        guard let balance = first.balance else {
            let why = first.failure.map { ErrorText.line($0) } ?? "the balance of \(user) could not be read"
            throw NotSent(words: "\(why); no case was sent", failure: first.failure)
        }
        guard let pack = first.packs?.filter({ $0.value != nil }).keys.sorted().first else {
            throw NotSent(words: "the pack list could not be read: no case was sent", failure: nil)
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
                tell(.note("note: setup: bought \(Sanitizer.line(product)) with transaction \(id) (the replay cases resend it)\n"))
            } catch let error as ShopAPIError where error.status == 409 && real != nil {
                credited = id
                creditedBundle = product
                tell(.note("note: setup: transaction \(id) of the App Store was credited before (409); the replay cases resend it\n"))
            } catch let error as ShopAPIError {
                setupFailed = Sanitizer.line(ErrorText.line(error))
                tell(.warning("warning: setup: the purchase the replay cases resend was not taken: \(ErrorText.line(error)); they are skipped (not judged)\n"))
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
                tell(.line(Line(name: c.name, verdict: "not-judged", refused: false, status: nil, requestID: nil, changed: [], meanwhile: [], unknown: [],
                                finding: nil, why: why),
                           text: "\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) not judged: \(Sanitizer.line(why))\n"))
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
            let one = finding.map {
                ShopFinding(kind: .write(.refusalExpected), subject: "negative \(c.name)", blame: .server, expected: "\(c.what) refused (\(c.source.text))",
                            actual: $0, requestIDs: requestID.map { [$0] } ?? [])
            }
            if let one {
                tally.findings += 1
                tell(.finding(one))
            }
            let verdict = switch answer {
            case .refused: "refused"
            case .accepted: "accepted"
            case .notJudged: applied ? "applied" : "not-judged"
            }
            let refused = if case .refused = answer { true } else { false }
            tell(.line(Line(name: c.name, verdict: verdict, refused: refused, status: status, requestID: requestID, changed: changed,
                            meanwhile: meanwhile, unknown: unknown, finding: finding, why: why, shopFinding: one),
                       text: "\(c.name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(Sanitizer.line(line))\n"))
        }
        if let finding = lag.finding(user: user) {
            // The server's reads went back to an older state: one finding however often, named once.
            tally.findings += 1
            tally.lag = finding
        }
        return tally
    }

    /// Reads until they agree with `expected`, by the one rule (`ReadRule`: at most three reads over 1.5 s),
    /// the latest kept (two reads that agree prove nothing while a replica lags: its stale answers agree
    /// too). Reads that disagree, then come back to what was expected, went back to an older state or
    /// forward again: noted in `lag`.
    func settledRead(expecting expected: NegativeReads, pack: String?, lag: inout LaggingReads) async throws -> NegativeReads {
        let reads = try await ReadRule(expecting: { $0.agrees(with: expected, pack: pack) }).reads { try await read() }
        if reads.all.count > 1 { lag.note(reads.all, expected: expected, pack: pack) }
        // A balance the rule settled on (what was expected, or two reads that agree): the session's header follows it.
        if let balance = reads.last.balance, reads.all.count == 1 || reads.all.suffix(2).allSatisfy({ $0.balance == balance }) {
            SessionJournal.active?.settled(user: user, balance: balance, base: client.configuration.baseURL)
        }
        return reads.last
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
    public static func quoted(_ text: String) -> String {
        var w = JSONWriter()
        w.string(text)
        return w.text
    }
}

/// Reads of the user's state that disagreed with each other with no write taken between them (a lagging
/// replica): one `stale-read` finding for the run, with how often and the reads' request ids.
public struct LaggingReads: Sendable {
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

    /// The run's one `stale-read` finding, with the first lagging reads' request ids and the last's.
    func finding(user: String) -> ShopFinding? {
        guard count > 0 else { return nil }
        let times = count == 1 ? "once" : "\(count) times"
        var finding = ShopFinding(kind: .contract(.staleRead), subject: "GET reads of \(user)", blame: .server,
                                  expected: "reads of one state to agree when no write was taken",
                                  actual: "reads that answered another state, then this one (a lagging replica?), \(times)",
                                  requestIDs: first + (count > 1 ? last : []))
        // The first lagging reads and the last, each named as such.
        finding.recurrence = "first " + first.joined(separator: ", ") + (count > 1 ? "; last " + last.joined(separator: ", ") : "")
        return finding
    }
}

/// At most `perSecond` turns a second, one after another: each request of `negative` takes a turn before it
/// is sent (0: no pacing).
public actor Pacer {
    let interval: Duration
    private var next = ContinuousClock.now

    public init(perSecond: Double) {
        interval = perSecond > 0 ? .milliseconds(Int((1000 / perSecond).rounded(.up))) : .zero
    }

    public func turn() async {
        guard interval > .zero else { return }
        let now = ContinuousClock.now
        let at = max(now, next)
        next = at + interval
        if at > now { try? await Task.sleep(until: at, clock: .continuous) }  // the pace itself, not a synchronisation
    }
}
