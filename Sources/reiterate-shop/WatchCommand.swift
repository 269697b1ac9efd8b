import ArgumentParser
import Foundation
import ShopAPI
import ShopProbes
import ShopSettings
import ShopTUI
import ShopViewModels
import TerminalText

/// `reiterate-shop watch`: the Live tab for scripts and CI. One line per change the app makes to the
/// user under test (with `--json`, one JSON object a line), reconciled or flagged, until `--count`,
/// `--for`, Ctrl-C or SIGTERM; findings also as `warning:` lines on stderr.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch the user under test: a line per change (balance, new entry, pack totals), reconciled or flagged.",
        discussion: """
            Every interval the balance and the newest history entries are read (the packs every fifth
            round); each change is explained (a debit by its new entries, a rise by the bundles sold) or
            flagged as a finding. Findings also go to stderr as `warning: [check] expected …, got …`.
            Exit status: 0; 65 with --strict at the first finding; 78 bad setting.
            """
    )

    @Option(help: "Seconds between reads (default 2, or the environment's watch_interval).") var interval: Double?
    @Option(help: "Stop after this many events (status lines are not counted).") var count: Int?
    @Option(name: .customLong("for"), help: "Stop after this long: 90s, 5m, 1h, or seconds.") var duration: String?
    @Flag(help: "One JSON object a line: time, kind (balance, entry, pack, packs, finding, note, error), and the change's fields.") var json = false
    @Flag(help: "Exit 65 at the first finding.") var strict = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let interval { guard interval >= 0.2, interval <= 3600 else { throw ValidationError("--interval takes seconds from 0.2 to 3600") } }
        if let count { guard count >= 1 else { throw ValidationError("--count must be 1 or more") } }
        if let duration { guard Self.seconds(duration) != nil else { throw ValidationError("--for takes 90s, 5m, 1h or a number of seconds, not “\(duration)”") } }
    }

    /// `90s`, `5m`, `1h`, `45` → seconds.
    static func seconds(_ text: String) -> Double? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (unit, scale) in units where t.hasSuffix(unit) {
            guard let n = Double(t.dropLast(unit.count)), n > 0 else { return nil }
            return n * scale
        }
        return Double(t).flatMap { $0 > 0 ? $0 : nil }
    }

    func run() async throws {
        let config = try connection.loadConfig()
        let settings = try connection.settings(config: config, watchInterval: interval)
        let logger = try connection.makeLogger(label: "reiterate")
        let started = Date()
        let outcome: WatchOutcome = try await connection.withClient(settings, logger: logger) { client in
            var watch = settings.watchState
            // Told on stderr only when a person is there to hear it.
            if isatty(STDERR_FILENO) != 1 { watch.alert = nil }
            let store = await AppStore(state: AppState(context: settings.shopContext, watch: watch), service: LiveShopService(client: client), cache: nil)
            return await Watcher(store: store, json: json, strict: strict, count: count, seconds: duration.flatMap(Self.seconds)).run()
        }
        let elapsed = Wording.duration(Date().timeIntervalSince(started))
        Terminal.err("note: watched \(Sanitizer.line(settings.user)) on \(settings.environment.uppercased()) for \(elapsed): "
                     + "\(Wording.grouped(outcome.events)) event\(outcome.events == 1 ? "" : "s"), \(Wording.grouped(outcome.findings)) finding\(outcome.findings == 1 ? "" : "s"), "
                     + "\(Wording.grouped(outcome.rounds)) round\(outcome.rounds == 1 ? "" : "s")\(outcome.why.map { " (\($0))" } ?? "")\n")
        try outcome.requireARound()
        if strict, outcome.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}

struct WatchOutcome: Sendable {
    var events = 0
    var findings = 0
    var rounds = 0
    var why: String?
    /// Why the last read failed, when no round completed since.
    var failure: ShopAPIError?

    /// A watch that never completed a round watched nothing: the reason, as every command says one.
    func requireARound() throws {
        guard rounds == 0, let failure else { return }
        throw CLIError(message: "no round of the watch completed: \(ErrorText.line(failure))", exitCode: .of(failure))
    }
}

/// Runs the watch in a store with no screen: prints each new event, and ends at the count, the
/// duration, a signal or (with --strict) the first finding.
@MainActor
final class Watcher {
    let store: AppStore
    let json: Bool
    let strict: Bool
    let count: Int?
    let seconds: Double?
    private var printed = 0
    private var outcome = WatchOutcome()
    private var finished: CheckedContinuation<Void, Never>?
    private var done = false
    private var sources: [any DispatchSourceSignal] = []
    private var names: [String: String] = [:]

    init(store: AppStore, json: Bool, strict: Bool, count: Int?, seconds: Double?) {
        self.store = store
        self.json = json
        self.strict = strict
        self.count = count
        self.seconds = seconds
    }

