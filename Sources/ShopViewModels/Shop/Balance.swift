import Foundation
import ShopAPI
import ShopModel
import ShopCache

// MARK: Balance and session

extension ShopUpdate {
    enum SessionStep { case start, startBalance }

    static func session(_ step: SessionStep, _ state: inout AppState) -> [Effect] {
        let read = Effect.readCache(state.ask(.cacheRead), user: state.context.userKey, shop: state.context.shopKey)
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

    /// Shows cached values where nothing live is known yet.
    static func applyCache(balance: CacheEntry<CheerBalance>?, packs: CacheEntry<AudioPackList>?, firstPage: CacheEntry<CheerHistoryPage>?,
                           _ state: inout AppState) {
        if let balance { state.balance.cached(balance.value.balance, at: balance.fetchedAt) }
        if let packs, state.packs.all.isEmpty {
            state.packs.list.cached(packs.value, at: packs.fetchedAt)
            state.packs.refresh()
        }
        if let firstPage { cachedFirstPage(firstPage, &state) }
    }

    static func loadBalance(_ state: inout AppState) -> [Effect] {
        guard !state.balance.isLoading else { return [] }  // coalesced with the request in flight
        let token = state.newToken()
        state.balance.asked(token)
        return [.request(token, .balance(user: state.context.user))]
    }

    /// The balance request's answer (the table has already told it from a stale one).
    static func balanceLoaded(_ token: Token, _ result: Result<CheerBalance, ShopAPIError>, at: Date, requestID: String? = nil,
                              _ state: inout AppState) -> [Effect] {
        if state.write.verification?.balanceRead == token {
            // A read after a write: the verification settles it over its reads, and the header shows the
            // balance they settle on, never a read that flipped (concludeVerification).
            state.balance.withdrawn()
            if case .success = result { recovered(Balance.endpoint, &state) }
            return verificationBalance(token, result, requestID: requestID, &state)
        }
        switch result {
        case let .success(balance):
            // A read that differs from the live balance shown is read again before the header moves.
            if let effects = settleBalance(Sighting(balance.balance, requestID: requestID), &state) {
                recovered(Balance.endpoint, &state)
                return effects
            }
            state.balance.succeeded(balance.balance, at: at)
            recovered(Balance.endpoint, &state)
            return [.writeBalance(key: state.context.userKey, balance, fetchedAt: at)]
        case let .failure(error):
            // Keep what we had: a cached value survives every fault, marked with the reason.
            state.balance.failed(error, reason: ErrorText.staleReason(error))
            state.notice = .error(error, state.context)
            return []
        }
    }

    /// Settled reads of the balance (no write of this tool between them): a read that differs from the live
    /// balance shown is held back and read again, after 0.5 s, then 1 s (three reads at most). Nil: show the
    /// read now (nothing to settle, or it settled on it: moved and held, or back to the value shown). Reads
    /// that came back to the value shown, or three that never agreed, are a `reads-disagree` finding.
    static func settleBalance(_ read: Sighting<Int>, _ state: inout AppState) -> [Effect]? {
        guard state.write.verification == nil, !state.isWriting, let shown = state.balance.shown, shown.source == .live else {
            state.balanceReads = []
            return nil
        }
        let reads = state.balanceReads + [read]
        func disagree(_ reads: [Sighting<Int>]) {
            state.checks.add(ReadAnomaly.records(.disagree(reads), what: "the balance", request: Balance.endpoint.description,
                                                 user: state.context.user, at: shown.at, describe: { Wording.grouped($0) }))
        }
        if read.value == shown.value {
            // Back to what was shown: the reads between answered another state, and nothing tells which is
            // the older (no write of this tool between them): the reads disagree, and the header stays.
            state.balanceReads = []
            if reads.count > 1 { disagree(reads) }
            return nil
        }
        if reads.count >= 2, reads[reads.count - 2].value == read.value {
            state.balanceReads = []
            return nil  // it moved and held: a change (the phone, another tester), shown now
        }
        guard reads.count < ReadSeries<Int>.maxReads else {
            state.balanceReads = []
            disagree(reads)
            return nil
        }
        state.balanceReads = reads
        state.balance.withdrawn()
        return [.wake(state.ask(.balanceWake), after: ReadSeries<Int>.pauses[reads.count - 1])]
    }

    /// A write answered with the balance: take it, and drop a balance request already out (it was
    /// asked before the write).
    static func adoptWrittenBalance(_ balance: CheerBalance, at: Date, _ state: inout AppState) -> [Effect] {
        let stale = cancel(.balance, &state)
        state.balance.succeeded(balance.balance, at: at)
        return stale + [.writeBalance(key: state.context.userKey, balance, fetchedAt: at)]
    }

    /// Reloads the balance even when a request is out (that one predates a write).
    static func reloadBalance(_ state: inout AppState) -> [Effect] {
        cancel(.balance, &state) + loadBalance(&state)
    }
}
