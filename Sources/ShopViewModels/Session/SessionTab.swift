import Foundation
import ShopAPI

// The Session tab (7; issue 46): the open test session as `session show` says it, and its keys: N opens one
// (a name typed), n adds a note, C closes it into its bundle. The program keeps the record (`SessionKeeper`,
// ShopProbes' test sessions): the view models ask, show what it answers, put the findings other commands
// made into the Checks tab, and let the header follow a balance they settled.

/// Keeps the open test session for the TUI: reads it, opens, notes and closes one.
public protocol SessionKeeper: Sendable {
    /// The open session as the tab shows it, and what other processes added since the last read (nil: none open).
    func read() async -> SessionRead
    func start(name: String) async -> Result<Void, SessionFailure>
    func note(_ text: String) async -> Result<Void, SessionFailure>
    /// Closes the open session into its bundle: the words that name the folder and the archive.
    func close() async -> Result<String, SessionFailure>
}

/// Why a session could not be opened, noted or closed, in words.
public struct SessionFailure: Error, Sendable, Equatable {
    public var words: String
    public init(_ words: String) { self.words = words }
}

/// One read of the open session for the TUI.
public struct SessionRead: Sendable, Equatable {
    public var view: SessionTabView?
    /// Findings other commands (`buy`, `negative`, the proxy…) added since the last read: for the Checks tab.
    public var othersFindings: [CheckRecord]
    /// The latest balance another command of the session settled (two reads that agree, or a write's
    /// settled reads), for the header: user, balance, when.
    public var settled: SettledBalance?

    public init(view: SessionTabView?, othersFindings: [CheckRecord] = [], settled: SettledBalance? = nil) {
        self.view = view
        self.othersFindings = othersFindings
        self.settled = settled
    }
}

public struct SettledBalance: Sendable, Equatable {
    public var user: String
    public var balance: Int
    public var at: Date
    public var command: String

    public init(user: String, balance: Int, at: Date, command: String) {
        self.user = user
        self.balance = balance
        self.at = at
        self.command = command
    }
}

/// The open session as lines to show (made by the program from its summary).
public struct SessionTabView: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case heading, plain, muted, warning, finding }
    public struct Line: Sendable, Equatable {
        public var text: String
        public var kind: Kind
        public init(_ text: String, _ kind: Kind = .plain) {
            self.text = text
            self.kind = kind
        }
    }

    public var name: String
    public var findings: Int
    public var lines: [Line]

    public init(name: String, findings: Int, lines: [Line]) {
        self.name = name
        self.findings = findings
        self.lines = lines
    }
}

public struct SessionTabState: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// Not read yet, or the program keeps no sessions here.
        case unknown
        case none
        case open(SessionTabView)
    }

    public internal(set) var phase: Phase = .unknown
    /// The first line shown.
    public internal(set) var scroll = 0
    /// Whether the program keeps sessions (nil keeper: the tab says so).
    public var available = false
    /// A read is out (never two at once).
    var reading = false

    public init() {}

    public var view: SessionTabView? { if case let .open(view) = phase { view } else { nil } }
}

extension ShopUpdate {
    static let sessionReadEvery = 8  // ticks of the spinner's clock between reads while the TUI runs (~2 s)

    /// `7`: the tab, read again.
    static func openSession(_ state: inout AppState) -> [Effect] {
        openTab(.session, &state)
        return readSession(&state)
    }

    static func readSession(_ state: inout AppState) -> [Effect] {
        guard state.session.available, !state.session.reading else { return [] }
        state.session.reading = true
        return [.readSession]
    }

    /// What a read of the session brought: the tab's lines, others' findings into the Checks tab (kept
    /// out of the session: they are in it already), and a balance settled elsewhere into the header when
    /// it is this user's and newer than the one shown.
    static func sessionRead(_ read: SessionRead, _ state: inout AppState) -> [Effect] {
        state.session.reading = false
        state.session.phase = read.view.map { .open($0) } ?? .none
        if let count = state.session.view?.lines.count { state.session.scroll = min(state.session.scroll, max(0, count - 1)) }
        if !read.othersFindings.isEmpty {
            state.checks.add(read.othersFindings, journaled: false)
        }
        // Not over a read out for the balance (its answer is what the header waits for), nor during a write.
        if let settled = read.settled, settled.user == state.context.user, settled.at > (state.balance.at ?? .distantPast), !state.isWriting,
           !state.balance.isLoading {
            state.balance = .loaded(Known(settled.balance, at: settled.at, source: .live))
            state.steps.add("the balance \(Wording.grouped(settled.balance)) settled by \(settled.command) (the session)")
        }
        return []
    }

    /// Keys on the Session tab.
    static func sessionAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        switch action {
        case .sessionStart:
            guard state.session.available else { return sessionsUnavailable(&state) }
            if let view = state.session.view {
                state.notice = Notice(.error, "The session \(view.name) is open: close it first (C)")
                return []
            }
            state.screen.prompt = PromptState(kind: .sessionName)
            return []
        case .sessionNote:
            guard state.session.available else { return sessionsUnavailable(&state) }
            guard state.session.view != nil else {
                state.notice = Notice(.error, "No test session is open: N opens one")
                return []
            }
            state.screen.prompt = PromptState(kind: .sessionNote)
            return []
        case .sessionClose:
            guard state.session.available else { return sessionsUnavailable(&state) }
            guard let view = state.session.view else {
                state.notice = Notice(.error, "No test session is open: N opens one")
                return []
            }
            state.notice = Notice(.info, "closing the session \(view.name) into its bundle…")
            return [.closeSession]
        case .back:
            state.notice = nil
            return []
        default:
            let count = state.session.view?.lines.count ?? 0
            if let moved = moved(state.session.scroll, by: action, count: count, page: state.screen.pageSize) { state.session.scroll = moved }
            return []
        }
    }

    static func sessionsUnavailable(_ state: inout AppState) -> [Effect] {
        state.notice = Notice(.error, "Test sessions are not kept here: no state folder (set XDG_STATE_HOME or HOME)")
        return []
    }

    /// Enter in the session's prompts: open one by the name typed, or add the note.
    static func runSessionPrompt(_ prompt: PromptState, _ state: inout AppState) -> [Effect] {
        let text = prompt.text.trimmingCharacters(in: .whitespaces)
        state.screen.prompt = nil
        switch prompt.kind {
        case .sessionName:
            let name = text.isEmpty ? "session" : text
            state.notice = Notice(.info, "opening the session \(name)…")
            return [.startSession(name: name)]
        default:
            guard !text.isEmpty else { return [] }
            return [.noteSession(text)]
        }
    }

    /// The program answered N, n or C.
    static func sessionChanged(_ result: Result<String, SessionFailure>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(words):
            state.notice = Notice(.info, words)
            state.steps.add(words)
        case let .failure(failure):
            state.notice = Notice(.error, failure.words)
        }
        return readSession(&state)
    }
}
