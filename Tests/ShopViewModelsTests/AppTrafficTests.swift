import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// The app's own exchanges, seen through the proxy, in the view models: kept beside the tool's,
/// shown by source, an error told at once and kept, findings with their blame.
@Suite struct AppTrafficTests {
    func state() -> AppState {
        AppState(context: ShopContext(environment: "staging", baseURL: "https://staging.reiterate.invalid", user: "qa-alice", readOnly: false))
    }

    func appExchange(_ id: Int, path: String = "/api/v1/spend_cheer", status: Int? = 200, failure: ExchangeFailure? = nil, body: String? = nil,
                     findings: [Finding] = [], pending: Bool = false) -> Exchange {
        var e = exchange(id, status: status ?? 0, method: "POST", path: path)
        // Its operation, as the proxy decided it when it made the exchange.
        e.operation = path.hasSuffix("/spend_cheer") ? .spendCheer : path.hasSuffix("/purchase_cheer") ? .purchaseCheer : nil
        e.status = status
        e.failure = failure
        e.responseBodyPreview = body
        e.source = .app
        e.findings = findings
        e.isPending = pending
        return e
    }

    @Test func aShowsBothSourcesThenTheAppsThenTheTools() {
        var s = state()
        _ = ShopUpdate.update(&s, .exchangeRecorded(exchange(1)))
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(2)))
        _ = ShopUpdate.update(&s, .exchangeRecorded(exchange(3)))
        s.screen.tab = .requests
        #expect(s.requests.rows.map(\.id) == [3, 2, 1])
        _ = ShopUpdate.update(&s, .action(.showSource))
        #expect(s.requestsShown == .app && s.requests.rows.map(\.id) == [2])
        _ = ShopUpdate.update(&s, .action(.showSource))
        #expect(s.requestsShown == .tool && s.requests.rows.map(\.id) == [3, 1])
        // A new exchange of the source hidden is kept, not shown.
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(4)))
        #expect(s.requests.rows.map(\.id) == [3, 1] && s.exchanges.count == 4)
        _ = ShopUpdate.update(&s, .action(.showSource))
        #expect(s.requestsShown == nil && s.requests.rows.map(\.id) == [4, 3, 2, 1])
    }

    @Test func anAppErrorIsToldAtOnceWithItsRequestIDAndKeptOnTheChecksTab() {
        var s = state()
        s.screen.tab = .history
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(7, status: 500, body: #"{"code":"boom","message":"the shop fell over"}"#)))
        let notice = s.notice
        #expect(notice?.kind == .error)
        #expect(notice?.text.contains("POST /api/v1/spend_cheer") == true)
        #expect(notice?.text.contains("HTTP 500") == true && notice?.text.contains("the shop fell over") == true)
        #expect(notice?.requestID == "rq-7")
        let kept = s.checks.records.first
        #expect(kept?.check == .appError && kept?.requestID == "rq-7" && kept?.isFinding == false)
        #expect(s.appExchangeCount == 1)
    }

    @Test func aPendingAppRequestIsCountedAndJudgedOnceItEnds() {
        var s = state()
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(9, status: nil, pending: true)))
        #expect(s.appExchangeCount == 0 && s.notice == nil)
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(9, status: nil, failure: .transport(.cutShort(status: 200, requestID: "rq-9")))))
        #expect(s.appExchangeCount == 1)
        #expect(s.notice?.text.contains("rq-9") == true)
        // An answer the app gave up on itself is not an error shown to it.
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(10, status: nil, failure: .cancelled)))
        #expect(s.appExchangeCount == 2 && s.checks.records.count == 1)
    }

    @Test func theToolsOwnErrorsAreNotTheApps() {
        var s = state()
        _ = ShopUpdate.update(&s, .exchangeRecorded(exchange(5, status: 500)))
        #expect(s.notice == nil && s.checks.records.isEmpty && s.appExchangeCount == 0)
    }

    @Test func findingsOnTheAppsTrafficKeepTheirBlame() {
        var s = state()
        let request = Finding(check: .requestBody, expected: "amount: integer", actual: "string", blame: .app)
        let answer = Finding(check: .schema, expected: "balance: integer", actual: "string", blame: .server)
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(3, findings: [request, answer])))
        #expect(s.checks.records.map(\.blame).sorted { $0?.rawValue ?? "" < $1?.rawValue ?? "" } == [.app, .server])
        // On the tool's own traffic a finding is the server's, and says nothing more.
        var tool = exchange(4)
        tool.findings = [answer]
        _ = ShopUpdate.update(&s, .exchangeRecorded(tool))
        #expect(s.checks.records.contains { $0.requestID == "rq-4" && $0.blame == nil })
    }

    @Test func theHeadersCountIsTheProxysOwnNotItPlusTheLogs() {
        var s = state()
        _ = ShopUpdate.update(&s, .proxy(.seen(1)))
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(1)))
        #expect(s.appExchangeCount == 1)
        // The log dropped some in a burst: the proxy's count stands.
        _ = ShopUpdate.update(&s, .proxy(.seen(40)))
        _ = ShopUpdate.update(&s, .exchangeRecorded(appExchange(2)))
        #expect(s.appExchangeCount == 40)
    }

    @Test func theProxysStartIsTold() {
        var s = state()
        _ = ShopUpdate.update(&s, .proxy(.listening(ProxyStatus(address: "127.0.0.1:8877", intercepting: ["staging.reiterate.invalid:443"]))))
        #expect(s.proxy?.address == "127.0.0.1:8877" && s.notice?.kind == .info)
        _ = ShopUpdate.update(&s, .proxy(.failed("the address is in use by another program")))
        #expect(s.proxy?.problem != nil && s.notice?.kind == .error && s.notice?.text.contains("in use") == true)
    }
}
