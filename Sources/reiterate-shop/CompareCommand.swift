import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopCompare
import ShopSettings
import ShopViewModels
import Synchronization
import TerminalText

/// What one side of a comparison is: an environment and user read now, or a file (a snapshot, or a
/// HAR written by `--har`).
enum SideSpec: Equatable {
    case live(env: String?, user: String?)
    case file(String)

    /// `env:NAME`, `user:ID`, `env:NAME/user:ID`, or a path.
    static func parse(_ text: String) throws -> SideSpec {
        var env: String?, user: String?
        guard text.hasPrefix("env:") || text.hasPrefix("user:") else {
            guard FileManager.default.fileExists(atPath: text) else {
                throw CLIError(message: "“\(text)” is neither env:NAME, user:ID, env:NAME/user:ID nor a file that exists", exitCode: .usage)
            }
            return .file(text)
        }
        for part in text.split(separator: "/", omittingEmptySubsequences: false) {
            if part.hasPrefix("env:"), env == nil, !part.dropFirst(4).isEmpty { env = String(part.dropFirst(4)) }
            else if part.hasPrefix("user:"), user == nil, !part.dropFirst(5).isEmpty { user = String(part.dropFirst(5)) }
            else { throw CLIError(message: "“\(text)”: write a side as env:NAME, user:ID or env:NAME/user:ID", exitCode: .usage) }
        }
        return .live(env: env, user: user)
    }
}

/// Reads one side: a page at a time, so a long history is compared as it comes.
protocol SideReader: Sendable {
    var description: SideDescription { get }
    func balance() async throws -> RecordedRead?
    func packs() async throws -> RecordedRead?
    /// Page `page`, or nil past the last (a file's, or the server's `total_pages`).
    func history(page: Int, perPage: Int) async throws -> RecordedRead?
}

struct FileSide: SideReader {
    let snapshot: Snapshot
    let description: SideDescription

    init(path: String) throws {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CLIError(message: "\(path) cannot be read", exitCode: .config)
        }
        do {
            snapshot = try Snapshot.read(bytes)
        } catch {
            throw CLIError(message: "\(path): \(error)", exitCode: .dataError)
        }
        description = SideDescription(name: path, environment: snapshot.environment ?? snapshot.baseURL, user: snapshot.user, takenAt: snapshot.takenAt)
        // Said, not hidden: pages the HAR cut at its preview size are not compared.
        if !snapshot.cut.isEmpty {
            Terminal.err("note: \(path): \(snapshot.cut.count) answer\(snapshot.cut.count == 1 ? "" : "s") cut at the HAR's 16 KiB preview, not compared (\(Sanitizer.line(snapshot.cut[0]))\(snapshot.cut.count > 1 ? ", …" : ""))\n")
        }
    }

    func balance() async throws -> RecordedRead? { snapshot.balance }
    func packs() async throws -> RecordedRead? { snapshot.packs }
    func history(page: Int, perPage: Int) async throws -> RecordedRead? { snapshot.historyPage(page) }
}

/// A live side: every read goes through the client (retries, sign-in, the contract watchdog).
final class LiveSide: SideReader {
    let client: ShopClient
    let user: String
    let description: SideDescription
    /// Pages the server said it has (from the first page read).
    private let totalPages = Mutex<Int?>(nil)

    init(client: ShopClient, settings: ResolvedSettings, name: String) {
        self.client = client
        user = settings.user
        description = SideDescription(name: name, environment: settings.environment, user: settings.user, takenAt: Date())
    }

    static func read<V>(_ r: Recorded<V>, _ what: RecordedRead.What) -> RecordedRead {
        RecordedRead(what: what, method: r.method, target: r.target, requestID: r.requestID, status: r.status, at: r.at, body: r.document)
    }

    func balance() async throws -> RecordedRead? { Self.read(try await client.sendRecorded(Balance(user: user)), .balance) }
    func packs() async throws -> RecordedRead? { Self.read(try await client.sendRecorded(AudioPacks()), .packs) }
    func history(page: Int, perPage: Int) async throws -> RecordedRead? {
        if let total = totalPages.withLock({ $0 }), page > max(1, total) { return nil }
        let answer = try await client.sendRecorded(CheerHistory(user: user, page: page, perPage: perPage))
        if page == 1 { totalPages.withLock { $0 = answer.value.totalPages } }
        return Self.read(answer, .history(page: page))
    }
}

