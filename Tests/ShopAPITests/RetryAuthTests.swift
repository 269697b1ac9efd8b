import Foundation
import HTTPTypes
import Logging
import StubCore
import StubServer
import Testing
@testable import ShopAPI

@Suite struct RetryTests {
    @Test func getIsRetriedWithBackoffAfter5xx() async throws {
        try await withHarness { h in
            try await h.stub.addFault("status,status=503,path=/api/v1/balance,count=2")
            #expect(try await h.client.send(Balance(user: "qa-alice")).balance == 1250)
            #expect(await h.stub.recorder.requests(to: "/api/v1/balance").map(\.outcome) == ["503", "503", "200"])
            // Equal jitter with random 0.5: 250 ms step → 187.5 ms, then 500 ms step → 375 ms.
            #expect(await h.sleeps.waits == [.milliseconds(187.5), .milliseconds(375)])
            #expect(await h.client.exchanges.all().map(\.attempt) == [1, 2, 3])
        }
    }

    @Test func retryAfterIsHonouredExactly() async throws {
        try await withHarness { h in
            try await h.stub.addFault("rate_limit,retry_after=2,count=1")
            #expect(try await h.client.send(CheerHistory(user: "qa-alice")).totalCount == 230)
            #expect(await h.sleeps.waits == [.seconds(2)])
        }
    }

    @Test func aRetryAfterBeyondTheCapSurfacesTheError() async throws {
        try await withHarness { h in
            try await h.stub.addFault("rate_limit,retry_after=60,count=1")
            let error = await apiError { try await h.client.send(Balance(user: "qa-alice")) }
            #expect(error?.status == 429)
            #expect(error?.description.contains("(retry after 60 s)") == true)
            #expect(await h.sleeps.waits.isEmpty)
        }
    }

    @Test func attemptsAreBounded() async throws {
        try await withHarness(retry: RetryPolicy(maxAttempts: 4)) { h in
            try await h.stub.addFault("html,status=502")
            let error = await apiError { try await h.client.send(AudioPacks()) }
            #expect(error?.status == 502)
            #expect(await h.stub.recorder.requests(to: "/api/v1/audio_packs").count == 4)
        }
    }

    @Test func connectionFailuresAreRetriedForGET() async throws {
        try await withHarness { h in
            try await h.stub.addFault("reset,count=1")
            #expect(try await h.client.send(AudioPacks()).packs.count == 46)
            #expect(await h.stub.recorder.requests(to: "/api/v1/audio_packs").map(\.outcome) == ["RESET", "200"])
        }
    }

    @Test func postIsNeverRetried() async throws {
        try await withHarness { h in
            for fault in ["status,status=503,method=POST,count=2", "reset,method=POST,count=2", "rate_limit,retry_after=1,method=POST,count=2"] {
                try await h.stub.addFault(fault)
                _ = await apiError { try await h.client.send(SpendCheer(amount: 5, product: "com.reiterate.pack.rain", user: "qa-alice")) }
                _ = await apiError { try await h.client.send(PurchaseCheer(identifier: "com.reiterate.cheer.50", transactionID: 77, user: "qa-alice")) }
                await h.stub.service.faults.clear()
            }
            #expect(await h.stub.recorder.requests(to: "/api/v1/spend_cheer").count == 3)
            #expect(await h.stub.recorder.requests(to: "/api/v2/purchase_cheer").count == 3)
            #expect(await h.sleeps.waits.isEmpty)
            #expect(try await h.client.send(Balance(user: "qa-alice")).balance == 1250)
        }
    }

