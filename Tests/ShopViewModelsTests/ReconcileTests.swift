import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// The watch's reconciliation: every change between two reads is explained or flagged, and nothing
/// that adds up is flagged.
@Suite struct ReconcileTests {
    static let t1 = t0.addingTimeInterval(2)
    static let bundles = WatchState.standInBundles
    static let names = ["com.reiterate.pack.rain": "Rain on a Tin Roof"]

    static func e(_ id: String, _ amount: Int, product: String = "com.reiterate.pack.rain", comment: String? = nil, at: Date = t0) -> CheerHistoryEntry {
        CheerHistoryEntry(id: id, creator: "Field & Foley", amount: amount, product: product, date: at,
                          comments: comment.map { [CheerComment(signature: "qa-alice", body: $0)] } ?? [])
    }

    static let older = (1...5).map { e("h\($0)", 10, at: t0.addingTimeInterval(Double(-600 * $0))) }

    static func read(_ balance: Int, _ entries: [CheerHistoryEntry], total: Int? = nil, at: Date = t0, ids: (String, String)? = nil) -> Observation {
        Observation(at: at, balance: balance, balanceRequestID: ids?.0, entries: entries, total: total ?? 100 + entries.count, historyRequestID: ids?.1)
    }

    static func findings(_ events: [WatchEvent]) -> [WatchCheck] {
        events.compactMap { if case let .finding(check, _, _) = $0.change { return check } else { return nil } }
    }

    static func compare(_ a: Observation, _ b: Observation, own: [ShopWrite] = []) -> [WatchEvent] {
        Reconciler.compare(a, b, bundles: bundles, own: own, names: names, catalog: CheerBundle.standIn)
    }

    @Test func aCheerWithACommentReconciles() {
        let before = Self.read(1_250, Self.older, total: 100, ids: ("rq-b1", "rq-h1"))
        let new = Self.e("n1", 7, comment: "great pack", at: Self.t1)
        let after = Self.read(1_243, [new] + Self.older, total: 101, at: Self.t1, ids: ("rq-b2", "rq-h2"))
        let events = Self.compare(before, after)
        #expect(events.map { $0.text(names: Self.names) } == ["balance 1,250 → 1,243 (−7)", "new entry: 7 cheer on Rain on a Tin Roof “great pack”"])
        #expect(events.allSatisfy { $0.outcome == .reconciled && $0.requestIDs == ["rq-b1", "rq-h1", "rq-b2", "rq-h2"] })
    }

    /// More new entries than the read shows (here 7 new, 5 shown): the unseen ones' amounts are not
    /// known, so the balance is not judged, and it says so. With the same shown entries and a total
    /// that says they are all, the same fall is a mismatch.
    @Test func moreNewEntriesThanOneReadShowsAreNotJudged() {
        let before = Self.read(1_000, Self.older, total: 100)
        let fresh = (1...5).map { Self.e("n\($0)", 10, at: Self.t1.addingTimeInterval(Double($0) * 10)) }.reversed()
        let after = Self.read(930, Array(fresh), total: 107, at: Self.t1)
        let events = Self.compare(before, after)
        #expect(Self.findings(events).isEmpty)
        #expect(events.contains { $0.text() == "7 new entries since the last read, 5 shown: the balance is not reconciled this time" })
        #expect(events.allSatisfy { $0.outcome == .none })
        #expect(Self.findings(Self.compare(before, Self.read(930, Array(fresh), total: 105, at: Self.t1))) == [.debitMismatch])
    }

    @Test func aPurchaseIsABundle() {
        let events = Self.compare(Self.read(1_250, Self.older), Self.read(1_450, Self.older, at: Self.t1))
        #expect(Self.findings(events).isEmpty)
        #expect(events.map { $0.text() } == ["balance 1,250 → 1,450 (+200)", "a purchase of 200 cheer (bundle 200)"])
        #expect(events.allSatisfy { $0.outcome == .reconciled })
        // Two bundles in one interval, and a cheer beside a purchase.
        #expect(Self.compare(Self.read(0, []), Self.read(150, [])).map { $0.text() }.last == "a purchase of 150 cheer (bundle 100 + bundle 50)")
        let mixed = Self.compare(Self.read(1_000, Self.older, total: 100), Self.read(1_093, [Self.e("n", 7)] + Self.older, total: 101))
        #expect(Self.findings(mixed).isEmpty && mixed.contains { $0.text() == "a purchase of 100 cheer (bundle 100)" })
    }

    @Test func whatDoesNotAddUpIsFlagged() {
        let before = Self.read(1_250, Self.older, total: 100)
        // A cheer recorded twice for one debit: the debit does not match, and it looks like a double tap.
        let twice = Self.compare(before, Self.read(1_243, [Self.e("n2", 7, comment: "x", at: Self.t1), Self.e("n1", 7, comment: "x", at: t0.addingTimeInterval(1))] + Self.older, total: 102))
        #expect(Self.findings(twice) == [.debitMismatch])
        #expect(twice.contains { $0.text().hasPrefix("possible double submission: two entries of 7 cheer") })
        #expect(twice.first { if case .finding = $0.change { return true } else { return false } }?.text() == "[debit-mismatch] expected −14 (the new entries' amounts), got −7")
        // A debit with no entry; an entry with no debit; a credit no bundle makes; a negative balance.
        #expect(Self.findings(Self.compare(before, Self.read(1_243, Self.older, total: 100))) == [.debitWithoutEntry])
        #expect(Self.findings(Self.compare(before, Self.read(1_250, [Self.e("n1", 7)] + Self.older, total: 101))) == [.entryWithoutDebit])
        #expect(Self.findings(Self.compare(before, Self.read(1_287, Self.older, total: 100))) == [.creditUnexplained])
        #expect(Self.findings(Self.compare(Self.read(5, Self.older), Self.read(-2, [Self.e("n1", 7)] + Self.older, total: 106))) == [.balanceNegative])
    }

