import Foundation
import JSONTokens
import ShopAPI
import ShopModel
import ShopViewModels
import TerminalText

/// What became of one case.
public struct ExploreOutcome: Sendable {
    public enum Verdict: String, Sendable, Codable {
        case passed, finding
        /// The answers say nothing either way (an answer lost, a 5xx on a write, the budget spent).
        case notJudged = "not-judged"
    }

    public var exploreCase: ExploreCase
    public var verdict: Verdict
    public var findings: [ShopFinding] = []
    /// Why it was not judged; what it covered when it passed with a limit (`read 20 of 31 pages`).
    public var note: String?
    /// The exchanges it sent (the client's serials), first to last: its curl script.
    public var serials: ClosedRange<Int>?
    /// The steps it was shrunk to, when it failed with more than one write.
    public var shrunk: [ExploreStep]?
    /// The explore user's balance when its writes started (what a smaller sequence must start like to count).
    public var startBalance: Int?

    init(_ c: ExploreCase, _ verdict: Verdict, findings: [ShopFinding] = [], note: String? = nil) {
        exploreCase = c
        self.verdict = verdict
        self.findings = findings
        self.note = note
    }
}

/// A campaign's run against one client: the facts it starts from, then each case judged in turn.
public struct ExploreRun: Sendable {
    let wire: ExploreWire
    /// The user reads are made as.
    let reader: String
    /// The user writes are made as (the environment's first explore user); nil: no write is sent.
    let writer: String?
    let bundles: [CheerBundle]
    /// The expired token of the auth family (REITERATE_EXPIRED_TOKEN), never printed.
    let expiredToken: String?
    let serial: @Sendable () async -> Int
    /// The explore user's balance as the campaign last settled it (or as its own writes' answers leave it).
    let last = LastBalance()

    public init(wire: ExploreWire, reader: String, writer: String?, bundles: [CheerBundle], expiredToken: String?,
                serial: @escaping @Sendable () async -> Int) {
        self.wire = wire
        self.reader = reader
        self.writer = writer
        self.bundles = bundles
        self.expiredToken = expiredToken
        self.serial = serial
    }

    /// What the run tells as it goes.
    public enum Event: Sendable {
        /// Case `index` of `count` starts.
        case starting(index: Int, count: Int, ExploreCase)
        case outcome(ExploreOutcome)
    }

    /// The live facts a case resolves against: the tested pack and the history's last page.
    struct Facts: Sendable {
        var pack: String
        var lastPage: Int
    }

    /// The campaign could not start: the reads it starts from failed.
    public struct NotStarted: Error, Sendable { public var words: String }

    /// Runs `cases` in order; a cancelled task (Ctrl-C) stops between cases with the outcomes so far.
    public func run(_ cases: [ExploreCase], shrink: Bool = true, tell: @Sendable (Event) async -> Void) async throws -> [ExploreOutcome] {
        let facts = try await startingFacts()
        var outcomes: [ExploreOutcome] = []
        for (i, c) in cases.enumerated() {
            if Task.isCancelled { break }
            await tell(.starting(index: i + 1, count: cases.count, c))
            var outcome: ExploreOutcome
            if c.writes, writer == nil {
                outcome = ExploreOutcome(c, .notJudged, note: "not sent: the environment names no explore user to write as")
            } else {
                let first = await serial()
                await last.startCase()
                outcome = await judged(c, facts: facts)
                outcome.startBalance = await last.caseStart
                // A case that started below 0 starts where an earlier finding left the user: its findings follow from it,
                // and it is not shrunk (a smaller sequence from there says nothing a fresh user would show).
                if let start = outcome.startBalance, start < 0 {
                    for i in outcome.findings.indices where outcome.findings[i].causedBy == nil {
                        outcome.findings[i].causedBy = "follows from an earlier finding: the case started from a balance of \(start), below 0"
                    }
                }
                let last = await serial() - 1
                if last >= first { outcome.serials = first...last }
                // Shrunk by what a step's answers or effects broke (not by reads before any step that disagree).
                let stepKind = outcome.findings.map(\.kind).first { ![.explore(.answersDisagree), .explore(.balanceMoved), .contract(.staleRead)].contains($0) }
                if shrink, outcome.verdict == .finding, let stepKind, (outcome.startBalance ?? 0) >= 0, case let .writes(steps) = c.plan, steps.flatMap(\.writes).count > 1 {
                    outcome.shrunk = await shrunk(c, steps: steps, kind: stepKind, start: outcome.startBalance, facts: facts)
                }
            }
            outcomes.append(outcome)
            await tell(.outcome(outcome))
            if outcome.note == Self.budgetWords { break }
        }
        return outcomes
    }

    static let budgetWords = "not sent: the request budget is spent"

