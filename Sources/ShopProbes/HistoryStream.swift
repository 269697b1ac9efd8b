import Foundation
import JSONTokens
import ShopAPI
import ShopViewModels
import TerminalText

/// `print history --all`: every page, newest first, each written as it comes (so `| head` stops it
/// after one page), in the contract's largest pages; `--since` stops at the first older entry.
public struct HistoryStream {
    /// Where the stream's lines go: the entries, the header and the last line on `out`; progress, notes
    /// and warnings on `err`.
    let lines: OutputLines
    let user: String
    let json: Bool
    let find: String?
    /// Entries at or after this instant (the start of the --since day).
    let since: Date?
    /// Entries before this instant (the start of the day after --until).
    let until: Date?
    var printed = 0
    var progressShown = false
    /// The date of the last entry read: the history must go back in time.
    var previous: Date?
    var orderWarned = false
    public init(user: String, json: Bool, find: String?, since: Date?, until: Date?, lines: OutputLines) {
        self.lines = lines
        self.user = user
        self.json = json
        self.find = find
        self.since = since
        self.until = until
    }

    /// The start of the day `text` names (YYYY-MM-DD, local time).
    public static func dayStart(_ text: String) -> Date? { day(text)?.start }

    /// The start of the day after the day `text` names.
    public static func dayAfter(_ text: String) -> Date? { day(text)?.next }

    static func day(_ text: String) -> (start: Date, next: Date)? {
        guard case let .day(y, m, d)? = GoToTarget(text) else { return nil }
        return DateText.dayBounds(year: y, month: m, day: d, zone: .current)
    }

