import Foundation
import JSONTokens
import Logging
import StubCore
import StubServer
import Testing
@testable import ShopAPI

/// Every exchange the client makes goes through one ordered pipeline of observers.
@Suite struct ExchangePipelineTests {
    /// Keeps what it is told, in order.
    actor Recorder: ExchangeObserver {
        struct Seen: Equatable {
            var serial: Int
            var source: ExchangeSource
            var request: String
            var status: Int?
            var failed: Bool
            var attempt: Int
            var findings: [Finding]
        }

        private(set) var sent: [Int] = []
        private(set) var finished: [Seen] = []

        func sent(_ e: HTTPExchange) { sent.append(e.serial) }

        func finished(_ e: HTTPExchange) -> [Finding] {
            finished.append(Seen(serial: e.serial, source: e.source, request: e.request.key.description, status: e.response?.status,
                                 failed: e.failure != nil, attempt: e.attempt, findings: e.findings))
            return []
        }
    }

    /// Finds one thing in every answer, to show that what a check finds reaches the observers after it.
    struct FlagsEveryAnswer: ExchangeObserver {
        static let finding = Finding(check: .status, expected: "nothing", actual: "an answer")
        func finished(_ e: HTTPExchange) -> [Finding] { e.response == nil ? [] : [Self.finding] }
    }

    func client(_ stub: RunningStub, _ transport: AsyncHTTPTransport, _ pipeline: ExchangePipeline) -> ShopClient {
        ShopClient(configuration: ShopClientConfiguration(baseURL: stub.url, requestTimeout: .seconds(5), sleeper: .init { _ in }, random: { 0.5 }),
                   transport: transport, tokens: TokenStore(accessToken: "dev-token"), pipeline: pipeline)
    }

    @Test func anObserverSeesEveryExchangeInOrderRetriesAndFailuresToo() async throws {
        let stub = try await RunningStub.start(StubSettings(requestLog: false))
        let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
        let recorder = Recorder()
        let log = ExchangeLog()
        let client = client(stub, transport, .standard(exchanges: log, extra: [recorder]))
        do {
            try await stub.addFault("status,status=503,path=/api/v1/balance,count=1")
            #expect(try await client.send(Balance(user: "qa-alice")).balance == 1250)
            try await stub.addFault("reset,path=/api/v1/spend_cheer,count=1")
            let error = await apiError { try await client.send(SpendCheer(amount: 1, product: "p", user: "qa-alice")) }
            #expect(error?.category.mayHaveBeenApplied == true)
        } catch {
            Issue.record("\(error)")
        }
        try? await transport.shutdown()
        await stub.stop()

        let seen = await recorder.finished
        #expect(seen.map(\.request) == ["GET /api/v1/balance?user_id=qa-alice", "GET /api/v1/balance?user_id=qa-alice",
                                        "POST /api/v1/spend_cheer?user_id=qa-alice"])
        #expect(seen.map(\.status) == [503, 200, nil] && seen.map(\.failed) == [false, false, true])
        #expect(seen.map(\.attempt) == [1, 2, 1] && seen.allSatisfy { $0.source == .tool })
        // Each was told when it was sent, before it finished, and the serials are the pipeline's own.
        #expect(await recorder.sent == seen.map(\.serial) && Set(seen.map(\.serial)).count == 3)
        // The log observer ran before it: the log holds the same exchanges, with the same findings.
        let logged = await log.all()
        #expect(logged.map(\.status) == [503, 200, nil] && logged.map(\.findings) == seen.map(\.findings))
        #expect(!logged.contains { $0.isPending })
        #expect(logged.map { $0.key?.endpoint } == [Balance.endpoint.key, Balance.endpoint.key, SpendCheer.endpoint.key])
        #expect(logged.first?.key == Balance(user: "qa-alice").requestKey)
    }

    @Test func whatACheckFindsReachesTheObserversAfterIt() async throws {
        let stub = try await RunningStub.start(StubSettings(requestLog: false))
        let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
        let recorder = Recorder()
        let log = ExchangeLog()
        let client = client(stub, transport, ExchangePipeline([FlagsEveryAnswer(), ExchangeLogObserver(log), recorder]))
        let answered = try? await client.send(AudioPacks())
        try? await transport.shutdown()
        await stub.stop()
        #expect(answered?.packs.isEmpty == false)
        #expect(await log.all().map(\.findings) == [[FlagsEveryAnswer.finding]])
        #expect(await recorder.finished.map(\.findings) == [[FlagsEveryAnswer.finding]])
        #expect(client.pipeline.exchanges === log && client.exchanges === log && client.pipeline.pins == nil)
    }

    @Test func theStandardOrderIsWatchdogPinsLogThenLogLine() {
        struct NoPins: AnswerPins {
            func check(_: RequestKey, status: Int, body: [UInt8], tokens: [JSONToken], requestID: String?) -> [Finding] { [] }
            func confirm(reading read: @Sendable (RequestKey) async -> Void) async {}
        }
        let pipeline = ExchangePipeline.standard(pins: NoPins())
        let kinds = pipeline.observers.map { String(describing: type(of: $0)) }
        #expect(kinds == ["WatchdogObserver", "PinsObserver", "ExchangeLogObserver", "LogLineObserver"])
        #expect(ExchangePipeline.standard().observers.count == 3)
    }
}
