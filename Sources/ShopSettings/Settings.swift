import ShopAPI
import Foundation

/// One named environment from the config file (or the built-in `local`).
public struct EnvironmentConfig: Sendable, Equatable {
    public var name: String
    public var baseURL: String?
    public var user: String?
    public var readOnly: Bool?
    /// `tier = "local" | "staging" | "production"`: what kind of environment it is (the badge).
    public var tier: Tier?
    /// The name of the environment variable that holds this environment's access token.
    public var tokenEnv: String?
    public var refreshTokenEnv: String?
    /// A PEM bundle to trust for this environment's TLS.
    public var caFile: String?
    public var timeout: Double?
    /// The users this environment offers to switch between (`users = ["qa-alice", "qa-whale"]`).
    public var users: [String]?
    /// `explore_users = ["qa-explore"]`: the only users `explore` writes as (an edge case may spend a whole
    /// balance: a dedicated user keeps that out of other testers' way).
    public var exploreUsers: [String]?
    /// `proxy = "http://host:port"` (`""`: no proxy, whatever the environment variables say).
    public var proxy: String?
    /// `contract = "path"`: the OpenAPI document responses are checked against (another version than
    /// the built-in one).
    public var contract: String?
    /// `watch = true`: the TUI watches the user from the start.
    public var watch: Bool?
    /// `watch_interval = 2`: seconds between the watch's reads.
    public var watchInterval: Double?
    /// `bundles = [50, 100, …]`: the cheer bundle sizes this environment sells (a rise of the balance
    /// the watch sees must be a sum of them).
    public var bundles: [Int]?
    /// The App Store product id of each of `bundles`, in the same order: as written when the list
    /// names identifiers, `com.reiterate.cheer.N` for a size N (the stand-in's naming).
    public var bundleIdentifiers: [String]?
    /// `notify = "bell" | "osc9" | "none"`: how a finding of the watch is told.
    public var notify: NotifyStyle?
    /// The intercepting proxy for the app's own traffic (`reiterate-shop proxy`, `--proxy`):
    /// `proxy_listen = "HOST:PORT"`, `proxy_hosts = [...]` (hosts intercepted besides the base URL's),
    /// `proxy_start = true` (the TUI runs it from the start). Not `proxy`, which is the upstream proxy
    /// this tool's own requests go through.
    public var proxyListen: String?
    public var proxyHosts: [String]?
    public var proxyStart: Bool?
    /// `[environments.NAME.appstore]`: the App Store Server API the ledger reads (issue 38).
    public var appStore: AppStoreSettings?

    public init(name: String, baseURL: String? = nil, user: String? = nil, readOnly: Bool? = nil, tokenEnv: String? = nil,
                refreshTokenEnv: String? = nil, caFile: String? = nil, timeout: Double? = nil, users: [String]? = nil, proxy: String? = nil,
                contract: String? = nil, watch: Bool? = nil, watchInterval: Double? = nil, bundles: [Int]? = nil, notify: NotifyStyle? = nil) {
        self.watch = watch
        self.watchInterval = watchInterval
        self.bundles = bundles
        self.notify = notify
        self.name = name
        self.baseURL = baseURL
        self.user = user
        self.readOnly = readOnly
        self.tokenEnv = tokenEnv
        self.refreshTokenEnv = refreshTokenEnv
        self.caFile = caFile
        self.timeout = timeout
        self.users = users
        self.proxy = proxy
        self.contract = contract
    }

    /// The stand-in on its default port.
    public static let local = EnvironmentConfig(name: "local", baseURL: "http://127.0.0.1:8080", user: "qa-alice", readOnly: false)
}

/// `[environments.NAME.appstore]`: where the App Store Server API is and the App Store Connect API key
/// that reads it. The key itself is never here: `key_file` names its `.p8` file.
public struct AppStoreSettings: Sendable, Equatable {
    /// The sandbox's base URL unless the table says otherwise.
    public static let sandboxURL = "https://api.storekit-sandbox.itunes.apple.com"
    public var url: String = AppStoreSettings.sandboxURL
    public var keyFile: String
    public var keyID: String
    public var issuerID: String
    public var bundleID: String
    /// A PEM file with the root the records' chains must verify to; nil: Apple Root CA - G3, built in.
    public var rootCA: String?
    /// A transaction id of the sandbox tester: where the ledger starts when none is given or seen.
    public var transaction: String?

