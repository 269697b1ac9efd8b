import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// Issue 27, item 2: the watch reconciles entries by identity. A server that sends one slot of the page
/// unreadable (the slot fixed, the entries moving through it as new ones come in) makes no balance or
/// vanished-entry finding; a new entry it cannot read leaves the balance unjudged, and says why; a
/// finding that follows from another says so.
@Suite struct ReconcileIdentityTests {
    typealias R = ReconcileTests

    /// The newest `count` of `entries` as a server sends them with the row at `slot` unreadable (its id kept).
    static func served(_ entries: [CheerHistoryEntry], slot: Int, keepID: Bool = true) -> [HistoryItem] {
        entries.enumerated().map { i, e in
            i == slot ? .unreadable(UnreadableEntry(index: i, id: keepID ? e.id : nil, reason: "creator: missing")) : .entry(e)
        }
    }

    static func read(_ balance: Int, _ items: [HistoryItem], total: Int, at: Date) -> Observation {
        Observation(at: at, balance: balance, balanceRequestID: "rq-b", items: items, total: total, historyRequestID: "rq-h")
    }

    @Test func anUnreadableSlotThatEntriesMoveThroughIsNeverABalanceOrVanishedFinding() {
        var entries = (1...20).map { R.e("h\($0)", 10, at: t0.addingTimeInterval(Double(-600 * $0))) }
        var balance = 1_000, total = 120
        var last = Self.read(balance, Self.served(entries, slot: 3), total: total, at: t0)
        var all: [WatchEvent] = []
        for n in 1...8 {
            // A correct spend: debited, recorded on top; the unreadable slot now holds another entry.
            let amount = n * 3
            let at = t0.addingTimeInterval(Double(n * 2))
            entries.insert(R.e("n\(n)", amount, at: at), at: 0)
            entries.removeLast()
            balance -= amount
            total += 1
            let now = Self.read(balance, Self.served(entries, slot: 3), total: total, at: at)
            all += Reconciler.compare(last, now, bundles: R.bundles)
            last = now
        }
        #expect(R.findings(all).isEmpty, "\(all.map { $0.text() })")
        #expect(all.filter { if case .entry = $0.change { return true } else { return false } }.count == 8)
    }

    @Test func aSlotSentUnreadableWithoutItsIdIsNeitherGoneNorNew() {
        // The same moving slot, but the server drops the id too: the entry under it cannot be matched. It
        // is not called gone, and the balance is still judged (the totals say how many entries are new).
        var entries = (1...20).map { R.e("h\($0)", 10, at: t0.addingTimeInterval(Double(-600 * $0))) }
        var balance = 1_000, total = 120
        var last = Self.read(balance, Self.served(entries, slot: 3, keepID: false), total: total, at: t0)
        var all: [WatchEvent] = []
        for n in 1...8 {
            let at = t0.addingTimeInterval(Double(n * 2))
            entries.insert(R.e("n\(n)", n, at: at), at: 0)
            entries.removeLast()
            balance -= n
            total += 1
            let now = Self.read(balance, Self.served(entries, slot: 3, keepID: false), total: total, at: at)
            all += Reconciler.compare(last, now, bundles: R.bundles)
            last = now
        }
        #expect(R.findings(all).isEmpty, "\(all.map { $0.text() })")
        #expect(all.filter { $0.outcome == .reconciled }.count >= 16)  // each round: the balance and the entry
        // A real mismatch is still caught beside such a row: 5 debited for an entry of 1.
        let cheat = entries
        let before = Self.read(balance, Self.served(cheat, slot: 3, keepID: false), total: total, at: t0)
        var next = cheat
        next.insert(R.e("x", 1, at: R.t1), at: 0)
        next.removeLast()
        let after = Self.read(balance - 5, Self.served(next, slot: 3, keepID: false), total: total + 1, at: R.t1)
        #expect(R.findings(Reconciler.compare(before, after, bundles: R.bundles)) == [.debitMismatch])
    }

