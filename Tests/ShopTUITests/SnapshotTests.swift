import Foundation
import ShopAPI
import ShopCompare
import ShopLedger
import StubCore
import Testing
import TerminalText
@testable import ShopTUI
@testable import ShopViewModels

/// Every screen, overlay and dialog as plain text, at 80×24 and 120×40 (references in __Snapshots__).
@Suite struct SnapshotTests {
    static let sizes = [(80, 24), (120, 40)]

    func both(_ name: String, _ app: AppState) {
        for (w, h) in Self.sizes {
            let grid = Renderer.render(frame(app, width: w, height: h))
            assertSnapshot(grid, "\(name)-\(w)x\(h)")
            checkIntegrity(grid)
        }
    }

    /// No control character in any cell, and every row exactly as wide as the grid.
    func checkIntegrity(_ grid: Grid, sourceLocation: SourceLocation = #_sourceLocation) {
        for y in 0..<grid.height {
            #expect(DisplayWidth.of(grid.row(y)) == grid.width, "row \(y) is \(DisplayWidth.of(grid.row(y))) wide", sourceLocation: sourceLocation)
            let bad = grid.row(y).unicodeScalars.filter { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.generalCategory == .format }
            #expect(bad.isEmpty, "row \(y) holds \(bad.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
        }
    }

    @Test func shop() {
        var l = Loop()
        l.press(.char("j"), .char("j"))
        both("shop", l.app)
    }

    @Test func shopFiltered() {
        var l = Loop()
        l.press(.char("/"))
        l.type("cafe")
        both("shop-filter", l.app)
    }

    @Test func historyWithCommentsAndAnUnreadableEntry() {
        var l = Loop()
        l.press(.char("2"), .enter)
        both("history", l.app)
    }

    @Test func historyGoToPrompt() {
        var l = Loop()
        l.press(.char("2"), .char(":"))
        both("history-goto-empty", l.app)
        l.type("2026-10-01")
        both("history-goto", l.app)
    }

    @Test func historyFindInProgressHighlightsMatches() {
        var l = Loop()
        l.press(.char("2"), .char("/"))
        l.type("ocean")
        l.press(.enter)
        guard let token = l.effects.compactMap({ effect -> Token? in
            if case let .request(token, .history(_, 1, 200)) = effect { return token } else { return nil }
        }).last else {
            Issue.record("no scan request")
            return
        }
        // The first scan page (the fixture's entries as the first of 500 pages of 200) has come.
        let fixture = historyFixture()
        // A full page of 200: the fixture's entries, then older ones that do not match (a page served short
        // would be read on in pages of its size: issue 35).
        let padding = (fixture.items.count..<200).map { i in
            HistoryItem.entry(ShopAPI.CheerHistoryEntry(id: "older-\(i)", creator: "Field & Foley", amount: 1, product: "com.reiterate.pack.rain",
                                                        date: now.addingTimeInterval(-86_400 - Double(i) * 60), comments: nil))
        }
        let scanPage = CheerHistoryPage(items: fixture.items + padding, page: 1, perPage: 200, totalPages: 500, totalCount: fixture.totalCount)
        l.send(.replied(token, .success(.history(scanPage)), at: now))
        #expect(l.app.history.find?.scan?.page == 2 && (l.app.history.find?.matchCount ?? 0) > 0)
        both("history-find", l.app)
    }

    @Test func checksTabWithAFailedVerification() {
        var l = Loop()
        l.app.checks.add([
            CheckRecord(check: .write(.spendBalance), outcome: .failed, expected: "1,243 (1,250 − 7)", actual: "1,242", request: "POST /api/v1/spend_cheer", requestID: "rq-7f3a", at: now),
            CheckRecord(check: .write(.spendHistory), outcome: .passed, expected: "newest 7 on com.reiterate.pack.rain, total 231",
                        actual: "newest 7 on com.reiterate.pack.rain, total 231", request: "POST /api/v1/spend_cheer", requestID: "rq-7f3a", at: now),
        ])
        l.press(.char("4"))
        both("checks", l.app)
    }

    /// Findings that recur are one row each, with their count; two places on one answer are told apart by
    /// the place ahead of the request (issue 27, item 3).
    @Test func checksTabWithGroupedFindingsAtTwoPlaces() {
        var l = Loop()
        let target = "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50"
        for n in 1...3 {
            for (path, rule, expected, actual) in [("history[2].amount", FieldRule.type, "history[2].amount: integer", "string “lots”"),
                                                   ("history[2].date", FieldRule.dateTime, "history[2].date: date-time", "“yesterday”")] {
                let finding = Finding(check: .schema, expected: expected, actual: actual, place: .field(path: path, rule: rule))
                l.app.checks.add([CheckRecord(check: .contract(.schema), outcome: .failed, expected: expected, actual: actual, request: "GET \(target)",
                                              requestID: "rq-\(n)", at: now, key: FindingKey(finding, method: "GET", target: target))])
            }
        }
        l.press(.char("4"))
        #expect(l.app.checks.records.count == 2 && l.app.checks.failures == 2)
        both("checks-grouped", l.app)
    }

