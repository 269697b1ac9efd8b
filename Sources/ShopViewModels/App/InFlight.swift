import Foundation
import ShopAPI

/// Identifies one request. Tokens are handed out in order, so a later token was asked later.
public struct Token: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: Int
    public init(_ value: Int) { self.value = value }
    public static func < (a: Token, b: Token) -> Bool { a.value < b.value }
    public var description: String { "#\(value)" }
}

/// What a request in flight is for.
public enum Purpose: Hashable, Sendable {
    /// The cached balance, packs and first page, read before the first live request.
    case cacheRead
    /// The balance (its token is held by `AppState.balance`, not the table).
    case balance
    /// The packs (held by `PacksState.list`).
    case packs
    /// A page of the history list: the cursor's, one on screen, or one fetched ahead (held by its
    /// `PageSlot`).
    case historyPage(Int)
    /// A page of a `/` find's scan (in the contract's largest pages).
    case findScan(page: Int)
    /// The first history page, read to verify a write (its own request: the cursor may be anywhere).
    case verificationHistory
    /// The pause before a verification reads again a value that disagreed with the write.
    case verificationWake
    /// The pause before the balance is read again: a read differed from the one shown (settled reads).
    case balanceWake
    /// A spend or a purchase.
    case write
    /// The watch's wait until its next round.
    case watchWake
    /// A read of the watch (its own requests: the lists' paging goes on beside it).
    case watch(WatchRead)
    /// A comparison (`D`): the reads of both sides and their diff.
    case compare

    var isWatch: Bool {
        switch self {
        case .watchWake, .watch: return true
        default: return false
        }
    }

    /// Belongs to the user looked at: a user switch cancels it. The packs are the shop's, and a
    /// write (or its verification) refuses a switch while it is out.
    var isPerUser: Bool {
        switch self {
        case .cacheRead, .balance, .balanceWake, .historyPage, .findScan, .watchWake, .watch: return true
        case .packs, .verificationHistory, .verificationWake, .write, .compare: return false
        }
    }
}

/// The requests in flight that no resource holds (a write, a find's scan, the watch's reads, a
/// comparison…), by token, and the counter every token comes from. The balance, the packs and each
/// history page hold their own request's token (`Loadable.loading`), so "loading" is one fact;
/// `AppState.requestsOut` is both together. An answer whose token is held by neither is stale (its
/// request was cancelled or superseded), dropped in `ShopUpdate.route`. At most one request per purpose.
public struct InFlight: Equatable, Sendable {
    public private(set) var purposes: [Token: Purpose] = [:]
    private var lastToken = 0

    public init() {}

    /// A new token, for a request its resource will hold.
    mutating func next() -> Token {
        lastToken += 1
        return Token(lastToken)
    }

    /// A new token for `purpose`, noted in the table (callers first cancel or coalesce with one
    /// already out). Never a resource's purpose: those hold their own token.
    mutating func ask(_ purpose: Purpose) -> Token {
        let token = next()
        purposes[token] = purpose
        return token
    }

    /// The purpose of `token`, removed from the table; nil when it is stale.
    mutating func settle(_ token: Token) -> Purpose? {
        purposes.removeValue(forKey: token)
    }

    /// The token of the request out for `purpose`.
    public func token(for purpose: Purpose) -> Token? {
        purposes.first { $0.value == purpose }?.key
    }

    public func contains(_ purpose: Purpose) -> Bool { token(for: purpose) != nil }

    public var isEmpty: Bool { purposes.isEmpty }
    public var count: Int { purposes.count }
}

/// A value as last known: when it was read and where it came from.
public struct Known<Value: Equatable & Sendable>: Equatable, Sendable {
    public var value: Value
    public var at: Date
    public var source: DataSource

    public init(_ value: Value, at: Date, source: DataSource) {
        self.value = value
        self.at = at
        self.source = source
    }
}

/// A resource the app loads (the balance, the packs, a history page): what it shows, how its last
/// request went, and the token of the request out for it — the one record that it is loading.
public enum Loadable<Value: Equatable & Sendable>: Equatable, Sendable {
    /// Nothing known and nothing asked.
    case idle
    /// The request `token` is out; `shown` is what was known before it.
    case loading(Token, shown: Known<Value>?)
    case loaded(Known<Value>)
    /// The last request failed; `shown` is what was known before (marked with why it is not live).
    case failed(ShopAPIError, shown: Known<Value>?)

    /// What to show, however the last request went.
    public var shown: Known<Value>? {
        switch self {
        case .idle: return nil
        case let .loading(_, shown), let .failed(_, shown): return shown
        case let .loaded(known): return known
        }
    }

    public var value: Value? { shown?.value }
    public var at: Date? { shown?.at }
    public var source: DataSource? { shown?.source }
    public var isLoading: Bool { token != nil }
    /// The token of the request out for it.
    public var token: Token? { if case let .loading(token, _) = self { return token } else { return nil } }
    /// The last request's failure (cleared by a success or a new request).
    public var error: ShopAPIError? { if case let .failed(error, _) = self { return error } else { return nil } }

    /// What the screen says: a value (live, or cached with why), or that there is none yet.
    public enum Phase: Equatable, Sendable {
        case idle
        /// Nothing known; a request is out.
        case loading
        case live(Value, fetchedAt: Date)
        /// The last known value; `reason` is why it is not live (nil while a refresh is out).
        case cached(Value, fetchedAt: Date, reason: StaleReason?)
        /// Nothing known and the request failed.
        case failed(ShopAPIError)
    }

    public var phase: Phase {
        switch self {
        case .idle: return .idle
        case .loading(_, nil): return .loading
        case let .failed(error, nil): return .failed(error)
        case let .loading(_, known?):
            return known.source == .live ? .live(known.value, fetchedAt: known.at) : .cached(known.value, fetchedAt: known.at, reason: nil)
        case let .loaded(known), let .failed(_, known?):
            switch known.source {
            case .live: return .live(known.value, fetchedAt: known.at)
            case let .cached(reason): return .cached(known.value, fetchedAt: known.at, reason: reason)
            }
        }
    }

    // MARK: transitions (the update function's only ways to change one)

    /// The request `token` went out.
    mutating func asked(_ token: Token) { self = .loading(token, shown: shown) }

    /// The request answered.
    mutating func succeeded(_ value: Value, at: Date) { self = .loaded(Known(value, at: at, source: .live)) }

    /// The request failed: what was known is kept, marked with `reason`.
    mutating func failed(_ error: ShopAPIError, reason: StaleReason) {
        var kept = shown
        kept?.source = .cached(reason: reason)
        self = .failed(error, shown: kept)
    }

    /// The request was cancelled: back to what was known before it.
    mutating func withdrawn() {
        guard case let .loading(_, shown) = self else { return }
        self = shown.map { .loaded($0) } ?? .idle
    }

    /// A cached value, shown where nothing is known yet.
    mutating func cached(_ value: Value, at: Date) {
        let known = Known(value, at: at, source: .cached(reason: nil))
        switch self {
        case .idle: self = .loaded(known)
        case let .loading(token, nil): self = .loading(token, shown: known)
        case let .failed(error, nil): self = .failed(error, shown: Known(value, at: at, source: .cached(reason: ErrorText.staleReason(error))))
        case .loading, .loaded, .failed: break
        }
    }
}
