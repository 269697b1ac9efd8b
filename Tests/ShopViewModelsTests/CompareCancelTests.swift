import Foundation
import ShopAPI
import ShopCompare
import Testing
@testable import ShopViewModels

/// A comparison asked again while the first is out supersedes it: the first is cancelled (its
/// effect is in the list, before the new comparison) and the store stops its task.
@Suite struct CompareCancelTests {
    @Test func aSupersededComparisonIsCancelled() {
        var d = Driver.loaded()
        d.apply(.action(.compare))
        "user:qa-bob".forEach { d.apply(.text($0)) }
        guard case let .compare(first, _, _, _)? = d.apply(.action(.runPrompt)).last else { Issue.record("no compare"); return }
        d.apply(.action(.compare))
        "env:next-build".forEach { d.apply(.text($0)) }
        let again = d.apply(.action(.runPrompt))
        guard case let .compare(second, _, _, _)? = again.last else { Issue.record("no second compare: \(again)"); return }
        #expect(again.first == .cancel(first), "\(again)")
        #expect(second != first && d.state.token(for: .compare) == second && d.state.requestsOut.values.filter { $0 == .compare }.count == 1)
    }

    /// The store runs a comparison as a request under its token: `.cancel(token)` stops it.
    @MainActor
    @Test func theStoreStopsTheSupersededComparison() async {
        let comparer = WaitingComparer()
        let store = AppStore(state: AppState(context: alice), service: FakeShop(), cache: nil, now: { t0 })
        store.comparer = comparer
        func ask(_ side: String) {
            store.send(.action(.compare))
            side.forEach { store.send(.text($0)) }
            store.send(.action(.runPrompt))
        }
        ask("user:qa-bob")
        #expect(await eventually { await comparer.started == 1 })
        ask("env:next-build")
        #expect(await eventually {
            let (started, cancelled) = (await comparer.started, await comparer.cancelled)
            return started == 2 && cancelled == 1
        })
        await comparer.finish()
        await store.settle()
        let cancelled = await comparer.cancelled
        #expect(cancelled == 1 && store.state.token(for: .compare) == nil)
    }
}

/// A comparer whose comparisons wait until `finish()` or until their task is cancelled.
actor WaitingComparer: Comparer {
    private(set) var started = 0
    private(set) var cancelled = 0

    func compare(_ a: CompareSide, with b: CompareSide, what: ComparedPart) async -> Result<DiffResult, CompareFailure> {
        started += 1
        while !Task.isCancelled, !finished {
            try? await Task.sleep(for: .milliseconds(5))  // pace of the fake comparison's poll
        }
        if Task.isCancelled { cancelled += 1 }
        return .failure(CompareFailure("stopped"))
    }

    private var finished = false
    func finish() { finished = true }

    func saveSnapshot(user: String) async -> Result<String, CompareFailure> { .failure(CompareFailure("no")) }
}
