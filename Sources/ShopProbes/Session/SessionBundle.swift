import Foundation
import ShopAPI
import ShopCache
import ShopViewModels
import TerminalText

/// `session close`: the session as a bundle a developer can be handed — a folder and one archive of it
/// (`bundle/` and `ID.tar` in the session's folder):
/// - `session.har`: every exchange (HAR 1.2; mitmproxy and `reiterate-shop replay` open it);
/// - `report.md`: charter, build, duration, every finding with its evidence and request ids, the
///   purchases and their verdicts, notes, what was covered, the timeline;
/// - `curl.sh`: every write, and every request a finding rests on, one curl line each (the token as
///   the environment's variable, never its value);
/// - `cases/`: the replay cases `explore` wrote during the session;
/// - `record.jsonl`: the session's own record.
/// No token or key is in any file: what the record holds is redacted as it was written, and every
/// file is scrubbed of the secret values given besides (the tokens of the environment) before it is written.
public struct SessionBundle: Sendable {
    public var folder: String
    public var archive: String
    /// Every file written, by its path in the bundle.
    public var files: [String]

    public struct Problem: Error, Sendable { public var words: String }

    /// Writes the bundle of the session in `sessionFolder`. `secrets`: values no file may hold.
    public static func write(_ record: SessionRecord, sessionFolder: String, tokenVariable: String, secrets: [String],
                             creator: String, version: String, now: Date = Date()) throws(Problem) -> SessionBundle {
        let folder = sessionFolder + "/bundle"
        let manager = FileManager.default
        try? manager.removeItem(atPath: folder)  // a close tried before and cut short
        guard mkdir(folder, 0o700) == 0 else {
            throw Problem(words: "the bundle's folder could not be made in the session's folder")
        }
        var contents: [(String, Data)] = []
        guard let har = try? record.har(creator: creator, version: version) else { throw Problem(words: "the session's HAR could not be made") }
        contents.append(("session.har", har))
        var summary = SessionSummary(record, now: now)
        summary.open = false  // closed by this bundle
        let logged = record.logged()
        contents.append(("report.md", Data(report(summary, record: record, logged: logged).utf8)))
        contents.append(("curl.sh", Data(curl(record, logged: logged, tokenVariable: tokenVariable).utf8)))
        for file in record.files where file.path.hasSuffix(".json") || file.path.hasSuffix(".sh") {
            let name = URL(fileURLWithPath: file.path).lastPathComponent
            guard file.what.hasPrefix("explore case"), let data = manager.contents(atPath: file.path), data.count <= 1 << 20 else { continue }
            // Two campaigns' cases of one name: the later one (as the folder would keep it).
            contents.removeAll { $0.0 == "cases/" + name }
            contents.append(("cases/" + name, data))
        }
        if contents.contains(where: { $0.0.hasPrefix("cases/") }), mkdir(folder + "/cases", 0o700) != 0 {
            throw Problem(words: "the bundle's cases folder could not be made")
        }
        if let raw = manager.contents(atPath: sessionFolder + "/" + SessionJournal.recordName) { contents.append(("record.jsonl", raw)) }
        let scrubbed = contents.map { ($0.0, scrub($0.1, secrets: secrets)) }
        for (name, data) in scrubbed {
            do { try AtomicFile.write(data, to: folder + "/" + name, directory: URL(fileURLWithPath: folder + "/" + name).deletingLastPathComponent().path) } catch {
                throw Problem(words: "the bundle's \(name) could not be written")
            }
        }
        let id = URL(fileURLWithPath: sessionFolder).lastPathComponent
        let archive = sessionFolder + "/" + id + ".tar"
        do {
            try AtomicFile.write(Tar.archive(scrubbed.map { ("\(id)/\($0.0)", $0.1) }, at: now), to: archive, directory: sessionFolder)
        } catch {
            throw Problem(words: "the bundle's archive could not be written")
        }
        return SessionBundle(folder: folder, archive: archive, files: scrubbed.map(\.0))
    }

