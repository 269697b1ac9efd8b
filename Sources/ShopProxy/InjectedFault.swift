import ShopAPI

/// A fault the app's proxy put into an app exchange on purpose (`proxy --fault`, `POST /_proxy/faults`,
/// the TUI's fault menu). The kinds and their words are the stand-in's where they are the same.
public enum InjectedFault: String, Sendable, Codable, CaseIterable {
    /// Forwarded after a wait.
    case latency
    /// Answered by the proxy with an error status and a JSON error body; never forwarded.
    case status
    /// Answered by the proxy with an HTML error page, as a proxy in front of staging does; never forwarded.
    case html
    /// Answered by the proxy 429 with `Retry-After`; never forwarded.
    case rateLimit = "rate_limit"
    /// No answer until the app gives up; never forwarded.
    case hang
    /// The app's connection reset before forwarding.
    case reset
    /// Forwarded; the server's answer cut short on its way to the app.
    case truncate
    /// Every request refused as if there were no network.
    case offline
    /// Forwarded; the server's answer read and recorded, and the app's connection closed without it.
    case loseAnswer = "lose_answer"

    /// Whether the request reaches the server at all under this fault.
    public var forwards: Bool {
        switch self {
        case .latency, .truncate, .loseAnswer: true
        case .status, .html, .rateLimit, .hang, .reset, .offline: false
        }
    }

    /// Whether the app gets the server's whole answer under this fault (latency only delays it).
    public var delivers: Bool { self == .latency }

    /// What the fault did, as the exchange carries it through the REST core and the view models (which
    /// know no proxy): its name, whether the request reached the server and the app got the answer, in words.
    public var note: FaultNote {
        let effect = switch self {
        case .loseAnswer: "the server's answer was read and recorded, and the app's connection closed without it"
        case .truncate: "the server's answer was cut short on its way to the app"
        case .latency: "the request was held before it was forwarded"
        default: "the proxy answered in the server's stead; the request never reached the server"
        }
        return FaultNote(name: rawValue, reachedServer: forwards, appGotAnswer: delivers, effect: effect)
    }
}
