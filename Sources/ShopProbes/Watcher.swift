import Foundation
import JSONTokens
import ShopAPI
import ShopViewModels
import TerminalText

// `watch`'s run with no screen, out of the executable (issue 44, item 5): the view models' watch in a store,
// each new event printed as a line, ended at a count, a duration, a signal or (with --strict) a finding.

public struct WatchOutcome: Sendable {
    public var events = 0
    public var findings = 0
    public var rounds = 0
    public var why: String?
    /// Why the last read failed, when no round completed since.
    public var failure: ShopAPIError?

}

/// Runs the watch in a store with no screen: prints each new event, and ends at the count, the
/// duration, a signal or (with --strict) the first finding.
@MainActor
public final class Watcher {
    let store: AppStore
    /// Where the lines go (events on stdout, notes and warnings on stderr), and an alert's bytes (a bell,
    /// a terminal's notification) when a person is there to hear it.
    let lines: OutputLines
    let alert: (AlertStyle, String) -> Void
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

    public init(store: AppStore, json: Bool, strict: Bool, count: Int?, seconds: Double?, lines: OutputLines,
                alert: @escaping (AlertStyle, String) -> Void = { _, _ in }) {
        self.store = store
        self.lines = lines
        self.alert = alert
        self.json = json
        self.strict = strict
        self.count = count
        self.seconds = seconds
    }

    public func run() async -> WatchOutcome {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            source.setEventHandler { @Sendable in MainActor.assumeIsolated { self.finish(sig == SIGINT ? "interrupted" : "terminated") } }
            source.resume()
            sources.append(source)
        }
        store.onChange = { [weak self] state in self?.changed(state) }
        store.onFrontEnd = { [weak self] effect in
            if case let .alert(style, text) = effect { self?.alert(style, text) }
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
        for sig in [SIGINT, SIGTERM] { signal(sig, SIG_DFL) }  // the process's own again (a test runner's, a CLI's exit)
        store.send(.action(.quit))  // every request still out is cancelled
        store.stop()
        outcome.rounds = store.state.watch.rounds
        outcome.failure = store.state.watch.lastFailure
        return outcome
    }

    /// Ends the run from outside the watch (`proxy --watch --strict`: a finding on the app's traffic).
    public func end(_ why: String) { finish(why) }

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
            lines.err("note: \(Sanitizer.line(event.text(names: names)))\n")
            return
        }
        outcome.events += 1
        let finding = event.finding(user: store.state.context.user)
        if json {
            var line = WatchLine(event, names: names)
            line.shopFinding = finding
            lines.out((try? Output.jsonLine(line)) ?? "")
        } else {
            let mark = event.outcomeWord.map { "  [\($0)]" } ?? ""
            lines.out("\(ISO8601.format(event.at))  \(Sanitizer.line(event.text(names: names)))\(mark)\n")
        }
        if let finding {
            outcome.findings += 1
            lines.err(finding.warningLine)
            SessionJournal.record(finding)
        }
        if let count, outcome.events >= count { finish(nil) }
    }
}

/// One line of `watch --json`.
public struct WatchLine: Encodable {
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
    /// A finding's one record (`ShopFinding`: kind, subject, blame, expected, actual, request ids, caused by),
    /// the same object in every JSON output that carries a finding.
    var shopFinding: ShopFinding?

    enum CodingKeys: String, CodingKey {
        case time, kind, outcome, from, to, delta, entry, product, check, expected, actual, text, added, removed, cause, blame, app
        case requestIds = "request_ids", productName = "product_name", priceChanged = "price_changed", causedBy = "caused_by", madeBy = "made_by"
        case shopFinding = "shop_finding"
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
