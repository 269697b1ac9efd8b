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
    /// Entries whose comments are shown.
    public var expanded: Set<EntryKey> = []
    /// Entries that came in above since the list was last at its top (`1 new entry · g to see it`).
    public var newEntries = 0
    /// A go-to date being searched for.
    public var dateSearch: DateSearch?
    /// The text found with `/`, and the scan for it while one runs.
    public var find: FindState?
    /// The request whose answer set the totals; answers to older requests do not change them.
    var totalsToken: Token?
    /// The key of the entry under the cursor when last seen: found again when entries shift.
    var anchor: EntryKey?
    /// The way the cursor last moved (+1 down, -1 up): the neighbouring page that way is fetched ahead.
    var travel = 1
    /// This reading of the pages: what they said, whether they disagreed, how far the entries received reach.
    public var reading = PageReading()

    public init(perPage: Int = HistoryState.defaultPerPage, capacity: Int = 8) {
        self.perPage = perPage
        pages = PageCache(capacity: capacity)
    }

    /// Everything on one page: the server answered without paging (or has at most one page).
    var isSinglePage: Bool { (totalPages ?? 2) <= 1 && !reading.beyondLastPage }

    /// The page an entry is on, and its place there.
    public func locate(_ index: Int) -> (page: Int, offset: Int) {
        isSinglePage ? (1, index) : (index / perPage + 1, index % perPage)
    }

    /// The index of the first entry of `page`.
    func firstIndex(ofPage page: Int) -> Int { isSinglePage ? 0 : (page - 1).timesSaturating(perPage) }

    /// How many entries there are, once a page has said: the server's total, or more when its pages sent
    /// more (every entry received is in the list, whatever the totals say).
    public var count: Int? {
        if isSinglePage, let slot = pages[1], !slot.isLoading, let p = slot.value { return p.items.count }
        return totalCount.map { max($0, reading.received) }
    }

    /// The server's total when it differs from the entries counted (a page sent more, or pages disagree).
    public var serverTotalNote: Int? {
        guard let count, let totalCount else { return nil }
        if let other = reading.disagreement?.otherTotal, other != count { return other }
        return totalCount != count ? totalCount : nil
    }

    /// The page the cursor is on.
    public var page: Int { locate(cursor).page }
    public var current: PageSlot? { pages[page] }
    /// The cursor's place on its page.
    public var selectedIndex: Int { locate(cursor).offset }

    /// The rows of the cursor's page: its content, or what it showed before while it reloads.
    public var rows: [HistoryItem] { Self.items(of: current) }

    static func items(of slot: PageSlot?) -> [HistoryItem] { slot?.value?.items ?? [] }

    /// What is at `index`: an entry, or why there is none yet.
    public func item(at index: Int) -> HistoryRow {
        let (page, offset) = locate(index)
        switch pages[page] {
        case nil, .idle?: return .loading(page: page)
        case let .failed(error, nil)?: return .failed(page: page, failure: ErrorText.words(error))
        case let slot?:
            let items = Self.items(of: slot)
            if items.indices.contains(offset) { return .item(items[offset]) }
            if slot.isLoading { return .loading(page: page) }
            return .missing(page: page)
        }
    }

    /// The page did not load (and nothing of it is held): it is one row of the list.
    public func didNotLoad(page: Int) -> Bool {
        if case .failed(_, nil)? = pages[page] { return true }
        return false
    }

    /// The entries of `page`, counted from 1 (`51...100`).
    public func entries(ofPage page: Int) -> ClosedRange<Int> {
        let first = firstIndex(ofPage: page).plusSaturating(1)
        let last = isSinglePage ? (count ?? 0) : min(count ?? .max, page.timesSaturating(perPage))
        return first...max(first, last)
    }

    /// Where `step` rows from the cursor lead: a page that did not load is one row, so a step from it
    /// leaves the page (and a step onto it comes to its near end, as onto any page).
    func index(movingRows step: Int) -> Int {
        guard !isSinglePage else { return cursor.plusSaturating(step) }
        var index = cursor
        for _ in 0..<min(abs(step), count ?? 0) {
            let page = locate(index).page
            if !didNotLoad(page: page) {
                index += step > 0 ? 1 : -1
            } else {
                index = step > 0 ? firstIndex(ofPage: page.plusSaturating(1)) : firstIndex(ofPage: page) - 1
            }
        }
        return index
    }

    public var selectedItem: HistoryItem? {
        if case let .item(item) = item(at: cursor) { return item }
        return nil
    }

    /// A stable key for an entry: its id, or its date, product, amount and creator (`EntryKey`, the key
    /// `compare` diffs the history list by).
    public static func key(of item: HistoryItem) -> EntryKey { EntryKey(item) }

    public func isExpanded(_ item: HistoryItem) -> Bool { expanded.contains(Self.key(of: item)) }

    /// `entry 4,512 of 100,000 · page 91 of 2,000`, and what else is going on.
    public var positionText: String { position(withNews: true) }

    /// Where the cursor is, for the bug report's steps: the position line's words but its news of
    /// entries come in (a hint to press `g`, not a place).
    var stepText: String { position(withNews: false) }

    func position(withNews: Bool) -> String {
        var parts: [String] = []
        if let count, count > 0 {
            parts.append("entry \(Wording.grouped(min(cursor, count - 1) + 1)) of \(Wording.grouped(count))")
        } else if count == 0 {
            parts.append("no entries")
        }
        // An empty history has no pages to count ("page 1 of 0" said nothing).
        if count != 0 {
            var pageText = "page \(Wording.grouped(page))"
            if let lastPage { pageText += " of \(Wording.grouped(lastPage))" }
            parts.append(pageText)
        }
        if let other = serverTotalNote { parts.append("the server's total says \(Wording.grouped(other))") }
        if withNews, newEntries > 0 {
            parts.append("\(Wording.grouped(newEntries)) new entr\(newEntries == 1 ? "y" : "ies") · g to see \(newEntries == 1 ? "it" : "them")")
        }
        return parts.joined(separator: " · ")
    }

    /// The last page there is (1 when the history is empty): the server's, or further when entries
    /// were received past it.
    var lastPage: Int? {
        guard let totalPages else { return nil }
        guard let count, count > 0, !isSinglePage else { return max(1, totalPages) }
        return max(1, totalPages, locate(count - 1).page)
    }
}

