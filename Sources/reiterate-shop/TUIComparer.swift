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

/// `D` and `S` in the TUI: comparisons and snapshots with clients of their own (never the session's
/// HAR file: their requests are not the tester's session).
struct TUIComparer: Comparer {
    let connection: ConnectionOptions
    let config: ConfigFile?
    let logger: Logger
    let settings: ResolvedSettings
    /// Where `S` saves (`$XDG_STATE_HOME/reiterate-shop/snapshots`).
    let snapshots: String

    init(connection: ConnectionOptions, config: ConfigFile?, logger: Logger, settings: ResolvedSettings, stateDirectory: String) {
        var quiet = connection
        quiet.harFile = nil
        self.connection = quiet
        self.config = config
        self.logger = logger
        self.settings = settings
        snapshots = stateDirectory + "/snapshots"
    }

    func compare(_ a: CompareSide, with b: CompareSide, what: ComparedPart) async -> Result<DiffResult, CompareFailure> {
        do {
            let ignore = try IgnoreRules.of(config, [])
            let sideA = try a.existing(), sideB = try b.existing()
            let outcome = try await connection.withSide(sideA, name: a.description, config: config, logger: logger) { readerA in
                try await connection.withSide(sideB, name: b.description, config: config, logger: logger) { readerB in
                    try await CompareRun.compare(readerA, readerB, parts: [what], historyPages: 1, ignore: ignore)
                }
            }
            return .success(DiffResult(what: what, a: outcome.a, b: outcome.b, differences: outcome.differences, pastTheEdge: outcome.pastTheEdge))
        } catch {
            return .failure(CompareFailure(CompareCommand.reason(error)))
        }
    }

    func saveSnapshot(user: String) async -> Result<String, CompareFailure> {
        do {
            var who = settings
            who.user = user
            let snapshot = try await connection.withClient(who, logger: logger) { client in
                try await SnapshotCommand.take(client: client, settings: who, historyPages: 1)
            }
            try AtomicFile.ensureDirectory(snapshots)
            let stamp = DiffReport.stamp(snapshot.takenAt ?? Date()).replacingOccurrences(of: ":", with: "")
            let path = "\(snapshots)/\(Snapshot.fileSafe(settings.environment))-\(Snapshot.fileSafe(user))-\(stamp).json"
            try SnapshotCommand.write(snapshot.encoded(), to: path)
            return .success(path)
        } catch {
            return .failure(CompareFailure(CompareCommand.reason(error)))
        }
    }

    /// What Tab offers after `D`: the other environments, the environment's other users, and the
    /// snapshots saved (newest first).
    func targets() -> [String] {
        var out: [String] = []
        for name in (config?.environments.keys.sorted() ?? []) where name != settings.environment { out.append("env:" + name) }
        // Every user, the one looked at now too: `D` leaves out whoever is current when Tab is pressed (`u` switches).
        for user in [settings.user] + settings.users where !out.contains("user:" + user) { out.append("user:" + user) }
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: snapshots)) ?? []).filter { $0.hasSuffix(".json") }.map { snapshots + "/" + $0 }
        func modified(_ path: String) -> Date { ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast }
        out += files.map { ($0, modified($0)) }.sorted { $0.1 > $1.1 }.prefix(10).map(\.0)
        return out
    }
}
