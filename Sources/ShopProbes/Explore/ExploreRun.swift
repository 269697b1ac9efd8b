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