    public init(url: String = AppStoreSettings.sandboxURL, keyFile: String, keyID: String, issuerID: String, bundleID: String, rootCA: String? = nil) {
        self.url = url
        self.keyFile = keyFile
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.rootCA = rootCA
    }

    public static let keys = ["url", "key_file", "key_id", "issuer_id", "bundle_id", "root_ca", "transaction"]
    public static let required = ["key_file", "key_id", "issuer_id", "bundle_id"]
}

/// The palette asked for: `dark`, `light` or `auto` (the terminal's background, asked with OSC 11),
/// each with a colour-blind-safe variant (`light-colorblind`).
public struct ThemeSetting: Sendable, Equatable, CustomStringConvertible {
    public enum Background: String, Sendable, Equatable, CaseIterable { case auto, dark, light }
    public var background: Background
    public var colorBlindSafe: Bool

    public init(_ background: Background, colorBlindSafe: Bool = false) {
        self.background = background
        self.colorBlindSafe = colorBlindSafe
    }

    static let suffix = "-colorblind"

    /// From a name as `theme =`, `--theme` and REITERATE_THEME take it (any case); nil for another word.
    public init?(name: String) {
        let lower = name.lowercased()
        let safe = lower.hasSuffix(Self.suffix)
        guard let background = Background(rawValue: safe ? String(lower.dropLast(Self.suffix.count)) : lower) else { return nil }
        self.init(background, colorBlindSafe: safe)
    }

    public static let standard = ThemeSetting(.auto)
    public static let names = Background.allCases.map(\.rawValue) + Background.allCases.map { $0.rawValue + suffix }
    public var description: String { background.rawValue + (colorBlindSafe ? Self.suffix : "") }
}

/// How the watch tells of a finding: the terminal's bell, an OSC 9 notification (iTerm2, WezTerm,
/// kitty, Windows Terminal show it as a desktop notification), or not at all.
public enum NotifyStyle: String, Sendable, Equatable, CaseIterable {
    case bell, osc9, none
}

/// A mistake in the config file: which file, which line, which key, what is wrong.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var key: String?
    public var message: String

    /// Public so that other modules (key bindings) report their mistakes in the same `file:line: key: message` form.
    public init(path: String, line: Int? = nil, key: String? = nil, message: String) {
        self.path = path
        self.line = line
        self.key = key
        self.message = message
    }

    public var description: String {
        var s = path
        if let line { s += ":\(line)" }
        s += ": "
        if let key { s += "\(key): " }
        return s + message
    }
}

/// `$XDG_CONFIG_HOME/reiterate-shop/config.toml`, default `~/.config/reiterate-shop/config.toml`:
///
/// ```toml
/// default_environment = "staging"      # optional
/// theme = "auto"                     # optional: "dark", "light", "auto", each also "-colorblind"
/// [environments.staging]
/// base_url = "https://staging.example.com"
/// user = "qa-alice"
/// read_only = false
/// token_env = "REITERATE_STAGING_TOKEN"
/// ca_file = "/etc/ssl/staging-ca.pem"
/// timeout = 15
/// users = ["qa-alice", "qa-whale"]
/// contract = "/path/to/reiterate-api.yaml"   # optional: another version of the contract
/// watch = true                         # optional: watch the user from the start (w toggles)
/// watch_interval = 2                   # seconds between the watch's reads
/// bundles = [50, 100, 200, 500]        # the cheer bundle sizes this environment sells
/// notify = "bell"                      # "bell", "osc9" or "none": how a finding is told
/// proxy_listen = "0.0.0.0:8877"        # the app's proxy (`reiterate-shop proxy`); default 127.0.0.1:8877
/// proxy_hosts = ["cdn.staging.example.com"]   # hosts it intercepts besides base_url's
/// proxy_start = true                   # the TUI runs the app's proxy from the start
///
/// [keys]                               # optional: action = "key" or ["key", ...]
/// quit = ["x", "ctrl-q"]
/// ```
///
/// Any valid TOML reads (TOMLKit): inline tables, dotted keys, arrays, multi-line and literal strings.
public struct ConfigFile: Sendable, Equatable {
    public var path: String
    public var environments: [String: EnvironmentConfig]
    public var defaultEnvironment: String?
    /// The `[keys]` table in file order; only its shape is checked here (action and key names are not).
    public var keyBindings: [KeyBindingConfig] = []
    /// `[compare] ignore = [...]`: paths every comparison leaves out (`packs[].cheer_total`).
    public var compareIgnore: [String] = []
    /// `mouse = false` turns mouse reporting off (so the terminal's own text selection works).
    public var mouse: Bool?
    /// `theme = "light"`: the palette (`--theme` and REITERATE_THEME come first).
    public var theme: ThemeSetting?

