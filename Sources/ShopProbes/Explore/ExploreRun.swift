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
                outcome = await judged(c, facts: facts)
                let last = await serial() - 1
                if last >= first { outcome.serials = first...last }
                // Shrunk by what a step's answers or effects broke (not by reads before any step that disagree).
                let stepKind = outcome.findings.map(\.kind).first { $0 != .explore(.answersDisagree) && $0 != .explore(.balanceMoved) }
                if shrink, outcome.verdict == .finding, let stepKind, case let .writes(steps) = c.plan, steps.flatMap(\.writes).count > 1 {
                    outcome.shrunk = await shrunk(c, steps: steps, kind: stepKind, facts: facts)
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
            try await wire.take()
            let packs = try await wire.client.send(AudioPacks())
            guard let pack = packs.packs.map(\.identifier).sorted().first else { throw NotStarted(words: "the pack list is empty: no case was sent") }
            try await wire.take()
            let page = try await wire.client.send(CheerHistory(user: reader, page: 1, perPage: 50))
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
            return authVerdict(c, status: taken.last.status, said: said.last ?? "", subject: subject, ids: ids, applied: nil)
        }
        // A write without a valid token: sent once (never again), then the balance read until it settles.
        let before = try await settledBalance(writer, expecting: nil)
        guard let start = before.value else { return unsettled(c, before, writer: writer) }
        let drift = await moved(c, balance: start, ids: before.ids)
        let (json, _) = body(operation == .spendCheer ? .spend(.literal(1)) : .purchase(.smallest), facts: facts, transactions: [:], balance: start)
        let answer = try await wire.send(operation, query: [("user_id", writer)], json: json, auth: how)
        let after = try await settledBalance(writer, expecting: start)
        await last.set(after.value)
        let changed = after.value.map { $0 != start } ?? false
        let applied = changed ? "the balance of \(writer) moved from \(start) to \(after.value ?? start)" : nil
        var outcome = authVerdict(c, status: answer.status, said: Answer(answer).said, subject: subject, ids: [answer.requestID] + after.ids, applied: applied)
        if !drift.isEmpty {
            outcome.findings = drift + outcome.findings
            if outcome.verdict != .notJudged { outcome.verdict = .finding }
        }
        return outcome
    }

    func authVerdict(_ c: ExploreCase, status: Int, said: String, subject: String, ids: [String?], applied: String?) -> ExploreOutcome {
        if (200..<300).contains(status) || applied != nil {
            let actual = said + (applied.map { "; \($0)" } ?? "")
            return ExploreOutcome(c, .finding, findings: [finding(c, .ignoredAuth, subject: subject, expected: "HTTP 401: a request without a valid token is refused (security)", actual: actual, ids: ids)])
        }
        if status == 401 { return ExploreOutcome(c, .passed) }
        if status >= 500 { return ExploreOutcome(c, .notJudged, note: "not judged: answered \(said)") }
        return ExploreOutcome(c, .finding, findings: [finding(c, .authStatus, subject: subject, expected: "HTTP 401 (the contract: an expired or unknown token gets 401)", actual: said, ids: ids)])
    }

    // MARK: Reads the model settles on

    struct Settled<Value: Sendable>: Sendable {
        var value: Value?
        var ids: [String?]
        /// The reads disagreed to the end (their values, in words).
        var disagreed: [String]?
        /// The last read's body is not valid UTF-8 (what it says may be garbled by that).
        var notUTF8 = false
    }

    /// The user's balance, read until two reads agree (at most three, by the one rule). `expecting`: what the
    /// model says it is (a read that disagrees is read again after a pause).
    func settledBalance(_ user: String, expecting: Int?) async throws -> Settled<Int> {
        let rule = ReadRule<ProbeAnswer>(expecting: expecting.map { e in { Answer($0).balance == e } }, twoAgree: { Answer($0).balance == Answer($1).balance && $0.status == $1.status })
        let taken = try await rule.reads { try await wire.send(.getBalance, query: [("user_id", user)]) }
        let ids = taken.all.map(\.requestID)
        guard taken.met else { return Settled(value: nil, ids: ids, disagreed: taken.all.map { Answer($0).said }) }
        guard let value = Answer(taken.last).balance else { return Settled(value: nil, ids: ids, disagreed: taken.all.map { Answer($0).said + " without a balance" }) }
        return Settled(value: value, ids: ids)
    }

    /// The user's first page of history, read until two reads agree on its entries' ids; `expecting`: what the
    /// model says its new entries are.
    func settledPage(_ user: String, expecting: (([CheerHistoryEntry]) -> Bool)? = nil) async throws -> Settled<[CheerHistoryEntry]> {
        func entries(_ p: ProbeAnswer) -> [CheerHistoryEntry]? { p.isSuccess ? (try? CheerHistory.decode(p.body))?.entries : nil }
        let rule = ReadRule<ProbeAnswer>(expecting: expecting.map { e in { entries($0).map(e) ?? false } },
                                         twoAgree: { entries($0)?.map(\.id) == entries($1)?.map(\.id) && entries($0) != nil })
        let taken = try await rule.reads { try await wire.send(.getCheerHistory, query: [("user_id", user), ("page", "1"), ("per_page", "50")]) }
        let ids = taken.all.map(\.requestID)
        guard taken.met, let last = entries(taken.last) else { return Settled(value: nil, ids: ids, disagreed: taken.all.map { Answer($0).said }) }
        return Settled(value: last, ids: ids, notUTF8: problem(.charset, taken.last) != nil)
    }

    // MARK: Writes judged by the model

    /// The body of one write, resolved against the balance; a purchase's fresh transaction id, by slot.
    func body(_ write: ExploreWrite, facts: Facts, transactions: [Int: UInt64], balance: Int) -> ([UInt8], UInt64?) {
        switch write {
        case let .spend(amount, comment):
            var w = JSONWriter()
            w.raw("{\"amount\":")
            w.int(amount.resolved(balance: balance))
            w.raw(",\"product\":")
            w.string(facts.pack)
            if let comment {
                w.raw(",\"comment\":")
                w.string(comment)
            }
            w.raw("}")
            return (w.bytes, nil)
        case let .purchase(bundle, slot, wide):
            let id = transactions[slot] ?? Self.freshTransaction(wide: wide)
            let json = #"{"identifier":"\#(bundleOf(bundle)?.identifier ?? "")","transaction_id":\#(id)}"#
            return (Array(json.utf8), id)
        }
    }

    static func freshTransaction(wide: Bool) -> UInt64 {
        wide ? UInt64.random(in: (UInt64(Int64.max) + 1)...(UInt64.max - 1)) : UInt64.random(in: 1_000_000_000...UInt64(Int64.max))
    }

    func bundleOf(_ choice: ExploreBundle) -> CheerBundle? {
        choice == .smallest ? bundles.min { $0.cheer < $1.cheer } : bundles.max { $0.cheer < $1.cheer }
    }

    /// What the model says of a step's answers, given the balance before: the balance after and the spends
    /// applied when some order of the writes explains every answer; nil when none does.
    func explained(_ writes: [ExploreWrite], statuses: [Int], transactions: [UInt64?], balance: Int) -> (balance: Int, spends: [Int])? {
        for order in Self.orders(writes.count) {
            var b = balance
            var credited = Set<UInt64>()
            var spends: [Int] = []
            var ok = true
            for j in order {
                let taken = (200..<300).contains(statuses[j])
                switch writes[j] {
                case let .spend(amount, _):
                    let a = amount.resolved(balance: balance)
                    let fits = a >= 1 && a <= b
                    if taken, fits { b -= a; spends.append(a) } else if !taken, !fits, statuses[j] == 402 {} else { ok = false }
                case let .purchase(choice, _, _):
                    guard let tx = transactions[j], let cheer = bundleOf(choice)?.cheer else { ok = false; break }
                    if taken, !credited.contains(tx) { b += cheer; credited.insert(tx) } else if !taken, credited.contains(tx), statuses[j] == 409 {} else { ok = false }
                }
                if !ok { break }
            }
            if ok { return (b, spends) }
        }
        return nil
    }

    /// Every order of `n` writes (n is at most 3 in the catalogue).
    static func orders(_ n: Int) -> [[Int]] {
        guard n > 1 else { return [Array(0..<n)] }
        return (0..<n).flatMap { first in orders(n - 1).map { rest in [first] + rest.map { $0 >= first ? $0 + 1 : $0 } } }
    }

    /// What the model expects of one write on its own, in words (for a finding's expected).
    func expectedWords(_ write: ExploreWrite, balance: Int) -> String {
        switch write {
        case let .spend(amount, _):
            let a = amount.resolved(balance: balance)
            return a <= balance ? "taken (2xx): \(a) is at most the balance \(balance)" : "HTTP 402: \(a) is more than the balance \(balance); nothing spent"
        case let .purchase(choice, _, _):
            return "taken (2xx): a new transaction credits \(bundleOf(choice)?.cheer ?? 0) cheer"
        }
    }

    func writes(_ c: ExploreCase, _ steps: [ExploreStep], facts: Facts) async throws -> ExploreOutcome {
        guard let writer else { return ExploreOutcome(c, .notJudged, note: "not sent: no explore user") }
        let check = c.family.check
        let first = try await settledBalance(writer, expecting: nil)
        guard var balance = first.value else { return unsettled(c, first, writer: writer) }
        var findings: [ShopFinding] = await moved(c, balance: balance, ids: first.ids)
        let page = try await settledPage(writer)
        guard var known = page.value.map({ Set($0.compactMap(\.id)) }) else { return ExploreOutcome(c, .notJudged, note: "not judged: the history before did not settle") }
        for (n, whole) in steps.enumerated() {
            // A spend of the whole balance when there is none is no write (a user with nothing already).
            let step = ExploreStep(writes: whole.writes.filter { if case .spend(.wholeBalance, _) = $0 { balance > 0 } else { true } })
            if step.writes.isEmpty { continue }
            // Writes at the same time say something only when each alone would be taken.
            if c.family == .concurrent, step.writes.contains(where: { if case let .spend(a, _) = $0 { a.resolved(balance: balance) > balance } else { false } }) {
                return ExploreOutcome(c, findings.isEmpty ? .notJudged : .finding, findings: findings,
                                      note: "not judged: the balance \(balance) of \(writer) is too low for each write alone to be taken")
            }
            var transactions: [Int: UInt64] = [:]
            var bodies: [[UInt8]] = []
            var ids: [UInt64?] = []
            for write in step.writes {
                let (json, tx) = body(write, facts: facts, transactions: transactions, balance: balance)
                if case let .purchase(_, slot, _) = write, let tx { transactions[slot] = tx }
                bodies.append(json)
                ids.append(tx)
            }
            // All the step's requests take their turns first, then go out together.
            try await wire.take(step.writes.count)
            let answers: [ProbeAnswer?] = await withTaskGroup(of: (Int, ProbeAnswer?).self) { group in
                for (j, write) in step.writes.enumerated() {
                    let op: OperationID = if case .spend = write { .spendCheer } else { .purchaseCheer }
                    let json = bodies[j]
                    group.addTask { (j, try? await wire.send(op, query: [("user_id", writer)], json: json, taken: true)) }
                }
                var out = [ProbeAnswer?](repeating: nil, count: step.writes.count)
                for await (j, a) in group { out[j] = a }
                return out
            }
            let subject = "step \(n + 1) of \(steps.count): \(step.words), as \(writer)"
            let answerIDs = answers.map { $0?.requestID }
            if let lost = answers.firstIndex(where: { $0 == nil || $0!.status >= 500 }) {
                let after = try await settledBalance(writer, expecting: nil)
                await last.set(after.value)
                let said = answers[lost].map { Answer($0).said } ?? "no answer"
                return ExploreOutcome(c, findings.isEmpty ? .notJudged : .finding, findings: findings,
                                      note: "not judged: \(step.writes[lost].words) answered \(said); the balance read again: \(after.value.map(String.init) ?? "not settled")")
            }
            let statuses = answers.map { $0?.status ?? 0 }
            let said = zip(step.writes, answers).map { w, a in "\(w.words) → \(a.map { Answer($0).said } ?? "no answer")" }.joined(separator: "; ")
            guard let model = explained(step.writes, statuses: statuses, transactions: ids, balance: balance) else {
                let expected = step.writes.count == 1 ? expectedWords(step.writes[0], balance: balance)
                    : "answers some order of the writes explains, from the balance \(balance)"
                let kind: ExploreCheck = statuses.contains(where: { (400..<500).contains($0) && $0 != 402 && $0 != 409 }) && c.family == .legal ? .legalRefused : check
                findings.append(finding(c, kind, subject: subject, expected: expected, actual: said, ids: answerIDs))
                let after = try await settledBalance(writer, expecting: nil)
                await last.set(after.value)
                if let value = after.value, value < 0 {
                    findings.append(finding(c, check, subject: subject, expected: "a balance of 0 or more", actual: "\(value)", ids: after.ids,
                                            causedBy: "follows from the answers above"))
                }
                return ExploreOutcome(c, .finding, findings: findings)
            }
            // The answers are explained: the balance and the history must now show what they say.
            let after = try await settledBalance(writer, expecting: model.balance)
            guard let now = after.value else {
                findings.append(finding(c, .answersDisagree, subject: subject + ": the balance after", expected: "two reads that agree",
                                        actual: after.disagreed?.joined(separator: ", then ") ?? "unread", ids: after.ids))
                return ExploreOutcome(c, .finding, findings: findings)
            }
            await last.set(now)
            let effect = ExploreCheck.writeEffect
            if now != model.balance {
                findings.append(finding(c, effect, subject: subject, expected: "the balance \(model.balance) (\(balance) and the writes applied)",
                                        actual: "\(now)" + (now < 0 ? " (below 0)" : ""), ids: answerIDs + after.ids))
            }
            let spends = model.spends.sorted()
            let history = try await settledPage(writer) { entries in
                entries.filter { $0.id.map { !known.contains($0) } ?? false }.map(\.amount).sorted() == spends
            }
            if let entries = history.value {
                let fresh = entries.filter { $0.id.map { !known.contains($0) } ?? false }
                let dates = answers.compactMap { $0?.serverDate }
                if let early = dates.min(), let late = dates.max() {
                    for e in fresh { if let id = e.id { await last.wrote(id, within: early...late) } }
                }
                if fresh.map(\.amount).sorted() != spends {
                    let ids = entries.compactMap(\.id)
                    let repeated = Set(ids).count < ids.count
                    findings.append(finding(c, effect, subject: subject + ": the history", expected: "\(spends.count) new entr\(spends.count == 1 ? "y" : "ies") of \(spends)",
                                            actual: "\(fresh.count) of \(fresh.map(\.amount))", ids: history.ids,
                                            causedBy: repeated ? "possibly caused by an id on two entries of the page (duplicate-id)"
                                                : findings.isEmpty ? nil : "may follow from the balance above"))
                }
                known.formUnion(entries.compactMap(\.id))
            }
            if !findings.isEmpty { return ExploreOutcome(c, .finding, findings: findings) }
            balance = now
        }
        return ExploreOutcome(c, .passed)
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

    // MARK: Text written and read back

    func roundTrip(_ c: ExploreCase, field: String, text: String, facts: Facts) async throws -> ExploreOutcome {
        guard let writer else { return ExploreOutcome(c, .notJudged, note: "not sent: no explore user") }
        let before = try await settledPage(writer)
        guard let known = before.value.map({ Set($0.compactMap(\.id)) }) else { return ExploreOutcome(c, .notJudged, note: "not judged: the history before did not settle") }
        let (json, _) = body(.spend(.literal(1), comment: text), facts: facts, transactions: [:], balance: 1)
        let answer = try await wire.send(.spendCheer, query: [("user_id", writer)], json: json)
        let subject = "\(field) written by a spend of 1, as \(writer)"
        guard answer.isSuccess else {
            if answer.status == 402 { return ExploreOutcome(c, .notJudged, note: "not judged: the explore user's balance is 0") }
            if answer.status >= 500 { return ExploreOutcome(c, .notJudged, note: "not judged: answered \(Answer(answer).said)") }
            return ExploreOutcome(c, .finding, findings: [finding(c, .legalRefused, subject: subject, expected: "taken (2xx): any string is a legal \(field) (\(c.source))",
                                                                  actual: Answer(answer).said, ids: [answer.requestID])])
        }
        await last.set(nil)  // the balance is not read here: the next case's reads are not held to a guess
        func fresh(_ entries: [CheerHistoryEntry]) -> CheerHistoryEntry? { entries.first { $0.id.map { !known.contains($0) } ?? false } }
        let after = try await settledPage(writer) { fresh($0) != nil }
        guard let entry = after.value.flatMap(fresh) else {
            return ExploreOutcome(c, .finding, findings: [finding(c, .textChanged, subject: subject, expected: "a new entry holding the \(field)",
                                                                  actual: "no new entry on the first page", ids: [answer.requestID] + after.ids)])
        }
        if let id = entry.id, let date = answer.serverDate { await last.wrote(id, within: date...date) }
        let got = entry.comments?.first?.body
        guard let got, Array(got.utf8) == Array(text.utf8) else {
            let (sent, back, at) = TextDifference.shown(text, got)
            let notUTF8 = after.notUTF8
            return ExploreOutcome(c, .finding, findings: [finding(c, .textChanged, subject: subject + " (entry \(entry.id ?? "without id"))",
                                                                  expected: "the bytes sent: \(sent)", actual: "\(back)\(at)", ids: [answer.requestID] + after.ids,
                                                                  causedBy: notUTF8 ? "possibly caused by the answer's body not being UTF-8 (charset)" : nil)])
        }
        return ExploreOutcome(c, .passed)
    }

    // MARK: Identity and framing

    func identity(_ c: ExploreCase, _ check: ExploreIdentity, facts: Facts) async throws -> ExploreOutcome {
        let user = writer ?? reader
        switch check {
        case .uniqueIDs:
            let bound = 20
            var seen: [String: [Int]] = [:]
            var ids: [String?] = []
            var pages = 1
            var total = 1
            while pages <= min(total, bound) {
                let a = try await wire.send(.getCheerHistory, query: [("user_id", user), ("page", String(pages)), ("per_page", String(CheerHistory.maxPerPage))])
                ids.append(a.requestID)
                guard a.isSuccess, let page = try? CheerHistory.decode(a.body) else { return ExploreOutcome(c, .notJudged, note: "not judged: page \(pages) answered \(Answer(a).said)") }
                total = page.totalPages
                for id in page.entries.compactMap(\.id) { seen[id, default: []].append(pages) }
                pages += 1
            }
            let twice = seen.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }
            let note = total > bound ? "read \(bound) of \(total) pages (the bound): ids beyond them not seen" : "\(seen.count) ids on \(pages - 1) page\(pages == 2 ? "" : "s")"
            guard !twice.isEmpty else { return ExploreOutcome(c, .passed, note: note) }
            // Read once more every page a repeated id was on: a verdict rests on reads that agree.
            var again: [String: Int] = [:]
            for p in Set(twice.flatMap(\.value)).sorted() {
                let a = try await wire.send(.getCheerHistory, query: [("user_id", user), ("page", String(p)), ("per_page", String(CheerHistory.maxPerPage))])
                ids.append(a.requestID)
                for id in (try? CheerHistory.decode(a.body))?.entries.compactMap(\.id) ?? [] { again[id, default: 0] += 1 }
            }
            let confirmed = twice.filter { id, pages in Set(pages).count > 1 || (again[id] ?? 0) > 1 }
            guard !confirmed.isEmpty else {
                return ExploreOutcome(c, .finding, findings: [finding(c, .answersDisagree, subject: "the history of \(user)", expected: "two reads of a page that agree",
                                                                      actual: "ids on two entries once, not when read again", ids: ids)])
            }
            let words = confirmed.prefix(3).map { "\($0.key) on page\($0.value.count > 1 && Set($0.value).count > 1 ? "s" : "") \(Array(Set($0.value)).sorted().map(String.init).joined(separator: ", "))" }
            return ExploreOutcome(c, .finding, findings: [finding(c, .duplicateID, subject: "the history of \(user)", expected: "each id on one entry",
                                                                  actual: "\(confirmed.count) id\(confirmed.count == 1 ? "" : "s") on two entries: " + words.joined(separator: "; "),
                                                                  ids: ids)], note: note)
        case .stableEntries:
            try await wire.take(2)
            let query: [(name: String, value: String)] = [("user_id", user), ("page", "1"), ("per_page", "50")]
            let a = try await wire.send(.getCheerHistory, query: query, taken: true)
            let b = try await wire.send(.getCheerHistory, query: query, taken: true)
            guard let x = try? CheerHistory.decode(a.body).entries, let y = try? CheerHistory.decode(b.body).entries, a.isSuccess, b.isSuccess else {
                return ExploreOutcome(c, .notJudged, note: "not judged: the first page answered \(Answer(a).said), then \(Answer(b).said)")
            }
            // Only ids that name one entry on each read are compared (an id on two entries is the unique-ids case's).
            func once(_ list: [CheerHistoryEntry]) -> [String: CheerHistoryEntry] {
                let ids = list.compactMap(\.id)
                return Dictionary(list.compactMap { e in e.id.flatMap { id in ids.filter { $0 == id }.count == 1 ? (id, e) : nil } }, uniquingKeysWith: { a, _ in a })
            }
            let first = once(x), second = once(y)
            let changed = second.values.filter { e in e.id.flatMap { first[$0] }.map { $0 != e } ?? false }.sorted { ($0.id ?? "") < ($1.id ?? "") }
            guard let one = changed.first, let was = one.id.flatMap({ first[$0] }) else { return ExploreOutcome(c, .passed) }
            return ExploreOutcome(c, .finding, findings: [finding(c, .entryUnstable, subject: "entry \(one.id ?? "") of \(user)'s history",
                                                                  expected: "the same entry on both reads", actual: "\(EntryWords.of(was)), then \(EntryWords.of(one))"
                                                                      + (changed.count > 1 ? " (and \(changed.count - 1) more)" : ""), ids: [a.requestID, b.requestID])])
        case .charset, .sharedCache:
            var findings: [ShopFinding] = []
            let reads: [(OperationID, [(name: String, value: String)])] = [(.listAudioPacks, []), (.getBalance, [("user_id", user)]),
                                                                           (.getCheerHistory, [("user_id", user), ("page", "1"), ("per_page", "50")])]
            for (op, query) in reads where check == .charset || query.contains(where: { $0.name == "user_id" }) {
                let rule = ReadRule<ProbeAnswer>(expecting: { problem(check, $0) == nil }, twoAgree: { problem(check, $0) == problem(check, $1) })
                let taken = try await rule.reads { try await wire.send(op, query: query) }
                guard taken.met else {
                    findings.append(finding(c, .answersDisagree, subject: RequestKey.operationLine(op, query: query), expected: "two answers that agree",
                                            actual: taken.all.map { problem(check, $0) ?? "nothing wrong" }.joined(separator: ", then "), ids: taken.all.map(\.requestID)))
                    continue
                }
                guard let found = problem(check, taken.last) else { continue }
                findings.append(finding(c, check == .charset ? .charset : .sharedCacheable, subject: RequestKey.operationLine(op, query: query),
                                        expected: check == .charset ? "a body valid in the charset it claims (\(taken.last.charset ?? "utf-8, JSON's"))"
                                            : "an answer no shared cache may store (private or no-store, or no public, s-maxage or must-revalidate)",
                                        actual: found, ids: taken.all.map(\.requestID)))
            }
            return ExploreOutcome(c, findings.isEmpty ? .passed : .finding, findings: findings)
        case .serverClock:
            // The entries the campaign wrote, each dated within its write (the server's own Date headers around it,
            // with two seconds for their resolution); the watchdog holds every entry to the answer's own Date.
            let written = await last.written
            guard !written.isEmpty else { return ExploreOutcome(c, .notJudged, note: "not judged: the campaign wrote no entry to hold to the server's clock") }
            let query: [(name: String, value: String)] = [("user_id", user), ("page", "1"), ("per_page", "50")]
            func off(_ a: ProbeAnswer) -> [String] {
                guard a.isSuccess, let entries = try? CheerHistory.decode(a.body).entries else { return [] }
                return entries.compactMap { e in
                    guard let id = e.id, let window = written[id], entries.filter({ $0.id == id }).count == 1 else { return nil }
                    let from = window.lowerBound.addingTimeInterval(-2), to = window.upperBound.addingTimeInterval(2)
                    guard e.date < from || e.date > to else { return nil }
                    let by = e.date > to ? e.date.timeIntervalSince(window.upperBound) : e.date.timeIntervalSince(window.lowerBound)
                    return "entry \(id) dated \(ISO8601.format(e.date)), \(Int(abs(by).rounded())) s \(by > 0 ? "after" : "before") the server's Date around its write"
                }
            }
            let rule = ReadRule<ProbeAnswer>(expecting: { off($0).isEmpty }, twoAgree: { off($0) == off($1) })
            let taken = try await rule.reads { try await wire.send(.getCheerHistory, query: query) }
            guard taken.met else {
                return ExploreOutcome(c, .finding, findings: [finding(c, .answersDisagree, subject: "the history of \(user)", expected: "two answers that agree",
                                                                      actual: taken.all.map { off($0).first ?? "every entry on time" }.joined(separator: ", then "), ids: taken.all.map(\.requestID))])
            }
            let found = off(taken.last)
            guard let one = found.first else { return ExploreOutcome(c, .passed, note: "\(written.count) entries written") }
            return ExploreOutcome(c, .finding, findings: [finding(c, .dateOutsideClock, subject: "the history of \(user)", expected: "each entry the campaign wrote dated within its write",
                                                                  actual: one + (found.count > 1 ? " (and \(found.count - 1) more)" : ""), ids: taken.all.map(\.requestID))])
        }
    }

    /// What is wrong with an answer's framing for `check`, in words; nil when nothing is.
    func problem(_ check: ExploreIdentity, _ a: ProbeAnswer) -> String? {
        if check == .sharedCache { return a.isSuccess ? a.sharedCacheable : nil }
        let charset = a.charset ?? "utf-8"
        guard ["utf-8", "utf8"].contains(charset), let at = UTF8Scan.firstInvalid(a.body) else { return nil }
        return String(format: "byte %d of the body is 0x%02X, not UTF-8", at, a.body[at])
    }

}