    /// Reads and prints every page; answers whether every entry the server counts was reached (false: the
    /// result is incomplete, and the last line says so).
    ///
    /// A page that comes back shorter than asked while it is not the last (a server that caps its pages
    /// below `per_page` while its paging fields follow the `per_page` asked) is a `paging` warning, and the
    /// reading goes on from the entries reached in pages of the size the server served (the largest size
    /// that divides the offset reached and is no larger than what it served), so no entry is skipped.
    public mutating func run(_ client: ShopClient, perPage asked: Int = CheerHistory.maxPerPage) async throws -> Bool {
        let showProgress = isatty(STDERR_FILENO) == 1
        if !json { lines.out(Self.header) }
        var page = 1
        var size = asked
        defer { if progressShown { lines.err("\r\u{1B}[K") } }
        // The pages ahead are asked while this one is printed and the one after is read: the server
        // makes page N + 2 while the client reads N + 1, instead of each waiting for the other.
        let user = user
        func fetch(_ n: Int, _ size: Int) -> Task<CheerHistoryPage, any Error> {
            Task {
                var (page, requestID) = try await client.sendAnswered(CheerHistory(user: user, page: n, perPage: size))
                page.requestID = requestID
                return page
            }
        }
        // Page 1 in the size asked; a server that refuses that legal size (a 4xx) is read on in a smaller one
        // that it takes, and the refusal is a warning (a finding about the server, never a failed print).
        var firstPage: CheerHistoryPage
        do {
            firstPage = try await fetch(1, size).value
        } catch let error as ShopAPIError where CheerHistory.refusesPageSize(error) && !CheerHistory.fallbackSizes(below: size).isEmpty {
            var taken: (CheerHistoryPage, Int)?
            for smaller in CheerHistory.fallbackSizes(below: size) {
                if let page = try? await fetch(1, smaller).value { taken = (page, smaller); break }
            }
            lines.err("warning: " + ErrorText.pageSizeRefused(error, asked: size, readOn: taken?.1) + "\n")
            guard let taken else { throw error }
            (firstPage, size) = taken
        }
        let firstRead = firstPage
        var ahead: [Int: Task<CheerHistoryPage, any Error>] = [1: Task { firstRead }]
        defer { for task in ahead.values { task.cancel() } }
        // The first page's total, and whether page 1 was read again once because another page's differed.
        var first: (total: Int, requestID: String?)?
        var reread = false
        // Entries (and unreadable entries) received from the top, and whether --since stopped the reading.
        var received = 0
        var stopped = false
        var short = 0
        var total = 0
        // Request ids are the server's text: made safe before they reach the terminal.
        func id(_ requestID: String?) -> String { requestID.map(Sanitizer.line) ?? "no request id" }
        while true {
            var answer = try await (ahead.removeValue(forKey: page) ?? fetch(page, size)).value
            if page == 1, first == nil { first = (answer.totalCount, answer.requestID) }
            // A total that differs from page 1's: page 1 is read once more, after this answer came (the
            // watchdog holds the three answers against each other: a total that comes back is a finding).
            // Then the stream goes on; it never reads again for it.
            if let said = first, answer.totalCount != said.total, !reread {
                reread = true
                let again = try await fetch(1, size).value
                let words = "page 1 said \(Wording.grouped(said.total)) entries (\(id(said.requestID))), page \(Wording.grouped(page)) "
                    + "\(Wording.grouped(answer.totalCount)) (\(id(answer.requestID))), page 1 again \(Wording.grouped(again.totalCount)) "
                    + "(\(id(again.requestID)))"
                lines.err("\(progressShown ? "\r\u{1B}[K" : "")note: the history's total changed while it was read: \(words); "
                    + "entries at page edges may show twice or be missed\n")
                answer.totalPages = max(answer.totalPages, again.totalPages)
            }
            total = max(total, answer.totalCount)
            // Only pages that will be printed: with --since, none past the page that already reaches back before it.
            let reachesBack = since.map { since in answer.entries.last.map { $0.date < since } ?? false } ?? false
            // Served short while not the last page: read on from the offset reached, in pages the server serves.
            let servedShort = answer.items.count < size && !answer.items.isEmpty && page < answer.totalPages
            if !reachesBack, !servedShort {
                for n in (page + 1)...(page + Self.pagesAhead) where n <= answer.totalPages && ahead[n] == nil { ahead[n] = fetch(n, size) }
            }
            var out = ""
            for item in answer.items {
                switch item {
                case let .entry(e):
                    if let previous, e.date > previous, !orderWarned {
                        orderWarned = true
                        lines.err("\(progressShown ? "\r\u{1B}[K" : "")warning: the server's history is not newest first (page \(page) has an entry newer than the one before it)\(since == nil ? "" : "; --since may stop too early")\n")
                    }
                    previous = e.date
                    if let until, e.date >= until { continue }
                    if let since, e.date < since {
                        stopped = true
                        break
                    }
                    if let find, !FindState.matches(item, find) { continue }
                    out += try line(item, page: page)
                case .unreadable:
                    if find == nil { out += try line(item, page: page) }
                }
                if stopped { break }
            }
            received += answer.items.count
            if !out.isEmpty { lines.out(out) }
            if showProgress {
                progressShown = true
                lines.err("\r\u{1B}[Kpage \(Wording.grouped(page)) of \(Wording.grouped(max(1, answer.totalPages))) · \(Wording.grouped(printed)) printed")
            }
            if stopped { break }
            if servedShort {
                short += 1
                let served = answer.items.count
                let next = CheerHistory.pageSize(landingOn: received, served: served)
                lines.err("\(progressShown ? "\r\u{1B}[K" : "")warning: GET \(CheerHistory.endpoint.path): [paging] page \(Wording.grouped(page)) asked \(size) entries and "
                    + "served \(served), but it is not the last page (of \(Wording.grouped(answer.totalPages))): reading on from entry "
                    + "\(Wording.grouped(received + 1)) in pages of \(next) (request id \(id(answer.requestID)))\n")
                for task in ahead.values { task.cancel() }
                ahead = [:]
                size = next
                page = received / next + 1
                continue
            }
            // The server's last page, full: the page after it is read too (its totals may count fewer entries
            // than it sends), at most `extraPages` past it.
            let pastEnd = page >= answer.totalPages && (answer.items.count < size || page >= answer.totalPages.plusSaturating(Self.extraPages))
            if answer.items.isEmpty || pastEnd { break }
            page += 1
        }
        let whole = stopped || received >= total
        if !json {
            var last = "\(Wording.grouped(printed)) cheer\(printed == 1 ? "" : "s") · \(Sanitizer.line(user))"
            if !whole { last = "\(Wording.grouped(received)) of \(Wording.grouped(total)) entries read (\(last)): incomplete, see warnings" }
            lines.out(last + "\n")
        }
        if !whole {
            lines.err("\(progressShown ? "\r\u{1B}[K" : "")warning: the history is incomplete: \(Wording.grouped(received)) of \(Wording.grouped(total)) entries read"
                + (short > 0 ? " (pages served short)" : "") + "\n")
        }
        return whole
    }

    /// Requests kept out ahead of the page being printed.
    static let pagesAhead = 2
    /// Full pages past the server's last page read on (a bound on a server that never ends).
    static let extraPages = 4

    static let widths = [16, 24, 40, 8, 8]
    static var header: String { row(HistoryColumns.titles) }

    /// A row in the fixed widths (the rows stream: the widest amount is not known ahead). A number
    /// wider than its column is printed whole, never cut (its row then stands out to the right).
    static func row(_ cells: [String]) -> String {
        zip(cells, widths).enumerated().map { i, pair in
            i >= 3 ? Columns.fit(pair.0, to: max(pair.1, DisplayWidth.of(pair.0)), alignRight: true) : Columns.fit(pair.0, to: pair.1, alignRight: false)
        }.joined(separator: "  ") + "\n"
    }

    mutating func line(_ item: HistoryItem, page: Int) throws -> String {
        printed += 1
        switch item {
        case let .entry(e):
            if json { return Output.jsonLine(e) }
            return Self.row(HistoryColumns.printed(e, zone: .current))
        case let .unreadable(u):
            if json { return try Output.jsonLine(UnreadableLine(unreadable: true, id: u.id, reason: u.reason)) }
            return HistoryColumns.unreadable(u, page: page) + "\n"
        }
    }

    struct UnreadableLine: Encodable {
        var unreadable: Bool
        var id: String?
        var reason: String
    }
}
