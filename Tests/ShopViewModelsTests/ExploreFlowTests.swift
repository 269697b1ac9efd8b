import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// `X` in the TUI (issue 45, item 8): the plan is said first and a second `X` starts the campaign; each case's
/// findings go to the Checks tab as they come; `X` while it runs stops it; its end reads the shop again.
@Suite struct ExploreFlowTests {
    static let plan = "45 cases as qa-alice, at most 400 requests, 10 a second; as qa-alice it will spend …"

    static func ready() -> Driver {
        var d = Driver.loaded()
        d.state.explore.plan = plan
        return d
    }

    static let finding = ShopFinding(kind: .explore(.concurrentWrites), subject: "step 1 of 1: at once: spend half the balance + 1 ∥ …", blame: .server,
                                     expected: "answers some order of the writes explains, from the balance 1250", actual: "200 and 200", requestIDs: ["rq-1", "rq-2"])

    @Test func theFirstXSaysThePlanAndTheSecondStartsIt() {
        var d = Self.ready()
        #expect(d.apply(.action(.explore)).isEmpty)
        #expect(d.state.explore.phase == .confirming)
        #expect(d.state.notice?.text == "Explore: \(Self.plan). X again to start it; any other key does not")
        #expect(d.apply(.action(.explore)) == [.explore])
        #expect(d.state.explore.phase == .running)
    }

    @Test func anyOtherKeyDoesNotStartIt() {
        var d = Self.ready()
        d.apply(.action(.explore))
        d.apply(.action(.down))
        #expect(d.state.explore.phase == .idle)
        // X now says the plan again; it does not start.
        #expect(d.apply(.action(.explore)).isEmpty && d.state.explore.phase == .confirming)
    }

    @Test func eachCasesFindingsGoToTheChecksTabAsTheyCome() {
        var d = Self.ready()
        d.apply(.action(.explore))
        d.apply(.action(.explore))
        let before = d.state.checks.failures
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        d.apply(.exploreNews(ExploreNews(done: 26, total: 45, name: "concurrent-same-spend", findings: [], at: at)))
        #expect(d.state.notice?.text == "Explore 26/45: concurrent-same-spend. X stops it")
        d.apply(.exploreNews(ExploreNews(done: 27, total: 45, name: "concurrent-overspend", findings: [Self.finding], at: at)))
        #expect(d.state.checks.failures == before + 1)
        let record = d.state.checks.records.first
        #expect(record?.finding == Self.finding && record?.at == at && record?.check.source == .explore)
        #expect(d.state.notice?.text == "Explore 27/45: concurrent-overspend, 1 with findings (Checks tab). X stops it")
    }

    @Test func xWhileItRunsStopsItAndItsEndReadsTheShopAgain() {
        var d = Self.ready()
        d.apply(.action(.explore))
        d.apply(.action(.explore))
        #expect(d.apply(.action(.explore)) == [.stopExplore])
        #expect(d.state.explore.phase == .stopping)
        let effects = d.apply(.exploreDone(ExploreDone(summary: "30 cases: 30 passed, 0 with findings, 0 not judged, 15 not run (incomplete)", folder: "/s/explore/x", stopped: true)))
        #expect(d.state.explore.phase == .idle)
        #expect(d.state.notice?.text == "Explore stopped: 30 cases: 30 passed, 0 with findings, 0 not judged, 15 not run (incomplete); report, findings and replay cases in /s/explore/x")
        #expect(effects.contains { if case .request(_, .balance) = $0 { true } else { false } })
    }

    @Test func itIsNotOfferedWhereItCannotRun() {
        var d = Driver.loaded()  // no plan: the program offers no campaign here
        d.apply(.action(.explore))
        #expect(d.state.explore.phase == .idle && d.state.notice?.kind == .error)
        var readOnly = Driver(ShopContext(environment: "prod", baseURL: "https://shop.test", user: "qa-alice", readOnly: true))
        readOnly.state.explore.plan = Self.plan
        #expect(readOnly.apply(.action(.explore)).isEmpty)
        #expect(readOnly.state.notice?.text == "Explore writes: refused in a read-only environment")
        // Nor is its key: it writes.
        #expect(Keymap.standard.bindings.first { $0.action == .explore }?.isEnabled(in: readOnly.state) == false)
    }

    @Test func aCampaignThatCouldNotStartSaysWhy() {
        var d = Self.ready()
        d.apply(.action(.explore))
        d.apply(.action(.explore))
        d.apply(.exploreDone(ExploreDone(summary: "", folder: nil, stopped: false, failure: "the pack list is empty: no case was sent")))
        #expect(d.state.notice?.text == "Explore did not start: the pack list is empty: no case was sent" && d.state.notice?.kind == .error)
    }
}
