import Foundation
import Synchronization

/// A test session's record (issue 46; docs/sessions.md): one append-only file, `record.jsonl` in the
/// session's folder, that every command and the TUI append to while the session is open — exchanges,
/// findings, notes, commands, files written. One JSON object a line.
///
/// Crash-safe: each line is one `write(2)` to a descriptor opened with `O_APPEND`, so lines from
/// several processes (the TUI, a `buy`, the proxy) never interleave and a process killed mid-line
/// leaves at most its own last line cut short (the reader counts it and skips it). A write is appended
/// before it is sent (`sent`), then again with its answer; those lines and every finding, note and
/// command line are flushed to the disk (`fdatasync`) before the call returns.
///
/// Bounded the way the exchange spill is: past `bodyLimit` bytes a read is kept without its bodies; past
/// `readLimit` a read is only counted (the count is appended as the command ends). A write, a finding
/// or a note is always kept.
public final class SessionJournal: Sendable {
    public static let recordName = "record.jsonl"
    public static let bodyLimit = 64 << 20
    public static let readLimit = 128 << 20

    /// The session's folder.
    public let folder: String
    /// The command that appends (`buy`, `tui`, `proxy`…), on each of its lines.
    public let command: String
    private let bodyLimit: Int
    private let readLimit: Int
    private let handle: Mutex<Handle>

    struct Handle {
        var fd: Int32
        var droppedReads = 0
        var failed = false
        /// The session was closed while this journal was open: nothing more is appended.
        var closedUnder = false
        /// The bound was reached and said so in the record (once).
        var boundSaid = false
    }

    /// The marker `TestSessions` makes in a session's folder as it closes it: a journal that sees it appends nothing more.
    public static let closedMarker = "closed"