    func startingFacts() async throws -> Facts {
        do {
            let packs = try await wire.send(.listAudioPacks, query: [])
            guard packs.isSuccess, let list = try? AudioPacks.decode(packs.body) else {
                throw NotStarted(words: "the pack list answered \(Answer(packs).said)\(packs.requestID.map { " (request id \($0))" } ?? ""): no case was sent")
            }
            guard let pack = list.packs.map(\.identifier).sorted().first else { throw NotStarted(words: "the pack list is empty: no case was sent") }
            let first = try await wire.send(.getCheerHistory, query: [("user_id", reader), ("page", "1"), ("per_page", "50")])
            guard first.isSuccess, let page = try? CheerHistory.decode(first.body) else {
                throw NotStarted(words: "the first history page answered \(Answer(first).said)\(first.requestID.map { " (request id \($0))" } ?? ""): no case was sent")
            }
            return Facts(pack: pack, lastPage: max(page.totalPages, 1))
        } catch is ExploreWire.Spent {
            throw NotStarted(words: "the request budget has no room for the first reads: no case was sent")
        } catch let error as ShopAPIError {
            throw NotStarted(words: ErrorText.line(error) + "; no case was sent")
        }
    }

    /// One case judged (a failure below HTTP, or the budget spent, makes it not judged).
    func judged(_ c: ExploreCase, facts: Facts) async -> ExploreOutcome {
        do {
            switch c.plan {
            case let .read(operation, query): return try await read(c, operation, query: resolve(query, facts: facts))
            case let .auth(operation, variant): return try await auth(c, operation, variant, facts: facts)
            case let .writes(steps): return try await writes(c, steps, facts: facts)
            case let .roundTrip(field, text): return try await roundTrip(c, field: field, text: text, facts: facts)
            case let .identity(check): return try await identity(c, check, facts: facts)
            }
        } catch is ExploreWire.Spent {
            return ExploreOutcome(c, .notJudged, note: Self.budgetWords)
        } catch is CancellationError {
            return ExploreOutcome(c, .notJudged, note: "stopped")
        } catch let error as ShopAPIError {
            return ExploreOutcome(c, .notJudged, note: "not judged: " + ErrorText.line(error))
        } catch {
            return ExploreOutcome(c, .notJudged, note: "not judged: the request could not be made")
        }
    }

    func resolve(_ query: [String: ExploreQueryValue], facts: Facts) -> [(name: String, value: String)] {
        query.sorted { $0.key < $1.key }.map { name, value in
            switch value {
            case let .literal(v): (name, v)
            case .user: (name, reader)
            case .pastLastPage: (name, String(facts.lastPage + 1))
            }
        }
    }

    func finding(_ c: ExploreCase, _ check: ExploreCheck, subject: String, expected: String, actual: String, ids: [String?],
                 causedBy: String? = nil) -> ShopFinding {
        ShopFinding(kind: .explore(check), subject: subject, blame: .server, expected: expected, actual: actual,
                    requestIDs: ids.compactMap { $0 }, causedBy: causedBy)
    }

    // MARK: Legal reads

    /// A read the contract allows, sent until two answers agree on its class (2xx, 4xx, 5xx).
    func read(_ c: ExploreCase, _ operation: OperationID, query: [(name: String, value: String)]) async throws -> ExploreOutcome {
        let subject = RequestKey.operationLine(operation, query: query)
        let rule = ReadRule<ProbeAnswer>(expecting: { $0.isSuccess }, twoAgree: { $0.statusClass == $1.statusClass })
        let taken = try await rule.reads { try await wire.send(operation, query: query) }
        let answers = taken.all.map(Answer.init)
        let ids = taken.all.map(\.requestID)
        guard taken.met else {
            return ExploreOutcome(c, .finding, findings: [finding(c, .answersDisagree, subject: subject, expected: "two answers that agree",
                                                                  actual: answers.map(\.said).joined(separator: ", then "), ids: ids)])
        }
        let last = answers[answers.count - 1]
        switch taken.last.statusClass {
        case 2: return ExploreOutcome(c, .passed)
        case 5: return ExploreOutcome(c, .finding, findings: [finding(c, .serverError, subject: subject, expected: "2xx (\(c.source))", actual: last.said + " twice", ids: ids)])
        default: return ExploreOutcome(c, .finding, findings: [finding(c, .legalRefused, subject: subject, expected: "2xx: a legal request (\(c.source))", actual: last.said + " twice", ids: ids)])
        }
    }

    // MARK: Authentication

    func authorization(_ variant: ExploreAuth) -> ProbeAuthorization {
        switch variant {
        case .none: .none
        case .malformed: .header("Bearer")
        case .unknown: .header("Bearer " + ExploreWire.unknownToken)
        case .expired: .header("Bearer " + (expiredToken ?? ""))
        }
    }

