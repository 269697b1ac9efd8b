import Foundation
import ShopAPI
import ShopCache

/// The cheer history, a page at a time: the pages held (LRU), the page on screen, the selection.
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
    /// The request whose answer set the totals; answers to older requests do not change them.
    var totalsToken: Token?

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

extension ShopUpdate {
    static func historyAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        if let index = moved(state.history.selectedIndex, by: action, count: state.history.rows.count, page: state.screen.pageSize) {
            state.history.selectedIndex = index
            return prefetchIfNearEnd(&state)
        }
        switch action {
        case .nextPage: return goTo(page: min(state.history.page + 1, state.history.lastPage), &state)
        case .previousPage: return goTo(page: max(1, state.history.page - 1), &state)
        case .toggle:
            switch state.history.current {
            case .failed: return loadHistoryPage(state.history.page, &state, force: true)
            default:
                guard let item = state.history.selectedItem else { return [] }
                let key = state.history.key(of: item, at: state.history.selectedIndex)
                if state.history.expanded.contains(key) { state.history.expanded.remove(key) } else { state.history.expanded.insert(key) }
                return []
            }
        default:
            return []
        }
    }

    /// The cached first page: shown at once, replaced by the live answer.
    static func cachedFirstPage(_ firstPage: CacheEntry<CheerHistoryPage>, _ state: inout AppState) {
        let stale = StalePage(page: firstPage.value, fetchedAt: firstPage.fetchedAt, source: .cached(reason: nil))
        switch state.history.pages[1] {
        case let .loading(token, nil):
            state.history.pages.set(1, .loading(token: token, stale: stale), current: state.history.page)
        case nil:
            state.history.pages.set(1, .loaded(firstPage.value, fetchedAt: firstPage.fetchedAt, source: .cached(reason: nil)), current: state.history.page)
        default:
            return
        }
        if state.history.page == 1, state.history.totalPages == nil { adoptTotals(firstPage.value, &state.history) }
    }

    static func historyLoaded(_ message: Message, _ state: inout AppState) -> [Effect] {
        // Only the request the page waits for counts; an evicted or superseded one is dropped.
        guard case let .historyLoaded(token, page, result, at) = message,
              case let .loading(pending, stale) = state.history.pages[page], pending == token
        else { return [] }
        switch result {
        case let .success(historyPage):
            state.history.pages.set(page, .loaded(historyPage, fetchedAt: at, source: .live), current: state.history.page)
            var effects: [Effect] = page == 1 ? [.writeFirstPage(key: state.context.userKey, historyPage, fetchedAt: at)] : []
            if state.history.totalsToken.map({ token >= $0 }) ?? true {
                state.history.totalsToken = token
                adoptTotals(historyPage, &state.history)
                // The history shrank below the page on screen: go to its new last page.
                if let total = state.history.totalPages, state.history.page > max(1, total) {
                    effects += goTo(page: max(1, total), &state)
                }
            }
            clampHistorySelection(&state.history)
            return effects
        case let .failure(error):
            if let stale {
                // Keep showing what we had, marked with why it is not fresh.
                let reason = ErrorText.staleReason(error)
                state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt,
                                                      source: .cached(reason: stale.source == .live ? reason.afterRefresh : reason)), current: state.history.page)
            } else {
                state.history.pages.set(page, .failed(message: ErrorText.line(error), requestID: error.requestID), current: state.history.page)
            }
            if page == state.history.page { state.notice = .error(error) }
            return []
        }
    }

    static func historyCancelled(_ token: Token, _ state: inout AppState) {
        for page in state.history.pages.residentPages {
            guard case let .loading(pending, stale) = state.history.pages[page], pending == token else { continue }
            if let stale {
                state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt, source: stale.source), current: state.history.page)
            } else {
                state.history.pages.remove(page)
            }
        }
    }

    /// Fetches `page` unless it is resident (or in flight: coalesced). `force` refetches a loaded or
    /// failed page; `stale` is shown meanwhile.
    static func loadHistoryPage(_ page: Int, _ state: inout AppState, force: Bool = false, stale: StalePage? = nil) -> [Effect] {
        var stale = stale
        switch state.history.pages[page] {
        case .loading:
            state.history.pages.touch(page)
            return []
        case let .loaded(content, at, source):
            // A page shown from the cache is fetched live (showing the cached rows meanwhile).
            if !force, source == .live {
                state.history.pages.touch(page)
                return []
            }
            stale = stale ?? StalePage(page: content, fetchedAt: at, source: source)
        case .failed:
            if !force {
                state.history.pages.touch(page)
                return []
            }
        case nil:
            break
        }
        let token = state.newToken()
        let evicted = state.history.pages.set(page, .loading(token: token, stale: stale), current: state.history.page)
        var effects: [Effect] = evicted.compactMap { slot in
            if case let .loading(old, _) = slot { return .cancel(old) }
            return nil
        }
        effects.append(.fetchHistory(token, user: state.context.user, page: page, perPage: state.history.perPage))
        return effects
    }

    static func goTo(page: Int, _ state: inout AppState) -> [Effect] {
        if page != state.history.page {
            state.history.page = page
            state.history.selectedIndex = 0
        }
        var failed = false
        if case .failed = state.history.pages[page] { failed = true }
        let effects = loadHistoryPage(page, &state, force: failed)
        clampHistorySelection(&state.history)
        return effects
    }

    static func prefetchIfNearEnd(_ state: inout AppState) -> [Effect] {
        let rows = state.history.rows.count
        guard rows > 0, state.history.selectedIndex >= rows - HistoryState.prefetchDistance else { return [] }
        let next = state.history.page + 1
        guard let total = state.history.totalPages, next <= total, state.history.pages[next] == nil else { return [] }
        let effects = loadHistoryPage(next, &state)
        state.history.pages.touch(state.history.page)  // the page on screen stays the most recent
        return effects
    }

    /// Drops every resident page (the history changed) and reloads the one on screen, which keeps
    /// showing its old rows until the new ones come. With `merge`, a request already out for the page
    /// on screen is kept (a refresh while it loads sends nothing more); after a write it is replaced,
    /// since it was asked before the write.
    static func invalidateHistory(_ state: inout AppState, merge: Bool) -> [Effect] {
        let page = state.history.page
        let currentSlot = state.history.pages[page]
        if merge, case .loading = currentSlot {
            var cancels: [Effect] = []
            for other in state.history.pages.residentPages where other != page {
                if case let .loading(token, _) = state.history.pages[other] { cancels.append(.cancel(token)) }
                state.history.pages.remove(other)
            }
            return cancels
        }
        var stale: StalePage?
        switch currentSlot {
        case let .loaded(content, fetchedAt, source): stale = StalePage(page: content, fetchedAt: fetchedAt, source: source)
        case let .loading(_, earlier): stale = earlier
        default: stale = nil
        }
        let cancels = state.history.pages.loadingTokens.map { Effect.cancel($0) }
        state.history.pages.removeAll()
        state.history.totalsToken = nil
        return cancels + loadHistoryPage(page, &state, stale: stale)
    }

    static func adoptTotals(_ page: CheerHistoryPage, _ history: inout HistoryState) {
        history.totalPages = page.totalPages
        history.totalCount = page.totalCount
    }

    static func clampHistorySelection(_ history: inout HistoryState) {
        history.selectedIndex = clamp(history.selectedIndex, count: history.rows.count)
    }
}
