import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// Issue 27's smaller things: negative money, the pack count with unreadable packs, one numbering of
/// positions, cancelled requests, and where `c`'s curl line goes.
@Suite struct ScreenDetailsTests {
    @Test func negativeMoneyHasAMinusSignBeforeTheCurrencySign() {
        #expect(Wording.price(cents: -99, currency: "USD") == "−$0.99")
        #expect(Wording.price(cents: -99, currency: nil) == "−$0.99")
        #expect(Wording.price(cents: -1, currency: "USD") == "−$0.01")
        #expect(Wording.price(cents: -100, currency: "USD") == "−$1.00")
        #expect(Wording.price(cents: -123_456, currency: "USD") == "−$1234.56")
        #expect(Wording.price(cents: -105, currency: "EUR") == "−1.05 EUR")
        #expect(Wording.price(cents: Int.min, currency: "USD") == "−$92233720368547758.08")
        // Positive amounts are as before.
        #expect(Wording.price(cents: 99, currency: "USD") == "$0.99" && Wording.price(cents: 199, currency: "USD") == "$1.99")
        for cents in [-1, -9, -10, -99, -100, -101, -999_999] {
            let text = Wording.price(cents: cents, currency: "USD")
            #expect(text.hasPrefix("−$") && !text.dropFirst().contains("-") && !text.contains("−", after: 1), "\(text)")
        }
    }

    @Test func thePackCountCountsUnreadablePacksAndSaysHowMany() {
        var d = Driver()
        d.send(.start)
        let list = AudioPackList(packs: samplePacks.packs, unreadable: [UnreadableEntry(index: 7, id: "com.reiterate.pack.x", reason: "name: expected text")])
        d.apply(.packsLoaded(d.packsToken, .success(list), at: t0))
        let n = samplePacks.packs.count
        #expect(d.state.packs.countText == "\(n) of \(n + 1) packs (1 unreadable)")
        #expect(PacksState().countText == "0 of 0 packs")
        #expect(Driver.loaded().state.packs.countText == "\(n) of \(n) packs")
    }

    @Test func positionsAreTheWarningsJSONPaths() {
        let pack = UnreadableEntry(index: 7, id: nil, reason: "r")
        #expect(ItemPosition.pack(pack) == "packs[7]")
        let entry = UnreadableEntry(index: 2, id: "h-228", reason: "creator: expected text")
        #expect(ItemPosition.historyEntry(entry, page: 3) == "history[2] of page 3")
        #expect(HistoryColumns.unreadable(entry, page: 3) == "⚠ unreadable entry history[2] of page 3 (h-228): creator: expected text")
        #expect(HistoryColumns.unreadable(UnreadableEntry(index: 0, id: nil, reason: "r"), page: nil) == "⚠ unreadable entry history[0]: r")
    }

    @Test func aCancelledRequestIsCancelledNotAnError() {
        var e = exchange(1)
        #expect(RequestOutcome(e) == .answered(status: 200) && RequestOutcome(e).code == "200" && !RequestOutcome(e).isFailure)
        e.status = nil
        e.failure = .cancelled
        #expect(RequestOutcome(e) == .cancelled && RequestOutcome(e).code == "cancelled" && !RequestOutcome(e).isFailure)
        e.status = 200  // the head had come when the app withdrew it
        #expect(RequestOutcome(e) == .cancelled)
        e.status = nil
        e.failure = .transport(.connectionRefused(host: "127.0.0.1"))
        #expect(RequestOutcome(e) == .failed && RequestOutcome(e).code == "ERR" && RequestOutcome(e).isFailure)
        e.failure = nil
        e.status = 503
        #expect(RequestOutcome(e).code == "503" && RequestOutcome(e).isFailure)
        e.isPending = true
        #expect(RequestOutcome(e) == .pending)
    }

    @Test func cAsksTheFrontEndAndTheNoticeNeverQuotesTheCommand() {
        var d = Driver.loaded()
        var e = exchange(7)
        e.requestHeaders = [.authorization: "<redacted>"]
        d.apply(.exchangeRecorded(e))
        d.apply(.action(.requests))
        let effects = d.apply(.action(.copyCurl))
        guard case let .copyCurl(copy)? = effects.first else {
            Issue.record("no copy: \(effects)")
            return
        }
        #expect(copy.command.hasPrefix("curl -sS ") && copy.requestID == "rq-7")
        let size = "\(copy.command.count) characters"
        #expect(d.state.notice?.text == "copying as curl (\(size))…")
        // Inside tmux: the paste buffer took it.
        #expect(d.apply(.curlCopied(copy, .tmuxBuffer)).isEmpty)
        #expect(d.state.notice?.text == "copied as curl (\(size)) to tmux's paste buffer (and by OSC 52)" && d.state.notice?.requestID == "rq-7")
        // A terminal known to take OSC 52.
        #expect(d.apply(.curlCopied(copy, .terminal)).isEmpty)
        #expect(d.state.notice?.text == "copied as curl (\(size)) to the clipboard (OSC 52)")
        // Nothing known to take it: a file, named by the notice once written.
        #expect(d.apply(.curlCopied(copy, .unconfirmed)) == [.saveCurl(copy)])
        d.apply(.curlSaved(copy, .success("/s/reports/curl-x.sh")))
        #expect(d.state.notice?.text == "curl line (\(size)) written to /s/reports/curl-x.sh")
        d.apply(.curlSaved(copy, .failure(EvidenceError("no folder for it: set XDG_STATE_HOME or HOME."))))
        #expect(d.state.notice?.kind == .error && d.state.notice?.text.contains("OSC 52 only") == true)
        for text in [d.state.notice?.text ?? ""] { #expect(!text.contains("curl -sS")) }
    }
}

@MainActor
@Suite struct CurlFileTests {
    @Test func theCurlLineIsWrittenToA0600FileInTheReportsFolderWithoutTheToken() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vm-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = AppStore(state: AppState(context: alice), service: FakeShop(), cache: nil, now: { t0 })
        store.evidence = EvidenceFiles(reportsDirectory: dir + "/reports")
        var e = exchange(3)
        e.requestHeaders = [.authorization: "Bearer s3cr3t-token"]
        let command = CurlCommand.make(e, baseURL: "http://shop.test", tokenVariable: "REITERATE_TOKEN")
        let copy = CurlCopy(command: command, requestID: "rq-3")
        store.send(.curlCopied(copy, .unconfirmed))
        await store.settle()
        let path = dir + "/reports/curl-2026-11-21T222640Z.sh"
        #expect(store.state.notice?.text == "curl line (\(command.count) characters) written to \(path)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == command + "\n" && !text.contains("s3cr3t") && text.contains("$REITERATE_TOKEN"))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

extension String {
    /// Whether `c` occurs after the first `offset` characters.
    fileprivate func contains(_ c: Character, after offset: Int) -> Bool { dropFirst(offset).contains(c) }
}
