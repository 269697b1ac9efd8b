import Foundation
import ShopAPI
import Testing
import TerminalText
@testable import ShopTUI
@testable import ShopViewModels

/// The shop as the watch reads it, with the app going through the proxy: each app write is told as the
/// proxy tells it (sending, then finished), and each round's reads are answered from the shop's records.
struct PairedShop {
    var loop = Loop()
    var balance = 1_250
    var entries = [CheerHistoryEntry(id: "h1", creator: "Field & Foley", amount: 5, product: "com.reiterate.pack.rain", date: now.addingTimeInterval(-900), comments: nil)]
    var total = 230
    var packTotals = Dictionary(fixturePacks.map { ($0.identifier, $0.cheerTotal ?? 0) }, uniquingKeysWith: { a, _ in a })
    var round = 0

    /// The proxy listening (pairing on), the watch started, and its first round read at `now`.
    init() {
        loop.send(.proxy(.listening(ProxyStatus(address: "127.0.0.1:8877", intercepting: ["staging.reiterate.invalid:443"]))))
        loop.press(.char("w"))
        reads(at: now)
    }

    static func at(_ seconds: Double) -> Date { now.addingTimeInterval(seconds) }

    /// The shop records a cheer `count` times (a server that records one request twice).
    mutating func record(_ amount: Int, on product: String, comment: String? = nil, at seconds: Double, id: String) {
        entries.insert(CheerHistoryEntry(id: id, creator: "Field & Foley", amount: amount, product: product, date: Self.at(seconds),
                                         comments: comment.map { [CheerComment(signature: "qa-alice", body: $0)] }), at: 0)
        packTotals[product, default: 0] += amount
        total += 1
        balance -= amount
    }

    /// An app write (request id `rq-a<id>`), told as sent and, unless `finish` is false, as finished.
    mutating func app(_ id: Int, _ kind: ShopWrite, sent: Double, answered: Double, status: Int = 200, balance said: Int?,
                      fault: FaultNote? = nil, finish: Bool = true) -> AppWrite {
        let write = AppWrite(id: id, kind: kind, user: "qa-alice", sentAt: Self.at(sent), answeredAt: Self.at(answered), status: status,
                             balance: said, requestID: "rq-a\(id)", fault: fault)
        var out = write
        (out.answeredAt, out.status, out.balance) = (nil, nil, nil)
        loop.send(.proxy(.sending(out)))
        loop.send(.proxy(.seen(id)))
        if finish { loop.send(.proxy(.finished(write))) }
        return write
    }

    /// The next round, its reads answered at `seconds`.
    mutating func next(at seconds: Double) {
        guard let token = loop.app.token(for: .watchWake) else {
            Issue.record("no round scheduled")
            return
        }
        loop.send(.woke(token, at: Self.at(seconds)))
        reads(at: Self.at(seconds))
    }

    mutating func reads(at: Date) {
        round += 1
        for _ in 0..<30 {
            // A round that would make a finding is read again before it is judged (settled reads): the shop's
            // reads agree here, so each read again answers the same, with the same request ids.
            if !loop.app.watch.suspects.isEmpty, let wake = loop.app.token(for: .watchWake) { loop.send(.woke(wake, at: at)) }
            guard let (token, purpose) = loop.app.requestsOut.sorted(by: { $0.key < $1.key })
                .first(where: { $0.value == .watch(.balance) || $0.value == .watch(.history(perPage: WatchState.perPage)) }) else { break }
            let answer: ShopAnswer = purpose == .watch(.balance) ? .balance(CheerBalance(balance: balance))
                : .history(CheerHistoryPage(items: entries.prefix(WatchState.perPage).map { .entry($0) }, page: 1, perPage: WatchState.perPage,
                                            totalPages: (total + 19) / 20, totalCount: total))
            loop.send(.replied(token, .success(answer), requestID: purpose == .watch(.balance) ? "rq-b\(round)" : "rq-h\(round)", at: at))
        }
        if let token = loop.app.token(for: .watch(.packs)) {
            let packs = fixturePacks.map { p in
                var p = p
                p.cheerTotal = packTotals[p.identifier]
                return p
            }
            loop.send(.replied(token, .success(.packs(AudioPackList(packs: packs))), requestID: "rq-p\(round)", at: at))
        }
    }
}

/// The Live tab with the app's writes paired with the watch's reads (issue 30): the app's writes (⇄),
/// the changes they explain, one made elsewhere, a lost answer handled well, and a finding of each blame.
@Suite struct PairedLiveSnapshotTests {
    static let rain = "com.reiterate.pack.rain", cafe = "com.reiterate.pack.cafe-flore", tokyo = "com.reiterate.pack.tokyo-night"

