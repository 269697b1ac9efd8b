import Testing
@testable import StubCore

/// The read faults `stale_read` and `short_pages` at the store: what a lagging replica answers, and what
/// a page cut to `cap` entries keeps.
@Suite struct ReadFaultTests {
    let store = ShopStore(config: ShopConfig(whaleHistory: 1_000), now: 1_000)
    let bundle = "com.reiterate.cheer.200"

    func firstProduct() async throws -> String {
        try #require(await store.audioPacks().first).identifier
    }

    @Test func staleReadAnswersTheStateBeforeTheLatestWriteWithinTheLag() async throws {
        let before = try await store.history(user: "qa-alice", page: 1, perPage: 50)
        let beforeSecond = try await store.history(user: "qa-alice", page: 2, perPage: 50)
        let product = try await firstProduct()
        // Nothing written yet: every read is fresh.
        #expect(try await store.staleBalance(user: "qa-alice", now: 5, lag: 1_000) == nil)
        #expect(try await store.staleHistory(user: "qa-alice", page: 1, perPage: 50, now: 5, lag: 1_000) == nil)

        #expect(try await store.spend(user: "qa-alice", amount: 7, product: product, comment: "hi", now: 5) == 1243)
        #expect(try await store.staleBalance(user: "qa-alice", now: 5, lag: 1_000) == 1250)
        #expect(try await store.staleBalance(user: "qa-alice", now: 5.5, lag: 1_000) == 1250)
        let stale = try #require(try await store.staleHistory(user: "qa-alice", page: 1, perPage: 50, now: 5.5, lag: 1_000))
        #expect(stale == before)  // the history as it was, paged and counted from that list (230)
        let secondPage = try #require(try await store.staleHistory(user: "qa-alice", page: 2, perPage: 50, now: 5.5, lag: 1_000))
        #expect(secondPage == beforeSecond)
        // The lag is over (1 s at 1,000 ms; the client's read at 1.5 s): fresh.
        #expect(try await store.staleBalance(user: "qa-alice", now: 6, lag: 1_000) == nil)
        #expect(try await store.staleBalance(user: "qa-alice", now: 6.5, lag: 1_000) == nil)
        #expect(try await store.staleHistory(user: "qa-alice", page: 1, perPage: 50, now: 6.5, lag: 1_000) == nil)
        #expect(try await store.history(user: "qa-alice", page: 1, perPage: 50).paging.totalCount == 231)
        // A lag of 0 is never stale; other users had no write.
        #expect(try await store.staleBalance(user: "qa-alice", now: 5, lag: 0) == nil)
        #expect(try await store.staleBalance(user: "qa-whale", now: 5.5, lag: 1_000) == nil)
        #expect(try await store.staleHistory(user: "qa-whale", page: 1, perPage: 50, now: 5.5, lag: 1_000) == nil)
    }

    @Test func aReplicaLaggingPastSeveralWritesAnswersTheStateOfThatMomentAndOnlyWhatChangedIsStale() async throws {
        let product = try await firstProduct()
        let before = try await store.history(user: "qa-alice", page: 1, perPage: 50)
        _ = try await store.spend(user: "qa-alice", amount: 7, product: product, comment: nil, now: 5)
        let afterSpend = try await store.history(user: "qa-alice", page: 1, perPage: 50)
        #expect(try await store.purchase(user: "qa-alice", identifier: bundle, transactionID: 7, now: 5.3) == 1443)
        // At 5.4 a replica 1 s behind holds the state of 4.4: before both writes (a lag longer than the gap
        // between two writes answers a state several writes old).
        #expect(try await store.staleBalance(user: "qa-alice", now: 5.4, lag: 1_000) == 1250)
        #expect(try await store.staleHistory(user: "qa-alice", page: 1, perPage: 50, now: 5.4, lag: 1_000) == before)
        // At 6.2 it holds 5.2: the spend, not yet the purchase. The purchase changed the balance alone, so the
        // history is fresh.
        #expect(try await store.staleBalance(user: "qa-alice", now: 6.2, lag: 1_000) == 1243)
        #expect(try await store.staleHistory(user: "qa-alice", page: 1, perPage: 50, now: 6.2, lag: 1_000) == nil)
        #expect(try await store.history(user: "qa-alice", page: 1, perPage: 50) == afterSpend)
        // A write that changed nothing (no debit, no entry) is no write to lag behind.
        let nothing = try await store.spendLeniently(user: "qa-alice", amount: 3, product: product, comment: nil, now: 5.5,
                                                     quirks: [.noDebit, .noEntry])
        #expect(nothing.after == 1443)
        #expect(try await store.staleBalance(user: "qa-alice", now: 6.2, lag: 1_000) == 1243)
        #expect(try await store.staleBalance(user: "qa-alice", now: 6.4, lag: 1_000) == nil)
    }

