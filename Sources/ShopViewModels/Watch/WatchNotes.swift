import Foundation
import ShopAPI

extension ShopUpdate {
    /// Events go to the timeline; findings also to the Checks tab (with the reads on both sides), and
    /// are told (the bell, or an OSC 9 notification) to a tester looking at the phone.
    static func note(_ events: [WatchEvent], _ state: inout AppState) -> [Effect] {
        state.watch.add(events)
        let user = state.context.user
        let records: [CheckRecord] = events.compactMap { event in event.finding(user: user).map { CheckRecord($0, at: event.at) } }
        state.checks.add(records)
        guard let style = state.watch.alert, let first = events.first(where: { if case .finding = $0.change { return true } else { return false } }) else { return [] }
        return [.alert(style, "reiterate-shop: " + first.text())]
    }

    /// Rounds whose reads disagreed with the reads after them, which settled with nothing to flag: one
    /// `stale-read` finding (grouped on the Checks tab however often), told on the timeline the first time.
    static func noteStaleRead(_ held: [Observation], settled: Observation, last: Observation, _ state: inout AppState) -> [Effect] {
        let g = Wording.grouped
        let reads = (held + [settled]).map { "balance \(g($0.balance)), \(g($0.total)) entries (\($0.balanceRequestID ?? "no request id"), \($0.historyRequestID ?? "no request id"))" }
        let expected = "reads of one state that agree (no write seen between them)"
        let actual = "after balance \(g(last.balance)), \(g(last.total)) entries, the reads answered \(reads.joined(separator: "; then "))"
            + ": the first answered a state the later ones do not keep (a lagging read)"
        let user = state.context.user
        let key = FindingKey(Finding(check: .staleRead, expected: "reads after a write show it, never the state from before it", actual: "reads of \(user)"),
                             method: "GET", target: "reads of \(user)")
        state.checks.add([CheckRecord(check: .contract(.staleRead), outcome: .failed, expected: expected, actual: actual, request: "watch of \(user)",
                                      requestID: settled.historyRequestID ?? settled.balanceRequestID, at: settled.at, key: key)])
        guard !state.watch.staleTold else { return [] }
        state.watch.staleTold = true
        state.watch.add([WatchEvent(at: settled.at, change: .status("stale read: \(actual) — not judged; the Checks tab counts it (stale-read)"),
                                    requestIDs: (held + [settled]).flatMap(\.requestIDs))])
        return []
    }

    /// A write of this tool: the watch does not count it as the phone's.
    static func noteOwnWrite(_ kind: ShopWrite, _ state: inout AppState) {
        // Paused too: the first round after resuming compares across it.
        guard state.watch.phase != .off else { return }
        state.watch.round.ownWriteCrossed = true
        state.watch.own.append(kind)
    }
}
