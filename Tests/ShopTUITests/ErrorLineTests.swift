import Foundation
import ShopAPI
import TerminalText
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// Every error line the app shows keeps its request id in sight at 80, 100 and 120 columns: the
/// message line, a history page that did not load, and the watch's error in the Live tab. The message
/// line and the failed page's row also keep the method and the full path whole: the server's own
/// words are shortened first.
@Suite struct ErrorLineTests {
    static let id = "rq-0123456789abcdef"
    static let long = String(repeating: "the upstream inventory service timed out while reading ", count: 3)

    /// Each failure that comes with a response head, and so with a request id.
    static let errors: [ShopAPIError] = [
        .http(status: 500, message: long, code: "internal", requestID: id, endpoint: .get("/api/v1/cheer_history"), retryAfter: nil),
        .http(status: 429, message: "slow down", code: nil, requestID: id, endpoint: .get("/api/v1/balance"), retryAfter: 7),
        .notJSON(status: 502, contentType: "text/html; charset=utf-8", requestID: id, endpoint: .get("/api/v1/cheer_history")),
        .undecodable(DecodeProblem(path: "history[3].amount", reason: .wrongType(expected: "integer")), requestID: id, endpoint: .get("/api/v1/cheer_history")),
    ]

    static let widths = [80, 100, 120]

