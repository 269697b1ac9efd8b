import Hummingbird
import StubCore

/// The stand-in running in this process on 127.0.0.1 and a free port — for tests that need a real
/// HTTP server without a child process.
public final class RunningStub: Sendable {
    public let url: String
    public let port: Int
    public let service: StubService
    public let recorder: RequestRecorder
    private let task: Task<Void, any Error>

    private init(url: String, port: Int, service: StubService, recorder: RequestRecorder, task: Task<Void, any Error>) {
        self.url = url
        self.port = port
        self.service = service
        self.recorder = recorder
        self.task = task
    }

    /// Starts a stand-in; `settings.host`/`port` are ignored (127.0.0.1, a free port).
    public static func start(_ settings: StubSettings = StubSettings(requestLog: false)) async throws -> RunningStub {
        var settings = settings
        settings.host = "127.0.0.1"
        settings.port = 0
        let recorder = RequestRecorder()
        let service = try StubService(settings: settings, recorder: recorder)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try StubApplication.make(settings: settings, service: service) { port in continuation.yield(port) }
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            task.cancel()
            throw CancellationError()
        }
        continuation.finish()
        return RunningStub(url: StubApplication.url(host: "127.0.0.1", port: port, tls: settings.tls != nil), port: port, service: service, recorder: recorder, task: task)
    }

    /// Stops the server (graceful: finishes requests in flight).
    public func stop() async {
        task.cancel()
        _ = await task.result
    }

    public func addFault(_ spec: String) async throws {
        await service.faults.add(try FaultSpec.parse(spec))
    }
}
