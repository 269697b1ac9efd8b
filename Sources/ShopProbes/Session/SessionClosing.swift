import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

extension TestSessions {
    /// A session closed into its bundle: the bundle, what it held, and the lines that say so.
    public struct Closed: Sendable {
        public var bundle: SessionBundle
        public var summary: SessionSummary
        public var name: String

        /// What `session close` prints: how the session went, what it lacks, and every file written.
        public var lines: [String] {
            let s = summary
            var out = ["session \(Sanitizer.line(name)) closed after \(Wording.duration(s.seconds)): \(s.findings) finding\(s.findings == 1 ? "" : "s")\(s.findings > s.distinct ? " (\(s.distinct) distinct)" : ""), "
                       + "\(s.purchases.count) purchase\(s.purchases.count == 1 ? "" : "s"), \(s.covered.requests) request\(s.covered.requests == 1 ? "" : "s")"]
            out += s.incomplete.map { "incomplete: \(Sanitizer.line($0))" }
            out.append("wrote the bundle \(Sanitizer.line(bundle.folder)) (\(bundle.files.joined(separator: ", ")))")
            out.append("wrote the archive \(Sanitizer.line(bundle.archive))")
            return out
        }
    }

    /// Closes the open session: its bundle written (no value of `secrets` in any file), its last line
    /// appended, and no session current any more. Refused when none is open; on a failure it stays open.
    public func closeCurrent(tokenVariable: String, secrets: [String], now: Date = Date()) throws(Problem) -> Closed {
        guard let open = current(), let journal = SessionJournal(folder: open.folder, command: "session close") else {
            throw Problem(words: "no session is open (reiterate-shop session list shows those closed)")
        }
        guard let record = SessionRecord.read(folder: open.folder) else { throw Problem(words: "the session's record cannot be read") }
        let bundle: SessionBundle
        do {
            bundle = try SessionBundle.write(record, sessionFolder: open.folder, tokenVariable: tokenVariable, secrets: secrets, creator: "reiterate-shop",
                                             version: ShopClientConfiguration.appVersion, now: now)
        } catch {
            throw Problem(words: error.words + "; the session stays open")
        }
        journal.closed(bundle: bundle.folder)
        endCurrent(open)
        var summary = SessionSummary(record, now: now)
        summary.open = false
        return Closed(bundle: bundle, summary: summary, name: record.meta?.name ?? open.id)
    }

    /// `session list`: every session, oldest first, a line each.
    public func listText() -> String {
        let open = current()
        return all().map { s in
            let record = SessionRecord.read(folder: s.folder) ?? SessionRecord()
            let m = record.meta
            let state = s == open ? "open" : record.closed == nil ? "not closed" : "closed"
            return "\(s.id)  \(Sanitizer.line(m?.name ?? "?"))  build \(Sanitizer.line(m?.build ?? "not given"))  \(state)  "
                + "\(record.findings.count) finding\(record.findings.count == 1 ? "" : "s")\n"
        }.joined()
    }

    /// The session `given` names, read (`session show`, `diff`).
    public func read(_ given: String?) throws(Problem) -> SessionRecord {
        let session = try find(given)
        guard let record = SessionRecord.read(folder: session.folder) else { throw Problem(words: "the session \(session.id)'s record cannot be read") }
        return record
    }
}
