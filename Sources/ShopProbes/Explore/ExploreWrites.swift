import Foundation
import JSONTokens
import ShopAPI
import ShopModel
import ShopViewModels
import TerminalText

// The write sequences of a campaign judged by the shop's model: the reads it settles on, then each step's answers held
// to the orders of its writes that explain them, and the balance and history after them.

extension ExploreRun {
    // MARK: Reads the model settles on

    struct Settled<Value: Sendable>: Sendable {
        var value: Value?
        var ids: [String?]
        /// The reads disagreed to the end (their values, in words).
        var disagreed: [String]?
        /// The last read's body is not valid UTF-8 (what it says may be garbled by that).
        var notUTF8 = false
        /// Reads before the last showed another state than the expected one the last read showed: a replica
        /// that lags (`stale-read`), told once with these reads' words.
        var lagged: [String]?
    }

    /// The user's balance, read until two reads agree (at most three, by the one rule). `expecting`: what the
    /// model says it is (a read that disagrees is read again after a pause).
    func settledBalance(_ user: String, expecting: Int?) async throws -> Settled<Int> {
        let rule = ReadRule<ProbeAnswer>(expecting: expecting.map { e in { Answer($0).balance == e } }, twoAgree: { Answer($0).balance == Answer($1).balance && $0.status == $1.status })
        var all = try await rule.reads { try await wire.send(.getBalance, query: [("user_id", user)]) }.all
        // Two that agree on other than what the model expects, within the bound: the third read, a second later,
        // gives a replica that lags its time (the verdict rests on the last two).
        if let expecting, all.count < ReadSeries<Int>.maxReads, Answer(all[all.count - 1]).balance != expecting {
            await ReadRule<Int>.sleep(ReadSeries<Int>.pauses[min(all.count - 1, ReadSeries<Int>.pauses.count - 1)])
            all.append(try await wire.send(.getBalance, query: [("user_id", user)]))
        }
        let met = all.count >= 2 && rule.twoAgree?(all[all.count - 2], all[all.count - 1]) == true
        let ids = all.map(\.requestID)
        // The last read shows what the model expects, those before it the state before: a replica that caught up.
        if let expecting, !met, all.count > 1, Answer(all[all.count - 1]).balance == expecting {
            return Settled(value: expecting, ids: ids, lagged: all.dropLast().map { Answer($0).said })
        }
        guard met else { return Settled(value: nil, ids: ids, disagreed: all.map { Answer($0).said }) }
        guard let value = Answer(all[all.count - 1]).balance else { return Settled(value: nil, ids: ids, disagreed: all.map { Answer($0).said + " without a balance" }) }
        return Settled(value: value, ids: ids)
    }

    /// The user's first page of history, read until two reads agree on its entries' ids; `expecting`: what the
    /// model says its new entries are.
    func settledPage(_ user: String, expecting: (([CheerHistoryEntry]) -> Bool)? = nil) async throws -> Settled<[CheerHistoryEntry]> {
        func entries(_ p: ProbeAnswer) -> [CheerHistoryEntry]? { p.isSuccess ? (try? CheerHistory.decode(p.body))?.entries : nil }
        /// `200, 50 entries, the newest h-7`: a page read in words.
        func said(_ p: ProbeAnswer) -> String {
            guard let list = entries(p) else { return Answer(p).said }
            return "\(p.status), \(list.count) entr\(list.count == 1 ? "y" : "ies")" + (list.first.map { ", the newest \($0.id ?? EntryWords.of($0))" } ?? "")
        }
        let isExpected: ((ProbeAnswer) -> Bool)? = expecting.map { e in { entries($0).map(e) ?? false } }
        let rule = ReadRule<ProbeAnswer>(expecting: isExpected, twoAgree: { entries($0) == entries($1) && entries($0) != nil })
        let query: [(name: String, value: String)] = [("user_id", user), ("page", "1"), ("per_page", "50")]
        var all = try await rule.reads { try await wire.send(.getCheerHistory, query: query) }.all
        // As for the balance: two that agree on other than what the model expects get the third read the bound allows.
        if let isExpected, all.count < ReadSeries<Int>.maxReads, !isExpected(all[all.count - 1]) {
            await ReadRule<Int>.sleep(ReadSeries<Int>.pauses[min(all.count - 1, ReadSeries<Int>.pauses.count - 1)])
            all.append(try await wire.send(.getCheerHistory, query: query))
        }
        let ids = all.map(\.requestID)
        let last = all[all.count - 1]
        if let isExpected, all.count > 1, isExpected(last), !isExpected(all[all.count - 2]), let value = entries(last) {
            return Settled(value: value, ids: ids, notUTF8: problem(.charset, last) != nil, lagged: all.dropLast().map(said))
        }
        guard all.count >= 2, rule.twoAgree?(all[all.count - 2], last) == true, let value = entries(last) else {
            return Settled(value: nil, ids: ids, disagreed: all.map(said))
        }
        return Settled(value: value, ids: ids, notUTF8: problem(.charset, last) != nil)
    }

