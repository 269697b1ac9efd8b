import Foundation
import ShopAPI
import TerminalText

/// The app's proxy as the session knows it: where it listens, what it intercepts, or why it did not start.
public struct ProxyStatus: Equatable, Sendable {
    /// `127.0.0.1:8877`.
    public var address: String
    /// `staging.example.com:443`, …
    public var intercepting: [String]
    /// Why it is not running (it could not listen, its CA could not be made…); nil while it runs.
    public var problem: String?
    /// What it cannot do while it runs (hosts its CA may not sign for), in one line.
    public var warning: String?

    public init(address: String, intercepting: [String], problem: String? = nil, warning: String? = nil) {
        self.address = address
        self.intercepting = intercepting
        self.problem = problem
        self.warning = warning
    }
}

/// What the program tells the view models of the app's proxy.
public enum ProxyNews: Equatable, Sendable {
    case listening(ProxyStatus)
    /// It could not start: one line, in plain words.
    case failed(String)
    /// How many of the app's exchanges it has forwarded so far (its own count: exact, whatever the
    /// exchange log dropped when the screen fell behind a burst).
    case seen(Int)
    /// An app write (a spend or a purchase) is going to the server.
    case sending(AppWrite)
    /// An app write finished: answered, failed, or answered by a fault in the server's stead.
    case finished(AppWrite)
    /// `F`'s fault was put into the app's traffic, or not.
    case faultPut(FaultPutResult)
}


extension ShopUpdate {
    static func proxyNews(_ news: ProxyNews, _ state: inout AppState) -> [Effect] {
        switch news {
        case .listening(let status):
            state.proxy = status
            state.watch.pairing = true
            if let warning = status.warning {
                state.notice = Notice(.error, "The app's proxy listens on \(status.address), but \(Sanitizer.line(warning))")
            } else {
                state.notice = Notice(.info, "The app's proxy listens on \(status.address): set it as the phone's proxy and install its CA (http://\(status.address)/).")
            }
        case .failed(let reason):
            state.proxy = ProxyStatus(address: "", intercepting: [], problem: reason)
            state.notice = Notice(.error, "The app's proxy did not start: \(Sanitizer.line(reason))")
        case .seen(let count):
            state.appExchangesCounted = max(state.appExchangesCounted, count)
        case .sending(let write):
            appWriteSent(write, &state)
        case .finished(let write):
            return appWriteFinished(write, &state)
        case .faultPut(let result):
            faultPut(result, &state)
        }
        return []
    }

    /// `a` on the Requests tab: both sources, then the app's alone, then the tool's alone.
    static func showNextSource(_ state: inout AppState) {
        switch state.requestsShown {
        case nil: state.requestsShown = .app
        case .app?: state.requestsShown = .tool
        case .tool?: state.requestsShown = nil
        }
        showRequests(&state)
        let words = state.requestsShown.map { $0 == .app ? "the app's requests only (seen through the proxy)" : "this tool's own requests only" }
            ?? "every request: this tool's and the app's"
        state.notice = Notice(.info, "Showing \(words).")
    }

    /// An app request that ended in an error is told at once, whatever tab is open, and kept on the
    /// Checks tab: a 4xx or 5xx, an answer in HTML, or no whole answer (cut short, the server unreachable).
    static func appExchangeEnded(_ e: Exchange, _ state: inout AppState) {
        guard e.source == .app else { return }
        state.appExchangesLogged += 1
        guard let error = appError(e) else { return }
        let endpoint = e.key?.endpoint
        var words = FailureWords(request: endpoint, status: e.status, what: error.what, serverWords: error.serverWords, requestID: e.requestID.map(Sanitizer.line))
        words.advice = error.advice
        state.notice = Notice(.error, "The app's request failed: ", failure: words, endpoint: nil)
        state.checks.add([CheckRecord(check: .appError, outcome: .failed, expected: "an answer the app can use",
                                      actual: Sanitizer.line(words.sentence), request: "\(e.method) \(e.path)", requestID: e.requestID, at: e.startedAt)])
    }

    /// What went wrong with an app exchange, if anything did.
    static func appError(_ e: Exchange) -> (what: String, serverWords: String?, advice: String)? {
        if let failure = e.failure {
            switch failure {
            case .cancelled: return nil  // the app gave up on it: its own doing, not an error it was shown
            case .transport(let error): return (ErrorText.sentence(error), nil, "")
            }
        }
        guard let status = e.status else { return nil }
        if let cut = e.findings.first(where: { $0.check == .noAnswer }) { return ("an answer cut short: \(cut.actual)", nil, "") }
        let type = e.responseHeaders[.contentType]?.lowercased() ?? ""
        if type.contains("text/html") {
            return ("HTTP \(status) in HTML, not JSON", nil, "")
        }
        guard status >= 400 else { return nil }
        let said = e.responseBodyPreview.map { ServerWords.read(Array($0.utf8), contentType: e.responseHeaders[.contentType]) }
        return (ErrorText.reasonPhrase(status), said?.text.flatMap(ErrorText.serverWords), "")
    }
}
