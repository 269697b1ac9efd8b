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
    /// Effects run so far (tests count network calls with it).
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
        if let first = effects.firstIndex(where: { if case .readCache = $0 { return true } else { return false } }) {
            // The cache is read before any network call, so the first frame can show it.
            let cacheRead = effects[first]
            var rest = effects
            rest.remove(at: first)
            spawn {
                await self.run(cacheRead)
                for effect in rest { self.start(effect) }
            }
        } else {
            for effect in effects { start(effect) }
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
        exchangeObserver?.cancel()
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
        let service = self.service
        switch effect {
        case let .readCache(generation, userKey, shopKey):
            guard let cache else { return }
            let balance = await cache.read(CheerBalance.self, kind: "balance", key: userKey)
            let packs = await cache.read(AudioPackList.self, kind: "packs", key: shopKey)
            let firstPage = await cache.read(CheerHistoryPage.self, kind: "history-page1", key: userKey)
            dispatch(.cacheLoaded(generation: generation, balance: balance, packs: packs, firstPage: firstPage))

        case let .fetchBalance(generation, user):
            guard let result = await Self.attempt({ try await service.balance(user: user) }) else { return }
            dispatch(.balanceLoaded(generation: generation, result, at: now()))

        case let .fetchPacks(generation):
            guard let result = await Self.attempt({ try await service.audioPacks() }) else { return }
            dispatch(.packsLoaded(generation: generation, result, at: now()))

        case let .fetchHistory(generation, requestID, user, page, perPage):
            let result = await Self.attempt({ try await service.history(user: user, page: page, perPage: perPage) })
            historyRequests[requestID] = nil
            guard let result else { return }
            dispatch(.historyLoaded(generation: generation, requestID: requestID, page: page, result, at: now()))

        case let .spend(generation, amount, product, comment, user):
            let kind = pendingKind()
            guard let result = await Self.attempt({ try await service.spend(amount: amount, product: product, comment: comment, user: user) }),
                  let kind
            else { return }
            dispatch(.actionFinished(generation: generation, kind, result, at: now()))

        case let .purchase(generation, identifier, transactionID, user):
            let kind = pendingKind()
            guard let result = await Self.attempt({ try await service.purchase(identifier: identifier, transactionID: transactionID, user: user) }),
                  let kind
            else { return }
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

    private func pendingKind() -> ActionKind? {
        if case let .pending(kind, _) = state.action?.phase { return kind }
        return nil
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