    /// The entries of `after` that `before` did not hold: by id when every entry has one; else by content (the
    /// contract makes `id` optional), each entry of `before` accounting for one equal entry of `after`.
    static func fresh(_ after: [CheerHistoryEntry], since before: [CheerHistoryEntry]) -> [CheerHistoryEntry] {
        if (after + before).allSatisfy({ $0.id != nil }) {
            let known = Set(before.compactMap(\.id))
            return after.filter { !known.contains($0.id ?? "") }
        }
        var left = before
        return after.filter { e in
            guard let i = left.firstIndex(of: e) else { return true }
            left.remove(at: i)
            return false
        }
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
        await last.started(balance)
        var findings: [ShopFinding] = await moved(c, balance: balance, ids: first.ids)
        let page = try await settledPage(writer)
        guard var known = page.value else { return ExploreOutcome(c, .notJudged, note: "not judged: the history before did not settle") }
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
            if let lost = answers.firstIndex(where: { $0.map { $0.status >= 500 } ?? true }) {
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
            if let lagged = after.lagged {
                findings.append(ShopFinding(kind: .contract(.staleRead), subject: subject + ": the balance after", blame: .server,
                                            expected: "reads that show the writes applied (\(model.balance))",
                                            actual: lagged.joined(separator: ", then ") + ", then \(now)", requestIDs: after.ids.compactMap { $0 }))
            }
            if now != model.balance {
                findings.append(finding(c, effect, subject: subject, expected: "the balance \(model.balance) (\(balance) and the writes applied)",
                                        actual: "\(now)" + (now < 0 ? " (below 0)" : ""), ids: answerIDs + after.ids))
            }
            let spends = model.spends.sorted()
            let history = try await settledPage(writer) { entries in Self.fresh(entries, since: known).map(\.amount).sorted() == spends }
            guard let entries = history.value else {
                findings.append(finding(c, .answersDisagree, subject: subject + ": the history after", expected: "two reads of the first page that agree",
                                        actual: history.disagreed?.joined(separator: ", then ") ?? "unread", ids: history.ids))
                return ExploreOutcome(c, .finding, findings: findings)
            }
            if let lagged = history.lagged {
                findings.append(ShopFinding(kind: .contract(.staleRead), subject: subject + ": the first page after", blame: .server,
                                            expected: "reads that show the writes' entries", actual: lagged.joined(separator: ", then ") + ", then the entries",
                                            requestIDs: history.ids.compactMap { $0 }))
            }
            do {
                let fresh = Self.fresh(entries, since: known)
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
                known = entries
            }
            if !findings.isEmpty { return ExploreOutcome(c, .finding, findings: findings) }
            balance = now
        }
        return ExploreOutcome(c, .passed)
    }
}
