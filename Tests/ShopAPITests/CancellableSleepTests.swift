import Foundation
@testable import ShopAPI
import Testing

@Suite("CancellableSleep")
struct CancellableSleepTests {
    @Test func sleepsForItsDuration() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        try await CancellableSleep.sleep(for: .milliseconds(50))
        #expect(clock.now - start >= .milliseconds(49))
    }

    @Test func cancellationEndsItAtOnceWithCancellationError() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let task = Task { try await CancellableSleep.sleep(for: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(20))  // a deliberate delay: the cancel mostly lands mid-sleep (one before it ends it too)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Long before the 30 s (the bound leaves room for a test pool of two threads kept busy by
        // the CPU-bound suites running beside this one: 5 s was missed by 0.3–2.8 s under load).
        #expect(clock.now - start < .seconds(20))
    }

    @Test func aTaskCancelledBeforeItSleepsNeverArmsTheTimer() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await CancellableSleep.sleep(for: .seconds(30))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func manySleepsRacedAndCancelledEndCleanly() async throws {
        // The transport's pattern: each request races a timeout that loses and is cancelled.
        for _ in 0..<200 {
            let winner = try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask { 1 }
                group.addTask { try await CancellableSleep.sleep(for: .seconds(10)); return 2 }
                defer { group.cancelAll() }
                return try await group.next() ?? 0
            }
            #expect(winner == 1)
        }
    }

    @Test func hugeDurationsDoNotOverflow() {
        #expect(CancellableSleep.nanoseconds(.seconds(Int64.max)) == Int.max)
        #expect(CancellableSleep.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
    }
}
