import Foundation
import ShopAPI
import ShopLedger

/// The ledger's history when a test session is open: everything the session did (the CLI's writes, the
/// TUI's, the app's through the proxy), then the HAR files given besides — an exchange in both once
/// (by its request id).
public enum SessionLedger {
    /// The open session's events (none when no session is open), and whether one was.
    public static func sessionEvents(_ sessions: TestSessions) -> (events: [ShopEvent], session: String?) {
        guard let open = sessions.current(), let record = SessionRecord.read(folder: open.folder) else { return ([], nil) }
        // A write sent with no answer recorded (its process killed) is a post whose outcome is not known: kept,
        // with no status, never left out.
        let posted = record.logged().map { e -> Exchange in
            var e = e
            if e.method != "GET" { e.isPending = false }
            return e
        }
        return (ShopEvents.from(posted), record.meta?.name ?? open.id)
    }

    /// `first`, then each of `more` whose request id is not among them already.
    public static func merged(_ first: [ShopEvent], _ more: [ShopEvent]) -> [ShopEvent] {
        let seen = Set(first.compactMap(\.requestID))
        return first + more.filter { $0.requestID.map { !seen.contains($0) } ?? true }
    }

    /// Each of the ledger's lines into the open session: every verdict, and each finding as one — once: a
    /// later run that gives a transaction the verdict the session already holds for it adds no finding again.
    public static func record(_ ledger: Ledger) {
        guard let journal = SessionJournal.active else { return }
        var latest: [String: String] = [:]
        for v in SessionRecord.read(folder: journal.folder)?.verdicts ?? [] { latest[v.transaction] = v.verdict }
        for line in ledger.lines {
            journal.verdict(transaction: line.transactionID, product: line.productID, verdict: line.verdict.rawValue, blame: line.blame,
                            requestIDs: line.requestIDs)
            if line.isFinding, latest[line.transactionID] != line.verdict.rawValue, let finding = line.finding { journal.finding(finding) }
        }
    }
}
