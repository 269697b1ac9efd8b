import Foundation
import ShopAPI

/// The app's writes of one compared span of the watch (between two reads), matched with what the reads
/// show: which new entries and which credit they explain, and the verdicts only that pairing can give.
struct SpanPairing {
    let writes: [AppWrite]
    let bundles: [CheerBundle]

    /// Writes the server took (or may have: no answer came), oldest first.
    var landed: [AppWrite] { writes.filter { $0.reachedServer && ($0.applied || $0.status == nil) }.sorted { $0.sentAt < $1.sentAt } }

    /// The credit the app's taken purchases owe (the environment's bundle by identifier, never what the
    /// app said it bought), and whether one of them is of an unknown size or outcome.
    var credit: (sum: Int, unknown: Bool) {
        var sum = 0, unknown = false
        for w in landed {
            guard let p = w.purchase else { continue }
            if w.applied, let cheer = WriteExpectation.credit(p.identifier, bundles: bundles) { sum = sum.plusSaturating(cheer) } else { unknown = true }
        }
        return (sum, unknown)
    }

    /// The taken purchases with a known credit.
    var purchases: [(write: AppWrite, cheer: Int)] {
        landed.compactMap { w in
            guard w.applied, let p = w.purchase, let cheer = WriteExpectation.credit(p.identifier, bundles: bundles) else { return nil }
            return (w, cheer)
        }
    }

    /// The app spend each of `entries` is (nil: not the app's), each spend used once; then the entries
    /// left over that repeat a spend the app sent once (the server recorded one request twice).
    func match(_ entries: [CheerHistoryEntry], taken: [Bool]) -> (by: [AppWrite?], twice: [(entry: Int, write: AppWrite)]) {
        var left = landed.filter { if case .spend = $0.kind { return true } else { return false } }
        var by = [AppWrite?](repeating: nil, count: entries.count)
        // The oldest entry first, with the oldest write: two alike pair in the order they were sent.
        for i in entries.indices.reversed() where !taken[i] {
            if let j = left.firstIndex(where: { Self.isEntry(entries[i], of: $0) }) { by[i] = left.remove(at: j) }
        }
        var twice: [(Int, AppWrite)] = []
        for (i, entry) in entries.enumerated() where !taken[i] && by[i] == nil {
            // Its twin among the matched: the same ask, recorded within seconds of it.
            if let k = by.indices.first(where: { k in
                by[k].map { Self.isEntry(entry, of: $0) } ?? false && abs(entries[k].date.timeIntervalSince(entry.date)) <= Reconciler.doubleTapWindow
            }), let write = by[k], write.applied {
                twice.append((i, write))
                by[i] = write
            }
        }
        return (by, twice)
    }

    static func isEntry(_ entry: CheerHistoryEntry, of write: AppWrite) -> Bool { write.kind.spend?.explains(entry) == true }

    /// The balance the reads must show when the app's writes are all that changed it, one after another:
    /// what the last answered one said. Nil when that cannot be told.
    var lastAnsweredBalance: (balance: Int, write: AppWrite)? {
        let sorted = writes.filter(\.reachedServer).sorted { ($0.answeredAt ?? .distantFuture) < ($1.answeredAt ?? .distantFuture) }
        for (a, b) in zip(sorted, sorted.dropFirst()) where b.sentAt < (a.answeredAt ?? .distantFuture) { return nil }  // overlapping
        guard sorted.allSatisfy({ $0.status != nil }), let last = sorted.last(where: \.applied), let balance = last.balance else { return nil }
        return (balance, last)
    }
}

extension WatchCheck {
    /// Who is at fault: the app's own double submissions and blind retries are the app's; every rule of
    /// the shop its data breaks is the server's.
    public var blame: Blame {
        switch self {
        case .doubleSubmission, .retryNewTransaction: return .app
        default: return .server
        }
    }
}
