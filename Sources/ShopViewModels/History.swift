import Foundation
import ShopAPI
import ShopCache

/// The whole cheer history as one list: a cursor over every entry (0 = the newest), the pages held
/// (LRU, fetched on demand), and the go-to and find searches that run over pages.
public struct HistoryState: Equatable, Sendable {
    public static let defaultPerPage = 50
    /// The largest page the contract allows: a find scans in pages of this size.
    public static let scanPerPage = 200
    /// Entries from a page's edge at which the neighbouring page that way is fetched ahead.
    public static let prefetchDistance = 5

    public var perPage: Int
    public var totalPages: Int?
    public var totalCount: Int?
    public var pages: PageCache
    /// The entry under the cursor, as an index into the whole history (0 = newest).
    public var cursor = 0
    /// Entries whose comments are shown (keyed by `HistoryState.key`).
    public var expanded: Set<String> = []
    /// Entries that came in above since the list was last at its top (`1 new entry · g to see it`).
    public var newEntries = 0
    /// A go-to date being searched for.
    public var dateSearch: DateSearch?
    /// The text found with `/`, and the scan for it while one runs.
    public var find: FindState?
    /// The request whose answer set the totals; answers to older requests do not change them.
    var totalsToken: Token?
    /// The key of the entry under the cursor when last seen: found again when entries shift.
    var anchor: String?
    /// The way the cursor last moved (+1 down, -1 up): the neighbouring page that way is fetched ahead.
    var travel = 1

    public init(perPage: Int = HistoryState.defaultPerPage, capacity: Int = 8) {
        self.perPage = perPage
        pages = PageCache(capacity: capacity)
    }

    /// Everything on one page: the server answered without paging (or has at most one page).
    var isSinglePage: Bool { (totalPages ?? 2) <= 1 }

    /// The page an entry is on, and its place there.
    public func locate(_ index: Int) -> (page: Int, offset: Int) {
        isSinglePage ? (1, index) : (index / perPage + 1, index % perPage)
    }

    /// The index of the first entry of `page`.
    func firstIndex(ofPage page: Int) -> Int { isSinglePage ? 0 : (page - 1) * perPage }

    /// How many entries there are, once a page has said.
    public var count: Int? {
        if isSinglePage, case let .loaded(p, _, _)? = pages[1] { return p.items.count }
        return totalCount
    }

    /// The page the cursor is on.
    public var page: Int { locate(cursor).page }
    public var current: PageSlot? { pages[page] }
    /// The cursor's place on its page.
    public var selectedIndex: Int { locate(cursor).offset }

    /// The rows of the cursor's page: its content, or what it showed before while it reloads.
    public var rows: [HistoryItem] { Self.items(of: current) }

    static func items(of slot: PageSlot?) -> [HistoryItem] {
        switch slot {
        case let .loaded(p, _, _): return p.items
        case let .loading(_, stale): return stale?.page.items ?? []
        default: return []
        }
    }

    /// What is at `index`: an entry, or why there is none yet.
    public func item(at index: Int) -> HistoryRow {
        let (page, offset) = locate(index)
        switch pages[page] {
        case .failed(let message, _): return .failed(page: page, message: message)
        case nil: return .loading(page: page)
        case let slot:
            let items = Self.items(of: slot)
            if items.indices.contains(offset) { return .item(items[offset]) }
            if case .loading = slot { return .loading(page: page) }
            return .missing(page: page)
        }
    }

    public var selectedItem: HistoryItem? {
        if case let .item(item) = item(at: cursor) { return item }
        return nil
    }

    /// A stable key for an entry: its id, or its date, product, amount and creator.
    public static func key(of item: HistoryItem) -> String {
        switch item {
        case let .entry(e):
            return e.id.map { "id:" + $0 } ?? "e:\(e.date.timeIntervalSince1970)|\(e.product)|\(e.amount)|\(e.creator)"
        case let .unreadable(u):
            return u.id.map { "id:" + $0 } ?? "u:\(u.index)|\(u.reason)"
        }
    }

    public func isExpanded(_ item: HistoryItem) -> Bool { expanded.contains(Self.key(of: item)) }

