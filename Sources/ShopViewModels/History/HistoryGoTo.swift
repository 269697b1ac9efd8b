import Foundation
import ShopAPI
import TerminalText

/// What `:` takes: `4512` (an entry), `p91` (a page) or `2026-10-01` (a date).
public enum GoToTarget: Equatable, Sendable {
    case entry(Int)
    case page(Int)
    case day(year: Int, month: Int, day: Int)

    public init?(_ text: String) {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = t.replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "_", with: "")
        if let n = Int(digits), n >= 1 {
            self = .entry(n)
        } else if digits.hasPrefix("p"), let n = Int(digits.dropFirst()), n >= 1 {
            self = .page(n)
        } else {
            let parts = t.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 4, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
                  (1...12).contains(m), (1...31).contains(d) else { return nil }
            self = .day(year: y, month: m, day: d)
        }
    }
}

extension ShopUpdate {
    // MARK: the prompt (`:` and `/`)

    /// Enter in the prompt: go to an entry, a page or a date; or find the text.
    static func runPrompt(_ state: inout AppState) -> [Effect] {
        guard let prompt = state.screen.prompt else { return [] }
        if prompt.kind == .sessionName || prompt.kind == .sessionNote { return runSessionPrompt(prompt, &state) }
        state.screen.prompt = nil
        let text = prompt.text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return [] }
        switch prompt.kind {
        case .user:
            return switchUser(to: text, &state)
        case .compare:
            return runCompare(text, &state)
        case .fault:
            return runFault(text, &state)
        case .sessionName, .sessionNote:
            return []  // taken above
        case .find:
            state.steps.add("searched the history for “\(Sanitizer.line(text))” (/)")
            return startFind(text, &state)
        case .goTo:
            state.steps.add("asked to go to “\(Sanitizer.line(text))” (:)")
            guard let target = GoToTarget(text) else {
                state.notice = Notice(.error, "Go to takes an entry number (4512), a page (p91) or a date (2026-10-01), not “\(text)”")
                return []
            }
            return goTo(target, typed: text, &state)
        }
    }

    static func goTo(_ target: GoToTarget, typed: String, _ state: inout AppState) -> [Effect] {
        let h = state.history
        state.history.dateSearch = nil
        switch target {
        case let .entry(n):
            guard let count = h.count else { return [] }
            if n > count { state.notice = Notice(.info, "There \(count == 1 ? "is" : "are") \(Wording.grouped(count)) entr\(count == 1 ? "y" : "ies"); went to the last") }
            return moveCursor(to: n - 1, &state)
        case let .page(p):
            guard let last = h.lastPage else { return [] }
            if p > last { state.notice = Notice(.info, "There \(last == 1 ? "is" : "are") \(Wording.grouped(last)) page\(last == 1 ? "" : "s"); went to the last") }
            return moveCursor(to: h.firstIndex(ofPage: min(p, last)), &state)
        case let .day(y, m, d):
            guard let next = DateText.dayBounds(year: y, month: m, day: d, zone: state.screen.timeZone)?.next else {
                state.notice = Notice(.error, "“\(typed)” is not a date")
                return []
            }
            state.history.dateSearch = DateSearch(day: typed, before: next, low: 1, high: .max)
            return dateSearchStep(&state)
        }
    }
}
