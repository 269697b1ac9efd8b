import ArgumentParser
import Foundation
import Logging
import ShopAPI
import ShopProbes
import ShopCompare
import ShopCache
import ShopSettings
import ShopTUI
import ShopViewModels
import TerminalText

@main
struct ReiterateShop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reiterate-shop",
        abstract: "Terminal client for the Reiterate shop: Audio Packs, cheer balance and cheer history.",
        discussion: """
            Without a subcommand it starts the interactive UI:
              reiterate-shop [--env NAME] [--base-url URL] [--user ID] [--theme THEME] [--read-only] [--watch] [--no-mouse] [--cache-dir DIR] [--log-file PATH]
            THEME is auto (the terminal's background), dark or light, each also -colorblind; NO_COLOR turns colours off.
            Tokens come from the environment only: REITERATE_TOKEN (access) and REITERATE_REFRESH_TOKEN.
            `print` is for scripts and smoke checks.
            """,
        version: BuildInfo.versionLine,
        subcommands: [Interactive.self, Print.self, Spend.self, Buy.self, WatchCommand.self, SnapshotCommand.self, CompareCommand.self, ReplayCommand.self, PinsCommand.self, Config.self, Keys.self, ContractCommand.self, NegativeCommand.self, ExploreCommand.self, ProxyCommand.self, LedgerCommand.self, SessionCommand.self],
        defaultSubcommand: Interactive.self
    )

    /// The entry point. The interactive UI (no subcommand) is parsed by its own command alone, not by the
    /// root with every subcommand's parser (`make bench`: argument parsing 4.7 → 3.8 ms of the first frame).
    /// Anything else — a subcommand, help, --version, or arguments the UI refuses — goes through the
    /// root, which says what it always said.
    static func main() async {
        StartupTrace.mark("main")
        let arguments = Self.bareProxy(Array(CommandLine.arguments.dropFirst()))
        if Self.isInteractive(arguments), let command = try? Interactive.parse(arguments) {
            await finish(command)
            return
        }
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(StrictScope.spelled(arguments))
        } catch {
            exit(withError: error)  // help, --version, and what the parser refuses: its own words and status
        }
        await finish(command)
    }

    /// Runs a parsed command; every failure of every command ends here, in one way: `error: …` on one
    /// line and the documented status (`fail`). A status a command set itself (`ExitCode`, after its own
    /// lines) and the parser's clean exits pass through.
    static func finish(_ command: any ParsableCommand) async {
        var command = command
        // The parser's own commands (`help`): its own words and status.
        guard String(reflecting: type(of: command)).hasPrefix("reiterate_shop.") else {
            do { try command.run() } catch { exit(withError: error) }
            return
        }
        // While a test session is open, the command's lines go into it (`session` itself keeps its own).
        // Named as typed (`proxy`, not its default subcommand's `run`); the UI is `tui`.
        let first = CommandLine.arguments.dropFirst().first.flatMap { word in configuration.subcommands.contains { $0._commandName == word } ? word : nil }
        let name = command is Interactive ? "tui" : first ?? type(of: command)._commandName
        let journal = command is any SessionPart ? nil : TestSessions(environment: ProcessInfo.processInfo.environment).journal(command: name)
        SessionJournal.active = journal
        journal?.commandStarted(Array(CommandLine.arguments.dropFirst()))
        do {
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            ended(0)
        } catch let exit as ExitCode {
            ended(exit.rawValue)
            Self.exit(withError: exit)
        } catch let clean as CleanExit {
            ended(0)
            Self.exit(withError: clean)
        } catch {
            let code = fail(error)
            ended(code.rawValue)
            Self.exit(withError: code)
        }
    }

    /// The end of the command in the session it appends to now (the TUI's may have changed), and, in a
    /// line, what did not go into it.
    static func ended(_ status: Int32) {
        guard let journal = SessionJournal.active else { return }
        journal.commandEnded(status)
        if journal.closedUnder {
            Terminal.err("note: the test session was closed while this ran: what it did after the close is in no session\n")
        } else if journal.failed {
            Terminal.err("warning: some of this command's lines could not be added to the test session (is the disk full?)\n")
        }
    }

    /// `--proxy` with no address after it (at the end, or before another option) becomes
    /// `--proxy=default`: the environment's proxy_listen, else 127.0.0.1:8877.
    static func bareProxy(_ arguments: [String]) -> [String] {
        guard arguments.first.map({ !configuration.subcommands.map { $0._commandName }.contains($0) }) ?? false else { return arguments }
        return arguments.enumerated().map { i, argument in
            argument == "--proxy" && (i + 1 == arguments.count || arguments[i + 1].hasPrefix("-")) ? "--proxy=\(AppProxy.defaultAddress)" : argument
        }
    }

    /// Whether `arguments` are the UI's: no subcommand first, and nothing the root answers itself.
    static func isInteractive(_ arguments: [String]) -> Bool {
        let names = Set(configuration.subcommands.map { $0._commandName } + ["help"])
        if let first = arguments.first, names.contains(first) { return false }
        return !arguments.contains { ["-h", "--help", "--version", "--generate-completion-script", "--experimental-dump-help"].contains($0) || $0.hasPrefix("--generate-completion-script=") }
    }
}

