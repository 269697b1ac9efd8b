import Foundation
import HTTPTypes
import ShopAPI
@testable import ShopViewModels
import Testing

@Suite struct EvidenceTests {
    func exchange(method: String, path: String, headers: [(String, String)], body: String?) -> Exchange {
        Exchange(id: 1, method: method, path: path, startedAt: t0, duration: .milliseconds(5), status: 200, failure: nil,
                 requestID: "rq-1", attempt: 1, requestBytes: body?.utf8.count ?? 0, responseBytes: 2,
                 requestHeaders: Redactor.headers(HTTPFields(pairs: headers)), responseHeaders: [:],
                 requestBodyPreview: body.flatMap { Redactor.bodyPreview(Array($0.utf8)) }, responseBodyPreview: nil)
    }

    @Test func curlCarriesTheRequestButNoSecret() {
        let e = exchange(method: "POST", path: "/api/v1/spend_cheer",
                         headers: [("Authorization", "Bearer s3cr3t-token"), ("Cookie", "session=abc"), ("Content-Type", "application/json"), ("Accept", "application/json")],
                         body: #"{"amount":5,"comment":"it's lovely","product":"com.reiterate.pack.rain"}"#)
        let command = CurlCommand.make(e, baseURL: "http://127.0.0.1:8080/", tokenVariable: "STAGING_TOKEN")
        #expect(command == #"curl -sS -X POST 'http://127.0.0.1:8080/api/v1/spend_cheer' -H 'Content-Type: application/json' -H 'Accept: application/json' -H "Authorization: Bearer $STAGING_TOKEN" --data-raw '{"amount":5,"comment":"it'\''s lovely","product":"com.reiterate.pack.rain"}'"#)
        #expect(!command.contains("s3cr3t") && !command.contains("session=abc"))
        // A request the proxy saw on a further host: its own origin, never the base URL's.
        var other = exchange(method: "GET", path: "/v2/ping", headers: [], body: nil)
        other.origin = "https://media.example:443"
        #expect(CurlCommand.make(other, baseURL: "http://127.0.0.1:8080/", tokenVariable: "T") == "curl -sS 'https://media.example:443/v2/ping'")
    }

    @Test func cAndBangFindTheRequestBehindTheError() {
        var d = Driver()
        d.send(.start)
        let failing = exchange(method: "GET", path: "/api/v1/balance?user_id=qa-alice", headers: [("Authorization", "Bearer t")], body: nil)
        var recorded = failing
        recorded.status = 500
        recorded.requestID = "rq-500"
        d.apply(.exchangeRecorded(recorded))
        d.apply(.balanceLoaded(d.balanceToken, .failure(.http(status: 500, message: "boom", code: nil, requestID: "rq-500", endpoint: .get("/api/v1/balance"), retryAfter: nil)), at: t0))
        let copy = d.apply(.action(.copyCurl))
        #expect(copy == [.copyCurl(CurlCopy(command: #"curl -sS 'http://shop.test/api/v1/balance?user_id=qa-alice' -H "Authorization: Bearer $REITERATE_TOKEN""#, requestID: "rq-500"))])
        d.apply(.action(.showRequest))
        #expect(d.state.screen.tab == .requests && d.state.requests.selected?.requestID == "rq-500")
        #expect(d.state.steps.steps.contains("copied GET /api/v1/balance as curl (c)"), "\(d.state.steps.steps)")
    }

    /// The watch, pins and the HAR file are steps too, each said by the handler that did it (and a
    /// pin only once the store says it was made).
    @Test func watchPinsAndHARAreSteps() {
        var d = Driver.loaded()
        d.apply(.action(.watch))
        d.apply(.action(.watch))
        d.apply(.action(.watch))
        let balance = RequestKey(.get, "/api/v1/balance", query: [.init("user_id", "qa-alice")])
        d.apply(.pinsChanged([balance], .pinned(balance)))
        d.apply(.pinsChanged([], .unpinned(balance)))
        d.apply(.action(.writeHAR))
        #expect(Array(d.state.steps.steps.suffix(6)) == [
            "started watching qa-alice every \(WatchState.seconds(d.state.watch.interval)) (w)",
            "paused the watch (w)",
            "resumed the watch (w)",
            "pinned the answer to GET /api/v1/balance?user_id=qa-alice (P)",
            "unpinned GET /api/v1/balance?user_id=qa-alice (P)",
            "saved the session's requests as HAR (e)",
        ], "\(d.state.steps.steps)")
    }
}