    /// Every kind of paired event on one timeline, oldest to newest as the app and the shop made them.
    static func walk() -> PairedShop {
        var s = PairedShop()
        // An app spend, then the reads that show it.
        s.record(7, on: rain, comment: "great pack", at: 1, id: "h2")
        _ = s.app(1, .spend(product: rain, amount: 7, comment: "great pack"), sent: 1, answered: 1.2, balance: 1_243)
        s.next(at: 2)
        // A cheer from another device: no request explains it.
        s.record(5, on: cafe, at: 3, id: "h3")
        s.next(at: 4)
        // A purchase whose answer the proxy lost, retried with the same transaction id: 409, credited once.
        s.balance += 200
        _ = s.app(2, .purchase(identifier: "com.reiterate.cheer.200", transactionID: 42), sent: 5, answered: 5.2, balance: 1_438, fault: .loseAnswer)
        _ = s.app(3, .purchase(identifier: "com.reiterate.cheer.200", transactionID: 42), sent: 6, answered: 6.2, status: 409, balance: nil)
        s.next(at: 8)
        // A double tap: the second sent before the first's answer (the app's fault).
        s.record(3, on: tokyo, comment: "again", at: 9, id: "h4")
        s.record(3, on: tokyo, comment: "again", at: 9.3, id: "h5")
        let first = s.app(4, .spend(product: tokyo, amount: 3, comment: "again"), sent: 9, answered: 9.6, balance: 1_435, finish: false)
        _ = s.app(5, .spend(product: tokyo, amount: 3, comment: "again"), sent: 9.3, answered: 9.8, balance: 1_432)
        s.loop.send(.proxy(.finished(first)))
        s.next(at: 11)
        // A purchase of 100 credited 200 (the server's fault).
        s.balance += 200
        _ = s.app(6, .purchase(identifier: "com.reiterate.cheer.100", transactionID: 43), sent: 12, answered: 12.2, balance: 1_632)
        s.next(at: 14)
        s.loop.press(.char("5"))
        return s
    }

    static func text(_ app: AppState, _ w: Int, _ h: Int) -> String { Renderer.render(frame(app, width: w, height: h)).text }

    /// Moves the Live tab's selection to the first row whose text holds `words`.
    static func select(_ s: inout PairedShop, _ words: String) {
        s.loop.press(.char("g"))
        for _ in 0..<s.loop.app.watch.timeline.count {
            if s.loop.app.watch.timeline.selected?.text().contains(words) == true { return }
            s.loop.press(.char("j"))
        }
        Issue.record("no row holds \(words)")
    }

    @Test func theTimelineTellsEachWriteItsCauseAndBlame() {
        var s = Self.walk()
        #expect(s.loop.app.watch.findingCount == 2)
        Self.select(&s, "[credit-mismatch]")
        let grid = Renderer.render(frame(s.loop.app, width: 160, height: 40))
        assertSnapshot(grid, "live-paired-server-160x40")
        let text = grid.text
        // The longest rows are cut at 160 columns (whole at 240): their words up to the cut, and an app
        // write's request id kept after it.
        for words in ["· 6 app", "⇄ app POST spend_cheer 7 on Rain on a Tin Roof “great pack” → 200 (balance 1,2… rq-a1",
                      "balance 1,250 → 1,243 (−7) (app, rq-a1)", "new entry: 7 cheer on Rain on a Tin Roof “great pack” (app, rq-a1)",
                      "balance 1,243 → 1,238 (−5) (made elsewhere)", "tx 42 → 200 (balance 1,438),… rq-a2",
                      "the server credited rq-a2 but the app never got the answer", "handled well: retried with the same transaction id 42, answered 409, credited once",
                      "[double-submission]", "[credit-mismatch] expected +100", "blame: the server's fault", "requests (oldest first)"] {
            #expect(text.contains(words), "\(words)")
        }
        Self.select(&s, "[double-submission]")
        assertSnapshot(Renderer.render(frame(s.loop.app, width: 160, height: 40)), "live-paired-app-160x40")
        #expect(Self.text(s.loop.app, 160, 40).contains("blame: the app's fault"))
        // A change's detail names the writes that explain it.
        Self.select(&s, "balance 1,438 → 1,432")
        assertSnapshot(Renderer.render(frame(s.loop.app, width: 160, height: 40)), "live-paired-cause-160x40")
        let cause = Self.text(s.loop.app, 160, 40)
        #expect(cause.contains("explained by") && cause.contains("the app's request rq-a4") && cause.contains("the app's request rq-a5"))
    }

    /// At 100 columns the long rows are cut, each with its ellipsis, and the columns stay where they are.
    @Test func narrowTheRowsAreCutAndTheColumnsKeepTheirPlace() {
        var s = Self.walk()
        Self.select(&s, "[double-submission]")
        let grid = Renderer.render(frame(s.loop.app, width: 100, height: 30))
        assertSnapshot(grid, "live-paired-100x30")
        let rows = (0..<grid.height).map { grid.row($0) }.filter { $0.contains("│") && $0.range(of: #"\d\d:\d\d:\d\d"#, options: .regularExpression) != nil }
        #expect(rows.count > 10)
        for y in 0..<grid.height { #expect(DisplayWidth.of(grid.row(y)) == grid.width, "row \(y)") }
        // Each row's mark is in its column, and the panel's border (after rows cut with wide text, 東京) in its own.
        #expect(rows.allSatisfy { Array($0)[10].isMark }, "\(rows.map { Array($0)[10] })")
        let borders = Set(rows.compactMap { row in row.firstIndex(of: "│").map { DisplayWidth.of(String(row[..<$0])) } })
        #expect(borders == [60], "borders at \(borders)")
        #expect(rows.contains { $0.contains("…") })
        #expect(grid.text.contains("blame: the app's fault"))
    }

    /// `F`, then Tab: the first common fault on the message line, in words, with how to go on.
    @Test func theFaultPromptOffersTheCommonFaults() {
        var s = Self.walk()
        s.loop.press(.char("F"), .tab)
        let grid = Renderer.render(frame(s.loop.app, width: 160, height: 40))
        assertSnapshot(grid, "live-paired-fault-prompt-160x40")
        let line = grid.row(38)
        #expect(line.contains("fault: lose_answer,path=/api/v2/purchase_cheer,method=POST,count=1▏"))
        #expect(line.contains("lose the answer to the app's next purchase · Tab: the next · Enter puts it in"))
    }
}

extension Character {
    /// One of the Live tab's marks (✔ ✗ ◆ ⚑ ⇄ ! ·).
    var isMark: Bool { "✔✗◆⚑⇄!·".contains(self) }
}
