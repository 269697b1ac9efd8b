import Foundation
import ShopAPI
import TerminalText

/// One reading of the history: from a load that starts afresh (the first page, `r`, a write, another
/// user, the watch's news) to the next. A server's pages may disagree with each other — a total that
/// changes from page to page with no write, entries past the page it calls its last, one entry on two
/// pages. The list then reads again at most once; after that it stops, keeps every entry it was sent,
/// and says why in one line with the request ids of both answers (issue 27, item 1).
public struct PageReading: Equatable, Sendable {
    /// The total changed under the list once in this reading, and the list was read again for it.
    var reloaded = false
    /// An entry on two pages was read again once in this reading.
    var rereadOverlap = false
    /// What each page's latest answer said (for the line that names both answers).
    var said: [Int: PageSaid] = [:]
    /// The pages disagreed after the one read again: the list stopped reloading for it.
    public var disagreement: PageDisagreement?
    /// Entries past the server's last page were received (its totals count fewer than it sends).
    public var beyondLastPage = false
    /// Pages past the server's last asked once, to see whether they hold entries.
    var probed: Set<Int> = []
    /// Pages past the server's last whose entries the line has told of.
    var toldPastLast: Set<Int> = []
    /// How far the entries received reach: one past the highest index any answer of this reading held.
    public var received = 0
    /// `G` was pressed: when the list turns out longer (a page past the last held entries), the cursor
    /// goes to the new end once.
    var followEnd = false
    /// Entries the cursor moved by, and counted as new, when the total first changed: undone when the
    /// pages turn out to disagree (they were no new entries).
    var shifted = 0
    /// When the first answer of this reading came. Pages read further apart than `span` tell of different
    /// moments of a history that grows: their totals are not held against each other (issue 35).
    var startedAt: Date?
    static let span: TimeInterval = 10

    public init() {}

    /// Begins a new reading for what the pages say of each other (what was received stays).
    mutating func beginAgain(at: Date) {
        reloaded = false
        rereadOverlap = false
        said = [:]
        disagreement = nil
        shifted = 0
        startedAt = at
    }
}

/// What one page's answer said of the whole history.
public struct PageSaid: Equatable, Sendable {
    public var page: Int
    public var total: Int
    public var requestID: String?

    /// `page 2 says 229 (rq-…)`.
    var words: String { "page \(Wording.grouped(page)) says \(Wording.grouped(total)) (\(Self.id(requestID)))" }

    /// A request id as the line shows it: the server's text, made safe.
    static func id(_ requestID: String?) -> String { requestID.map(Sanitizer.line) ?? "no request id" }
}

/// Why the list stopped reloading, told once a reading.
public enum PageDisagreement: Equatable, Sendable {
    /// Two answers' totals differ, and reading again did not settle it.
    case totals(PageSaid, PageSaid)
    /// An entry on two neighbouring pages, still there when read again.
    case overlap(entry: String, PageSaid, PageSaid)

    /// The one line for the status bar: the pages in order, each with its answer's request id (both
    /// fit from 100 columns with the stand-in's ids; the Checks tab's finding and the report hold them whole).
    public var line: String {
        switch self {
        case let .totals(a, b):
            let (first, second) = a.page <= b.page ? (a, b) : (b, a)
            return "History pages disagree: \(first.words), \(second.words)"
        case let .overlap(entry, a, b):
            return "An entry on pages \(Wording.grouped(a.page)) (\(PageSaid.id(a.requestID))) and \(Wording.grouped(b.page)) "
                + "(\(PageSaid.id(b.requestID))): \(entry), shown twice"
        }
    }

    /// The server's total the position line notes beside the count of what was received.
    var otherTotal: Int? {
        if case let .totals(a, b) = self { return min(a.total, b.total) == max(a.total, b.total) ? nil : min(a.total, b.total) }
        return nil
    }
}

extension ShopUpdate {
    /// Takes note of how far `answer` (page `page` of `perPage` entries) reaches.
    static func noteReceived(_ answer: CheerHistoryPage, page: Int, perPage: Int, _ history: inout HistoryState) {
        // A page past the first counts only when the server says it is that page: a server without paging
        // answers every page with the whole history (its answers read as page 1).
        guard !answer.items.isEmpty, page == 1 || answer.page == page else { return }
        let start = (page - 1).timesSaturating(perPage)
        let end = start.plusSaturating(answer.items.count)
        if end > history.reading.received { history.reading.received = end }
        // One page by the server's totals, yet more entries came (a page past it, or a larger page of the
        // find's): the list is paged after all, so every entry received has its place.
        if history.isSinglePage, let first = history.pages[1]?.value, answer.page == page, answer.perPage == perPage,
           end > first.items.count, first.perPage == history.perPage {
            history.reading.beyondLastPage = true
        }
        // Past the page the server calls its last (its own answer's count, not the list's).
        if page > answer.totalPages, perPage == history.perPage {
            history.reading.beyondLastPage = true
        }
    }

