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

    /// The baseline could not be read (a read cancelled, by a quit or a stop; the balance not read at all):
    /// the write is not sent — nothing is sent that could not be judged — and the dialog says why.
    static func abortBaseline(_ why: String, _ state: inout AppState) -> [Effect] {
        guard let v = state.write.verification, v.isBaseline else { return [] }
        var effects: [Effect] = []
        for token in [v.balanceRead, v.packsRead].compactMap({ $0 }) { effects.append(.cancel(token)) }
        effects += cancel(.verificationHistory, &state) + cancel(.verificationWake, &state)
        state.write.verification = nil
        state.write.baselineFindings = []
        let noun = v.isSpend ? "spend" : "purchase"
        let text = "The \(noun) was not sent: the balance could not be read before it (\(why)); nothing changed."
        state.steps.add("the \(noun) was not sent (its baseline could not be read)")
        if state.dialogShown {
            state.write.action = ActionState(phase: .failed(text, requestID: nil))
        } else {
            state.write.action = nil
        }
        state.notice = Notice(.error, text)
        return effects
    }

    /// The baseline is settled: what the write is judged against, then the write itself.
    static func concludeBaseline(_ v: inout Verification, summary: String, _ state: inout AppState) -> [Effect] {
        // No balance read at all (a refusal, a failure): nothing to judge the write against, so it is not sent.
        if v.balanceReads.sightings.isEmpty {
            state.write.verification = v
            return abortBaseline(v.balanceReads.failure ?? "no answer", &state)
        }
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
