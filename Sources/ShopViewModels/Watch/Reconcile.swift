import Foundation
import ShopAPI

/// Compares two reads of the same user, and explains each change or flags it. Pure.
public enum Reconciler {
    /// Two entries alike in product, amount and comment this close together may be one tap sent twice.
    public static let doubleTapWindow: TimeInterval = 5

    /// The history list's key of an entry (its id, or date, product, amount and creator).
    public static func key(_ e: CheerHistoryEntry) -> EntryKey { EntryKey(e) }

    /// The events between `before` and `after`. `bundles` are the sizes the environment sells;
    /// `own` the writes this tool made meanwhile; `names` the packs' names by identifier.
    ///
    /// `app`, when the app's proxy runs (nil when it does not), holds the app's writes of the span: each
    /// change is then paired with the writes that explain it (`WatchEvent.causes`), and the verdicts only
    /// that pairing gives are made. `catalog` is the environment's bundles by identifier (what an app
    /// purchase is owed).
    public static func compare(_ before: Observation, _ after: Observation, bundles: [Int], own: [ShopWrite] = [],
                               names: [String: String] = [:], app: [AppWrite]? = nil, catalog: [CheerBundle] = []) -> [WatchEvent] {
        var events: [WatchEvent] = []
        let ids = before.requestIDs + after.requestIDs
        func flag(_ check: WatchCheck, _ expected: String, _ actual: String) {
            events.append(WatchEvent(at: after.at, change: .finding(check, expected: expected, actual: actual), outcome: .flagged, requestIDs: ids))
        }
        let g = Wording.grouped

        // The history, by identity: an entry is matched by its key (its id) whether or not it could be
        // read this time or the last, so an entry still there is never called gone, nor new.
        let seen = Set(before.items.compactMap(matchKey))
        // New: not seen before, and above the lowest entry seen before (one made in the same second as
        // a seen one may sort below it; those under the lowest seen one came up from past the read).
        let lowestSeen = after.items.lastIndex { matchKey($0).map(seen.contains) ?? false }
        // A row the last read sent unreadable without an id is matched by its place: as many places down
        // as the total grew. A readable entry found there now is that entry, not a new one.
        let shift = Swift.min(after.items.count, max(0, after.total.minusSaturating(before.total)))
        let formerlyIdless = Set(before.items.indices.filter { i in
            if case let .unreadable(u) = before.items[i], u.id == nil { return true } else { return false }
        }.map { $0.plusSaturating(shift) })
        let window = after.items.indices.prefix(lowestSeen.map { $0 + 1 } ?? after.items.count)
        let freshItems = window.filter { i in
            let item = after.items[i]
            guard matchKey(item).map({ !seen.contains($0) }) ?? true else { return false }
            if formerlyIdless.contains(i), case .entry = item { return false }
            return true
        }.map { after.items[$0] }
        let fresh = freshItems.compactMap { item -> CheerHistoryEntry? in if case let .entry(e) = item { return e } else { return nil } }
        // Rows that could not be read: one with an id not seen before is new (its amount unknown); one
        // without an id may be new or an old entry now sent unreadable — it is counted as new only as far
        // as the totals need more new entries than the others make.
        let newCount = after.total.minusSaturating(before.total)
        let unreadableWithID = freshItems.compactMap { item -> UnreadableEntry? in
            if case let .unreadable(u) = item, u.id != nil { return u } else { return nil }
        }
        let idless = after.items.compactMap { item -> UnreadableEntry? in
            if case let .unreadable(u) = item, u.id == nil { return u } else { return nil }
        }
        let idlessNew = min(idless.count, max(0, newCount.minusSaturating(fresh.count + unreadableWithID.count)))
        let freshUnreadable = unreadableWithID + idless.prefix(idlessNew)
        // Id-less rows not counted as new may each be an entry seen before, now unreadable.
        var idlessSpare = idless.count - idlessNew
        var afterByKey: [EntryKey: HistoryItem] = [:]
        for item in after.items { if let k = matchKey(item), afterByKey[k] == nil { afterByKey[k] = item } }
        if after.total < before.total {
            flag(.historyShrank, "total \(g(before.total)) or more (the history only grows)", "total \(g(after.total))")
        }
        // Entries pushed off the page by new ones are not gone; the rest must still be there, as they were.
        let stillShown = max(0, min(before.items.count, after.items.count - fresh.count - freshUnreadable.count))
        for old in before.items.prefix(stillShown) {
            guard let k = matchKey(old) else { continue }  // unreadable, with no id: nothing to match it by
            guard let now = afterByKey[k] else {
                // It may be one of the rows now sent unreadable without an id: not called gone.
                if idlessSpare > 0 {
                    idlessSpare -= 1
                    continue
                }
                flag(.entryVanished, "entry \(describe(old, names)) still in the history", "gone from the newest \(g(after.items.count))")
                continue
            }
            // Its data changed: one finding about that entry. An entry readable on one side only is the
            // contract watchdog's finding on the answer that could not be read, not a change.
            // Comments may be added later (each has its commenter's handle): one added is no change; one
            // that went or changed is.
            if case let .entry(was) = old, case let .entry(current) = now, was != current, !Self.onlyCommentsAdded(was, current) {
                flag(.entryChanged, "entry \(describe(was, names)) as it was", "now \(describe(current, names))")
            }
        }

        // More new entries than one read shows (a long outage, a busy phone): the ones not shown
        // cannot be counted, so the balance is not judged this time (nothing is invented).
        let freshCount = fresh.count + freshUnreadable.count
        let overflow = freshCount > 0 && freshItems.count == after.items.count && newCount > freshCount

        // Which new entries are this tool's own writes.
        var ownLeft = own
        var ownFlags: [Bool] = []
        for entry in fresh {
            let mine = ownLeft.firstIndex { $0.spend?.explains(entry) == true }
            if let mine { ownLeft.remove(at: mine) }
            ownFlags.append(mine != nil)
        }
        // The credit the environment's bundle of each id gives (never read from the identifier typed).
        let ownCredits = own.compactMap(\.purchase).map { WriteExpectation.credit($0.identifier, bundles: catalog) }
        let ownCredit = ownCredits.compactMap { $0 }.reduce(0) { $0.plusSaturating($1) }
        let ownUnknownPurchase = ownCredits.contains(nil)
        // The app's writes: which new entries are its spends, and what its purchases are owed.
        let span = SpanPairing(writes: app ?? [], bundles: catalog)
        let (appBy, twice) = span.match(fresh, taken: ownFlags)
        let appCredit = span.credit

        // The balance: a fall is the new entries' amounts; a rise is a sum of bundles.
        let delta = after.balance.minusSaturating(before.balance)
        let spent = fresh.map(\.amount).saturatingSum()
        // What the entries and the purchases (this tool's, the app's) leave unexplained.
        let rest = delta.plusSaturating(spent).minusSaturating(ownCredit).minusSaturating(appCredit.sum)
        let elsewhereEntries = fresh.indices.filter { !ownFlags[$0] && appBy[$0] == nil }
        for (i, write) in twice {
            flag(.entryTwice, "one entry for the app's one request (\(write.requestID ?? "no request id"))",
                 "two entries of \(describe(fresh[i], names))")
            events[events.count - 1].requestIDs = [write.requestID].compactMap { $0 } + ids
        }
        var balanceOutcome: WatchEvent.Outcome = .reconciled
        var appJudged = false
        if !overflow, freshUnreadable.isEmpty, rest != 0, !appCredit.unknown, !ownUnknownPurchase, !span.purchases.isEmpty, elsewhereEntries.isEmpty, twice.isEmpty {
            // The app bought and the balance does not add up: what its purchases were credited, against what they are owed.
            appJudged = true
            balanceOutcome = .flagged
            let owed = appCredit.sum, got = appCredit.sum.plusSaturating(rest)
            let what = span.purchases.map { "\($0.write.purchase?.identifier ?? "") (\($0.write.requestID ?? "no request id"))" }.joined(separator: ", ")
            let answered = span.purchases.count == 1 ? "answered \(span.purchases[0].write.status ?? 200)" : "each answered 2xx"
            if got == 0 {
                flag(.notCredited, "+\(g(owed)) for the app's purchase of \(what), \(answered)", "no credit (\(g(before.balance)) → \(g(after.balance)))")
            } else {
                flag(.creditMismatch, "+\(g(owed)) for the app's purchase of \(what)", "\(signed(got)) credited")
            }
            events[events.count - 1].requestIDs = span.purchases.compactMap(\.write.requestID) + ids
        }
        if overflow {
            balanceOutcome = .none
            events.append(WatchEvent(at: after.at, change: .status("\(g(newCount)) new entries since the last read, \(g(fresh.count)) shown: the balance is not reconciled this time"),
                                     requestIDs: ids))
        } else if let unread = freshUnreadable.first, delta != 0 || newCount != 0 {
            // A new row the server sent unreadable: its amount is unknown, so the balance cannot be judged.
            balanceOutcome = .none
            let n = freshUnreadable.count
            var event = WatchEvent(at: after.at, change: .status("\(g(n)) new entr\(n == 1 ? "y" : "ies") could not be read (history[\(unread.index)]\(unread.id.map { ", id " + $0 } ?? "")): the balance is not judged this time"),
                                   requestIDs: ids)
            event.causedBy = .unreadable(position: "history[\(unread.index)]", requestID: after.historyRequestID)
            events.append(event)
        } else if appJudged || (appCredit.unknown && app != nil) {
            // Judged above; or an app purchase of unknown size or outcome: not judged (nothing invented).
        } else if rest != 0, !(ownUnknownPurchase && rest > 0) {
            if rest > 0, isBundleSum(rest, bundles) {
                var note = WatchEvent(at: after.at, change: .note("a purchase of \(g(rest)) cheer (\(bundleWords(rest, bundles)))"), outcome: .reconciled, requestIDs: ids)
                if app != nil { note.causes = [.elsewhere] }
                events.append(note)
            } else if fresh.isEmpty, rest < 0 {
                balanceOutcome = .flagged
                flag(.debitWithoutEntry, "no change, or a debit with a new history entry", "\(g(0.minusSaturating(rest))) cheer debited with no new entry")
            } else if fresh.isEmpty {
                balanceOutcome = .flagged
                flag(.creditUnexplained, "a rise that is a sum of bundles (\(bundles.map(g).joined(separator: ", ")))", "+\(g(rest))")
            } else if delta == ownCredit {
                balanceOutcome = .flagged
                flag(.entryWithoutDebit, "a debit of \(g(spent)) for \(fresh.count == 1 ? "the new entry" : "the \(fresh.count) new entries")", "no debit")
            } else {
                balanceOutcome = .flagged
                flag(.debitMismatch, "\(signed(0.minusSaturating(spent).plusSaturating(ownCredit))) (the new entries' amounts)", signed(delta))
            }
        }
        if delta != 0 {
            // All of it this tool's own writes: counted once, by their own verification.
            let spentByOthers = zip(fresh, ownFlags).filter { !$0.1 }.map(\.0.amount).saturatingSum()
            let allOwn = !overflow && rest == 0 && spentByOthers == 0 && (ownCredit != 0 || ownFlags.contains(true))
            let outcome: WatchEvent.Outcome = balanceOutcome == .flagged ? .flagged : allOwn ? .own : balanceOutcome
            var event = WatchEvent(at: after.at, change: .balance(from: before.balance, to: after.balance), outcome: outcome, requestIDs: ids)
            if app != nil {
                let appIDs = span.landed.filter { w in w.purchase != nil || appBy.contains { $0?.id == w.id } }.map { ChangeCause.app(requestID: $0.requestID) }
                var causes = appIDs
                if ownCredit != 0 || ownUnknownPurchase || ownFlags.contains(true) { causes.append(.tool) }
                // A rise left over with a purchase of this tool's of unknown size is taken as that purchase.
                let restIsOwn = ownUnknownPurchase && rest > 0
                if !elsewhereEntries.isEmpty || (rest != 0 && !appJudged && !restIsOwn) || causes.isEmpty { causes.append(.elsewhere) }
                event.causes = causes
            }
            events.insert(event, at: 0)
        }
        // The app's answer said a balance; with only the app's writes between the reads, one after another,
        // the read must show what the last of them said.
        if app != nil, !overflow, freshUnreadable.isEmpty, rest == 0, own.isEmpty, elsewhereEntries.isEmpty, twice.isEmpty,
           !events.contains(where: { if case .finding = $0.change { return true } else { return false } }),
           let said = span.lastAnsweredBalance, said.balance != after.balance {
            flag(.answerContradicted, "balance \(g(said.balance)), as the answer to the app's \(said.write.request(names: names)) (\(said.write.requestID ?? "no request id")) said",
                 "balance \(g(after.balance)) in the next read")
            events[events.count - 1].requestIDs = [said.write.requestID].compactMap { $0 } + ids
        }
        if after.balance < 0 { flag(.balanceNegative, "a balance of 0 or more", g(after.balance)) }
        linkCauses(&events)
        // New entries, oldest first (as they happened).
        for (offset, entry) in fresh.enumerated().reversed() {
            let outcome: WatchEvent.Outcome = ownFlags[offset] ? .own : balanceOutcome
            var event = WatchEvent(at: after.at, change: .entry(entry), outcome: outcome, requestIDs: ids)
            if app != nil { event.causes = [ownFlags[offset] ? .tool : appBy[offset].map { .app(requestID: $0.requestID) } ?? .elsewhere] }
            // The second of one request recorded twice: the shop's data says it was cheered once.
            if twice.contains(where: { $0.entry == offset }) { event.causedBy = .finding(.entryTwice) }
            events.insert(event, at: events.firstIndex { if case .finding = $0.change { return true } else { return false } } ?? events.count)
        }
        // Two alike within seconds: one tap sent twice?
        let recent = fresh + before.entries
        for (offset, entry) in fresh.enumerated() where appBy[offset] == nil {
            // The app's own (two requests, or one recorded twice) are judged by the pairing instead.
            let twin = recent.first { other in
                key(other) != key(entry) && other.product == entry.product && other.amount == entry.amount
                    && (other.comments ?? []).map(\.body) == (entry.comments ?? []).map(\.body) && abs(other.date.timeIntervalSince(entry.date)) <= doubleTapWindow
            }
            if twin != nil {
                // Beside the entries, before any finding (a note, not a failure).
                let note = WatchEvent(at: after.at, change: .note("possible double submission: two entries of \(g(entry.amount)) cheer on \(names[entry.product] ?? entry.product) within \(Int(doubleTapWindow)) s"),
                                      requestIDs: ids)
                events.insert(note, at: events.firstIndex { if case .finding = $0.change { return true } else { return false } } ?? events.count)
                break
            }
        }
        return events
    }

