import Foundation
import ShopAPI
import ShopCache

/// The cheer balance: the last known value, where it came from, and the request out for it.
public struct BalanceState: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// Nothing known and nothing asked yet.
        case idle
        /// Nothing known; a request is in flight.
        case loading
        case live(Int, fetchedAt: Date)
        /// The last known value; `reason` is why it is not live (nil while a refresh is in flight).
        case cached(Int, fetchedAt: Date, reason: StaleReason?)
        /// Nothing known and the request failed.
        case failed(String)
    }

    public var value: Int?
    public var fetchedAt: Date?
    public var source: DataSource?
    /// The request whose answer is wanted.
    public internal(set) var pending: Token?
    /// The last failure of a balance request (kept beside a cached value; cleared by a success).
    public var lastError: ShopAPIError?

    public init() {}

    public var isLoading: Bool { pending != nil }

    public var phase: Phase {
        if let value, let fetchedAt, let source {
            switch source {
            case .live: return .live(value, fetchedAt: fetchedAt)
            case let .cached(reason): return .cached(value, fetchedAt: fetchedAt, reason: isLoading ? nil : reason)
            }
        }
        if isLoading { return .loading }
        if let lastError { return .failed(ErrorText.line(lastError)) }
        return .idle
    }
}

// MARK: Balance and session

extension ShopUpdate {
    enum SessionStep { case start, startBalance }

    static func session(_ step: SessionStep, _ state: inout AppState) -> [Effect] {
        let token = state.newToken()
        state.cacheRead = token
        let read = Effect.readCache(token, user: state.context.userKey, shop: state.context.shopKey)
        // The cache is read before any request goes out, so the first frame can show it.
        switch step {
        case .start:
            let loads = loadBalance(&state) + loadPacks(&state) + loadHistoryPage(state.history.page, &state)
            return [.sequence([read, .batch(loads)])]
        case .startBalance:
            return [.sequence([read, .batch(loadBalance(&state))])]
        }
    }

    /// Reloads the balance and the data of every list (coalesced with requests in flight).
    static func refresh(_ state: inout AppState) -> [Effect] {
        loadBalance(&state) + loadPacks(&state) + invalidateHistory(&state, merge: true)
    }

    static func cacheLoaded(_ message: Message, _ state: inout AppState) -> [Effect] {
        guard case let .cacheLoaded(token, balance, packs, firstPage) = message, token == state.cacheRead else { return [] }
        state.cacheRead = nil
        applyCache(balance: balance, packs: packs, firstPage: firstPage, &state)
        return []
    }

    /// Shows cached values where nothing live is known yet.
    static func applyCache(balance: CacheEntry<CheerBalance>?, packs: CacheEntry<AudioPackList>?, firstPage: CacheEntry<CheerHistoryPage>?,
                           _ state: inout AppState) {
        if let balance, state.balance.value == nil {
            state.balance.value = balance.value.balance
            state.balance.fetchedAt = balance.fetchedAt
            state.balance.source = .cached(reason: nil)
        }
        if let packs, state.packs.all.isEmpty {
            state.packs.all = packs.value.packs
            state.packs.unreadable = packs.value.unreadable
            state.packs.fetchedAt = packs.fetchedAt
            state.packs.source = .cached(reason: nil)
            state.packs.status = .loaded
            state.packs.refresh()
        }
        if let firstPage { cachedFirstPage(firstPage, &state) }
    }

    static func loadBalance(_ state: inout AppState) -> [Effect] {
        guard !state.balance.isLoading else { return [] }  // coalesced with the request in flight
        let token = state.newToken()
        state.balance.pending = token
        return [.fetchBalance(token, user: state.context.user)]
    }

    static func balanceLoaded(_ message: Message, _ state: inout AppState) -> [Effect] {
        guard case let .balanceLoaded(token, result, at) = message, token == state.balance.pending else { return [] }
        state.balance.pending = nil
        defer { verificationBalance(token, result, &state) }
        switch result {
        case let .success(balance):
            state.balance.value = balance.balance
            state.balance.fetchedAt = at
            state.balance.source = .live
            state.balance.lastError = nil
            recovered(Balance.endpoint, &state)  // the answer waited for, not a stale one
            return [.writeBalance(key: state.context.userKey, balance, fetchedAt: at)]
        case let .failure(error):
            state.balance.lastError = error
            if state.balance.value != nil {
                // Keep what we had: a cached value survives every fault, marked with the reason.
                state.balance.source = .cached(reason: ErrorText.staleReason(error))
            }
            state.notice = .error(error, state.context)
            return []
        }
    }

    /// A write answered with the balance: take it, and drop a balance request already out (it was
    /// asked before the write).
    static func adoptWrittenBalance(_ balance: CheerBalance, at: Date, _ state: inout AppState) -> [Effect] {
        let stale = state.balance.pending.map { [Effect.cancel($0)] } ?? []
        state.balance.pending = nil
        state.balance.value = balance.balance
        state.balance.fetchedAt = at
        state.balance.source = .live
        state.balance.lastError = nil
        return stale + [.writeBalance(key: state.context.userKey, balance, fetchedAt: at)]
    }

    /// Reloads the balance even when a request is out (that one predates a write).
    static func reloadBalance(_ state: inout AppState) -> [Effect] {
        let stale = state.balance.pending.map { [Effect.cancel($0)] } ?? []
        state.balance.pending = nil
        return stale + loadBalance(&state)
    }

    /// A cancelled request's resource stops waiting (a stale token changes nothing).
    static func cancelled(_ token: Token, _ state: inout AppState) {
        if state.balance.pending == token {
            state.balance.pending = nil
            // Nothing replaced it: the write's verification cannot read the balance.
            if let v = state.verification, token >= v.readsFrom { verificationBalance(token, .unread("the read was cancelled"), &state) }
        }
        if state.cacheRead == token { state.cacheRead = nil }
        if state.packs.pending == token {
            state.packs.pending = nil
            if let v = state.verification, token >= v.readsFrom { verificationPacks(token, .unread("the read was cancelled"), &state) }
            if state.packs.status == .loading { state.packs.status = .idle }
        }
        historyCancelled(token, &state)
        verificationCancelled(token, &state)
        actionCancelled(token, &state)
    }
}