    @Test func aReplicaOneWriteBehindStaysThereUntilTheNextWrite() async throws {
        let product = try await firstProduct()
        #expect(try await store.staleBalance(user: "qa-alice", now: 1, lag: 0, writes: 1) == nil)  // nothing written yet
        _ = try await store.spend(user: "qa-alice", amount: 7, product: product, comment: nil, now: 5)
        // However long after: the state before the latest write.
        #expect(try await store.staleBalance(user: "qa-alice", now: 500, lag: 0, writes: 1) == 1250)
        _ = try await store.spend(user: "qa-alice", amount: 3, product: product, comment: nil, now: 600)
        #expect(try await store.staleBalance(user: "qa-alice", now: 9_000, lag: 0, writes: 1) == 1243)
        #expect(try await store.staleBalance(user: "qa-alice", now: 9_000, lag: 0, writes: 2) == 1250)
        #expect(try await store.staleBalance(user: "qa-alice", now: 9_000, lag: 0, writes: 3) == nil)  // not that many writes
    }

    @Test func creditsLagToo() async throws {
        // stray_credit and second_user_write change a balance with `credit`: a replica lags behind it too.
        try await store.credit(user: "qa-whale", amount: -1, now: 5)
        #expect(try await store.balance(user: "qa-whale") == 999_999)
        #expect(try await store.staleBalance(user: "qa-whale", now: 5.2, lag: 1_000) == 1_000_000)
        #expect(try await store.staleBalance(user: "qa-alice", now: 5.2, lag: 1_000) == nil)
        // Reset forgets every write.
        await store.reset(now: 5.3)
        try await store.credit(user: "qa-alice", amount: 0, now: 5.3)
        #expect(try await store.staleBalance(user: "qa-whale", now: 5.4, lag: 1_000) == nil)
        #expect(try await store.staleBalance(user: "qa-alice", now: 5.4, lag: 1_000) == nil)
    }

    @Test func shortPagesKeepTheFirstCapEntriesOfTheWindowAsked() async throws {
        var page = try await store.history(user: "qa-whale", page: 2, perPage: 200)
        let paging = page.paging
        let window = try await store.history(user: "qa-whale", page: 5, perPage: 50)
        let cut = page.cut(to: 50)
        #expect(cut)
        #expect(page.entries == window.entries && page.entries.count == 50)
        #expect(page.entries.first?.id == "h-qa-whale-200")
        // The paging fields stay those of per_page 200.
        #expect(page.paging == paging && paging.page == 2 && paging.perPage == 200 && paging.totalCount == 1_000 && paging.totalPages == 5)
        let again = page.cut(to: 50)
        #expect(!again)  // nothing more to cut
        var whole = try await store.history(user: "qa-whale", page: 5, perPage: 200)
        let cutWhole = whole.cut(to: 200)
        #expect(whole.entries.count == 200 && !cutWhole)  // a cap of per_page cuts nothing
        var past = try await store.history(user: "qa-whale", page: 6, perPage: 200)
        let cutPast = past.cut(to: 1)
        #expect(past.entries.isEmpty && !cutPast)
    }

    @Test func theNewKindsParseAndListTheirKeys() throws {
        let stale = try FaultSpec.parse("stale_read,rate=0.5,ms=1000")
        #expect(stale.kind == .staleRead && stale.ms == 1_000 && stale.rate == 0.5)
        #expect(try FaultSpec.parse("stale_read").ms == 1_000)
        #expect(String(decoding: try StubJSON.encode(ActiveFault(id: 1, spec: stale)), as: UTF8.self)
            == #"{"hits":0,"id":1,"kind":"stale_read","ms":1000,"path":"/api/*","rate":0.5}"#)
        let short = try FaultSpec.parse("short_pages,cap=50,path=/api/v1/cheer_history")
        #expect(short.kind == .shortPages && short.cap == 50)
        #expect(try FaultSpec.parse("short_pages").cap == 50)
        #expect(try FaultSpec.from(json: .object([("kind", .string("short_pages")), ("cap", .int(7))])).cap == 7)
        #expect(String(decoding: try StubJSON.encode(ActiveFault(id: 2, spec: short)), as: UTF8.self)
            == #"{"cap":50,"hits":0,"id":2,"kind":"short_pages","path":"/api/v1/cheer_history"}"#)
        for wrong in ["short_pages,cap=0", "short_pages,cap=201", "short_pages,cap=1.5"] {
            do {
                _ = try FaultSpec.parse(wrong)
                Issue.record("\(wrong) parsed")
            } catch let error as FaultSpecError {
                #expect(error.message == "fault key 'cap' needs a whole number in 1...200")
            }
        }
        #expect(FaultSpec.keys.contains("cap"))
    }
}
