import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// A history page that did not load is one row for the page (not one an entry), at 80×24 and 120×40.
@Suite struct FailedPageSnapshotTests {
    @Test func aFailedPageIsOneRow() {
        var l = Loop(loadedState())
        l.press(.char("2"), .char("]"))
        guard let token = l.app.requestsOut.first(where: { if case .historyPage(2) = $0.value { return true } else { return false } })?.key else {
            Issue.record("page 2 not asked: \(l.app.requestsOut)")
            return
        }
        l.send(.replied(token, .failure(ErrorLineTests.errors[0]), at: now))
        l.app.notice = nil  // the row alone
        l.press(.char("k"))  // onto page 1's last entry: the failed page's row below it, not selected
        for (w, h) in SnapshotTests.sizes {
            let grid = Renderer.render(frame(l.app, width: w, height: h))
            assertSnapshot(grid, "history-failed-page-\(w)x\(h)")
            let rows = grid.text.split(separator: "\n").filter { $0.contains("did not load") || $0.contains("GET /api/v1/cheer_history → ") }
            #expect(rows.count == 1, "\(grid.text)")
        }
    }
}
