import Foundation
import ShopAPI
import ShopCache
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
            if !s.stillRunning.isEmpty {
                out.append("still running at the close: \(s.stillRunning.map(Sanitizer.line).joined(separator: ", ")) (what they do from now on is in no session)")
            }
            out.append("wrote the bundle \(Sanitizer.line(bundle.folder)) (\(bundle.files.joined(separator: ", ")))")
            out.append("wrote the archive \(Sanitizer.line(bundle.archive))")
            return out
        }
    }

    /// Closes the open session: its bundle written (no value of `secrets` in any file), its last line
    /// appended, and no session current any more. Refused when none is open; on a failure it stays open.
    public func closeCurrent(tokenVariable: String, secrets: [String], now: Date = Date()) throws(Problem) -> Closed {
        // One close at a time (the TUI's C and the CLI's close), and no start in between.
        let lock = try exclusive()
        defer { close(lock) }
        guard let session = current(), let journal = SessionJournal(folder: session.folder, command: "session close") else {
            throw Problem(words: "no session is open (reiterate-shop session list shows those closed)")
        }
        // From here on every other journal of the session appends nothing: the bundle holds what the record holds.
        let marker = session.folder + "/" + SessionJournal.closedMarker
        let made = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if made >= 0 { close(made) }
        guard let record = SessionRecord.read(folder: session.folder) else {
            unlink(marker)
            throw Problem(words: "the session's record cannot be read; it stays open")
        }
        let bundle: SessionBundle
        do {
            bundle = try SessionBundle.write(record, sessionFolder: session.folder, tokenVariable: tokenVariable, secrets: secrets, creator: "reiterate-shop",
                                             version: ShopClientConfiguration.appVersion, now: now)
        } catch {
            unlink(marker)
            throw Problem(words: error.words + "; the session stays open")
        }
        journal.closed(bundle: bundle.folder)
        endCurrent(session)
        var summary = SessionSummary(record, now: now)
        summary.open = false
        return Closed(bundle: bundle, summary: summary, name: record.meta?.name ?? session.id)
    }

    /// The sessions' lock (`test-sessions/.lock`, flock(2)), held until the descriptor is closed.
    func exclusive() throws(Problem) -> Int32 {
        guard (try? AtomicFile.ensureDirectory(folder)) != nil else { throw Problem(words: "the state folder cannot hold sessions: check that it is writable") }
        let fd = open(folder + "/.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Problem(words: "the sessions' lock file cannot be opened in the state folder") }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                close(fd)
                throw Problem(words: "the sessions' lock could not be taken")
            }
        }
        return fd
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
