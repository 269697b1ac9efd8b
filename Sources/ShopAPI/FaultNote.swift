/// A fault the app's proxy put into an exchange on purpose, as the exchange carries it: opaque to the
/// REST core and the view models, which know no proxy. The proxy's `InjectedFault` makes it.
public struct FaultNote: Sendable, Equatable, Hashable, Codable {
    /// The fault's name, as `--fault` spells it (`lose_answer`).
    public var name: String
    /// Whether the request reached the server.
    public var reachedServer: Bool
    /// Whether the app got the server's whole answer (a delay only delays it).
    public var appGotAnswer: Bool
    /// What it did, in words (a bug report's line).
    public var effect: String

    public init(name: String, reachedServer: Bool, appGotAnswer: Bool, effect: String) {
        self.name = name
        self.reachedServer = reachedServer
        self.appGotAnswer = appGotAnswer
        self.effect = effect
    }
}