    @Test func theHistoryOnlyGrows() {
        let before = Self.read(1_250, Self.older, total: 100)
        // An entry gone (the total fell), and an entry changed under its id.
        let gone = Self.compare(before, Self.read(1_250, Array(Self.older.dropFirst()), total: 99))
        #expect(Self.findings(gone) == [.historyShrank, .entryVanished])
        var changed = Self.older
        changed[2].amount = 11
        #expect(Self.findings(Self.compare(before, Self.read(1_250, changed, total: 100))) == [.entryChanged])
        // Entries pushed off the small page by new ones are not gone.
        let full = (1...20).map { Self.e("h\($0)", 1, at: t0.addingTimeInterval(Double(-$0))) }
        let three = (1...3).map { Self.e("n\($0)", 2, product: "p\($0)", at: Self.t1) }
        let pushed = Self.compare(Self.read(1_000, full, total: 500), Self.read(994, three + full.prefix(17), total: 503))
        #expect(Self.findings(pushed).isEmpty && pushed.filter { if case .entry = $0.change { return true } else { return false } }.count == 3)
        // Nothing changed: nothing to say.
        #expect(Self.compare(before, before).isEmpty)
    }

    @Test func thisToolsOwnWritesAreMarkedNotCountedTwice() {
        let before = Self.read(1_250, Self.older, total: 100)
        let after = Self.read(1_243, [Self.e("n1", 7, comment: "mine")] + Self.older, total: 101)
        let events = Self.compare(before, after, own: [.spend(product: "com.reiterate.pack.rain", amount: 7, comment: "mine")])
        #expect(Self.findings(events).isEmpty && events.count == 2 && events.allSatisfy { $0.outcome == .own })
        let bought = Self.compare(before, Self.read(1_450, Self.older, total: 100), own: [.purchase(identifier: "com.reiterate.cheer.200", transactionID: 7)])
        #expect(bought.map(\.outcome) == [.own])
    }

    @Test func packTotalsGrowByWhatWasCheered() {
        let rain = AudioPack(identifier: "com.reiterate.pack.rain", name: "Rain on a Tin Roof", creator: "F", description: nil, priceCents: 499,
                             currency: "USD", sampleCount: 1, durationSeconds: 1, cheerTotal: 31_552, tags: nil)
        var after = rain
        after.cheerTotal = 31_559
        let grew = Reconciler.comparePacks([rain], [after], cheered: ["com.reiterate.pack.rain": 7], at: t0, requestIDs: ["a", "b"])
        #expect(grew.map { ($0.text(names: Self.names), $0.outcome) }.elementsEqual([("Rain on a Tin Roof cheer 31,552 → 31,559", WatchEvent.Outcome.reconciled)], by: ==))
        let stuck = Reconciler.comparePacks([rain], [rain], cheered: ["com.reiterate.pack.rain": 7], at: t0, requestIDs: [])
        #expect(Self.findings(stuck) == [.packTotal])
        // Other users cheer too: a rise with nothing cheered here is news, not a finding.
        var others = rain
        others.cheerTotal = 31_600
        var repriced = others
        repriced.priceCents = 599
        let news = Reconciler.comparePacks([rain], [repriced], cheered: [:], at: t0, requestIDs: [])
        #expect(Self.findings(news).isEmpty && news.map { $0.text(names: Self.names) } == ["packs: 1 price changed", "Rain on a Tin Roof cheer 31,552 → 31,600"])
    }

    @Test func bundleSums() {
        #expect(Reconciler.isBundleSum(150, Self.bundles) && Reconciler.isBundleSum(7_650, Self.bundles))
        #expect(!Reconciler.isBundleSum(37, Self.bundles) && !Reconciler.isBundleSum(0, Self.bundles) && !Reconciler.isBundleSum(-50, Self.bundles))
        #expect(Reconciler.bundleWords(1_150, Self.bundles) == "bundle 1,000 + bundle 100 + bundle 50")
        #expect(Reconciler.bundleWords(10_000, Self.bundles) == "2 × bundle 5,000")
    }
}

extension ReconcileTests {
    /// A new entry made in the same second as the newest seen one may sort below it: it is still new
    /// (its debit is explained), and the entry it pushed off the read is not called vanished.
    @Test func aNewEntryThatSortsBelowASeenOneIsStillNew() {
        let before = Self.read(1_000, Self.older, total: 100)
        let tie = Self.e("tie", 9, at: Self.older[0].date)
        let after = Self.read(991, [Self.older[0], tie] + Self.older.dropFirst().dropLast(), total: 101, at: Self.t1)
        let events = Self.compare(before, after)
        #expect(Self.findings(events).isEmpty, "\(events.map { $0.text() })")
        #expect(events.contains { if case let .entry(e) = $0.change { return e.id == "tie" } else { return false } })
    }
}
