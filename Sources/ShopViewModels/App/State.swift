import Foundation
import ShopAPI
import ShopModel
import ShopCache

/// Which shop and which user the app is looking at.
public struct ShopContext: Equatable, Sendable {
    public var environment: String
    /// What kind of environment it is (the header's badge).
    public var tier: Tier
    public var baseURL: String
    public var user: String
    public var readOnly: Bool
    /// The environment variable the token comes from (a copied curl command names it, never its value).
    public var tokenVariable: String
    /// The users `u` offers (the environment's `users = [...]`).
    public var users: [String]
    /// The cheer bundles the environment sells (`bundles = [...]`; the stand-in's by default): what a
    /// purchase is expected to credit.
    public var bundles: [CheerBundle]

    public init(environment: String, tier: Tier? = nil, baseURL: String, user: String, readOnly: Bool = false, tokenVariable: String = "REITERATE_TOKEN",
                users: [String] = [], bundles: [CheerBundle] = CheerBundle.standIn) {
        self.bundles = bundles
        self.environment = environment
        self.tier = tier ?? .named(environment)
        self.baseURL = baseURL
        self.user = user
        self.readOnly = readOnly
        self.tokenVariable = tokenVariable
        self.users = users
    }

    public var userKey: CacheKey { CacheKey(baseURL: baseURL, user: user) }
    var shopKey: CacheKey { CacheKey(baseURL: baseURL, user: nil) }
}

/// A one-line message for the status bar, as data: our leading words (`headline`), the failure it is
/// about in its parts (the request, our words, the server's own words), what was settled or what to do
/// (`verdict`) and the request id. The front end lays the parts out; `text` is the sentence printed.
public struct Notice: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// Done, or news (`✔`).
        case info
        case error
        /// Under way, nothing known yet (no success tick).
        case pending
        /// A request that had failed answers again (the error it replaced, in muted words).
        case recovered
    }
    public var kind: Kind
    /// Our words ahead of the failure (`Go to stopped: `), or the whole message when it is about none.
    public var headline: String
    public var failure: FailureWords?
    /// Our words after the failure, as the sentence has them (` — set REITERATE_TOKEN …`): what was
    /// settled, or what to do. Kept whole while the line is shortened; the last part to go.
    public var verdict: String?
    public var requestID: String?
    /// The operation a failure is about (`GET /api/v1/balance`): its next success clears the line.
    public var endpoint: EndpointKey?

    public init(_ kind: Kind, _ headline: String, failure: FailureWords? = nil, verdict: String? = nil,
                requestID: String? = nil, endpoint: EndpointKey? = nil) {
        self.kind = kind
        self.headline = headline
        self.failure = failure
        self.verdict = verdict
        self.requestID = requestID ?? failure?.requestID
        self.endpoint = endpoint
    }

    /// The whole sentence, as `print` and a report write it: the request id where the failure's words put it.
    public var text: String { headline + (failure?.line ?? "") + (verdict ?? "") }

    /// A failure in one line, with what to do when the token was refused.
    static func error(_ error: ShopAPIError, _ context: ShopContext, headline: String = "") -> Notice {
        Notice(.error, headline, failure: ErrorText.words(error), verdict: ErrorText.signInAdvice(error, tokenVariable: context.tokenVariable),
               requestID: error.requestID, endpoint: error.endpoint)
    }
}

extension ShopUpdate {
    /// `endpoint` answered: an error line about it is replaced by a muted "recovered" line.
    static func recovered(_ endpoint: EndpointDescription, _ state: inout AppState) {
        guard let notice = state.notice, notice.kind == .error, notice.endpoint == endpoint.key else { return }
        state.notice = Notice(.recovered, "recovered: \(endpoint) answers again (it had failed)")
    }
}

/// Where shown data comes from.
public enum DataSource: Equatable, Sendable {
    case live
    /// From the on-disk cache, or kept after a failed refresh; `reason` says why the live data is
    /// missing (nil while a request for it is out).
    case cached(reason: StaleReason?)
}