/// Options every command takes. Each falls back to an environment variable, then a default.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("env"), help: "A named environment from the config file (`local` is built in; env REITERATE_ENV).")
    var envName: String?

    @Option(name: .customLong("base-url"), help: "Shop API base URL (env REITERATE_BASE_URL; default http://127.0.0.1:8080).")
    var baseURL: String?

    @Option(help: "User id (env REITERATE_USER; default qa-alice).")
    var user: String?

    @Option(help: "Seconds to wait for each request (default 10, or the environment's timeout).")
    var timeout: Double?

    @Option(name: .customLong("log-file"), help: "Append a request log here (tokens are never logged).")
    var logFile: String?

    @Option(name: .customLong("har"), help: "When the program ends, write every request of the session here as a HAR 1.2 file (mode 0600; no token).")
    var harFile: String?

    @Option(name: .customLong("contract"), help: "Check responses against this OpenAPI document instead of the built-in contract (or `contract = \"path\"` per environment).")
    var contract: String?

    @Option(name: .customLong("cache-dir"), help: "Cache directory (default $XDG_CACHE_HOME/reiterate-shop or ~/.cache/reiterate-shop).")
    var cacheDir: String?

    func validate() throws {
        if let timeout { guard timeout.isFinite, timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be in (0, 600] seconds") } }
    }

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The config file, then flags > environment variables > config > defaults. A broken file is a
    /// setting error naming its file, line and key (only commands that run load it: `--help` never does).
    func settings(readOnlyFlag: Bool = false) throws -> ResolvedSettings {
        try settings(config: loadConfig(), readOnlyFlag: readOnlyFlag)
    }

    /// The config file (nil when there is none), read once per command.
    func loadConfig() throws -> ConfigFile? {
        do {
            return try ConfigFile.load(path: ConfigFile.defaultPath(environment: environment))
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
    }

    /// Settings from a config file already read.
    func settings(config: ConfigFile?, readOnlyFlag: Bool = false, watch: Bool = false, watchInterval: Double? = nil) throws -> ResolvedSettings {
        do {
            return try ResolvedSettings.resolve(
                flags: .init(env: envName, baseURL: baseURL, user: user, readOnly: readOnlyFlag, timeout: timeout, contract: contract,
                             watch: watch, watchInterval: watchInterval),
                environment: environment, config: config)
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
    }

    var resolvedCacheDir: String { CacheLocation.directory(explicit: cacheDir, environment: environment) }

    /// The logger for `--log-file`, or one that drops everything.
    func makeLogger(label: String) throws -> Logger {
        guard let logFile else { return Logger(label: label) { _ in SwiftLogNoOpLogHandler() } }
        do {
            return Logger(label: label, factory: try FileLogHandler.factory(path: logFile))
        } catch {
            throw CLIError(message: "\(error)", exitCode: .config)
        }
    }

    /// A token from the environment, trimmed; one that could not travel in a header is a setting error
    /// (named without its value).
    func token(_ name: String) throws -> String? {
        guard let raw = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty else { return nil }
        guard TokenStore.isValidBearerToken(raw) else {
            throw CLIError(message: "\(name) holds characters a bearer token cannot have (a control character or space?)", exitCode: .config)
        }
        return raw
    }

    /// The settings and the logger of a command that takes no config of its own; a failure is
    /// reported (`error: …`) and becomes the exit status.
    func settingsAndLogger() throws -> (ResolvedSettings, Logger) {
        do {
            return (try settings(), try makeLogger(label: "reiterate"))
        } catch {
            throw fail(error)
        }
    }

    /// The contract of `settings`: the document it names, read now (a setting error when it cannot be
    /// used; kept in the cache folder by the hash of its text, so a later run does not read it again),
    /// or the built-in one, which the client reads in the background.
    func contract(_ settings: ResolvedSettings) throws -> @Sendable () -> Contract {
        guard let file = settings.contract else { return { Contract.builtIn() } }
        do {
            let read = try ContractLoader.load(file: file, cacheDirectory: resolvedCacheDir)
            return { read }
        } catch {
            throw CLIError(message: error.description, exitCode: .config)
        }
    }

    /// The client for `settings` (resolved once by the command); `body` runs with it and the transport
    /// is shut down afterwards. `logger` is the one `--log-file` log, shared with the cache.
    /// `keepsSession`: the exchanges past the in-memory window spill to the state folder (the TUI, whose
    /// `R` and `e` save a HAR at any time; any command given --har).
    /// `pins`: the environment's pins every answer is checked against (read from the state folder when
    /// not given); a front end that also changes them (`P`) makes them and hands the same store here.
    func withClient<T: Sendable>(_ settings: ResolvedSettings, logger: Logger, keepsSession: Bool = false, pins given: PinStore? = nil,
                                 _ body: (ShopClient) async throws -> T) async throws -> T {
        let contract = try contract(settings)
        let access = try token(settings.tokenEnv)
        let refresh = try token(settings.refreshTokenEnv)
        // Named before any request goes out: a request with no token only comes back as a bare 401.
        guard access != nil || refresh != nil else {
            let state = environment[settings.tokenEnv] == nil ? "is not set" : "is empty"
            throw CLIError(message: "no access token: \(settings.tokenEnv) \(state); set it to \(settings.environment.uppercased())'s access token "
                           + "(or set \(settings.refreshTokenEnv) to sign in with a refresh token); nothing was sent", exitCode: .config)
        }
        let tokens = TokenStore(accessToken: access, refreshToken: refresh)
        let configuration = ShopClientConfiguration(baseURL: settings.baseURL, requestTimeout: .milliseconds(Int(settings.timeout * 1000)))
        let transport: AsyncHTTPTransport
        do {
            let proxy = settings.proxy.map { (host: $0.host, port: $0.port, username: $0.username, password: $0.password) }
            transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .milliseconds(Int(min(settings.timeout, 3) * 1000)), caFile: settings.caFile,
                                                                    proxy: proxy))
        } catch let error as TransportError {
            throw CLIError(message: ErrorText.sentence(error), exitCode: .config)
        }
        // The last 100 in memory; older ones spill to the state folder, for a HAR saved later.
        let log = ExchangeLog(capacity: 100, spillFile: keepsSession || harFile != nil ? SessionSpill.path(environment: environment) : nil)
        let client = ShopClient(configuration: configuration, transport: transport, tokens: tokens,
                                pipeline: .standard(exchanges: log, contract: contract, pins: given ?? pins(settings), logger: logger,
                                                    extra: [SessionJournal.observer(base: settings.baseURL)]), logger: logger)
        do {
            let result = try await body(client)
            try? await transport.shutdown()
            await writeHAR(client, baseURL: settings.baseURL)
            await log.close()
            return result
        } catch {
            try? await transport.shutdown()
            await writeHAR(client, baseURL: settings.baseURL)
            await log.close()
            throw error
        }
    }

    /// The environment's pins, read now (`P`, `reiterate-shop pins`): every answer is checked against
    /// them, under `[compare] ignore`. None when the rules are not paths (`config check` says so).
    func pins(_ settings: ResolvedSettings) -> PinStore? {
        guard let ignore = try? IgnoreRules(settings.compareIgnore) else { return nil }
        let state = EvidenceFiles.stateDirectory(environment: environment)
        return PinStore(path: PinStore.path(stateDirectory: state, environment: settings.environment), ignore: ignore)
    }

    /// `--har FILE`: the session's requests, whatever the ending (q, an error, SIGTERM, SIGHUP).
    func writeHAR(_ client: ShopClient, baseURL: String) async {
        guard let harFile else { return }
        let exchanges = await client.exchanges.session()
        do {
            let data = try HAR.encode(exchanges, baseURL: baseURL, creator: "reiterate-shop", version: ShopClientConfiguration.appVersion)
            // The cache's crash-safe writer: a 0600 temporary file beside it, renamed over it.
            let folder = URL(fileURLWithPath: harFile).deletingLastPathComponent().path
            try AtomicFile.write(data, to: harFile, directory: folder)
            Terminal.err("note: wrote \(exchanges.count) request\(exchanges.count == 1 ? "" : "s") to \(Sanitizer.line(harFile)) (HAR 1.2)\(SessionSpill.gap(exchanges))\n")
            SessionJournal.wrote(harFile, what: "HAR")
        } catch {
            Terminal.err("warning: could not write the HAR file \(Sanitizer.line(harFile)): check that its folder exists and is writable\n")
        }
    }
}