    @Test func retryAfterForms() {
        let now = Date(timeIntervalSince1970: 1_445_412_470)  // Wed, 21 Oct 2015 07:27:50 GMT
        #expect(ShopClient.retryAfter("7", now: now) == 7)
        #expect(ShopClient.retryAfter(" 0 ", now: now) == 0)
        #expect(ShopClient.retryAfter("99999999999999999999", now: now) == Int.max)
        #expect(ShopClient.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 10)
        #expect(ShopClient.retryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == 0)
        for bad in ["-1", "1.5", "soon", ""] { #expect(ShopClient.retryAfter(bad, now: now) == nil) }
    }

    @Test func policyArithmetic() {
        let p = RetryPolicy(maxAttempts: 5, baseDelay: .milliseconds(100), maxDelay: .seconds(1), maxTotal: .seconds(3))
        #expect(p.delay(afterAttempt: 1, retryAfter: nil, elapsed: .zero, random: 0) == .milliseconds(50))
        #expect(p.delay(afterAttempt: 1, retryAfter: nil, elapsed: .zero, random: 0.999)! < .milliseconds(100))
        #expect(p.delay(afterAttempt: 3, retryAfter: nil, elapsed: .zero, random: 0) == .milliseconds(200))
        #expect(p.delay(afterAttempt: 4, retryAfter: nil, elapsed: .zero, random: 1) == .milliseconds(800))
        let long = RetryPolicy(maxAttempts: 10, baseDelay: .milliseconds(100), maxDelay: .seconds(1), maxTotal: .seconds(60))
        #expect(long.delay(afterAttempt: 7, retryAfter: nil, elapsed: .zero, random: 1) == .seconds(1))  // capped at maxDelay
        #expect(p.delay(afterAttempt: 5, retryAfter: nil, elapsed: .zero, random: 0) == nil)          // attempts used up
        #expect(p.delay(afterAttempt: 1, retryAfter: .seconds(1), elapsed: .zero, random: 0) == .seconds(1))
        #expect(p.delay(afterAttempt: 1, retryAfter: .seconds(2), elapsed: .zero, random: 0) == nil)  // above maxDelay
        #expect(p.delay(afterAttempt: 1, retryAfter: .seconds(1), elapsed: .milliseconds(2500), random: 0) == nil)  // total budget
        #expect(RetryPolicy.none.delay(afterAttempt: 1, retryAfter: nil, elapsed: .zero, random: 0) == nil)
    }
}

@Suite struct AuthTests {
    @Test func twentyConcurrent401sShareOneRefresh() async throws {
        try await withHarness { h in
            await h.stub.service.store.revokeAccessTokens()
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await h.client.send(Balance(user: "qa-alice")).balance } }
                for try await balance in group { #expect(balance == 1250) }
            }
            #expect(await h.stub.recorder.requests(to: "/api/v1/auth/refresh").count == 1)
            #expect(await h.client.refreshCount == 1)
            let balances = await h.stub.recorder.requests(to: "/api/v1/balance")
            #expect(balances.filter { $0.outcome == "200" }.count == 20)
            let newToken = try #require(await h.client.tokens.accessToken)
            #expect(newToken.hasPrefix("at-"))
            #expect(await h.client.tokens.refreshToken?.hasPrefix("rt-") == true)  // rotated
            #expect(balances.filter { $0.outcome == "200" }.allSatisfy { $0.header("Authorization") == "Bearer \(newToken)" })
        }
    }

    @Test func expiredTokenIsRenewedOnceAndTheCallResent() async throws {
        var settings = StubSettings(requestLog: false)
        // Long enough that the renewed token outlives a resend on a loaded machine (0.3 s did not, in
        // a debug build with the whole suite running beside it; 3 s leaves room on 2 busy cores).
        settings.shop.tokenTTL = 3
        try await withHarness(settings) { h in
            // Until the stand-in itself holds the first token expired (its clock, not a guess at it).
            let deadline = ContinuousClock.now + .seconds(30)
            while (try? await h.stub.service.store.authorize(header: "Bearer dev-token", now: Date().timeIntervalSince1970)) != nil {
                try #require(ContinuousClock.now < deadline, "the first token never expired")
                try await Task.sleep(for: .milliseconds(50))  // pace of the poll
            }
            #expect(try await h.client.send(AudioPacks()).packs.count == 46)
            #expect(await h.stub.recorder.all().map(\.outcome) == ["401", "200", "200"])
            #expect(await h.stub.recorder.all().map(\.path) == ["/api/v1/audio_packs", "/api/v1/auth/refresh", "/api/v1/audio_packs"])
        }
    }

    @Test func aRefusedRefreshEndsInSignInExpired() async throws {
        try await withHarness(access: "stale", refresh: "not-the-refresh-token") { h in
            let error = await apiError { try await h.client.send(Balance(user: "qa-alice")) }
            guard case .signInExpired = error else { Issue.record("got \(String(describing: error))"); return }
            #expect(error?.description.hasPrefix("sign-in expired: the refresh token was refused: invalid or already used refresh token (request id rq-") == true)
            #expect(await h.stub.recorder.requests(to: "/api/v1/auth/refresh").count == 1)
        }
    }

    @Test func aRefusedRefreshTokenIsNotSentAgainByStragglers() async throws {
        try await withHarness(access: "stale", refresh: "wrong") { h in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let error = await apiError { try await h.client.send(Balance(user: "qa-alice")) }
                        guard case .signInExpired = error else { Issue.record("got \(String(describing: error))"); return }
                    }
                }
                try await group.waitForAll()
            }
            let later = await apiError { try await h.client.send(AudioPacks()) }
            // The 401 that showed the sign-in is over had a request id: the error keeps it.
            #expect(later?.description.hasPrefix("sign-in expired: the refresh token was already refused; sign in again (request id rq-") == true)
            #expect(await h.stub.recorder.requests(to: "/api/v1/auth/refresh").count == 1)
        }
    }

    @Test func anOutageDuringRefreshIsNotASignInProblem() async throws {
        try await withHarness(access: "stale") { h in
            try await h.stub.addFault("status,status=503,path=/api/v1/auth/refresh,count=1")
            let error = await apiError { try await h.client.send(Balance(user: "qa-alice")) }
            #expect(error?.status == 503)
            #expect(error?.description.hasPrefix("POST /api/v1/auth/refresh: HTTP 503") == true)
            // The refresh token was not burnt: the next call refreshes and succeeds.
            #expect(try await h.client.send(Balance(user: "qa-alice")).balance == 1250)
        }
    }

    @Test func withoutARefreshTokenA401IsReportedAsIs() async throws {
        try await withHarness(access: nil, refresh: nil) { h in
            let error = await apiError { try await h.client.send(Balance(user: "qa-alice")) }
            #expect(error?.status == 401)
            #expect(await h.stub.recorder.requests(to: "/api/v1/auth/refresh").isEmpty)
        }
    }

    /// B was sent with the old token before A's refresh finished, and its 401 arrives afterwards:
    /// B must resend with the new token, not refresh a second time.
    @Test func aLate401ForAnAlreadyReplacedTokenDoesNotRefreshAgain() async throws {
        let transport = ScriptedTransport()
        let client = ShopClient(
            configuration: .init(baseURL: "http://shop.test", sleeper: .init { _ in }), transport: transport,
            tokens: TokenStore(accessToken: "old", refreshToken: "r1")
        )
        async let b = client.send(Balance(user: "b"))   // held by the transport until released
        await transport.waitUntilHeld()
        let a = try await client.send(Balance(user: "a"))  // 401 → refresh → resend
        #expect(a.balance == 1)
        await transport.releaseHeld()
        #expect(try await b.balance == 1)
        #expect(await transport.refreshCalls == 1)
        #expect(await transport.tokensSeen(user: "b") == ["old", "new"])
        #expect(await client.refreshCount == 1)
    }
}