    /// A page's totals differ from the list's. The first time in a reading the list takes them and reads
    /// again what it shows (entries may have come in: a spend on the phone); after that it stops: the
    /// pages stay, the larger total is kept (nothing is hidden), and the line says why once.
    /// Answers whether the list was reset for the new totals.
    static func totalsDisagree(_ answer: CheerHistoryPage, page: Int, before: Int, _ state: inout AppState) -> Bool {
        let now = PageSaid(page: page, total: answer.totalCount, requestID: answer.requestID)
        let earlier = state.history.reading.said.values
            .filter { $0.total == before && $0.page != page }
            .max { $0.page > $1.page } ?? PageSaid(page: state.history.reading.said.keys.min() ?? 1, total: before, requestID: nil)
        state.history.reading.said[page] = now
        if !state.history.reading.reloaded {
            state.history.reading.reloaded = true
            return true
        }
        // Read again once already: keep what is here, and the larger total.
        if answer.totalCount > before {
            state.history.totalCount = answer.totalCount
            state.history.totalPages = max(state.history.totalPages ?? 0, answer.totalPages)
        }
        settle(.totals(earlier, now), &state)
        return false
    }

    /// An entry the page shares with a neighbour (by id), when the totals agree: read again once, then told.
    static func overlapFound(_ answer: CheerHistoryPage, page: Int, _ state: inout AppState) -> [Effect] {
        guard state.history.reading.disagreement == nil else { return [] }
        let keys = answer.items.compactMap { item -> String? in
            if case let .entry(e) = item, let id = e.id { return id } else { return nil }
        }
        guard let first = keys.first, let last = keys.last else { return [] }
        for (neighbour, shared) in [(page - 1, first), (page + 1, last)] {
            guard neighbour >= 1, let other = state.history.pages[neighbour]?.value,
                  other.totalCount == answer.totalCount,
                  other.items.contains(where: { if case let .entry(e) = $0 { return e.id == shared } else { return false } }) else { continue }
            if !state.history.reading.rereadOverlap {
                state.history.reading.rereadOverlap = true
                return loadHistoryPage(page, &state, force: true)
            }
            let a = PageSaid(page: min(page, neighbour), total: answer.totalCount,
                             requestID: neighbour < page ? other.requestID : answer.requestID)
            let b = PageSaid(page: max(page, neighbour), total: answer.totalCount,
                             requestID: neighbour < page ? answer.requestID : other.requestID)
            settle(.overlap(entry: "id “\(Sanitizer.line(String(shared.prefix(24))))”", a, b), &state)
            return []
        }
        return []
    }

    /// A page past the server's last held entries: they join the list, and the line says so once a reading.
    static func pastLastPage(_ answer: CheerHistoryPage, page: Int, lastPage: Int, _ state: inout AppState) {
        guard state.history.reading.toldPastLast.insert(page).inserted else { return }
        let n = answer.items.count
        let line = "Page \(Wording.grouped(page)) holds \(Wording.grouped(n)) entr\(n == 1 ? "y" : "ies") past the server's last page "
            + "(\(Wording.grouped(lastPage)); \(PageSaid.id(answer.requestID)))"
        state.notice = Notice(.error, line, requestID: answer.requestID)
        state.steps.add("saw entries past the server's last page: \(line)")
    }

    /// The list stops reloading for this reading and says why, once.
    static func settle(_ disagreement: PageDisagreement, _ state: inout AppState) {
        guard state.history.reading.disagreement == nil else { return }
        state.history.reading.disagreement = disagreement
        if case .totals = disagreement, state.history.reading.shifted > 0 {
            state.history.newEntries = max(0, state.history.newEntries - state.history.reading.shifted)
            state.history.reading.shifted = 0
        }
        state.notice = Notice(.error, disagreement.line)
        state.steps.add("saw the history's pages disagree: \(disagreement.line)")
    }

    /// The page after the server's last, asked once when the cursor is on the last page and it is full:
    /// a server whose totals count fewer entries than it has still shows them all.
    static func probePastLastPage(_ state: inout AppState) -> [Effect] {
        let h = state.history
        // One page by the totals: only a page 1 that came full at the list's own page size (the server
        // echoing its paging) may have more after it; a server without paging never does.
        let paged = !h.isSinglePage || h.reading.beyondLastPage
            || h.pages[1]?.value.map { $0.page == 1 && $0.perPage == h.perPage && $0.items.count >= h.perPage } == true
        guard paged, let count = h.count, count > 0 else { return [] }
        let last = h.locate(count - 1).page
        guard h.page == last, let slot = h.pages[last], let answer = slot.value, slot.source == .live, !slot.isLoading,
              answer.items.count >= h.perPage, !h.reading.probed.contains(last + 1) else { return [] }
        state.history.reading.probed.insert(last + 1)
        return loadHistoryPage(last + 1, &state)
    }
}
