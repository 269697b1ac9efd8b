import Foundation
import ShopAPI

/// `/text`: what is searched for, the matches found, and the scan while it runs. The scan reads the
/// whole history once, from the cursor's page on and round, in the contract's largest pages; the
/// cursor goes to the first match after it as soon as one is seen, and the scan goes on counting.
public struct FindState: Equatable, Sendable {
    /// Match positions kept for `n`/`N` (the count goes on beyond).
    public static let maxKept = 10_000
    /// Full pages past the server's last page a scan goes on to (a bound on a server that never ends).
    public static let extraPages = 4

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
        /// The cursor when the find began: the first match after it is gone to.
        var origin: Int
        /// The scan page (of `perPage` entries) asked for.
        public var page: Int
        /// Entries a scan page: the contract's largest, or the size the server really serves once a page
        /// came back shorter than asked while not the last (the scan goes on from the entry it reached).
        public var perPage = HistoryState.scanPerPage
        public var pagesScanned = 0
        public var totalPages: Int
        /// The cursor has gone to a match.
        var arrived = false
    }

    /// The key of each kept match's entry: the list goes to the entry, not only to its place (a server
    /// whose pages overlap puts it one row off in the list's own pages).
    public var keys: [Int: EntryKey] = [:]

    mutating func add(_ index: Int, key: EntryKey) {
        matchCount += 1
        guard matches.count < Self.maxKept else { return }
        keys[index] = key
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

extension ShopUpdate {
    // MARK: find

    /// `/text`: starts a scan of the whole history for `query` from the cursor's page on.
    static func startFind(_ query: String, _ state: inout AppState) -> [Effect] {
        var effects = stopFindScan(&state)
        state.history.find = FindState(query: query)
        guard let count = state.history.count, count > 0 else { return effects }
        let scanPages = count.dividedRoundingUp(by: HistoryState.scanPerPage)
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
        return goToMatch(target, &state)
    }

    /// Goes to the match at `index`, and to its entry when the list holds it elsewhere nearby; when its
    /// page is still loading, the entry is found there once it comes (`reanchor`).
    static func goToMatch(_ index: Int, _ state: inout AppState) -> [Effect] {
        let effects = moveCursor(to: index, &state)
        guard let key = state.history.find?.keys[index] else { return effects }
        state.history.anchor = key
        if let item = state.history.selectedItem, HistoryState.key(of: item) != key { reanchor(&state.history) }
        return effects
    }

    static func askScanPage(_ state: inout AppState) -> [Effect] {
        guard let scan = state.history.find?.scan else { return [] }
        let token = state.ask(.findScan(page: scan.page))
        return [.request(token, .history(user: state.context.user, page: scan.page, perPage: scan.perPage))]
    }

    /// A scan page came: its matches are kept, the cursor goes to the first match after where it
    /// was, and the scan moves on (round the end) until every page has been read.
    static func scanLoaded(_ page: Int, _ result: Result<CheerHistoryPage, ShopAPIError>, _ state: inout AppState) -> [Effect] {
        guard var find = state.history.find, var scan = find.scan else { return [] }
        switch result {
        case let .failure(error):
            // A page size the contract allows, refused: the scan reads on from the same entry in a smaller
            // size (each divides the one before, so it lands on the page edge), and says so.
            if CheerHistory.refusesPageSize(error), let smaller = CheerHistory.fallbackSizes(below: scan.perPage).first {
                let start = (page - 1) * scan.perPage
                scan.page = start / smaller + 1
                scan.totalPages = scan.totalPages * (scan.perPage / smaller)
                scan.pagesScanned *= scan.perPage / smaller
                state.notice = Notice(.error, ErrorText.pageSizeRefused(error, asked: scan.perPage, readOn: smaller))
                scan.perPage = smaller
                find.scan = scan
                state.history.find = find
                return askScanPage(&state)
            }
            find.scan = nil
            state.history.find = find
            state.notice = Notice(.error, "Find stopped: ", failure: ErrorText.words(error))
            return []
        case let .success(answer):
            // What the scan received counts in the list too: a match is never past the list's end.
            let per = scan.perPage
            noteReceived(answer, page: page, perPage: per, &state.history)
            // The pages to scan: the server's, or more when the list holds more than its totals count.
            let listed = (state.history.count ?? 0).dividedRoundingUp(by: per)
            // The server's total_pages only as far as its pages hold entries: an empty page ends the scan
            // (a total_pages of 10¹² over 230 entries is not 10¹² requests).
            scan.totalPages = answer.items.isEmpty ? max(1, min(listed, page)) : max(1, answer.totalPages, listed)
            scan.pagesScanned += 1
            let start = (page - 1) * per
            var names: [String: String] = [:]
            for pack in state.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
            var jumpTo: Int?
            for (offset, item) in answer.items.enumerated() where FindState.matches(item, find.query, names: names) {
                let index = start + offset
                find.add(index, key: HistoryState.key(of: item))
                // The first match after the origin (before it only once the scan has come round).
                if !scan.arrived, jumpTo == nil, index > scan.origin || page < scan.origin / per + 1 { jumpTo = index }
            }
            var next = page + 1
            // Served short while not the last page (a server capping its pages below `per_page` while its paging
            // follows the `per_page` asked): the scan goes on from the entry it reached, in pages of the largest
            // size that lands on it and that the server serves, so that no entry is skipped.
            if answer.items.count < per, !answer.items.isEmpty, page < answer.totalPages {
                let reached = start + answer.items.count
                let size = CheerHistory.pageSize(landingOn: reached, served: answer.items.count)
                scan.perPage = size
                scan.pagesScanned = ((scan.pagesScanned - 1) * per + answer.items.count) / size
                scan.totalPages = max(1, (state.history.count ?? answer.totalCount).dividedRoundingUp(by: size), answer.totalCount.dividedRoundingUp(by: size))
                next = reached / size + 1
            }
            // A full page at the server's last (or past it): the next may still hold entries the totals
            // do not count. It is asked, up to `extraPages` past the server's last page.
            if next > scan.totalPages, answer.items.count >= scan.perPage, answer.page == page,
               next <= max(1, answer.totalPages).plusSaturating(FindState.extraPages) {
                scan.totalPages = next
            }
            if next > scan.totalPages { next = 1 }
            let done = scan.pagesScanned >= scan.totalPages || next == scan.origin / scan.perPage + 1
            var effects: [Effect] = []
            if let jumpTo {
                scan.arrived = true
                state.history.find = find
                effects += goToMatch(jumpTo, &state)
                find = state.history.find ?? find
            }
            if done {
                find.complete = true
                find.scan = nil
                if !scan.arrived, let first = find.matches.first(where: { $0 > scan.origin }) ?? find.matches.first {
                    state.history.find = find
                    effects += goToMatch(first, &state)
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
        state.history.find?.scan = nil
        return cancelRequests(&state) { if case .findScan = $0 { return true } else { return false } }
    }

    static func stopSearches(_ state: inout AppState) -> [Effect]? {
        guard state.history.find?.scan != nil || state.history.dateSearch != nil else { return nil }
        state.history.dateSearch = nil
        state.notice = Notice(.info, "Stopped")
        return stopFindScan(&state)
    }
}