/// `reiterate-shop compare A B`: the same reads on two sides, as a diff that knows the shop's data.
struct CompareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two environments, two users, or a saved snapshot (or HAR), keyed by the shop's identities.",
        discussion: """
            A side is env:NAME, user:ID (in the current environment), env:NAME/user:ID, or a file written
            by `snapshot` or `--har`. Only reads are sent, never a write. Packs are matched by identifier,
            history entries by id, fields by JSON path; each difference is added, removed, changed (old →
            new) or moved (order only). Ignore a path with --ignore packs[].cheer_total (or [compare]
            ignore = [...] in the config). Exit status: 0 the same; 1 different; 2 could not compare.
            """
    )

    @Argument(help: "The first side: env:NAME, user:ID, env:NAME/user:ID, or a snapshot or HAR file.") var a: String
    @Argument(help: "The second side.") var b: String
    @Option(help: "What to compare: balance, packs, history (comma-separated; default all three).") var what: String = "balance,packs,history"
    @Option(name: .customLong("history-pages"), help: "History pages to compare (of 200 entries when read live; default 1).") var historyPages = 1
    @Option(help: "A path to leave out, e.g. packs[].cheer_total or history[].comments[].body (repeatable).") var ignore: [String] = []
    @Flag(help: "One JSON object: the sides, the differences (kind, path, rule, old, new), the counts.") var json = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard historyPages >= 0, historyPages <= 100_000 else { throw ValidationError("--history-pages takes 0 to 100000") }
        for part in what.split(separator: ",") where ComparedPart(rawValue: part.trimmingCharacters(in: .whitespaces)) == nil {
            throw ValidationError("--what takes balance, packs, history (comma-separated), not “\(part)”")
        }
    }

    var parts: Set<ComparedPart> { Set(what.split(separator: ",").compactMap { ComparedPart(rawValue: $0.trimmingCharacters(in: .whitespaces)) }) }

    func run() async throws {
        do {
            let config = try connection.loadConfig()
            let rules = try IgnoreRules.of(config, ignore)
            let sideA = try SideSpec.parse(a), sideB = try SideSpec.parse(b)
            let logger = try connection.makeLogger(label: "reiterate")
            let (parts, pages) = (parts, historyPages)
            let outcome = try await connection.withSide(sideA, name: a, config: config, logger: logger) { readerA in
                try await connection.withSide(sideB, name: b, config: config, logger: logger) { readerB in
                    try await Self.compare(readerA, readerB, parts: parts, historyPages: pages, ignore: rules)
                }
            }
            if let note = DiffReport.edgeNote(outcome.pastTheEdge) { Terminal.err(note + "\n") }
            Terminal.out(json ? DiffReport.json(outcome.differences, a: outcome.a, b: outcome.b, requestIDs: outcome.requestIDs)
                              : DiffReport.text(outcome.differences, a: outcome.a, b: outcome.b))
            if !outcome.differences.isEmpty { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw Self.couldNotCompare(error)
        }
    }

    struct Outcome: Sendable {
        var differences: [Difference]
        var requestIDs: (a: [String], b: [String])
        var a: SideDescription
        var b: SideDescription
        var pastTheEdge = 0
    }

    /// The reads of both sides, each pair at once, compared as they come.
    static func compare(_ sideA: any SideReader, _ sideB: any SideReader, parts: Set<ComparedPart>, historyPages: Int, ignore: IgnoreRules) async throws -> Outcome {
        let a = Tagged(side: .a, inner: sideA), b = Tagged(side: .b, inner: sideB)
        var comparison = Comparison(ignore: ignore, dates: { ISO8601.parse($0) })
        func both(_ what: String, _ x: RecordedRead?, _ y: RecordedRead?) throws -> (RecordedRead, RecordedRead) {
            guard let x else { throw CLIError(message: "A (\(a.description.name)) holds no \(what)", exitCode: .serverError) }
            guard let y else { throw CLIError(message: "B (\(b.description.name)) holds no \(what)", exitCode: .serverError) }
            return (x, y)
        }
        if parts.contains(.balance) {
            async let x = a.balance()
            async let y = b.balance()
            let (ra, rb) = try both("balance", try await x, try await y)
            comparison.balance(ra, rb)
        }
        if parts.contains(.packs) {
            async let x = a.packs()
            async let y = b.packs()
            let (ra, rb) = try both("pack list", try await x, try await y)
            comparison.packs(ra, rb)
        }
        if parts.contains(.history) {
            var page = 1
            while page <= historyPages {
                let n = page
                async let x = a.history(page: n, perPage: CheerHistory.maxPerPage)
                async let y = b.history(page: n, perPage: CheerHistory.maxPerPage)
                let (ra, rb) = (try await x, try await y)
                if ra == nil, rb == nil { break }
                if page == 1 { _ = try both("history", ra, rb) }
                comparison.history(a: ra, b: rb)
                page += 1
            }
        }
        let differences = comparison.finish()
        return Outcome(differences: differences, requestIDs: comparison.requestIDs, a: a.description, b: b.description, pastTheEdge: comparison.pastTheEdge)
    }

    /// Which side a failure came from, for its one line.
    enum Side: String {
        case a = "A", b = "B"

        func tag<T>(_ value: () async throws -> T) async throws -> T {
            do {
                return try await value()
            } catch let error as ShopAPIError {
                throw SideFailure(side: self, error: error)
            }
        }
    }

    /// A side whose failures say which side they came from.
    struct Tagged: SideReader {
        let side: Side
        let inner: any SideReader
        var description: SideDescription { inner.description }
        func balance() async throws -> RecordedRead? { try await side.tag { try await inner.balance() } }
        func packs() async throws -> RecordedRead? { try await side.tag { try await inner.packs() } }
        func history(page: Int, perPage: Int) async throws -> RecordedRead? { try await side.tag { try await inner.history(page: page, perPage: perPage) } }
    }

    struct SideFailure: Error {
        var side: Side
        var error: ShopAPIError
    }

    /// Exit status 2, with the reason on one line.
    static func couldNotCompare(_ error: any Error) -> ExitCode {
        Terminal.err("error: could not compare: \(reason(error))\n")
        return ExitCode(2)
    }

    /// Why a comparison could not be made, in plain words.
    static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as SideFailure: return "side \(failure.side.rawValue): " + ErrorText.line(failure.error)
        case let failure as ShopAPIError: return ErrorText.line(failure)
        case let failure as CLIError: return Sanitizer.line(failure.message)
        case let failure as ValidationError: return Sanitizer.line(failure.message)
        default: return "an unexpected internal failure"
        }
    }
}