@Suite struct PendingRequestTests {
    @Test func aPendingRequestIsShownThenTakesItsAnswer() async {
        let log = ExchangeLog()
        let begun = await log.begin(Exchange(id: 0, method: "POST", path: "/api/v1/spend_cheer", startedAt: t0, duration: .zero, status: nil,
                                             failure: nil, requestID: nil, attempt: 1, requestBytes: 10, responseBytes: 0,
                                             requestHeaders: [:], responseHeaders: [:], requestBodyPreview: nil, responseBodyPreview: nil))
        #expect(begun.isPending && begun.id == 1)
        var done = begun
        done.status = 200
        await log.finish(done)
        let all = await log.all()
        #expect(all.count == 1 && all[0].status == 200 && !all[0].isPending)
        // The view model shows the pending row, then the answer in its place.
        var d = Driver()
        d.apply(.exchangeRecorded(begun))
        #expect(d.state.requests.rows.map(\.isPending) == [true])
        var finished = begun
        finished.isPending = false
        finished.status = 200
        d.apply(.exchangeRecorded(finished))
        #expect(d.state.requests.rows.count == 1 && d.state.requests.rows[0].status == 200 && !d.state.requests.rows[0].isPending)
    }
}

@Suite struct BugReportTests {
    func ready() -> Driver { Driver.loaded() }

