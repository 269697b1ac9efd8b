import ArgumentParser
import Foundation
import JSONTokens
import Logging
import ShopAPI
import ShopCache
import ShopSettings
import ShopViewModels
import TerminalText

struct Print: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the balance, the Audio Packs or a page of cheer history, then exit.",
        discussion: """
            Exit status: 0 success; 75 the server failed and the cached balance was printed (with its age);
            1 the server answered with an error (or sign-in expired); 65 the answer could not be read;
            69 no answer (refused, DNS, TLS, timeout); 78 bad setting; 64 usage; 70 a failure of this program.
            """
    )

    enum What: String, ExpressibleByArgument, CaseIterable {
        case balance, packs, history
    }

    @Argument(help: "What to print: balance, packs or history.") var what: What
    @Option(help: "History page (1-based).") var page = 1
    @Option(name: .customLong("per-page"), help: "History entries per page (1–200).") var perPage = 50
    @Flag(help: "History: every page, streamed newest first (in pages of 200); with --json, one JSON object a line.") var all = false
    @Option(help: "With --all: entries on or after this day (YYYY-MM-DD, local time); stops at the first older one.") var since: String?
    @Option(help: "With --all: entries on or before this day (YYYY-MM-DD, local time).") var until: String?
    @Option(help: "With --all: entries whose product, creator or comments hold this text (case and accents ignored).") var find: String?
    @Flag(help: "Print the decoded data as JSON (snake_case keys).") var json = false
    @Flag(help: "Exit 65 when a response deviated from the contract (each deviation is a `warning:` line on stderr either way).") var strict = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard page >= 1 else { throw ValidationError("--page must be 1 or more") }
        guard (1...CheerHistory.maxPerPage).contains(perPage) else { throw ValidationError("--per-page must be 1–200") }
        if all || since != nil || until != nil || find != nil {
            guard what == .history else { throw ValidationError("--all, --since, --until and --find are for `print history`") }
            guard all else { throw ValidationError("--since, --until and --find go with --all") }
        }
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, HistoryStream.dayStart(value) == nil { throw ValidationError("\(name) takes a day as YYYY-MM-DD, not “\(value)”") }
        }
        if let find, find.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--find needs some text") }
    }

    func run() async throws {
        let (settings, logger) = try connection.settingsAndLogger()
        let output: String
        var findings = 0
        do {
            output = try await connection.withClient(settings, logger: logger) { client in
                do {
                    let text = try await produce(client, settings: settings, logger: logger)
                    findings = reportFindings(await client.exchanges.all())
                    return text
                } catch {
                    findings = reportFindings(await client.exchanges.all())  // the deviations still show
                    throw error
                }
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if !output.isEmpty { Terminal.out(output) }
        if strict, findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }

    /// What `what` prints.
    func produce(_ client: ShopClient, settings: ResolvedSettings, logger: Logger) async throws -> String {
        let user = settings.user
        switch what {
        case .balance:
            return try await balance(client: client, settings: settings, logger: logger)
        case .packs:
            let list = try await client.send(AudioPacks())
            return json ? try Output.json(list) : Output.packs(list)
        case .history where all:
            var stream = HistoryStream(user: user, json: json, find: find,
                                       since: since.flatMap(HistoryStream.dayStart),
                                       until: until.flatMap(HistoryStream.dayAfter))
            try await stream.run(client)
            return ""
        case .history:
            let history = try await client.send(CheerHistory(user: user, page: page, perPage: perPage))
            return json ? try Output.json(history) : Output.history(history, user: user)
        }
    }
}

/// `print history --all`: every page, newest first, each written as it comes (so `| head` stops it
/// after one page), in the contract's largest pages; `--since` stops at the first older entry.
struct HistoryStream {
    let user: String
    let json: Bool
    let find: String?
    /// Entries at or after this instant (the start of the --since day).
    let since: Date?
    /// Entries before this instant (the start of the day after --until).
    let until: Date?
    var printed = 0
    var progressShown = false
    /// The date of the last entry read: the history must go back in time.
    var previous: Date?
    var orderWarned = false
    init(user: String, json: Bool, find: String?, since: Date?, until: Date?) {
        self.user = user
        self.json = json
        self.find = find
        self.since = since
        self.until = until
    }

    /// The start of the day `text` names (YYYY-MM-DD, local time).
    static func dayStart(_ text: String) -> Date? { day(text)?.start }

    /// The start of the day after the day `text` names.
    static func dayAfter(_ text: String) -> Date? { day(text)?.next }

    static func day(_ text: String) -> (start: Date, next: Date)? {
        guard case let .day(y, m, d)? = GoToTarget(text) else { return nil }
        return DateText.dayBounds(year: y, month: m, day: d, zone: .current)
    }

    mutating func run(_ client: ShopClient) async throws {
        let showProgress = isatty(STDERR_FILENO) == 1
        if !json { Terminal.out(Self.header) }
        var page = 1
        defer { if progressShown { Terminal.err("\r\u{1B}[K") } }
        while true {
            let answer = try await client.send(CheerHistory(user: user, page: page, perPage: CheerHistory.maxPerPage))
            var out = ""
            var stop = false
            for item in answer.items {
                switch item {
                case let .entry(e):
                    if let previous, e.date > previous, !orderWarned {
                        orderWarned = true
                        Terminal.err("\(progressShown ? "\r\u{1B}[K" : "")warning: the server's history is not newest first (page \(page) has an entry newer than the one before it)\(since == nil ? "" : "; --since may stop too early")\n")
                    }
                    previous = e.date
                    if let until, e.date >= until { continue }
                    if let since, e.date < since {
                        stop = true
                        break
                    }
                    if let find, !FindState.matches(item, find) { continue }
                    out += try line(item)
                case .unreadable:
                    if find == nil { out += try line(item) }
                }
                if stop { break }
            }
            if !out.isEmpty { Terminal.out(out) }
            if showProgress {
                progressShown = true
                Terminal.err("\r\u{1B}[Kpage \(Wording.grouped(page)) of \(Wording.grouped(max(1, answer.totalPages))) · \(Wording.grouped(printed)) printed")
            }
            if stop || answer.items.isEmpty || page >= answer.totalPages { break }
            page += 1
        }
        if !json { Terminal.out("\(Wording.grouped(printed)) cheer\(printed == 1 ? "" : "s") · \(Sanitizer.line(user))\n") }
    }

    static let widths = [16, 24, 40, 8, 8]
    static var header: String { row(HistoryColumns.titles) }

    static func row(_ cells: [String]) -> String {
        zip(cells, widths).enumerated().map { i, pair in
            Columns.fit(pair.0, to: pair.1, alignRight: i >= 3)
        }.joined(separator: "  ") + "\n"
    }

    mutating func line(_ item: HistoryItem) throws -> String {
        printed += 1
        switch item {
        case let .entry(e):
            if json { return Output.jsonLine(e) }
            return Self.row(HistoryColumns.cells(e, zone: .current) + [e.comments.map { String($0.count) } ?? "—"])
        case let .unreadable(u):
            if json { return try Output.jsonLine(UnreadableLine(unreadable: true, id: u.id, reason: u.reason)) }
            return "⚠ unreadable entry\(u.id.map { " \(Sanitizer.line($0))" } ?? ""): \(Sanitizer.line(u.reason))\n"
        }
    }

    struct UnreadableLine: Encodable {
        var unreadable: Bool
        var id: String?
        var reason: String
    }
}

extension Print {
    /// The balance through the view-model layer: the cache is read first, the live value replaces it
    /// and is cached; when the server fails, the cached value is printed with its age and the reason,
    /// and the exit status is 75 (EX_TEMPFAIL).
    func balance(client: ShopClient, settings: ResolvedSettings, logger: Logger) async throws -> String {
        let user = settings.user
        let context = settings.shopContext
        let cache = CacheStore(directory: connection.resolvedCacheDir, logger: logger)
        let store = await AppStore(state: AppState(context: context), service: LiveShopService(client: client), cache: cache)
        await store.send(.startBalance)
        await store.settle()
        let balance = await store.state.balance
        switch balance.phase {
        case let .live(value, _):
            return json ? try Output.json(BalanceOutput(balance: value, source: "live", fetchedAt: nil, reason: nil))
                : Output.balance(CheerBalance(balance: value), user: user)
        case let .cached(value, fetchedAt, reason):
            // The cache stands in for an outage only; a refusal (401, 403, 404…) is an answer to act on.
            if let error = balance.lastError, !error.category.isOutage { throw error }
            let text = json
                ? try Output.json(BalanceOutput(balance: value, source: "cache", fetchedAt: ISO8601.format(fetchedAt), reason: reason?.full))
                : "\(Wording.grouped(value)) cheer  (\(Sanitizer.line(user))) · cached \(Wording.age(of: fetchedAt, now: Date())) · \(reason?.full ?? "offline")\n"
            if let error = balance.lastError {
                Terminal.err("warning: showing the cached balance: \(ErrorText.line(error))\n")
            }
            Terminal.out(text)
            throw ExitCode(ExitStatus.tempFail.rawValue)
        case .failed, .idle, .loading:
            throw balance.lastError ?? ShopAPIError.configuration(.unexpected)
        }
    }
}

/// `print balance --json`: the value and where it came from.
struct BalanceOutput: Encodable {
    var balance: Int
    var source: String
    var fetchedAt: String?
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case balance, source, reason
        case fetchedAt = "fetched_at"
    }
}

/// Text and JSON renderings for `print`. Every server string passes the sanitizer before it is printed.
enum Output {
    static func balance(_ balance: CheerBalance, user: String) -> String {
        "\(Wording.grouped(balance.balance)) cheer  (\(Sanitizer.line(user)))\n"
    }

    static func packs(_ list: AudioPackList) -> String {
        var rows = list.packs.map { p in
            [
                Sanitizer.line(p.name), Sanitizer.line(p.creator ?? ""), price(p.priceCents, p.currency),
                p.cheerTotal.map(Wording.grouped) ?? "", Sanitizer.line(p.identifier),
            ]
        }
        rows.insert(["NAME", "CREATOR", "PRICE", "CHEER", "IDENTIFIER"], at: 0)
        var text = table(rows, caps: [36, 24, 9, 9, 40], rightAligned: [2, 3])
        for u in list.unreadable {
            text += "⚠ unreadable pack #\(u.index + 1)\(u.id.map { " (\(Sanitizer.line($0)))" } ?? ""): \(Sanitizer.line(u.reason))\n"
        }
        text += "\(list.packs.count) packs\n"
        return text
    }

    static func history(_ page: CheerHistoryPage, user: String) -> String {
        var rows: [[String]] = [HistoryColumns.titles]
        var notes: [Int: String] = [:]
        for item in page.items {
            switch item {
            case let .entry(e):
                rows.append(HistoryColumns.cells(e, zone: .current) + [e.comments.map { String($0.count) } ?? "—"])
            case let .unreadable(u):
                notes[rows.count] = "⚠ unreadable entry\(u.id.map { " \(Sanitizer.line($0))" } ?? ""): \(Sanitizer.line(u.reason))"
                rows.append(["", "", "", "", ""])
            }
        }
        let lines = table(rows, caps: [16, 24, 40, 8, 8], rightAligned: [3, 4]).split(separator: "\n", omittingEmptySubsequences: false)
        var text = ""
        for (i, line) in lines.enumerated() where i < rows.count {
            text += (notes[i] ?? String(line)) + "\n"
        }
        if page.items.isEmpty { text += "(no cheers on this page)\n" }
        text += "page \(Wording.grouped(page.page)) of \(Wording.grouped(page.totalPages)) · \(Wording.grouped(page.totalCount)) cheers · \(Sanitizer.line(user))\n"
        return text
    }

    /// Columns padded by display width (wide characters count 2), cut with `…` at their cap.
    static func table(_ rows: [[String]], caps: [Int], rightAligned: Set<Int>) -> String {
        guard let columns = rows.first?.count else { return "" }
        let widths = (0..<columns).map { c in min(caps[c], rows.map { DisplayWidth.of($0[c]) }.max() ?? 0) }
        return rows.map { row in
            (0..<columns).map { c in
                c == columns - 1 && !rightAligned.contains(c)
                    ? Columns.truncate(row[c], to: widths[c])
                    : Columns.fit(row[c], to: widths[c], alignRight: rightAligned.contains(c))
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    static func price(_ cents: Int?, _ currency: String?) -> String {
        Wording.price(cents: cents, currency: currency.map(Sanitizer.line))
    }

    /// One line of JSON (JSON Lines), escaped as `json`.
    static func jsonLine<T: Encodable>(_ value: T) throws -> String {
        try json(value, pretty: false)
    }

    /// One history entry as a line of JSON, written directly (`print history --all --json` writes a
    /// million): the same keys, order and escaping as `json`.
    static func jsonLine(_ e: CheerHistoryEntry) -> String {
        var w = JSONWriter()
        w.raw("{\"amount\":")
        w.int(e.amount)
        w.raw(",\"comments\":")
        if let comments = e.comments {
            w.raw("[")
            for (i, c) in comments.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"body\":")
                w.string(c.body)
                w.raw(",\"signature\":")
                w.string(c.signature)
                w.raw("}")
            }
            w.raw("]")
        } else {
            w.null()
        }
        w.raw(",\"creator\":")
        w.string(e.creator)
        w.raw(",\"date\":")
        w.string(ISO8601.format(e.date))
        if let id = e.id {
            w.raw(",\"id\":")
            w.string(id)
        }
        w.raw(",\"product\":")
        w.string(e.product)
        w.raw("}\n")
        return w.text
    }

    /// Pretty JSON with snake_case keys; invisible and control characters escaped so none reach stdout
    /// raw (`JSONWriter.mustEscape`). Printable ASCII, most of any answer, is passed on as it is.
    static func json<T: Encodable>(_ value: T, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        guard text.utf8.contains(where: { $0 >= 0x7F }) else { return text + "\n" }
        var out = ""
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v >= 0x7F, JSONWriter.mustEscape(scalar) {
                if v > 0xFFFF {  // JSON escapes beyond the BMP as a UTF-16 surrogate pair
                    let u = v - 0x10000
                    out += String(format: "\\u%04x\\u%04x", 0xD800 + (u >> 10), 0xDC00 + (u & 0x3FF))
                } else {
                    out += String(format: "\\u%04x", v)
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\n"
    }
}