/// One row of the list: an entry, or a place whose page is not here (yet).
public enum HistoryRow: Equatable, Sendable {
    case item(HistoryItem)
    case loading(page: Int)
    /// Every entry of a page that did not load: the list shows the page as one row.
    case failed(page: Int, failure: FailureWords)
    /// The page came, but shorter than its place in the list says (the server's counts disagree).
    case missing(page: Int)
}

extension ShopUpdate {
    // MARK: moving

    static func historyAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        let h = state.history
        let rows = state.screen.pageSize
        switch action {
        case .back:
            state.notice = nil
            return []
        case .down, .up, .pageDown, .pageUp:
            guard let count = h.count, count > 0 else { return [] }
            let step = action == .down ? 1 : action == .up ? -1 : action == .pageDown ? rows : -rows
            return moveCursor(to: h.index(movingRows: step), &state)
        case .first:
            state.history.newEntries = 0
            return moveCursor(to: 0, &state)
        case .last:
            // Straight to the last page: one request, never a walk. If that page turns out not to be
            // the end (entries past the server's last page), the cursor follows once.
            guard let count = h.count else { return [] }
            state.history.reading.followEnd = true
            return moveCursor(to: count - 1, &state)
        case .nextPage:
            guard let last = h.lastPage, h.page < last else { return [] }
            return moveCursor(to: h.firstIndex(ofPage: h.page + 1), &state)
        case .previousPage:
            let target = h.selectedIndex > 0 ? h.page : max(1, h.page - 1)
            return moveCursor(to: h.firstIndex(ofPage: target), &state)
        case .toggle:
            switch h.current {
            case .failed(_, nil)?: return loadHistoryPage(h.page, &state, force: true)
            default:
                guard let item = h.selectedItem else { return [] }
                let key = HistoryState.key(of: item)
                let entry = "entry \(Wording.grouped(h.cursor + 1))"
                if state.history.expanded.contains(key) {
                    state.history.expanded.remove(key)
                    state.steps.add("closed the comments of \(entry)")
                } else {
                    state.history.expanded.insert(key)
                    state.steps.add("opened the comments of \(entry) (Enter)")
                }
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
        let moves = target != state.history.cursor
        if moves { state.history.travel = target > state.history.cursor ? 1 : -1 }
        state.history.cursor = target
        // Moving makes one step that follows the cursor, not one per key.
        if moves { state.steps.add("went to \(state.history.stepText)", replacing: .historyMove) }
        if target == 0 { state.history.newEntries = 0 }
        state.history.anchor = state.history.selectedItem.map(HistoryState.key(of:))
        // A page that failed is asked again when the cursor comes onto it (not at every step on it).
        var retry: [Effect] = []
        if entering, case .failed(_, nil)? = state.history.current { retry = loadHistoryPage(state.history.page, &state, force: true) }
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
        // A row an entry: with comments open the screen (the same rule over lines) shows fewer
        // entries than this, so the pages asked for always cover those on screen.
        let shown = Viewport.centred(selected: h.cursor, count: count, rows: state.screen.pageSize).range(count: count)
        let low = shown.lowerBound, high = max(low, shown.upperBound - 1)
        var wanted: [Int] = []
        for page in [h.locate(low).page, h.locate(high).page] where !wanted.contains(page) && page != h.page { wanted.append(page) }
        let edge = h.travel > 0 ? min(count - 1, high.plusSaturating(HistoryState.prefetchDistance)) : max(0, low - HistoryState.prefetchDistance)
        let ahead = h.locate(edge).page
        if ahead != h.page, !wanted.contains(ahead) { wanted.append(ahead) }
        var effects: [Effect] = []
        for page in wanted { effects += loadHistoryPage(page, &state) }
        effects += loadHistoryPage(h.page, &state)
        return effects + probePastLastPage(&state)
    }
}
