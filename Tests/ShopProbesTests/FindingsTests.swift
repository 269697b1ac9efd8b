import Foundation
import ShopAPI
@testable import ShopViewModels
import Synchronization
import Testing
@testable import ShopProbes

/// The watchdog's findings as `warning:` lines and the proxy's count to the store, out of the executable
/// (issue 44, item 5).
@Suite struct FindingsTests {
    static func read(_ id: String, total: Int) -> Exchange {
        var e = Exchange(id: 0, method: "GET", path: "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", startedAt: Date(), duration: .zero,
                         status: 200, failure: nil, requestID: id, attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:],
                         requestBodyPreview: nil, responseBodyPreview: nil)
        e.operation = .getCheerHistory
        e.findings = [Finding(check: .paging, expected: "one total", actual: "\(total)", place: .pages(.oneTotal))]
        return e
    }

    @Test func aFindingSeenTwiceIsOneLineAndALagIsNamedAsItsPossibleCause() {
        let err = Mutex<[String]>([])
        let lines = OutputLines(out: { _ in }, err: { text in err.withLock { $0.append(text) } })
        #expect(reportFindings([Self.read("rq-1", total: 230), Self.read("rq-2", total: 231)], lines: lines) == 1)
        #expect(reportFindings([Self.read("rq-3", total: 230)], lagging: true, lines: lines) == 1)
        let said = err.withLock { $0 }
        #expect(said.count == 2)
        #expect(said[0].contains("(×2, first rq-1, last rq-2; first got 230)") && !said[0].contains("possibly caused by"), "\(said[0])")
        #expect(said[1].hasSuffix(" (request id rq-3; possibly caused by reads that lag behind the writes (stale-read))\n"), "\(said[1])")
    }

    /// A burst of the app's exchanges is told to the store as counts, the last one the whole count.
    @MainActor @Test func theProxysCountReachesTheStoreWhole() async throws {
        let transport = try AsyncHTTPTransport(configuration: .init())
        let client = ShopClient(configuration: .init(baseURL: "http://127.0.0.1:1"), transport: transport, tokens: TokenStore(accessToken: "t"))
        let store = AppStore(state: AppState(context: ShopContext(environment: "local", baseURL: "http://127.0.0.1:1", user: "qa-alice")),
                             service: LiveShopService(client: client), cache: nil)
        let counter = SeenCounter(store: store)
        for _ in 0..<1_000 { counter.one() }
        for _ in 0..<50 where store.state.appExchangesCounted < 1_000 { try await Task.sleep(for: .milliseconds(10)) }  // a poll for the store's last message
        #expect(store.state.appExchangesCounted == 1_000)
        store.stop()
        try? await transport.shutdown()
    }
}