    /// Answers a watch round: the balance, the entries and the balance again, then the packs if asked.
    func watchRound(_ l: inout Loop, _ balance: Int, _ entries: [ShopAPI.CheerHistoryEntry], total: Int, id: String, at: Date,
                    packs: [ShopAPI.AudioPack] = fixturePacks) {
        if let t = l.app.token(for: .watchWake) { l.send(.woke(t, at: at)) }
        for _ in 0..<30 {
            // A round held back (settled reads) is read again: the same answers, the same request ids.
            if !l.app.watch.suspects.isEmpty, let t = l.app.token(for: .watchWake) { l.send(.woke(t, at: at)) }
            guard let (token, purpose) = l.app.requestsOut.sorted(by: { $0.key < $1.key }).first(where: { $0.value == .watch(.balance) || $0.value == .watch(.history(perPage: 20)) })
            else { break }
            switch purpose {
            case .watch(.balance): l.send(.replied(token, .success(.balance(CheerBalance(balance: balance))), requestID: "rq-b\(id)", at: at))
            case .watch(.history):
                let page = CheerHistoryPage(items: entries.map { .entry($0) }, page: 1, perPage: 20, totalPages: 12, totalCount: total)
                l.send(.replied(token, .success(.history(page)), requestID: "rq-h\(id)", at: at))
            default: break
            }
        }
        if let token = l.app.token(for: .watch(.packs)) {
            l.send(.replied(token, .success(.packs(AudioPackList(packs: packs))), at: at))
        }
    }

    static let older = [ShopAPI.CheerHistoryEntry(id: "h1", creator: "Field & Foley", amount: 5, product: "com.reiterate.pack.rain", date: now.addingTimeInterval(-900), comments: nil)]
    static let cheer = ShopAPI.CheerHistoryEntry(id: "h2", creator: "Field & Foley", amount: 7, product: "com.reiterate.pack.rain", date: now.addingTimeInterval(1),
                                                 comments: [ShopAPI.CheerComment(signature: "qa-alice", body: "great pack")])

    /// The Live tab: a reconciled cheer, a purchase, and a flagged debit, newest first, with the
    /// header's watch badge; the flagged row's detail names the reads on both sides.
    @Test func liveTabWithAReconciledAndAFlaggedEvent() {
        var l = Loop()
        l.press(.char("w"))
        let (older, cheer) = (Self.older, Self.cheer)
        watchRound(&l, 1_250, older, total: 230, id: "1", at: now)
        watchRound(&l, 1_243, [cheer] + older, total: 231, id: "2", at: now.addingTimeInterval(2))
        watchRound(&l, 1_443, [cheer] + older, total: 231, id: "3", at: now.addingTimeInterval(4))
        watchRound(&l, 1_436, [cheer] + older, total: 231, id: "4", at: now.addingTimeInterval(6))
        l.press(.char("5"), .char("j"))
        both("live", l.app)
        let text = Renderer.render(frame(l.app, width: 120, height: 40)).text
        #expect(text.contains("● watching 2 s") && text.contains("✔") && text.contains("✗ flagged") && text.contains("request id rq-b3"))
    }

    /// What the watch just saw change shows briefly on the other tabs, by a mark, not by colour alone:
    /// the header's balance with its change, `+` beside the new history entry, `Δ` beside the pack
    /// whose total moved. Then the watch pauses: `‖ paused`, and the marks go.
    @Test func watchMarksOnTheOtherTabs() {
        var l = Loop()
        l.press(.char("w"))
        var moved = fixturePacks
        moved[0].cheerTotal = (moved[0].cheerTotal ?? 0) + 7
        for round in 1...4 { watchRound(&l, 1_250, Self.older, total: 230, id: "\(round)", at: now.addingTimeInterval(Double(round - 1) * 2)) }
        watchRound(&l, 1_243, [Self.cheer] + Self.older, total: 231, id: "5", at: now.addingTimeInterval(8), packs: moved)
        // The History list takes the new entry: its first page, read again, has it on top.
        var first = historyFixture()
        first.items.insert(.entry(Self.cheer), at: 0)
        first.totalCount += 1
        if let token = l.app.token(for: .historyPage(1)) { l.send(.replied(token, .success(.history(first)), at: now.addingTimeInterval(8))) }
        l.press(.char("1"))
        both("watch-marks-shop", l.app)
        l.press(.char("2"))
        both("watch-marks-history", l.app)
        var text = Renderer.render(frame(l.app, width: 120, height: 40)).text
        #expect(text.contains("Balance 1,243 cheer (−7)") && text.contains("+"))
        l.press(.char("w"))
        text = Renderer.render(frame(l.app, width: 120, height: 40)).text
        #expect(text.contains("‖ paused") && !text.contains("(−7)"))
    }