    @Test func aNewEntryThatCannotBeReadLeavesTheBalanceUnjudgedAndSaysWhy() {
        let older = (1...5).map { R.e("h\($0)", 10, at: t0.addingTimeInterval(Double(-600 * $0))) }
        let before = Self.read(1_000, older.map(HistoryItem.entry), total: 100, at: t0)
        let new = R.e("n1", 7, at: R.t1)
        let after = Self.read(993, Self.served([new] + older, slot: 0), total: 101, at: R.t1)
        let events = Reconciler.compare(before, after, bundles: R.bundles)
        #expect(R.findings(events).isEmpty)
        let status = events.first { if case .status = $0.change { return true } else { return false } }
        #expect(status?.text() == "1 new entry could not be read (history[0], id n1): the balance is not judged this time")
        #expect(status?.causedBy == .unreadable(position: "history[0]", requestID: "rq-h"))
        // An entry read before and unreadable now is the same entry: not gone, not changed.
        let same = Self.read(1_000, Self.served(older, slot: 2), total: 100, at: R.t1)
        #expect(R.findings(Reconciler.compare(before, same, bundles: R.bundles)).isEmpty)
        // Its data changing is one finding about it, not a balance one.
        var changed = older
        changed[1].amount = 99
        let moved = Reconciler.compare(before, Self.read(1_000, changed.map(HistoryItem.entry), total: 100, at: R.t1), bundles: R.bundles)
        #expect(R.findings(moved) == [.entryChanged])
    }

    @Test func aFindingThatFollowsFromAnotherSaysSo() {
        // The spend's entry vanished from the history and its debit is left without an entry.
        let older = (1...5).map { R.e("h\($0)", 10, at: t0.addingTimeInterval(Double(-600 * $0))) }
        let before = Self.read(1_000, older.map(HistoryItem.entry), total: 100, at: t0)
        let after = Self.read(993, Array(older.dropFirst()).map(HistoryItem.entry), total: 99, at: R.t1)
        let events = Reconciler.compare(before, after, bundles: R.bundles)
        #expect(Set(R.findings(events)) == [.historyShrank, .entryVanished, .debitWithoutEntry])
        let vanished = events.first { if case .finding(.entryVanished, _, _) = $0.change { return true } else { return false } }
        let debit = events.first { if case .finding(.debitWithoutEntry, _, _) = $0.change { return true } else { return false } }
        #expect(vanished?.causedBy == .finding(.historyShrank))
        #expect(debit?.causedBy == .finding(.entryVanished))
        #expect(debit?.text().hasSuffix("— possibly caused by [entry-vanished] (above)") == true)
    }
}

/// The server's numbers are untrusted: balances, totals and amounts at the ends of `Int` are judged,
/// never a trap.
@Suite struct ReconcileExtremesTests {
    typealias R = ReconcileTests

    @Test func extremeBalancesTotalsAndAmountsAreJudgedWithoutATrap() {
        let older = (1...3).map { R.e("h\($0)", 10, at: t0.addingTimeInterval(Double(-600 * $0))) }
        for (b0, b1, t0v, t1v, amount) in [(Int.min, Int.max, Int.min, Int.max, Int.max), (Int.max, Int.min, Int.max, Int.min, Int.min),
                                           (0, Int.min, 0, Int.max, Int.max), (Int.max, 0, 5, 6, Int.min)] {
            let before = Observation(at: t0, balance: b0, items: older.map(HistoryItem.entry), total: t0v)
            let new = R.e("n", amount, at: R.t1)
            let after = Observation(at: R.t1, balance: b1, items: ([new] + older).map(HistoryItem.entry), total: t1v)
            let events = Reconciler.compare(before, after, bundles: R.bundles)
            #expect(!events.isEmpty)
            _ = events.map { $0.text() }
            let packs = Reconciler.comparePacks([pack("p", "P", cheer: Int.min)], [pack("p", "P", cheer: Int.max)], cheered: ["p": Int.max], at: R.t1, requestIDs: [])
            #expect(!packs.isEmpty)
        }
        #expect(Int.max.plusSaturating(1) == .max && Int.min.minusSaturating(1) == .min && 0.minusSaturating(.min) == .max && 5.minusSaturating(3) == 2)
    }
}

@Suite struct CommentsAddedLaterTests {
    typealias R = ReconcileTests

    @Test func aCommentAddedToAnEntryIsNoChangeButOneRemovedIs() {
        let plain = R.e("h1", 10, comment: "first", at: t0)
        var more = plain
        more.comments = (plain.comments ?? []) + [CheerComment(signature: "kofi", body: "me too")]
        let before = Observation(at: t0, balance: 100, items: [.entry(plain)], total: 1)
        let added = Observation(at: R.t1, balance: 100, items: [.entry(more)], total: 1)
        #expect(R.findings(Reconciler.compare(before, added, bundles: R.bundles)).isEmpty)
        var gone = plain
        gone.comments = []
        #expect(R.findings(Reconciler.compare(before, Observation(at: R.t1, balance: 100, items: [.entry(gone)], total: 1), bundles: R.bundles)) == [.entryChanged])
    }
}