@Suite struct SharedRefreshCancellationTests {
    /// A caller cancelled while it waits for the shared refresh stops waiting at once; the refresh
    /// goes on and serves the other caller.
    @Test func aCancelledWaiterLeavesTheSharedRefreshRunning() async throws {
        let transport = HeldRefreshTransport()
        let client = ShopClient(
            configuration: .init(baseURL: "http://shop.test", sleeper: .init { _ in }), transport: transport,
            tokens: TokenStore(accessToken: "old", refreshToken: "r1")
        )
        let first = Task { try await client.send(Balance(user: "a")) }
        await transport.waitUntilRefreshIsHeld()
        let second = Task { try await client.send(Balance(user: "b")) }
        // The second caller has met its 401 while the refresh is held: it can only wait for that one.
        await transport.waitUntilRefused(user: "b")
        first.cancel()
        let firstResult = await first.result
        guard case let .failure(error) = firstResult, error is CancellationError else {
            Issue.record("first: \(firstResult)")
            return
        }
        await transport.releaseRefresh()
        #expect(try await second.value.balance == 1)
        #expect(await transport.refreshCalls == 1)
        // In the order the server saw them: b was refused with the old token while the one refresh was
        // out, and sent again with the new one only after that refresh answered.
        #expect(await transport.log == ["a old 401", "refresh", "b old 401", "refresh answered", "b new 200"])
    }
}