    /// `D` on the Shop tab: three differences marked by glyph and word, the selected one's values side by side.
    @Test func diffViewOfThePacks() {
        var l = Loop()
        let a = SideDescription(name: "user:qa-alice", environment: "staging", user: "qa-alice", takenAt: nil)
        let b = SideDescription(name: "env:next-build", environment: "next-build", user: "qa-alice", takenAt: nil)
        let differences = [
            Difference(.changed, DiffPath.root("packs").key("com.reiterate.pack.rain").field("price_cents"), old: .int(199), new: .int(249), label: "Rain on a Tin Roof"),
            Difference(.removed, DiffPath.root("packs").key("com.reiterate.pack.harbour-fog"), old: .object(["identifier": .string("com.reiterate.pack.harbour-fog"), "name": .string("Harbour Foghorns")]), label: "Harbour Foghorns"),
            Difference(.added, DiffPath.root("packs").key("com.reiterate.pack.new"), new: .object(["identifier": .string("com.reiterate.pack.new"), "name": .string("Brand New Pack \u{1B}[31m")]), label: "Brand New Pack"),
        ]
        l.app.screen.focus = .diff(DiffViewState(result: DiffResult(what: .packs, a: a, b: b, differences: differences)))
        l.press(.char("n"))
        both("diff", l.app)
        let text = Renderer.render(frame(l.app, width: 120, height: 40)).text
        #expect(text.contains("− removed") && text.contains("~ changed") && text.contains("+ added") && text.contains("Harbour Foghorns"))
    }

    @Test func aWriteBeingVerifiedClaimsNothingYet() {
        var l = Loop()
        l.press(.char("s"))
        l.type("7")
        l.press(.enter, .enter)
        guard case .pending? = l.app.write.action?.phase, let token = l.app.token(for: .write) else { Issue.record("not sent"); return }
        l.send(.replied(token, .failure(.transport(.timeout(), endpoint: .post("/api/v1/spend_cheer"))), at: now))
        let text = Renderer.render(frame(l.app)).text
        #expect(text.contains("┌─ Checking") && !text.contains("Failed") && text.contains("reading the balance again"))
    }

    @Test func requestsWithDetail() {
        var l = Loop()
        l.press(.char("3"), .char("j"))
        both("requests", l.app)
    }

    @Test func requestDetailFullSize() {
        var l = Loop()
        l.press(.char("3"), .char("j"), .enter)
        both("request-detail", l.app)
    }

    @Test func helpOverlay() {
        var l = Loop()
        l.press(.char("?"))
        both("help", l.app)
    }

    @Test func helpOverlayAtTheSmallestSizeShowsEveryBinding() {
        var l = Loop()
        l.press(.char("?"))
        let grid = Renderer.render(frame(l.app, width: 60, height: 16))
        assertSnapshot(grid, "help-60x16")
        checkIntegrity(grid)
        for binding in Keymap.standard.helpRows(for: l.app) {
            #expect(grid.text.contains(binding.keys.map(\.display).joined(separator: " ")), "\(binding.keys)")
        }
    }

    @Test func spendDialogAndConfirmation() {
        var l = Loop()
        l.press(.char("s"))
        l.type("50")
        l.press(.tab)
        l.type("Lovely 🌧")
        both("spend", l.app)
        l.press(.enter)
        both("spend-confirm", l.app)
    }

    /// Sent as typed (Ctrl-U): the mark in glyph and words, the product as a field, an overspend
    /// accepted by the form; the confirmation says what the shop must refuse.
    @Test func spendDialogSentAsTyped() {
        var l = Loop()
        l.press(.char("s"), .ctrl("u"))
        l.type("-3")
        l.press(.tab, .tab)
        for _ in 0..<("com.reiterate.pack.rain".count) { l.press(.backspace) }
        l.type("com.reiterate.pack.nope")
        both("spend-as-typed", l.app)
        l.press(.enter)
        both("spend-as-typed-confirm", l.app)
    }

    @Test func buyDialog() {
        var l = Loop()
        l.press(.char("b"))
        l.send(.transactionIDMade(4_242_424_242))  // not filled: the loop's own 77 is already there
        l.press(.tab, .backspace, .backspace)
        l.type("4242424242")
        both("buy", l.app)
    }

