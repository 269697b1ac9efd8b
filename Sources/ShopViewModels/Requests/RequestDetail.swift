import Foundation
import ShopAPI
import TerminalText

/// The request detail's lines (the Requests tab's right pane, or the whole body at full size): the
/// renderer draws them, and the update scrolls the full-size detail no further than they go, both
/// from this one function, so nothing drawn is fed back into the update.
public enum RequestDetail {
    /// What a line is (the renderer gives each its look).
    public enum Kind: Sendable, Equatable {
        /// The request line (`GET /api/v1/balance`).
        case title
        case plain
        /// A section's heading (`Request headers`).
        case heading
        /// The request's answers are compared with a pinned one.
        case pinned
    }

    public struct Line: Sendable, Equatable {
        public var text: String
        public var kind: Kind
    }

    /// Where the full-size detail's text goes on a screen of `width` × `height`: the body, inside its
    /// border, one column of padding each side.
    public static func textSize(screenWidth width: Int, screenHeight height: Int) -> (width: Int, height: Int) {
        (width - 4, Viewport.bodyHeight(screenHeight: height) - 2)
    }

    /// How far a detail of `count` lines scrolls in `height` rows: to the first line of its last screenful.
    public static func maxScroll(lines count: Int, height: Int) -> Int { max(0, count - height) }

    /// How far the full-size detail of the selected exchange scrolls on the model's screen (0 with
    /// nothing selected). The update has no clock: a pending request's wait is worded as of the
    /// latest time a message brought.
    public static func maxScroll(_ state: AppState) -> Int {
        guard let e = state.requests.selected else { return 0 }
        let now = state.clock ?? e.startedAt
        let size = textSize(screenWidth: state.screen.width, screenHeight: state.screen.height)
        // The date and the pin's keys are one line each, whatever they say: they do not change the count.
        let count = lines(e, state, width: size.width, now: now, date: "", pinKeys: "").count
        return maxScroll(lines: count, height: size.height)
    }

    /// The lines of `e`'s detail at `width` columns, every server string sanitized: the request,
    /// its outcome and facts (wrapped between facts, never cut), when (`date`), the request id, the
    /// pin, the headers, the request as curl, and the body as indented JSON.
    public static func lines(_ e: Exchange, _ state: AppState, width: Int, now: Date, date: String, pinKeys: String) -> [Line] {
        func clean(_ s: String) -> String { Sanitizer.line(s) }
        var lines: [Line] = []
        func add(_ text: String, _ kind: Kind = .plain) { lines.append(Line(text: text, kind: kind)) }
        for line in Columns.wrap("\(e.method) \(clean(e.path))", to: width) { add(line, .title) }
        var outcome = e.isPending ? "pending: \(elapsed(since: e.startedAt, now: now)) so far" : e.status.map { "status \($0)" } ?? "failed"
        if RequestOutcome(e) == .cancelled {
            outcome = (e.status.map { "status \($0), then " } ?? "") + "cancelled by the app before the answer was complete"
        } else if let failure = e.failure {
            outcome += (e.status == nil ? ": " : ", then ") + clean(ErrorText.sentence(failure))
        }
        var facts: [String] = []
        for fact in [outcome, "\(Int(e.duration / .milliseconds(1))) ms", "\(Wording.grouped(e.responseBytes)) B", "attempt \(e.attempt)"] {
            if let last = facts.last, DisplayWidth.of(last + " · " + fact) <= width { facts[facts.count - 1] = last + " · " + fact } else { facts.append(fact) }
        }
        for fact in facts {
            for line in Columns.wrap(fact, to: width) { add(line) }
        }
        add("at \(date)")
        add("request id \(clean(e.requestID ?? "—"))")
        if let key = e.key, state.pinned.contains(key) {
            add("◉ pinned: its answers are compared with the pinned one (\(pinKeys) unpins)", .pinned)
        }
        add("")
        add("Request headers", .heading)
        for h in e.requestHeaders { add("  \(clean(h.name.rawName)): \(clean(h.value))") }
        add("Response headers", .heading)
        for h in e.responseHeaders { add("  \(clean(h.name.rawName)): \(clean(h.value))") }
        add("")
        add("As curl (c copies it)", .heading)
        let command = CurlCommand.make(e, baseURL: state.context.baseURL, tokenVariable: state.context.tokenVariable)
        for part in Columns.wrap(clean(command), to: width) { add(part) }
        if let body = e.responseBodyPreview ?? e.requestBodyPreview {
            add("")
            add(e.responseBodyPreview != nil ? "Response body" : "Request body", .heading)
            for raw in Sanitizer.lines(JSONPretty.format(body)) {
                for part in Columns.wrap(raw.replacingOccurrences(of: "  ", with: "\u{00A0}\u{00A0}"), to: width) {
                    add(part.replacingOccurrences(of: "\u{00A0}", with: " "))
                }
            }
        }
        return lines
    }

    /// `2.4 s` since `start`.
    public static func elapsed(since start: Date, now: Date) -> String {
        String(format: "%.1f s", max(0, now.timeIntervalSince(start)))
    }
}
