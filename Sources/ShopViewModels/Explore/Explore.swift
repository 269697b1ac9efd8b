import Foundation
import ShopAPI

// `X`: `explore`'s campaign from the TUI (issue 45, item 8). The program runs it (`Explorer`, made by ShopProbes'
// campaign): the view models ask for it, show its progress on the notice line, put each case's findings on the
// Checks tab, and say where its files are when it ends. It writes, so it is off in a read-only environment, and it
// asks once more before it starts.

/// Runs the campaign for the TUI (the program's: `ExploreCampaign` over the session's client).
public protocol Explorer: Sendable {
    /// The campaign in words, said before it starts: how many cases, the budget and pace, what it spends and as whom.
    var plan: String { get }
    /// Runs it to its end, or until the task is cancelled (the findings so far are kept), telling each case as it ends.
    func explore(tell: @escaping @Sendable (ExploreNews) async -> Void) async -> ExploreDone
}

/// One case ended: how far the campaign is, and what the case found.
public struct ExploreNews: Sendable, Equatable {
    public var done: Int
    public var total: Int
    public var name: String
    public var findings: [ShopFinding]
    /// When it ended (the update has no clock of its own).
    public var at: Date

    public init(done: Int, total: Int, name: String, findings: [ShopFinding], at: Date) {
        self.at = at
        self.done = done
        self.total = total
        self.name = name
        self.findings = findings
    }
}

/// The campaign ended: its summary line, where its files are, and whether it was stopped.
public struct ExploreDone: Sendable, Equatable {
    public var summary: String
    public var folder: String?
    public var stopped: Bool
    /// It could not start (the first reads failed), in words.
    public var failure: String?

    public init(summary: String, folder: String?, stopped: Bool, failure: String? = nil) {
        self.summary = summary
        self.folder = folder
        self.stopped = stopped
        self.failure = failure
    }
}

/// Where the TUI's campaign stands.
public struct ExploreState: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        case idle
        /// `X` was pressed once: the plan is on the notice line; `X` again starts it, any other key does not.
        case confirming
        case running
        /// `X` while it ran: it stops after the request out.
        case stopping
    }

    public internal(set) var phase: Phase = .idle
    public internal(set) var done = 0
    public internal(set) var total = 0
    /// Cases with a finding so far.
    public internal(set) var failing = 0
    /// The plan, when the program can run a campaign here (nil: `X` says it cannot).
    public var plan: String?

    public init(plan: String? = nil) { self.plan = plan }
}

extension ShopUpdate {
    /// `X`: say the plan, then start on a second `X`; while it runs, stop it.
    static func explore(_ state: inout AppState) -> [Effect] {
        switch state.explore.phase {
        case .idle:
            guard !state.context.readOnly else {
                state.notice = Notice(.error, "Explore writes: refused in a read-only environment")
                return []
            }
            guard let plan = state.explore.plan else {
                state.notice = Notice(.error, "Explore is not available here (a read-only or production environment, or no client)")
                return []
            }
            state.explore.phase = .confirming
            state.notice = Notice(.pending, "Explore: \(plan). X again to start it; any other key does not")
            return []
        case .confirming:
            state.explore = ExploreState(plan: state.explore.plan)
            state.explore.phase = .running
            state.steps.add("explore started (X)")
            state.notice = Notice(.pending, "Explore: starting… (X stops it; its findings go to the Checks tab)")
            return [.explore]
        case .running:
            state.explore.phase = .stopping
            state.notice = Notice(.pending, "Explore: stopping after the request out; the findings so far are kept")
            return [.stopExplore]
        case .stopping:
            return []
        }
    }

    /// Any key but `X` while the plan is shown: the campaign is not started.
    static func leaveExploreConfirmation(_ action: Action, _ state: inout AppState) {
        guard state.explore.phase == .confirming, action != .explore else { return }
        state.explore.phase = .idle
    }

    static func exploreNews(_ news: ExploreNews, _ state: inout AppState) -> [Effect] {
        guard state.explore.phase == .running || state.explore.phase == .stopping else { return [] }
        state.explore.done = news.done
        state.explore.total = news.total
        if !news.findings.isEmpty {
            state.explore.failing += 1
            state.checks.add(news.findings.map { CheckRecord($0, at: news.at) })
        }
        if state.explore.phase == .running {
            let found = state.explore.failing == 0 ? "" : ", \(state.explore.failing) with findings (Checks tab)"
            state.notice = Notice(.pending, "Explore \(news.done)/\(news.total): \(news.name)\(found). X stops it")
        }
        return []
    }

    static func exploreDone(_ done: ExploreDone, _ state: inout AppState) -> [Effect] {
        state.explore.phase = .idle
        if let failure = done.failure {
            state.notice = Notice(.error, "Explore did not start: \(failure)")
            return []
        }
        let files = done.folder.map { "; report, findings and replay cases in \($0)" } ?? ""
        state.notice = Notice(state.explore.failing > 0 ? .error : .info, "Explore \(done.stopped ? "stopped" : "done"): \(done.summary)\(files)")
        state.steps.add("explore \(done.stopped ? "stopped" : "done")")
        // What the campaign wrote moved the balance and the history: read them again.
        return refresh(&state)
    }
}
