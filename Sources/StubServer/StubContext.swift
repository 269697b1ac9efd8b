import Foundation
import Hummingbird
import NIOCore
import StubCore
import Synchronization

/// Request context of the stand-in: the connection's channel (a fault can reset or watch it), what the
/// middleware decided for this request, and the stand-in's JSON coders.
public struct StubContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel
    /// Set by `RequestIDMiddleware`, sent back as `X-Request-Id`.
    public internal(set) var requestID = ""
    /// Content faults (`hostile`, `malformed_entry`) that `FaultMiddleware` hands to the route; the route
    /// reports in `notes` those that changed its answer.
    var contentFaults: [FaultHit] = []
    /// Shared by every copy of this context: what inner layers tell outer ones.
    let notes = RequestNotes()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Request bodies over 1 MiB are refused (413).
    public var maxUploadSize: Int { StubBody.limit }
    /// A `lenient_body` fault handed to this route lets its one malformed body through.
    public var requestDecoder: StubBody { StubBody(lenient: contentFault(.lenientBody)?.spec.bodyCase) }
    public var responseEncoder: JSONEncoder { StubJSON.encoder }

    /// The content fault of `kind` handed to this route, if any.
    func contentFault(_ kind: FaultKind) -> FaultHit? {
        contentFaults.first { $0.spec.kind == kind }
    }
}

/// What inner layers tell outer ones about one request: the faults that changed its answer (for the
/// request log and the registry) and how the connection ended when no answer was sent.
final class RequestNotes: Sendable {
    private struct State {
        var applied: [FaultHit] = []
        var abort: String?
        var reason: String?
        var dropRequestID = false
    }

    private let state = Mutex(State())

    func applied(_ hit: FaultHit) { state.withLock { $0.applied.append(hit) } }
    var appliedFaults: [FaultHit] { state.withLock { $0.applied } }
    func replaceApplied(_ hits: [FaultHit]) { state.withLock { $0.applied = hits } }

    /// `RESET`, `HANG(client gave up)` …: logged and recorded in place of a status.
    var abort: String? {
        get { state.withLock { $0.abort } }
        set { state.withLock { $0.abort = newValue } }
    }

    /// Why the answer is what it is, for the request log only (`401: token's bid is not …`).
    var reason: String? {
        get { state.withLock { $0.reason } }
        set { state.withLock { $0.reason = newValue } }
    }

    /// The answer goes out without `X-Request-Id` (the `no_request_id` fault).
    var dropRequestID: Bool {
        get { state.withLock { $0.dropRequestID } }
        set { state.withLock { $0.dropRequestID = newValue } }
    }

    /// The status sent, or how the connection ended.
    func outcome(_ response: Response) -> String { abort ?? String(response.status.code) }
}
