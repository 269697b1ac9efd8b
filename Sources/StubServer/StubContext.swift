import Hummingbird
import NIOCore

/// Request context that keeps the connection's channel, so a fault can reset or watch the connection.
public struct StubContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