    /// `entry 4,512 of 100,000 · page 91 of 2,000`, and what else is going on.
    public var positionText: String {
        var parts: [String] = []
        if let count, count > 0 {
            parts.append("entry \(Wording.grouped(min(cursor, count - 1) + 1)) of \(Wording.grouped(count))")
        } else if count == 0 {
            parts.append("no entries")
        }
        var pageText = "page \(Wording.grouped(page))"
        if let totalPages { pageText += " of \(Wording.grouped(max(1, totalPages)))" }
        parts.append(pageText)
        if newEntries > 0 { parts.append("\(Wording.grouped(newEntries)) new entr\(newEntries == 1 ? "y" : "ies") · g to see \(newEntries == 1 ? "it" : "them")") }
        return parts.joined(separator: " · ")
    }

    /// The last page there is (1 when the history is empty).
    var lastPage: Int? { totalPages.map { max(1, $0) } }
}

/// One row of the list: an entry, or a place whose page is not here (yet).
public enum HistoryRow: Equatable, Sendable {
    case item(HistoryItem)
    case loading(page: Int)
    case failed(page: Int, message: String)
    /// The page came, but shorter than its place in the list says (the server's counts disagree).
    case missing(page: Int)
}

/// `:2026-10-01`: the newest entry on or before a day, found by binary search over the pages (the
/// history is newest first), one page asked at a time.
public struct DateSearch: Equatable, Sendable {
    /// The day as typed.
    public var day: String
    /// The start of the next day: an entry before it is on or before the day.
    var before: Date
    /// The pages the entry can still be on.
    var low = 1
    var high = 1
    /// The page asked for, once the totals are known.
    var probe: Int?
    /// Pages asked so far.
    public var steps = 0
}

/// `/text`: what is searched for, the matches found, and the scan while it runs. The scan reads the
/// whole history once, from the cursor's page on and round, in the contract's largest pages; the
/// cursor goes to the first match after it as soon as one is seen, and the scan goes on counting.
public struct FindState: Equatable, Sendable {
    /// Match positions kept for `n`/`N` (the count goes on beyond).
    public static let maxKept = 10_000

    public var query: String
    /// Indices of the matches seen (into the whole history, ascending; at most `maxKept`).
    public var matches: [Int] = []
    /// Matches seen, all of them.
    public var matchCount = 0
    /// The whole history has been read.
    public var complete = false
    public var scan: Scan?

    public init(query: String) { self.query = query }

    public struct Scan: Equatable, Sendable {
        var token: Token?
        /// The cursor when the find began: the first match after it is gone to.
        var origin: Int
        /// The scan page (of `scanPerPage` entries) asked for.
        public var page: Int
        public var pagesScanned = 0
        public var totalPages: Int
        /// The cursor has gone to a match.
        var arrived = false
    }

    mutating func add(_ index: Int) {
        matchCount += 1
        guard matches.count < Self.maxKept else { return }
        var low = 0, high = matches.count
        while low < high {
            let mid = (low + high) / 2
            if matches[mid] < index { low = mid + 1 } else { high = mid }
        }
        if low == matches.count || matches[low] != index { matches.insert(index, at: low) }
    }

    /// Whether `item` holds the text, ignoring case and accents: in its product (identifier or the
    /// pack's name), creator, or a comment's signature or body.
    public static func matches(_ item: HistoryItem, _ query: String, names: [String: String] = [:]) -> Bool {
        guard case let .entry(e) = item, !query.isEmpty else { return false }
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive]
        func has(_ s: String?) -> Bool { s?.range(of: query, options: options) != nil }
        if has(e.product) || has(names[e.product]) || has(e.creator) { return true }
        return (e.comments ?? []).contains { has($0.signature) || has($0.body) }
    }
}

/// What `:` takes: `4512` (an entry), `p91` (a page) or `2026-10-01` (a date).
public enum GoToTarget: Equatable, Sendable {
    case entry(Int)
    case page(Int)
    case day(year: Int, month: Int, day: Int)

    public init?(_ text: String) {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = t.replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "_", with: "")
        if let n = Int(digits), n >= 1 {
            self = .entry(n)
        } else if digits.hasPrefix("p"), let n = Int(digits.dropFirst()), n >= 1 {
            self = .page(n)
        } else {
            let parts = t.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 4, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
                  (1...12).contains(m), (1...31).contains(d) else { return nil }
            self = .day(year: y, month: m, day: d)
        }
    }
}

extension ShopUpdate {
    // MARK: moving

