import Foundation
import ShopAPI
import ShopProxy
import ShopViewModels

/// The proxy's events about the app's writes, in order, to one handler on the main actor: the store
/// learns of each as it goes out and as it ends, never the end before the start (one consumer, one queue).
@MainActor
final class ProxyEventPump {
    nonisolated let sink: AsyncStream<ProxyEvent>.Continuation
    private let stream: AsyncStream<ProxyEvent>
    private var task: Task<Void, Never>?

    /// Fed only the app's writes (`ProxyNews.appWrite`), so it holds every one: a write dropped would
    /// leave the watch waiting for its end. Writes are few (the proxy admits 256 at a time).
    init() {
        (stream, sink) = AsyncStream<ProxyEvent>.makeStream(bufferingPolicy: .unbounded)
    }

    /// Starts handing events to `handle`, one at a time.
    func start(_ handle: @escaping @MainActor (ProxyEvent) -> Void) {
        let stream = stream
        task = Task { @MainActor in
            for await event in stream { handle(event) }
        }
    }

    /// Called from any thread (the proxy's event loops).
    nonisolated func yield(_ event: ProxyEvent) { sink.yield(event) }

    func stop() {
        sink.finish()
        task?.cancel()
    }
}

extension ProxyNews {
    /// What an event of the proxy tells the watch: an app write going out, or ending.
    static func appWrite(_ event: ProxyEvent) -> ProxyNews? {
        switch event {
        case .sending(let e): AppWrite.from(e).map(ProxyNews.sending)
        case .exchange(let e), .injected(let e): AppWrite.from(e).map(ProxyNews.finished)
        case .tunnel, .refused: nil
        }
    }
}
