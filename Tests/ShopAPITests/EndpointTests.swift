import Foundation
import StubCore
import StubServer
import Testing
@testable import ShopAPI

/// Each endpoint against the real stand-in: what went over the wire, and what came back.
@Suite struct EndpointTests {
    @Test func balanceRequestLineHeadersAndAnswer() async throws {
        try await withHarness { h in
            #expect(try await h.client.send(Balance(user: "qa-alice")).balance == 1250)
            let seen = try #require(await h.stub.recorder.all().last)
            #expect(seen.method == "GET" && seen.uri == "/api/v1/balance?user_id=qa-alice")
            #expect(seen.header("Authorization") == "Bearer dev-token")
            #expect(seen.header("Accept") == "application/json")
            #expect(seen.header("User-Agent") == "reiterate-shop/\(ShopClientConfiguration.appVersion) (Swift; Linux)")
            #expect(seen.body.isEmpty)
        }
    }

    @Test func userIDsArePercentEncoded() async throws {
        try await withHarness { h in
            let error = await apiError { try await h.client.send(Balance(user: "qa alice&x=1/é")) }
            #expect(error?.status == 404)
            let seen = try #require(await h.stub.recorder.all().last)
            #expect(seen.uri == "/api/v1/balance?user_id=qa%20alice%26x%3D1%2F%C3%A9")
        }
    }

    @Test func audioPacksDecodeEveryField() async throws {
        try await withHarness { h in
            let list = try await h.client.send(AudioPacks())
            #expect(list.packs.count == 46 && list.unreadable.isEmpty)
            let expected = Catalog.packs(seed: SeedData.defaultSeed)
            let first = try #require(list.packs.first)
            #expect(first.identifier == expected[0].identifier && first.name == expected[0].name)
            #expect(first.priceCents == expected[0].priceCents && first.tags == expected[0].tags)
            #expect(first.released.map { Int64($0.timeIntervalSince1970) } == expected[0].released)
            #expect(await h.stub.recorder.all().last?.uri == "/api/v1/audio_packs")
        }
    }

    @Test func historyPagingOverTheWire() async throws {
        try await withHarness { h in
            let page = try await h.client.send(CheerHistory(user: "qa-alice", page: 5, perPage: 50))
            #expect(page.items.count == 30 && page.page == 5 && page.perPage == 50 && page.totalPages == 5 && page.totalCount == 230)
            #expect(await h.stub.recorder.all().last?.uri == "/api/v1/cheer_history?user_id=qa-alice&page=5&per_page=50")
            let whale = try await h.client.send(CheerHistory(user: "qa-whale", page: 500, perPage: 200))
            #expect(whale.entries.count == 200 && whale.totalPages == 500 && whale.entries.last?.id == "h-qa-whale-99999")
            let past = try await h.client.send(CheerHistory(user: "qa-alice", page: 9, perPage: 50))
            #expect(past.items.isEmpty && past.totalCount == 230)
            let entries = try await h.client.send(CheerHistory(user: "qa-alice", page: 1, perPage: 200)).entries
            #expect(entries.contains { $0.comments == nil } && entries.contains { $0.comments?.isEmpty == false })
            #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.date > $1.date })
        }
    }

    @Test func purchaseSendsSnakeCaseJSONAndIsCreditedOnce() async throws {
        try await withHarness { h in
            let buy = PurchaseCheer(identifier: "com.reiterate.cheer.200", transactionID: UInt64.max, user: "qa-alice")
            #expect(try await h.client.send(buy).balance == 1450)
            let seen = try #require(await h.stub.recorder.all().last)
            #expect(seen.method == "POST" && seen.uri == "/api/v2/purchase_cheer?user_id=qa-alice")
            #expect(seen.bodyText == #"{"identifier":"com.reiterate.cheer.200","transaction_id":18446744073709551615}"#)
            #expect(seen.header("Content-Type") == "application/json")
            let replay = await apiError { try await h.client.send(buy) }
            #expect(replay == .http(status: 409, message: "transaction 18446744073709551615 was already credited; nothing changed",
                                   code: "duplicate_transaction", requestID: replay?.requestID, endpoint: .post("/api/v2/purchase_cheer"), retryAfter: nil))
            #expect(replay?.requestID?.hasPrefix("rq-") == true)
        }
    }

    @Test func spendSendsItsCommentAnd402IsExplained() async throws {
        try await withHarness { h in
            let spend = SpendCheer(amount: 25, product: "com.reiterate.pack.rain", comment: "Lovely 🌧", user: "qa-alice")
            #expect(try await h.client.send(spend).balance == 1225)
            let seen = try #require(await h.stub.recorder.all().last)
            #expect(seen.bodyText == #"{"amount":25,"comment":"Lovely 🌧","product":"com.reiterate.pack.rain"}"#)
            let poor = await apiError { try await h.client.send(SpendCheer(amount: 1, product: "com.reiterate.pack.rain", user: "qa-empty")) }
            #expect(poor?.status == 402)
            if case let .http(_, _, code, _, _, _) = poor { #expect(code == "insufficient_balance") }
            #expect(poor?.description.contains("HTTP 402 Payment Required: balance 0 is less than 1; nothing was spent [insufficient_balance] (request id rq-") == true)
        }
    }

    @Test func refreshIsSentWithoutAuthorization() async throws {
        try await withHarness { h in
            let grant = try await h.client.send(RefreshToken(refreshToken: "dev-refresh"))
            #expect(grant.accessToken.hasPrefix("at-") && grant.refreshToken?.hasPrefix("rt-") == true)
            let seen = try #require(await h.stub.recorder.all().last)
            #expect(seen.uri == "/api/v1/auth/refresh" && seen.header("Authorization") == nil)
            #expect(seen.bodyText == #"{"refresh_token":"dev-refresh"}"#)
        }
    }
}
