import ShopViewModels
import TerminalText

/// A message line laid out from its parts, never parsed back from a sentence. When the line is too
/// long, the server's own words are shortened first; then our words after the status and after the
/// server's (a code's end stays longest), then the middle of our leading words; the verdict (what was
/// settled, what to do) goes last: first its end (its first 40 columns stay), then whole. The request (method and
/// full path), the status and the request id stay whole.
struct MessageLine: Equatable {
    /// Our leading words, with the line's mark (`✖ Go to stopped: `).
    var lead: String
    /// `GET /api/v1/balance: `: the request and what joins it to what happened.
    var request = ""
    /// `HTTP 503`.
    var status = ""
    /// Our words of what happened (`Service Unavailable`) and after the server's (` [internal]`).
    var what = ""
    var after = ""
    /// The server's own words, sanitized (`maintenance`); `: ` joins them.
    var serverWords = ""
    /// After the failure, as the sentence has it (` — Enter retries`).
    var verdict = ""
    /// ` (request id rq-1)`, or empty.
    var id = ""
    /// The request id ahead of the verdict (`… (request id rq-1) — Enter retries`), not at the very end.
    var idBeforeVerdict = false

    init(lead: String, failure: FailureWords?, requestJoin: String = ": ", verdict: String?, requestID: String?, idBeforeVerdict: Bool = false) {
        self.idBeforeVerdict = idBeforeVerdict
        self.lead = lead
        if let failure {
            request = failure.request.map { Sanitizer.line($0.description) + requestJoin } ?? ""
            status = failure.status.map { "HTTP \($0)" } ?? ""
            what = (status.isEmpty || failure.what.isEmpty ? "" : " ") + failure.what
            serverWords = failure.serverWords ?? ""
            after = failure.after
        }
        self.verdict = (failure?.advice ?? "") + (verdict ?? "")
        id = requestID.map { " (request id \(Sanitizer.line($0)))" } ?? ""
    }

    /// The status bar's message: its mark, the notice's parts, the request id last.
    init(_ notice: Notice, mark: String) {
        self.init(lead: mark + Sanitizer.line(notice.headline), failure: notice.failure, verdict: notice.verdict.map(Sanitizer.line),
                  requestID: notice.requestID)
    }

    private var said: String { serverWords.isEmpty ? "" : ": " + serverWords }
    private var text: String { lead + request + status + what + said + after }
    private var whole: String { idBeforeVerdict ? text + id + verdict : text + verdict + id }

    /// The line within `room` columns.
    func fitted(to room: Int) -> String {
        if DisplayWidth.of(whole) <= room { return whole }
        if let line = shortened(to: room) { return line }
        var bare = self
        bare.verdict = ""
        if let line = bare.shortened(to: room) { return line }
        // Not even the request and the status fit whole: the middle of it all goes, the id stays.
        let textRoom = room - DisplayWidth.of(id)
        guard textRoom >= 8 else { return Columns.truncate(id.isEmpty ? text : String(id.dropFirst()), to: room) }
        return Columns.truncateMiddle(text, to: textRoom) + id
    }

    /// The parts that give way, in order, each down to its least; nil when that is not enough.
    private func shortened(to room: Int) -> String? {
        var line = self
        var excess = DisplayWidth.of(whole) - room
        /// `part` shortened by what is still too much, to no fewer than `least` columns: in its middle,
        /// at its end, or from its start (a code's end stays: `…ted_fault]`), a leading space kept.
        func give(_ part: WritableKeyPath<MessageLine, String>, least: Int, cut: Cut = .middle) {
            let text = line[keyPath: part]
            let width = DisplayWidth.of(text)
            guard excess > 0, width > least else { return }
            let kept = max(least, width - excess)
            let space = text.hasPrefix(" ") && kept > 1 ? " " : ""
            let rest = String(text.dropFirst(space.count)), room = kept - space.count
            switch cut {
            case _ where kept == 0: line[keyPath: part] = ""
            case .middle: line[keyPath: part] = space + Columns.truncateMiddle(rest, to: room)
            case .end: line[keyPath: part] = space + Columns.truncate(rest, to: room)
            case .start: line[keyPath: part] = space + Columns.truncateMiddle(rest, to: room, tail: 1)
            }
            excess -= width - DisplayWidth.of(line[keyPath: part])
        }
        let leadWidth = DisplayWidth.of(lead)
        give(\.serverWords, least: 1)
        give(\.what, least: status.isEmpty ? min(DisplayWidth.of(what), Self.shortest + 4) : 0, cut: .end)
        give(\.after, least: 0, cut: .start)
        give(\.lead, least: min(leadWidth, Self.shortest))
        give(\.serverWords, least: 0)
        give(\.what, least: 0, cut: .end)
        give(\.lead, least: min(leadWidth, 2))
        // The verdict's own end, while its first words (what was settled) stay.
        give(\.verdict, least: min(DisplayWidth.of(verdict), Self.verdictKept), cut: .end)
        return excess <= 0 ? line.whole : nil
    }

    enum Cut { case middle, end, start }

    /// The fewest columns a verdict keeps before it goes whole.
    static let verdictKept = 40

    /// The fewest columns our leading words keep.
    static let shortest = 8
}
