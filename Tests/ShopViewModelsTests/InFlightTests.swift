import Foundation
import ShopAPI
import ShopCompare
import ShopCache
import StubCore
import Testing
@testable import ShopViewModels

/// The table of requests in flight: every request the model asks for is in it with its purpose, an
/// answer removes it, and what each resource shows as loading agrees with the table at every step.
@Suite struct InFlightTable {
    /// The requests the effects ask for, by token.
    static func asked(_ effects: [Effect]) -> [Token: Purpose?] {
        var out: [Token: Purpose?] = [:]
        for effect in effects.flatMap(\.flattened) {
            switch effect {
            case let .readCache(t, _, _): out[t] = .cacheRead
            case let .request(t, .balance): out[t] = .balance
            case let .request(t, .packs): out[t] = .packs
            case let .request(t, .history(_, _, _)): out[t] = .some(nil)  // a page, a scan page or a verification read
            case let .request(t, .spend), let .request(t, .purchase): out[t] = .write
            default: break
            }
        }
        return out
    }

    /// The table and the resources tell the same story.
    static func agree(_ s: AppState, _ note: @autoclosure () -> String = "") {
        let table = s.inFlight
        #expect(s.balance.isLoading == table.contains(.balance), "balance \(note())")
        #expect(s.packs.list.isLoading == table.contains(.packs), "packs \(note())")
        for page in s.history.pages.residentPages {
            #expect(s.history.pages[page]?.isLoading == table.contains(.historyPage(page)), "page \(page) \(note())")
        }
        // Nothing waits for a page that is not held, and at most one request per purpose.
        for purpose in table.purposes.values {
            if case let .historyPage(page) = purpose { #expect(s.history.pages[page] != nil, "page \(page) in flight but not held \(note())") }
            if case .findScan = purpose { #expect(s.history.find?.scan != nil, "scan in flight with no find \(note())") }
            if case .write = purpose { #expect(s.isWriting, "write in flight but no write pending \(note())") }
            if purpose.isWatch { #expect(s.watch.isOn, "a watch request out while not watching \(note())") }
        }
        #expect(Set(table.purposes.values).count == table.count, "two requests for one purpose \(note())")
    }

    @Test func everyRequestAskedIsInTheTableWithItsPurpose() {
        var d = Driver()
        let out = d.send(.start)
        let asked = Self.asked(out)
        #expect(asked.count == 4 && d.state.inFlight.count == 4)
        for (token, purpose) in asked {
            let inTable = d.state.inFlight.purposes[token]
            #expect(inTable != nil)
            if let purpose { #expect(inTable == purpose) }
        }
        #expect(d.state.inFlight.token(for: .historyPage(1)) == d.requestID(forPage: 1))
        // An answer removes its token; the same answer again is stale.
        d.apply(.balanceLoaded(d.balanceToken, .success(CheerBalance(balance: 9)), at: t0))
        #expect(!d.state.inFlight.contains(.balance) && d.state.inFlight.count == 3)
        Self.agree(d.state)
    }

    @Test func aUserSwitchIsOneOperationOnTheTable() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(d.cacheToken, balance: nil, packs: nil, firstPage: nil))
        d.loadPage(1)
        d.send(.find("nothing"))
        #expect(d.state.inFlight.contains(.balance) && d.state.inFlight.contains(.packs))
        let before = d.state.inFlight.purposes
        let out = d.run([.action(.switchUser)] + "qa-bob".map { .text($0) } + [.action(.runPrompt)])
        let cancelled = Set(out.compactMap { if case let .cancel(t) = $0 { return t } else { return nil } })
        // The user's requests are cancelled, the shop's packs are not.
        #expect(cancelled == Set(before.filter { $0.value.isPerUser }.keys))
        #expect(before.values.contains { if case .findScan = $0 { return true } else { return false } })
        #expect(d.state.inFlight.contains(.packs) && d.state.context.user == "qa-bob")
        for token in cancelled { #expect(d.state.inFlight.purposes[token] == nil) }
        Self.agree(d.state)
    }

    @Test func quittingCancelsEverythingOut() {
        var d = Driver()
        d.send(.start)
        let out = d.apply(.action(.quit))
        #expect(out.last == .quit(status: 0))
        #expect(out.filter { if case .cancel = $0 { return true } else { return false } }.count == 4)
        #expect(d.state.inFlight.isEmpty)
        #expect(d.state.balance == .idle && d.state.history.pages.residentCount == 0)
    }

    @Test func aCancelFromTheStoreGivesBackWhatWasShown() {
        var d = Driver()
        d.send(.start)
        d.apply(.cacheLoaded(d.cacheToken, balance: CacheEntry(value: CheerBalance(balance: 40), fetchedAt: t0),
                             packs: nil, firstPage: CacheEntry(value: historyPage(1), fetchedAt: t0)))
        // The page keeps its cached rows and the balance its cached value once their requests are cancelled.
        d.apply(.cancelled(d.requestID(forPage: 1) ?? Token(-1)))
        d.apply(.cancelled(d.balanceToken))
        #expect(d.state.history.rows.count == 50 && !(d.state.history.current?.isLoading ?? true))
        #expect(d.state.balance.phase == .cached(40, fetchedAt: t0, reason: nil))
        Self.agree(d.state)
    }

    @Test func aFindScanCancelledByTheStoreStopsTheFindInsteadOfWaitingForever() {
        var d = Driver()
        d.send(.start)
        d.loadPage(1)
        d.send(.find("x"))
        guard let scan = d.state.inFlight.purposes.first(where: { if case .findScan = $0.value { return true } else { return false } })?.key else {
            Issue.record("no scan")
            return
        }
        d.apply(.cancelled(scan))
        #expect(d.state.history.find?.scan == nil && d.state.notice?.text == "Find stopped")
        #expect(!d.state.isBusy || d.state.inFlight.purposes.values.contains { $0 != .cacheRead })
        Self.agree(d.state)
    }

    /// A seeded walk of keys, answers (live, failed, stale, twice) and cancellations: after every
    /// message the table and the resources agree, and nothing is asked twice for one purpose.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func aRandomWalkKeepsTheTableAndTheScreenInStep(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)  // a failing walk runs again from its seed
        var d = Driver()
        d.send(.start)
        var answered: [Token] = []
        let keys: [Action] = [.down, .up, .pageDown, .pageUp, .first, .last, .nextPage, .previousPage, .refresh, .history, .shop, .toggle, .back, .watch, .live]
        for step in 0..<400 {
            let roll = rng.next() % 10
            let table = d.state.inFlight.purposes.sorted { $0.key < $1.key }
            if roll < 4, !table.isEmpty {
                let (token, purpose) = table[Int(rng.next() % UInt64(table.count))]
                answered.append(token)
                d.apply(Self.answer(token, purpose, fail: rng.next() % 5 == 0, total: 230 + Int(rng.next() % 3)))
            } else if roll == 4, !table.isEmpty {
                d.apply(.cancelled(table[Int(rng.next() % UInt64(table.count))].key))
            } else if roll == 5, let old = answered.randomElement(using: &rng) {
                // A late or repeated answer: dropped.
                let before = d.state.inFlight
                d.apply(.balanceLoaded(old, .success(CheerBalance(balance: -1)), at: t0))
                #expect(d.state.inFlight == before && d.state.balance.value != -1)
            } else if roll == 6, rng.next() % 3 == 0 {
                // A spend of 1 cheer on the selected pack (verified by the reads that follow).
                d.send(.beginSpend)
                d.send(.editSpend(amount: "1", comment: ""))
                d.send(.submitAction)
                d.send(.submitAction)
            } else if roll == 6 {
                d.send(.find(rng.next() % 2 == 0 ? "Field" : "zzz"))
            } else {
                d.apply(.action(keys[Int(rng.next() % UInt64(keys.count))]))
            }
            Self.agree(d.state, "seed \(seed) step \(step)")
        }
    }

    static func answer(_ token: Token, _ purpose: Purpose, fail: Bool, total: Int) -> Message {
        let error = ShopAPIError.transport(.connectionRefused(host: "127.0.0.1"), endpoint: .get("/x"))
        switch purpose {
        case .cacheRead: return .cacheLoaded(token, balance: nil, packs: nil, firstPage: nil)
        case .balance: return .balanceLoaded(token, fail ? .failure(error) : .success(CheerBalance(balance: 100)), at: t0)
        case .packs: return .packsLoaded(token, fail ? .failure(error) : .success(samplePacks), at: t0)
        case let .historyPage(page): return .historyLoaded(token, page: page, fail ? .failure(error) : .success(historyPage(page, total: total)), at: t0)
        case let .findScan(page): return .historyLoaded(token, page: page, fail ? .failure(error) : .success(historyPage(page, perPage: 200, total: total)), at: t0)
        case .verificationHistory: return .historyLoaded(token, page: 1, .success(historyPage(1, total: total)), at: t0)
        case .write: return .actionFinished(token, .success(CheerBalance(balance: 90)), at: t0)
        case .watchWake: return .woke(token, at: t0)
        case .watch(.balance): return .watchLoaded(token, fail ? .failure(error) : .success(.balance(CheerBalance(balance: 100))), at: t0)
        case .watch(.history): return .watchLoaded(token, fail ? .failure(error) : .success(.history(historyPage(1, perPage: 20, total: total))), at: t0)
        case .watch(.packs): return .watchLoaded(token, fail ? .failure(error) : .success(.packs(samplePacks)), at: t0)
        case .compare: return .compared(token, fail ? .failure(CompareFailure("side B: down")) : .success(DiffResult(what: .balance,
            a: .init(name: "A", environment: nil, user: nil, takenAt: nil), b: .init(name: "B", environment: nil, user: nil, takenAt: nil), differences: [])))
        }
    }
}
