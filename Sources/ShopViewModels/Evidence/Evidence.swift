import Foundation
import ShopAPI
import TerminalText

/// A request as one shell command that sends it again: method, URL, headers (secrets left out, the
/// token as `$REITERATE_TOKEN` — the environment's variable, never its value) and body.
public enum CurlCommand {
    public static func make(_ e: Exchange, baseURL: String, tokenVariable: String) -> String {
        let base = baseURL.last == "/" ? String(baseURL.dropLast()) : baseURL
        var parts = ["curl", "-sS"]
        if e.key?.method != .get { parts += ["-X", e.method] }
        parts.append(quote((e.origin ?? base) + e.path))  // a request to another host: its own origin
        var sawAuthorization = false
        for field in e.requestHeaders {
            let name = field.name.canonicalName
            if name == "authorization" {
                sawAuthorization = true
                continue
            }
            // A header the inspector redacted is a secret: left out, not sent as "<redacted>".
            // Framing and hop-by-hop fields are curl's own to write (the app's, seen through the proxy, carry them).
            if field.value == Redactor.placeholder || ["content-length", "host", "connection", "proxy-connection", "keep-alive", "transfer-encoding", "expect", "te"].contains(name) { continue }
            parts += ["-H", quote("\(field.name.rawName): \(field.value)")]
        }
        if sawAuthorization { parts += ["-H", "\"Authorization: Bearer $\(tokenVariable)\""] }
        if let body = e.requestBodyPreview, e.requestBytes > 0 {
            parts += ["--data-raw", quote(body)]
        }
        return parts.joined(separator: " ")
    }

    /// A word for a POSIX shell: single quotes, and a quote inside as '\''.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension ShopUpdate {
    /// The exchange the user means: the selected request on the Requests tab, the selected check's
    /// request on the Checks tab, else the one behind the message on screen.
    static func exchangeInQuestion(_ state: AppState) -> Exchange? {
        let rows = state.exchanges
        switch state.screen.tab {
        case .requests: return state.requests.selected
        case .checks:
            if let id = state.checks.list.selected?.requestID, let e = rows.first(where: { $0.requestID == id }) { return e }
        default: break
        }
        return state.notice.flatMap { exchange(behind: $0, in: rows) }
    }

    /// The request a message is about: by its request id, else the newest failed one of its operation
    /// (a refused connection has no request id). A message the app made itself (a typo in go to) has none.
    static func exchange(behind notice: Notice, in rows: [Exchange]) -> Exchange? {
        if let id = notice.requestID { return rows.first { $0.requestID == id } }
        guard let endpoint = notice.endpoint else { return nil }
        return rows.first {
            $0.key?.endpoint == endpoint && ($0.failure != nil || ($0.status ?? 0) >= 400)
        }
    }

    /// `c` and `!`.
    static func evidenceAction(_ action: Action, _ state: inout AppState) -> [Effect]? {
        switch action {
        case .copyCurl:
            guard let e = exchangeInQuestion(state) else {
                state.notice = Notice(.info, "No request to copy: select one on the Requests tab, or press c on an error.")
                return []
            }
            let command = CurlCommand.make(e, baseURL: state.context.baseURL, tokenVariable: state.context.tokenVariable)
            // The notice keeps the request id: `!` next still finds the request. It never quotes the
            // command (cut to the line, it would look whole): the front end answers where it went.
            let copy = CurlCopy(command: command, requestID: e.requestID)
            state.notice = Notice(.info, "copying as curl (\(copy.size))…", requestID: e.requestID)
            state.steps.add("copied \(e.method) \(Sanitizer.line(String(e.path.prefix { $0 != "?" }))) as curl (c)")
            return [.copyCurl(copy)]
        case .bugReport:
            return draftReport(&state)
        case .writeHAR:
            state.steps.add("saved the session's requests as HAR (e)")
            return [.writeHAR]
        case .showRequest:
            guard let e = exchangeInQuestion(state), state.exchanges.contains(where: { $0.id == e.id }) else {
                state.notice = Notice(.info, "No request behind this message.")
                return []
            }
            // Shown whatever its source: a filter that hides it is lifted.
            if let shown = state.requestsShown, shown != e.source {
                state.requestsShown = nil
                showRequests(&state)
            }
            guard let index = state.requests.rows.firstIndex(where: { $0.id == e.id }) else { return [] }
            openTab(.requests, &state)
            state.screen.requestDetailFull = false
            state.requests.select(index)
            return []
        default:
            return nil
        }
    }
}
