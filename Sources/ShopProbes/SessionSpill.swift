import Foundation
import ShopAPI
import ShopCache
import ShopViewModels

/// Where a session's exchanges past the in-memory window go (`ExchangeLog`'s spill): a file of its
/// own in `STATE/sessions/`, removed when the session ends. Files a crash left behind are removed
/// once a day old.
public enum SessionSpill {
    public static func path(environment: [String: String]) -> String? {
        let folder = EvidenceFiles.stateDirectory(environment: environment) + "/sessions"
        guard (try? AtomicFile.ensureDirectory(folder)) != nil else { return nil }
        let manager = FileManager.default
        let dayAgo = Date().addingTimeInterval(-86_400)
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("session-") {
            // A session still running keeps its file, however long it has been idle.
            let pid = name.dropFirst("session-".count).prefix { $0.isNumber }
            if let pid = Int32(pid), kill(pid, 0) == 0 || errno == EPERM { continue }
            let file = folder + "/" + name
            if let modified = (try? manager.attributesOfItem(atPath: file))?[.modificationDate] as? Date, modified < dayAgo { try? manager.removeItem(atPath: file) }
        }
        return folder + "/session-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jsonl"
    }

    /// What a HAR of the session lacks, in words ("" when it lacks nothing).
    public static func gap(_ session: SessionExchanges) -> String {
        if session.spillFailed { return "; the oldest requests past the last 100 could not be kept in the state folder and are missing" }
        guard session.droppedReads > 0 else { return "" }
        return "; \(Wording.grouped(session.droppedReads)) of the oldest reads were dropped to keep it within \(ExchangeLog.spillLimit >> 20) MiB (every write is kept)"
    }
}