    public static let keys = ["base_url", "user", "tier", "read_only", "token_env", "refresh_token_env", "ca_file", "timeout", "users", "explore_users", "proxy", "contract",
                              "watch", "watch_interval", "bundles", "notify", "proxy_listen", "proxy_hosts", "proxy_start", "appstore"]

    public static func defaultPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/reiterate-shop/config.toml" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/reiterate-shop/config.toml"
    }

    /// The file at `path`, or nil when there is none. A file that exists but is wrong throws `ConfigError`.
    public static func load(path: String) throws(ConfigError) -> ConfigFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigError(path: path, message: "cannot read the file") }
        guard let text = String(data: data, encoding: .utf8) else { throw ConfigError(path: path, message: "not UTF-8 text") }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(ConfigError) -> ConfigFile {
        try ConfigReader.read(text, path: path)
    }
}

/// One entry of the `[keys]` table: `quit = ["x", "ctrl-q"]` → action "quit", keys ["x", "ctrl-q"], and the
/// line of `quit =` so that whoever checks the names can report `file:line`.
public struct KeyBindingConfig: Sendable, Equatable {
    public var action: String
    public var keys: [String]
    public var line: Int?

    public init(action: String, keys: [String], line: Int? = nil) {
        self.action = action
        self.keys = keys
        self.line = line
    }
}

/// Everything a command runs with, resolved: flags > environment variables > config file > defaults.
public struct ResolvedSettings: Sendable, Equatable {
    public var environment: String
    /// What kind of environment it is: its `tier`, else what its name says (`Tier.named`).
    public var tier: Tier = .production
    public var baseURL: String
    public var user: String
    public var readOnly: Bool
    public var tokenEnv: String
    public var refreshTokenEnv: String
    public var caFile: String?
    public var timeout: Double
    /// The environment's `users` list; empty when it has none.
    public var users: [String]
    /// The users `explore` writes as: `explore_users`, else the user on a local tier (a stand-in on this
    /// machine is nobody else's), else none (no write is sent).
    public var exploreUsers: [String] = []
    /// The HTTP proxy requests go through (nil: direct); `sources["proxy"]` says why.
    public var proxy: ProxySetting?
    /// The OpenAPI document to check responses against (nil: the built-in copy).
    public var contract: String?
    /// Watch the user from the start; seconds between reads; the bundles sold; how a finding is told.
    public var watch = false
    public var watchInterval: Double = 2
    public var bundles: [Int] = ResolvedSettings.standInBundles
    /// The product id of each of `bundles` (same order): what a purchase's identifier is looked up in.
    public var bundleIdentifiers: [String] = ResolvedSettings.standInBundles.map(ResolvedSettings.standInIdentifier)
    /// The stand-in's identifier of a bundle of `size` cheer.
    public static func standInIdentifier(_ size: Int) -> String { "com.reiterate.cheer.\(size)" }
    public var notify: NotifyStyle = .bell
    /// `[compare] ignore`: paths comparisons and pins leave out.
    public var compareIgnore: [String] = []
    /// The app's proxy: where it listens (`proxy_listen`, nil: its default), the hosts it intercepts
    /// besides the base URL's (`proxy_hosts`), whether the TUI runs it from the start (`proxy_start`).
    public var proxyListen: String?
    public var proxyHosts: [String] = []
    public var proxyStart = false
    /// The environment's App Store table; nil when it has none.
    public var appStore: AppStoreSettings?
    /// The stand-in's bundles: `com.reiterate.cheer.N`.
    public static let standInBundles = [50, 100, 200, 500, 1000, 2500, 5000]
    /// Where each value came from (`flag`, `environment variable X`, `config file`, `default`).
    public var sources: [String: String]