    /// A spend answered with a gateway's 500, recorded as the REST core records it.
    func failedSpend(_ d: inout Driver) {
        d.send(.beginSpend)
        d.send(.editSpend(amount: "25", comment: "for the `rain`"))
        d.send(.submitAction)
        d.send(.submitAction)
        var e = EvidenceTests().exchange(method: "POST", path: "/api/v1/spend_cheer",
                                         headers: [("Authorization", "Bearer s3cr3t"), ("Content-Type", "application/json")],
                                         body: #"{"amount":25,"comment":"for the `rain`","product":"com.reiterate.pack.rain","user_id":"qa-alice"}"#)
        e.operation = .spendCheer
        e.status = 500
        e.requestID = "rq-500"
        e.responseHeaders = HTTPFields(pairs: [("Content-Type", "text/html"), ("X-Request-Id", "rq-500")])
        e.responseBodyPreview = "<html>```\u{1B}]52;c;ZXZpbA==\u{07}bad gateway</html>"
        e.responseBytes = 60
        e.findings = [Finding(check: .requestID, expected: "an X-Request-Id", actual: "none")]  // as if; a check to report on
        d.apply(.exchangeRecorded(e))
        d.apply(.actionFinished(d.actionToken, .failure(.notJSON(status: 500, contentType: "text/html", requestID: "rq-500", endpoint: .post("/api/v1/spend_cheer"))), at: t0))
    }

    @Test func stepsSayWhatTheUserDidInWordsAndMovesMakeOneStep() {
        var d = ready()
        d.send(.moveHistorySelection(3))
        d.send(.moveHistorySelection(60))  // across a page: still one step, where the cursor ended
        d.send(.goTo("p3"))
        d.send(.setPackFilter("rain"))
        failedSpend(&d)
        #expect(d.state.steps.steps == [
            "started reiterate-shop as qa-alice on STAGING (http://shop.test)",
            "opened the History tab",
            "went to entry 64 of 230 · page 2 of 5",
            "asked to go to “p3” (:)",
            "went to entry 101 of 230 · page 3 of 5",
            "opened the Shop tab",
            "filtered the packs by “rain”",
            "spent 25 cheer on “Rain on a Tin Roof” with the comment “for the `rain`”",
            "→ the app showed: " + (d.state.lastError?.text ?? "?"),
        ])
        #expect(d.state.lastError?.requestID == "rq-500")
        // The verification's reads settle it: the same failure in other words replaces its step.
        ActionTransitions().answerReads(&d, balance: 1250)
        #expect(d.state.steps.steps.count == 9 && d.state.steps.steps.last?.contains("not applied") == true, "\(d.state.steps.steps)")
    }

    /// Steps come from the handler that knows the intent: entries coming in above move the cursor
    /// but are not something the user did; a find landing on its match is; so is a scripted write.
    @Test func aMoveTheServerMadeIsNotAStepAndAFindLandingIs() {
        var d = ready()
        d.send(.moveHistorySelection(3))
        d.send(.refresh)
        d.loadPage(1, total: 235)  // 5 entries came in above: the list moves under the cursor
        #expect(d.state.history.newEntries == 5)
        #expect(Array(d.state.steps.steps.suffix(2)) == ["went to entry 4 of 230 · page 1 of 5", "refreshed (r)"])
        d.send(.find("C"))
        guard let scan = d.state.requestsOut.first(where: { if case .findScan = $0.value { return true } else { return false } }) else {
            Issue.record("no scan")
            return
        }
        d.apply(.historyLoaded(scan.key, page: 1, .success(historyPage(1, perPage: 200, total: 235)), at: t0))
        let last = Array(d.state.steps.steps.suffix(2))
        #expect(last.first == "searched the history for “C” (/)" && last.last?.hasPrefix("went to entry 5 of 235 · page 1 of 5") == true, "\(last)")
        d.apply(.write(.purchase(identifier: "com.reiterate.cheer.50", transactionID: 7)))
        #expect(d.state.steps.steps.last == "bought com.reiterate.cheer.50 with transaction id 7")
    }

    @Test func aReportOnTheLatestErrorCarriesItsRequestCurlStepsAndChecks() throws {
        var d = ready()
        failedSpend(&d)
        d.apply(.notify("copied"))  // the error line has moved on: R still reports the latest error
        let effects = d.apply(.action(.bugReport))
        guard case let .writeReport(report)? = effects.first else { Issue.record("\(effects)"); return }
        #expect(report.title == d.state.lastError?.text && report.exchange?.requestID == "rq-500")
        let md = report.markdown(at: t0, version: "9.9", screen: "Balance 1,250 cheer\n ✗ HTTP 500")
        #expect(md.hasPrefix("# POST /api/v1/spend_cheer: HTTP 500 Internal Server Error with a non-JSON body (text/html)"))
        for part in ["- **Environment:** STAGING", "- **User:** `qa-alice`", "- **App:** reiterate-shop 9.9", "- **Time (UTC):** 2026-",
                     "1. started reiterate-shop as qa-alice", "spent 25 cheer on “Rain on a Tin Roof”",
                     "- **Request:** `POST /api/v1/spend_cheer`", "- **Status:** 500 Internal Server Error", "- **Request id:** `rq-500`",
                     "curl -sS -X POST 'http://shop.test/api/v1/spend_cheer'", #""Authorization: Bearer $REITERATE_TOKEN""#,
                     "X-Request-Id: rq-500", "## Checks", "## The screen", "Balance 1,250 cheer"] {
            #expect(md.contains(part), "\(part) missing from\n\(md)")
        }
        #expect(!md.contains("s3cr3t") && !md.contains("\u{1B}") && !md.contains("\u{07}"))
        // The body's ``` cannot close its fence: the fence around it is longer.
        #expect(md.contains("````http\nHTTP 500"))
    }

    @Test func aReportOnACheckOrARequestAndNothingToReport() {
        var d = ready()
        #expect(d.apply(.action(.bugReport)).isEmpty && d.state.notice?.text.hasPrefix("Nothing to report") == true)
        failedSpend(&d)
        d.send(.cancelAction)  // the failure's dialog closed
        d.send(.selectRequest(index: 0))
        guard case let .writeReport(onRequest)? = d.apply(.action(.bugReport)).first else { Issue.record("no report"); return }
        #expect(onRequest.title == "POST /api/v1/spend_cheer → HTTP 500 Internal Server Error" && onRequest.exchange?.requestID == "rq-500")
        d.apply(.action(.checks))
        guard let record = d.state.checks.list.selected else { Issue.record("no check"); return }
        guard case let .writeReport(onCheck)? = d.apply(.action(.bugReport)).first else { Issue.record("no report"); return }
        #expect(onCheck.checks.first == record && onCheck.title.contains("[\(record.name)]"))
    }

    @Test func writtenReportsAndHARFilesGiveTheirPathAndCopyIt() {
        var d = ready()
        let out = d.apply(.evidenceWritten(.report, .success("/s/reports/report-x.md")))
        #expect(out == [.copy("/s/reports/report-x.md")] && d.state.notice?.text == "bug report written (path copied): /s/reports/report-x.md")
        #expect(d.apply(.action(.writeHAR)) == [.writeHAR])
        d.apply(.evidenceWritten(.har(count: 1), .failure(EvidenceError("The HAR file could not be written: check that /x is a writable folder."))))
        #expect(d.state.notice?.kind == .error && d.state.notice?.text.hasPrefix("The HAR file could not be written") == true)
    }

    @Test func theStateFolderFollowsXDG() {
        #expect(EvidenceFiles.stateDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/q"]) == "/x/state/reiterate-shop")
        #expect(EvidenceFiles.stateDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/q"]) == "/home/q/.local/state/reiterate-shop")
        #expect(EvidenceFiles.stateDirectory(environment: [:]) == NSHomeDirectory() + "/.local/state/reiterate-shop")
    }
}

