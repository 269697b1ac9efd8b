import ArgumentParser
import Foundation
import ShopSettings
import ShopViewModels

/// `reiterate-shop keys`: the effective keymap (the standard keys with the config file's `[keys]` applied).
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Print the effective key bindings: action, keys, where it applies, help.",
        discussion: """
            Rebind keys in the config file's [keys] table, by action name:
              [keys]
              quit = ["x", "ctrl-q"]
              refresh = "f5"
            Exit status: 0; 78 when the [keys] table has a mistake (named with its file and line).
            """
    )

    @Flag(help: "Print the table as Markdown (the README's keys table is this output).") var markdown = false

    func run() async throws {
        let keymap: Keymap
        do {
            keymap = try KeymapLoader.load(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw fail(CLIError(message: error.description, exitCode: .config))
        }
        Terminal.out(markdown ? keymap.markdownTable : keymap.textTable)
    }
}

/// The keymap in effect: `Keymap.standard` with the config file's `[keys]` applied.
enum KeymapLoader {
    static func load(environment: [String: String]) throws(ConfigError) -> Keymap {
        try keymap(ConfigFile.load(path: ConfigFile.defaultPath(environment: environment)))
    }

    static func keymap(_ config: ConfigFile?) throws(ConfigError) -> Keymap {
        guard let config, !config.keyBindings.isEmpty else { return .standard }
        do {
            return try Keymap.standard.rebound(with: config.keyBindings.map { (action: $0.action, keys: $0.keys, line: $0.line) })
        } catch {
            throw ConfigError(path: config.path, line: error.line, key: "keys.\(error.action)", message: error.message)
        }
    }
}
