import Foundation
import JSONTokens
import ShopAPI
import ShopCache
import TerminalText

/// What the user did, in words: the steps of a bug report ("opened History", "went to entry 57 of
/// 230 · page 2 of 5", "spent 25 cheer on …"). The last `capacity`, oldest first. Moving through a
/// list makes one step that follows the cursor, not one step per key.
public struct StepLog: Equatable, Sendable {
    public static let capacity = 30
    public private(set) var steps: [String] = []
    /// Steps a later one of the same kind replaces: a cursor moving, a failure told again.
    enum Kind: Hashable, Sendable {
        case historyMove, packMove
        case error(requestID: String)
    }

    /// The kind of the last step, when a later step of the same kind replaces it.
    private var lastKind: Kind?

    public init() {}

    mutating func add(_ text: String, replacing kind: Kind? = nil) {
        if let kind, kind == lastKind, !steps.isEmpty {
            steps[steps.count - 1] = text
        } else {
            steps.append(text)
            if steps.count > Self.capacity { steps.removeFirst(steps.count - Self.capacity) }
        }
        lastKind = kind
    }

    /// Rewrites the last step when it is of `kind` (what the screen says of it changed after it was
    /// written: a count that came with a later page); else nothing.
    mutating func revise(_ text: String, ifLast kind: Kind) {
        guard lastKind == kind, !steps.isEmpty else { return }
        steps[steps.count - 1] = text
    }
}

extension ShopUpdate {
    // Each handler adds the step it knows the intent of (`state.steps.add`): a tab opened, a move
    // (one step that follows the cursor), a filter, a prompt run, a write sent, a user switch.

    static func noteStart(_ state: inout AppState) {
        state.steps.add("started reiterate-shop as \(state.context.user) on \(state.context.environment.uppercased()) (\(state.context.baseURL))")
    }

    /// What the app answered is a step too: a new error line, whichever part showed it. The same
    /// failure told again in other words (its verification settled) replaces its step.
    static func noteShownError(since shown: Notice?, _ state: inout AppState) {
        guard let notice = state.notice, notice.kind == .error, notice != shown else { return }
        state.steps.add("→ the app showed: \(notice.text)", replacing: notice.requestID.map { .error(requestID: $0) })
        state.lastError = notice
    }

    /// `name`: the pack's name as the shop lists it (a spend's), else its identifier is said.
    static func describe(_ kind: ShopWrite, name: String?) -> String {
        switch kind {
        case let .spend(s):
            let with = s.comment.map { " with the comment “\(Sanitizer.line($0))”" } ?? " with no comment"
            return "spent \(Wording.grouped(s.amount)) cheer on “\(Sanitizer.line(name ?? s.product))”\(with)"
        case let .purchase(p):
            return "bought \(Sanitizer.line(p.identifier)) with transaction id \(p.transactionID)"
        }
    }
}
