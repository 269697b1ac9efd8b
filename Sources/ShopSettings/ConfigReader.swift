import ShopAPI
import Foundation
internal import TOMLKit

/// Reads a config file: TOMLKit parses the TOML, this checks what the settings mean. Every mistake is a
/// `ConfigError` in plain words, with the line from TOMLKit (syntax) or from `TOMLSourceMap` (meaning).
enum ConfigReader {
    static func read(_ text: String, path: String) throws(ConfigError) -> ConfigFile {
        // TOMLKit hands the text to C as a C string: a NUL would silently cut the file short.
        if let nul = text.unicodeScalars.firstIndex(of: "\0") {
            let line = text.unicodeScalars[..<nul].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
            throw ConfigError(path: path, line: line, message: "the file contains a NUL character")
        }
        let map = TOMLSourceMap(text)
        // toml++ asserts (aborting the app) on a few mistakes instead of reporting them; found by
        // `make fuzz`, they are refused here first.
        if let line = map.badHeaderLine {
            throw ConfigError(path: path, line: line,
                              message: "a table name is letters, digits, _ and - (others go in quotes: [\"name\"])")
        }
        if let line = map.braceInArrayLine {
            throw ConfigError(path: path, line: line, message: "a “}” inside a list: a list is [value, value, …] and ends with ]")
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch {
            throw syntaxError(error, text: text, path: path)
        }
        var reader = Reader(path: path, map: map)
        return try reader.read(root)
    }

    /// A TOMLKit parse error as `file:line: [key: ]message`, its wording tidied (no library terms).
    static func syntaxError(_ error: any Error, text: String, path: String) -> ConfigError {
        guard let parseError = error as? TOMLParseError else {
            return ConfigError(path: path, message: "not a valid TOML file")
        }
        let line = parseError.source.begin.line > 0 ? parseError.source.begin.line : nil
        let sourceLine = line.flatMap { n in text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst(n - 1).first }
        // One line: toml++ quotes what it saw, a line break included (`saw 'fal⏎'`, found by `make fuzz`).
        let message = plainWords(parseError.description, sourceLine: sourceLine.map(String.init))
            .split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).joined(separator: " ")
        // "set twice" already quotes the key (or table) it is about.
        let key = message.hasPrefix("set twice") ? nil : sourceLine.flatMap(keyOnLine)
        return ConfigError(path: path, line: line, key: key, message: message)
    }

    /// The key of a `key = value` line (first segment of a dotted key stays with the rest), or nil.
    static func keyOnLine(_ line: Substring) -> String? {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        guard let eq = trimmed.firstIndex(of: "="), !trimmed.hasPrefix("[") else { return nil }
        let key = trimmed[..<eq].trimmingCharacters(in: .whitespaces)
        guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) else { return nil }
        return key
    }

    /// toml++ says e.g. "Error while parsing key-value pair: cannot redefine existing string 'user'".
    /// Keep the reason, name what was being read in plain words, and lead with a hint for the usual mistakes.
    static func plainWords(_ raw: String, sourceLine: String?) -> String {
        var reason = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        var context: String?
        let preamble = "Error while parsing "
        if reason.hasPrefix(preamble), let colon = reason.range(of: ": ") {
            context = String(reason[reason.index(reason.startIndex, offsetBy: preamble.count)..<colon.lowerBound])
            reason = String(reason[colon.upperBound...])
        }
        // Nothing from the library's insides: no source paths, namespaces or type names.
        if ["toml::", "TOML_", ".hpp", ".cpp", "toml++", "TOMLKit", "Error("].contains(where: { reason.contains($0) || (context ?? "").contains($0) }) {
            reason = "this is not valid TOML"
            context = nil
        }
        if let scope = context, !scope.isEmpty, scope.allSatisfy({ $0.isLetter || $0 == " " || $0 == "-" }) {
            let article = "aeio".contains(scope.first?.lowercased().first ?? "x") ? "an" : "a"
            reason += " (while reading \(article) \(scope))"
        }
        let lower = reason.lowercased()
        let quotes = sourceLine.map { line in (line.filter { $0 == "\"" }.count, line.filter { $0 == "'" }.count) } ?? (0, 0)
        if lower.contains("redefine") {
            return "set twice: " + reason
        }
        if context == "table header" || context == "array-of-tables header" {
            return "a table header is [name] or [name.sub]: " + reason
        }
        if (lower.contains("end-of-file") || lower.contains("control character")) && (quotes.0 % 2 == 1 || quotes.1 % 2 == 1) {
            return "unterminated string: " + reason
        }
        if let sourceLine, let eq = sourceLine.firstIndex(of: "=") {
            let token = sourceLine[sourceLine.index(after: eq)...].drop { $0 == " " || $0 == "\t" }
                .prefix { !" \t,#]}\r".contains($0) }
            if let first = token.first, first.isLetter, !["true", "false", "inf", "nan"].contains(String(token)) {
                return "cannot read the value (strings need quotes): " + reason
            }
        }
        return reason
    }
}

