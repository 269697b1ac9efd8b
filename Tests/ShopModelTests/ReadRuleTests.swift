import ShopModel
import Synchronization
import Testing

/// The one rule of when to read again, which the view models' settled reads and every awaited series of
/// reads (`negative`, compare's live side, `replay`, the ledger probe) follow.
@Suite struct ReadRuleTests {
    /// Answers `values` one per read (the last again past the end), and records each pause asked for.
    final class Reader: Sendable {
        let values: [Int]
        let taken = Mutex(0)
        let paused = Mutex<[Double]>([])
        init(_ values: [Int]) { self.values = values }
        func read() -> Int { taken.withLock { n in defer { n += 1 }; return values[min(n, values.count - 1)] } }
        func pause(_ s: Double) async { paused.withLock { $0.append(s) } }
    }

    @Test func aReadThatShowsWhatIsExpectedEndsTheReads() async {
        let r = Reader([1_243])
        let reads = await ReadRule<Int>(expecting: { $0 == 1_243 }).reads(pause: r.pause) { r.read() }
        #expect(reads.all == [1_243] && reads.met)
        #expect(r.paused.withLock { $0 }.isEmpty)
    }

    @Test func aReadThatDisagreesIsReadAgainAfterAPauseAtMostThreeTimes() async {
        let lagging = Reader([1_250, 1_250, 1_250, 1_243])
        let reads = await ReadRule<Int>(expecting: { $0 == 1_243 }).reads(pause: lagging.pause) { lagging.read() }
        #expect(reads.all == [1_250, 1_250, 1_250] && !reads.met && reads.last == 1_250)
        #expect(lagging.paused.withLock { $0 } == [0.5, 1.0])

        let catchingUp = Reader([1_250, 1_243])
        let caught = await ReadRule<Int>(expecting: { $0 == 1_243 }).reads(pause: catchingUp.pause) { catchingUp.read() }
        #expect(caught.all == [1_250, 1_243] && caught.met)
        #expect(catchingUp.paused.withLock { $0 } == [0.5])
    }

    @Test func withNothingExpectedOneReadIsTaken() async {
        let r = Reader([7, 8])
        let reads = await ReadRule<Int>().reads(pause: r.pause) { r.read() }
        #expect(reads.all == [7] && reads.met)
    }

    @Test func agreementWantsTwoReadsInARowTheSecondAtOnceWhenNothingSaysTheFirstIsWrong() async {
        let steady = Reader([5, 5])
        let s = await ReadRule<Int>(twoAgree: ==).reads(pause: steady.pause) { steady.read() }
        #expect(s.all == [5, 5] && s.met)
        #expect(steady.paused.withLock { $0 }.isEmpty)

        // Two that disagree: a third after 1 s; it settles on the last two when they agree.
        let moving = Reader([5, 6, 6])
        let m = await ReadRule<Int>(twoAgree: ==).reads(pause: moving.pause) { moving.read() }
        #expect(m.all == [5, 6, 6] && m.met && m.last == 6)
        #expect(moving.paused.withLock { $0 } == [1.0])

        // Never two alike within three reads: not met.
        let never = Reader([5, 6, 7])
        let n = await ReadRule<Int>(twoAgree: ==).reads(pause: never.pause) { never.read() }
        #expect(n.all == [5, 6, 7] && !n.met)
    }

    @Test func aFirstReadOtherThanExpectedIsConfirmedAfterThePause() async {
        // `replay`: the recording is expected, and the verdict rests on two reads that agree.
        let changed = Reader([9, 9])
        let c = await ReadRule<Int>(expecting: { $0 == 5 }, twoAgree: ==).reads(pause: changed.pause) { changed.read() }
        #expect(c.all == [9, 9] && c.met)
        #expect(changed.paused.withLock { $0 } == [0.5])
    }

    @Test func aFailedReadEndsTheReadsAndIsThrownOn() async {
        struct Lost: Error {}
        let r = Reader([1])
        await #expect(throws: Lost.self) {
            _ = try await ReadRule<Int>(expecting: { $0 == 2 }).reads(pause: r.pause) { () throws -> Int in
                if r.taken.withLock({ $0 }) == 1 { throw Lost() }
                return r.read()
            }
        }
        #expect(r.taken.withLock { $0 } == 1)
    }

    @Test func theViewModelsSeriesAsksTheSameRule() {
        var s = ReadSeries<Int>()
        for v in [1_250, 1_250] { s.answered(.success(Sighting(v, requestID: nil))) }
        let rule = ReadRule<Int>(expecting: { $0 == 1_243 })
        #expect(s.wantsAnother { $0 == 1_243 } == (rule.next(after: [1_250, 1_250]) != .done))
        #expect(rule.next(after: [1_250, 1_250]) == .again(after: 1.0))
        #expect(rule.next(after: [1_250, 1_250, 1_250]) == .done)
    }
}
