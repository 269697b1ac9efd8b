import Foundation
import HTTPTypes
import ShopAPI
@testable import ShopViewModels
import Testing

@Suite struct EvidenceTests {
    func exchange(method: String, path: String, headers: [(String, String)], body: String?) -> Exchange {
        Exchange(id: 1, method: method, path: path, startedAt: t0, duration: .milliseconds(5), status: 200, failure: nil,
                 requestID: "rq-1", attempt: 1, requestBytes: body?.utf8.count ?? 0, responseBytes: 2,
                 requestHeaders: Redactor.headers(HTTPFields(pairs: headers)), responseHeaders: [:],
                 requestBodyPreview: body.flatMap { Redactor.bodyPreview(Array($0.utf8)) }, responseBodyPreview: nil)
    }

    @Test func curlCarriesTheRequestButNoSecret() {
        let e = exchange(method: "POST", path: "/api/v1/spend_cheer",
                         headers: [("Authorization", "Bearer s3cr3t-token"), ("Cookie", "session=abc"), ("Content-Type", "application/json"), ("Accept", "application/json")],
                         body: #"{"amount":5,"comment":"it's lovely","product":"com.reiterate.pack.rain"}"#)
        let command = CurlCommand.make(e, baseURL: "http://127.0.0.1:8080/", tokenVariable: "STAGING_TOKEN")
        #expect(command == #"curl -sS -X POST 'http://127.0.0.1:8080/api/v1/spend_cheer' -H 'Content-Type: application/json' -H 'Accept: application/json' -H "Authorization: Bearer $STAGING_TOKEN" --data-raw '{"amount":5,"comment":"it'\''s lovely","product":"com.reiterate.pack.rain"}'"#)
        #expect(!command.contains("s3cr3t") && !command.contains("session=abc"))
    }

    @Test func cAndBangFindTheRequestBehindTheError() {
        var d = Driver()
        d.send(.start)
        let failing = exchange(method: "GET", path: "/api/v1/balance?user_id=qa-alice", headers: [("Authorization", "Bearer t")], body: nil)
        var recorded = failing
        recorded.status = 500
        recorded.requestID = "rq-500"
        d.apply(.exchangeRecorded(recorded))
        d.apply(.balanceLoaded(d.balanceToken, .failure(.http(status: 500, message: "boom", code: nil, requestID: "rq-500", endpoint: "GET /api/v1/balance", retryAfter: nil)), at: t0))
        let copy = d.apply(.action(.copyCurl))
        #expect(copy == [.copy(#"curl -sS 'http://shop.test/api/v1/balance?user_id=qa-alice' -H "Authorization: Bearer $REITERATE_TOKEN""#)])
        d.apply(.action(.showRequest))
        #expect(d.state.screen.tab == .requests && d.state.requests.selected?.requestID == "rq-500")
    }
}

@Suite struct PendingRequestTests {
    @Test func aPendingRequestIsShownThenTakesItsAnswer() async {
        let log = ExchangeLog()
        let begun = await log.begin(Exchange(id: 0, method: "POST", path: "/api/v1/spend_cheer", startedAt: t0, duration: .zero, status: nil,
                                             failure: nil, requestID: nil, attempt: 1, requestBytes: 10, responseBytes: 0,
                                             requestHeaders: [:], responseHeaders: [:], requestBodyPreview: nil, responseBodyPreview: nil))
        #expect(begun.isPending && begun.id == 1)
        var done = begun
        done.status = 200
        await log.finish(done)
        let all = await log.all()
        #expect(all.count == 1 && all[0].status == 200 && !all[0].isPending)
        // The view model shows the pending row, then the answer in its place.
        var d = Driver()
        d.apply(.exchangeRecorded(begun))
        #expect(d.state.requests.rows.map(\.isPending) == [true])
        var finished = begun
        finished.isPending = false
        finished.status = 200
        d.apply(.exchangeRecorded(finished))
        #expect(d.state.requests.rows.count == 1 && d.state.requests.rows[0].status == 200 && !d.state.requests.rows[0].isPending)
    }
}
