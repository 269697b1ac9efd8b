import ArgumentParser
import Foundation
import ShopCompare
import ShopProbes
import ShopSettings
import ShopViewModels
import TerminalText

/// `reiterate-shop config check`: validates the config file and prints the resolved settings.
struct Config: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check the config file ($XDG_CONFIG_HOME/reiterate-shop/config.toml).",
        subcommands: [Check.self]
    )

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Validate the config file and print the resolved settings (tokens masked).",
            discussion: "Exit status: 0 valid; 78 a mistake, named with its file, line and key."
        )

        @OptionGroup var connection: ConnectionOptions

        func run() async throws {
            let env = ProcessInfo.processInfo.environment
            let path = ConfigFile.defaultPath(environment: env)
            let file: ConfigFile?
            do {
                file = try ConfigFile.load(path: path)
            } catch {
                throw fail(CLIError(message: error.description, exitCode: .config))
            }
            do {
                _ = try KeymapLoader.keymap(file)
            } catch {
                throw fail(CLIError(message: error.description, exitCode: .config))
            }
            // [compare] ignore: each rule must be a path (comparisons and pins use them).
            do {
                _ = try IgnoreRules(file?.compareIgnore ?? [])
            } catch {
                throw fail(CLIError(message: "\(path): [compare] \(error)", exitCode: .config))
            }
            var out = file == nil ? "config file: \(path) (none: built-in defaults)\n"
                : "config file: \(path) — valid, \(file?.environments.count ?? 0) environment(s)\n"
            let names = ["local"] + (file?.environments.keys.sorted().filter { $0 != "local" } ?? [])
            let selected = (try? connection.settings(config: file))?.environment
            for name in names {
                var options = connection
                options.envName = name
                let s: ResolvedSettings
                do { s = try options.settings(config: file) } catch { throw fail(error) }
                out += "\n[\(name)]\(name == selected ? "  (selected)" : "")\n"
                out += "  base_url   \(Sanitizer.line(s.baseURL))   (\(s.sources["base_url"] ?? ""))\n"
                out += "  user       \(Sanitizer.line(s.user))   (\(s.sources["user"] ?? ""))\n"
                out += "  tier       \(s.tier)   (\(s.sources["tier"] == "default" ? "default for an environment named \(Sanitizer.line(name))" : s.sources["tier"] ?? ""))\n"
                out += "  read_only  \(s.readOnly)   (\(s.sources["read_only"] ?? ""))\n"
                out += "  token      $\(s.tokenEnv): \(ResolvedSettings.mask(env[s.tokenEnv]))\n"
                out += "  refresh    $\(s.refreshTokenEnv): \(ResolvedSettings.mask(env[s.refreshTokenEnv]))\n"
                if let ca = s.caFile {
                    out += "  ca_file    \(Sanitizer.line(ca)) (\(FileManager.default.isReadableFile(atPath: ca) ? "readable" : "MISSING or unreadable"))\n"
                }
                out += "  timeout    \(s.timeout) s\n"
                // The proxy in effect, credentials masked (`***@`), and why.
                out += "  proxy      \(s.proxy.map { Sanitizer.line($0.shown) } ?? "none")   (\(Sanitizer.line(s.sources["proxy"] ?? "")))\n"
                out += s.checkLines(environment: env).map { $0 + "\n" }.joined()
            }
            let theme: ThemeSetting, themeSource: String
            do { (theme, themeSource) = try Interactive.theme(flag: nil, environment: env, config: file) } catch { throw fail(error) }
            out += "\ntheme        \(theme)   (\(themeSource))\(env["NO_COLOR"].map { $0.isEmpty ? "" : "; NO_COLOR is set: no colours" } ?? "")\n"
            if let mouse = file?.mouse { out += "mouse        \(mouse)   (config file)\n" }
            if let keys = file?.keyBindings, !keys.isEmpty {
                out += "\n[keys]\n" + keys.map { "  \(Sanitizer.line($0.action)) = \($0.keys.map(Sanitizer.line).joined(separator: ", "))\n" }.joined()
            }
            if let rules = file?.compareIgnore, !rules.isEmpty {
                out += "\n[compare]\n  ignore     \(rules.map(Sanitizer.line).joined(separator: ", "))\n"
            }
            Terminal.out(out)
        }
    }
}
