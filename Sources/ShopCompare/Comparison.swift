import Foundation
import JSONTokens
import TerminalText

/// What `compare` looks at.
public enum ComparedPart: String, Sendable, CaseIterable {
    case balance, packs, history
}

/// Two sides compared a read at a time: the balance, the packs, and the history page by page (the
/// history's entries are keyed, so only those still waiting for their other side are held). Pure.
public struct Comparison: Sendable {
    public let differ: Differ
    public private(set) var differences: [Difference] = []
    /// The request ids of the reads compared, per side.
    public private(set) var requestIDs: (a: [String], b: [String]) = ([], [])
    var history: KeyedListDiff
    var totalsCompared = false
    /// Per side: whether the server has pages past the last one compared, and the oldest entry's date read.
    var edge: (a: Edge, b: Edge) = (Edge(), Edge())
    /// Entries one side had near the end of the pages compared, which the other side may have on its
    /// next page: not called added or removed.
    public private(set) var pastTheEdge = 0

    struct Edge: Sendable {
        var more = false
        var oldest: Date?
    }

    /// Reads an entry's `date` (the app passes the contract's reader, which takes every form the
    /// contract allows; the default takes ISO 8601 with `Z` or a `+hh:mm` offset).
    let dates: @Sendable (String) -> Date?

    public init(ignore: IgnoreRules = IgnoreRules(), dates: @escaping @Sendable (String) -> Date? = Stamp.date) {
        self.dates = dates
        differ = Differ(ignore: ignore)
        history = KeyedListDiff(path: .root("history"), differ: differ)
    }

    mutating func note(_ a: RecordedRead?, _ b: RecordedRead?) {
        if let id = a?.requestID { requestIDs.a.append(id) }
        if let id = b?.requestID { requestIDs.b.append(id) }
    }

    public mutating func balance(_ a: RecordedRead, _ b: RecordedRead) {
        note(a, b)
        differences += differ.diff(a.body, b.body, at: .root("balance"))
    }

    public mutating func packs(_ a: RecordedRead, _ b: RecordedRead) {
        note(a, b)
        differences += differ.diff(Self.member(a.body, "packs"), Self.member(b.body, "packs"), at: .root("packs"))
    }

    /// A history page from either side, or both (pages need not come in step).
    public mutating func history(a: RecordedRead?, b: RecordedRead?) {
        note(a, b)
        if let a, case let .array(entries)? = Self.member(a.body, "history") {
            history.add(a: entries)
            edge.a = edge(a.body, entries)
        }
        if let b, case let .array(entries)? = Self.member(b.body, "history") {
            history.add(b: entries)
            edge.b = edge(b.body, entries)
        }
        // The totals, from the first pages.
        if !totalsCompared, let a, let b, a.what == .history(page: 1), b.what == .history(page: 1) {
            totalsCompared = true
            differences += differ.diff(Self.member(a.body, "total_count"), Self.member(b.body, "total_count"), at: .root("history_total"))
        }
    }

    /// Every difference, the history's last.
    public mutating func finish() -> [Difference] {
        // The history is newest first: an entry only one side showed, no newer than the oldest the
        // other side showed while that side has more pages, may be on its next page.
        let (a, b) = edge
        let judged = history.finish().filter { d in
            let beyond: Bool
            switch d.kind {
            case .removed: beyond = b.more && date(of: d.old).map { date in b.oldest.map { date <= $0 } ?? false } ?? false
            case .added: beyond = a.more && date(of: d.new).map { date in a.oldest.map { date <= $0 } ?? false } ?? false
            case .changed, .moved: beyond = false
            }
            if beyond { pastTheEdge += 1 }
            return !beyond
        }
        differences += judged
        return differences
    }

    func edge(_ body: JSONValue?, _ entries: [JSONValue]) -> Edge {
        var e = Edge()
        if case let .int(page)? = Self.member(body, "page"), case let .int(pages)? = Self.member(body, "total_pages") { e.more = page < pages }
        e.oldest = entries.last.flatMap { date(of: $0) }
        return e
    }

    func date(of entry: JSONValue?) -> Date? {
        guard case let .string(text)? = Self.member(entry, "date") else { return nil }
        return dates(text)
    }

    static func member(_ body: JSONValue?, _ key: String) -> JSONValue? {
        if case let .object(o)? = body { return o[key] }
        return nil
    }
}

/// How a side is named on screen and in JSON: `env:staging/user:qa-bob`, or a file.
public struct SideDescription: Sendable, Equatable {
    public var name: String
    public var environment: String?
    public var user: String?
    public var takenAt: Date?

    public init(name: String, environment: String?, user: String?, takenAt: Date?) {
        self.name = name
        self.environment = environment
        self.user = user
        self.takenAt = takenAt
    }
}

