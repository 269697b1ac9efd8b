import Foundation
import Logging
import ShopAPI
import StubServer

/// A client of the stand-in running in this process on 127.0.0.1; `body` runs against it and the two are
/// always stopped after.
func withStandIn<T: Sendable>(faults: [String] = [], token: String = "dev-token",
                              _ body: (ShopClient, RunningStub) async throws -> T) async throws -> T {
    let stub = try await RunningStub.start(StubSettings(requestLog: false))
    let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    let client = ShopClient(configuration: ShopClientConfiguration(baseURL: stub.url, requestTimeout: .seconds(5)), transport: transport,
                            tokens: TokenStore(accessToken: token, refreshToken: nil), pipeline: .standard(logger: logger), logger: logger)
    let outcome: Result<T, any Error>
    do {
        for fault in faults { try await stub.addFault(fault) }
        outcome = .success(try await body(client, stub))
    } catch {
        outcome = .failure(error)
    }
    try? await transport.shutdown()
    await stub.stop()
    return try outcome.get()
}
