import Foundation
import ShopAPI
import ShopModel

// The baseline a write is judged against: read right before it is sent, by the one settled-read rule
// (`Verification` in its `.baseline` stage), against the timeline of states this machine's writes made.
extension ShopUpdate {
    /// Reads the state a write is judged against, by the one settled-read rule, before it is sent: the
    /// balance, and for a spend the history's first page and the packs (the TUI's dialog and `spend`/`buy`
    /// alike). The dialog shows the write as sending meanwhile.
    static func readBaseline(_ kind: ShopWrite, summary: String, before: Verification.Before, _ state: inout AppState) -> [Effect] {
        // No answer yet: the baseline stage reads none of `answer` (every rule asks `isBaseline` first).
        var v = Verification(kind: kind, at: state.clock ?? .distantPast, before: before, answer: .success(0))
        v.stage = .baseline(summary: summary)
        v.timeline = state.write.timeline
        state.write.verification = nil
        state.write.baselineFindings = []
        let effects = verificationReads(&v, balance: true, history: v.isSpend, packs: v.isSpend, &state)
        state.write.verification = v
        return effects
    }

    /// The baseline is settled: what the write is judged against, then the write itself.
    static func concludeBaseline(_ v: inout Verification, summary: String, _ state: inout AppState) -> [Effect] {
        let anomalies = v.settle(user: state.context.user)
        state.write.baselineFindings = anomalies
        state.checks.add(anomalies)
        var before = v.before
        let point = v.settledPoint(at: state.clock ?? v.at)
        before.balance = point?.balance
        before.historyTotal = point?.historyTotal
        if case let .read(cheer) = v.packs { before.packCheer = cheer }
        // The refusals the shop owes, by the balance just settled (the packs as the list now holds them).
        let packs = state.packs.source == .live && state.packs.unreadable.isEmpty ? state.packs.all.map(\.identifier) : nil
        before.refusals = WriteExpectation.refusals(v.kind, balance: before.balance, packs: packs, bundles: state.context.bundles)
        if let point { state.write.timeline.record(point) }
        return sendWrite(v.kind, summary: summary, before: before, &state)
    }
}
