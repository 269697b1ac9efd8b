import Foundation
import ShopAPI
import ShopCache

/// What the user asks for (a front end maps keys to these).
public enum Intent: Equatable, Sendable {
    /// Read the cache, then load everything.
    case start
    /// Read the cached balance, then load the live one (and nothing else): `print balance`.
    case startBalance
    /// Reload the balance and the data of every list (coalesced with requests in flight).
    case refresh
    case refreshBalance
    case switchContext(baseURL: String, user: String)
    // Audio Packs
    case setPackFilter(String)
    case setPackSort(PackSort)
    case movePackSelection(Int)
    case selectPack(index: Int)
    // History
    case historyNextPage, historyPreviousPage, historyFirstPage, historyLastPage
    case historyGoTo(page: Int)
    case moveHistorySelection(Int)
    case selectHistoryRow(index: Int)
    case toggleComments
    case retryHistoryPage
    // Requests
    case moveRequestSelection(Int)
    case selectRequest(index: Int)
    // Actions
    case beginSpend
    case beginPurchase(transactionID: UInt64)
    case editSpend(amount: String, comment: String)
    case editPurchase(identifier: String, transactionID: String)
    /// From the form: validate and ask for confirmation. From the confirmation: send.
    case submitAction
    case cancelAction
    /// Put a pending spend or purchase away: the app is usable while it waits; the answer comes as a notice.
    case backgroundAction
    case dismissNotice
    /// Show an informational line in the status bar (the front end's own news, e.g. "copied").
    case notify(String)
}

/// Everything that changes state: intents, and the results of effects.
public enum Message: Sendable {
    case intent(Intent)
    case cacheLoaded(generation: Int, balance: CacheEntry<CheerBalance>?, packs: CacheEntry<AudioPackList>?, firstPage: CacheEntry<CheerHistoryPage>?)
    case balanceLoaded(generation: Int, stamp: Int = 0, Result<CheerBalance, ShopAPIError>, at: Date)
    case packsLoaded(generation: Int, Result<AudioPackList, ShopAPIError>, at: Date)
    case historyLoaded(generation: Int, requestID: Int, page: Int, Result<CheerHistoryPage, ShopAPIError>, at: Date)
    case actionFinished(generation: Int, ActionKind, Result<CheerBalance, ShopAPIError>, at: Date)
    case exchangeRecorded(Exchange)
    /// A request was cancelled before it answered (its work is cleared from the state).
    case cancelled(generation: Int, CancelledWork)
}

public enum CancelledWork: Sendable, Equatable {
    case balance, packs
    case history(requestID: Int, page: Int)
    case action
}

/// Work the update function asks for; the store runs it and feeds the result back as a `Message`.
public enum Effect: Equatable, Sendable {
    case readCache(generation: Int, user: CacheKey, shop: CacheKey)
    /// `stamp`: answers asked before a write changed the balance are not taken.
    case fetchBalance(generation: Int, user: String, stamp: Int = 0)
    case fetchPacks(generation: Int)
    case fetchHistory(generation: Int, requestID: Int, user: String, page: Int, perPage: Int)
    /// A page request whose answer no longer matters (its page was evicted, or the context changed).
    case cancelHistory(requestID: Int)
    case cancelAll
    case spend(generation: Int, amount: Int, product: String, comment: String?, user: String, kind: ActionKind)
    case purchase(generation: Int, identifier: String, transactionID: UInt64, user: String, kind: ActionKind)
    case writeBalance(key: CacheKey, CheerBalance, fetchedAt: Date)
    case writePacks(key: CacheKey, AudioPackList, fetchedAt: Date)
    case writeFirstPage(key: CacheKey, CheerHistoryPage, fetchedAt: Date)
}