    func auth(_ c: ExploreCase, _ operation: OperationID, _ variant: ExploreAuth, facts: Facts) async throws -> ExploreOutcome {
        let how = authorization(variant)
        let isWrite = operation == .spendCheer || operation == .purchaseCheer
        let subject = "\(RequestKey.operationLine(operation, query: [])) with \(variant.rawValue)"
        guard isWrite, let writer else {
            let query: [(name: String, value: String)] = operation == .listAudioPacks ? [] : [("user_id", reader)]
            let rule = ReadRule<ProbeAnswer>(expecting: { $0.status == 401 }, twoAgree: { $0.status == $1.status })
            let taken = try await rule.reads { try await wire.send(operation, query: query, auth: how) }
            let ids = taken.all.map(\.requestID)
            let said = taken.all.map { Answer($0).said }
            guard taken.met else {
                return ExploreOutcome(c, .finding, findings: [finding(c, .answersDisagree, subject: subject, expected: "two answers that agree", actual: said.joined(separator: ", then "), ids: ids)])
            }
            return authVerdict(c, variant, status: taken.last.status, said: said.last ?? "", subject: subject, ids: ids, applied: nil)
        }
        // A write without a valid token: sent once (never again), then the balance read until it settles.
        let before = try await settledBalance(writer, expecting: nil)
        guard let start = before.value else { return unsettled(c, before, writer: writer) }
        let drift = await moved(c, balance: start, ids: before.ids)
        let (json, _) = body(operation == .spendCheer ? .spend(.literal(1)) : .purchase(.smallest), facts: facts, transactions: [:], balance: start)
        await last.set(nil)
        // An answer lost is settled by the reads after it, never by sending again.
        let answer: ProbeAnswer? = try? await wire.send(operation, query: [("user_id", writer)], json: json, auth: how)
        let after = try await settledBalance(writer, expecting: start)
        await last.set(after.value)
        guard let now = after.value else {
            return ExploreOutcome(c, .notJudged, note: "not judged: the balance after did not settle (\(after.disagreed?.joined(separator: ", ") ?? "unread"))")
        }
        let applied = now != start ? "the balance of \(writer) moved from \(start) to \(now)" : nil
        guard let answer else {
            return applied == nil ? ExploreOutcome(c, .notJudged, note: "not judged: no answer; read again, the balance is unchanged")
                : authVerdict(c, variant, status: 0, said: "no answer", subject: subject, ids: after.ids, applied: applied)
        }
        var outcome = authVerdict(c, variant, status: answer.status, said: Answer(answer).said, subject: subject, ids: [answer.requestID] + after.ids, applied: applied)
        if !drift.isEmpty {
            outcome.findings = drift + outcome.findings
            if outcome.verdict != .notJudged { outcome.verdict = .finding }
        }
        return outcome
    }

    /// 2xx, or a write applied: a security finding. 401 passes. Another refusal passes too for no token or `Bearer`
    /// alone (the contract names 401 for an expired or unknown token only; RFC 6750 allows 400 for a malformed
    /// request); for an unknown or expired token it is `auth-status`.
    func authVerdict(_ c: ExploreCase, _ variant: ExploreAuth, status: Int, said: String, subject: String, ids: [String?], applied: String?) -> ExploreOutcome {
        if (200..<300).contains(status) || applied != nil {
            let actual = said + (applied.map { "; \($0)" } ?? "")
            return ExploreOutcome(c, .finding, findings: [finding(c, .ignoredAuth, subject: subject, expected: "HTTP 401: a request without a valid token is refused (security)", actual: actual, ids: ids)])
        }
        if status == 401 { return ExploreOutcome(c, .passed) }
        if status >= 500 || status == 0 { return ExploreOutcome(c, .notJudged, note: "not judged: answered \(said)") }
        if variant == .none || variant == .malformed { return ExploreOutcome(c, .passed, note: "refused \(said)") }
        return ExploreOutcome(c, .finding, findings: [finding(c, .authStatus, subject: subject, expected: "HTTP 401 (the contract: an expired or unknown token gets 401)", actual: said, ids: ids)])
    }

    /// The balance before a case did not settle: reads with no write between them that disagree are a finding of
    /// their own (blame not known: another tester may be writing as the explore user); anything else, not judged.
    func unsettled(_ c: ExploreCase, _ reads: Settled<Int>, writer: String) -> ExploreOutcome {
        let said = reads.disagreed ?? ["unread"]
        guard said.count > 1, said.allSatisfy({ $0.hasPrefix("2") && !$0.hasSuffix("without a balance") }) else {
            return ExploreOutcome(c, .notJudged, note: "not judged: the balance before did not settle (\(said.joined(separator: ", ")))")
        }
        return ExploreOutcome(c, .finding, findings: [ShopFinding(kind: .explore(.answersDisagree), subject: "the balance of \(writer) before \(c.name)", blame: .unknown,
                                                                  expected: "two reads that agree (no write was sent between them)", actual: said.joined(separator: ", then "),
                                                                  requestIDs: reads.ids.compactMap { $0 }, causedBy: "another tester writing as \(writer), or the server")])
    }

    /// A finding when the explore user's balance is not where the campaign left it: no write of its own explains
    /// the move (another tester writing as the explore user, or the server); blame not known.
    func moved(_ c: ExploreCase, balance: Int, ids: [String?]) async -> [ShopFinding] {
        guard let before = await last.balance, before != balance, let writer else { return [] }
        return [ShopFinding(kind: .explore(.balanceMoved), subject: "the balance of \(writer) before \(c.name)", blame: .unknown,
                            expected: "\(before), where the campaign's last reads and writes left it", actual: "\(balance) (\(balance > before ? "+" : "")\(balance - before))",
                            requestIDs: ids.compactMap { $0 }, causedBy: "no write of the campaign's explains it: another tester writing as \(writer), or the server")]
    }
}