extension IgnoreRules {
    /// The config's `[compare] ignore` and the command's `--ignore`; a rule that is not a path is a
    /// usage error naming it.
    static func of(_ config: ConfigFile?, _ flags: [String]) throws -> IgnoreRules {
        do {
            return try IgnoreRules((config?.compareIgnore ?? []) + flags)
        } catch {
            throw CLIError(message: "\(error)", exitCode: .usage)
        }
    }
}

extension ConnectionOptions {
    /// Settings for a side: `env:NAME` reads that environment as the config names it (the current
    /// environment's variables and --base-url do not reach it); `user:ID` another user.
    func settings(config: ConfigFile?, env: String?, user: String?) throws -> ResolvedSettings {
        var vars = environment
        var flags = ResolvedSettings.Flags(env: envName, baseURL: baseURL, user: user ?? self.user, timeout: timeout, contract: contract)
        if let env {
            vars["REITERATE_ENV"] = nil
            vars["REITERATE_BASE_URL"] = nil
            flags.env = env
            flags.baseURL = nil
            if user == nil { flags.user = nil; vars["REITERATE_USER"] = nil }
        }
        do {
            return try ResolvedSettings.resolve(flags: flags, environment: vars, config: config)
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
    }

    /// `body` with a reader for `side`: a file's, or a client's for an environment and user.
    func withSide<T: Sendable>(_ side: SideSpec, name: String, config: ConfigFile?, logger: Logger, _ body: (any SideReader) async throws -> T) async throws -> T {
        switch side {
        case let .file(path):
            return try await body(try FileSide(path: path))
        case let .live(env, user):
            let settings = try settings(config: config, env: env, user: user)
            return try await withClient(settings, logger: logger) { client in
                try await body(LiveSide(client: client, settings: settings, name: name))
            }
        }
    }
}

/// `reiterate-shop snapshot --out FILE`: what the current user sees (the balance, the packs, the first
/// history pages), saved with each read's request and request id, to compare or replay later.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save what the current user sees (balance, packs, history pages) as a snapshot file, for compare and replay.",
        discussion: "The file is JSON: the environment, the user, the time, and each read with its request and request id (no token). Exit status: 0; as `print` on a failed read."
    )

    @Option(name: .customLong("history-pages"), help: "History pages to save (of 200 entries; default 1).") var historyPages = 1
    @Option(help: "The file to write (mode 0600).") var out: String
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard historyPages >= 0, historyPages <= 100_000 else { throw ValidationError("--history-pages takes 0 to 100000") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        let pages = historyPages
        do {
            let snapshot: Snapshot = try await connection.withClient(settings, logger: logger) { client in
                try await Self.take(client: client, settings: settings, historyPages: pages)
            }
            try Self.write(snapshot.encoded(), to: out)
            let entries = snapshot.historyPages.reduce(0) { n, read in
                if case let .object(o)? = read.body, case let .array(items)? = o["history"] { return n + items.count }
                return n
            }
            Terminal.err("note: saved \(Sanitizer.line(settings.user)) on \(settings.environment.uppercased()): the balance, \(snapshot.packs.map { _ in "the packs, " } ?? "")"
                         + "\(Wording.grouped(entries)) history entr\(entries == 1 ? "y" : "ies") (\(snapshot.reads.count) reads) to \(Sanitizer.line(out))\n")
        } catch let error as CLIError {
            throw fail(error)
        } catch let error as ShopAPIError {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
    }

    /// The balance, the packs and the first history pages of `settings.user`, read now.
    static func take(client: ShopClient, settings: ResolvedSettings, historyPages: Int) async throws -> Snapshot {
        let side = LiveSide(client: client, settings: settings, name: "")
        var reads: [RecordedRead] = []
        if let b = try await side.balance() { reads.append(b) }
        if let p = try await side.packs() { reads.append(p) }
        var page = 1
        while page <= historyPages, let h = try await side.history(page: page, perPage: CheerHistory.maxPerPage) {
            reads.append(h)
            page += 1
        }
        return Snapshot(environment: settings.environment, baseURL: settings.baseURL, user: settings.user, takenAt: Date(), reads: reads)
    }

    /// Written whole (a temporary file renamed over), readable by its owner only.
    static func write(_ bytes: [UInt8], to path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try AtomicFile.write(Data(bytes), to: path, directory: folder.isEmpty ? "." : folder)
        } catch {
            throw CLIError(message: "\(path) cannot be written", exitCode: .config)
        }
    }
}

