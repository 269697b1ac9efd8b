import JSONTokens
import TerminalText

/// One finding, whichever judge made it: the contract watchdog and the pins (`Finding` on an answer), a
/// write's verification, the watch, the ledger, `negative`. Its kind, what it is about by identity, who is
/// at fault, what was expected and what was seen, the request ids it rests on, and what it may follow
/// from. Worded here, once: the Checks tab and the ⚠ count (through `CheckRecord`, which holds one), a
/// report, the CLI's `warning:` and `✗` lines and the JSON of a finding all read these words.
public struct ShopFinding: Hashable, Sendable, Encodable {
    public var kind: CheckID
    /// What it is about, by identity: a request (`POST /api/v1/spend_cheer`), a user's reads (`watch of
    /// qa-alice`), a transaction (`transaction 2000000000000001 (com.reiterate.cheer.200 ×1)`).
    public var subject: String
    /// Who is at fault; nil where the judge blames no one (a write's check that passed, an app error kept).
    public var blame: Blame?
    public var expected: String
    public var actual: String
    /// The request ids of the answers it rests on, first to last (the last is the latest answer's).
    public var requestIDs: [String]
    /// What it may follow from, in words: `possibly caused by reads that lag behind the writes (stale-read)`.
    public var causedBy: String?
    /// How often it was seen, when more than once: `×5, first rq-1, last rq-9; first got 230` (in place of
    /// the request ids in its words).
    public var recurrence: String?

    public init(kind: CheckID, subject: String, blame: Blame? = nil, expected: String, actual: String, requestIDs: [String] = [],
                causedBy: String? = nil) {
        self.kind = kind
        self.subject = subject
        self.blame = blame
        self.expected = expected
        self.actual = actual
        self.requestIDs = requestIDs
        self.causedBy = causedBy
    }

    /// A contract finding on one answer (or an app's request), about `subject`, seen on `requestID`.
    /// A contract finding seen on one answer or more (`FindingGroup`): on more, its recurrence is said.
    public init(_ group: FindingGroup) {
        // A finding about one entry is grouped by the user's history; it names the page it was last seen on.
        let target = group.finding.entry != nil && !group.lastTarget.isEmpty ? group.lastTarget : group.key.target
        self.init(group.finding, subject: "\(group.key.method) \(target)", requestID: group.lastRequestID)
        blame = nil  // a command's own answers: the server's, as every line of theirs says without saying it
        guard group.count > 1 else { return }
        requestIDs = [group.firstRequestID, group.lastRequestID].compactMap { $0 }
        var words = "×\(group.count)"
        if group.firstRequestID != nil || group.lastRequestID != nil {
            words += ", first \(group.firstRequestID ?? "no request id"), last \(group.lastRequestID ?? "no request id")"
        }
        if let firstActual = group.firstActual { words += "; first got \(firstActual)" }
        recurrence = words
    }

    public init(_ finding: Finding, subject: String, requestID: String?) {
        self.init(kind: .contract(finding.check), subject: subject, blame: finding.blame, expected: finding.expected, actual: finding.actual,
                  requestIDs: requestID.map { [$0] } ?? [])
    }

    /// The latest answer's request id.
    public var requestID: String? { requestIDs.last }

    // MARK: The words, once

    /// `[schema] expected balance: integer, got "12"`: what a contract finding and a `warning:` line say.
    public static func stated(_ name: String, expected: String, actual: String) -> String {
        "[\(name)] expected \(expected), got \(actual)"
    }

    /// `✗ spend-balance: expected 1,243, got 1,242`, or `✔ spend-balance` for a check that passed.
    public func verdict(passed: Bool) -> String {
        passed ? "✔ \(kind.name)" : "✗ \(kind.name): expected \(expected), got \(actual)"
    }

    /// `warning: POST /api/v1/spend_cheer: [spend-balance] expected …, got … (the server's fault; request id
    /// rq-9; possibly caused by …)`, sanitized, with its newline: what every command prints for a finding.
    public var warningLine: String {
        var tail: [String] = []
        if let blame { tail.append(blame.words) }
        if let recurrence { tail.append(Sanitizer.line(recurrence)) } else if let ids = idWords { tail.append(ids) }
        if let causedBy { tail.append(Sanitizer.line(causedBy)) }
        return "warning: \(Sanitizer.line(subject)): " + Self.stated(kind.name, expected: Sanitizer.line(expected), actual: Sanitizer.line(actual))
            + (tail.isEmpty ? "" : " (" + tail.joined(separator: "; ") + ")") + "\n"
    }

    /// `request id rq-9`, `request ids rq-1, rq-2`; nil for none.
    var idWords: String? {
        switch requestIDs.count {
        case 0: return nil
        case 1: return "request id \(Sanitizer.line(requestIDs[0]))"
        default: return "request ids " + requestIDs.map(Sanitizer.line).joined(separator: ", ")
        }
    }

    /// The whole finding on one line: `✗ spend-balance (the server's fault): expected …, got … — POST
    /// /api/v1/spend_cheer, request ids rq-1, rq-2; possibly caused by …`. Sanitized.
    public var line: String {
        var out = "✗ \(kind.name)" + (blame.map { " (\($0.words))" } ?? "")
        out += ": expected \(Sanitizer.line(expected)), got \(Sanitizer.line(actual)) — \(Sanitizer.line(subject))"
        out += ", " + (idWords ?? "no request id")
        if let causedBy { out += "; \(Sanitizer.line(causedBy))" }
        return out
    }

    /// The JSON object `json` writes, for a JSON line that carries a finding (`shop_finding`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(kind.name, forKey: .kind)
        try c.encode(subject, forKey: .subject)
        try c.encode(blame?.rawValue, forKey: .blame)
        try c.encode(expected, forKey: .expected)
        try c.encode(actual, forKey: .actual)
        try c.encode(requestIDs, forKey: .requestIDs)
        try c.encode(causedBy, forKey: .causedBy)
    }

    enum Keys: String, CodingKey {
        case kind, subject, blame, expected, actual
        case requestIDs = "request_ids", causedBy = "caused_by"
    }

    /// One JSON object: `kind`, `subject`, `blame` (`app`, `server`, `not known`, or null), `expected`,
    /// `actual`, `request_ids`, `caused_by` (or null).
    public var json: String {
        var w = JSONWriter()
        w.raw("{\"kind\":")
        w.string(kind.name)
        w.raw(",\"subject\":")
        w.string(subject)
        w.raw(",\"blame\":")
        w.string(blame?.rawValue)
        w.raw(",\"expected\":")
        w.string(expected)
        w.raw(",\"actual\":")
        w.string(actual)
        w.raw(",\"request_ids\":[")
        for (i, id) in requestIDs.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(id)
        }
        w.raw("],\"caused_by\":")
        w.string(causedBy)
        w.raw("}")
        return w.text
    }
}
