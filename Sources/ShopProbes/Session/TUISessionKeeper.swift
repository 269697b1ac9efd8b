import Foundation
import ShopAPI
import ShopSettings
import ShopViewModels

/// The TUI's test session (the Session tab's `N`, `n`, `C`; the Checks tab and the header follow it): the
/// record read again when it has grown, what other processes added since the last read, and the session
/// opened and closed from here (this process appends to it at once: `SessionJournal.active`).
public actor TUISessionKeeper: SessionKeeper {
    let sessions: TestSessions
    let environment: String
    let baseURL: String
    let user: String
    let tokenVariable: String
    let secrets: [String]
    let arguments: [String]
    private let pid = getpid()
    /// The record last read: which session, its size, and what it said.
    private var lastID: String?
    private var lastSize = -1
    private var lastRead = SessionRead(view: nil)
    /// Others' findings and settled balances already handed over, by the session.
    private var othersHanded = 0
    private var passedHanded = 0
    private var settledHanded: Date?

    public init(sessions: TestSessions, environment: String, baseURL: String, user: String, tokenVariable: String, secrets: [String], arguments: [String]) {
        self.sessions = sessions
        self.environment = environment
        self.baseURL = baseURL
        self.user = user
        self.tokenVariable = tokenVariable
        self.secrets = secrets
        self.arguments = arguments
    }

    public func read() async -> SessionRead {
        follow()
        guard let open = sessions.current() else {
            lastID = nil
            lastSize = -1
            lastRead = SessionRead(view: nil)
            return lastRead
        }
        var info = stat()
        let size = stat(open.folder + "/" + SessionJournal.recordName, &info) == 0 ? Int(info.st_size) : -1
        if open.id == lastID, size == lastSize { return SessionRead(view: lastRead.view) }
        if open.id != lastID {
            othersHanded = 0
            passedHanded = 0
            settledHanded = nil
        }
        lastID = open.id
        lastSize = size
        guard let record = SessionRecord.read(folder: open.folder) else { return SessionRead(view: nil) }
        let summary = SessionSummary(record)
        let others = record.findings.filter { $0.pid != pid }, othersPassed = record.passed.filter { $0.pid != pid }
        let fresh = others.dropFirst(othersHanded).map { ($0, CheckRecord.Outcome.failed) } + othersPassed.dropFirst(passedHanded).map { ($0, .passed) }
        othersHanded = others.count
        passedHanded = othersPassed.count
        var settled: SettledBalance?
        // Another command's, against this TUI's shop (a command run against another environment is no news here).
        if let latest = record.settled.last(where: { $0.pid != pid && ($0.base == nil || $0.base == baseURL) }), latest.at > (settledHanded ?? .distantPast) {
            settledHanded = latest.at
            settled = SettledBalance(user: latest.user, balance: latest.balance, at: latest.at, command: latest.command)
        }
        // Named with the command that made it: the Checks tab shows where in the session it came from.
        let findings = fresh.sorted { ($0.0.at ?? .distantPast) < ($1.0.at ?? .distantPast) }.compactMap { f, outcome in
            CheckID(name: f.kind).map { kind in
                CheckRecord(ShopFinding(kind: kind, subject: f.subject + " (\(f.command ?? "another command"), in the session)", blame: f.blame,
                                        expected: f.expected, actual: f.actual, requestIDs: f.requestIDs, causedBy: f.causedBy), outcome: outcome, at: f.at ?? Date())
            }
        }
        lastRead = SessionRead(view: summary.tabView, othersFindings: Array(findings), settled: settled)
        return lastRead
    }

    /// This TUI appends to the session open now: one opened after it started (by `session start`) is joined,
    /// and one closed meanwhile (by `session close`) is left, never appended to after its close.
    private func follow() {
        let open = sessions.current()
        let active = SessionJournal.active
        if let active, active.folder != open?.folder {
            SessionJournal.active = nil
        }
        if SessionJournal.active == nil, let open, let journal = SessionJournal(folder: open.folder, command: "tui") {
            journal.commandStarted(arguments)
            SessionJournal.active = journal
        }
    }

    public func start(name: String) async -> Result<Void, SessionFailure> {
        do {
            _ = try sessions.start(name: name, build: nil, charter: nil, environment: environment, baseURL: baseURL, user: user)
        } catch {
            return .failure(SessionFailure(error.words))
        }
        let journal = sessions.journal(command: "tui")
        journal?.commandStarted(arguments)
        SessionJournal.active = journal
        return .success(())
    }

    public func note(_ text: String) async -> Result<Void, SessionFailure> {
        guard let journal = SessionJournal.active ?? sessions.journal(command: "tui") else { return .failure(SessionFailure("no test session is open: N opens one")) }
        journal.note(text)
        return journal.failed ? .failure(SessionFailure("the note could not be added to the session's record")) : .success(())
    }

    public func close() async -> Result<String, SessionFailure> {
        // This TUI's part of it ends first, so the bundle's record holds its end (reopened if the close fails).
        let ending = SessionJournal.active
        ending?.commandEnded(0)
        do {
            let closed = try sessions.closeCurrent(tokenVariable: tokenVariable, secrets: secrets)
            SessionJournal.active = nil
            return .success("closed the session into \(closed.bundle.folder) and \(closed.bundle.archive)")
        } catch {
            // Still this TUI's session (not one another process closed meanwhile): it goes on in it.
            if let ending, sessions.current()?.folder == ending.folder { ending.commandStarted(arguments) }
            return .failure(SessionFailure(error.words))
        }
    }
}

