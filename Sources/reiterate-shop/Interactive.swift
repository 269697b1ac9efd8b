import ArgumentParser
import Foundation
import ShopAPI
import ShopCache
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

    /// Which environment a base URL looks like: loopback is the local stand-in, a host naming staging is
    /// staging, anything else is treated as production — read-only unless a later release's config says otherwise.
    static func environment(for baseURL: String) -> (name: String, readOnly: Bool) {
        let host = URL(string: baseURL)?.host?.lowercased() ?? ""
        if ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) || host.hasPrefix("127.") { return ("local", false) }
        if host.contains("staging") || host.contains("stg") { return ("staging", false) }
        return ("production", true)
    }

    func run() async throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            FileHandle.standardError.write(Data("error: the interactive UI needs a terminal; for scripts use `reiterate-shop print`\n".utf8))
            throw ExitCode(64)
        }
        let env = Self.environment(for: connection.resolvedBaseURL)
        let context = ShopContext(
            environment: env.name, baseURL: connection.resolvedBaseURL, user: connection.resolvedUser,
            readOnly: readOnly || env.readOnly
        )
        let status: Int32
        do {
            let cache = CacheStore(directory: connection.resolvedCacheDir, logger: try connection.makeLogger(label: "reiterate.cache"))
            status = try await connection.withClient { client in
                let store = await AppStore(state: AppState(context: context), service: LiveShopService(client: client), cache: cache)
                return await TerminalApp(store: store).run()
            }
        } catch {
            throw fail(error)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