    public struct Flags: Sendable {
        public var env: String?
        public var baseURL: String?
        public var user: String?
        public var readOnly: Bool
        public var timeout: Double?
        public var contract: String?
        public var watch: Bool
        public var watchInterval: Double?
        public init(env: String? = nil, baseURL: String? = nil, user: String? = nil, readOnly: Bool = false, timeout: Double? = nil, contract: String? = nil,
                    watch: Bool = false, watchInterval: Double? = nil) {
            self.contract = contract
            self.watch = watch
            self.watchInterval = watchInterval
            self.env = env
            self.baseURL = baseURL
            self.user = user
            self.readOnly = readOnly
            self.timeout = timeout
        }
    }

    public static func resolve(flags: Flags, environment: [String: String], config: ConfigFile?) throws(ConfigError) -> ResolvedSettings {
        let name = flags.env ?? environment["REITERATE_ENV"] ?? config?.defaultEnvironment
        var chosen: EnvironmentConfig?
        if let name {
            if let found = config?.environments[name] {
                // A config entry named "local" overrides the built-in one field by field.
                chosen = name == "local" ? merge(found, over: .local) : found
            } else if name == "local" {
                chosen = .local
            } else {
                let known = (["local"] + (config?.environments.keys.sorted() ?? [])).joined(separator: ", ")
                throw ConfigError(path: config?.path ?? "config", message: "no environment '\(name)'; known: \(known)")
            }
        }
        var sources: [String: String] = [:]
        func pick<T>(_ key: String, _ flag: T?, _ envVar: String?, _ configValue: T?, _ fallback: T, read: (String) -> T?) -> T {
            if let flag { sources[key] = "flag"; return flag }
            if let envVar, let raw = environment[envVar], !raw.isEmpty, let v = read(raw) { sources[key] = "environment variable \(envVar)"; return v }
            if let configValue { sources[key] = chosen.map { $0.name == "local" && config?.environments["local"] == nil ? "built-in local" : "config file [environments.\($0.name)]" } ?? "config"; return configValue }
            sources[key] = "default"
            return fallback
        }
        let baseURL = pick("base_url", flags.baseURL, "REITERATE_BASE_URL", chosen?.baseURL, EnvironmentConfig.local.baseURL ?? "http://127.0.0.1:8080") { $0 }
        let user = pick("user", flags.user, "REITERATE_USER", chosen?.user, "qa-alice") { $0 }
        let timeout = pick("timeout", flags.timeout, nil, chosen?.timeout, 10) { Double($0) }
        let tokenEnv = pick("token_env", nil, nil, chosen?.tokenEnv, "REITERATE_TOKEN") { $0 }
        let refreshTokenEnv = pick("refresh_token_env", nil, nil, chosen?.refreshTokenEnv, "REITERATE_REFRESH_TOKEN") { $0 }
        let caFile: String? = pick("ca_file", nil, nil, chosen?.caFile.map { Optional($0) }, nil) { $0 }
        let users = pick("users", nil, nil, chosen?.users, []) { _ in nil }
        let contract: String? = pick("contract", flags.contract.map { Optional($0) }, nil, chosen?.contract.map { Optional($0) }, nil) { $0 }
        // An environment is named by --env, else guessed from the URL: loopback is local, a staging
        // host is staging, anything else is production-like — read-only unless its config says not.
        let envName = chosen?.name ?? guessTier(baseURL).rawValue
        let readOnly: Bool
        if flags.readOnly {
            readOnly = true
            sources["read_only"] = "flag"
        } else if let configured = chosen?.readOnly {
            readOnly = configured
            sources["read_only"] = envName == "local" && config?.environments["local"] == nil ? "built-in local" : "config file [environments.\(envName)]"
        } else if let tier = chosen?.tier {
            readOnly = tier == .production
            sources["read_only"] = "default for a \(tier) tier"
        } else {
            readOnly = guessTier(baseURL) == .production
            sources["read_only"] = "default for a \(guessTier(baseURL)) URL"
        }
        let tier = pick("tier", nil, nil, chosen?.tier, Tier.named(envName)) { _ in nil }
        let proxy: ProxySetting?
        switch ProxyResolution.resolve(baseURL: baseURL, configured: chosen?.proxy, environment: environment) {
        case let .success(outcome):
            proxy = outcome.proxy
            sources["proxy"] = outcome.source
        case let .failure(problem):
            throw ConfigError(path: problem.variable == nil ? config?.path ?? "config" : "environment", key: "proxy", message: problem.message)
        }
        var settings = ResolvedSettings(environment: envName, baseURL: baseURL, user: user, readOnly: readOnly, tokenEnv: tokenEnv,
                                        refreshTokenEnv: refreshTokenEnv, caFile: caFile, timeout: timeout, users: users, proxy: proxy, contract: contract, sources: sources)
        settings.watch = pick("watch", flags.watch ? true : nil, nil, chosen?.watch, false) { _ in nil }
        settings.watchInterval = pick("watch_interval", flags.watchInterval, nil, chosen?.watchInterval, 2) { _ in nil }
        settings.bundles = pick("bundles", nil, nil, chosen?.bundles, standInBundles) { _ in nil }
        settings.bundleIdentifiers = chosen?.bundles == nil ? standInBundles.map(standInIdentifier)
            : chosen?.bundleIdentifiers ?? settings.bundles.map(standInIdentifier)
        settings.compareIgnore = config?.compareIgnore ?? []
        settings.notify = pick("notify", nil, nil, chosen?.notify, .bell) { _ in nil }
        settings.proxyListen = pick("proxy_listen", nil, nil, chosen?.proxyListen.map { Optional($0) }, nil) { $0 }
        settings.proxyHosts = pick("proxy_hosts", nil, nil, chosen?.proxyHosts, []) { _ in nil }
        settings.proxyStart = pick("proxy_start", nil, nil, chosen?.proxyStart, false) { _ in nil }
        settings.appStore = chosen?.appStore
        settings.tier = tier
        settings.exploreUsers = pick("explore_users", nil, nil, chosen?.exploreUsers, tier == .local ? [user] : []) { _ in nil }
        return settings
    }