    static func historyAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        let h = state.history
        let rows = state.screen.pageSize
        switch action {
        case .down, .up, .pageDown, .pageUp:
            guard let count = h.count, count > 0 else { return [] }
            let step = action == .down ? 1 : action == .up ? -1 : action == .pageDown ? rows : -rows
            return moveCursor(to: h.cursor + step, &state)
        case .first:
            state.history.newEntries = 0
            return moveCursor(to: 0, &state)
        case .last:
            // Straight to the last page: one request, never a walk.
            guard let count = h.count else { return [] }
            return moveCursor(to: count - 1, &state)
        case .nextPage:
            guard let last = h.lastPage, h.page < last else { return [] }
            return moveCursor(to: h.firstIndex(ofPage: h.page + 1), &state)
        case .previousPage:
            let target = h.selectedIndex > 0 ? h.page : max(1, h.page - 1)
            return moveCursor(to: h.firstIndex(ofPage: target), &state)
        case .toggle:
            switch h.current {
            case .failed: return loadHistoryPage(h.page, &state, force: true)
            default:
                guard let item = h.selectedItem else { return [] }
                let key = HistoryState.key(of: item)
                if state.history.expanded.contains(key) { state.history.expanded.remove(key) } else { state.history.expanded.insert(key) }
                return []
            }
        case .goTo:
            state.screen.prompt = PromptState(kind: .goTo)
            return []
        case .find:
            state.screen.prompt = PromptState(kind: .find)
            return []
        case .nextMatch, .previousMatch:
            return jumpToMatch(action == .nextMatch ? 1 : -1, &state)
        default:
            return []
        }
    }

    /// Moves the cursor (clamped to the list) and asks for the pages that come on screen.
    static func moveCursor(to index: Int, _ state: inout AppState) -> [Effect] {
        let count = state.history.count ?? 0
        let target = clamp(index, count: count)
        let entering = state.history.locate(target).page != state.history.page
        if target != state.history.cursor { state.history.travel = target > state.history.cursor ? 1 : -1 }
        state.history.cursor = target
        if target == 0 { state.history.newEntries = 0 }
        state.history.anchor = state.history.selectedItem.map(HistoryState.key(of:))
        // A page that failed is asked again when the cursor comes onto it (not at every step on it).
        var retry: [Effect] = []
        if entering, case .failed? = state.history.current { retry = loadHistoryPage(state.history.page, &state, force: true) }
        return retry + loadVisiblePages(&state)
    }

    static func rememberAnchor(_ history: inout HistoryState) {
        if let item = history.selectedItem { history.anchor = HistoryState.key(of: item) }
    }

    /// The pages of the entries on screen around the cursor, and the next page in the direction of
    /// travel once the screen comes within `prefetchDistance` of it. The cursor's page goes last, so
    /// it is the most recently used.
    static func loadVisiblePages(_ state: inout AppState) -> [Effect] {
        let h = state.history
        guard let count = h.count, count > 0 else { return loadHistoryPage(h.page, &state) }
        let shown = Viewport.centred(selected: h.cursor, count: count, rows: state.screen.pageSize).range(count: count)
        let low = shown.lowerBound, high = max(low, shown.upperBound - 1)
        var wanted: [Int] = []
        for page in [h.locate(low).page, h.locate(high).page] where !wanted.contains(page) && page != h.page { wanted.append(page) }
        let edge = h.travel > 0 ? min(count - 1, high + HistoryState.prefetchDistance) : max(0, low - HistoryState.prefetchDistance)
        let ahead = h.locate(edge).page
        if ahead != h.page, !wanted.contains(ahead) { wanted.append(ahead) }
        var effects: [Effect] = []
        for page in wanted { effects += loadHistoryPage(page, &state) }
        effects += loadHistoryPage(h.page, &state)
        return effects
    }

    // MARK: pages

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
        if state.history.totalPages == nil { adoptTotals(firstPage.value, &state.history) }
    }

    static func historyLoaded(_ message: Message, _ state: inout AppState) -> [Effect] {
        guard case let .historyLoaded(token, page, result, at) = message else { return [] }
        if let scan = state.history.find?.scan, scan.token == token { return scanLoaded(page, result, &state) }
        if let verifying = state.verification?.historyToken, verifying == token {
            verificationHistory(result, &state)
            return []
        }
        // Only the request the page waits for counts; an evicted or superseded one is dropped.
        guard case let .loading(pending, stale) = state.history.pages[page], pending == token else { return [] }
        switch result {
        case let .success(historyPage):
            // Only the page under the cursor clears its error line (a read-ahead page is another matter).
            if page == state.history.page { recovered(CheerHistory.endpoint, &state) }
            var effects: [Effect] = []
            if state.history.totalsToken.map({ token >= $0 }) ?? true {
                state.history.totalsToken = token
                effects += totalsChanged(by: historyPage, page: page, &state)
            }
            state.history.pages.set(page, .loaded(historyPage, fetchedAt: at, source: .live), current: state.history.page)
            if page == 1 { effects.append(.writeFirstPage(key: state.context.userKey, historyPage, fetchedAt: at)) }
            if page == state.history.page { reanchor(&state.history) }
            // The history shrank below the cursor: it goes to the new last entry.
            if let count = state.history.count, state.history.cursor >= count {
                state.history.cursor = max(0, count - 1)
            }
            if state.history.dateSearch?.probe == page { effects += dateSearchStep(&state) }
            // The pages now on screen (the cursor may have moved with its entry).
            return effects + loadVisiblePages(&state)
        case let .failure(error):
            if let stale {
                // Keep showing what we had, marked with why it is not fresh.
                let reason = ErrorText.staleReason(error)
                state.history.pages.set(page, .loaded(stale.page, fetchedAt: stale.fetchedAt,
                                                      source: .cached(reason: stale.source == .live ? reason.afterRefresh : reason)), current: state.history.page)
            } else {
                state.history.pages.set(page, .failed(message: ErrorText.line(error), requestID: error.requestID), current: state.history.page)
            }
            if state.history.dateSearch?.probe == page {
                state.history.dateSearch = nil
                state.notice = Notice(.error, "Go to stopped: " + ErrorText.line(error), requestID: error.requestID)
            } else if page == state.history.page {
                state.notice = .error(error, state.context)
            }
            return []
        }
    }

    /// Takes the totals of the newest answer. When entries came in above (or went), every other page
    /// held is cut at the wrong places: they are dropped, and the cursor moves with its entry, so the
    /// list never shows an entry twice or skips one.
    static func totalsChanged(by answer: CheerHistoryPage, page: Int, _ state: inout AppState) -> [Effect] {
        let before = state.history.totalCount
        adoptTotals(answer, &state.history)
        guard let before, let after = state.history.totalCount, after != before else { return [] }
        let delta = after - before
        var effects: [Effect] = []
        for other in state.history.pages.residentPages where other != page {
            if case let .loading(token, _) = state.history.pages[other] { effects.append(.cancel(token)) }
            state.history.pages.remove(other)
        }
        // At the top the newest entries simply show; further down the cursor keeps its entry (entries
        // come in at the top: a spend). Fewer entries: the cursor's page, reloaded, finds its entry.
        if delta > 0, state.history.cursor > 0 {
            state.history.cursor += delta
            state.history.newEntries += delta
            if var find = state.history.find {
                find.matches = find.matches.map { $0 + delta }
                state.history.find = find
            }
        }
        return effects
    }

    /// After the cursor's page loads: if the entry the cursor was on is near but not under it (the
    /// counts moved it), the cursor follows it.
    static func reanchor(_ history: inout HistoryState) {
        guard let anchor = history.anchor else { return rememberAnchor(&history) }
        if let item = history.selectedItem, HistoryState.key(of: item) == anchor { return }
        let start = history.firstIndex(ofPage: history.page)
        for (offset, item) in history.rows.enumerated() where HistoryState.key(of: item) == anchor {
            history.cursor = start + offset
            return
        }
        rememberAnchor(&history)
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

    /// Drops every resident page (the history changed) and reloads the cursor's page, which keeps
    /// showing its old rows until the new ones come. With `merge`, a request already out for that
    /// page is kept (a refresh while it loads sends nothing more); after a write it is replaced,
    /// since it was asked before the write.
    static func invalidateHistory(_ state: inout AppState, merge: Bool) -> [Effect] {
        let page = state.history.page
        let currentSlot = state.history.pages[page]
        rememberAnchor(&state.history)
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

    // MARK: the prompt (`:` and `/`)

    /// Enter in the prompt: go to an entry, a page or a date; or find the text.
    static func runPrompt(_ state: inout AppState) -> [Effect] {
        guard let prompt = state.screen.prompt else { return [] }
        state.screen.prompt = nil
        let text = prompt.text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return [] }
        switch prompt.kind {
        case .user:
            return switchUser(to: text, &state)
        case .find:
            return startFind(text, &state)
        case .goTo:
            guard let target = GoToTarget(text) else {
                state.notice = Notice(.error, "Go to takes an entry number (4512), a page (p91) or a date (2026-10-01), not “\(text)”")
                return []
            }
            return goTo(target, typed: text, &state)
        }
    }

    static func goTo(_ target: GoToTarget, typed: String, _ state: inout AppState) -> [Effect] {
        let h = state.history
        state.history.dateSearch = nil
        switch target {
        case let .entry(n):
            guard let count = h.count else { return [] }
            if n > count { state.notice = Notice(.info, "There \(count == 1 ? "is" : "are") \(Wording.grouped(count)) entr\(count == 1 ? "y" : "ies"); went to the last") }
            return moveCursor(to: n - 1, &state)
        case let .page(p):
            guard let last = h.lastPage else { return [] }
            if p > last { state.notice = Notice(.info, "There \(last == 1 ? "is" : "are") \(Wording.grouped(last)) page\(last == 1 ? "" : "s"); went to the last") }
            return moveCursor(to: h.firstIndex(ofPage: min(p, last)), &state)
        case let .day(y, m, d):
            guard let next = DateText.dayBounds(year: y, month: m, day: d, zone: state.screen.timeZone)?.next else {
                state.notice = Notice(.error, "“\(typed)” is not a date")
                return []
            }
            state.history.dateSearch = DateSearch(day: typed, before: next, low: 1, high: .max)
            return dateSearchStep(&state)
        }
    }

    /// One step of the date search: narrows the pages by the one just loaded, then asks for the
    /// middle of what is left, or lands on the newest entry before `before`.
    static func dateSearchStep(_ state: inout AppState) -> [Effect] {
        guard var search = state.history.dateSearch else { return [] }
        let h = state.history
        guard let last = h.lastPage else {
            // No totals yet: the first page tells them.
            search.probe = 1
            state.history.dateSearch = search
            return askProbe(1, &state)
        }
        search.high = min(search.high, last)
        if let probe = search.probe, case let .loaded(page, _, _)? = h.pages[probe] {
            // Newest first: the page's oldest dated entry says which side of the page the day is on.
            let dates = page.items.compactMap { if case let .entry(e) = $0 { return e.date } else { return nil } }
            if let oldest = dates.last, oldest < search.before {
                search.high = probe
            } else {
                search.low = probe + 1
            }
            if search.low > last {
                state.history.dateSearch = nil
                state.notice = Notice(.info, "No cheer on or before \(search.day): the oldest is after it")
                return []
            }
        }
        guard search.low >= search.high else {
            let middle = (search.low + search.high) / 2
            search.probe = middle
            state.history.dateSearch = search
            return askProbe(middle, &state)
        }
        // One page left: the entry is on it.
        let landing = search.low
        guard case let .loaded(page, _, _)? = h.pages[landing] else {
            search.probe = landing
            state.history.dateSearch = search
            return askProbe(landing, &state)
        }
        state.history.dateSearch = nil
        let offset = page.items.firstIndex { if case let .entry(e) = $0 { return e.date < search.before } else { return false } }
        guard let offset else {
            state.notice = Notice(.info, "No cheer on or before \(search.day)")
            return []
        }
        state.notice = Notice(.info, "Went to \(search.day): the newest cheer on or before it (\(search.steps) request\(search.steps == 1 ? "" : "s"))")
        return moveCursor(to: h.firstIndex(ofPage: landing) + offset, &state)
    }

    static func askProbe(_ page: Int, _ state: inout AppState) -> [Effect] {
        if case .loaded? = state.history.pages[page] { return dateSearchStep(&state) }
        state.history.dateSearch?.steps += 1
        return loadHistoryPage(page, &state, force: state.history.pages[page] != nil)
    }

    // MARK: find

    /// `/text`: starts a scan of the whole history for `query` from the cursor's page on.
    static func startFind(_ query: String, _ state: inout AppState) -> [Effect] {
        var effects = stopFindScan(&state)
        state.history.find = FindState(query: query)
        guard let count = state.history.count, count > 0 else { return effects }
        let scanPages = (count + HistoryState.scanPerPage - 1) / HistoryState.scanPerPage
        let origin = state.history.cursor
        state.history.find?.scan = FindState.Scan(origin: origin, page: origin / HistoryState.scanPerPage + 1, totalPages: scanPages)
        effects += askScanPage(&state)
        return effects
    }

    /// `n` / `N`: the next or previous match found, round the ends.
    static func jumpToMatch(_ direction: Int, _ state: inout AppState) -> [Effect] {
        guard let find = state.history.find else {
            state.notice = Notice(.info, "Nothing to find yet: / and some text first")
            return []
        }
        let cursor = state.history.cursor
        let ahead = direction > 0 ? find.matches.first { $0 > cursor } : find.matches.last { $0 < cursor }
        let round = direction > 0 ? find.matches.first : find.matches.last
        guard let target = ahead ?? (find.complete ? round : nil) else {
            if find.scan != nil {
                state.notice = Notice(.info, "Still searching for “\(find.query)”…")
            } else if direction > 0 {
                return startFind(find.query, &state)  // the search was stopped: on from here
            } else {
                state.notice = Notice(.info, "No match above here in what was searched; / and Enter searches the whole history")
            }
            return []
        }
        return moveCursor(to: target, &state)
    }

    static func askScanPage(_ state: inout AppState) -> [Effect] {
        guard let page = state.history.find?.scan?.page else { return [] }
        let token = state.newToken()
        state.history.find?.scan?.token = token
        return [.fetchHistory(token, user: state.context.user, page: page, perPage: HistoryState.scanPerPage)]
    }

    /// A scan page came: its matches are kept, the cursor goes to the first match after where it
    /// was, and the scan moves on (round the end) until every page has been read.
    static func scanLoaded(_ page: Int, _ result: Result<CheerHistoryPage, ShopAPIError>, _ state: inout AppState) -> [Effect] {
        guard var find = state.history.find, var scan = find.scan else { return [] }
        switch result {
        case let .failure(error):
            find.scan = nil
            state.history.find = find
            state.notice = Notice(.error, "Find stopped: " + ErrorText.line(error), requestID: error.requestID)
            return []
        case let .success(answer):
            scan.totalPages = max(1, answer.totalPages)
            scan.pagesScanned += 1
            let start = (page - 1) * HistoryState.scanPerPage
            var names: [String: String] = [:]
            for pack in state.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
            var jumpTo: Int?
            for (offset, item) in answer.items.enumerated() where FindState.matches(item, find.query, names: names) {
                let index = start + offset
                find.add(index)
                // The first match after the origin (before it only once the scan has come round).
                if !scan.arrived, jumpTo == nil, index > scan.origin || page < scan.origin / HistoryState.scanPerPage + 1 { jumpTo = index }
            }
            var next = page + 1
            if next > scan.totalPages { next = 1 }
            let done = scan.pagesScanned >= scan.totalPages || next == scan.origin / HistoryState.scanPerPage + 1
            var effects: [Effect] = []
            if let jumpTo {
                scan.arrived = true
                state.history.find = find
                effects += moveCursor(to: jumpTo, &state)
                find = state.history.find ?? find
            }
            if done {
                find.complete = true
                find.scan = nil
                if !scan.arrived, let first = find.matches.first(where: { $0 > scan.origin }) ?? find.matches.first {
                    state.history.find = find
                    effects += moveCursor(to: first, &state)
                    find = state.history.find ?? find
                }
                state.history.find = find
                state.notice = Notice(.info, find.matchCount == 0 ? "No entry has “\(find.query)”"
                                      : "“\(find.query)”: \(Wording.grouped(find.matchCount)) match\(find.matchCount == 1 ? "" : "es") · n/N to go through them")
                return effects
            }
            scan.page = next
            find.scan = scan
            state.history.find = find
            return effects + askScanPage(&state)
        }
    }

    /// Stops a find scan or a date search that is running (Esc); answers the cancellations.
    static func stopFindScan(_ state: inout AppState) -> [Effect] {
        guard let token = state.history.find?.scan?.token else {
            state.history.find?.scan = nil
            return []
        }
        state.history.find?.scan = nil
        return [.cancel(token)]
    }

    static func stopSearches(_ state: inout AppState) -> [Effect]? {
        guard state.history.find?.scan != nil || state.history.dateSearch != nil else { return nil }
        state.history.dateSearch = nil
        state.notice = Notice(.info, "Stopped")
        return stopFindScan(&state)
    }
}
