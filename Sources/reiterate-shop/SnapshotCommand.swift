import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopProbes
import ShopSettings
import ShopViewModels
import Synchronization
import TerminalText

/// `reiterate-shop snapshot --out FILE`: what the current user sees (the balance, the packs, the first
/// history pages), saved with each read's request and request id, to compare or replay later.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save what the current user sees (balance, packs, history pages) as a snapshot file, for compare and replay.",
        discussion: "The file is JSON: the environment, the user, the time, and each read with its request and request id (no token). Exit status: 0; as `print` on a failed read."
    )

    @Option(name: .customLong("history-pages"), help: "History pages to save (of 200 entries; default 1).") var historyPages = 1
    @Option(help: "The file to write (mode 0600).") var out: String
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard historyPages >= 0, historyPages <= 100_000 else { throw ValidationError("--history-pages takes 0 to 100000") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        let pages = historyPages
        do {
            let snapshot: Snapshot = try await connection.withClient(settings, logger: logger) { client in
                let taken = try await Self.take(client: client, settings: settings, historyPages: pages,
                                                settled: await connection.settledState(settings, logger: logger))
                // Each deviation of the answers saved (pages that disagree too) is a `warning:` line.
                _ = reportFindings(await client.exchangesWithPinsSettled(), lines: .standard)
                return taken
            }
            try Self.write(snapshot.encoded(), to: out)
            let entries = snapshot.historyPages.reduce(0) { n, read in
                if case let .object(o)? = read.body, case let .array(items)? = o["history"] { return n + items.count }
                return n
            }
            Terminal.err("note: saved \(Sanitizer.line(settings.user)) on \(settings.environment.uppercased()): the balance, \(snapshot.packs.map { _ in "the packs, " } ?? "")"
                         + "\(Wording.grouped(entries)) history entr\(entries == 1 ? "y" : "ies") (\(snapshot.reads.count) reads) to \(Sanitizer.line(out))\n")
            SessionJournal.wrote(out, what: "snapshot")
        } catch let error as CLIError {
            throw fail(error)
        } catch let error as ShopAPIError {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
    }

    /// The balance, the packs and the first history pages of `settings.user`, read now.
    static func take(client: ShopClient, settings: ResolvedSettings, historyPages: Int, settled: SettledState = SettledState()) async throws -> Snapshot {
        let side = LiveSide(client: client, user: settings.user, environment: settings.environment, name: "", settled: settled, warn: { Terminal.err($0) })
        var reads: [RecordedRead] = []
        if let b = try await side.balance() { reads.append(b) }
        if let p = try await side.packs() { reads.append(p) }
        var page = 1
        while page <= historyPages, let h = try await side.historyReads(page: page, perPage: CheerHistory.maxPerPage) {
            reads += h
            page += 1
        }
        return Snapshot(environment: settings.environment, baseURL: settings.baseURL, user: settings.user, takenAt: Date(), reads: reads)
    }

    /// Written whole (a temporary file renamed over), readable by its owner only.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try AtomicFile.write(Data(bytes), to: path, directory: folder.isEmpty ? "." : folder)
        } catch {
            throw CLIError(message: "\(path) cannot be written", exitCode: .config)
        }
    }
}