    /// Whether `later` is `earlier` with comments added and nothing else changed.
    static func onlyCommentsAdded(_ earlier: CheerHistoryEntry, _ later: CheerHistoryEntry) -> Bool {
        var a = earlier, b = later
        a.comments = nil
        b.comments = nil
        let now = later.comments ?? []
        return a == b && (earlier.comments ?? []).allSatisfy { now.contains($0) }
    }

    /// The key an entry is matched by across reads: its id (readable or not), or, for a readable entry
    /// without one, its date, product, amount and creator. An unreadable row without an id has none.
    static func matchKey(_ item: HistoryItem) -> EntryKey? {
        if case let .unreadable(u) = item, u.id == nil { return nil }
        return HistoryState.key(of: item)
    }

    /// A finding that follows from another of the same round says so: entries gone with a history that
    /// shrank; a debit without its entry, or a mismatch, when an entry vanished.
    static func linkCauses(_ events: inout [WatchEvent]) {
        func has(_ check: WatchCheck) -> Bool {
            events.contains { if case let .finding(c, _, _) = $0.change { return c == check } else { return false } }
        }
        for i in events.indices {
            guard case let .finding(check, _, _) = events[i].change, events[i].causedBy == nil else { continue }
            switch check {
            case .entryVanished where has(.historyShrank): events[i].causedBy = .finding(.historyShrank)
            case .debitWithoutEntry, .debitMismatch, .entryWithoutDebit:
                if has(.entryVanished) { events[i].causedBy = .finding(.entryVanished) } else if has(.entryChanged) { events[i].causedBy = .finding(.entryChanged) }
                else if has(.entryTwice) { events[i].causedBy = .finding(.entryTwice) }
            default: break
            }
        }
    }