actor HeldRefreshTransport: HTTPTransport {
    private(set) var refreshCalls = 0
    /// What the server saw and answered, in order: "USER TOKEN STATUS", "refresh", "refresh answered".
    private(set) var log: [String] = []
    private var held: CheckedContinuation<Void, Never>?
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var refusedWaiters: [(user: String, continuation: CheckedContinuation<Void, Never>)] = []

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let json: HTTPFields = [.contentType: "application/json"]
        if request.url.hasSuffix("/auth/refresh") {
            refreshCalls += 1
            log.append("refresh")
            await withCheckedContinuation { continuation in
                held = continuation
                waiters.forEach { $0.resume() }
                waiters = []
            }
            log.append("refresh answered")
            return TransportResponse(status: 200, headers: json, body: Array(#"{"access_token":"new"}"#.utf8))
        }
        let user = request.url.hasSuffix("user_id=b") ? "b" : "a"
        let fresh = request.headers[.authorization] == "Bearer new"
        log.append("\(user) \(fresh ? "new 200" : "old 401")")
        if !fresh {
            refusedWaiters.filter { $0.user == user }.forEach { $0.continuation.resume() }
            refusedWaiters.removeAll { $0.user == user }
        }
        return fresh
            ? TransportResponse(status: 200, headers: json, body: Array(#"{"balance":1}"#.utf8))
            : TransportResponse(status: 401, headers: json, body: Array(#"{"message":"expired"}"#.utf8))
    }

    /// Returns once `user` has been answered 401 (at once if already).
    func waitUntilRefused(user: String) async {
        if log.contains("\(user) old 401") { return }
        await withCheckedContinuation { refusedWaiters.append((user, $0)) }
    }

    func waitUntilRefreshIsHeld() async {
        if held != nil { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func releaseRefresh() {
        held?.resume()
        held = nil
    }
}

/// In-memory server for exact ordering: "old" is refused, "new" accepted; user b's first request
/// waits until the test releases it.
actor ScriptedTransport: HTTPTransport {
    private(set) var refreshCalls = 0
    private var seen: [String: [String]] = [:]
    private var held: CheckedContinuation<Void, Never>?
    private var heldWaiters: [CheckedContinuation<Void, Never>] = []

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if request.url.hasSuffix("/api/v1/auth/refresh") {
            refreshCalls += 1
            return TransportResponse(status: 200, headers: [.contentType: "application/json"], body: Array(#"{"access_token":"new","refresh_token":"r2"}"#.utf8))
        }
        let user = request.url.hasSuffix("user_id=b") ? "b" : "a"
        let token = request.headers[.authorization]?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
        seen[user, default: []].append(token)
        if user == "b", seen["b"]?.count == 1 {
            await withCheckedContinuation { continuation in
                held = continuation
                heldWaiters.forEach { $0.resume() }
                heldWaiters = []
            }
        }
        return token == "new"
            ? TransportResponse(status: 200, headers: [.contentType: "application/json"], body: Array(#"{"balance":1}"#.utf8))
            : TransportResponse(status: 401, headers: [.contentType: "application/json"], body: Array(#"{"message":"expired"}"#.utf8))
    }

    func waitUntilHeld() async {
        if held != nil { return }
        await withCheckedContinuation { heldWaiters.append($0) }
    }

    func releaseHeld() {
        held?.resume()
        held = nil
    }

    func tokensSeen(user: String) -> [String] { seen[user] ?? [] }
}

@Suite struct CancellationTests {
    @Test func cancellingTheCallerCancelsTheRequestAndClosesTheConnection() async throws {
        try await withHarness { h in
            try await h.stub.addFault("hang,count=1,seconds=30")
            let idle = await h.stub.service.faults.list()
            let task = Task { try await h.client.send(AudioPacks()) }
            // The request is at the stand-in, hanging, before it is cancelled: the hang's one use is then
            // reserved for it, which changes the registry's entry (`ActiveFault` is Equatable on all it holds).
            let deadline = ContinuousClock.now + .seconds(10)
            while await h.stub.service.faults.list() == idle {
                try #require(ContinuousClock.now < deadline, "the request never reached the stand-in")
                try await Task.sleep(for: .milliseconds(5))  // pace of the poll
            }
            let started = ContinuousClock.now
            task.cancel()
            let result = await task.result
            #expect(ContinuousClock.now - started < .seconds(5))  // against the hang's 30 s
            guard case let .failure(error) = result else { Issue.record("finished without error"); return }
            #expect(error is CancellationError, "got \(error)")
            // The stand-in sees the client leave: the connection was closed, not left open.
            var outcome = ""
            for _ in 0..<60 {
                outcome = await h.stub.recorder.requests(to: "/api/v1/audio_packs").first?.outcome ?? ""
                if !outcome.isEmpty { break }
                try await Task.sleep(for: .milliseconds(50))  // pace of the poll (3 s at most)
            }
            #expect(outcome == "HANG(client gave up)")
            #expect(await h.client.exchanges.all().last?.failure == .cancelled)
        }
    }
}
