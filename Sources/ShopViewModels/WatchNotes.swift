import Foundation
import ShopAPI

extension ShopUpdate {
    /// Events go to the timeline; findings also to the Checks tab (with the reads on both sides), and
    /// are told (the bell, or an OSC 9 notification) to a tester looking at the phone.
    static func note(_ events: [WatchEvent], _ state: inout AppState) -> [Effect] {
        state.watch.add(events)
        let records: [CheckRecord] = events.compactMap { event in
            guard case let .finding(check, expected, actual) = event.change else { return nil }
            let sides = event.requestIDs.isEmpty ? "" : " (reads \(event.requestIDs.joined(separator: ", ")))"
            let cause = event.causedBy.map { " — " + $0.words } ?? ""
            var record = CheckRecord(check: .watch(check), outcome: .failed, expected: expected, actual: actual + sides + cause,
                                     request: "watch of \(state.context.user)", requestID: event.requestIDs.last, at: event.at)
            // Pairing the app's writes tells whose fault it is.
            if state.watch.pairing { record.blame = check.blame }
            return record
        }
        state.checks.add(records)
        guard let style = state.watch.alert, let first = events.first(where: { if case .finding = $0.change { return true } else { return false } }) else { return [] }
        return [.alert(style, "reiterate-shop: " + first.text())]
    }

    /// A write of this tool: the watch does not count it as the phone's.
    static func noteOwnWrite(_ kind: ActionKind, _ state: inout AppState) {
        // Paused too: the first round after resuming compares across it.
        guard state.watch.phase != .off else { return }
        state.watch.round.ownWriteCrossed = true
        switch kind {
        case let .spend(product, _, amount, comment): state.watch.own.append(.spend(product: product, amount: amount, comment: comment))
        // The credit the environment's bundle of that id gives (never read from the identifier typed).
        case let .purchase(identifier, _): state.watch.own.append(.purchase(amount: WriteExpectation.credit(identifier, bundles: state.context.bundles)))
        }
    }
}
