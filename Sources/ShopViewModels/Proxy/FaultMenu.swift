import Foundation
import TerminalText

/// One of the faults `F` offers for the app's traffic: what it does, in words, and its spec (the proxy's
/// `--fault` syntax, the stand-in's).
public struct FaultChoice: Equatable, Sendable {
    public var words: String
    public var spec: String

    /// The common ones, in the order Tab goes through them; `clear` takes every fault away.
    public static let common: [FaultChoice] = [
        .init(words: "lose the answer to the app's next purchase", spec: "lose_answer,path=/api/v2/purchase_cheer,method=POST,count=1"),
        .init(words: "lose the answer to the app's next spend", spec: "lose_answer,path=/api/v1/spend_cheer,method=POST,count=1"),
        .init(words: "the app offline for its next 10 requests", spec: "offline,count=10"),
        .init(words: "2 s more on the app's next 5 writes", spec: "latency,ms=2000,method=POST,count=5"),
        .init(words: "a 500 to the app's next write, not forwarded", spec: "status,status=500,method=POST,count=1"),
        .init(words: "an HTML 502 page to the app's next request", spec: "html,status=502,count=1"),
        .init(words: "a 429 (Retry-After 5) to the app's next request", spec: "rate_limit,retry_after=5,count=1"),
        .init(words: "reset the app's next write before it is forwarded", spec: "reset,method=POST,count=1"),
        .init(words: "cut the answer to the app's next history read short", spec: "truncate,path=/api/v1/cheer_history,count=1"),
        .init(words: "no answer to the app's next write for 30 s", spec: "hang,method=POST,seconds=30,count=1"),
        .init(words: "take every fault away", spec: FaultChoice.clear),
    ]

    /// What clears the faults.
    public static let clear = "clear"
}

/// What putting a fault into the app's traffic came to.
public enum FaultPutResult: Equatable, Sendable {
    /// In force: the proxy's summary of it.
    case put(String)
    /// Every fault taken away (this many were in force).
    case cleared(Int)
    /// Not put: one line, in plain words.
    case failed(String)
}

/// The program's side of `F`: puts a fault into the proxy's (the proxy is not a view-model matter).
public protocol ProxyFaultPutter: Sendable {
    func put(_ spec: String) async -> FaultPutResult
}

extension ShopUpdate {
    /// `F`: the fault prompt, when the app's proxy runs.
    static func beginFault(_ state: inout AppState) -> [Effect] {
        guard let proxy = state.proxy, proxy.problem == nil else {
            state.notice = Notice(.error, "No app proxy runs: start with --proxy to put faults into the app's traffic.")
            return []
        }
        state.screen.prompt = PromptState(kind: .fault)
        return []
    }

    /// Tab in the fault prompt: the next common fault.
    static func completeFault(_ state: inout AppState) {
        guard var prompt = state.screen.prompt, prompt.kind == .fault else { return }
        let specs = FaultChoice.common.map(\.spec)
        let next = specs.firstIndex(of: prompt.text).map { (specs.index(after: $0)) % specs.count } ?? 0
        prompt.text = specs[next]
        state.screen.prompt = prompt
    }

    static func runFault(_ typed: String, _ state: inout AppState) -> [Effect] {
        state.steps.add("put a fault into the app's traffic: \(Sanitizer.line(typed)) (F)")
        return [.putFault(typed)]
    }

    /// The proxy put the fault in (or could not): said on the message line and on the Live timeline.
    static func faultPut(_ result: FaultPutResult, _ state: inout AppState) {
        let words: String
        switch result {
        case let .put(summary):
            words = "fault put into the app's traffic: \(Sanitizer.line(summary))"
            state.notice = Notice(.info, "Fault in force: \(Sanitizer.line(summary)). The Live tab follows what the app and the server do.")
        case let .cleared(n):
            words = "faults cleared (\(n) in force)"
            state.notice = Notice(.info, "No fault in the app's traffic now (\(n) taken away).")
        case let .failed(reason):
            state.notice = Notice(.error, "The fault was not put in: \(Sanitizer.line(reason))")
            return
        }
        state.watch.add([WatchEvent(at: state.clock ?? Date.distantPast, change: .status(words))])
    }
}
