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
        Terminal.out(markdown ? Self.markdown(keymap) : Self.text(keymap))
    }

    static func text(_ keymap: Keymap) -> String {
        let rows = keymap.bindings.map { b in
            (b.action.rawValue, b.keys.map(\.configName).joined(separator: " "), Keymap.whereText(b), b.help)
        }
        let w0 = max(6, rows.map(\.0.count).max() ?? 0), w1 = max(4, rows.map(\.1.count).max() ?? 0), w2 = max(5, rows.map(\.2.count).max() ?? 0)
        func pad(_ s: String, _ w: Int) -> String { s + String(repeating: " ", count: max(0, w - s.count)) }
        var out = "\(pad("ACTION", w0))  \(pad("KEYS", w1))  \(pad("WHERE", w2))  HELP\n"
        for r in rows { out += "\(pad(r.0, w0))  \(pad(r.1, w1))  \(pad(r.2, w2))  \(r.3)\n" }
        return out
    }

    static func markdown(_ keymap: Keymap) -> String {
        var out = "| keys | action | what it does | where |\n|---|---|---|---|\n"
        for b in keymap.bindings {
            out += "| \(b.keys.map { "`\($0.display)`" }.joined(separator: " ")) | `\(b.action.rawValue)` | \(b.help) | \(Keymap.whereText(b)) |\n"
        }
        return out
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