    /// Issue 44: the form reads the App Store's record, and its refusal is wrapped in full (it was cut at the
    /// dialog's edge: "… the App Store's record says tra").
    @Test func buyDialogRefusedByTheAppStoresRecord() {
        var l = Loop()
        l.app.purchases = PurchasesState(enabled: true)
        l.press(.char("b"))
        l.press(.tab, .backspace, .backspace)
        l.type("2000000000000042")
        l.press(.enter)
        both("buy-reading-record", l.app)
        l.send(.appStoreRecordRead(AppStoreRecordRead(
            transactionID: "2000000000000042", paid: .init(product: "com.reiterate.cheer.200", quantity: 1, revoked: true),
            line: "note: the App Store's record of 2000000000000042: 1 × com.reiterate.cheer.200, refunded: the shop must refuse to credit it\n")))
        both("buy-refused-by-record", l.app)
        let text = Renderer.render(frame(l.app, width: 80, height: 24)).text
        #expect(text.contains("transaction 2000000000000042 was refunded. Send it as typed") && text.contains("│ to try."), "\(text)")
    }

    @Test func offlineWithTheCachedBalance() {
        var app = AppState(context: ShopContext(environment: "local", baseURL: "http://127.0.0.1:8080", user: "qa-alice"))
        _ = ShopUpdate.update(&app, .start)
        _ = ShopUpdate.update(&app, .cacheLoaded(app.token(for: .cacheRead) ?? Token(0), balance: .init(value: CheerBalance(balance: 1250), fetchedAt: now.addingTimeInterval(-720)),
                                                 packs: .init(value: AudioPackList(packs: fixturePacks), fetchedAt: now.addingTimeInterval(-720)), firstPage: nil))
        let refused = ShopAPIError.transport(.connectionRefused(host: "127.0.0.1"), endpoint: .get("/api/v1/balance"))
        _ = ShopUpdate.update(&app, .replied(app.token(for: .balance) ?? Token(0), .failure(refused), at: now))
        _ = ShopUpdate.update(&app, .replied(app.token(for: .packs) ?? Token(0), .failure(refused), at: now))
        both("offline", app)
    }

    @Test func firstFrameWhileLoading() {
        var app = AppState(context: ShopContext(environment: "production", baseURL: "https://shop.reiterate.invalid", user: "qa-alice", readOnly: true))
        _ = ShopUpdate.update(&app, .start)
        both("loading", app)
    }

    @Test func tooSmall() {
        let grid = Renderer.render(frame(loadedState(), width: 59, height: 16))
        assertSnapshot(grid, "too-small-59x16")
        #expect(grid.text.contains("Terminal too small: 59×16"))
        #expect(!Renderer.render(frame(loadedState(), width: 60, height: 16)).text.contains("too small"))
        #expect(Renderer.render(frame(loadedState(), width: 60, height: 15)).text.contains("too small"))
    }

    @Test func hostileTextIsNeutralisedAndColumnsStayAligned() {
        var app = loadedState()
        let hostile = HostileText.apply(to: Catalog.packs(seed: 1)).map { p in
            AudioPack(identifier: p.identifier, name: p.name, creator: p.creator, description: p.description, priceCents: p.priceCents,
                      currency: p.currency, sampleCount: p.sampleCount, durationSeconds: p.durationSeconds, cheerTotal: p.cheerTotal, tags: p.tags)
        }
        _ = ShopUpdate.update(&app, .action(.refresh))
        _ = ShopUpdate.update(&app, .replied(app.token(for: .packs) ?? Token(0), .success(.packs(AudioPackList(packs: hostile))), at: now))
        for (w, h) in Self.sizes {
            let grid = Renderer.render(frame(app, width: w, height: h))
            assertSnapshot(grid, "hostile-\(w)x\(h)")
            checkIntegrity(grid)
            // The price column ends at the same column on every list row.
            let rows = (3..<(h - 2)).map { grid.row($0) }
            let priceEnds = Set(rows.compactMap { row -> Int? in
                guard let r = row.range(of: "$") ?? row.range(of: "free") else { return nil }
                let prefix = String(row[..<r.lowerBound])
                let token = row[r.lowerBound...].prefix { $0 != " " }
                return DisplayWidth.of(prefix) + DisplayWidth.of(String(token))
            })
            #expect(priceEnds.count == 1, "price column ends at \(priceEnds.sorted())")
        }
    }

    @Test func wideCharactersKeepColumnsAligned() {
        let grid = Renderer.render(frame(loadedState(), width: 80, height: 24))
        // CHEER is right-aligned: every pack row ends its number at the same column.
        let ends = Set((3..<9).map { y -> Int in
            let row = grid.row(y)
            let list = String(row.prefix { $0 != "┌" && $0 != "│" })
            return DisplayWidth.of(list.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
        })
        #expect(ends.count == 1, "\(ends)")
    }
}
