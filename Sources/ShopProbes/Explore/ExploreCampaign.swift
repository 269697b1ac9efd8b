import Foundation
import ShopAPI
import ShopViewModels
import TerminalText

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `explore --yes`'s run, out of the executable: the cases in turn, a line each, progress on a terminal, the
/// files written after every case (so Ctrl-C leaves the findings so far), and the contract watchdog's findings
/// on the campaign's own answers, kept as each case ends (the client's log keeps only its latest requests).
public struct ExploreCampaign: Sendable {
    public var run: ExploreRun
    public var client: ShopClient
    public var files: ExploreFiles?
    public var lines: OutputLines
    public var json: Bool
    /// Progress on stderr, rewritten in place (stderr is a terminal).
    public var progress: Bool
    /// SIGINT and SIGTERM stop it (the CLI's); the TUI stops it by cancelling its task.
    public var catchesSignals = true
    /// Each case as it ends, with how many have (the TUI's progress and Checks tab).
    public var news: (@Sendable (ExploreOutcome, Int, Int) async -> Void)?

    public init(run: ExploreRun, client: ShopClient, files: ExploreFiles?, lines: OutputLines, json: Bool, progress: Bool) {
        self.run = run
        self.client = client
        self.files = files
        self.lines = lines
        self.json = json
        self.progress = progress
    }

    /// What a campaign ends with.
    public struct Result: Sendable {
        public var outcomes: [ExploreOutcome]
        public var contract: [ShopFinding]
        public var summary: ExploreSummary
        /// Why it ended early: "interrupted", "terminated"; nil when every case ran (or the budget ended it).
        public var stopped: String?
        /// 0: every case passed, no finding; 65: a finding; 69: no finding, but a case not judged or not run.
        public var exitStatus: Int32 {
            if summary.findings > 0 || !contract.isEmpty { return 65 }
            return summary.notJudged > 0 || summary.notRun > 0 ? 69 : 0
        }
    }

    /// One case's line: `✔ name`, `✗ name: …` (a finding's line each), `· name: not judged: …`.
    public static func line(_ o: ExploreOutcome) -> String {
        let name = Sanitizer.line(o.exploreCase.name)
        switch o.verdict {
        case .passed: return "✔ \(name)" + (o.note.map { " (\(Sanitizer.line($0)))" } ?? "") + "\n"
        case .notJudged: return "· \(name): \(Sanitizer.line(o.note ?? "not judged"))\n"
        case .finding:
            var s = o.findings.map { "✗ \(name) · \($0.line.dropFirst(2))\n" }.joined()
            if let shrunk = o.shrunk {
                s += "  shrunk to \(shrunk.count) step\(shrunk.count == 1 ? "" : "s"): \(Sanitizer.line(shrunk.map(\.words).joined(separator: "; then ")))\n"
            }
            return s
        }
    }

    /// A case's JSON line.
    struct Line: Encodable {
        var name: String
        var family: String
        var verdict: String
        var note: String?
        var shopFindings: [ShopFinding]
        var shrunk: [String]?
        enum CodingKeys: String, CodingKey { case name, family, verdict, note, shopFindings = "shop_findings", shrunk }
    }

    public func go(_ cases: [ExploreCase], omitted: [ExploreOmission], budget: Int) async throws -> Result {
        let started = ContinuousClock.now
        let ending = AsyncStream<String>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] where catchesSignals {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            let words = sig == SIGINT ? "interrupted" : "terminated"
            source.setEventHandler { @Sendable in ending.continuation.yield(words) }
            source.resume()
            sources.append(source)
        }
        defer {
            sources.forEach { $0.cancel() }
            if catchesSignals { for sig in [SIGINT, SIGTERM] { signal(sig, SIG_DFL) } }
        }
        let kept = Kept()
        let work = Task { [self] in
            try await run.run(cases) { event in
                switch event {
                case let .starting(i, n, c):
                    if progress { lines.err("\r\u{1B}[K[\(i)/\(n)] \(c.family.rawValue): \(Sanitizer.line(c.name)) …") }
                case let .outcome(o):
                    if progress { lines.err("\r\u{1B}[K") }
                    if json {
                        let l = Line(name: o.exploreCase.name, family: o.exploreCase.family.rawValue, verdict: o.verdict.rawValue, note: o.note,
                                     shopFindings: o.findings, shrunk: o.shrunk?.map(\.words))
                        lines.out((try? Output.jsonLine(l)) ?? "")
                    } else {
                        lines.out(Self.line(o))
                    }
                    // Its files, and the watchdog's findings on its requests, before the client's log forgets them.
                    // The case's exchanges: those of its range that answered the wire (the TUI's own reads meanwhile are not).
                    let answered = await run.wire.answered
                    let log = await client.exchanges.all().filter { e in
                        (o.serials?.contains(e.id) ?? false) && (e.requestID.map { answered.contains($0) } ?? true)
                    }
                    await kept.add(o, log.filter { !$0.findings.isEmpty })
                    await news?(o, await kept.outcomes.count, cases.count)
                    try? files?.write(case: o, exchanges: log)
                    if let files { try? files.write(await kept.outcomes, contract: [], summary: ExploreSummary(await kept.outcomes, planned: cases.count,
                                                                                                        requests: await run.wire.sent, budget: budget, seconds: 0, omitted: omitted)) }
                }
            }
        }
        let stopper = Task {
            for await why in ending.stream {
                await kept.stop(why)
                work.cancel()
                return
            }
        }
        _ = try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
        stopper.cancel()
        ending.continuation.finish()
        let outcomes = await kept.outcomes
        let contract = FindingGroup.of(await kept.withFindings).map(ShopFinding.init)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let summary = ExploreSummary(outcomes, planned: cases.count, requests: await run.wire.sent, budget: budget, seconds: seconds, omitted: omitted)
        try files?.write(outcomes, contract: contract, summary: summary)
        return Result(outcomes: outcomes, contract: contract, summary: summary, stopped: await kept.stopped)
    }
}

/// The outcomes so far, and the exchanges the watchdog found something on.
actor Kept {
    private(set) var outcomes: [ExploreOutcome] = []
    private(set) var withFindings: [Exchange] = []
    private var seen = Set<Int>()
    private(set) var stopped: String?

    func add(_ o: ExploreOutcome, _ exchanges: [Exchange]) {
        outcomes.append(o)
        for e in exchanges where seen.insert(e.id).inserted { withFindings.append(e) }
    }

    func stop(_ why: String) { stopped = why }
}