/// An entry in a few words (a finding's actual).
enum EntryWords {
    static func of(_ e: CheerHistoryEntry) -> String {
        "\(e.amount) for \(e.product) on \(ISO8601.format(e.date))" + (e.comments?.first?.body.map { " «\(TextDifference.escaped($0, limit: 40))»" } ?? "")
    }
}

/// The balance the campaign last settled on, and the entries it wrote with the server's clock around each write.
actor LastBalance {
    var balance: Int?
    /// Each entry the campaign made, and the `Date`s of the answers around its write.
    var written: [String: ClosedRange<Date>] = [:]
    func set(_ value: Int?) { balance = value }
    func add(_ value: Int) { balance = balance.map { $0 + value } }
    func wrote(_ id: String, within window: ClosedRange<Date>) { written[id] = window }
}

/// Two texts shown so that their difference is visible: every scalar beyond printable ASCII as `\u{…}`.
enum TextDifference {
    static func escaped<S: StringProtocol>(_ text: S, limit: Int = 120) -> String {
        var out = ""
        var n = 0
        for s in text.unicodeScalars {
            if n >= limit { out += "…"; break }
            out += (0x20..<0x7F).contains(s.value) ? String(s) : "\\u{\(String(s.value, radix: 16, uppercase: true))}"
            n += 1
        }
        return out
    }

    /// Both texts from just before their first difference, and where it is.
    static func shown(_ sent: String, _ back: String?) -> (String, String, String) {
        guard let back else { return (escaped(sent), "no comment", "") }
        let a = Array(sent.unicodeScalars), b = Array(back.unicodeScalars)
        var i = 0
        while i < a.count, i < b.count, a[i] == b[i] { i += 1 }
        let from = max(0, i - 8)
        let lead = from > 0 ? "…" : ""
        let sa = String(String.UnicodeScalarView(a[from...])), sb = String(String.UnicodeScalarView(b[min(from, b.count)...]))
        return (lead + escaped(sa), lead + escaped(sb), " (they differ from character \(i + 1); \(a.count) characters sent, \(b.count) back)")
    }
}
