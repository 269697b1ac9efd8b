import Foundation
import Testing
@testable import ShopAPI

/// A request's identity as a value: what it prints is the request line the client sends.
@Suite struct RequestKeyTests {
    @Test func anEndpointsKeyPrintsItsRequestLine() throws {
        let key = CheerHistory(user: "qa-alice", page: 2, perPage: 50).requestKey
        #expect(key.description == "GET /api/v1/cheer_history?user_id=qa-alice&page=2&per_page=50")
        #expect(key.endpoint == CheerHistory.endpoint.key && key.endpoint.description == "GET /api/v1/cheer_history")
        #expect(key.value("page") == "2" && key.value("missing") == nil)
        #expect(AudioPacks().requestKey.description == "GET /api/v1/audio_packs")
        #expect(SpendCheer(amount: 1, product: "p").requestKey.description == "POST /api/v1/spend_cheer")
    }

    @Test func aRequestLineReadsBackToTheSameKey() throws {
        let key = Balance(user: "qa alice&x=1/é").requestKey
        #expect(key.target == "/api/v1/balance?user_id=qa%20alice%26x%3D1%2F%C3%A9")
        let read = try #require(RequestKey(method: "get", target: key.target))
        #expect(read == key && read.value("user_id") == "qa alice&x=1/é")
        #expect(RequestKey(method: "PROPFIND", target: "/x") == nil)
        #expect(RequestKey(method: "delete", target: "/x")?.method == .delete)  // the app may send any of RequestMethod's
        #expect(RequestKey(method: "GET", target: "/x?flag")?.query == [RequestKey.QueryItem("flag", "")])
    }

    @Test func keysAreCodableAndHashable() throws {
        let key = RequestKey(.post, "/api/v2/purchase_cheer", query: [.init("user_id", "qa-bob")])
        let data = try JSONEncoder().encode(key)
        #expect(try JSONDecoder().decode(RequestKey.self, from: data) == key)
        #expect(Set([key, key, key.endpoint == PurchaseCheer.endpoint.key ? key : RequestKey(.get, "/")]).count == 1)
    }
}
