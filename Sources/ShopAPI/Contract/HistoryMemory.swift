import JSONTokens
import Foundation

/// What the history pages seen lately showed, to compare neighbours: the newest and oldest date and
/// the ids of each page, for one user, page size and total. A page with another total starts afresh
/// (entries came or went: every boundary moved, which is no deviation).
struct HistoryMemory: Sendable {
    struct Seen: Sendable {
        var newest: Date?
        var oldest: Date?
        var ids: Set<String>
    }

    static let capacity = 16
    /// Pages by user, page size and total (a scan's pages of 200 and the list's of 50 both stay).
    private var books: [String: [Int: Seen]] = [:]
    private var bookOrder: [String] = []
    private var pageOrder: [String: [Int]] = [:]

    mutating func observe(_ json: JSONValue, user: String) -> [Finding] {
        guard case let .object(fields) = json, case let .array(entries)? = fields["history"],
              case let .int(page)? = fields["page"], case let .int(perPage)? = fields["per_page"], case let .int(total)? = fields["total_count"]
        else { return [] }
        let key = "\(user)|\(perPage)|\(total)"
        if books[key] == nil {
            books[key] = [:]
            bookOrder.append(key)
            if bookOrder.count > 4 {
                let gone = bookOrder.removeFirst()
                books[gone] = nil
                pageOrder[gone] = nil
            }
        }
        let pages = books[key] ?? [:]
        var seen = Seen(ids: [])
        var ids: [String] = []
        for entry in entries {
            guard case let .object(e) = entry else { continue }
            if case let .string(raw)? = e["date"], let date = ISO8601.parse(raw) {
                if seen.newest == nil { seen.newest = date }
                seen.oldest = date
            }
            if case let .string(id)? = e["id"] { ids.append(id) }
        }
        seen.ids = Set(ids)
        var findings: [Finding] = []
        if let above = pages[page - 1], let oldest = above.oldest, let newest = seen.newest, newest > oldest {
            findings.append(Finding(check: .order, expected: "page \(page) older than page \(page - 1) (newest first)",
                                    actual: "its first entry is newer than page \(page - 1)'s last"))
        }
        if let below = pages[page + 1], let oldest = seen.oldest, let newest = below.newest, newest > oldest {
            findings.append(Finding(check: .order, expected: "page \(page + 1) older than page \(page) (newest first)",
                                    actual: "its first entry is newer than page \(page)'s last"))
        }
        for (other, earlier) in pages where other != page {
            if let id = ids.first(where: { earlier.ids.contains($0) }) {
                findings.append(Finding(check: .duplicate, expected: "each id on one page", actual: "id “\(id.prefix(40))” on pages \(min(other, page)) and \(max(other, page))"))
                break
            }
        }
        books[key]?[page] = seen
        var order = pageOrder[key] ?? []
        order.removeAll { $0 == page }
        order.append(page)
        if order.count > Self.capacity { books[key]?[order.removeFirst()] = nil }
        pageOrder[key] = order
        return findings
    }
}
