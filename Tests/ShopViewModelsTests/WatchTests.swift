import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// Watching through the update function: rounds of reads on a timer, events on the timeline,
/// findings in the Checks tab, back-off on failures, a stop and a user switch as table operations.
@Suite struct WatchTests {
    static let rain = "com.reiterate.pack.rain"

    func ready() -> Driver { Driver.loaded() }

    static func page(_ entries: [CheerHistoryEntry], total: Int) -> CheerHistoryPage {
        CheerHistoryPage(items: entries.map { .entry($0) }, page: 1, perPage: 20, totalPages: (total + 19) / 20, totalCount: total)
    }

    static let older = (0..<20).map { entry($0) }

    /// Answers the watch's reads out now: the balance, the newest entries, and the packs if asked.
    var rainTotal = 50

    func answer(_ d: inout Driver, balance: Int, entries: [CheerHistoryEntry] = older, total: Int = 230, at: Date = t0, id: String = "") {
        // A round reads the balance, the entries, and the balance again, one after the other; the
        // packs, when due, are asked once those are in.
        var reads = 0
        while let (token, purpose) = Self.roundRead(d.state.inFlight), reads < 10 {
            answerOne(&d, token, purpose, balance: balance, entries: entries, total: total, at: at, id: id)
            reads += 1
            // A round that would make a finding is read again before it is judged (settled reads): this
            // server's reads agree, so each read again answers the same, with the same request ids.
            if Self.roundRead(d.state.inFlight) == nil, !d.state.watch.suspects.isEmpty, let wake = d.state.token(for: .watchWake) {
                d.apply(.woke(wake, at: at))
            }
        }
        if let token = d.state.token(for: .watch(.packs)) {
            answerOne(&d, token, .watch(.packs), balance: balance, entries: entries, total: total, at: at, id: id)
        }
    }

    /// The round's read that is out (the balance or the entries), if any.
    static func roundRead(_ table: InFlight) -> (Token, Purpose)? {
        table.purposes.first { $0.value == .watch(.balance) || $0.value == .watch(.history(perPage: WatchState.perPage)) }.map { ($0.key, $0.value) }
    }

    func answerOne(_ d: inout Driver, _ token: Token, _ purpose: Purpose, balance: Int, entries: [CheerHistoryEntry], total: Int, at: Date, id: String) {
        do {
            switch purpose {
            case .watch(.balance): d.apply(.watchLoaded(token, .success(.balance(CheerBalance(balance: balance))), requestID: "rq-b\(id)", at: at))
            case .watch(.history): d.apply(.watchLoaded(token, .success(.history(Self.page(entries, total: total))), requestID: "rq-h\(id)", at: at))
            case .watch(.packs):
                var list = samplePacks
                list.packs[0].cheerTotal = rainTotal
                d.apply(.watchLoaded(token, .success(.packs(list)), requestID: "rq-p\(id)", at: at))
            default: break
            }
        }
    }

    func wake(_ d: inout Driver, at: Date = t0) -> [Effect] {
        guard let token = d.state.token(for: .watchWake) else { Issue.record("no wake scheduled"); return [] }
        return d.apply(.woke(token, at: at))
    }

