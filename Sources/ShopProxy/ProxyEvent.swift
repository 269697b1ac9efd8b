import Foundation
import ShopAPI
import Synchronization

/// What the proxy tells its front end (the headless command's lines, the TUI's header and message line).
public enum ProxyEvent: Sendable {
    /// An app request is going upstream now (no answer yet): what the watch needs to know is in flight.
    case sending(HTTPExchange)
    /// An app exchange finished and went through the pipeline (its findings are on it). `fault` says
    /// when the proxy kept the server's answer from the app (`lose_answer`, `truncate`) or delayed it.
    case exchange(HTTPExchange)
    /// A fault answered the app in the server's stead (`status`, `html`, `rate_limit`, `hang`, `reset`,
    /// `offline`): the request never reached the server, and is not checked. `response` is what the app
    /// got from the proxy (nil when it got nothing). A `hang` is told when it ends (the app closed, or
    /// its `seconds` passed). A CONNECT closed by `offline` is only counted (`ProxyStats.Counts.faults`).
    case injected(HTTPExchange)
    /// A blind tunnel to a host the proxy does not intercept ended: only its size and times are known.
    case tunnel(TunnelRecord)
    /// The proxy refused a request (ambiguous, too large, slow, a wrong password, not a shop host…).
    case refused(Refusal)
}

/// A CONNECT to a host the proxy does not intercept: its bytes passed through, never decrypted.
public struct TunnelRecord: Sendable, Equatable {
    public var target: HostPort
    public var startedAt: Date
    public var duration: Duration
    /// Bytes from the app to the host, and back.
    public var bytesUp: Int
    public var bytesDown: Int
    /// Why it could not be opened (nil when it was).
    public var failure: String?
}

/// A request the proxy answered itself with an error, never forwarded.
public struct Refusal: Sendable, Equatable {
    public var at: Date
    public var status: Int
    /// The request line as far as it was read (`POST /api/v1/spend_cheer`), or nil before one was.
    public var request: String?
    /// Why, in plain words (the body of the answer the app got).
    public var reason: String
}

/// Counts of what the proxy has seen (the header's "app exchanges" and the closing summary).
public final class ProxyStats: Sendable {
    private let counts = Mutex(Counts())

    public struct Counts: Sendable, Equatable {
        public var exchanges = 0
        public var findings = 0
        public var errors = 0
        public var tunnels = 0
        public var refused = 0
        /// Requests with a wrong or missing password (407): counted, their value never kept.
        public var authFailures = 0
        public var openConnections = 0
        /// Faults applied (each request or CONNECT a fault was put into).
        public var faults = 0
    }

    public init() {}

    public var current: Counts { counts.withLock { $0 } }

    func update(_ change: (inout Counts) -> Void) { counts.withLock { change(&$0) } }
}
