import Foundation
import JSONTokens
import ShopAPI
import ShopCompare
import Testing
@testable import ShopViewModels

/// `D`: the prompt (Tab completes), the comparison asked as an effect with its own token, the diff
/// view (n/N between differences, Esc back); `S`: a snapshot asked and said.
@Suite struct CompareViewTests {
    static func result(_ count: Int) -> DiffResult {
        let differences = (0..<count).map { i in
            Difference(.changed, DiffPath.root("packs").key("p.\(i)").field("price_cents"), old: .int(199), new: .int(249 + i), label: "Pack \(i)")
        }
        return DiffResult(what: .packs, a: SideDescription(name: "user:qa-alice", environment: "staging", user: "qa-alice", takenAt: nil),
                          b: SideDescription(name: "env:next-build", environment: "next-build", user: "qa-alice", takenAt: nil), differences: differences)
    }

    /// Issue 35: Tab offers every user but the one looked at now, whoever that is after a `u` switch.
    @Test func dCompletesEveryOtherUser() {
        var d = Driver.loaded()
        d.state.compareTargets = ["user:qa-alice", "user:qa-bob", "user:qa-whale"]
        var offered: [String] = []
        d.apply(.action(.compare))
        for _ in 0..<3 {
            d.apply(.action(.nextField))
            offered.append(d.state.screen.prompt?.text ?? "")
        }
        #expect(offered == ["user:qa-bob", "user:qa-whale", "user:qa-bob"])
        d.apply(.action(.back))
        d.state.context.user = "qa-bob"
        d.apply(.action(.compare))
        offered = []
        for _ in 0..<2 {
            d.apply(.action(.nextField))
            offered.append(d.state.screen.prompt?.text ?? "")
        }
        #expect(offered == ["user:qa-alice", "user:qa-whale"])
    }

    @Test func dAsksWhatToCompareWithAndShowsTheDiff() {
        var d = Driver.loaded()
        d.state.compareTargets = ["env:next-build", "user:qa-bob", "/state/snapshots/staging-qa-alice.json"]
        d.apply(.action(.compare))
        #expect(d.state.mode == .prompt && d.state.screen.prompt?.kind == .compare)
        d.apply(.action(.nextField))
        #expect(d.state.screen.prompt?.text == "env:next-build")
        d.apply(.action(.nextField))
        #expect(d.state.screen.prompt?.text == "user:qa-bob")
        d.apply(.action(.nextField))
        d.apply(.action(.nextField))  // round again
        #expect(d.state.screen.prompt?.text == "env:next-build")
        let out = d.apply(.action(.runPrompt))
        guard case let .compare(token, a, b, what)? = out.first else { Issue.record("no compare: \(out)"); return }
        #expect(a == .live(env: nil, user: "qa-alice") && b == .live(env: "next-build", user: "qa-alice") && what == .packs && d.state.isOut(.compare))
        #expect(b.description == "env:next-build/user:qa-alice")
        d.apply(.compared(token, .success(Self.result(3))))
        #expect(d.state.mode == .diff && d.state.diff?.differences.selectedIndex == 0 && d.state.notice?.text.hasPrefix("3 differences: 3 changed") == true)
        d.apply(.action(.nextMatch))
        d.apply(.action(.nextMatch))
        #expect(d.state.diff?.differences.selectedIndex == 2)
        d.apply(.action(.nextMatch))
        #expect(d.state.diff?.differences.selectedIndex == 0)  // round to the first
        d.apply(.action(.previousMatch))
        #expect(d.state.diff?.differences.selectedIndex == 2)
        d.apply(.action(.back))
        #expect(d.state.mode == .browse && d.state.diff == nil)
    }

    /// The History tab compares the history; a failure is one line and the tab stays as it was; a
    /// late answer of a comparison asked again is dropped.
    @Test func aFailureIsOneLineAndAStaleAnswerIsDropped() {
        var d = Driver.loaded()
        d.apply(.action(.history))
        d.apply(.action(.compare))
        "user:qa-bob".forEach { d.apply(.text($0)) }
        guard case let .compare(first, _, _, what)? = d.apply(.action(.runPrompt)).first else { Issue.record("no compare"); return }
        #expect(what == .history)
        d.apply(.action(.compare))
        "env:nowhere".forEach { d.apply(.text($0)) }
        guard case let .compare(second, _, _, _)? = d.apply(.action(.runPrompt)).last else { Issue.record("no second compare"); return }
        d.apply(.compared(first, .success(Self.result(1))))
        #expect(d.state.mode == .browse && d.state.diff == nil)  // stale: the first was replaced
        d.apply(.compared(second, .failure(CompareFailure("side B: no [environments.nowhere] in the config"))))
        #expect(d.state.mode == .browse && d.state.notice?.kind == .error && d.state.notice?.text == "Could not compare: side B: no [environments.nowhere] in the config")
        // A side written wrongly is refused at once, in the same words as the command line's, and nothing goes out.
        d.apply(.action(.compare))
        "env:a/x".forEach { d.apply(.text($0)) }
        #expect(d.apply(.action(.runPrompt)).isEmpty && !d.state.isOut(.compare))
        #expect(d.state.notice?.text == "Could not compare: “env:a/x”: write a side as env:NAME, user:ID or env:NAME/user:ID")
    }

    @Test func sSavesASnapshotThatDThenOffers() {
        var d = Driver.loaded()
        #expect(d.apply(.action(.snapshot)) == [.saveSnapshot(user: "qa-alice")])
        d.apply(.snapshotSaved(.success("/state/snapshots/local-qa-alice-1.json")))
        #expect(d.state.compareTargets.last == "/state/snapshots/local-qa-alice-1.json" && d.state.notice?.text.hasPrefix("Saved the snapshot") == true)
    }
}

/// A comparison that comes back while a prompt holds the keys is offered in the notice, whose hint says
/// what `D` does then: it asks what to compare with again (the diff is not kept for a later `D`).
@Suite struct CompareHintTests {
    @Test func theOfferedDiffsHintSaysWhatDDoes() {
        var d = Driver.loaded()
        d.apply(.action(.compare))
        "env:next-build".forEach { d.apply(.text($0)) }
        guard case let .compare(token, _, _, _)? = d.apply(.action(.runPrompt)).first else { Issue.record("no compare"); return }
        d.apply(.action(.compare))  // a prompt open when the answer comes
        d.apply(.compared(token, .success(CompareViewTests.result(2))))
        #expect(d.state.mode == .prompt && d.state.diff == nil)
        let text = d.state.notice?.text ?? ""
        #expect(text.hasPrefix("Compared with env:next-build: 2 differences") && text.hasSuffix("(D compares again to show the diff)"), "\(text)")
        // And so it does: D opens the compare prompt.
        d.apply(.action(.back))
        d.apply(.action(.compare))
        #expect(d.state.mode == .prompt && d.state.screen.prompt?.kind == .compare && d.state.diff == nil)
    }
}