    /// `data` with every secret value (8 characters or more) replaced by `<redacted>`.
    static func scrub(_ data: Data, secrets: [String]) -> Data {
        var bytes = Array(data)
        // Each as it is, and as a URL would carry it (a token in a query string).
        let forms = secrets.flatMap { s in [s, s.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? s] }
        for secret in Set(forms) where secret.utf8.count >= 8 {
            let needle = Array(secret.utf8)
            let placeholder = Array("<redacted>".utf8)
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var i = 0
            while i < bytes.count {
                if bytes[i] == needle[0], i + needle.count <= bytes.count, Array(bytes[i..<i + needle.count]) == needle {
                    out += placeholder
                    i += needle.count
                } else {
                    out.append(bytes[i])
                    i += 1
                }
            }
            bytes = out
        }
        return Data(bytes)
    }

    /// The report: Markdown, every server and tester text escaped (`BugReport.text`).
    static func report(_ s: SessionSummary, record: SessionRecord, logged: [Exchange]) -> String {
        let md = BugReport.text
        var out = "# Test session: \(md(s.meta?.name ?? "unnamed"))\n\n"
        if let m = s.meta {
            out += "- **Build:** \(md(m.build ?? "not given"))\n"
            out += "- **Charter:** \(md(m.charter ?? "not given"))\n"
            out += "- **Environment:** \(md(m.environment.uppercased())) (\(md(m.baseURL))), as \(md(m.user))\n"
            out += "- **Started:** \(ISO8601.format(m.startedAt)); **duration** \(Wording.duration(s.seconds))\(s.open ? " (still open)" : "")\n"
        }
        out += "- **Findings:** \(s.findings)\(s.findings > s.distinct ? " (\(s.distinct) distinct)" : ""); **purchases:** \(s.purchases.count); **requests:** \(s.covered.requests) (\(s.covered.writes) write\(s.covered.writes == 1 ? "" : "s"))\n"
        for lack in s.incomplete { out += "- **Incomplete:** \(md(lack))\n" }
        if !s.stillRunning.isEmpty { out += "- **Still running at the close:** \(s.stillRunning.map(md).joined(separator: ", ")) (what they did after it is not here)\n" }
        out += "\n## Findings\n\n"
        if s.groups.isEmpty { out += "None in this session (what it covered is below).\n\n" }
        for g in s.groups {
            out += "### \(md(g.kind)) — \(g.blame?.words ?? "no blame") ×\(g.count)\n\n"
            for sub in g.subjects {
                out += "- \(md(sub.subject))\(sub.count > 1 ? " ×\(sub.count)" : ""): expected \(md(sub.expected)), got \(md(sub.actual)); "
                // Every answer it was seen on, by its request id (at most 50, then how many more).
                let shown = sub.requestIDs.prefix(50).map { "`\(md($0))`" }.joined(separator: ", ") + (sub.requestIDs.count > 50 ? " and \(sub.requestIDs.count - 50) more" : "")
                out += sub.requestIDs.isEmpty ? "no request id\n" : "request id\(sub.requestIDs.count == 1 ? "" : "s") " + shown + "\n"
            }
            out += "\n"
        }
        out += "## Purchases (the ledger)\n\n"
        if s.purchases.isEmpty { out += "None.\n" }
        for p in s.purchases {
            let verdict = p.verdict.map { "\($0)" + (p.blame.map { " (\($0.words))" } ?? "") } ?? "not judged in this session"
            out += "- \(md(p.transaction)) \(md(p.product ?? "?")): **\(verdict)**"
            for post in p.posts { out += "; posted by \(post.source == "app" ? "the app" : md(post.command)) → \(post.status == 0 ? "no answer" : "\(post.status)")\(post.requestID.map { " `\(md($0))`" } ?? "")" }
            out += "\n"
        }
        out += "\n## Notes\n\n" + (s.notes.isEmpty ? "None.\n" : s.notes.map { "- \(md($0))\n" }.joined())
        out += "\n## Covered\n\n"
        out += "- Operations: " + s.covered.operations.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + "\n"
        out += "- Users: " + s.covered.users.map(md).joined(separator: ", ") + "\n"
        out += "- History pages read: " + (s.covered.historyPages.isEmpty ? "none" : s.covered.historyPages.map(String.init).joined(separator: ", ")) + "\n"
        out += "- Commands: " + s.covered.commands.map(md).joined(separator: ", ") + "\n"
        out += "\n## Timeline (UTC)\n\n"
        for e in s.timeline { out += "- \(ISO8601.format(e.at)) \(md(e.what))\n" }
        out += "\n## Files\n\n- `session.har`: every exchange (`reiterate-shop replay session.har` sends its reads again)\n"
        out += "- `curl.sh`: every write and every request a finding rests on\n"
        out += record.files.contains { $0.what.hasPrefix("explore case") } ? "- `cases/`: explore's replay cases (`reiterate-shop replay cases/NAME.json --yes`)\n" : ""
        out += "- `record.jsonl`: the session's record\n"
        return out
    }

