import Foundation
import ShopModel
import Testing

@Suite struct TimelineTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    var now: Date { t0.addingTimeInterval(60) }

    func point(_ balance: Int?, _ total: Int?, _ s: Double) -> Timeline.Point {
        Timeline.Point(balance: balance, historyTotal: total, at: t0.addingTimeInterval(s))
    }

    @Test func aStateIsLeftOnlyOnceALaterOneIsKnown() {
        var t = Timeline()
        #expect(!t.hasLeft(balance: 1250, now: now))
        t.record(point(1250, 230, 0))
        #expect(!t.hasLeft(balance: 1250, now: now))  // the latest: not left
        t.record(point(1247, 231, 1))
        #expect(t.hasLeft(balance: 1250, now: now) && t.hasLeft(historyTotal: 230, now: now))
        #expect(!t.hasLeft(balance: 1247, now: now) && !t.hasLeft(historyTotal: 231, now: now))
        // A value never known is another writer's, never a lag.
        #expect(!t.hasLeft(balance: 1000, now: now) && !t.hasLeft(historyTotal: 229, now: now))
    }

    @Test func theSameStateAgainMovesOnlyItsTime() {
        var t = Timeline()
        t.record(point(100, 5, 0))
        t.record(point(100, 5, 3))
        #expect(t.points.count == 1 && t.latest?.at == t0.addingTimeInterval(3))
        // A value not read is carried from the latest.
        t.record(point(97, nil, 4))
        #expect(t.points.count == 2 && t.latest?.historyTotal == 5 && t.latest?.balance == 97)
    }

    @Test func aStateCanComeBackAndIsThenTheLatestAgain() {
        var t = Timeline()
        t.record(point(100, 5, 0))
        t.record(point(97, 6, 1))
        t.record(point(100, 6, 2))  // a purchase of 3 after a spend of 3
        #expect(!t.hasLeft(balance: 100, now: now) && t.hasLeft(balance: 97, now: now))
    }

    @Test func atMostKeptPointsAreKept() {
        var t = Timeline()
        for i in 0..<(Timeline.kept + 10) { t.record(point(10_000 - i, i, Double(i))) }
        #expect(t.points.count == Timeline.kept)
        #expect(!t.hasLeft(balance: 10_000, now: now))  // dropped: no longer known to be left
        #expect(t.hasLeft(balance: 10_000 - 10, now: now))
    }

    @Test func aStateLeftLongAgoIsAnotherWritersIfItComesBack() {
        var t = Timeline()
        t.record(point(100, 5, 0))
        t.record(point(300, 5, 1))  // bought 200
        #expect(t.hasLeft(balance: 100, now: t0.addingTimeInterval(60)))
        // Five minutes on, a read of 100 is another tester's spend of 200, not a lag.
        #expect(!t.hasLeft(balance: 100, now: t0.addingTimeInterval(301)))
    }

    @Test func itRoundTripsThroughJSON() throws {
        var t = Timeline()
        t.record(Timeline.Point(balance: 5, historyTotal: 1, at: t0, requestID: "rq-1"))
        let data = try JSONEncoder().encode(t)
        #expect(String(decoding: data, as: UTF8.self).contains("\"history_total\""))
        #expect(try JSONDecoder().decode(Timeline.self, from: data) == t)
    }
}

@Suite struct ShopRulesTests {
    @Test func aSpendOfTheWholeBalanceIsCovered() {
        #expect(ShopRules.spend(amount: 120, balance: 120) == .covered)
        #expect(ShopRules.spend(amount: 121, balance: 120) == .insufficient)
    }

    @Test func a402IsJudgedOnlyOnBalancesThatAgree() {
        #expect(ShopRules.refusalForBalanceIsFounded(amount: 120, before: 120, after: 120) == false)
        #expect(ShopRules.refusalForBalanceIsFounded(amount: 121, before: 120, after: 120) == true)
        // Another writer took the balance below the amount meanwhile: not judged.
        #expect(ShopRules.refusalForBalanceIsFounded(amount: 120, before: 120, after: 100) == nil)
        #expect(ShopRules.refusalForBalanceIsFounded(amount: 120, before: nil, after: 120) == nil)
    }
}

@Suite struct SettleTests {
    func series(_ values: [Int]) -> ReadSeries<Int> {
        var s = ReadSeries<Int>()
        for (i, v) in values.enumerated() { s.answered(.success(Sighting(v, requestID: "rq-\(i)"))) }
        return s
    }

    @Test func readsThatOnlyShowALeftStateSettleOnWhatIsKnown() {
        let s = series([1250, 1250, 1250])
        let settled = s.settle(isTarget: { $0 == 1247 }, isOlder: { $0 == 1250 }, answerIsNewer: true, known: 1247)
        #expect(settled == .settled(1247, stale: s.sightings))
    }

    @Test func withNothingNewerKnownTheyAreBehindNotJudged() {
        let s = series([1250, 1250, 1250])
        let settled = s.settle(isTarget: { $0 == 1247 }, isOlder: { $0 == 1250 }, answerIsNewer: true)
        #expect(settled == .behind(s.sightings) && settled.value == nil && settled.staleSightings.count == 3)
    }

    @Test func withoutAnyNewerStateTheReadsAreBelieved() {
        // A refusal: nothing newer is known, so reads of the state before are the state now.
        let s = series([1250, 1250, 1250])
        #expect(s.settle(isTarget: { $0 == 1247 }, isOlder: { $0 == 1250 }, answerIsNewer: false) == .settled(1250, stale: []))
    }

    @Test func aReadThatGoesBackIsNamedOnce() {
        let s = series([1247, 1250, 1247])
        #expect(s.settle(isTarget: { $0 == 1247 }, isOlder: { $0 == 1250 }, answerIsNewer: true) == .settled(1247, stale: s.sightings))
    }

    @Test func readsThatKeepMovingAreNotJudged() {
        let s = series([1, 2, 3])
        #expect(s.settle(isTarget: { $0 == 9 }, isOlder: { _ in false }, answerIsNewer: false) == .disagree(s.sightings))
    }
}