private struct Reader {
    let path: String
    let map: TOMLSourceMap

    /// `file:line: key: message`, the line being where `keyPath` is written (nil when it cannot be found).
    func error(at keyPath: [String], key: String?, _ message: String) -> ConfigError {
        ConfigError(path: path, line: map.line(of: keyPath), key: key, message: message)
    }

    /// Keys of `table` (at `prefix`) in the order the file writes them; TOMLKit returns them sorted.
    func inFileOrder(_ table: TOMLTable, under prefix: [String]) -> [(key: String, value: any TOMLValueConvertible)] {
        table.keys.sorted { (map.order(of: prefix + [$0]), $0) < (map.order(of: prefix + [$1]), $1) }
            .compactMap { key in table[key].map { (key, $0) } }
    }

    /// "a string", "a table"... for "expected X, not Y".
    /// `HOST:PORT` (an IPv6 host in brackets) with a port from 0 to 65535.
    static func isListenAddress(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else { return false }
        let host = text[..<colon]
        if host.hasPrefix("[") { return host.hasSuffix("]") && host.count > 2 }
        return !host.isEmpty && !host.contains(":") && host.allSatisfy { $0.isASCII && !$0.isWhitespace && !"/@?#".contains($0) }
    }

    static func kind(_ value: any TOMLValueConvertible) -> String {
        switch value.type {
        case .string: return "a string"
        case .int: return "a whole number"
        case .double: return "a number"
        case .bool: return value.bool == true ? "true" : "false"
        case .table: return "a table"
        case .array: return "a list [...]"
        case .date: return "a date"
        case .time: return "a time of day"
        case .dateTime: return "a date and time"
        }
    }