    @Test func wReadsEveryIntervalAndReconcilesEachChange() {
        var d = ready()
        let started = d.apply(.action(.watch))
        let reads = started.compactMap { if case let .request(_, read) = $0 { return read } else { return nil } }
        // One read at a time: the balance first (the entries, then the balance again, follow it).
        #expect(reads == [.balance(user: "qa-alice")])
        #expect(d.state.watch.badge == "● watching 2 s" && d.state.watch.timeline.rows.first?.text() == "watching qa-alice every 2 s")
        answer(&d, balance: 1250, id: "1")
        // The round is in: the next waits for the interval, and nothing animates meanwhile.
        #expect(d.effects.contains { if case .wake(_, 2) = $0 { return true } else { return false } })
        #expect(!d.state.isBusy && d.state.watch.rounds == 1)
        let next = wake(&d, at: t0.addingTimeInterval(2))
        #expect(next.compactMap { if case let .request(t, read) = $0, d.state.requestsOut[t] == .watch(.balance) { return read } else { return nil } } == [ShopRequest.balance(user: "qa-alice")])
        // The phone cheers 7 with a comment: one balance event, one entry, both reconciled.
        let cheer = CheerHistoryEntry(id: "new", creator: "Field & Foley", amount: 7, product: Self.rain, date: t0, comments: [CheerComment(signature: "qa-alice", body: "great pack")])
        answer(&d, balance: 1243, entries: [cheer] + Self.older.prefix(19), total: 231, at: t0.addingTimeInterval(2), id: "2")
        let texts = d.state.watch.timeline.rows.prefix(2).map { $0.text(names: [Self.rain: "Rain on a Tin Roof"]) }
        #expect(texts == ["new entry: 7 cheer on Rain on a Tin Roof “great pack”", "balance 1,250 → 1,243 (−7)"])
        #expect(d.state.watch.timeline.rows.prefix(2).allSatisfy { $0.outcome == .reconciled && $0.requestIDs == ["rq-b1", "rq-h1", "rq-b2", "rq-h2"] })
        #expect(d.state.balance.value == 1243 && d.state.checks.records.isEmpty)
        // A debit with no entry is a finding, in the Checks tab too, with the reads on both sides.
        _ = wake(&d)
        answer(&d, balance: 1236, entries: [cheer] + Self.older.prefix(19), total: 231, id: "3")
        // Told beyond the screen: the bell by default (an OSC 9 notification, or nothing, by `notify`).
        #expect(d.effects.contains { if case let .alert(.bell, text) = $0 { return text.hasPrefix("reiterate-shop: [debit-without-entry]") } else { return false } })
        let finding = d.state.checks.records.first
        #expect(finding?.name == "debit-without-entry" && finding?.isFinding == true && finding?.outcome == .failed)
        #expect(finding?.finding.requestIDs == ["rq-b2", "rq-h2", "rq-b3", "rq-h3"] && d.state.watch.findingCount == 1)
    }

