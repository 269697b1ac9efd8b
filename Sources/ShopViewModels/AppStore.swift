import Foundation
import ShopAPI
import ShopCache

/// Owns the state on the main actor: intents go in through `send`, the pure update function changes
/// the state, and each effect runs as a task whose result comes back as a message. A front end only
/// reads `state` (and redraws on `onChange`).
@MainActor
public final class AppStore {
    public private(set) var state: AppState
    /// Called after every change, on the main actor.
    public var onChange: ((AppState) -> Void)?

    private let service: any ShopService
    private let cache: CacheStore?
    private let now: @Sendable () -> Date
    private var inFlight: [UUID: Task<Void, Never>] = [:]
    private var historyRequests: [Int: UUID] = [:]
    private var exchangeObserver: Task<Void, Never>?
    /// Whether the cache has been read (the first frame waits briefly for it).
    public private(set) var cacheRead = false
    /// The last 200 effects run (tests check ordering with it); bounded, so memory stays flat.
    public private(set) var effectLog: [Effect] = []

    public init(state: AppState, service: any ShopService, cache: CacheStore?, now: @escaping @Sendable () -> Date = { Date() }) {
        self.state = state
        self.service = service
        self.cache = cache
        self.now = now
    }

    public func send(_ intent: Intent) { dispatch(.intent(intent)) }

    public func dispatch(_ message: Message) {
        let effects = ShopUpdate.update(&state, message, now: now())
        onChange?(state)
        guard !effects.isEmpty else { return }
        // Cancellations first and at once: they must never overtake work started after them.
        for effect in effects where effect.isCancellation { start(effect) }
        let work = effects.filter { !$0.isCancellation }
        if let first = work.firstIndex(where: { if case .readCache = $0 { return true } else { return false } }) {
            // The cache is read before any network call, so the first frame can show it.
            let cacheRead = work[first]
            var rest = work
            rest.remove(at: first)
            spawn {
                await self.run(cacheRead)
                guard !Task.isCancelled else { return }
                // The user may have moved on (another context) while the cache was read.
                for effect in rest where effect.generation.map({ $0 == self.state.generation }) ?? true { self.start(effect) }
            }
        } else {
            for effect in work { start(effect) }
        }
    }

    /// Mirrors the REST core's exchange log into the requests inspector.
    public func observeExchanges() {
        guard exchangeObserver == nil else { return }
        let service = self.service
        exchangeObserver = Task {
            for await exchange in await service.exchangeUpdates() {
                self.dispatch(.exchangeRecorded(exchange))
            }
        }
    }

    /// Waits until no effect is in flight (for `print` and tests).
    public func settle() async {
        while let task = inFlight.values.first {
            await task.value
        }
    }

    public func stop() {
        inFlight.values.forEach { $0.cancel() }
        historyRequests = [:]
        exchangeObserver?.cancel()
        exchangeObserver = nil
    }

    // MARK: Running effects

    private func start(_ effect: Effect) {
        switch effect {
        case let .cancelHistory(requestID):
            if let id = historyRequests.removeValue(forKey: requestID) { inFlight[id]?.cancel() }
        case .cancelAll:
            inFlight.values.forEach { $0.cancel() }
            historyRequests = [:]
        case let .fetchHistory(_, requestID, _, _, _):
            historyRequests[requestID] = spawn { await self.run(effect) }
        default:
            spawn { await self.run(effect) }
        }
    }

    @discardableResult
    private func spawn(_ work: @escaping @MainActor () async -> Void) -> UUID {
        let id = UUID()
        inFlight[id] = Task {
            await work()
            self.inFlight[id] = nil
        }
        return id
    }

    private func run(_ effect: Effect) async {
        effectLog.append(effect)
        if effectLog.count > 200 { effectLog.removeFirst(effectLog.count - 200) }
        let service = self.service
        switch effect {
        case let .readCache(generation, userKey, shopKey):
            guard let cache else {
                cacheRead = true
                return
            }
            let balance = await cache.read(CheerBalance.self, kind: "balance", key: userKey)
            let packs = await cache.read(AudioPackList.self, kind: "packs", key: shopKey)
            let firstPage = await cache.read(CheerHistoryPage.self, kind: "history-page1", key: userKey)
            dispatch(.cacheLoaded(generation: generation, balance: balance, packs: packs, firstPage: firstPage))
            cacheRead = true

        case let .fetchBalance(generation, user, stamp):
            guard let result = await Self.attempt({ try await service.balance(user: user) }) else {
                return dispatch(.cancelled(generation: generation, .balance))
            }
            dispatch(.balanceLoaded(generation: generation, stamp: stamp, result, at: now()))

        case let .fetchPacks(generation):
            guard let result = await Self.attempt({ try await service.audioPacks() }) else {
                return dispatch(.cancelled(generation: generation, .packs))
            }
            dispatch(.packsLoaded(generation: generation, result, at: now()))

        case let .fetchHistory(generation, requestID, user, page, perPage):
            let result = await Self.attempt({ try await service.history(user: user, page: page, perPage: perPage) })
            historyRequests[requestID] = nil
            guard let result else { return dispatch(.cancelled(generation: generation, .history(requestID: requestID, page: page))) }
            dispatch(.historyLoaded(generation: generation, requestID: requestID, page: page, result, at: now()))

        case let .spend(generation, amount, product, comment, user, kind):
            guard let result = await Self.attempt({ try await service.spend(amount: amount, product: product, comment: comment, user: user) }) else {
                return dispatch(.cancelled(generation: generation, .action))
            }
            dispatch(.actionFinished(generation: generation, kind, result, at: now()))

        case let .purchase(generation, identifier, transactionID, user, kind):
            guard let result = await Self.attempt({ try await service.purchase(identifier: identifier, transactionID: transactionID, user: user) }) else {
                return dispatch(.cancelled(generation: generation, .action))
            }
            dispatch(.actionFinished(generation: generation, kind, result, at: now()))

        case let .writeBalance(key, value, fetchedAt):
            await cache?.write(value, kind: "balance", key: key, fetchedAt: fetchedAt)
        case let .writePacks(key, value, fetchedAt):
            await cache?.write(value, kind: "packs", key: key, fetchedAt: fetchedAt)
        case let .writeFirstPage(key, value, fetchedAt):
            await cache?.write(value, kind: "history-page1", key: key, fetchedAt: fetchedAt)

        case .cancelHistory, .cancelAll:
            break
        }
    }

    /// The call's result, or nil when it was cancelled (a cancelled request's answer reaches nobody).
    private static func attempt<T: Sendable>(_ call: @Sendable () async throws -> T) async -> Result<T, ShopAPIError>? {
        do {
            return .success(try await call())
        } catch let error as ShopAPIError {
            return .failure(error)
        } catch is CancellationError {
            return nil
        } catch {
            return .failure(.configuration("unexpected error: \(error)"))
        }
    }
}

extension Effect {
    var isCancellation: Bool {
        switch self {
        case .cancelHistory, .cancelAll: return true
        default: return false
        }
    }

    /// The context generation the effect belongs to, for effects that talk to the server.
    var generation: Int? {
        switch self {
        case let .readCache(g, _, _), let .fetchBalance(g, _, _), let .fetchPacks(g), let .fetchHistory(g, _, _, _, _),
             let .spend(g, _, _, _, _, _), let .purchase(g, _, _, _, _):
            return g
        default: return nil
        }
    }
}
