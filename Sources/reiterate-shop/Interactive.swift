import ArgumentParser
import Foundation
import Logging
import ShopAPI
import ShopProbes
import ShopProxy
import ShopCache
import ShopSettings
import ShopTUI
import ShopViewModels
import Synchronization
import TerminalText

/// Bare `reiterate-shop [options]`: the interactive TUI.
struct Interactive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tui",
        abstract: "The interactive terminal UI (the default: `reiterate-shop [options]`).",
        shouldDisplay: false
    )

    @OptionGroup var connection: ConnectionOptions
    @Flag(name: .customLong("read-only"), help: "Refuse spending and buying.") var readOnly = false
    @Flag(name: .customLong("no-mouse"), help: "Leave the mouse to the terminal (its own text selection); also `mouse = false` in the config.")
    var noMouse = false
    @Flag(help: "Watch the user from the start (w toggles it; also `watch = true` per environment).") var watch = false
    @Option(name: .customLong("proxy"), help: ArgumentHelp("Run the app's proxy beside the UI: its exchanges join the Requests tab, checked as the tool's own (`--proxy` alone: proxy_listen, else 127.0.0.1:8877; also `proxy_start = true`).", valueName: "host:port"))
    var proxy: String?
    @Option(name: .customLong("fault"), help: ArgumentHelp("With --proxy: a fault in the app's traffic from the start, KIND[,key=value...] (`reiterate-shop proxy --help`); F adds more.", valueName: "spec"))
    var faults: [String] = []
    @Option(name: .customLong("theme"), help: "Palette: auto (the terminal's background), dark or light, each also -colorblind (env REITERATE_THEME; `theme =` in the config; NO_COLOR turns colours off).")
    var theme: String?

    func validate() throws { _ = try ServerFaults.parse(faults) }

    /// The palette: --theme, then REITERATE_THEME, then `theme =` in the config, then auto; and where it came from.
    static func theme(flag: String?, environment: [String: String], config: ConfigFile?) throws -> (ThemeSetting, source: String) {
        for (value, source) in [(flag, "--theme"), (environment["REITERATE_THEME"], "REITERATE_THEME")] {
            guard let value else { continue }
            guard let setting = ThemeSetting(name: value) else {
                throw CLIError(message: "\(source) \"\(Sanitizer.line(value))\" is not a theme; themes: \(ThemeSetting.names.joined(separator: ", "))", exitCode: .usage)
            }
            return (setting, source)
        }
        if let setting = config?.theme { return (setting, "config file") }
        return (.standard, "default")
    }

    static func request(_ setting: ThemeSetting) -> ThemeRequest {
        switch setting.background {
        case .auto: .auto(colorBlindSafe: setting.colorBlindSafe)
        case .dark: .fixed(Theme(.dark, colorBlindSafe: setting.colorBlindSafe))
        case .light: .fixed(Theme(.light, colorBlindSafe: setting.colorBlindSafe))
        }
    }

    func run() async throws {
        StartupTrace.mark("parsed")
        MallocArenas.limit(to: 1)
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            Terminal.err("error: the interactive UI needs a terminal; for scripts use `reiterate-shop print`\n")
            throw ExitCode(64)
        }
        let settings: ResolvedSettings
        let logger: Logger
        let keymap: Keymap
        let mouse: Bool
        let themeRequest: ThemeRequest
        let config: ConfigFile?
        do {
            config = try connection.loadConfig()
            settings = try connection.settings(config: config, readOnlyFlag: readOnly, watch: watch)
            logger = try connection.makeLogger(label: "reiterate")
            do {
                keymap = try KeymapLoader.keymap(config)
            } catch {
                throw CLIError(message: error.description, exitCode: .config)
            }
            mouse = !noMouse && config?.mouse != false
            themeRequest = Self.request(try Self.theme(flag: theme, environment: ProcessInfo.processInfo.environment, config: config).0)
        } catch {
            throw fail(error)
        }
        StartupTrace.mark("settings")
        let status: Int32
        do {
            let context = settings.shopContext
            let cache = CacheStore(directory: connection.resolvedCacheDir, logger: logger)
            // P: the pins, one store: the client checks every answer against them, the store changes them.
            let pins = connection.pins(settings)
            status = try await connection.withClient(settings, logger: logger, keepsSession: true, pins: pins) { client in
                StartupTrace.mark("client")
                // R and e: reports under $XDG_STATE_HOME/reiterate-shop/reports, HAR files at --har or beside them.
                let state = EvidenceFiles.stateDirectory(environment: ProcessInfo.processInfo.environment)
                // D and S: comparisons and snapshots with clients of their own.
                let comparer = TUIComparer(connection: connection, config: config, logger: logger, settings: settings, stateDirectory: state)
                var initial = AppState(context: context, watch: settings.watchState, compareTargets: comparer.targets(), appStore: settings.appStore != nil)
                let explorer = ExploreCommand.explorer(settings, client: client, connection: connection, stateDirectory: state)
                initial.explore.plan = explorer?.plan
                let store = await AppStore(state: initial, service: LiveShopService(client: client), cache: cache)
                let pinned = await pins?.requests ?? []
                let unreadable = pins?.unreadable
                await MainActor.run {
                    store.evidence = EvidenceFiles(reportsDirectory: state + "/reports", harFile: connection.harFile, harDirectory: state + "/har")
                    store.pins = pins
                    store.comparer = comparer
                    store.explorer = explorer
                    if settings.appStore != nil { store.ledgerReader = TUILedgerReader(settings: settings) }
                    store.sessionKeeper = TUISessionKeeper.make(settings, environment: ProcessInfo.processInfo.environment)
                    store.send(.pinsChanged(pinned, unreadable.map { .failed("The pins cannot be read (\($0)); none are checked.") }))
                }
                // The cached balance and packs are read here, before curses starts: the first frame (the
                // Shop tab) shows them at once; the first history page is read right after it.
                StartupTrace.mark("store")
                let cached = await store.cachedShopNow(firstPage: false)
                StartupTrace.mark("cache")
                // The app's proxy: its exchanges go through the client's own pipeline (checks, pins, the log).
                let appProxy = proxy != nil || settings.proxyStart
                    ? await AppProxy.start(settings: settings, listen: proxy == AppProxy.defaultAddress ? nil : proxy, faults: try ServerFaults.parse(faults),
                                           pipeline: client.pipeline, store: store) : nil
                await store.followSession()
                let backend = await CursesTerminal(mouse: mouse, theme: themeRequest)
                let status = await TerminalApp(store: store, keymap: keymap, backend: backend).run(cached: cached)
                await appProxy?.stop()
                // How `auto` decided, for a log that asks why the palette looked as it did.
                let (palette, source) = await (backend.theme.map(String.init(describing:)) ?? "none", backend.themeSource)
                logger.info("theme: \(palette) (\(source.description))")
                return status
            }
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// The app's proxy inside a TUI session: started before the first frame, told to the store, stopped at the end.
struct AppProxy {
    /// What a bare `--proxy` becomes (`ReiterateShop.main`): the environment's proxy_listen, else the default.
    static let defaultAddress = "default"
    let server: ProxyServer
    let transport: AsyncHTTPTransport

    static func start(settings: ResolvedSettings, listen: String?, faults: [ProxyFault], pipeline: ExchangePipeline, store: AppStore) async -> AppProxy? {
        do {
            let setup = try ProxySetup.make(settings: settings, listen: listen, environment: ProcessInfo.processInfo.environment, faults: faults)
            let server: ProxyServer
            do {
                let counter = SeenCounter(store: store)
                // The app's writes, in order, to the watch (which pairs them with its reads).
                let feed = await AppWriteFeed(store: store)
                server = try await ProxyServer.start(configuration: setup.configuration, ca: setup.ca, transport: setup.transport, pipeline: pipeline,
                                                     events: { event in
                                                         if case .exchange = event { counter.one() }
                                                         feed.take(event)
                                                     })
            } catch {
                try? await setup.transport.shutdown()
                throw error
            }
            let warning = setup.uncovered.isEmpty ? nil
                : "its CA may not sign for \(setup.uncovered.joined(separator: ", ")): run `reiterate-shop proxy ca --renew` and install the new CA"
            let status = ProxyStatus(address: server.address.description, intercepting: setup.configuration.interceptedHosts.map(\.description), warning: warning)
            await MainActor.run {
                store.proxyFaults = ServerFaults(faults: server.faults)
                store.send(.proxy(.listening(status)))
            }
            return AppProxy(server: server, transport: setup.transport)
        } catch {
            let words = switch error {
            case let error as CLIError: error.message
            case let error as ProxyStartError: error.description
            default: "an unexpected internal failure"
            }
            await MainActor.run { store.send(.proxy(.failed(words))) }
            return nil
        }
    }

    func stop() async {
        await server.stop()
        try? await transport.shutdown()
    }
}
