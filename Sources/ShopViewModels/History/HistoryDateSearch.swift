import Foundation
import ShopAPI

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

extension ShopUpdate {
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
        if let probe = search.probe, case let .loaded(known)? = h.pages[probe] {
            let page = known.value
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
        guard case let .loaded(known)? = h.pages[landing] else {
            search.probe = landing
            state.history.dateSearch = search
            return askProbe(landing, &state)
        }
        state.history.dateSearch = nil
        let offset = known.value.items.firstIndex { if case let .entry(e) = $0 { return e.date < search.before } else { return false } }
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
}
