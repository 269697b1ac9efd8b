import Testing
@testable import StubCore

@Suite struct StoreTests {
    func store(ttl: Double? = nil, whale: Int = 100_000) -> ShopStore {
        ShopStore(config: ShopConfig(whaleHistory: whale, tokenTTL: ttl), now: 1_000)
    }

    func expectError(_ status: Int, _ code: String, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(status) \(code)")
        } catch let error as ShopError {
            #expect(error.status == status)
            #expect(error.code == code)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func seededBalancesAndUnknownUser() async throws {
        let s = store()
        #expect(try await s.balance(user: "qa-alice") == 1250)
        #expect(try await s.balance(user: "qa-empty") == 0)
        await expectError(404, "unknown_user") { _ = try await s.balance(user: "qa-nobody") }
        await expectError(404, "unknown_user") { _ = try await s.history(user: "qa-nobody", page: 1, perPage: 50) }
    }

    @Test func historyPagingFields() async throws {
        let s = store()
        let first = try await s.history(user: "qa-alice", page: 1, perPage: 50)
        #expect(first.entries.count == 50 && first.paging.totalCount == 230 && first.paging.totalPages == 5)
        let last = try await s.history(user: "qa-alice", page: 5, perPage: 50)
        #expect(last.entries.count == 30)
        let past = try await s.history(user: "qa-alice", page: 6, perPage: 50)
        #expect(past.entries.isEmpty && past.paging.totalPages == 5)
        let empty = try await s.history(user: "qa-empty", page: 1, perPage: 50)
        #expect(empty.entries.isEmpty && empty.paging.totalCount == 0 && empty.paging.totalPages == 0)
        let whale = try await s.history(user: "qa-whale", page: 2_000, perPage: 50)
        #expect(whale.entries.count == 50 && whale.paging.totalPages == 2_000 && whale.entries.last?.id == "h-qa-whale-99999")
        await expectError(400, "invalid_parameter") { _ = try await s.history(user: "qa-alice", page: 1, perPage: 201) }
        await expectError(400, "invalid_parameter") { _ = try await s.history(user: "qa-alice", page: 0, perPage: 50) }
    }

    @Test func spendDebitsAndPrependsTheComment() async throws {
        let s = store()
        let pack = try #require(await s.audioPacks().first)
        let balance = try await s.spend(user: "qa-alice", amount: 50, product: pack.identifier, comment: "Bravo ✨", now: 2_000_000_000)
        #expect(balance == 1200)
        let page = try await s.history(user: "qa-alice", page: 1, perPage: 2)
        #expect(page.paging.totalCount == 231)
        let top = try #require(page.entries.first)
        #expect(top.amount == 50 && top.product == pack.identifier && top.creator == pack.creator && top.date == 2_000_000_000)
        #expect(top.comments == [CheerComment(signature: "qa-alice", body: "Bravo ✨")])
        #expect(await s.audioPacks().first?.cheerTotal == pack.cheerTotal + 50)
    }

    @Test func spendRefusals() async throws {
        let s = store()
        let product = try #require(await s.audioPacks().first).identifier
        await expectError(402, "insufficient_balance") { _ = try await s.spend(user: "qa-alice", amount: 1251, product: product, comment: nil, now: 0) }
        await expectError(402, "insufficient_balance") { _ = try await s.spend(user: "qa-empty", amount: 1, product: product, comment: nil, now: 0) }
        await expectError(400, "invalid_amount") { _ = try await s.spend(user: "qa-alice", amount: 0, product: product, comment: nil, now: 0) }
        await expectError(400, "unknown_product") { _ = try await s.spend(user: "qa-alice", amount: 1, product: "com.nope", comment: nil, now: 0) }
        #expect(try await s.balance(user: "qa-alice") == 1250)
        #expect(try await s.history(user: "qa-alice", page: 1, perPage: 1).paging.totalCount == 230)
    }

    @Test func purchaseCreditsOncePerTransaction() async throws {
        let s = store()
        #expect(try await s.purchase(user: "qa-alice", identifier: "com.reiterate.cheer.200", transactionID: UInt64.max) == 1450)
        await expectError(409, "duplicate_transaction") {
            _ = try await s.purchase(user: "qa-alice", identifier: "com.reiterate.cheer.200", transactionID: UInt64.max)
        }
        await expectError(409, "duplicate_transaction") {
            _ = try await s.purchase(user: "qa-empty", identifier: "com.reiterate.cheer.500", transactionID: UInt64.max)
        }
        await expectError(400, "unknown_product") {
            _ = try await s.purchase(user: "qa-alice", identifier: "com.reiterate.cheer.201", transactionID: 1)
        }
        #expect(try await s.balance(user: "qa-alice") == 1450)
        #expect(try await s.balance(user: "qa-empty") == 0)
    }

    @Test func fiftyConcurrentSpendsLoseNothing() async throws {
        let s = store()
        let product = try #require(await s.audioPacks().last).identifier
        try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<50 {
                group.addTask { try await s.spend(user: "qa-alice", amount: 7, product: product, comment: "c\(i)", now: 5) }
            }
            var results: [Int] = []
            for try await balance in group { results.append(balance) }
            #expect(Set(results).count == 50)
        }
        #expect(try await s.balance(user: "qa-alice") == 1250 - 50 * 7)
        let page = try await s.history(user: "qa-alice", page: 1, perPage: 50)
        #expect(page.paging.totalCount == 280)
        #expect(Set(page.entries.compactMap { $0.comments?.first?.body }) == Set((0..<50).map { "c\($0)" }))
    }

    @Test func refreshedTokensWithoutTTLNeverExpire() async throws {
        let s = store()
        let grant = try await s.refresh(refreshToken: "dev-refresh", now: 0)
        #expect(grant.expiresIn == nil)
        try await s.authorize(header: "Bearer \(grant.accessToken)", now: 1e9)
        try await s.authorize(header: "Bearer dev-token", now: 1e9)
    }

    @Test func tokensExpireAndRefreshRotates() async throws {
        let s = store(ttl: 60)
        try await s.authorize(header: "Bearer dev-token", now: 1_059)
        await expectError(401, "token_expired") { try await s.authorize(header: "Bearer dev-token", now: 1_060) }
        await expectError(401, "unauthorized") { try await s.authorize(header: nil, now: 1_000) }
        await expectError(401, "unauthorized") { try await s.authorize(header: "Bearer nope", now: 1_000) }
        await expectError(401, "unauthorized") { try await s.authorize(header: "Basic dev-token", now: 1_000) }

        let grant = try await s.refresh(refreshToken: "dev-refresh", now: 2_000)
        #expect(grant.expiresIn == 60 && grant.refreshToken != "dev-refresh")
        try await s.authorize(header: "Bearer \(grant.accessToken)", now: 2_059)
        await expectError(401, "token_expired") { try await s.authorize(header: "Bearer \(grant.accessToken)", now: 2_060) }
        await expectError(401, "invalid_refresh_token") { _ = try await s.refresh(refreshToken: "dev-refresh", now: 2_001) }
        let second = try await s.refresh(refreshToken: grant.refreshToken, now: 2_002)
        #expect(second.accessToken != grant.accessToken)

        await s.revokeAccessTokens()
        await expectError(401, "unauthorized") { try await s.authorize(header: "Bearer \(second.accessToken)", now: 2_003) }
        await s.reset(now: 3_000)
        try await s.authorize(header: "bearer dev-token", now: 3_001)
    }
}