/// The whole app: data, screen, and the requests in flight. One value, changed only by `ShopUpdate.update`
/// (its properties are set in this module alone; a front end reads them and sends messages).
public struct AppState: Equatable, Sendable {
    public internal(set) var context: ShopContext
    /// Every request in flight and what it is for.
    public internal(set) var inFlight = InFlight()
    public internal(set) var balance = Loadable<Int>.idle
    /// Reads of the balance that differed from the live one shown, with no write of this tool between: held
    /// back (the header keeps what it showed) until the reads settle (at most three, over about 1.5 s).
    var balanceReads: [Sighting<Int>] = []
    public internal(set) var packs = PacksState()
    public internal(set) var history: HistoryState
    /// The exchanges the Requests tab shows (all, or one source's: `requestsShown`).
    public internal(set) var requests = RequestsState()
    /// Every exchange kept (the last `RequestsState.capacity`), the tool's and the app's, newest first.
    public internal(set) var exchanges: [Exchange] = []
    /// Which source's exchanges the Requests tab shows (`a`); nil: both.
    public internal(set) var requestsShown: ExchangeSource?
    /// The app's proxy, when it runs in this session (`--proxy`, `proxy_start`).
    public internal(set) var proxy: ProxyStatus?
    /// How many of the app's exchanges have ended in this session, as the exchange log told them, and
    /// as the proxy counted them (exact: the log's updates can drop some in a burst).
    var appExchangesLogged = 0
    var appExchangesCounted = 0
    /// The header's count of the app's exchanges: the proxy's own, or the log's where that is more.
    public var appExchangeCount: Int { max(appExchangesLogged, appExchangesCounted) }
    /// Requests with a pinned answer (`GET /api/v1/balance?user_id=qa-alice`): marked on the Requests tab.
    public internal(set) var pinned: Set<RequestKey> = []
    /// The diff view's comparison (`D`), while it is open (it lives in the focus).
    public var diff: DiffViewState? {
        if case let .diff(view) = screen.focus { return view }
        return nil
    }
    /// What `D` can compare with, for Tab: `env:NAME`, `user:ID`, snapshot files (set by the program).
    public internal(set) var compareTargets: [String] = []
    /// The spend or purchase: its form, phase, verification and outcome, and a lost purchase.
    public internal(set) var write = WriteFlow()
    public internal(set) var notice: Notice?
    /// Every verification (and finding) so far: the Checks tab.
    public internal(set) var checks = ChecksState()
    /// `X`: the explore campaign run from the TUI (its plan set by the program).
    public var explore = ExploreState()
    /// The Session tab: the open test session, as the program read it.
    public var session = SessionTabState()
    /// The watch of the user under test, and its timeline: the Live tab.
    public internal(set) var watch = WatchState()
    /// The App Store's purchases against the backend's credits: the Purchases tab.
    public internal(set) var purchases = PurchasesState()
    /// The latest time a message brought (the update has no clock; an event the user made takes it).
    public internal(set) var clock: Date?
    public internal(set) var screen = ScreenState()
    /// What the user did, in words (a bug report's steps).
    public internal(set) var steps = StepLog()
    /// The latest error shown (a bug report is about it once the message line has moved on).
    public internal(set) var lastError: Notice?
    /// Where each user looked at before was (`u` switches; switching back returns there).
    public internal(set) var userPlaces: [String: UserPlace] = [:]

    /// `watch` as the settings make it; `compareTargets`, what `D` offers.
    public init(context: ShopContext, watch: WatchState = WatchState(), compareTargets: [String] = [],
                historyPerPage: Int = HistoryState.defaultPerPage, historyCapacity: Int = 8, appStore: Bool = false) {
        self.context = context
        purchases = PurchasesState(enabled: appStore)
        self.watch = watch
        self.compareTargets = compareTargets
        history = HistoryState(perPage: historyPerPage, capacity: historyCapacity)
    }