    /// Pack totals between two reads of the pack list: each pack's total grows by at least what this
    /// user cheered for it meanwhile (other users cheer too); the list's own changes are news.
    public static func comparePacks(_ before: [AudioPack], _ after: [AudioPack], cheered: [String: Int], at: Date,
                                    requestIDs: [String]) -> [WatchEvent] {
        var events: [WatchEvent] = []
        let old = Dictionary(before.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let new = Dictionary(after.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let added = after.filter { old[$0.identifier] == nil }.map(\.name)
        let removed = before.filter { new[$0.identifier] == nil }.map(\.name)
        let repriced = after.filter { p in old[p.identifier].map { $0.priceCents != p.priceCents } ?? false }.map(\.name)
        if !(added.isEmpty && removed.isEmpty && repriced.isEmpty) {
            events.append(WatchEvent(at: at, change: .packs(added: added, removed: removed, priceChanged: repriced), requestIDs: requestIDs))
        }
        for pack in after {
            guard let was = old[pack.identifier]?.cheerTotal, let now = pack.cheerTotal else { continue }
            let wanted = cheered[pack.identifier] ?? 0
            if now != was {
                events.append(WatchEvent(at: at, change: .packTotal(product: pack.identifier, from: was, to: now),
                                         outcome: now.minusSaturating(was) >= wanted ? (wanted > 0 ? .reconciled : .none) : .flagged, requestIDs: requestIDs))
            }
            if now.minusSaturating(was) < wanted {
                events.append(WatchEvent(at: at, change: .finding(.packTotal, expected: "\(pack.name) +\(Wording.grouped(wanted)) or more (\(Wording.grouped(was)) → \(Wording.grouped(was.plusSaturating(wanted))))",
                                                                  actual: "\(Wording.signedDelta(now.minusSaturating(was))) (\(Wording.grouped(now)))"),
                                         outcome: .flagged, requestIDs: requestIDs))
            }
        }
        return events
    }

    /// Whether `amount` is a sum of bundle sizes (each any number of times).
    public static func isBundleSum(_ amount: Int, _ bundles: [Int]) -> Bool {
        bundleSplit(amount, bundles) != nil
    }

    /// A way to make `amount` from bundles, fewest first; nil when there is none. Bounded work: an
    /// amount past 100,000 cheer is not split.
    static func bundleSplit(_ amount: Int, _ bundles: [Int]) -> [Int]? {
        let sizes = bundles.filter { $0 > 0 }.sorted()
        guard amount > 0, amount <= 100_000, !sizes.isEmpty else { return nil }
        var last = [Int](repeating: 0, count: amount + 1)  // the bundle that reaches each sum (0: none)
        var count = [Int](repeating: Int.max, count: amount + 1)
        count[0] = 0
        for sum in 1...amount {
            for size in sizes where size <= sum && count[sum - size] != Int.max && count[sum - size] + 1 < count[sum] {
                count[sum] = count[sum - size] + 1
                last[sum] = size
            }
        }
        guard count[amount] != Int.max else { return nil }
        var parts: [Int] = []
        var sum = amount
        while sum > 0 {
            parts.append(last[sum])
            sum -= last[sum]
        }
        return parts.sorted(by: >)
    }

    static func bundleWords(_ amount: Int, _ bundles: [Int]) -> String {
        guard let parts = bundleSplit(amount, bundles) else { return "" }
        var counts: [(Int, Int)] = []
        for p in parts {
            if let i = counts.firstIndex(where: { $0.0 == p }) { counts[i].1 += 1 } else { counts.append((p, 1)) }
        }
        return counts.map { $0.1 == 1 ? "bundle \(Wording.grouped($0.0))" : "\($0.1) × bundle \(Wording.grouped($0.0))" }.joined(separator: " + ")
    }

    static func describe(_ e: CheerHistoryEntry, _ names: [String: String]) -> String {
        let comment = (e.comments ?? []).compactMap(\.body).last.map { " “\($0)”" } ?? ""
        return "\(Wording.grouped(e.amount)) cheer on \(names[e.product] ?? e.product)\(comment)"
    }

    static func describe(_ item: HistoryItem, _ names: [String: String]) -> String {
        switch item {
        case let .entry(e): return describe(e, names)
        case let .unreadable(u): return "\(u.id.map { "id " + $0 } ?? "history[\(u.index)]") (not readable)"
        }
    }

    static func signed(_ n: Int) -> String { Wording.signedDelta(n) }
}
