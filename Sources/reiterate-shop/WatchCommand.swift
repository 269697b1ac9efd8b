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

    /// An alert's bytes (a bell, a terminal's notification) on stderr.
    static func alert(_ style: AlertStyle, _ text: String) {
        FileHandle.standardError.write(Data(CursesTerminal.alertBytes(style, text).utf8))
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
            return await Watcher(store: store, json: json, strict: strict, count: count, seconds: duration.flatMap(Self.seconds), lines: .standard,
                                 alert: Self.alert).run()
        }
        let elapsed = Wording.duration(Date().timeIntervalSince(started))
        Terminal.err("note: watched \(Sanitizer.line(settings.user)) on \(settings.environment.uppercased()) for \(elapsed): "
                     + "\(Wording.grouped(outcome.events)) event\(outcome.events == 1 ? "" : "s"), \(Wording.grouped(outcome.findings)) finding\(outcome.findings == 1 ? "" : "s"), "
                     + "\(Wording.grouped(outcome.rounds)) round\(outcome.rounds == 1 ? "" : "s")\(outcome.why.map { " (\($0))" } ?? "")\n")
        try outcome.requireARound()
        if strict, outcome.findings > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
}

extension WatchOutcome {
    /// A watch that never completed a round watched nothing: the reason, as every command says one.
    func requireARound() throws {
        guard rounds == 0, let failure else { return }
        throw CLIError(message: "no round of the watch completed: \(ErrorText.line(failure))", exitCode: .of(failure))
    }
}