extension SessionSummary {
    /// The Session tab's lines: the summary's own words, each marked for its style.
    public var tabView: SessionTabView {
        var lines: [SessionTabView.Line] = []
        for text in self.text().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let kind: SessionTabView.Kind
            if text.hasPrefix("  incomplete:") {
                kind = .warning
            } else if !text.hasPrefix(" "), !text.isEmpty {
                kind = .heading
            } else if text.hasPrefix("  ["), groups.contains(where: { text.hasPrefix("  [\($0.kind)]") }) {
                kind = .finding
            } else if text.hasPrefix("  ") && (text.dropFirst(2).first?.isNumber ?? false) && timeline.contains(where: { text.hasSuffix($0.what) }) {
                kind = .muted
            } else {
                kind = .plain
            }
            lines.append(SessionTabView.Line(text, kind))
        }
        while lines.last?.text.isEmpty == true { lines.removeLast() }
        return SessionTabView(name: meta?.name ?? "unnamed", findings: findings, lines: lines)
    }
}

extension TUISessionKeeper {
    /// The TUI's keeper for these settings; every secret of `environment` is kept out of a bundle it writes.
    public static func make(_ settings: ResolvedSettings, environment: [String: String]) -> TUISessionKeeper {
        TUISessionKeeper(sessions: TestSessions(environment: environment), environment: settings.environment, baseURL: settings.baseURL, user: settings.user,
                         tokenVariable: settings.tokenEnv, secrets: TestSessions.secrets(environment, settings: settings),
                         arguments: Array(CommandLine.arguments.dropFirst()))
    }
}

extension TestSessions {
    /// The values no bundle file may hold: every variable of the environment named like a secret, and those
    /// the settings name whatever their names (`token_env`, `refresh_token_env`), and the proxy's password.
    public static func secrets(_ environment: [String: String], settings: ResolvedSettings? = nil) -> [String] {
        let named = environment.filter { name, _ in ["TOKEN", "KEY", "SECRET", "PASSWORD"].contains { name.uppercased().contains($0) } }.map(\.value)
        guard let settings else { return named }
        return named + [environment[settings.tokenEnv], environment[settings.refreshTokenEnv], settings.proxy?.password].compactMap { $0 }
    }
}
