import Foundation
import ShopAPI
import ShopCache

/// Which shop and which user the app is looking at.
public struct ShopContext: Equatable, Sendable {
    public var environment: String
    public var baseURL: String
    public var user: String
    public var readOnly: Bool

    public init(environment: String, baseURL: String, user: String, readOnly: Bool = false) {
        self.environment = environment
        self.baseURL = baseURL
        self.user = user
        self.readOnly = readOnly
    }

    var userKey: CacheKey { CacheKey(baseURL: baseURL, user: user) }
    var shopKey: CacheKey { CacheKey(baseURL: baseURL, user: nil) }
}

/// A one-line message for the status bar.
public struct Notice: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case info, error }
    public var kind: Kind
    public var text: String
    public var requestID: String?

    public init(_ kind: Kind, _ text: String, requestID: String? = nil) {
        self.kind = kind
        self.text = text
        self.requestID = requestID
    }

    static func error(_ error: ShopAPIError) -> Notice { Notice(.error, error.description, requestID: error.requestID) }
}

// MARK: Balance

public struct BalanceState: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// Nothing known and nothing asked yet.
        case idle
        /// Nothing known; a request is in flight.
        case loading
        case live(Int, fetchedAt: Date)
        /// The last known value; `reason` is why it is not live (nil while a refresh is in flight).
        case cached(Int, fetchedAt: Date, reason: String?)
        /// Nothing known and the request failed.
        case failed(String)
    }

    public var value: Int?
    public var fetchedAt: Date?
    public var source: DataSource?
    public var isLoading = false
    /// The last failure of a balance request (kept beside a cached value; cleared by a success).
    public var lastError: ShopAPIError?
    /// Bumped when a write returns the balance: answers to requests sent before it are stale.
    var stamp = 0

    public init() {}

    public var phase: Phase {
        if let value, let fetchedAt, let source {
            switch source {
            case .live: return .live(value, fetchedAt: fetchedAt)
            case let .cached(reason): return .cached(value, fetchedAt: fetchedAt, reason: isLoading ? nil : reason)
            }
        }
        if isLoading { return .loading }
        if let lastError { return .failed(lastError.description) }
        return .idle
    }
}

// MARK: Audio Packs

public enum PackSort: String, CaseIterable, Equatable, Sendable {
    case shopOrder = "shop order", name, price, cheer = "cheer total"

    public var next: PackSort {
        let all = PackSort.allCases
        return all[((all.firstIndex(of: self) ?? 0) + 1) % all.count]
    }
}

public struct PacksState: Equatable, Sendable {
    public enum Status: Equatable, Sendable {
        case idle, loading, loaded, failed(String)
    }

    public var all: [AudioPack] = []
    public var unreadable: [UnreadableEntry] = []
    public var status: Status = .idle
    public var source: DataSource?
    public var fetchedAt: Date?
    public var isLoading = false
    public var filter = ""
    public var sort: PackSort = .shopOrder
    /// Reload once the request in flight answers (it was sent before a write changed the totals).
    var reloadWhenDone = false
    /// The packs shown: `all` filtered and sorted (kept in step by the update function).
    public private(set) var visible: [AudioPack] = []
    public var selectedIndex = 0

    public init() {}

    public var selected: AudioPack? { visible.indices.contains(selectedIndex) ? visible[selectedIndex] : nil }

    /// Recomputes `visible`, keeping the selected pack selected when it is still shown.
    mutating func refresh() {
        let keep = selected?.identifier
        let needle = Self.fold(filter.trimmingCharacters(in: .whitespaces))
        var shown = needle.isEmpty ? all : all.filter { pack in
            ([pack.name, pack.creator ?? "", pack.identifier] + (pack.tags ?? [])).contains { Self.fold($0).contains(needle) }
        }
        switch sort {
        case .shopOrder: break
        case .name: shown.sort { Self.fold($0.name) < Self.fold($1.name) }
        case .price: shown.sort { ($0.priceCents ?? 0, Self.fold($0.name)) < ($1.priceCents ?? 0, Self.fold($1.name)) }
        case .cheer: shown.sort { ($0.cheerTotal ?? 0, Self.fold($1.name)) > ($1.cheerTotal ?? 0, Self.fold($0.name)) }
        }
        visible = shown
        if let keep, let index = shown.firstIndex(where: { $0.identifier == keep }) {
            selectedIndex = index
        } else {
            selectedIndex = min(max(0, selectedIndex), max(0, shown.count - 1))
        }
    }

