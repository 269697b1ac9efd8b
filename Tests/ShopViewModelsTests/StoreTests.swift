import Foundation
import ShopAPI
import ShopModel
import ShopCache
import Testing
@testable import ShopViewModels

@MainActor
@Suite struct StoreTests {
    func makeStore(_ fake: FakeShop, cacheDir: String? = nil, capacity: Int = 8) -> AppStore {
        AppStore(
            state: AppState(context: alice, historyCapacity: capacity), service: fake,
            cache: cacheDir.map { CacheStore(directory: $0) }, now: { t0 }
        )
    }

    func tempDir() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("vm-\(UUID().uuidString)").path }

    @Test func theFirstFrameShowsTheCachedBalanceBeforeAnyNetworkAnswer() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = CacheStore(directory: dir)
        await cache.write(CheerBalance(balance: 999), kind: "balance", key: alice.userKey, fetchedAt: t0.addingTimeInterval(-600))
        let fake = FakeShop()
        await fake.set(holdBalance: true)
        let store = makeStore(fake, cacheDir: dir)
        var effectsWhenCachedAppeared: [Effect]?
        store.onChange = { state in
            if effectsWhenCachedAppeared == nil, case .cached = state.balance.phase { effectsWhenCachedAppeared = store.effectLog }
        }
        store.perform(.start)
        #expect(await eventually { store.state.balance.phase == .cached(999, fetchedAt: t0.addingTimeInterval(-600), reason: nil) })
        // When the cached value first showed, the cache had been read and no network request had started.
        #expect(effectsWhenCachedAppeared?.count == 1)
        if case .readCache = effectsWhenCachedAppeared?.first {} else { Issue.record("\(String(describing: effectsWhenCachedAppeared))") }
        #expect(await eventually { await fake.heldCount == 1 })  // the live request is out, unanswered
        await fake.release()
        #expect(await eventually { store.state.balance.phase == .live(1250, fetchedAt: t0) })
        await store.settle()
        #expect(await cache.read(CheerBalance.self, kind: "balance", key: alice.userKey)?.value.balance == 1250)
    }

    @Test func refreshesWhileARequestIsOutSendNothingMore() async throws {
        let fake = FakeShop()
        await fake.set(holdBalance: true)
        await fake.set(holdHistory: true)
        await fake.set(holdPacks: true)
        let store = makeStore(fake)
        store.perform(.start)
        #expect(await eventually { await fake.heldCount == 3 })
        for _ in 0..<3 {
            store.perform(.refresh)
            store.perform(.refresh)
        }
        await fake.release()
        await store.settle()
        #expect(await fake.count("balance") == 1)
        #expect(await fake.count("history") == 1)
        #expect(await fake.count("packs") == 1)
        #expect(store.state.balance.phase == .live(1250, fetchedAt: t0))
    }

    @Test func aBalanceAskedBeforeASpendIsDroppedWhenItAnswers() async throws {
        let fake = FakeShop()
        let store = makeStore(fake)
        store.perform(.start)
        await store.settle()
        await fake.set(holdBalance: true)
        store.perform(.refresh)  // a balance request out, held
        #expect(await eventually { await fake.heldCount == 1 })
        await fake.set(holdBalance: false)  // the spend's own reads (its baseline, its verification) answer
        store.perform(.beginSpend)
        store.perform(.editSpend(amount: "50", comment: ""))
        store.perform(.submitAction)
        store.perform(.submitAction)
        #expect(await eventually { store.state.balance.phase == .live(1200, fetchedAt: t0) })
        await fake.release()  // the old answer (1,250) comes now: it must not overwrite the spend's
        await store.settle()
        #expect(store.state.balance.phase == .live(1200, fetchedAt: t0) && !store.state.balance.isLoading)
    }

    @Test func pagesEvictedInFlightAreCancelled() async throws {
        let fake = FakeShop()
        let store = makeStore(fake, capacity: 2)
        store.perform(.start)
        await store.settle()
        await fake.set(holdHistory: true)
        for _ in 0..<3 { store.perform(.historyNextPage) }  // pages 2, 3, 4: page 1 (loaded) and 2 (in flight) evicted
        #expect(await eventually { await fake.heldCount == 3 })
        await fake.release()
        await store.settle()
        #expect(await fake.cancelledHistoryPages == [2])
        #expect(store.state.history.page == 4 && store.state.history.rows.count == 50)
        #expect(store.state.history.pages.residentPages == [3, 4])
    }

    @Test func aSecondSubmitWhilePendingSendsNothing() async throws {
        let fake = FakeShop()
        let store = makeStore(fake)
        store.perform(.start)
        await store.settle()
        await fake.set(holdSpend: true)
        store.perform(.beginSpend)
        store.perform(.editSpend(amount: "50", comment: "hi"))
        store.perform(.submitAction)  // → confirming
        store.perform(.submitAction)  // → pending, sent
        store.perform(.submitAction)
        store.perform(.submitAction)
        #expect(await eventually { await fake.heldCount == 1 })
        await fake.release()
        await store.settle()
        #expect(await fake.count("spend") == 1)
        #expect(store.state.balance.phase == .live(1200, fetchedAt: t0))
        // Page 1 after the spend: the verification's own reads (the fake's history does not move, so it is read
        // again up to the bound of three); the list takes the page they settled on, with no read of its own.
        // Page 1: the start's, the baseline's (one read: nothing known says it lags), and the verification's.
        #expect(await fake.count("history qa-alice 1") == 2 + ReadSeries<Int>.maxReads)
        #expect(store.state.history.pages[1]?.isLoading == false && store.state.history.rows.count == 50)
        // The fake's balance moved by the amount (its history and pack totals do not: those checks fail).
        #expect(store.state.checks.records.first { $0.name == "spend-balance" }?.outcome == .passed)
    }

    @Test func offlineAfterOneGoodRunShowsEverythingFromTheCache() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let online = makeStore(FakeShop(), cacheDir: dir)
        online.perform(.start)
        await online.settle()
        #expect(online.state.balance.phase == .live(1250, fetchedAt: t0))

        let fake = FakeShop()
        await fake.set(balanceError: refused)
        let offline = makeStore(fake, cacheDir: dir)
        offline.perform(.start)
        await offline.settle()
        #expect(offline.state.balance.phase == .cached(1250, fetchedAt: t0, reason: StaleReason(brief: "offline", full: "offline: connection refused")))
        #expect(offline.state.packs.shown.rows.count == 4)
        #expect(offline.state.history.rows.count == 50)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(files.count == 3 && files.allSatisfy { $0.hasSuffix(".json") })
    }

    @Test func exchangesReachTheInspector() async throws {
        let fake = FakeShop()
        let store = makeStore(fake)
        store.observeExchanges()
        fake.exchangeSink.yield(exchange(1))
        fake.exchangeSink.yield(exchange(2, status: 503))
        #expect(await eventually { store.state.requests.rows.map(\.id) == [2, 1] })
        store.stop()
    }

    @Test func rWritesTheReportWithTheScreenAsDrawnAndEWritesTheSessionAsHAR() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fake = FakeShop()
        let e = Exchange(id: 1, method: "GET", path: "/api/v1/balance?user_id=qa-alice", startedAt: t0, duration: .milliseconds(3), status: 500,
                         failure: nil, requestID: "rq-9", attempt: 1, requestBytes: 0, responseBytes: 2, requestHeaders: [:],
                         responseHeaders: [:], requestBodyPreview: nil, responseBodyPreview: "{}")
        await fake.set(recorded: [e])
        await fake.set(balanceError: .http(status: 500, message: "boom", code: nil, requestID: "rq-9", endpoint: .get("/api/v1/balance"), retryAfter: nil))
        let store = makeStore(fake)
        store.evidence = EvidenceFiles(reportsDirectory: dir + "/reports", harDirectory: dir + "/har", version: "1.2.3")
        var copied: [String] = []
        store.onFrontEnd = { if case let .copy(text) = $0 { copied.append(text) } }
        store.screenText = { "Balance 1,250 cheer · HTTP 500" }
        store.perform(.start)
        await store.settle()
        store.send(.exchangeRecorded(e))
        store.send(.action(.bugReport))
        store.send(.action(.bugReport))  // the same second: a second file, not one over the first
        await store.settle()
        let first = dir + "/reports/report-2026-11-21T222640Z.md", second = dir + "/reports/report-2026-11-21T222640Z-2.md"
        #expect(copied.prefix(2) == [first, second][...] || Set(copied) == [first, second], "\(copied)")
        let text = try String(contentsOfFile: first, encoding: .utf8)
        #expect(text.hasPrefix("# GET /api/v1/balance: HTTP 500 Internal Server Error: boom (request id rq-9)") && text.contains("Balance 1,250 cheer · HTTP 500")
                && text.contains("reiterate-shop 1.2.3") && text.contains("- **Request id:** `rq-9`"), "\(text)")
        let mode = try FileManager.default.attributesOfItem(atPath: first)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        store.send(.action(.writeHAR))
        await store.settle()
        let har = dir + "/har/session-2026-11-21T222640Z.har"
        #expect(store.state.notice?.text == "HAR of 1 request written (path copied): \(har)" && copied.last == har)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any]
        let entries = (json?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries?.count == 1 && entries?.first?["_requestId"] as? String == "rq-9")
    }

    @Test func aReportThatCannotBeWrittenSaysSoInOneLine() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir, contents: Data()))  // a file where the folder should be
        let fake = FakeShop()
        await fake.set(balanceError: .http(status: 500, message: "boom", code: nil, requestID: "rq-9", endpoint: .get("/api/v1/balance"), retryAfter: nil))
        let store = makeStore(fake)
        store.evidence = EvidenceFiles(reportsDirectory: dir + "/reports")
        store.perform(.start)
        await store.settle()
        store.send(.action(.bugReport))
        await store.settle()
        #expect(store.state.notice == Notice(.error, "The bug report could not be written: check that \(dir)/reports is a writable folder."))
        #expect(store.state.balance.error?.requestID == "rq-9")  // the balance's failure is kept as it was
    }

}