    /// A token for a new request for `purpose`, noted in the table of requests in flight (a
    /// resource's own request takes `newToken()` and holds it itself).
    mutating func ask(_ purpose: Purpose) -> Token { inFlight.ask(purpose) }

    /// A token for a request its resource holds (the balance, the packs, a history page).
    mutating func newToken() -> Token { inFlight.next() }

    /// Every request out, by token: the ones the resources hold and the table's.
    public var requestsOut: [Token: Purpose] {
        var out = inFlight.purposes
        if let token = balance.token { out[token] = .balance }
        if let token = packs.list.token { out[token] = .packs }
        for page in history.pages.residentPages {
            if let token = history.pages[page]?.token { out[token] = .historyPage(page) }
        }
        return out
    }

    /// The token of the request out for `purpose`.
    public func token(for purpose: Purpose) -> Token? {
        switch purpose {
        case .balance: return balance.token
        case .packs: return packs.list.token
        case let .historyPage(page): return history.pages[page]?.token
        default: return inFlight.token(for: purpose)
        }
    }

    public func isOut(_ purpose: Purpose) -> Bool { token(for: purpose) != nil }

    /// What `token` was asked for, while it is out; a table entry leaves the table (a resource's
    /// token goes when its answer or its cancellation changes the resource). Nil: a stale answer.
    mutating func settle(_ token: Token) -> Purpose? {
        if balance.token == token { return .balance }
        if packs.list.token == token { return .packs }
        if let page = history.pages.page(loading: token) { return .historyPage(page) }
        return inFlight.settle(token)
    }

    /// Which keys are live now (the keymap's contexts).
    public var mode: Mode {
        switch screen.focus {
        case .dialog: return write.action?.phase.mode ?? .browse
        case .browse: return .browse
        case .help: return .help
        case .diff: return .diff
        case .filter: return .filter
        case .prompt: return .prompt
        }
    }

    /// A write (spend or purchase) is out, on screen or put away.
    public var isWriting: Bool {
        if case .pending = write.action?.phase { return true }
        return false
    }

    /// The times of the "cached N min ago" texts on screen (the front end redraws when one changes).
    public var shownAges: [Date] {
        var ages: [Date] = []
        if case let .cached(_, at, _) = balance.phase { ages.append(at) }
        switch screen.tab {
        case .shop: if case let .cached(_, at, _) = packs.list.phase { ages.append(at) }
        case .history: if case let .cached(_, at, _)? = history.current?.phase { ages.append(at) }
        case .requests, .checks, .live, .purchases, .session: break
        }
        return ages
    }

    /// Something on screen animates (a spinner).
    public var isBusy: Bool {
        // Anything out but a cache read and the watch's quiet rounds (a find's scan and a write count).
        if requestsOut.values.contains(where: { $0 != .cacheRead && !$0.isWatch }) { return true }
        return history.dateSearch != nil || write.verification != nil
    }
}

/// What the cache held for a context, read by a front end before its first frame.
public struct CachedShop: Sendable {
    public var balance: CacheEntry<CheerBalance>?
    public var packs: CacheEntry<AudioPackList>?
    public var firstPage: CacheEntry<CheerHistoryPage>?
    /// The first history page was left for after the first frame (which shows the Shop tab).
    public var firstPageDeferred: Bool
    /// The user's states as this machine's writes came to know them.
    public var timeline: Timeline?

    public init(balance: CacheEntry<CheerBalance>? = nil, packs: CacheEntry<AudioPackList>? = nil, firstPage: CacheEntry<CheerHistoryPage>? = nil,
                firstPageDeferred: Bool = false, timeline: Timeline? = nil) {
        self.timeline = timeline
        self.balance = balance
        self.packs = packs
        self.firstPage = firstPage
        self.firstPageDeferred = firstPageDeferred
    }
}
