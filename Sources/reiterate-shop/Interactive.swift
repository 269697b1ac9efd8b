import ArgumentParser
import Foundation
import Logging
import ShopAPI
import ShopCache
import ShopSettings
import ShopTUI
import ShopViewModels

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

    func run() async throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            Terminal.err("error: the interactive UI needs a terminal; for scripts use `reiterate-shop print`\n")
            throw ExitCode(64)
        }
        let settings: ResolvedSettings
        let logger: Logger
        let keymap: Keymap
        let mouse: Bool
        do {
            let config = try connection.loadConfig()
            settings = try connection.settings(config: config, readOnlyFlag: readOnly)
            logger = try connection.makeLogger(label: "reiterate")
            do {
                keymap = try KeymapLoader.keymap(config)
            } catch {
                throw CLIError(message: error.description, exitCode: .config)
            }
            mouse = !noMouse && config?.mouse != false
        } catch {
            throw fail(error)
        }
        let status: Int32
        do {
            let context = settings.shopContext
            let cache = CacheStore(directory: connection.resolvedCacheDir, logger: logger)
            status = try await connection.withClient(settings, logger: logger) { client in
                let store = await AppStore(state: AppState(context: context), service: LiveShopService(client: client), cache: cache)
                // R and e: reports under $XDG_STATE_HOME/reiterate-shop/reports, HAR files at --har or beside them.
                let state = EvidenceFiles.stateDirectory(environment: ProcessInfo.processInfo.environment)
                await MainActor.run {
                    store.evidence = EvidenceFiles(reportsDirectory: state + "/reports", harFile: connection.harFile, harDirectory: state + "/har")
                }
                // The cache is read here, before curses starts: the first frame shows it at once.
                let cached = await store.cachedShopNow()
                let backend = await CursesTerminal(mouse: mouse)
                return await TerminalApp(store: store, keymap: keymap, backend: backend).run(cached: cached)
            }
        } catch {
            throw fail(error, tokenVariable: settings.tokenEnv)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
