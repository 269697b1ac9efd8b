import Foundation
import ShopAPI
import ShopViewModels
import Synchronization
import Testing
@testable import ShopProbes

/// `watch`'s run with no screen, out of the executable (issue 44, item 5), against the stand-in in this
/// process: a spend made while it watches is one event line, and the run ends at its count.
@Suite struct WatcherTests {
    @Test func aSpendMadeWhileItWatchesIsOneEventAndTheCountEndsIt() async throws {
        let out = Mutex<[String]>([]), err = Mutex<[String]>([])
        let lines = OutputLines(out: { text in out.withLock { $0.append(text) } }, err: { text in err.withLock { $0.append(text) } })
        let outcome = try await withStandIn { client, stub in
            let store = await AppStore(state: AppState(context: ShopContext(environment: "local", baseURL: stub.url, user: "qa-alice"),
                                                       watch: WatchState(interval: 0.2)),
                                       service: LiveShopService(client: client), cache: nil)
            // The spend once the watch's first round is read (a poll of the store, bounded: 10 s).
            let spending = Task { @MainActor in
                for _ in 0..<500 where store.state.watch.rounds < 1 { try await Task.sleep(for: .milliseconds(20)) }
                _ = try await client.send(SpendCheer(amount: 2, product: "com.reiterate.pack.rain", user: "qa-alice"))
            }
            let outcome = await Watcher(store: store, json: false, strict: false, count: 1, seconds: 10, lines: lines).run()
            _ = try? await spending.value
            return outcome
        }
        #expect(outcome.events == 1 && outcome.findings == 0 && outcome.rounds >= 1 && outcome.why == nil, "\(outcome)")
        let printed = out.withLock { $0 }
        #expect(printed.count == 1, "\(printed)")
        // The round that sees the spend tells the balance's move first (its entry explains it: reconciled).
        #expect(printed.first?.contains("  balance 1,250 → 1,248 (−2)  [reconciled]\n") == true, "\(printed)")
        #expect(err.withLock { $0 }.allSatisfy { $0.hasPrefix("note: ") }, "\(err.withLock { $0 })")
    }
}