struct CLIError: Error {
    var message: String
    var exitCode: ExitStatus
}

/// Prints `error: …` on one line to stderr and exits with the error's status.
func fail(_ error: any Error, tokenVariable: String? = nil) -> ExitCode {
    let line: String
    let status: ExitStatus
    switch error {
    case let error as ShopAPIError:
        var text = ErrorText.line(error)
        text += ErrorText.signInAdvice(error, tokenVariable: tokenVariable ?? "REITERATE_TOKEN")
        line = text
        status = .of(error)
    case let error as CLIError:
        line = Sanitizer.line(error.message)
        status = error.exitCode
    case let error as SetupProblem:
        line = Sanitizer.line(error.words)
        status = error.status
    case let error as ValidationError:
        line = Sanitizer.line(error.message)
        status = .config
    default:
        // Never a library's own words: they may name types, files or numbers. A failure no case
        // above knows is this program's own (EX_SOFTWARE), not the server's.
        line = "an unexpected internal failure"
        status = .software
    }
    Terminal.err("error: \(line)\n")
    return ExitCode(status.rawValue)
}

extension OutputLines {
    /// The terminal's stdout and stderr.
    static var standard: OutputLines { OutputLines(out: { Terminal.out($0) }, err: { Terminal.err($0) }) }
}

/// stdout and stderr for a command that scripts pipe: a reader that goes away (`| head`) ends the
/// process quietly with status 141 (as SIGPIPE would) instead of a trap.
enum Terminal {
    static func out(_ text: String) { write(text, to: .standardOutput) }
    static func err(_ text: String) { write(text, to: .standardError) }

    private static func write(_ text: String, to handle: FileHandle) {
        signal(SIGPIPE, SIG_IGN)
        do {
            try handle.write(contentsOf: Data(text.utf8))
        } catch {
            SessionJournal.active?.commandEnded(141)
            Foundation.exit(141)
        }
    }
}
