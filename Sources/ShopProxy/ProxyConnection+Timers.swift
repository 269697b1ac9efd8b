import Foundation
import NIOCore

// The timers of a connection from the app: a head must be whole soon after its first byte, a body soon
// after its head, and a connection that says nothing is closed.
extension ProxyConnection {
    /// A head must be whole within the head timeout of its first byte (a slow sender is cut off).
    func armHead(_ context: ChannelHandlerContext) {
        headTimer?.cancel()
        headTimer = nil
        guard reader.buffered > 0, awaitingHead else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        headTimer = context.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(core.configuration.headTimeout))) {
            let (connection, context) = bound.value
            connection.headTimer = nil
            guard !connection.busy, connection.awaitingHead, connection.mode != .done, connection.reader.buffered > 0 else { return }
            connection.refuse(context, WireResponse.own(408, "the request's head did not arrive in time"), request: nil)
        }
    }

    /// A request's body must be whole within the body timeout of its head (a trickle is cut off).
    func armBody(_ context: ChannelHandlerContext) {
        headTimer?.cancel()
        readingBody = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        headTimer = context.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(core.configuration.bodyTimeout))) {
            let (connection, context) = bound.value
            connection.headTimer = nil
            guard connection.readingBody, !connection.busy, connection.mode != .done else { return }
            connection.refuse(context, WireResponse.own(408, "the request's body did not arrive in time"), request: nil)
        }
    }

    /// A connection that says nothing for the idle timeout is closed.
    func armIdle(_ context: ChannelHandlerContext) {
        idleTimer?.cancel()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(core.configuration.idleTimeout))) {
            let (connection, context) = bound.value
            guard !connection.busy, connection.mode != .tunnel, connection.mode != .opening else { return }
            connection.close(context)
        }
    }

    static func nanoseconds(_ d: Duration) -> Int64 {
        let (seconds, attoseconds) = d.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// A target as the tester may read it: at most 200 characters, controls shown as `?`.
    static func shown(_ target: String) -> String {
        String(target.prefix(200).map { $0.isASCII && ($0.asciiValue ?? 0) >= 0x20 && $0 != "\u{7F}" ? $0 : "?" })
    }
}