/// `reiterate-shop replay FILE`: the recorded reads of a snapshot or HAR sent again, each reported as
/// matched, changed (with its differences) or failed. The writes in the file are listed, never sent.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Send a snapshot's or HAR's recorded reads again and report each as matched, changed (with the diff) or failed; writes are listed, never sent.",
        discussion: """
            The reads go to the environment the file was recorded on (its base URL, or the environment of
            that name in the config), or to --env / --base-url; --user replays them as another user.
            Exit status: 0 all matched; 1 some changed; 2 some could not be compared (failed, or none).
            """
    )

    @Argument(help: "A file written by `snapshot` or `--har`.") var file: String
    @Option(help: "A path to leave out, e.g. packs[].cheer_total (repeatable).") var ignore: [String] = []
    @Flag(help: "One JSON object: each read with its outcome and differences, and the writes not sent.") var json = false
    @OptionGroup var connection: ConnectionOptions

    enum Outcome: String { case matched, changed, failed }

    func run() async throws {
        do {
            let config = try connection.loadConfig()
            let rules = try IgnoreRules.of(config, ignore)
            let recorded = try FileSide(path: file).snapshot
            let reads = recorded.reads.filter { $0.status / 100 == 2 && $0.body != nil }
            guard !reads.isEmpty else { throw CLIError(message: "\(file) holds no read to send again", exitCode: .usage) }
            let settings = try target(recorded, config: config)
            let logger = try connection.makeLogger(label: "reiterate")
            let user = connection.user
            let results: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)] = try await connection.withClient(settings, logger: logger) { client in
                var out: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)] = []
                for read in reads {
                    do {
                        let again = try await Self.send(read, as: user, client: client)
                        var comparison = Comparison(ignore: rules, dates: { ISO8601.parse($0) })
                        switch read.what {
                        case .balance: comparison.balance(read, again)
                        case .packs: comparison.packs(read, again)
                        case .history: comparison.history(a: read, b: again)
                        }
                        let differences = comparison.finish()
                        out.append((read, differences.isEmpty ? .matched : .changed, differences, again, nil))
                    } catch let error as ShopAPIError {
                        out.append((read, .failed, [], nil, ErrorText.line(error)))
                    }
                }
                return out
            }
            Terminal.out(json ? Self.json(results, writes: recorded.writes) : Self.text(results, writes: recorded.writes, on: settings))
            if results.contains(where: { $0.1 == .failed }) { throw ExitCode(2) }
            if results.contains(where: { $0.1 == .changed }) { throw ExitCode(1) }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw CompareCommand.couldNotCompare(error)
        }
    }

    /// Where to send: --env or --base-url when given; else the environment of the config (or the
    /// built-in `local`) whose base URL the file recorded. A file is not trusted with a token: a base
    /// URL that no environment names is refused, whatever environment name the file claims.
    func target(_ recorded: Snapshot, config: ConfigFile?) throws -> ResolvedSettings {
        guard connection.envName == nil, connection.baseURL == nil else { return try connection.settings(config: config) }
        guard let base = recorded.baseURL else {
            throw CLIError(message: "\(file) does not say where it was recorded: give --env or --base-url", exitCode: .usage)
        }
        let names = ["local"] + (config?.environments.keys.sorted() ?? [])
        for name in names {
            let settings = try connection.settings(config: config, env: name, user: nil)
            if Self.sameServer(settings.baseURL, base) { return try connection.settings(config: config, env: name, user: connection.user) }
        }
        throw CLIError(message: "\(file) was recorded on \(Sanitizer.line(base)), which no environment of the config names: give --env or --base-url to send its reads (and a token) there",
                       exitCode: .usage)
    }

    static func sameServer(_ a: String, _ b: String) -> Bool {
        func norm(_ s: String) -> String { (s.hasSuffix("/") ? String(s.dropLast()) : s).lowercased() }
        return norm(a) == norm(b)
    }

    /// The recorded read as its endpoint, for `user` when given (else the user it was recorded for).
    static func send(_ read: RecordedRead, as user: String?, client: ShopClient) async throws -> RecordedRead {
        let who = user ?? read.user ?? "qa-alice"
        switch read.what {
        case .balance: return LiveSide.read(try await client.sendRecorded(Balance(user: who)), .balance)
        case .packs: return LiveSide.read(try await client.sendRecorded(AudioPacks()), .packs)
        case let .history(page):
            let perPage = Snapshot.perPage(read) ?? 50
            return LiveSide.read(try await client.sendRecorded(CheerHistory(user: who, page: page, perPage: perPage)), .history(page: page))
        }
    }

    static func text(_ results: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)], writes: [RecordedWrite], on settings: ResolvedSettings) -> String {
        var out = "Replayed on \(Sanitizer.line(settings.environment.uppercased())) (\(Sanitizer.line(settings.baseURL))):\n"
        for (read, outcome, differences, again, failure) in results {
            let ids = [read.requestID, again?.requestID].compactMap { $0 }.joined(separator: " → ")
            out += Columns.fit(outcome.rawValue, to: 8) + " \(read.method) \(Sanitizer.line(read.target))" + (ids.isEmpty ? "" : "  (\(Sanitizer.line(ids)))")
            switch outcome {
            case .matched: out += "\n"
            case .failed: out += ": \(failure ?? "")\n"
            case .changed:
                out += ": " + DiffReport.summary(differences) + "\n"
                let table = DiffReport.text(differences, a: .init(name: "recorded", environment: nil, user: nil, takenAt: read.at),
                                            b: .init(name: "now", environment: nil, user: nil, takenAt: again?.at))
                for line in table.split(separator: "\n").dropFirst(3).dropLast() { out += "         " + line + "\n" }
            }
        }
        for write in writes { out += "not sent \(write.method) \(Sanitizer.line(write.target))  (a write: replay never sends one)\n" }
        let count = { (o: Outcome) in results.filter { $0.1 == o }.count }
        out += "\(results.count) read\(results.count == 1 ? "" : "s"): \(count(.matched)) matched, \(count(.changed)) changed, \(count(.failed)) failed"
        out += writes.isEmpty ? "\n" : "; \(writes.count) write\(writes.count == 1 ? "" : "s") not sent\n"
        return out
    }

    static func json(_ results: [(RecordedRead, Outcome, [Difference], RecordedRead?, String?)], writes: [RecordedWrite]) -> String {
        var w = JSONWriter(capacity: 1024)
        w.raw("{\"reads\":[")
        for (i, (read, outcome, differences, again, failure)) in results.enumerated() {
            w.raw(i == 0 ? "\n" : ",\n")
            var o: JSONObject = ["outcome": .string(outcome.rawValue), "method": .string(read.method), "target": .string(read.target),
                                 "recorded_request_id": read.requestID.map(JSONValue.string) ?? .null,
                                 "request_id": again?.requestID.map(JSONValue.string) ?? .null]
            if let failure { o.append("error", .string(failure)) }
            // The differences as `compare --json` gives them.
            if case let .object(report)? = JSONValue.parse(Array(DiffReport.json(differences, a: .init(name: "recorded", environment: nil, user: nil, takenAt: nil),
                                                                                     b: .init(name: "now", environment: nil, user: nil, takenAt: nil), requestIDs: ([], [])).utf8)),
               let list = report["differences"] {
                o.append("differences", list)
            }
            w.value(.object(o))
        }
        w.raw("\n],\"writes_not_sent\":")
        w.value(.array(writes.map { .object(["method": .string($0.method), "target": .string($0.target)]) }))
        w.raw("}\n")
        return w.text
    }
}