    static func merge(_ top: EnvironmentConfig, over base: EnvironmentConfig) -> EnvironmentConfig {
        EnvironmentConfig(name: top.name, baseURL: top.baseURL ?? base.baseURL, user: top.user ?? base.user, readOnly: top.readOnly ?? base.readOnly,
                          tokenEnv: top.tokenEnv ?? base.tokenEnv, refreshTokenEnv: top.refreshTokenEnv ?? base.refreshTokenEnv,
                          caFile: top.caFile ?? base.caFile, timeout: top.timeout ?? base.timeout, users: top.users ?? base.users,
                          proxy: top.proxy ?? base.proxy, contract: top.contract ?? base.contract, watch: top.watch ?? base.watch,
                          watchInterval: top.watchInterval ?? base.watchInterval, bundles: top.bundles ?? base.bundles, notify: top.notify ?? base.notify)
            .with(bundleIdentifiers: top.bundles != nil ? top.bundleIdentifiers : base.bundleIdentifiers, tier: top.tier ?? base.tier,
                  proxyListen: top.proxyListen ?? base.proxyListen, proxyHosts: top.proxyHosts ?? base.proxyHosts, proxyStart: top.proxyStart ?? base.proxyStart,
                  appStore: top.appStore ?? base.appStore)
            .with(exploreUsers: top.exploreUsers ?? base.exploreUsers)
    }

    /// What the URL alone says: loopback is local, a staging host is staging, anything else production.
    public static func guessTier(_ baseURL: String) -> Tier {
        let host = URL(string: baseURL)?.host?.lowercased() ?? ""
        if ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) || host.hasPrefix("127.") { return .local }
        if host.contains("staging") || host.contains("stg") { return .staging }
        return .production
    }

    /// A token for display: never its value, only whether it is set and how long it is.
    public static func mask(_ token: String?) -> String {
        guard let token, !token.isEmpty else { return "not set" }
        return "set (\(token.count) characters, hidden)"
    }
}

extension EnvironmentConfig {
    /// The same, with the bundles' product ids (kept beside `bundles` when environments are merged).
    func with(bundleIdentifiers: [String]?, tier: Tier?, proxyListen: String?, proxyHosts: [String]?, proxyStart: Bool?,
              appStore: AppStoreSettings?) -> EnvironmentConfig {
        var copy = self
        copy.bundleIdentifiers = bundleIdentifiers
        copy.tier = tier
        copy.proxyListen = proxyListen
        copy.proxyHosts = proxyHosts
        copy.proxyStart = proxyStart
        copy.appStore = appStore
        return copy
    }

    func with(exploreUsers: [String]?) -> EnvironmentConfig {
        var copy = self
        copy.exploreUsers = exploreUsers
        return copy
    }
}
