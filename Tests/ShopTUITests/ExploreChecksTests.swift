import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// The Checks tab showing a finding of `explore` (issue 45): its long expected and actual wrap under their label,
/// and no word is cut at the panel's edge (the lines after the first are indented: they were wrapped without room
/// for it, and lost what passed the border).
@Suite struct ExploreChecksTests {
    @Test func aLongActualWrapsWithNothingCutAtThePanelsEdge() {
        var s = loadedState()
        s.explore.plan = "45 cases"
        _ = ShopUpdate.update(&s, .action(.explore))
        _ = ShopUpdate.update(&s, .action(.explore))
        let finding = ShopFinding(kind: .explore(.textChanged), subject: "comment written by a spend of 1, as qa-alice (entry h-qa-alice-s7)", blame: .server,
                                  expected: #"the bytes sent: …he said "hi" \ 'ok' \n \u0041 \\"#,
                                  actual: #"…he said &quot;hi&quot; \ 'ok' \n \u0041 \\ (they differ from character 10; 33 characters sent, 43 back)"#,
                                  requestIDs: ["rq-1", "rq-2", "rq-3"])
        _ = ShopUpdate.update(&s, .exploreNews(ExploreNews(done: 29, total: 45, name: "text-comment-quotes", findings: [finding], at: Date(timeIntervalSince1970: 1_800_000_000))))
        _ = ShopUpdate.update(&s, .action(.checks))
        for (w, h) in [(80, 24), (120, 40), (160, 40)] {
            let text = Renderer.render(frame(s, width: w, height: h)).text
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "│" }).map(String.init)
            for word in ["33", "characters", "sent,", "43", "back)", "differ", "&quot;hi&quot;"] {
                #expect(words.contains(word), "\(w)x\(h): \(word) missing\n\(text)")
            }
            #expect(text.contains("text-changed"))
        }
        assertSnapshot(Renderer.render(frame(s, width: 120, height: 40)), "checks-explore-120x40")
    }
}
