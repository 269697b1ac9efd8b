import Foundation
import ShopAPI
import ShopCompare
import ShopViewModels
import TerminalText

/// A failing case as `replay` (and `explore --case`) sends it again: the case with its shrunk steps, what it
/// found, and the request ids the finding rests on. No token is in it.
public struct ExploreCaseFile: Codable, Sendable {
    public static let kindName = "reiterate-shop explore case"
    public var kind = ExploreCaseFile.kindName
    public var version = 1
    public var exploreCase: ExploreCase
    /// The finding's lines when it was found.
    public var found: [String]
    public var requestIDs: [String]
    public var environment: String

    enum CodingKeys: String, CodingKey {
        case kind, version, exploreCase = "case", found, requestIDs = "request_ids", environment
    }

    public init(_ outcome: ExploreOutcome, environment: String) {
        var c = outcome.exploreCase
        if let shrunk = outcome.shrunk { c.plan = .writes(shrunk) }
        exploreCase = c
        found = outcome.findings.map(\.line)
        requestIDs = outcome.findings.flatMap(\.requestIDs)
        self.environment = environment
    }

    /// The case in `data`, when it is one (nil: another kind of file, or a case no campaign makes: a name that is
    /// not a plain file name, more than 8 steps, more than 3 writes sent at once).
    public static func read(_ data: Data) -> ExploreCaseFile? {
        guard let file = try? JSONDecoder().decode(ExploreCaseFile.self, from: data), file.kind == kindName, file.version == 1 else { return nil }
        let name = file.exploreCase.name
        guard !name.isEmpty, name.count <= 80, name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }),
              !name.hasPrefix(".") else { return nil }
        if case let .writes(steps) = file.exploreCase.plan, steps.count > 8 || steps.contains(where: { $0.writes.count > 3 || $0.writes.isEmpty }) { return nil }
        return file
    }
}

/// What a campaign leaves in its folder: `report.md`, `findings.jsonl`, and for each failing case its replay
/// case (`cases/NAME.json`) and curl script (`cases/NAME.sh`). Written again after each case, so a campaign
/// stopped (Ctrl-C) leaves its findings so far.
public struct ExploreFiles: Sendable {
    public var folder: String
    public var environment: String
    public var baseURL: String
    public var tokenVariable: String

    public init(folder: String, environment: String, baseURL: String, tokenVariable: String) {
        self.folder = folder
        self.environment = environment
        self.baseURL = baseURL
        self.tokenVariable = tokenVariable
    }

