import Foundation
import ShopAPI
import ShopCache
import ShopViewModels
import TerminalText

/// The test sessions of this machine's user (issue 46; docs/sessions.md): `STATE/test-sessions/`, one
/// folder a session (`20261129-101500-refunds/`, holding `record.jsonl` and, once closed, its bundle),
/// and `current`, the name of the open one. At most one is open; every command appends to it.
public struct TestSessions: Sendable {
    public let folder: String

    public init(environment: [String: String]) {
        folder = EvidenceFiles.stateDirectory(environment: environment) + "/test-sessions"
    }

    public init(folder: String) { self.folder = folder }

    /// Why a session could not be started, found or closed, in words.
    public struct Problem: Error, Sendable, Equatable { public var words: String }

    /// One session: its id (its folder's name) and folder.
    public struct Session: Sendable, Equatable {
        public var id: String
        public var folder: String
    }

    var currentFile: String { folder + "/current" }

    /// The open session, if any (a `current` naming a folder that is gone is none).
    public func current() -> Session? {
        guard let data = FileManager.default.contents(atPath: currentFile),
              let id = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), Self.isID(id) else { return nil }
        let session = Session(id: id, folder: folder + "/" + id)
        return FileManager.default.fileExists(atPath: session.folder + "/" + SessionJournal.recordName) ? session : nil
    }

    /// The open session's journal, for `command` to append to; nil when none is open.
    public func journal(command: String) -> SessionJournal? {
        current().flatMap { SessionJournal(folder: $0.folder, command: command) }
    }

    /// Opens a new session and makes it the current one. Refused while another is open.
    public func start(name: String?, build: String?, charter: String?, environment: String, baseURL: String, user: String,
                      now: Date = Date()) throws(Problem) -> Session {
        let lock = try exclusive()
        defer { close(lock) }
        if let open = current() {
            let name = SessionRecord.read(folder: open.folder)?.meta?.name ?? open.id
            throw Problem(words: "the session \(Sanitizer.line(name)) is open: close it first (reiterate-shop session close)")
        }
        guard (try? AtomicFile.ensureDirectory(folder)) != nil else {
            throw Problem(words: "the state folder cannot hold sessions: check that it is writable")
        }
        let slug = Self.slug(name ?? "session")
        let stamp = Self.stamp(now)
        var id = "\(stamp)-\(slug)"
        var n = 2
        while FileManager.default.fileExists(atPath: folder + "/" + id) {
            id = "\(stamp)-\(slug)-\(n)"
            n += 1
        }
        let session = Session(id: id, folder: folder + "/" + id)
        guard mkdir(session.folder, 0o700) == 0 else { throw Problem(words: "the session's folder could not be made in the state folder") }
        let fd = open(session.folder + "/" + SessionJournal.recordName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Problem(words: "the session's record could not be made in the state folder") }
        close(fd)
        guard let journal = SessionJournal(folder: session.folder, command: "session start") else {
            throw Problem(words: "the session's record could not be opened")
        }
        journal.started(SessionMeta(id: id, name: name ?? slug, build: build, charter: charter, environment: environment, baseURL: baseURL,
                                    user: user, startedAt: now))
        do {
            try AtomicFile.write(Data((id + "\n").utf8), to: currentFile, directory: folder)
        } catch {
            throw Problem(words: "the open session could not be noted in the state folder")
        }
        return session
    }

    /// The session `given` names: a folder, an id, or a name (the latest of that name); nil: the open
    /// one, else the latest.
    public func find(_ given: String?) throws(Problem) -> Session {
        let manager = FileManager.default
        guard let given else {
            if let open = current() { return open }
            guard let latest = all().last else { throw Problem(words: "no session yet: start one (reiterate-shop session start --name NAME)") }
            return latest
        }
        var isFolder: ObjCBool = false
        if given.contains("/"), manager.fileExists(atPath: given + "/" + SessionJournal.recordName, isDirectory: &isFolder) {
            return Session(id: URL(fileURLWithPath: given).lastPathComponent, folder: given)
        }
        if Self.isID(given), manager.fileExists(atPath: folder + "/" + given + "/" + SessionJournal.recordName) {
            return Session(id: given, folder: folder + "/" + given)
        }
        if let named = all().last(where: { SessionRecord.read(folder: $0.folder)?.meta?.name == given }) { return named }
        throw Problem(words: "no session \(Sanitizer.line(given)): give its name, its id (reiterate-shop session list) or its folder")
    }

    /// Every session, oldest first.
    public func all() -> [Session] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { Self.isID($0) && FileManager.default.fileExists(atPath: folder + "/" + $0 + "/" + SessionJournal.recordName) }
            .sorted().map { Session(id: $0, folder: folder + "/" + $0) }
    }

    /// The open session is no longer the current one (it was closed).
    public func endCurrent(_ session: Session) {
        if current() == session { unlink(currentFile) }
    }

    /// `20261129-101500`, in UTC.
    static func stamp(_ date: Date) -> String {
        let iso = ISO8601.format(date)  // 2026-11-29T10:15:00Z or with fractions
        let digits = iso.prefix(19).filter(\.isNumber)
        return String(digits.prefix(8)) + "-" + String(digits.dropFirst(8).prefix(6))
    }

    /// A name as a folder's: ASCII letters, digits and dashes, at most 40.
    static func slug(_ name: String) -> String {
        var out = ""
        for scalar in name.lowercased().unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) {
                out.unicodeScalars.append(scalar)
            } else if !out.hasSuffix("-"), !out.isEmpty {
                out += "-"
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        let cut = String(out.prefix(40))
        return cut.isEmpty ? "session" : cut
    }

    /// A session's id: `YYYYMMDD-HHMMSS-slug`, nothing that could leave the folder.
    static func isID(_ text: String) -> Bool {
        text.count <= 64 && text.count > 16 && !text.hasPrefix(".") && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }
}
