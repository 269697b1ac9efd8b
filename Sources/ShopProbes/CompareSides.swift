import Foundation
import JSONTokens
import ShopAPI
import ShopModel
import ShopCompare
import ShopViewModels
import Synchronization
import TerminalText

// `compare`'s and `snapshot`'s sides, out of the executable (issue 44, item 5): a file (a snapshot or a HAR),
// or a live environment read through the client, a page at a time.

/// Reads one side: a page at a time, so a long history is compared as it comes.
public protocol SideReader: Sendable {
    var description: SideDescription { get }
    func balance() async throws -> RecordedRead?
    func packs() async throws -> RecordedRead?
    /// Page `page`, or nil past the last (a file's, or the server's `total_pages`).
    func history(page: Int, perPage: Int) async throws -> RecordedRead?
    /// The entries of page `page` of `perPage`, in as many reads as that takes (a server that serves shorter
    /// pages than asked is read in pages of the size it serves); nil past the last.
    func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]?
}

extension SideReader {
    public func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? { try await history(page: page, perPage: perPage).map { [$0] } }
}

extension RecordedRead {
    /// How many entries the history page holds, and the pages its paging says there are.
    public var historyShape: (count: Int, totalPages: Int?) {
        guard case let .object(o)? = body else { return (0, nil) }
        let count: Int = if case let .array(items)? = o["history"] { items.count } else { 0 }
        let pages: Int? = if case let .int(n)? = o["total_pages"] { n } else { nil }
        return (count, pages)
    }
}

/// A side read from a file: a snapshot of this tool's, or a HAR file.
public struct FileSide: SideReader {
    public let snapshot: Snapshot
    public let description: SideDescription

    /// Why a file is no side, in plain words.
    public enum Unreadable: Error, Sendable {
        /// The file cannot be read (its words).
        case cannotRead(String)
        /// It is read, and it is neither a snapshot nor a HAR file (its words).
        case notASnapshot(String)
    }

    public init(path: String) throws(Unreadable) {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .cannotRead("\(path) cannot be read")
        }
        do {
            snapshot = try Snapshot.read(bytes)
        } catch {
            throw .notASnapshot("\(path): \(error)")
        }
        description = SideDescription(name: path, environment: snapshot.environment ?? snapshot.baseURL, user: snapshot.user, takenAt: snapshot.takenAt)
        cutNote = snapshot.cut.isEmpty ? nil
            : "note: \(path): \(snapshot.cut.count) answer\(snapshot.cut.count == 1 ? "" : "s") cut at the HAR's 16 KiB preview, not compared (\(Sanitizer.line(snapshot.cut[0]))\(snapshot.cut.count > 1 ? ", …" : ""))\n"
    }

    /// Said, not hidden: the pages a HAR cut at its preview size are not compared (a `note:` line), or nil.
    public let cutNote: String?

    public func balance() async throws -> RecordedRead? { snapshot.balance }
    public func packs() async throws -> RecordedRead? { snapshot.packs }
    public func history(page: Int, perPage: Int) async throws -> RecordedRead? { snapshot.historyPage(page) }

    /// A snapshot saved in pages smaller than asked (its server served them short): the pages that make page `page`.
    public func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? {
        guard let size = snapshot.historyPage(1).flatMap(Snapshot.perPage), size < perPage, perPage % size == 0 else {
            return snapshot.historyPage(page).map { [$0] }
        }
        let reads = ((page - 1) * perPage / size + 1...page * perPage / size).compactMap { snapshot.historyPage($0) }
        return reads.isEmpty ? nil : reads
    }
}

/// What this machine last settled on for a user (the cache the last write's verification left): the
/// values a live side's first reads are held against.
public struct SettledState: Sendable {
    public var balance: Int?
    public var historyTotal: Int?

    public init(balance: Int? = nil, historyTotal: Int? = nil) {
        self.balance = balance
        self.historyTotal = historyTotal
    }
}

/// A live side: every read goes through the client (retries, sign-in, the contract watchdog).
public final class LiveSide: SideReader {
    let client: ShopClient
    let user: String
    public let description: SideDescription
    /// Where a warning line goes (a legal page size refused, and the size read on in).
    let warn: @Sendable (String) -> Void
    /// Pages the server said it has (from the first page read).
    private let totalPages = Mutex<Int?>(nil)
    /// The pages read that came full: past the server's last page, the next is read only after a full one
    /// (a server whose totals count fewer entries than it sends still shows them all).
    private let fullPages = Mutex<Set<Int>>([])

    /// What this machine last settled on for this side (the cache): a read that differs is read again.
    let settled: SettledState

