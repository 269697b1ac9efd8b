import Foundation
import ShopViewModels
import Logging
import StubCore
import StubServer
import Testing
@testable import ShopAPI

/// A client against a stand-in running in this process on 127.0.0.1, over async-http-client.
struct Harness {
    let stub: RunningStub
    let transport: AsyncHTTPTransport
    let client: ShopClient
    let sleeps: SleepLog

    static func start(
        _ settings: StubSettings = StubSettings(requestLog: false),
        access: String? = "dev-token", refresh: String? = "dev-refresh",
        retry: RetryPolicy = RetryPolicy(), timeout: Duration = .seconds(5), logger: Logger? = nil
    ) async throws -> Harness {
        let stub = try await RunningStub.start(settings)
        let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
        let sleeps = SleepLog()
        let logger = logger ?? Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let client = ShopClient(
            configuration: ShopClientConfiguration(baseURL: stub.url, requestTimeout: timeout, retry: retry, sleeper: sleeps.sleeper, random: { 0.5 }),
            transport: transport, tokens: TokenStore(accessToken: access, refreshToken: refresh),
            pipeline: .standard(logger: logger), logger: logger
        )
        return Harness(stub: stub, transport: transport, client: client, sleeps: sleeps)
    }

    func stop() async {
        try? await transport.shutdown()
        await stub.stop()
    }
}

/// Records the waits a client asks for, and waits only a token time, so retry timing is exact and fast.
final class SleepLog: Sendable {
    private let store = Store()
    actor Store {
        var waits: [Duration] = []
        func add(_ d: Duration) { waits.append(d) }
    }

    var sleeper: Sleeper {
        let store = self.store
        return Sleeper { duration in
            await store.add(duration)
            try await Task.sleep(for: .milliseconds(1))  // a deliberate token wait, for the retry's real suspension
        }
    }

    var waits: [Duration] { get async { await store.waits } }
}

/// Runs `body` against a fresh harness and always stops it.
func withHarness(
    _ settings: StubSettings = StubSettings(requestLog: false),
    access: String? = "dev-token", refresh: String? = "dev-refresh",
    retry: RetryPolicy = RetryPolicy(), timeout: Duration = .seconds(5),
    _ body: (Harness) async throws -> Void
) async throws {
    let harness = try await Harness.start(settings, access: access, refresh: refresh, retry: retry, timeout: timeout)
    do {
        try await body(harness)
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}

/// The `ShopAPIError` a call throws (a test failure when it throws nothing or something else).
func apiError<T>(_ body: () async throws -> T) async -> ShopAPIError? {
    do {
        _ = try await body()
        Issue.record("expected a ShopAPIError, got a result")
    } catch let error as ShopAPIError {
        return error
    } catch {
        Issue.record("expected a ShopAPIError, got \(error)")
    }
    return nil
}

/// Runs `body` with a real transport and always shuts it down.
func withTransport(_ body: (AsyncHTTPTransport) async throws -> Void) async throws {
    let transport = try AsyncHTTPTransport()
    do {
        try await body(transport)
    } catch {
        try? await transport.shutdown()
        throw error
    }
    try await transport.shutdown()
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

extension ShopAPIError {
    /// The line a user sees for this error (the display layer's wording: the REST core reports facts only).
    var description: String { ErrorText.line(self) }
}
