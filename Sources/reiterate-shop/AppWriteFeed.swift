import Foundation
import ShopAPI
import ShopProxy
import ShopViewModels

/// The app's writes, told to the store in order on the main actor: each as it goes out and as it ends,
/// never the end before the start (one consumer, one queue). Each event is read once, on the proxy's
/// event loop; the queue keeps every write (one dropped would leave the watch waiting for its end), and
/// writes are few (the proxy admits 256 at a time).
@MainActor
final class AppWriteFeed {
    private nonisolated let sink: AsyncStream<ProxyNews>.Continuation
    private var task: Task<Void, Never>?

    init(store: AppStore) {
        let (stream, sink) = AsyncStream<ProxyNews>.makeStream(bufferingPolicy: .unbounded)
        self.sink = sink
        task = Task { @MainActor in
            for await news in stream { store.send(.proxy(news)) }
        }
    }

    /// Called from any thread (the proxy's event loops): an app write's news, if the event is one.
    nonisolated func take(_ event: ProxyEvent) {
        if let news = ProxyNews.appWrite(event) { sink.yield(news) }
    }

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