@Suite struct ReviewFindings {
    @Test func aReadAheadPageDoesNotClearTheErrorOfThePageOnScreen() {
        var d = BugReportTests().ready()
        d.send(.moveHistorySelection(47))  // near page 2: its read-ahead is out
        d.send(.refresh)
        guard let page1 = d.requestID(forPage: 1), let page2 = d.requestID(forPage: 2) else { Issue.record("no reload"); return }
        let failure = ShopAPIError.http(status: 500, message: "boom", code: nil, requestID: "rq-h", endpoint: .get("/api/v1/cheer_history"), retryAfter: nil)
        d.apply(.historyLoaded(page1, page: 1, .failure(failure), at: t0))
        #expect(d.state.notice?.kind == .error)
        d.apply(.historyLoaded(page2, page: 2, .success(historyPage(2, total: 230)), at: t0))
        #expect(d.state.notice?.kind == .error)  // still failing where the cursor is
    }

    @Test func afterASwitchAReportIsNotAboutTheUserLeft() {
        var d = ActionTransitions().ready(users: ["qa-alice", "qa-whale"])
        d.apply(.balanceLoaded(d.balanceToken, .failure(http(500, "x")), at: t0))
        d.send(.refresh)
        d.apply(.action(.switchUser))
        for c in "qa-whale" { d.apply(.text(c)) }
        d.apply(.action(.runPrompt))
        #expect(d.state.lastError == nil)
        #expect(d.apply(.action(.bugReport)).isEmpty && d.state.notice?.text.hasPrefix("Nothing to report") == true)
    }

    @Test func anErrorTheAppRaisedItselfHasNoExchangeAndServerTextCannotShapeTheMarkdown() {
        var d = BugReportTests().ready()
        var e = EvidenceTests().exchange(method: "GET", path: "/api/v1/balance?user_id=qa-alice", headers: [], body: nil)
        e.status = 500
        d.apply(.exchangeRecorded(e))
        d.send(.goTo("nonsense"))
        guard case let .writeReport(report)? = d.apply(.action(.bugReport)).first else { Issue.record("no report"); return }
        #expect(report.exchange == nil && report.title.hasPrefix("Go to takes"))
        var hostile = report
        hostile.title = "boom <!-- ![x](https://evil.invalid/p) *"
        hostile.steps = ["→ the app showed: [link](https://evil.invalid) `x`"]
        let md = hostile.markdown(at: t0, version: "1", screen: nil)
        #expect(md.hasPrefix(#"# boom \<!-- !\[x\](https://evil.invalid/p) \*"#))
        #expect(md.contains(#"1. → the app showed: \[link\](https://evil.invalid) \`x\`"#) && !md.replacingOccurrences(of: "\\<", with: "").contains("<!--"))
    }
}

/// Issue 27, item 7: `R` works from every dialog of a write — its result, a refusal, a lost answer,
/// still out — and the report holds the write, its verdict and checks, and every read a check
/// depends on, before and after, each with its request id (the pack reads that prove a total moved
/// or did not, too).
@Suite struct WriteReportTests {
    /// An exchange as the REST core records it.
    static func recorded(_ id: Int, _ method: String, _ path: String, _ operation: OperationID, status: Int? = 200, request: String? = nil,
                         response: String? = nil) -> Exchange {
        var e = exchange(id, status: status ?? 200, method: method, path: path)
        (e.operation, e.status) = (operation, status)
        e.requestBodyPreview = request
        e.requestBytes = request?.utf8.count ?? 0
        e.responseBodyPreview = response
        return e
    }

