import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopSettings
import ShopViewModels
import Synchronization
import TerminalText

extension CompareSide {
    /// A side as a command line gives it: its form, and a file that exists.
    static func given(_ text: String) throws -> CompareSide {
        let side: CompareSide
        do { side = try CompareSide.parse(text) } catch { throw CLIError(message: error.description, exitCode: .usage) }
        return try side.existing()
    }

    /// This side, when it is not a file that is missing.
    func existing() throws -> CompareSide {
        if case let .file(path) = self, !FileManager.default.fileExists(atPath: path) {
            throw CLIError(message: "“\(path)” is neither env:NAME, user:ID, env:NAME/user:ID nor a file that exists", exitCode: .usage)
        }
        return self
    }
}

/// Reads one side: a page at a time, so a long history is compared as it comes.
protocol SideReader: Sendable {
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
    func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? { try await history(page: page, perPage: perPage).map { [$0] } }
}

extension RecordedRead {
    /// How many entries the history page holds, and the pages its paging says there are.
    var historyShape: (count: Int, totalPages: Int?) {
        guard case let .object(o)? = body else { return (0, nil) }
        let count: Int = if case let .array(items)? = o["history"] { items.count } else { 0 }
        let pages: Int? = if case let .int(n)? = o["total_pages"] { n } else { nil }
        return (count, pages)
    }
}

struct FileSide: SideReader {
    let snapshot: Snapshot
    let description: SideDescription

    init(path: String) throws {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CLIError(message: "\(path) cannot be read", exitCode: .config)
        }
        do {
            snapshot = try Snapshot.read(bytes)
        } catch {
            throw CLIError(message: "\(path): \(error)", exitCode: .dataError)
        }
        description = SideDescription(name: path, environment: snapshot.environment ?? snapshot.baseURL, user: snapshot.user, takenAt: snapshot.takenAt)
        // Said, not hidden: pages the HAR cut at its preview size are not compared.
        if !snapshot.cut.isEmpty {
            Terminal.err("note: \(path): \(snapshot.cut.count) answer\(snapshot.cut.count == 1 ? "" : "s") cut at the HAR's 16 KiB preview, not compared (\(Sanitizer.line(snapshot.cut[0]))\(snapshot.cut.count > 1 ? ", …" : ""))\n")
        }
    }

    func balance() async throws -> RecordedRead? { snapshot.balance }
    func packs() async throws -> RecordedRead? { snapshot.packs }
    func history(page: Int, perPage: Int) async throws -> RecordedRead? { snapshot.historyPage(page) }

    /// A snapshot saved in pages smaller than asked (its server served them short): the pages that make page `page`.
    func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? {
        guard let size = snapshot.historyPage(1).flatMap(Snapshot.perPage), size < perPage, perPage % size == 0 else {
            return snapshot.historyPage(page).map { [$0] }
        }
        let reads = ((page - 1) * perPage / size + 1...page * perPage / size).compactMap { snapshot.historyPage($0) }
        return reads.isEmpty ? nil : reads
    }
}

/// What this machine last settled on for a user (the cache the last write's verification left): the
/// values a live side's first reads are held against.
struct SettledState: Sendable {
    var balance: Int?
    var historyTotal: Int?
}

/// A live side: every read goes through the client (retries, sign-in, the contract watchdog).
final class LiveSide: SideReader {
    let client: ShopClient
    let user: String
    let description: SideDescription
    /// Pages the server said it has (from the first page read).
    private let totalPages = Mutex<Int?>(nil)
    /// The pages read that came full: past the server's last page, the next is read only after a full one
    /// (a server whose totals count fewer entries than it sends still shows them all).
    private let fullPages = Mutex<Set<Int>>([])

    /// What this machine last settled on for this side (the cache): a read that differs is read again.
    let settled: SettledState

    init(client: ShopClient, settings: ResolvedSettings, name: String, settled: SettledState = SettledState()) {
        self.client = client
        self.settled = settled
        user = settings.user
        description = SideDescription(name: name, environment: settings.environment, user: settings.user, takenAt: Date())
    }

    static func read<V>(_ r: Recorded<V>, _ what: RecordedRead.What) -> RecordedRead { RecordedRead(r, as: what) }

    /// The balance, on settled reads: a read that differs from the one this machine last settled on is read
    /// again (after 0.5 s, then 1 s: three reads at most), and the latest is kept — a lagging replica's
    /// answer from before the latest write is not what a snapshot or a comparison keeps.
    func balance() async throws -> RecordedRead? {
        var recorded = try await client.sendRecorded(Balance(user: user))
        guard let known = settled.balance else { return Self.read(recorded, .balance) }
        for pause in [0.5, 1.0] where recorded.value.balance != known {
            try? await Task.sleep(for: .milliseconds(Int(pause * 1000)))  // the pause between reads (a pace, not a synchronisation)
            recorded = try await client.sendRecorded(Balance(user: user))
        }
        return Self.read(recorded, .balance)
    }
    func packs() async throws -> RecordedRead? { Self.read(try await client.sendRecorded(AudioPacks()), .packs) }
    /// The page size the server really serves, once a page came back shorter than asked while not the last.
    private let served = Mutex<Int?>(nil)

    /// Page `page` of `perPage` entries, whole: when the server serves fewer a page than asked while its
    /// paging follows the size asked, the rest is read in pages of the size it serves (the `paging` finding
    /// on the short answer says so), from page 1 again so that every page read has one size.
    func historyReads(page: Int, perPage: Int) async throws -> [RecordedRead]? {
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
            Terminal.err("warning: " + ErrorText.pageSizeRefused(error, asked: perPage, readOn: taken) + "\n")
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
    func history(page: Int, perPage: Int) async throws -> RecordedRead? {
        if let total = totalPages.withLock({ $0 }), page > max(1, total), !fullPages.withLock({ $0.contains(page - 1) }) { return nil }
        var answer = try await client.sendRecorded(CheerHistory(user: user, page: page, perPage: perPage))
        if page == 1, let known = settled.historyTotal {
            for pause in [500, 1000] where answer.value.totalCount != known {
                try? await Task.sleep(for: .milliseconds(pause))  // the pause between reads (a pace, not a synchronisation)
                answer = try await client.sendRecorded(CheerHistory(user: user, page: page, perPage: perPage))
            }
        }
        if page == 1 { totalPages.withLock { $0 = answer.value.totalPages } }
        if answer.value.items.count >= perPage { fullPages.withLock { _ = $0.insert(page) } }
        // A page past the server's last with nothing on it is the end, as the contract's paging has it.
        if let total = totalPages.withLock({ $0 }), page > max(1, total), answer.value.items.isEmpty { return nil }
        return Self.read(answer, .history(page: page))
    }
}
