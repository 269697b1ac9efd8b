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

    init(client: ShopClient, settings: ResolvedSettings, name: String) {
        self.client = client
        user = settings.user
        description = SideDescription(name: name, environment: settings.environment, user: settings.user, takenAt: Date())
    }

    static func read<V>(_ r: Recorded<V>, _ what: RecordedRead.What) -> RecordedRead {
        RecordedRead(what: what, method: r.method, target: r.target, requestID: r.requestID, status: r.status, at: r.at, body: r.document)
    }

    func balance() async throws -> RecordedRead? { Self.read(try await client.sendRecorded(Balance(user: user)), .balance) }
    func packs() async throws -> RecordedRead? { Self.read(try await client.sendRecorded(AudioPacks()), .packs) }
    func history(page: Int, perPage: Int) async throws -> RecordedRead? {
        if let total = totalPages.withLock({ $0 }), page > max(1, total), !fullPages.withLock({ $0.contains(page - 1) }) { return nil }
        let answer = try await client.sendRecorded(CheerHistory(user: user, page: page, perPage: perPage))
        if page == 1 { totalPages.withLock { $0 = answer.value.totalPages } }
        if answer.value.items.count >= perPage { fullPages.withLock { _ = $0.insert(page) } }
        // A page past the server's last with nothing on it is the end, as the contract's paging has it.
        if let total = totalPages.withLock({ $0 }), page > max(1, total), answer.value.items.isEmpty { return nil }
        return Self.read(answer, .history(page: page))
    }
}
