import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// The app's own traffic on screen (the proxy on): the header's count, the Requests tab's FROM column,
/// the Checks tab's blame, the message line of an app error.
@Suite struct AppTrafficSnapshotTests {
    func withAppTraffic() -> AppState {
        var s = loadedState()
        _ = ShopUpdate.update(&s, .proxy(.listening(ProxyStatus(address: "127.0.0.1:8877", intercepting: ["staging.reiterate.invalid:443"]))))
        var spend = exchangeFixture(5, path: "/api/v1/spend_cheer", status: 400, body: #"{"code":"invalid_amount","message":"amount must be a whole number"}"#)
        spend.source = .app
        spend.findings = [Finding(check: .requestBody, expected: "amount: integer", actual: "string “3”", place: .field(path: "amount", rule: .type), blame: .app)]
        var balance = exchangeFixture(6, path: "/api/v1/balance?user_id=qa-alice", status: 200, body: #"{"balance":"1250"}"#)
        balance.source = .app
        balance.findings = [Finding(check: .schema, expected: "balance: integer", actual: "string “1250”", place: .field(path: "balance", rule: .type))]
        for e in [balance, spend] { _ = ShopUpdate.update(&s, .exchangeRecorded(e)) }
        return s
    }

    @Test func theRequestsTabMarksWhoseEachRequestIs() {
        var s = withAppTraffic()
        _ = ShopUpdate.update(&s, .action(.requests))
        for (w, h) in [(80, 24), (120, 40)] {
            assertSnapshot(Renderer.render(frame(s, width: w, height: h)), "requests-app-\(w)x\(h)")
        }
        let text = Renderer.render(frame(s, width: 120, height: 40)).text
        #expect(text.contains("⇄ app proxy 127.0.0.1:8877 · 2 app"))
        #expect(text.contains("FROM") && text.contains("app  ⚠ POST /api/v1/spend_cheer") && text.contains("tool GET /api/v1/audio_packs"))
        // The app's error is on the message line, its request and request id whole.
        #expect(text.contains("The app's request failed: POST /api/v1/spend_cheer: HTTP 400") && text.contains("rq-aaaa5"))
    }

    @Test func theChecksTabSaysWhoseFaultAFindingIs() {
        var s = withAppTraffic()
        _ = ShopUpdate.update(&s, .action(.checks))
        assertSnapshot(Renderer.render(frame(s, width: 120, height: 40)), "checks-app-120x40")
        let text = Renderer.render(frame(s, width: 120, height: 40)).text
        #expect(text.contains("the app's fault · amount · POST /api/v1"))
        #expect(text.contains("the server's fault · balance · GET /api"))
        #expect(text.contains("blame: the app's fault (its request breaks the contract)") == false)  // the app error is selected, not the finding
    }

    @Test func withoutTheAppsTrafficTheRequestsTabIsAsBefore() {
        var s = loadedState()
        _ = ShopUpdate.update(&s, .action(.requests))
        #expect(!Renderer.render(frame(s, width: 120, height: 40)).text.contains("FROM"))
    }
}