    /// `$STATE/explore/ENV-20261129T031500Z`.
    public static func defaultFolder(stateDirectory: String, environment: String, at date: Date = Date()) -> String {
        let stamp = String(ISO8601.format(date).prefix(19)).replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "") + "Z"
        return "\(stateDirectory)/explore/\(Snapshot.fileSafe(environment))-\(stamp)"
    }

    /// Writes a failing case's replay case and curl script (`exchanges`: the client's log, which still holds
    /// the case's requests right after it).
    public func write(case o: ExploreOutcome, exchanges: [Exchange]) throws {
        guard o.verdict == .finding else { return }
        try FileManager.default.createDirectory(atPath: folder + "/cases", withIntermediateDirectories: true)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try pretty.encode(ExploreCaseFile(o, environment: environment)).write(to: URL(fileURLWithPath: "\(folder)/cases/\(o.exploreCase.name).json"))
        try Data(curlScript(o, exchanges: exchanges).utf8).write(to: URL(fileURLWithPath: "\(folder)/cases/\(o.exploreCase.name).sh"))
        _ = try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(folder)/cases/\(o.exploreCase.name).sh")
        SessionJournal.wrote("\(folder)/cases/\(o.exploreCase.name).json", what: "explore case")
        SessionJournal.wrote("\(folder)/cases/\(o.exploreCase.name).sh", what: "explore case's curl script")
    }

    /// Writes `report.md` and `findings.jsonl` for the outcomes so far (the contract's findings on the
    /// campaign's answers among them).
    public func write(_ outcomes: [ExploreOutcome], contract: [ShopFinding], summary: ExploreSummary) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var lines = ""
        for f in outcomes.flatMap(\.findings) + contract { lines += f.json + "\n" }
        try Data(lines.utf8).write(to: URL(fileURLWithPath: folder + "/findings.jsonl"))
        try Data(report(outcomes, contract: contract, summary: summary).utf8).write(to: URL(fileURLWithPath: folder + "/report.md"))
    }

    /// The case's requests, one curl line each, as they were sent (the token as the environment's variable;
    /// an auth case's own header as it sent it).
    func curlScript(_ o: ExploreOutcome, exchanges: [Exchange]) -> String {
        // Comments only: each one line, sanitized (no newline can end the comment and start a command).
        var out = "#!/bin/sh\n# \(Sanitizer.line(o.exploreCase.name)): \(Sanitizer.line(o.exploreCase.what))\n# \(Sanitizer.line(o.exploreCase.source))\n"
        for f in o.findings { out += "# " + f.line + "\n" }
        if o.shrunk != nil { out += "# the requests below are the whole case as first sent; its replay case holds the shrunk steps\n" }
        guard let serials = o.serials else { return out }
        let sent = exchanges.filter { serials.contains($0.id) }
        // Writes sent at the same time are sent at the same time again: in the background, then waited for.
        func atOnce(_ i: Int) -> Bool {
            guard sent.indices.contains(i), sent[i].method == "POST" else { return false }
            return [i - 1, i + 1].contains { j in
                sent.indices.contains(j) && sent[j].method == "POST" && abs(sent[j].startedAt.timeIntervalSince(sent[i].startedAt)) < 0.05
            }
        }
        for (i, e) in sent.enumerated() {
            var line = CurlCommand.make(e, baseURL: baseURL, tokenVariable: tokenVariable)
            if case let .auth(operation, variant) = o.exploreCase.plan, e.operation == operation {
                let sent: String? = switch variant {
                case .none: nil
                case .malformed: "-H 'Authorization: Bearer'"
                case .unknown: "-H 'Authorization: Bearer \(ExploreWire.unknownToken)'"
                case .expired: "-H \"Authorization: Bearer $REITERATE_EXPIRED_TOKEN\""
                }
                if let sent { line = line.replacingOccurrences(of: "-H \"Authorization: Bearer $\(tokenVariable)\"", with: sent) }
            }
            out += "# \(e.method) \(e.path) → \(e.status.map(String.init) ?? "no answer")\(e.requestID.map { " (\($0))" } ?? "")\n" + line
                + (atOnce(i) ? " &\n" + (atOnce(i + 1) ? "" : "wait\n") : "\n")
        }
        return out
    }

    /// The Markdown report: what was covered, every finding with its request ids, what was not judged or left out.
    func report(_ outcomes: [ExploreOutcome], contract: [ShopFinding], summary: ExploreSummary) -> String {
        var md = "# explore: \(environment)\n\n"
        md += "\(summary.line)\n\n"
        md += "| family | cases | passed | findings | not judged |\n|---|---|---|---|---|\n"
        for family in ExploreFamily.allCases {
            let of = outcomes.filter { $0.exploreCase.family == family }
            guard !of.isEmpty else { continue }
            md += "| \(family.rawValue) | \(of.count) | \(of.filter { $0.verdict == .passed }.count) | \(of.filter { $0.verdict == .finding }.count) | \(of.filter { $0.verdict == .notJudged }.count) |\n"
        }
        let failing = outcomes.filter { $0.verdict == .finding }
        if !failing.isEmpty { md += "\n## Findings\n" }
        for o in failing {
            md += "\n### `\(o.exploreCase.name)`\n\n\(Self.md(o.exploreCase.what)) — rule: \(Self.md(o.exploreCase.source))\n\n"
            for f in o.findings { md += "- \(Self.md(f.line))\n" }
            if let shrunk = o.shrunk { md += "- shrunk to \(shrunk.count) step\(shrunk.count == 1 ? "" : "s"): " + Self.md(shrunk.map(\.words).joined(separator: "; then ")) + "\n" }
            md += "- replay: `reiterate-shop replay cases/\(o.exploreCase.name).json --yes`; curl: `cases/\(o.exploreCase.name).sh`\n"
        }
        if !contract.isEmpty {
            md += "\n## The contract, on the campaign's answers\n\n"
            for f in contract { md += "- \(Self.md(f.line))\n" }
        }
        let open = outcomes.filter { $0.verdict == .notJudged }
        if !open.isEmpty {
            md += "\n## Not judged\n\n"
            for o in open { md += "- \(o.exploreCase.name): \(Self.md(o.note ?? "not judged"))\n" }
        }
        if !summary.omitted.isEmpty {
            md += "\n## Not covered\n\n"
            for o in summary.omitted { md += "- \(Self.md(o.what)): \(Self.md(o.why))\n" }
        }
        return md
    }

    /// Server text in Markdown: the bug report's escaping (sanitized, one line, what Markdown or HTML acts on escaped).
    static func md(_ text: String) -> String { BugReport.text(text) }
}

/// A campaign in one line, and what it did not cover.
public struct ExploreSummary: Sendable {
    public var cases: Int
    public var passed: Int
    public var findings: Int
    public var notJudged: Int
    public var notRun: Int
    public var requests: Int
    public var budget: Int
    public var seconds: Double
    public var omitted: [ExploreOmission]

    public init(_ outcomes: [ExploreOutcome], planned: Int, requests: Int, budget: Int, seconds: Double, omitted: [ExploreOmission]) {
        cases = outcomes.count
        passed = outcomes.filter { $0.verdict == .passed }.count
        findings = outcomes.filter { $0.verdict == .finding }.count
        notJudged = outcomes.filter { $0.verdict == .notJudged }.count
        notRun = planned - outcomes.count
        self.requests = requests
        self.budget = budget
        self.seconds = seconds
        self.omitted = omitted
    }

    /// `52 cases: 49 passed, 3 with findings, 0 not judged; 171 of 400 requests in 19.2 s`.
    public var line: String {
        var s = "\(cases) case\(cases == 1 ? "" : "s"): \(passed) passed, \(findings) with findings, \(notJudged) not judged"
        if notRun > 0 { s += ", \(notRun) not run (incomplete)" }
        return s + String(format: "; %d of %d requests in %.1f s", requests, budget, seconds)
    }
}