    /// Every write, and every request a finding rests on, as curl lines.
    static func curl(_ record: SessionRecord, logged: [Exchange], tokenVariable: String) -> String {
        let base = record.meta?.baseURL ?? ""
        let cited = Set(record.findings.flatMap(\.requestIDs))
        var out = "#!/bin/sh\n# The session's writes and the requests its findings rest on, in order. The token is $\(tokenVariable).\n"
        for e in logged where e.method != "GET" || e.requestID.map(cited.contains) == true {
            out += "# \(e.method) \(e.path.prefix { $0 != "?" }) → \(e.status.map(String.init) ?? "no answer")\(e.requestID.map { " (\($0))" } ?? "")\n"
                .replacingOccurrences(of: "\r", with: " ")
            out += CurlCommand.make(e, baseURL: base, tokenVariable: tokenVariable) + "\n"
        }
        return out
    }
}

/// A POSIX ustar archive of whole files (no links, no owners), enough for `tar -xf`.
enum Tar {
    static func archive(_ files: [(String, Data)], at date: Date) -> Data {
        var out = Data()
        for (name, data) in files {
            out += header(name: name, size: data.count, mtime: Int(date.timeIntervalSince1970))
            out += data
            let pad = (512 - data.count % 512) % 512
            out += Data(count: pad)
        }
        out += Data(count: 1024)
        return out
    }

    static func header(name: String, size: Int, mtime: Int) -> Data {
        var h = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, _ offset: Int, _ length: Int) {
            for (i, b) in text.utf8.prefix(length).enumerated() { h[offset + i] = b }
        }
        func octal(_ value: Int, _ offset: Int, _ length: Int) {
            put(String(String(value, radix: 8).suffix(length - 1)).leftPadded(to: length - 1), offset, length - 1)
        }
        var path = name, prefix = ""
        if path.utf8.count > 99, let slash = path.lastIndex(of: "/") {
            prefix = String(path[..<slash])
            path = String(path[path.index(after: slash)...])
        }
        put(path, 0, 100)
        octal(0o600, 100, 8)
        octal(0, 108, 8)
        octal(0, 116, 8)
        octal(size, 124, 12)
        octal(mtime, 136, 12)
        for i in 148..<156 { h[i] = 0x20 }
        h[156] = UInt8(ascii: "0")
        put("ustar", 257, 6)
        put("00", 263, 2)
        put(prefix, 345, 155)
        let sum = h.reduce(0) { $0 + Int($1) }
        put(String(String(sum, radix: 8)).leftPadded(to: 6), 148, 6)
        h[154] = 0
        h[155] = 0x20
        return Data(h)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