    func run() async -> WatchOutcome {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            source.setEventHandler { @Sendable in MainActor.assumeIsolated { self.finish(sig == SIGINT ? "interrupted" : "terminated") } }
            source.resume()
            sources.append(source)
        }
        store.onChange = { [weak self] state in self?.changed(state) }
        store.onFrontEnd = { effect in
            if case let .alert(style, text) = effect {
                FileHandle.standardError.write(Data(CursesTerminal.alertBytes(style, text).utf8))
            }
        }
        store.send(.action(.watch))
        if let seconds {
            Task { @MainActor in
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                self.finish(nil)
            }
        }
        if !done { await withCheckedContinuation { finished = $0 } }
        sources.forEach { $0.cancel() }
        store.send(.action(.quit))  // every request still out is cancelled
        store.stop()
        outcome.rounds = store.state.watch.rounds
        outcome.failure = store.state.watch.lastFailure
        return outcome
    }

    /// Ends the run from outside the watch (`proxy --watch --strict`: a finding on the app's traffic).
    func end(_ why: String) { finish(why) }

    private func finish(_ why: String?) {
        guard !done else { return }
        done = true
        outcome.why = why
        finished?.resume()
        finished = nil
    }

    private func changed(_ state: AppState) {
        for pack in state.packs.all where names[pack.identifier] == nil { names[pack.identifier] = pack.name }
        let watch = state.watch
        let new = watch.eventCount - printed
        guard new > 0, !done else { return }
        printed = watch.eventCount
        for event in watch.timeline.rows.prefix(new).reversed() {
            write(event)
            guard !done else { return }
        }
        // The whole round is printed first: every finding of it, with the reads on both sides.
        if strict, outcome.findings > 0 { finish("a finding, with --strict") }
    }

    private func write(_ event: WatchEvent) {
        if case .status = event.change {
            Terminal.err("note: \(Sanitizer.line(event.text(names: names)))\n")
            return
        }
        outcome.events += 1
        if json {
            Terminal.out((try? Output.jsonLine(WatchLine(event, names: names))) ?? "")
        } else {
            let mark = event.outcomeWord.map { "  [\($0)]" } ?? ""
            Terminal.out("\(ISO8601.format(event.at))  \(Sanitizer.line(event.text(names: names)))\(mark)\n")
        }
        if case let .finding(check, expected, actual) = event.change {
            outcome.findings += 1
            let ids = event.requestIDs.isEmpty ? "" : " (request id\(event.requestIDs.count == 1 ? "" : "s") \(event.requestIDs.map(Sanitizer.line).joined(separator: ", ")))"
            Terminal.err("warning: [\(check.rawValue)] expected \(Sanitizer.line(expected)), got \(Sanitizer.line(actual))\(ids)\n")
        }
        if let count, outcome.events >= count { finish(nil) }
    }
}

/// One line of `watch --json`.
struct WatchLine: Encodable {
    var time: String
    var kind: String
    var outcome: String?
    var requestIds: [String]
    var from: Int?
    var to: Int?
    var delta: Int?
    var entry: EntryFields?
    var product: String?
    var productName: String?
    var added: [String]?
    var removed: [String]?
    var priceChanged: [String]?
    var check: String?
    var expected: String?
    var actual: String?
    var text: String
    /// What the event may follow from ("possibly caused by …").
    var causedBy: String?
    /// With the app's proxy: the request ids of the writes that explain the change, and whose they were
    /// (`app`, `tool`, `elsewhere`: none seen explains it).
    var cause: [String]?
    var madeBy: [String]?
    /// A finding's: `app` or `server`.
    var blame: String?
    /// An app write's fields.
    var app: AppFields?

    enum CodingKeys: String, CodingKey {
        case time, kind, outcome, from, to, delta, entry, product, check, expected, actual, text, added, removed, cause, blame, app
        case requestIds = "request_ids", productName = "product_name", priceChanged = "price_changed", causedBy = "caused_by", madeBy = "made_by"
    }

    struct AppFields: Encodable {
        var op: String
        var product: String?
        var amount: Int?
        var comment: String?
        var identifier: String?
        var transactionId: String?
        var user: String?
        var status: Int?
        var balance: Int?
        var requestId: String?
        var fault: String?
        var reachedServer: Bool
        var delivered: Bool

        enum CodingKeys: String, CodingKey {
            case op, product, amount, comment, identifier, user, status, balance, fault
            case transactionId = "transaction_id", requestId = "request_id", reachedServer = "reached_server", delivered
        }

        init(_ w: AppWrite) {
            switch w.kind {
            case let .spend(s): (op, product, amount, comment) = ("spend", s.product, s.amount, s.comment)
            case let .purchase(p): (op, identifier, transactionId) = ("purchase", p.identifier, p.transactionID.description)
            }
            (user, status, balance, requestId, fault) = (w.user, w.status, w.balance, w.requestID, w.fault?.name)
            (reachedServer, delivered) = (w.reachedServer, w.delivered)
        }
    }

    struct EntryFields: Encodable {
        var id: String?
        var amount: Int
        var product: String
        var creator: String
        var date: String
        var comments: [String?]?
    }

    init(_ e: WatchEvent, names: [String: String]) {
        time = ISO8601.format(e.at)
        kind = e.kind
        outcome = e.outcomeWord.map { $0 == "this tool's write" ? "own" : $0 }
        requestIds = e.requestIDs
        text = e.text(names: names)
        causedBy = e.causedBy?.words
        if !e.causes.isEmpty {
            cause = e.causes.compactMap { if case let .app(id) = $0 { return id } else { return nil } }
            madeBy = e.causes.map { switch $0 { case .app: "app"; case .tool: "tool"; case .elsewhere: "elsewhere" } }
        }
        switch e.change {
        case let .balance(from, to):
            (self.from, self.to, delta) = (from, to, to.minusSaturating(from))
        case let .entry(entry):
            self.entry = EntryFields(id: entry.id, amount: entry.amount, product: entry.product, creator: entry.creator, date: ISO8601.format(entry.date),
                                     comments: entry.comments?.map(\.body))
            product = entry.product
            productName = names[entry.product]
        case let .packTotal(product, from, to):
            (self.product, productName, self.from, self.to, delta) = (product, names[product], from, to, to.minusSaturating(from))
        case let .packs(added, removed, repriced):
            (self.added, self.removed, priceChanged) = (added, removed, repriced)
        case let .finding(check, expected, actual):
            (self.check, self.expected, self.actual, blame) = (check.rawValue, expected, actual, check.blame.rawValue)
        case let .appWrite(w):
            app = AppFields(w)
            cause = w.requestID.map { [$0] }
        case .note, .error, .status:
            break
        }
    }
}