    static func packs(rain: Int) -> String {
        #"{"packs": [{"identifier": "com.reiterate.pack.rain", "name": "Rain on a Tin Roof", "cheer_total": \#(rain)}, {"identifier": "com.reiterate.pack.zurich-tram", "cheer_total": 300}]}"#
    }

    static func history(total: Int, newest: Int) -> String {
        #"{"history": [{"id": "h\#(newest)", "amount": \#(newest), "product": "com.reiterate.pack.rain"}], "page": 1, "per_page": 50, "total_pages": 5, "total_count": \#(total)}"#
    }

    /// The reads of the start, then a spend of 25 on the rain pack as the dialog sends it.
    func spendSent() -> Driver {
        var d = ActionTransitions().ready()
        d.apply(.exchangeRecorded(Self.recorded(1, "GET", "/api/v1/balance?user_id=qa-alice", .getBalance, response: #"{"balance": 1250}"#)))
        d.apply(.exchangeRecorded(Self.recorded(2, "GET", "/api/v1/audio_packs", .listAudioPacks, response: Self.packs(rain: 50))))
        d.apply(.exchangeRecorded(Self.recorded(3, "GET", "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", .getCheerHistory,
                                                response: Self.history(total: 230, newest: 7))))
        d.send(.beginSpend)
        d.send(.editSpend(amount: "25", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        return d
    }

    /// Whether the keymap gives `R` to the bug report in `state` (its bindings are data).
    static func rReports(_ state: AppState) -> Bool {
        if case .action(.bugReport)? = Keymap.standard.message(for: .char("R"), in: state) { return true }
        return false
    }

    func report(_ d: inout Driver, sourceLocation: SourceLocation = #_sourceLocation) -> BugReport? {
        let effects = d.apply(.action(.bugReport))
        guard case let .writeReport(report)? = effects.first else { Issue.record("no report: \(effects)", sourceLocation: sourceLocation); return nil }
        return report
    }

    @Test func rOnTheResultDialogReportsTheWriteItsChecksAndTheReadsBeforeAndAfter() {
        var d = spendSent()
        d.apply(.exchangeRecorded(Self.recorded(4, "POST", "/api/v1/spend_cheer?user_id=qa-alice", .spendCheer,
                                                request: #"{"amount":25,"product":"com.reiterate.pack.rain"}"#, response: #"{"balance": 1225}"#)))
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1225)), at: t0))
        // The verification's reads, as the server answered them: the pack's total did not move.
        d.apply(.exchangeRecorded(Self.recorded(5, "GET", "/api/v1/balance?user_id=qa-alice", .getBalance, response: #"{"balance": 1225}"#)))
        d.apply(.exchangeRecorded(Self.recorded(6, "GET", "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", .getCheerHistory,
                                                response: Self.history(total: 231, newest: 25))))
        d.apply(.exchangeRecorded(Self.recorded(7, "GET", "/api/v1/audio_packs", .listAudioPacks, response: Self.packs(rain: 50))))
        ActionTransitions().answerReads(&d, balance: 1225, newest: ActionTransitions().spendEntry(25, comment: nil), total: 231, rainCheer: 50)
        #expect(d.state.mode == .outcome, "the result dialog is shown")
        #expect(Self.rReports(d.state), "R is bound in the result dialog")
        guard let report = report(&d) else { return }
        #expect(report.title == d.state.write.outcome?.text && report.title.contains("spend-pack-total"))
        #expect(report.exchange?.requestID == "rq-4")
        #expect(report.checks.map(\.name) == ["spend-balance", "spend-history", "spend-pack-total"])
        let md = report.markdown(at: t0, version: "1", screen: nil)
        for part in ["## The write", "- **Request:** `POST /api/v1/spend_cheer?user_id=qa-alice`", "- **Request id:** `rq-4`",
                     "✗ failed `spend-pack-total`", "✔ passed `spend-balance`",
                     "## The reads the checks depend on",
                     "- before the write: `GET /api/v1/balance?user_id=qa-alice` → 200, request id `rq-1`",
                     "- after the write: `GET /api/v1/balance?user_id=qa-alice` → 200, request id `rq-5`",
                     ": balance 1,225",
                     "- before the write: `GET /api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50` → 200, request id `rq-3`",
                     ": total_count 230; newest entry: 7 on com.reiterate.pack.rain (id h7)",
                     "- after the write: `GET /api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50` → 200, request id `rq-6`",
                     "- before the write: `GET /api/v1/audio_packs` → 200, request id `rq-2`",
                     "- after the write: `GET /api/v1/audio_packs` → 200, request id `rq-7`",
                     ": com.reiterate.pack.rain: cheer_total 50"] {
            #expect(md.contains(part), "\(part) missing from\n\(md)")
        }
        #expect(!md.contains("No request is behind this report"))
    }

    @Test func aRefusalAndALostAnswerAreReportedFromTheirDialogsToo() {
        // A refusal (402): the dialog says so; the report is on the write, with the balance read after.
        var refused = spendSent()
        refused.apply(.exchangeRecorded(Self.recorded(4, "POST", "/api/v1/spend_cheer?user_id=qa-alice", .spendCheer, status: 402,
                                                      request: #"{"amount":25,"product":"com.reiterate.pack.rain"}"#,
                                                      response: #"{"message": "not enough cheer", "code": "insufficient_balance"}"#)))
        refused.apply(.actionFinished(refused.actionToken, .failure(.http(status: 402, message: "not enough cheer", code: "insufficient_balance",
                                                                          requestID: "rq-4", endpoint: .post("/api/v1/spend_cheer"), retryAfter: nil)), at: t0))
        refused.apply(.exchangeRecorded(Self.recorded(5, "GET", "/api/v1/balance?user_id=qa-alice", .getBalance, response: #"{"balance": 1250}"#)))
        ActionTransitions().answerReads(&refused, balance: 1250)
        #expect(refused.state.mode == .outcome)
        if let report = report(&refused) {
            #expect(report.exchange?.requestID == "rq-4" && report.checks.map(\.name).contains("refused-unchanged"))
            let md = report.markdown(at: t0, version: "1", screen: nil)
            #expect(md.contains("- **The server said:** “not enough cheer” [insufficient_balance]"), "\(md)")
            #expect(md.contains("- after the write: `GET /api/v1/balance?user_id=qa-alice` → 200, request id `rq-5`"), "\(md)")
        }

        // A lost answer: still out (R while it waits), then timed out; never "no request is behind this report".
        var lost = spendSent()
        lost.apply(.exchangeRecorded({ var e = Self.recorded(4, "POST", "/api/v1/spend_cheer?user_id=qa-alice", .spendCheer, status: nil,
                                                             request: #"{"amount":25,"product":"com.reiterate.pack.rain"}"#)
                                       e.isPending = true
                                       e.requestID = nil
                                       return e }()))
        #expect(lost.state.mode == .sending)
        #expect(Self.rReports(lost.state), "R is bound while the write is out")
        if let waiting = report(&lost) {
            #expect(waiting.exchange?.id == 4 && waiting.exchangeHeading == "The write")
            #expect(waiting.markdown(at: t0, version: "1", screen: nil).contains("- **Answer:** none yet"))
        }
        lost.apply(.actionFinished(lost.actionToken, .failure(.transport(.timeout(requestID: nil), endpoint: .post("/api/v1/spend_cheer"))), at: t0))
        #expect(lost.state.mode == .outcome)
        if let report = report(&lost) {
            #expect(report.exchange?.id == 4 && report.title.contains("may have been applied"))
            #expect(!report.markdown(at: t0, version: "1", screen: nil).contains("No request is behind this report"))
        }
    }

    /// The report is on the write's own exchange, never an older write's: a write that failed before
    /// it was sent has none (and the report says so), and one whose answer was lost with no head is
    /// found though it carries no request id.
    @Test func aWriteWithNoExchangeOfItsOwnIsNotGivenAnOlderWrites() {
        var d = spendSent()
        d.apply(.exchangeRecorded(Self.recorded(4, "POST", "/api/v1/spend_cheer?user_id=qa-alice", .spendCheer,
                                                request: #"{"amount":25,"product":"com.reiterate.pack.rain"}"#, response: #"{"balance": 1225}"#)))
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1225)), at: t0))
        d.apply(.exchangeRecorded(Self.recorded(5, "GET", "/api/v1/balance?user_id=qa-alice", .getBalance, response: #"{"balance": 1225}"#)))
        ActionTransitions().answerReads(&d, balance: 1225, newest: ActionTransitions().spendEntry(25, comment: nil), total: 231, rainCheer: 50)
        d.send(.cancelAction)  // the first write's dialog closed

        // A second spend fails before it is sent (no exchange is recorded for it).
        d.send(.beginSpend)
        d.send(.editSpend(amount: "10", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        #expect(d.state.mode == .sending)
        if let waiting = report(&d) { #expect(waiting.exchange == nil, "still out with no exchange: not the first write's rq-4") }
        d.apply(.actionFinished(d.actionToken, .failure(.signInExpired(.noRefreshToken, requestID: nil)), at: t0))
        ActionTransitions().answerReads(&d, balance: 1225)
        #expect(d.state.mode == .outcome)
        #expect(d.state.write.outcome?.requestID != "rq-4", "the outcome is not given the first write's request id")
        if let report = report(&d) {
            #expect(report.exchange == nil && report.curl == nil)
            let md = report.markdown(at: t0, version: "1", screen: nil)
            #expect(md.contains("## The write\n\nNo exchange of this write was recorded: it failed before it was sent"), "\(md)")
            #expect(!md.contains("rq-4"), "\(md)")
        }
        d.send(.cancelAction)

        // A third whose answer is lost with no head: its own exchange (no request id), not rq-4.
        d.send(.beginSpend)
        d.send(.editSpend(amount: "5", comment: ""))
        d.send(.submitAction)
        d.send(.submitAction)
        var lost = Self.recorded(9, "POST", "/api/v1/spend_cheer?user_id=qa-alice", .spendCheer, status: nil,
                                 request: #"{"amount":5,"product":"com.reiterate.pack.rain"}"#)
        lost.requestID = nil
        lost.failure = .transport(.timeout(requestID: nil))
        d.apply(.exchangeRecorded(lost))
        d.apply(.actionFinished(d.actionToken, .failure(.transport(.timeout(requestID: nil), endpoint: .post("/api/v1/spend_cheer"))), at: t0))
        if let report = report(&d) {
            #expect(report.exchange?.id == 9)
            #expect(!report.markdown(at: t0, version: "1", screen: nil).contains("rq-4"))
        }
    }

    /// From the Checks tab, a write's verification is a report on that write: all its checks and its reads.
    @Test func aWritesCheckOnTheChecksTabCarriesThePackReads() {
        var d = spendSent()
        d.apply(.exchangeRecorded(Self.recorded(4, "POST", "/api/v1/spend_cheer?user_id=qa-alice", .spendCheer,
                                                request: #"{"amount":25,"product":"com.reiterate.pack.rain"}"#, response: #"{"balance": 1225}"#)))
        d.apply(.actionFinished(d.actionToken, .success(CheerBalance(balance: 1225)), at: t0))
        d.apply(.exchangeRecorded(Self.recorded(7, "GET", "/api/v1/audio_packs", .listAudioPacks, response: Self.packs(rain: 50))))
        ActionTransitions().answerReads(&d, balance: 1225, newest: ActionTransitions().spendEntry(25, comment: nil), total: 231, rainCheer: 50)
        d.send(.cancelAction)  // the dialog closed
        d.apply(.action(.checks))
        while d.state.checks.list.selected?.name != "spend-pack-total", d.state.checks.list.selectedIndex < d.state.checks.records.count - 1 { d.apply(.action(.down)) }
        #expect(d.state.checks.list.selected?.name == "spend-pack-total")
        guard let report = report(&d) else { return }
        #expect(report.title.hasPrefix("POST /api/v1/spend_cheer: [spend-pack-total] expected"))
        #expect(Set(report.checks.map(\.name)) == ["spend-balance", "spend-history", "spend-pack-total"] && report.checks.first?.name == "spend-pack-total")
        let md = report.markdown(at: t0, version: "1", screen: nil)
        #expect(md.contains("- before the write: `GET /api/v1/audio_packs` → 200, request id `rq-2`"), "\(md)")
        #expect(md.contains("- after the write: `GET /api/v1/audio_packs` → 200, request id `rq-7`"), "\(md)")
        #expect(md.contains("- after the write: `GET /api/v1/balance`: no read was recorded"), "\(md)")
    }
}
