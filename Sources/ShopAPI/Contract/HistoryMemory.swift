import JSONTokens
import Foundation

/// What the history pages seen lately showed, to compare neighbours: the newest and oldest date and
/// the ids of each page, for one user, page size and total. A page with another total starts afresh
/// (entries came or went: every boundary moved, which is no deviation).
struct HistoryMemory: Sendable {
    struct Seen: Sendable {
        var newest: Date?
        var oldest: Date?
        var ids: [String]
    }

    /// The pages remembered for one user, page size and total, and for each id the page it was last
    /// seen on and on how many remembered pages (one lookup an id, not one a remembered page).
    struct Book: Sendable {
        var pages: [Int: Seen] = [:]
        var seenOn: [String: (page: Int, pages: Int)] = [:]
        var order: [Int] = []

        func page(of id: String) -> Int? { seenOn[id]?.page }

        mutating func forget(_ page: Int) {
            guard let gone = pages.removeValue(forKey: page) else { return }
            order.removeAll { $0 == page }
            for id in gone.ids {  // each once (see `remember`)
                guard let at = seenOn[id] else { continue }
                if at.pages <= 1 {
                    seenOn[id] = nil
                } else {
                    // Still on another remembered page (a duplicate across pages, rare): point at it.
                    let other = at.page == page ? pages.first { $0.value.ids.contains(id) }?.key ?? at.page : at.page
                    seenOn[id] = (other, at.pages - 1)
                }
            }
        }

        /// Keeps `seen` for `page`, its ids each once.
        mutating func remember(_ page: Int, _ seen: Seen) {
            var kept = seen
            kept.ids = []
            kept.ids.reserveCapacity(seen.ids.count)
            for id in seen.ids {
                if let at = seenOn[id] {
                    if at.page == page { continue }  // twice on this page: counted once
                    seenOn[id] = (page, at.pages + 1)
                } else {
                    seenOn[id] = (page, 1)
                }
                kept.ids.append(id)
            }
            pages[page] = kept
            order.append(page)
        }
    }

    static let capacity = 16
    /// Books by user, page size and total (a scan's pages of 200 and the list's of 50 both stay).
    private var books: [String: Book] = [:]
    private var bookOrder: [String] = []

    /// One answer's `total_count`, and when it was asked and answered.
    struct TotalSeen: Sendable {
        var page: Int
        var total: Int
        var requestID: String?
        var sent: ContinuousClock.Instant
        var answered: ContinuousClock.Instant
    }

    /// The totals of each user's history answers, oldest first (the last 16 a user, 4 users), whatever
    /// their page size: every page states the same history's size.
    private var totals: [String: [TotalSeen]] = [:]
    private var totalsOrder: [String] = []
    /// The pairs of totals already told, per user: a disagreement is one finding, however often it recurs.
    private var toldTotals: [String: Set<[Int]>] = [:]

    /// A total that comes back to what it was after an answer that said otherwise, each of the three
    /// asked only once the one before it was answered: the server's state moved forward between them,
    /// and a history that only grows (or only shrinks) cannot say t, then u ≠ t, then t again. Answers
    /// that overlapped prove nothing (the server may have taken them in either order), so they are
    /// never held against each other: no finding from an entry that came in meanwhile.
    mutating func observeTotal(_ summary: HistorySummary, user: String, requestID: String?,
                               sent: ContinuousClock.Instant?, answered: ContinuousClock.Instant?) -> [Finding] {
        guard let page = summary.page, let total = summary.totalCount, let sent, let answered else { return [] }
        if totals[user] == nil {
            totalsOrder.append(user)
            if totalsOrder.count > 4 { totals[totalsOrder.removeFirst()] = nil }
        }
        var seen = totals[user] ?? []
        defer {
            seen.append(TotalSeen(page: page, total: total, requestID: requestID, sent: sent, answered: answered))
            if seen.count > Self.capacity { seen.removeFirst(seen.count - Self.capacity) }
            totals[user] = seen
        }
        // The latest answer before this one that said otherwise, then the latest before that which said this.
        guard let middle = seen.lastIndex(where: { $0.total != total && $0.answered < sent }),
              let first = seen[..<middle].lastIndex(where: { $0.total == total && $0.answered < seen[middle].sent }) else { return [] }
        let a = seen[first], b = seen[middle]
        let pair = [min(a.total, b.total), max(a.total, b.total)]
        guard toldTotals[user, default: []].insert(pair).inserted else { return [] }
        func said(_ s: TotalSeen) -> String { "\(s.total) on page \(s.page) (\(s.requestID ?? "no request id"))" }
        return [Finding(check: .paging, expected: "one total_count across pages (no entry can leave the history and come back)",
                        actual: "total_count \(said(a)), then \(said(b)), then \(total) on page \(page) (\(requestID ?? "no request id"))",
                        place: .pages(.oneTotal))]
    }

    mutating func observe(_ summary: HistorySummary, user: String) -> [Finding] {
        guard let entries = summary.entries, let page = summary.page, let perPage = summary.perPage, let total = summary.totalCount else { return [] }
        let key = "\(user)|\(perPage)|\(total)"
        if books[key] == nil {
            bookOrder.append(key)
            if bookOrder.count > 4 { books[bookOrder.removeFirst()] = nil }
        }
        var book = books[key] ?? Book()
        book.forget(page)  // this page seen again: its new content counts
        var seen = Seen(ids: [])
        seen.ids.reserveCapacity(entries.count)
        for entry in entries {
            if let date = entry.date {
                if seen.newest == nil { seen.newest = date }
                seen.oldest = date
            }
            if let id = entry.id { seen.ids.append(id) }
        }
        var findings: [Finding] = []
        // The answer's own page number: the server's, so its neighbours are found without overflowing.
        let previous = page.minusSaturating(1), next = page.plusSaturating(1)
        if previous != page, let above = book.pages[previous], let oldest = above.oldest, let newest = seen.newest, newest > oldest {
            findings.append(Finding(check: .order, expected: "page \(page) older than page \(previous) (newest first)",
                                    actual: "its first entry is newer than page \(previous)'s last"))
        }
        if next != page, let below = book.pages[next], let oldest = seen.oldest, let newest = below.newest, newest > oldest {
            findings.append(Finding(check: .order, expected: "page \(next) older than page \(page) (newest first)",
                                    actual: "its first entry is newer than page \(page)'s last"))
        }
        for id in seen.ids {
            if let other = book.page(of: id), other != page {
                findings.append(Finding(check: .duplicate, expected: "each id on one page", actual: "id “\(id.prefix(40))” on pages \(min(other, page)) and \(max(other, page))"))
                break
            }
        }
        book.remember(page, seen)
        if book.order.count > Self.capacity, let oldest = book.order.first { book.forget(oldest) }
        books[key] = book
        return findings
    }
}
