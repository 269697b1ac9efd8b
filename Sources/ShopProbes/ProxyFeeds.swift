import Foundation
import ShopAPI
import ShopProxy
import ShopViewModels
import Synchronization

// The proxy's news to the TUI's and the watch's store, out of the executable (issue 44, item 5).

/// The app's writes, told to the store in order on the main actor: each as it goes out and as it ends,
/// never the end before the start (one consumer, one queue). Each event is read once, on the proxy's
/// event loop; the queue keeps every write (one dropped would leave the watch waiting for its end), and
/// writes are few (the proxy admits 256 at a time).
@MainActor
public final class AppWriteFeed {
    private nonisolated let sink: AsyncStream<ProxyNews>.Continuation
    private var task: Task<Void, Never>?

    public init(store: AppStore) {
        let (stream, sink) = AsyncStream<ProxyNews>.makeStream(bufferingPolicy: .unbounded)
        self.sink = sink
        task = Task { @MainActor in
            for await news in stream { store.send(.proxy(news)) }
        }
    }

    /// Called from any thread (the proxy's event loops): an app write's news, if the event is one.
    public nonisolated func take(_ event: ProxyEvent) {
        if let news = ProxyNews.appWrite(event) { sink.yield(news) }
    }

    public func stop() {
        sink.finish()
        task?.cancel()
    }
}

extension ProxyNews {
    /// What an event of the proxy tells the watch: an app write going out, or ending.
    public static func appWrite(_ event: ProxyEvent) -> ProxyNews? {
        switch event {
        case .sending(let e): AppWrite.from(e).map(ProxyNews.sending)
        case .exchange(let e), .injected(let e): AppWrite.from(e).map(ProxyNews.finished)
        case .tunnel, .refused: nil
        }
    }
}

/// The proxy's count of the app's exchanges, told to the store at most one message at a time (a burst
/// of a thousand exchanges is not a thousand frames).
public final class SeenCounter: Sendable {
    private let state = Mutex((count: 0, told: true))
    private let store: AppStore

    public init(store: AppStore) { self.store = store }

    public func one() {
        let tell = state.withLock { s -> Bool in
            s.count += 1
            defer { s.told = false }
            return s.told
        }
        guard tell else { return }
        Task { @MainActor in
            let count = self.state.withLock { s -> Int in
                s.told = true
                return s.count
            }
            self.store.send(.proxy(.seen(count)))
        }
    }
}
