import Foundation
import ShopCompare
import TerminalText

/// What the program does for `D` and `S` (it knows the environments and can make clients for them);
/// the view models only ask. A failure is one line in plain words.
public protocol Comparer: Sendable {
    /// Compares `a` with `b` (each an environment and user, or a snapshot file).
    func compare(_ a: CompareSide, with b: CompareSide, what: ComparedPart) async -> Result<DiffResult, CompareFailure>
    /// Saves what `user` sees as a snapshot file; answers its path.
    func saveSnapshot(user: String) async -> Result<String, CompareFailure>
}

public struct CompareFailure: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A comparison made: its two sides, what was compared, and the differences.
public struct DiffResult: Equatable, Sendable {
    public var what: ComparedPart
    public var a: SideDescription
    public var b: SideDescription
    public var differences: [Difference]
    /// History entries near the last page compared that were not judged (see `Comparison`).
    public var pastTheEdge: Int

    public init(what: ComparedPart, a: SideDescription, b: SideDescription, differences: [Difference], pastTheEdge: Int = 0) {
        self.what = what
        self.a = a
        self.b = b
        self.differences = differences
        self.pastTheEdge = pastTheEdge
    }
}

/// The diff view (`D`): the differences, one a row, the selected one's fields side by side.
public struct DiffViewState: Equatable, Sendable {
    public var result: DiffResult
    /// The result's differences, and the selected one.
    public internal(set) var differences: SelectableList<Difference>

    public init(result: DiffResult) {
        self.result = result
        differences = SelectableList(result.differences)
    }
}

extension ComparedPart {
    /// What `D` compares on each tab: the packs on the Shop tab, the history on the History tab, else
    /// the balance.
    public static func of(_ tab: Tab) -> ComparedPart {
        switch tab {
        case .shop: return .packs
        case .history: return .history
        case .requests, .checks, .live, .purchases, .session: return .balance
        }
    }
}

extension ShopUpdate {
    /// `D`: asks what to compare this tab with (Tab completes from the environments, the users and the
    /// snapshots saved).
    static func beginCompare(_ state: inout AppState) -> [Effect] {
        state.screen.prompt = PromptState(kind: .compare)
        return []
    }

    static func completeCompare(_ state: inout AppState) {
        guard var prompt = state.screen.prompt, prompt.kind == .compare else { return }
        // The user looked at now is no other side: every other user is (a `u` switch changes which).
        let targets = state.compareTargets.filter { $0 != "user:" + state.context.user }
        guard !targets.isEmpty else { return }
        let typed = prompt.text
        // Cycle through the targets that start with what was typed before the first Tab.
        let next = targets.firstIndex(of: typed).map { (targets.index(after: $0)) % targets.count }
            ?? targets.firstIndex { $0.hasPrefix(typed) } ?? 0
        prompt.text = targets[next]
        state.screen.prompt = prompt
    }

    static func runCompare(_ typed: String, _ state: inout AppState) -> [Effect] {
        let what = ComparedPart.of(state.screen.tab)
        let target: CompareSide
        do {
            // Another environment, the same user.
            target = try CompareSide.parse(typed).defaultingUser(state.context.user)
        } catch {
            state.notice = Notice(.error, "Could not compare: \(Sanitizer.line(error.description))")
            return []
        }
        let shown = Sanitizer.line(target.description)
        // A comparison still out is superseded: it is stopped, not left running.
        let superseded = cancel(.compare, &state)
        state.steps.add("compared the \(what.rawValue) with \(shown) (D)")
        state.notice = Notice(.info, "Comparing the \(what.rawValue) of \(state.context.user) with \(shown)…")
        return superseded + [.compare(state.ask(.compare), a: .live(env: nil, user: state.context.user), b: target, what: what)]
    }

    static func compared(_ result: Result<DiffResult, CompareFailure>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(diff):
            let count = diff.differences.count
            // A dialog or a prompt opened meanwhile keeps the keys; the diff is not shown, only its
            // summary, and `D` (which always asks what to compare with) compares again to show it.
            guard state.mode == .browse || state.mode == .diff else {
                state.notice = Notice(.info, "Compared with \(diff.b.name): " + (count == 0 ? "the same." : DiffReport.summary(diff.differences)) + " (D compares again to show the diff)")
                return []
            }
            state.screen.focus = .diff(DiffViewState(result: diff))
            state.notice = Notice(.info, count == 0 ? "The same: no difference (Esc goes back)." : DiffReport.summary(diff.differences) + " (n/N between them, Esc goes back)")
        case let .failure(failure):
            state.notice = Notice(.error, "Could not compare: \(failure.message)")
        }
        return []
    }

    /// Keys in the diff view.
    static func diffAction(_ action: Action, _ state: inout AppState) -> [Effect] {
        guard case var .diff(view) = state.screen.focus else { return [] }
        switch action {
        case .back:
            state.screen.focus = .browse
            state.notice = nil
            return []
        case .nextMatch:
            view.differences.cycle(1)
        case .previousMatch:
            view.differences.cycle(-1)
        default:
            _ = view.differences.move(action, page: state.screen.pageSize)
        }
        state.screen.focus = .diff(view)
        return []
    }

    /// `S`: saves what this user sees as a snapshot, to compare with later.
    static func saveSnapshot(_ state: inout AppState) -> [Effect] {
        state.notice = Notice(.info, "Saving a snapshot of \(state.context.user)…")
        state.steps.add("saved a snapshot (S)")
        return [.saveSnapshot(user: state.context.user)]
    }

    static func snapshotSaved(_ result: Result<String, CompareFailure>, _ state: inout AppState) -> [Effect] {
        switch result {
        case let .success(path):
            if !state.compareTargets.contains(path) { state.compareTargets.append(path) }
            state.notice = Notice(.info, "Saved the snapshot \(Sanitizer.line(path)) (D compares with it).")
        case let .failure(failure):
            state.notice = Notice(.error, "The snapshot was not saved: \(failure.message)")
        }
        return []
    }
}