    /// One line holds the request (method and full path) and the request id whole, and says `status`.
    func whole(_ app: AppState, _ width: Int, _ where: String, error: ShopAPIError, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = Renderer.render(frame(app, width: width, height: 30)).text
        let request = error.endpoint.map { "\($0)" } ?? ""
        let status = ErrorText.words(error).status.map { "HTTP \($0)" } ?? ""
        #expect(!request.isEmpty && text.split(separator: "\n").contains { $0.contains(request) && (status.isEmpty || $0.contains(status)) && $0.contains("(request id \(Self.id))") },
                "\(`where`) at \(width) columns [\(request)] [\(status)]:\n\(text)", sourceLocation: sourceLocation)
    }

    @Test(arguments: Array(errors.indices))
    func theMessageLineKeepsTheRequestID(_ n: Int) {
        var l = Loop(loadedState())
        l.press(.char("r"))
        guard let token = l.app.token(for: .balance) else { Issue.record("no balance read"); return }
        l.send(.replied(token, .failure(Self.errors[n]), at: now))
        for width in Self.widths { whole(l.app, width, "the message line", error: Self.errors[n]) }
    }

    @Test(arguments: Array(errors.indices))
    func aHistoryPageThatDidNotLoadKeepsTheRequestID(_ n: Int) {
        var l = Loop(loadedState())
        l.press(.char("2"), .char("]"))
        guard let token = l.app.requestsOut.first(where: { if case .historyPage(2) = $0.value { return true } else { return false } })?.key else {
            Issue.record("page 2 not asked: \(l.app.requestsOut)")
            return
        }
        l.send(.replied(token, .failure(Self.errors[n]), at: now))
        l.app.notice = nil  // the row alone
        for width in Self.widths { whole(l.app, width, "the failed page's row", error: Self.errors[n]) }
        // One row for the page, not one an entry.
        let text = Renderer.render(frame(l.app, width: 120, height: 30)).text
        let request = "\(Self.errors[n].endpoint.map { "\($0)" } ?? "?") → "
        #expect(text.components(separatedBy: request).count == 2 && text.contains("✖ entries 51"), "\(text)")
    }

    @Test(arguments: Array(errors.indices))
    func theWatchsErrorKeepsTheRequestID(_ n: Int) {
        var l = Loop(loadedState())
        l.press(.char("w"), .char("5"))
        guard let token = l.app.token(for: .watch(.balance)) else { Issue.record("no watch read"); return }
        l.send(.replied(token, .failure(Self.errors[n]), at: now))
        l.app.notice = nil
        // The Live tab's column is narrower than the request and its id at these widths: the id stays
        // whole in it, and the event's panel beside it holds the whole line, wrapped.
        for width in Self.widths { idWhole(l.app, width, "the Live tab's error") }
    }

    /// Lines that wrap rather than shorten: the id still whole on one of their lines.
    func idWhole(_ app: AppState, _ width: Int, _ where: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = Renderer.render(frame(app, width: width, height: 30)).text
        #expect(text.split(separator: "\n").contains { $0.contains(Self.id) }, "\(`where`) at \(width) columns:\n\(text)", sourceLocation: sourceLocation)
    }

    /// The Shop tab with no packs to show: its empty state is the error, wrapped under the titles.
    @Test(arguments: Array(errors.indices))
    func theEmptyShopSaysWhyWithTheRequestID(_ n: Int) {
        var l = Loop(AppState(context: loadedState().context))
        l.send(.start)
        guard let token = l.app.token(for: .packs) else { Issue.record("no packs read"); return }
        l.send(.replied(token, .failure(Self.errors[n]), at: now))
        l.app.notice = nil  // the empty state alone
        for width in Self.widths { idWhole(l.app, width, "the empty Shop tab") }
    }

    /// A spend the server refused: the outcome dialog wraps the error, id included.
    @Test(arguments: Array(errors.indices))
    func theFailedWriteDialogKeepsTheRequestID(_ n: Int) {
        var l = Loop(loadedState())
        l.press(.char("s"))
        l.type("7")
        l.press(.enter, .enter)
        guard let token = l.app.token(for: .write) else { Issue.record("not sent"); return }
        var error = Self.errors[n]
        if case let .http(_, message, code, id, _, retry) = error { error = .http(status: 409, message: message, code: code, requestID: id, endpoint: .post("/api/v1/spend_cheer"), retryAfter: retry) }
        l.send(.replied(token, .failure(error), at: now))
        l.app.notice = nil
        for width in Self.widths { idWhole(l.app, width, "the outcome dialog") }
    }

    /// The order things give way: the server's own words first, then our leading words' middle, the
    /// verdict last; the request, the status and the id never.
    @Test func aMessageLineShortensTheServersWordsFirst() {
        let failure = FailureWords(request: .get("/api/v1/cheer_history"), status: 500, what: "Internal Server Error", serverWords: Self.long,
                                   after: " [internal]", requestID: Self.id)
        let line = MessageLine(lead: "✖ entries 51–100 (page 2) did not load: ", failure: failure, requestJoin: " → ", verdict: " — Enter retries",
                               requestID: Self.id, idBeforeVerdict: true)
        // Room to spare but not for all the server's words: only they are shortened.
        let at200 = line.fitted(to: 200)
        #expect(DisplayWidth.of(at200) == 200 && at200.contains("…"), "\(at200)")
        #expect(at200.hasPrefix("✖ entries 51–100 (page 2) did not load: GET /api/v1/cheer_history → HTTP 500 Internal Server Error: the upstream"), "\(at200)")
        #expect(at200.hasSuffix(" [internal] (request id \(Self.id)) — Enter retries"), "\(at200)")
        // Less room: the server's words go to "…", then our words after the status, then the lead's middle; the verdict stays.
        let at120 = line.fitted(to: 120)
        #expect(at120.contains(": GET /api/v1/cheer_history → HTTP 500: … (request id \(Self.id)) — Enter retries")
                && at120.hasPrefix("✖ entries 51") && DisplayWidth.of(at120) <= 120, "\(at120)")
        // Narrower: the lead's middle, then (at 80 columns' room) the verdict; the request, the status and the id stay.
        let at100 = line.fitted(to: 98)
        #expect(at100.hasPrefix("✖ entri") && at100.hasSuffix(": GET /api/v1/cheer_history → HTTP 500: … (request id \(Self.id)) — Enter retries"), "\(at100)")
        for room in [78] {
            let fitted = line.fitted(to: room)
            #expect(fitted.contains("GET /api/v1/cheer_history → HTTP 500") && fitted.hasSuffix("(request id \(Self.id))")
                    && !fitted.contains("retries") && DisplayWidth.of(fitted) <= room, "\(fitted)")
        }
        // A notice with no failure is its headline, whole when it fits.
        #expect(MessageLine(Notice(.info, "Find stopped"), mark: "✔ ").fitted(to: 80) == "✔ Find stopped")
        // The sentence printed is today's, with the id where the error's words put it.
        let notice = Notice(.error, "Go to stopped: ", failure: failure)
        #expect(notice.text == "Go to stopped: GET /api/v1/cheer_history: HTTP 500 Internal Server Error: \(Self.long) [internal] (request id \(Self.id))")
        #expect(notice.requestID == Self.id)
    }
}