    @Test func failuresBackOffAndRetryAfterIsHonoured() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1250)
        _ = wake(&d)
        guard let token = d.state.token(for: .watch(.balance)) else { Issue.record("no read"); return }
        let limited = ShopAPIError.http(status: 429, message: "slow down", code: nil, requestID: "rq-429", endpoint: .get("/api/v1/balance"), retryAfter: 7)
        let out = d.apply(.watchLoaded(token, .failure(limited), at: t0))
        #expect(d.state.watch.phase == .backingOff(seconds: 7) && d.state.watch.badge == "● backing off 7 s")
        #expect(out.contains { if case .wake(_, 7) = $0 { return true } else { return false } })
        // The other read of the failed round was cancelled: one request of a kind at most.
        #expect(!d.state.isOut(.watch(.history(perPage: WatchState.perPage))))
        #expect(d.state.watch.timeline.rows.first?.text().hasSuffix("backing off 7 s (the server asked for 7 s)") == true)
        _ = wake(&d)
        let down = ShopAPIError.transport(.connectionRefused(host: "shop.test"), endpoint: .get("/api/v1/balance"))
        if let t = d.state.token(for: .watch(.balance)) { d.apply(.watchLoaded(t, .failure(down), at: t0)) }
        #expect(d.state.watch.phase == .backingOff(seconds: 8))  // 2 s doubled twice
        _ = wake(&d)
        answer(&d, balance: 1250)
        #expect(d.state.watch.phase == .watching && d.state.watch.timeline.rows.first?.text() == "the reads answer again")
    }

    @Test func aPauseAndAUserSwitchAreOperationsOnTheTable() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1250)
        let wakeToken = d.state.token(for: .watchWake)
        let paused = d.apply(.action(.watch))
        #expect(wakeToken.map { paused.contains(.cancel($0)) } == true && !d.state.requestsOut.values.contains { $0.isWatch })
        #expect(d.state.watch.phase == .paused && d.state.watch.badge == "‖ paused" && d.state.watch.timeline.rows.first?.text() == "paused")
        // A user switch while paused moves the watch, and it stays paused: no reads.
        let out = d.run([.action(.switchUser)] + "qa-bob".map { .text($0) } + [.action(.runPrompt)])
        #expect(!out.contains { if case let .request(t, _) = $0 { return d.state.requestsOut[t]?.isWatch == true } else { return false } })
        #expect(d.state.watch.timeline.rows.first?.text() == "now watching qa-bob" && d.state.watch.phase == .paused)
        let resumed = d.apply(.action(.watch))
        #expect(resumed.contains { if case let .request(t, .balance(user: "qa-bob")) = $0 { return d.state.requestsOut[t] == .watch(.balance) } else { return false } })
        #expect(d.state.watch.phase == .watching && d.state.watch.timeline.rows.first?.text() == "resumed")
    }

    /// A pause keeps the last reads: what the phone did meanwhile is reconciled by the first round after.
    @Test func whatChangedDuringAPauseIsReconciledOnResuming() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1250, id: "1")
        d.apply(.action(.watch))
        let cheer = CheerHistoryEntry(id: "new", creator: "F", amount: 7, product: Self.rain, date: t0, comments: nil)
        d.apply(.action(.watch))
        #expect(d.state.watch.timeline.rows.first?.text() == "resumed (compared with the reads of just now)")
        answer(&d, balance: 1443, entries: [cheer] + Self.older.prefix(19), total: 231, id: "2")
        let texts = d.state.watch.timeline.rows.prefix(3).map { $0.text() }
        #expect(texts.contains("balance 1,250 → 1,443 (+193)") && texts.contains("a purchase of 200 cheer (bundle 200)"))
        #expect(d.state.watch.findingCount == 0)
    }

    /// What a round changed is marked on the other tabs briefly: until the first round at least
    /// `WatchMarks.hold` seconds later.
    @Test mutating func changesAreMarkedBrieflyForTheOtherTabs() {
        var d = ready()
        d.apply(.action(.watch))
        rainTotal = 50
        answer(&d, balance: 1250, id: "1")  // round 1 reads the packs too
        #expect(d.state.watch.marks.isEmpty)
        let cheer = CheerHistoryEntry(id: "new", creator: "F", amount: 7, product: Self.rain, date: t0, comments: nil)
        var at = t0
        for round in 2...5 {
            at = t0.addingTimeInterval(Double(round - 1) * 2)
            _ = wake(&d, at: at)
            if round == 5 { rainTotal = 57 }  // round 5 reads the packs again
            answer(&d, balance: round >= 2 ? 1243 : 1250, entries: [cheer] + Self.older.prefix(19), total: 231, at: at, id: "\(round)")
            if round == 2 {
                #expect(d.state.watch.marks.balanceDelta == -7 && d.state.watch.marks.isNew(.entry(cheer)))
                #expect(!d.state.watch.marks.isNew(.entry(Self.older[0])))
            }
            if round == 3 { #expect(d.state.watch.marks.balanceDelta == -7) }  // 2 s later: still marked
            if round == 4 { #expect(d.state.watch.marks.balanceDelta == nil && !d.state.watch.marks.isNew(.entry(cheer))) }  // 4 s later: gone
        }
        #expect(d.state.watch.marks.mark(pack: Self.rain) == .changed && d.state.watch.marks.mark(pack: samplePacks.packs[1].identifier) == nil)
        // A pause takes the marks away.
        d.apply(.action(.watch))
        #expect(d.state.watch.marks.isEmpty)
    }

    /// Reads are not one snapshot: an entry first seen in the round right after a packs read may be
    /// older than it, so it is not held against the next totals (no false finding); one surely made
    /// between two packs reads is.
    @Test mutating func packTotalsAreHeldOnlyToCheersSurelyBetweenTwoReads() {
        var d = ready()
        d.apply(.action(.watch))
        // Round 1's entries were read before a cheer of 7 that its packs read (after them) already counts.
        rainTotal = 57
        answer(&d, balance: 1250)
        var entries = Self.older
        var balance = 1250
        func cheer(_ id: String, _ amount: Int) {
            entries.insert(CheerHistoryEntry(id: id, creator: "F", amount: amount, product: Self.rain, date: t0, comments: nil), at: 0)
            entries.removeLast()
            balance -= amount
        }
        // Round 2 first sees that cheer; by round 5's packs read the total has not moved again: no finding.
        for round in 2...5 {
            if round == 2 { cheer("a", 7) }
            _ = wake(&d)
            answer(&d, balance: balance, entries: entries, total: 230 + (entries.count > 0 ? 1 : 0), id: "\(round)")
        }
        #expect(d.state.watch.findingCount == 0)
        // Round 7 sees a cheer of 5 (after round 6 followed the packs read), and the total does not move by round 10.
        for round in 6...10 {
            if round == 7 { cheer("b", 5) }
            _ = wake(&d)
            answer(&d, balance: balance, entries: entries, total: 231 + (round >= 7 ? 1 : 0), id: "\(round)")
        }
        #expect(d.state.checks.records.first?.name == "pack-total" && d.state.watch.findingCount == 1)
    }

    @Test func aWriteOfThisToolIsMarkedAsItsOwn() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1250)
        d.apply(.write(.spend(product: Self.rain, amount: 7, comment: "mine")))
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1243)), at: t0))
        _ = wake(&d)
        let mine = CheerHistoryEntry(id: "mine", creator: "Field & Foley", amount: 7, product: Self.rain, date: t0, comments: [CheerComment(signature: nil, body: "mine")])
        answer(&d, balance: 1243, entries: [mine] + Self.older.prefix(19), total: 231)
        #expect(d.state.watch.timeline.rows.prefix(2).allSatisfy { $0.outcome == .own } && d.state.watch.findingCount == 0)
    }
    /// The staging race CI met: the phone cheered 13 after the round's first balance read and before
    /// its entries were read. Compared as they were, the balance (−6) and the entries (−19) disagree
    /// and the next round's purchase looks like +187. The closing balance read sees the move, the
    /// entries are read again after it, and everything reconciles: no finding.
    @Test func aWriteBetweenTheReadsOfARoundIsReadAgainNotFlagged() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1250, id: "1")
        _ = wake(&d)
        let phone = CheerHistoryEntry(id: "p13", creator: "F", amount: 13, product: Self.rain, date: t0, comments: nil)
        let six = CheerHistoryEntry(id: "p6", creator: "F", amount: 6, product: Self.rain, date: t0, comments: nil)
        func reply(_ expected: Purpose, balance: Int = 0, entries: [CheerHistoryEntry] = [], id: String) -> [Effect] {
            guard let (token, purpose) = Self.roundRead(d.state.inFlight), purpose == expected else {
                Issue.record("expected \(expected) out, the table holds \(d.state.requestsOut.values)")
                return []
            }
            switch purpose {
            case .watch(.balance): return d.apply(.watchLoaded(token, .success(.balance(CheerBalance(balance: balance))), requestID: id, at: t0))
            default: return d.apply(.watchLoaded(token, .success(.history(Self.page(entries + Self.older.prefix(20 - entries.count), total: 230 + entries.count))), requestID: id, at: t0))
            }
        }
        let history = Purpose.watch(.history(perPage: WatchState.perPage))
        _ = reply(.watch(.balance), balance: 1244, id: "rq-open")                  // the 6 is debited
        _ = reply(history, entries: [phone, six], id: "rq-h1")                     // the 13 landed meanwhile
        let crossed = reply(.watch(.balance), balance: 1231, id: "rq-close")      // the balance moved: read again
        #expect(crossed.contains { if case let .request(t, .history) = $0 { return d.state.requestsOut[t] == history } else { return false } })
        #expect(d.state.watch.rounds == 1 && d.state.watch.findingCount == 0)
        _ = reply(history, entries: [phone, six], id: "rq-h2")
        _ = reply(.watch(.balance), balance: 1231, id: "rq-close2")
        #expect(d.state.watch.rounds == 2 && d.state.watch.findingCount == 0)
        #expect(d.state.watch.timeline.rows.first { if case .balance = $0.change { return true } else { return false } }?.text() == "balance 1,250 → 1,231 (−19)")
        #expect(d.state.watch.timeline.rows.prefix(3).allSatisfy { $0.outcome == .reconciled })
        // The next round: a purchase of 200, exactly.
        _ = wake(&d)
        answer(&d, balance: 1431, entries: [phone, six] + Self.older.prefix(18), total: 232, id: "3")
        #expect(d.state.watch.findingCount == 0 && d.state.watch.timeline.rows.contains { $0.text() == "a purchase of 200 cheer (bundle 200)" })
    }

    /// A balance that moves during every read of the entries: the round gives up comparing (saying so)
    /// and the next compares with the last agreed reads, over the longer span. No finding either way.
    @Test func aBalanceThatKeepsMovingPutsTheComparisonOffToTheNextRound() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1000, id: "1")
        _ = wake(&d)
        var balance = 1000
        var entries: [CheerHistoryEntry] = []
        for n in 0..<20 {
            guard let (token, purpose) = Self.roundRead(d.state.inFlight) else { break }
            if purpose == .watch(.balance) {
                d.apply(.watchLoaded(token, .success(.balance(CheerBalance(balance: balance))), at: t0))
            } else {
                // Each read of the entries races a new cheer of 1: its debit shows in the next balance.
                entries.insert(CheerHistoryEntry(id: "race\(n)", creator: "F", amount: 1, product: Self.rain, date: t0.addingTimeInterval(Double(n) * 10), comments: nil), at: 0)
                balance -= 1
                d.apply(.watchLoaded(token, .success(.history(Self.page(entries + Self.older.prefix(20 - entries.count), total: 230 + entries.count))), at: t0))
            }
        }
        #expect(d.state.watch.rounds == 1 && d.state.isOut(.watchWake))
        #expect(d.state.watch.timeline.rows.first?.text() == "the balance moved during each of 4 reads of the entries: compared next round")
        _ = wake(&d)
        answer(&d, balance: balance, entries: entries + Self.older.prefix(20 - entries.count), total: 230 + entries.count, id: "3")
        #expect(d.state.watch.rounds == 2 && d.state.watch.findingCount == 0)
        #expect(d.state.watch.timeline.rows.contains { $0.text() == "balance 1,000 → 996 (−4)" })
    }
    /// This tool's purchase is credited before a round's reads, but its answer comes after the round:
    /// the round is not compared (whether its reads saw the write cannot be told), and the next one
    /// counts the write as this tool's own. No false finding either way.
    @Test func aRoundCrossedByThisToolsWriteIsComparedNextRound() {
        var d = ready()
        d.apply(.action(.watch))
        answer(&d, balance: 1250, id: "1")
        d.apply(.write(.purchase(identifier: "com.reiterate.cheer.100", transactionID: 7)))
        #expect(d.state.isOut(.write))
        _ = wake(&d)
        answer(&d, balance: 1350, id: "2")  // the credit is in; the answer of the POST is not yet
        #expect(d.state.watch.rounds == 1 && d.state.watch.findingCount == 0 && d.state.isOut(.watchWake))
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1350)), at: t0))
        _ = wake(&d)
        answer(&d, balance: 1350, id: "3")
        #expect(d.state.watch.rounds == 2 && d.state.watch.findingCount == 0)
        #expect(d.state.watch.timeline.rows.first { if case .balance = $0.change { return true } else { return false } }?.outcome == .own)
    }
}