/// `reiterate-shop pins`: the answers pinned in this environment (`P` on the Requests tab); `--add`
/// pins the current answer of a read, `--remove` takes a pin away.
struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "List the answers pinned in this environment; --add pins a read's current answer, --remove takes a pin away.",
        discussion: """
            A pinned answer is compared with every later answer to the same request, under the ignore
            rules ([compare] ignore): a difference is a finding `pinned` in the Checks tab, and a warning
            line from `print`. Pins are kept per environment in $XDG_STATE_HOME/reiterate-shop/pins.
            """
    )

    @Option(help: "Pin the current answer of balance, packs or history (its first page) for the current user.") var add: String?
    @Option(help: "Take away the pin of this request (as listed), or `all`.") var remove: String?
    @Flag(help: "The pins as JSON (the file's form).") var json = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let add, ComparedPart(rawValue: add) == nil { throw ValidationError("--add takes balance, packs or history, not “\(add)”") }
        if add != nil, remove != nil { throw ValidationError("--add and --remove go one at a time") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        guard let pins = connection.pins(settings) else {
            throw fail(CLIError(message: "[compare] ignore holds a rule that is not a path (`reiterate-shop config check` names it)", exitCode: .config))
        }
        if let unreadable = pins.unreadable { throw fail(CLIError(message: "the pins cannot be read: \(unreadable)", exitCode: .dataError)) }
        do {
            if let add {
                let read: RecordedRead? = try await connection.withClient(settings, logger: logger) { client in
                    let side = LiveSide(client: client, settings: settings, name: "")
                    switch ComparedPart(rawValue: add) {
                    case .balance?: return try await side.balance()
                    case .packs?: return try await side.packs()
                    default: return try await side.history(page: 1, perPage: 50)
                    }
                }
                guard let read, let body = read.body else { throw CLIError(message: "the answer is not JSON: nothing to pin", exitCode: .dataError) }
                let pin = Pin(request: Pin.request(method: read.method, pathAndQuery: read.target), body: body, requestID: read.requestID, pinnedAt: read.at ?? Date())
                try await pins.add(pin)
                Terminal.err("note: pinned \(Sanitizer.line(pin.request)) (request id \(Sanitizer.line(pin.requestID ?? "—"))) on \(settings.environment.uppercased())\n")
            } else if let remove {
                let gone = try await pins.remove(remove == "all" ? nil : remove)
                guard gone > 0 else { throw CLIError(message: "no pin of “\(remove)” on \(settings.environment.uppercased()) (reiterate-shop pins lists them)", exitCode: .usage) }
                Terminal.err("note: \(gone) pin\(gone == 1 ? "" : "s") taken away\n")
            } else {
                let book = await pins.book
                if json {
                    Terminal.out(String(decoding: book.encoded(), as: UTF8.self))
                } else if book.pins.isEmpty {
                    Terminal.out("No pins on \(settings.environment.uppercased()).\n")
                } else {
                    for pin in book.pins {
                        Terminal.out("\(Sanitizer.line(pin.request))  pinned \(DiffReport.stamp(pin.pinnedAt))  request id \(Sanitizer.line(pin.requestID ?? "—"))\n")
                    }
                }
            }
        } catch let error as CLIError {
            throw fail(error)
        } catch let error as ShopAPIError {
            throw fail(error, tokenVariable: settings.tokenEnv)
        } catch {
            throw fail(CLIError(message: "the pins could not be saved in \(pins.path ?? "the state folder")", exitCode: .config))
        }
    }
}