    public init(client: ShopClient, user: String, environment: String, name: String, settled: SettledState = SettledState(),
                warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.client = client
        self.settled = settled
        self.user = user
        self.warn = warn
        description = SideDescription(name: name, environment: environment, user: user, takenAt: Date())
    }

    static func read<V>(_ r: Recorded<V>, _ what: RecordedRead.What) -> RecordedRead { RecordedRead(r, as: what) }

    /// The balance, on settled reads: a read that differs from the one this machine last settled on is read
    /// again (after 0.5 s, then 1 s: three reads at most), and the latest is kept — a lagging replica's
    /// answer from before the latest write is not what a snapshot or a comparison keeps.
    public func balance() async throws -> RecordedRead? {
        let known = settled.balance
        let rule = ReadRule<Recorded<Balance.Response>>(expecting: known.map { k in { $0.value.balance == k } })
        return Self.read(try await rule.reads { try await client.sendRecorded(Balance(user: user)) }.last, .balance)
    }
    public func packs() async throws -> RecordedRead? { Self.read(try await client.sendRecorded(AudioPacks()), .packs) }
    /// The page size the server really serves, once a page came back shorter than asked while not the last.
    private let served = Mutex<Int?>(nil)

    /// Page `page` of `perPage` entries, whole: when the server serves fewer a page than asked while its
    /// paging follows the size asked, the rest is read in pages of the size it serves (the `paging` finding
    /// on the short answer says so), from page 1 again so that every page read has one size.
    public func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? {
        if let size = served.withLock({ $0 }) { return try await pages(of: page, perPage: perPage, size: size) }
        let read: RecordedRead?
        do {
            read = try await history(page: page, perPage: perPage)
        } catch let error as ShopAPIError where page == 1 && CheerHistory.refusesPageSize(error) && !CheerHistory.fallbackSizes(below: perPage).isEmpty {
            // A legal page size refused: read on in a smaller one the server takes (each lands on every page
            // edge), and say so; the snapshot or comparison still reaches every entry.
            var taken: Int?
            for smaller in CheerHistory.fallbackSizes(below: perPage) where (try? await history(page: 1, perPage: smaller)) != nil {
                taken = smaller
                break
            }
            warn("warning: " + ErrorText.pageSizeRefused(error, asked: perPage, readOn: taken) + "\n")
            guard let taken else { throw error }
            served.withLock { $0 = taken }
            resetPaging()
            return try await pages(of: page, perPage: perPage, size: taken)
        }
        guard let first = read else { return nil }
        let (count, totalPages) = first.historyShape
        guard count < perPage, count > 0, page < (totalPages ?? 0) else { return [first] }
        let size = CheerHistory.pageSize(landingOn: perPage, served: count)  // lands on every page edge
        served.withLock { $0 = size }
        resetPaging()
        return try await pages(of: page, perPage: perPage, size: size)
    }

    private func resetPaging() {
        totalPages.withLock { $0 = nil }
        fullPages.withLock { $0 = [] }
    }

    /// The pages of `size` that make page `page` of `perPage` (page 1 of `size` first when none was read at it).
    private func pages(of page: Int, perPage: Int, size: Int) async throws -> [RecordedRead]? {
        var reads: [RecordedRead] = []
        for k in (page - 1) * perPage / size + 1...page * perPage / size {
            if k > 1, totalPages.withLock({ $0 }) == nil { _ = try await history(page: 1, perPage: size) }
            guard let read = try await history(page: k, perPage: size) else { break }
            reads.append(read)
            if read.historyShape.count < size { break }  // the last page
        }
        return reads.isEmpty ? nil : reads
    }

    /// A history page. Page 1 on settled reads, as the balance: when its total differs from the one this
    /// machine last settled on, it is read again (after 0.5 s, then 1 s) and the latest is kept — a page
    /// from before the latest write would make every later page look shifted.
    public func history(page: Int, perPage: Int) async throws -> RecordedRead? {
        if let total = totalPages.withLock({ $0 }), page > max(1, total), !fullPages.withLock({ $0.contains(page - 1) }) { return nil }
        let known = page == 1 ? settled.historyTotal : nil
        let rule = ReadRule<Recorded<CheerHistory.Response>>(expecting: known.map { k in { $0.value.totalCount == k } })
        let answer = try await rule.reads { try await client.sendRecorded(CheerHistory(user: user, page: page, perPage: perPage)) }.last
        if page == 1 { totalPages.withLock { $0 = answer.value.totalPages } }
        if answer.value.items.count >= perPage { fullPages.withLock { _ = $0.insert(page) } }
        // A page past the server's last with nothing on it is the end, as the contract's paging has it.
        if let total = totalPages.withLock({ $0 }), page > max(1, total), answer.value.items.isEmpty { return nil }
        return Self.read(answer, .history(page: page))
    }
}