    mutating func read(_ root: TOMLTable) throws(ConfigError) -> ConfigFile {
        var file = ConfigFile(path: path, environments: [:], defaultEnvironment: nil)
        for (key, value) in inFileOrder(root, under: []) {
            switch key {
            case "default_environment":
                guard let name = value.string else {
                    throw error(at: [key], key: key, "expected a string (an environment name), not \(Self.kind(value))")
                }
                file.defaultEnvironment = name
            case "mouse":
                guard let on = value.bool else {
                    throw error(at: [key], key: key, "expected true or false, not \(Self.kind(value))")
                }
                file.mouse = on
            case "theme":
                guard let name = value.string, let theme = ThemeSetting(name: name) else {
                    throw error(at: [key], key: key, "expected one of \(ThemeSetting.names.map { "\"\($0)\"" }.joined(separator: ", ")), not \(value.string.map { "\"\($0)\"" } ?? Self.kind(value))")
                }
                file.theme = theme
            case "environments":
                guard let table = value.table else {
                    throw error(at: [key], key: key, "expected tables [environments.NAME], not \(Self.kind(value))")
                }
                for (name, body) in inFileOrder(table, under: [key]) {
                    file.environments[name] = try environment(name, body)
                }
            case "keys":
                guard let table = value.table else {
                    throw error(at: [key], key: key, "expected a table [keys] of action = \"key\" or [\"key\", ...], not \(Self.kind(value))")
                }
                for (action, keys) in inFileOrder(table, under: [key]) {
                    file.keyBindings.append(try binding(action, keys))
                }
            case "compare":
                guard let table = value.table else {
                    throw error(at: [key], key: key, "expected a table [compare] with ignore = [\"packs[].cheer_total\", ...], not \(Self.kind(value))")
                }
                for (name, body) in inFileOrder(table, under: [key]) {
                    guard name == "ignore" else { throw error(at: [key, name], key: name, "unknown key in [compare]; keys: ignore") }
                    var rules: [String] = []
                    guard let list = body.array else {
                        throw error(at: [key, name], key: name, "expected a list of paths in quotes, e.g. ignore = [\"packs[].cheer_total\"]")
                    }
                    for item in list {
                        guard let rule = item.string else {
                            throw error(at: [key, name], key: name, "expected paths in quotes, e.g. ignore = [\"packs[].cheer_total\"]; the list holds \(Self.kind(item))")
                        }
                        rules.append(rule)
                    }
                    file.compareIgnore = rules
                }
            default:
                if map.isHeader([key]) {
                    throw error(at: [key], key: nil, "unknown table [\(key)]; environments are [environments.NAME], key bindings [keys], comparisons [compare]")
                }
                throw error(at: [key], key: key, "unknown top-level key (keys go under [environments.NAME])")
            }
        }
        if let chosen = file.defaultEnvironment, file.environments[chosen] == nil, chosen != "local" {
            throw error(at: ["default_environment"], key: "default_environment", "no [environments.\(chosen)] in this file")
        }
        return file
    }

    func environment(_ name: String, _ body: any TOMLValueConvertible) throws(ConfigError) -> EnvironmentConfig {
        let here = ["environments", name]
        guard let table = body.table else {
            throw error(at: here, key: name, "keys go under [environments.NAME], not directly in [environments]")
        }
        var env = EnvironmentConfig(name: name)
        for (key, value) in inFileOrder(table, under: here) {
            let at = here + [key]
            func string() throws(ConfigError) -> String {
                guard let s = value.string else { throw error(at: at, key: key, "expected a non-empty string in quotes, not \(Self.kind(value))") }
                guard !s.isEmpty else { throw error(at: at, key: key, "expected a non-empty string in quotes") }
                return s
            }
            /// One of a setting's named values (`"bell", "osc9" or "none"`), as the message lists them.
            func oneOf<Value: RawRepresentable & CaseIterable>(_: Value.Type) throws(ConfigError) -> Value where Value.RawValue == String {
                guard let raw = value.string, let chosen = Value(rawValue: raw) else {
                    let names = Value.allCases.map { "\"\($0.rawValue)\"" }
                    throw error(at: at, key: key, "expected " + names.dropLast().joined(separator: ", ") + " or " + (names.last ?? ""))
                }
                return chosen
            }
            switch key {
            case "base_url":
                let url = try string()
                guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
                    throw error(at: at, key: key, "expected http(s)://host[:port][/path], not '\(url)'")
                }
                env.baseURL = url
            case "user": env.user = try string()
            case "tier": env.tier = try oneOf(Tier.self)
            case "read_only":
                guard let b = value.bool else { throw error(at: at, key: key, "expected true or false, not \(Self.kind(value))") }
                env.readOnly = b
            case "token_env", "refresh_token_env":
                let variable = try string()
                guard variable.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                    throw error(at: at, key: key, "expected the NAME of an environment variable (the token itself never goes in this file)")
                }
                if key == "token_env" { env.tokenEnv = variable } else { env.refreshTokenEnv = variable }
            case "ca_file": env.caFile = try string()
            case "contract": env.contract = try string()
            case "watch":
                guard let b = value.bool else { throw error(at: at, key: key, "expected true or false, not \(Self.kind(value))") }
                env.watch = b
            case "watch_interval":
                guard let seconds = value.int.map(Double.init) ?? value.double else {
                    throw error(at: at, key: key, "expected a number of seconds, not \(Self.kind(value))")
                }
                guard seconds >= 0.5, seconds <= 3600 else { throw error(at: at, key: key, "expected seconds in [0.5, 3600]") }
                env.watchInterval = seconds
            case "bundles":
                guard let list = value.array, !list.isEmpty else {
                    throw error(at: at, key: key, "expected a list of bundle sizes, e.g. [50, 100, 200], or their identifiers (com.reiterate.cheer.50)")
                }
                var sizes: [Int] = []
                var identifiers: [String] = []
                for item in list {
                    let size = item.int ?? item.string.flatMap { $0.split(separator: ".").last.flatMap { Int($0) } }
                    guard let size, size > 0, size <= 1_000_000 else {
                        throw error(at: at, key: key, "expected whole numbers of cheer from 1 to 1,000,000, or identifiers ending in one (com.reiterate.cheer.50)")
                    }
                    sizes.append(size)
                    identifiers.append(item.string ?? ResolvedSettings.standInIdentifier(size))
                }
                env.bundles = sizes
                env.bundleIdentifiers = identifiers
            case "notify": env.notify = try oneOf(NotifyStyle.self)
            case "proxy_listen":
                let listen = try string()
                guard Self.isListenAddress(listen) else { throw error(at: at, key: key, "expected HOST:PORT, e.g. \"127.0.0.1:8877\" or \"0.0.0.0:8877\", not '\(listen)'") }
                env.proxyListen = listen
            case "proxy_hosts":
                guard let list = value.array else { throw error(at: at, key: key, "expected a list of host names, e.g. [\"cdn.staging.example.com\"], not \(Self.kind(value))") }
                var hosts: [String] = []
                for item in list {
                    guard let host = item.string, !host.isEmpty, host.allSatisfy({ $0.isASCII && !$0.isWhitespace && !"/@?#".contains($0) }) else {
                        throw error(at: at, key: key, "expected host names or host:port in quotes (no scheme, no path)")
                    }
                    hosts.append(host)
                }
                env.proxyHosts = hosts
            case "appstore":
                env.appStore = try appStore(name, value)
            case "proxy_start":
                guard let b = value.bool else { throw error(at: at, key: key, "expected true or false, not \(Self.kind(value))") }
                env.proxyStart = b
            case "proxy":
                guard let proxy = value.string else { throw error(at: at, key: key, "expected a string in quotes, not \(Self.kind(value))") }
                guard proxy.trimmingCharacters(in: .whitespaces).isEmpty || ProxySetting.parse(proxy) != nil else {
                    throw error(at: at, key: key, "expected http://host:port (or \"\" for no proxy); https:// and socks proxies are not supported")
                }
                env.proxy = proxy
            case "timeout":
                let seconds: Double
                if let i = value.int {
                    seconds = Double(i)
                } else if let d = value.double {
                    seconds = d
                } else {
                    throw error(at: at, key: key, "expected a number of seconds, not \(Self.kind(value))")
                }
                guard seconds > 0, seconds <= 600 else { throw error(at: at, key: key, "expected seconds in (0, 600]") }
                env.timeout = seconds
            case "users", "explore_users":
                guard let list = value.array else {
                    throw error(at: at, key: key, "expected a list of user names, e.g. [\"qa-alice\", \"qa-whale\"], not \(Self.kind(value))")
                }
                var users: [String] = []
                for item in list {
                    guard let user = item.string, !user.isEmpty else {
                        throw error(at: at, key: key, "expected non-empty user names in quotes, not \(item.string == nil ? Self.kind(item) : "an empty string")")
                    }
                    users.append(user)
                }
                if key == "users" { env.users = users } else { env.exploreUsers = users }
            default:
                if map.isHeader(at) {
                    throw error(at: at, key: nil, "unknown table [environments.\(name).\(key)]; an environment's settings are keys: "
                        + ConfigFile.keys.joined(separator: ", "))
                }
                throw error(at: at, key: key, "unknown key in [environments.\(name)]; keys: " + ConfigFile.keys.joined(separator: ", "))
            }
        }
        return env
    }

    /// `[environments.NAME.appstore]`: every key a non-empty string; the four that name the key required.
    func appStore(_ name: String, _ value: any TOMLValueConvertible) throws(ConfigError) -> AppStoreSettings {
        let here = ["environments", name, "appstore"]
        guard let table = value.table else {
            throw error(at: here, key: "appstore", "expected a table [environments.\(name).appstore] with " + AppStoreSettings.keys.joined(separator: ", "))
        }
        var found: [String: String] = [:]
        for (key, item) in inFileOrder(table, under: here) {
            let at = here + [key]
            guard AppStoreSettings.keys.contains(key) else {
                throw error(at: at, key: key, "unknown key in [environments.\(name).appstore]; keys: " + AppStoreSettings.keys.joined(separator: ", "))
            }
            guard let text = item.string, !text.isEmpty else { throw error(at: at, key: key, "expected a non-empty string in quotes, not \(Self.kind(item))") }
            if key == "url" {
                guard let parsed = URL(string: text), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host != nil else {
                    throw error(at: at, key: key, "expected http(s)://host[:port], not '\(text)'")
                }
            }
            if key == "transaction", !(1...20).contains(text.count) || !text.allSatisfy({ $0.isASCII && $0.isNumber }) {
                throw error(at: at, key: key, "expected an App Store transaction id in quotes (1 to 20 digits), not '\(text)'")
            }
            if key == "key_file", text.contains("BEGIN") {
                throw error(at: at, key: key, "expected the path of the .p8 file; the key itself never goes in this file")
            }
            found[key] = text
        }
        let missing = AppStoreSettings.required.filter { found[$0] == nil }
        guard let keyFile = found["key_file"], let keyID = found["key_id"], let issuerID = found["issuer_id"], let bundleID = found["bundle_id"] else {
            throw error(at: here, key: nil, "[environments.\(name).appstore] lacks " + missing.joined(separator: ", "))
        }
        var settings = AppStoreSettings(url: found["url"] ?? AppStoreSettings.sandboxURL, keyFile: keyFile, keyID: keyID, issuerID: issuerID,
                                        bundleID: bundleID, rootCA: found["root_ca"])
        settings.transaction = found["transaction"]
        return settings
    }

    /// `action = "key"` or `action = ["key", ...]`; the names themselves are checked by whoever binds them.
    func binding(_ action: String, _ value: any TOMLValueConvertible) throws(ConfigError) -> KeyBindingConfig {
        let at = ["keys", action]
        let shape = "expected a key in quotes or a list of keys, e.g. \(action) = \"ctrl-q\" or [\"x\", \"ctrl-q\"]"
        var keys: [String] = []
        if let key = value.string {
            guard !key.isEmpty else { throw error(at: at, key: action, "expected a key name, not an empty string") }
            keys = [key]
        } else if let list = value.array {
            guard !list.isEmpty else { throw error(at: at, key: action, "expected at least one key in the list") }
            for item in list {
                guard let key = item.string else { throw error(at: at, key: action, "\(shape); the list holds \(Self.kind(item))") }
                guard !key.isEmpty else { throw error(at: at, key: action, "expected key names, not an empty string") }
                keys.append(key)
            }
        } else {
            throw error(at: at, key: action, "\(shape), not \(Self.kind(value))")
        }
        return KeyBindingConfig(action: action, keys: keys, line: map.line(of: at))
    }
}