/// `D` and `S` in the TUI: comparisons and snapshots with clients of their own (never the session's
/// HAR file: their requests are not the tester's session).
struct TUIComparer: Comparer {
    let connection: ConnectionOptions
    let config: ConfigFile?
    let logger: Logger
    let settings: ResolvedSettings
    /// Where `S` saves (`$XDG_STATE_HOME/reiterate-shop/snapshots`).
    let snapshots: String

    init(connection: ConnectionOptions, config: ConfigFile?, logger: Logger, settings: ResolvedSettings, stateDirectory: String) {
        var quiet = connection
        quiet.harFile = nil
        self.connection = quiet
        self.config = config
        self.logger = logger
        self.settings = settings
        snapshots = stateDirectory + "/snapshots"
    }

    func compare(_ a: String, with b: String, what: ComparedPart) async -> Result<DiffResult, CompareFailure> {
        do {
            let ignore = try IgnoreRules.of(config, [])
            let sideA = try SideSpec.parse(a), sideB = try SideSpec.parse(b)
            let outcome = try await connection.withSide(sideA, name: a, config: config, logger: logger) { readerA in
                try await connection.withSide(sideB, name: b, config: config, logger: logger) { readerB in
                    try await CompareCommand.compare(readerA, readerB, parts: [what], historyPages: 1, ignore: ignore)
                }
            }
            return .success(DiffResult(what: what, a: outcome.a, b: outcome.b, differences: outcome.differences, pastTheEdge: outcome.pastTheEdge))
        } catch {
            return .failure(CompareFailure(CompareCommand.reason(error)))
        }
    }