    /// Case- and diacritic-insensitive form for matching and ordering.
    static func fold(_ s: String) -> String {
        s.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}

// MARK: History

public struct HistoryState: Equatable, Sendable {
    public static let defaultPerPage = 50
    /// Rows from the end of a page at which the next page is fetched ahead.
    public static let prefetchDistance = 5

    public var perPage: Int
    public var page = 1
    public var totalPages: Int?
    public var totalCount: Int?
    public var pages: PageCache
    public var selectedIndex = 0
    /// Entries whose comments are shown (keyed by `HistoryState.key`).
    public var expanded: Set<String> = []
    var nextRequestID = 1
    /// The request whose answer set the totals; older answers do not change them.
    var totalsRequestID = 0

    public init(perPage: Int = HistoryState.defaultPerPage, capacity: Int = 8) {
        self.perPage = perPage
        pages = PageCache(capacity: capacity)
    }

    public var current: PageSlot? { pages[page] }

    /// The rows of the page on screen: its content, or what it showed before while it reloads.
    public var rows: [HistoryItem] {
        switch current {
        case let .loaded(p, _, _): return p.items
        case let .loading(_, stale): return stale?.page.items ?? []
        default: return []
        }
    }

    public var selectedItem: HistoryItem? { rows.indices.contains(selectedIndex) ? rows[selectedIndex] : nil }

    /// A stable key for an entry on a page: its id, or its page and position.
    public func key(of item: HistoryItem, at index: Int) -> String {
        switch item {
        case let .entry(e): return e.id ?? "p\(page)#\(index)"
        case let .unreadable(u): return u.id ?? "p\(page)#\(index)"
        }
    }

    public func isExpanded(_ item: HistoryItem, at index: Int) -> Bool { expanded.contains(key(of: item, at: index)) }

    /// `page 3 of 2,000 · 100,000 cheers`.
    public var positionText: String {
        var text = "page \(Wording.grouped(page))"
        if let totalPages { text += " of \(Wording.grouped(totalPages))" }
        if let totalCount { text += " · \(Wording.grouped(totalCount)) cheer\(totalCount == 1 ? "" : "s")" }
        return text
    }

    /// The last page there is (1 when the history is empty); unknown totals allow one page more.
    var lastPage: Int { totalPages.map { max(1, $0) } ?? page + 1 }
}

// MARK: Requests (inspector)

public struct RequestsState: Equatable, Sendable {
    public static let capacity = 200
    /// Newest first.
    public var rows: [Exchange] = []
    public var selectedIndex = 0

    public init() {}

    public var selected: Exchange? { rows.indices.contains(selectedIndex) ? rows[selectedIndex] : nil }
}

// MARK: Actions

public enum ActionKind: Equatable, Sendable {
    case spend(product: String, productName: String, amount: Int, comment: String?)
    case purchase(identifier: String, transactionID: UInt64)
}

/// A spend or purchase, from its form through confirmation to its outcome.
public struct ActionState: Equatable, Sendable {
    public enum Form: Equatable, Sendable {
        case spend(product: String, productName: String, amount: String, comment: String)
        case purchase(identifier: String, transactionID: String)
    }

    public enum Phase: Equatable, Sendable {
        case editing(Form, problem: String?)
        /// "Spend 50 cheer on Rain on a Tin Roof as qa-alice on STAGING?"
        case confirming(ActionKind, summary: String)
        case pending(ActionKind, summary: String)
        case succeeded(String)
        case failed(String, requestID: String?)
    }

    public var phase: Phase
    /// The dialog was put away while the request is out; its outcome arrives as a notice.
    public var backgrounded = false

    public init(phase: Phase, backgrounded: Bool = false) {
        self.phase = phase
        self.backgrounded = backgrounded
    }

    /// Whether the dialog is on screen (and takes the keys).
    public var isShown: Bool { !backgrounded }
}

// MARK: The whole app

public struct AppState: Equatable, Sendable {
    public var context: ShopContext
    /// Bumped when the context changes; answers for an older generation are dropped.
    public internal(set) var generation = 1
    public var balance = BalanceState()
    public var packs = PacksState()
    public var history: HistoryState
    public var requests = RequestsState()
    public var action: ActionState?
    public var notice: Notice?

    public init(context: ShopContext, historyPerPage: Int = HistoryState.defaultPerPage, historyCapacity: Int = 8) {
        self.context = context
        history = HistoryState(perPage: historyPerPage, capacity: historyCapacity)
    }
}