/// The differences in words: a table for a person, JSON for a script.
public enum DiffReport {
    /// `changed  packs[com.reiterate.pack.rain].price_cents  199 → 249  (Rain on a Tin Roof)`, a line
    /// each; server text made safe for the terminal; a summary line last.
    public static func text(_ differences: [Difference], a: SideDescription, b: SideDescription, width: Int = 100) -> String {
        var out = "A: \(Sanitizer.line(a.name))\(describe(a))\nB: \(Sanitizer.line(b.name))\(describe(b))\n"
        guard !differences.isEmpty else { return out + "The same: no difference.\n" }
        let rows = differences.map { d -> (String, String, String) in
            let whereText = Sanitizer.line(d.path.description)
            var what: String
            switch d.kind {
            case .changed: what = "\(value(d.old)) → \(value(d.new))"
            // A whole element: what a person calls it (its fields are in --json).
            case .added: what = d.label.map { "“" + Sanitizer.line($0) + "”" } ?? value(d.new)
            case .removed: what = d.label.map { "“" + Sanitizer.line($0) + "”" } ?? value(d.old)
            case .moved: what = d.places.map { "place \($0.old + 1) → \($0.new + 1)" } ?? ""
            }
            if let label = d.label, d.kind == .changed || d.kind == .moved { what += "  (\(Sanitizer.line(label)))" }
            return (d.kind.rawValue, whereText, what)
        }
        let pathWidth = min(max(rows.map { DisplayWidth.of($0.1) }.max() ?? 0, 5), 60)
        out += "CHANGE   " + Columns.fit("WHERE", to: pathWidth) + "  A → B\n"
        for (kind, path, what) in rows {
            out += Columns.fit(kind, to: 7) + "  " + Columns.fit(path, to: pathWidth) + "  " + what + "\n"
        }
        out += summary(differences) + "\n"
        return out
    }

    /// The line that says how many entries at the end of the pages compared were not judged.
    public static func edgeNote(_ count: Int) -> String? {
        count == 0 ? nil : "note: \(count) entr\(count == 1 ? "y" : "ies") near the last page compared may be on the other side's next page: not judged (--history-pages compares more)"
    }

    /// `3 differences: 1 changed, 1 removed, 1 added`.
    public static func summary(_ differences: [Difference]) -> String {
        let counts = Difference.Kind.allCases.compactMap { kind -> String? in
            let n = differences.filter { $0.kind == kind }.count
            return n == 0 ? nil : "\(n) \(kind.rawValue)"
        }
        return "\(differences.count) difference\(differences.count == 1 ? "" : "s"): " + counts.joined(separator: ", ")
    }

    static func describe(_ side: SideDescription) -> String {
        var parts: [String] = []
        if let e = side.environment { parts.append(Sanitizer.line(e)) }
        if let u = side.user { parts.append(Sanitizer.line(u)) }
        if let t = side.takenAt { parts.append("taken " + Stamp.text(t)) }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }

    /// A value in a line: strings quoted, long ones and whole objects shortened.
    static func value(_ v: JSONValue?) -> String {
        guard let v else { return "—" }
        switch v {
        case let .string(s): return "“" + Columns.truncate(Sanitizer.line(s), to: 60) + "”"
        case let .int(n): return String(n)
        case let .double(d): return String(d)
        case let .bool(b): return String(b)
        case .null: return "null"
        case .array, .object:
            var w = JSONWriter()
            w.value(v)
            return Columns.truncate(Sanitizer.line(w.text), to: 80)
        }
    }

    /// One JSON object: the sides, the differences (`kind`, `path`, `rule`, `old`, `new`, `label`,
    /// `places`), the counts, and whether the two are the same.
    public static func json(_ differences: [Difference], a: SideDescription, b: SideDescription, requestIDs: (a: [String], b: [String])) -> String {
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func side(_ s: SideDescription, _ ids: [String]) -> JSONValue {
            .object(["name": .string(s.name), "environment": text(s.environment), "user": text(s.user),
                     "taken_at": text(s.takenAt.map(Stamp.text)), "request_ids": .array(ids.map(JSONValue.string))])
        }
        var counts = JSONObject()
        for kind in Difference.Kind.allCases { counts.append(kind.rawValue, .int(differences.filter { $0.kind == kind }.count)) }
        var w = JSONWriter(capacity: 1024)
        w.raw("{\"a\":")
        w.value(side(a, requestIDs.a))
        w.raw(",\"b\":")
        w.value(side(b, requestIDs.b))
        w.raw(",\"same\":")
        w.value(.bool(differences.isEmpty))
        w.raw(",\"counts\":")
        w.value(.object(counts))
        w.raw(",\"differences\":[")
        for (i, d) in differences.enumerated() {
            w.raw(i == 0 ? "\n" : ",\n")
            var o: JSONObject = ["kind": .string(d.kind.rawValue), "path": .string(d.path.description), "rule": .string(d.path.rule)]
            if let old = d.old { o.append("old", old) }
            if let new = d.new { o.append("new", new) }
            if let label = d.label { o.append("label", .string(label)) }
            if let places = d.places { o.append("places", .object(["old": .int(places.old), "new": .int(places.new)])) }
            w.value(.object(o))
        }
        w.raw("\n]}\n")
        return w.text
    }
}