    /// The open session's record in `folder`, appended to as `command`; nil when it cannot be opened
    /// (never created here: `TestSessions.start` makes it).
    public init?(folder: String, command: String, bodyLimit: Int = SessionJournal.bodyLimit, readLimit: Int = SessionJournal.readLimit) {
        let fd = open(folder + "/" + Self.recordName, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        self.folder = folder
        self.command = command
        self.bodyLimit = bodyLimit
        self.readLimit = readLimit
        handle = Mutex(Handle(fd: fd))
    }

    deinit {
        handle.withLock { h in
            if h.fd >= 0 { close(h.fd) }
        }
    }

    /// Whether a line could not be appended (the disk full, the file gone): `session show` is then incomplete.
    public var failed: Bool { handle.withLock { $0.failed } }
    /// Whether the session was closed while this journal appended to it (its later lines are not in it).
    public var closedUnder: Bool { handle.withLock { $0.closedUnder } }

    // MARK: What is appended

    /// The session's first line (`TestSessions.start` writes it).
    public func started(_ meta: SessionMeta) { append(SessionLine(kind: .start, command: command, meta: meta), sync: true) }

    /// A finding a command's judge made (a write's check, the watch, the ledger, `negative`, `explore`,
    /// `replay`). The contract's and the pins' findings on an answer travel with its exchange.
    public func finding(_ finding: ShopFinding) {
        var line = SessionLine(kind: .finding, command: command)
        line.finding = SessionFinding(finding)
        append(line, sync: true)
    }

    /// A check that passed (a write's verification): the Checks tab of a TUI in the session shows it too.
    public func passed(_ check: ShopFinding) {
        var line = SessionLine(kind: .passed, command: command)
        line.finding = SessionFinding(check)
        append(line, sync: false)
    }

    /// A tester's note.
    public func note(_ text: String) {
        var line = SessionLine(kind: .note, command: command)
        line.text = text
        append(line, sync: true)
    }

    /// A command began (its arguments, which never hold a token: tokens come from the environment).
    public func commandStarted(_ arguments: [String]) {
        var line = SessionLine(kind: .commandStart, command: command)
        line.arguments = arguments
        append(line, sync: true)
    }

    /// A command ended with `status`; the reads the bound left out are counted here.
    public func commandEnded(_ status: Int32) {
        var line = SessionLine(kind: .commandEnd, command: command)
        line.status = status
        // Counted once: the count goes with this line and starts again.
        let dropped = handle.withLock { h in
            defer { h.droppedReads = 0 }
            return h.droppedReads
        }
        if dropped > 0 { line.droppedReads = dropped }
        append(line, sync: true)
    }

    /// A file a command wrote (a HAR, a report, a case), by its path.
    public func file(_ path: String, what: String) {
        var line = SessionLine(kind: .file, command: command)
        line.text = what
        line.path = path
        append(line, sync: true)
    }

    /// The ledger's verdict on one App Store transaction (every verdict, a credit included: `session
    /// show` lists the session's purchases with the latest; a finding is appended as one besides).
    public func verdict(transaction: String, product: String?, verdict: String, blame: Blame?, requestIDs: [String]) {
        var line = SessionLine(kind: .verdict, command: command)
        line.transaction = transaction
        line.text = product
        line.verdict = verdict
        line.blame = blame
        line.requestIDs = requestIDs
        append(line, sync: true)
    }

    /// A balance the one settled-read rule settled (a write's reads after it): the TUI's header follows it.
    public func settled(user: String, balance: Int, base: String) {
        var line = SessionLine(kind: .settled, command: command)
        line.text = user
        line.path = base
        line.balance = balance
        append(line, sync: false)
    }

    /// The session closed into its bundle at `bundle`.
    public func closed(bundle: String) {
        var line = SessionLine(kind: .close, command: command)
        line.path = bundle
        append(line, sync: true)
    }

    /// A write on its way (before its answer): a process killed now leaves it in the record.
    func sent(_ exchange: Exchange, key: String, base: String) {
        var line = SessionLine(kind: .sent, command: command)
        line.key = key
        line.entry = HAR.entry(exchange, base: base)
        append(line, sync: true)
    }

    /// An exchange with its answer (or failure) and the findings of the checks before the journal.
    func exchange(_ exchange: Exchange, key: String, base: String) {
        let write = exchange.method != "GET"
        let size = handle.withLock { h in h.fd >= 0 ? Self.size(h.fd) : 0 }
        var e = exchange
        // A read with a finding is kept whatever the size (a finding is never dropped).
        if !write, e.findings.isEmpty, size >= readLimit {
            let first = handle.withLock { h -> Bool in
                h.droppedReads += 1
                defer { h.boundSaid = true }
                return !h.boundSaid
            }
            // Said in the record at once (a command killed later never says its count).
            if first { append(SessionLine(kind: .bound, command: command), sync: true) }
            return
        }
        if !write, size >= bodyLimit {
            e.requestBodyPreview = nil
            e.responseBodyPreview = nil
        }
        var line = SessionLine(kind: .exchange, command: command)
        line.key = key
        line.entry = HAR.entry(e, base: base)
        append(line, sync: write || !e.findings.isEmpty)
    }

    private func append(_ line: SessionLine, sync: Bool) {
        guard let data = try? SessionLine.encoder.encode(line) else { return }
        // A newline before as well as after: a line another process left cut short (killed mid-write, the
        // disk full) ends there, and this one is read whole after it (the reader skips empty lines).
        let bytes = [UInt8(ascii: "\n")] + Array(data) + [UInt8(ascii: "\n")]
        let marker = folder + "/" + Self.closedMarker
        handle.withLock { h in
            guard h.fd >= 0, !h.failed, !h.closedUnder else { return }
            // A session closed meanwhile takes no more lines (its bundle is written from what it held).
            if line.kind != .close, access(marker, F_OK) == 0 {
                h.closedUnder = true
                return
            }
            // One write: O_APPEND puts the whole line at the end, whoever else appends.
            let n = bytes.withUnsafeBytes { buffer -> Int in
                var n: Int
                repeat { n = write(h.fd, buffer.baseAddress, buffer.count) } while n < 0 && errno == EINTR
                return n
            }
            guard n == bytes.count else { h.failed = true; return }
            if sync, fdatasync(h.fd) != 0, errno != EINVAL { h.failed = true }
        }
    }

    private static func size(_ fd: Int32) -> Int {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
    }

    /// The observer every client's pipeline carries (after the checks, so the exchange keeps their
    /// findings): each exchange goes into the session open at the time (`active`), if any — a session
    /// opened or closed from the TUI takes effect at once. Requests sent to `base` are kept by their path.
    /// `journal`: this one always instead (a test's own).
    public static func observer(base: String, journal: SessionJournal? = nil) -> any ExchangeObserver {
        JournalObserver(base: base, tag: "\(getpid())-\(UInt32.random(in: 0...UInt32.max))", fixed: journal)
    }
}

/// Appends each exchange of a pipeline to the session: a write as it is sent and as it ends, a read as it ends.
struct JournalObserver: ExchangeObserver {
    let base: String
    /// This pipeline's own, so two pipelines in one process never pair each other's serials.
    let tag: String
    let fixed: SessionJournal?

    private var journal: SessionJournal? { fixed ?? SessionJournal.active }

    func sent(_ e: HTTPExchange) async {
        guard e.request.key.method != .get, let journal else { return }
        journal.sent(ExchangeLogObserver.record(e), key: key(e), base: base)
    }

    func finished(_ e: HTTPExchange) async -> [Finding] {
        journal?.exchange(ExchangeLogObserver.record(e), key: key(e), base: base)
        return []
    }

    private func key(_ e: HTTPExchange) -> String { "\(tag)-\(e.serial)" }
}

extension SessionJournal {
    private static let current = Mutex<SessionJournal?>(nil)

    /// The open session's journal this process appends to (set once as a command starts; nil when no
    /// session is open): the judges that are not a pipeline's (a write's checks, the watch, the ledger)
    /// append their findings through it.
    public static var active: SessionJournal? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// A judge's finding, into the open session if there is one.
    public static func record(_ finding: ShopFinding) { active?.finding(finding) }

    /// A file written, into the open session if there is one.
    public static func wrote(_ path: String, what: String) { active?.file(path, what: what) }
}