    func saveSnapshot(user: String) async -> Result<String, CompareFailure> {
        do {
            var who = settings
            who.user = user
            let snapshot = try await connection.withClient(who, logger: logger) { client in
                try await SnapshotCommand.take(client: client, settings: who, historyPages: 1)
            }
            try AtomicFile.ensureDirectory(snapshots)
            let stamp = DiffReport.stamp(snapshot.takenAt ?? Date()).replacingOccurrences(of: ":", with: "")
            let path = "\(snapshots)/\(Snapshot.fileSafe(settings.environment))-\(Snapshot.fileSafe(user))-\(stamp).json"
            try SnapshotCommand.write(snapshot.encoded(), to: path)
            return .success(path)
        } catch {
            return .failure(CompareFailure(CompareCommand.reason(error)))
        }
    }

    /// What Tab offers after `D`: the other environments, the environment's other users, and the
    /// snapshots saved (newest first).
    func targets() -> [String] {
        var out: [String] = []
        for name in (config?.environments.keys.sorted() ?? []) where name != settings.environment { out.append("env:" + name) }
        for user in settings.users where user != settings.user { out.append("user:" + user) }
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: snapshots)) ?? []).filter { $0.hasSuffix(".json") }.map { snapshots + "/" + $0 }
        func modified(_ path: String) -> Date { ((try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date) ?? .distantPast }
        out += files.map { ($0, modified($0)) }.sorted { $0.1 > $1.1 }.prefix(10).map(\.0)
        return out
    }
}
