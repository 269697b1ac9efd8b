import Foundation
import ShopAPI
import TerminalText

/// `session diff A B`: two sessions side by side (two builds). Findings are matched by kind and subject
/// — never by position or time, nor by how often each session happened to see it. In a subject, what is only one session's own (a transaction id, an entry id, a
/// request id, a page's time) is masked, so the same check on the next build is the same finding.
/// Purchases are matched by transaction id (the ledger reads the tester's whole App Store history, so a
/// later session judges the earlier one's purchases again): those whose verdict changed are listed.
public struct SessionDiff: Sendable, Encodable {
    /// A finding as the session keeps it (its latest sighting's words; the first and last request ids), and
    /// how often the session saw it. Encoded flat: the finding's fields and `count`.
    @dynamicMemberLookup
    public struct Item: Sendable, Encodable, Equatable {
        public var finding: SessionFinding
        public var count: Int

        public subscript<T>(dynamicMember path: KeyPath<SessionFinding, T>) -> T { finding[keyPath: path] }

        public func encode(to encoder: any Encoder) throws {
            try finding.encode(to: encoder)
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(count, forKey: .count)
        }

        enum Keys: String, CodingKey { case count }
    }

    public struct Changed: Sendable, Encodable, Equatable {
        public var transaction: String
        public var before: String
        public var after: String
    }

    public var a: String
    public var b: String
    public var new: [Item]
    public var fixed: [Item]
    public var still: [Item]
    public var verdictsChanged: [Changed]
    /// What either record lacks (a diff of incomplete records says so).
    public var incomplete: [String]

    public init(_ first: SessionRecord, _ second: SessionRecord, now: Date = Date()) {
        a = first.meta?.name ?? "A"
        b = second.meta?.name ?? "B"
        let inA = Self.grouped(first.findings), inB = Self.grouped(second.findings)
        let keysA = Set(inA.map(\.key))
        let keysB = Set(inB.map(\.key))
        new = inB.filter { !keysA.contains($0.key) }.map(\.item)
        still = inB.filter { keysA.contains($0.key) }.map(\.item)
        fixed = inA.filter { !keysB.contains($0.key) }.map(\.item)
        var before: [String: String] = [:]
        for v in first.verdicts { before[v.transaction] = v.verdict }
        var after: [String: String] = [:]
        var order: [String] = []
        for v in second.verdicts {
            if after[v.transaction] == nil { order.append(v.transaction) }
            after[v.transaction] = v.verdict
        }
        verdictsChanged = order.compactMap { t in
            guard let was = before[t], let now = after[t], was != now else { return nil }
            return Changed(transaction: t, before: was, after: now)
        }
        incomplete = [(a, SessionSummary(first, now: now)), (b, SessionSummary(second, now: now))].flatMap { name, s in
            s.incomplete.map { "\(name): \($0)" }
        }
    }

    /// Each kind and subject once, in the order first seen, with how often and the latest sighting's words.
    static func grouped(_ findings: [SessionFinding]) -> [(key: String, item: Item)] {
        var order: [String] = []
        var items: [String: Item] = [:]
        for f in findings {
            let key = key(f)
            if var seen = items[key] {
                seen.count += 1
                seen.finding.actual = f.actual
                seen.finding.requestIDs = Array(seen.finding.requestIDs.prefix(1)) + f.requestIDs.suffix(1)
                items[key] = seen
            } else {
                order.append(key)
                items[key] = Item(finding: f, count: 1)
            }
        }
        return order.compactMap { k in items[k].map { (k, $0) } }
    }

    /// Kind and subject, the subject's own ids masked: runs of 6 or more digits (transaction ids, times),
    /// request ids (`rq-…`), and the value of `id=` / `page_token=`.
    static func key(_ f: SessionFinding) -> String { f.kind + "\u{1F}" + masked(f.subject) }

    static func masked(_ subject: String) -> String {
        var out = ""
        var digits = ""
        func flush() {
            out += digits.count >= 6 ? "#" : digits
            digits = ""
        }
        for c in subject {
            if c.isASCII, c.isNumber {
                digits.append(c)
            } else {
                flush()
                out.append(c)
            }
        }
        flush()
        for prefix in ["rq-", "id=", "page_token=", "entry "] {
            var result = ""
            var rest = Substring(out)
            while let r = rest.range(of: prefix) {
                result += rest[..<r.upperBound] + "#"
                rest = rest[r.upperBound...].drop { !" &;,)".contains($0) }
            }
            out = result + rest
        }
        return out
    }

    /// Whether B has a finding A had not.
    public var hasNew: Bool { !new.isEmpty }

    public func text() -> String {
        var out = "session diff: \(Sanitizer.line(a)) → \(Sanitizer.line(b))\n"
        for lack in incomplete { out += "incomplete: \(Sanitizer.line(lack))\n" }
        func list(_ title: String, _ items: [Item]) {
            out += "\(title): \(items.count)\n"
            for i in items {
                out += "  [\(Sanitizer.line(i.kind))] \(Sanitizer.line(i.subject))\(i.count > 1 ? " ×\(i.count)" : ""): expected \(Sanitizer.line(i.expected)), got \(Sanitizer.line(i.actual))"
                out += (i.blame.map { " (\($0.words))" } ?? "") + (i.requestIDs.isEmpty ? "" : " — " + i.requestIDs.map(Sanitizer.line).joined(separator: ", ")) + "\n"
            }
        }
        list("new in \(Sanitizer.line(b))", new)
        list("fixed (in \(Sanitizer.line(a)) only)", fixed)
        list("still there", still)
        out += "purchases whose verdict changed: \(verdictsChanged.count)\n"
        for c in verdictsChanged { out += "  \(Sanitizer.line(c.transaction)): \(Sanitizer.line(c.before)) → \(Sanitizer.line(c.after))\n" }
        return out
    }

    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }
}
