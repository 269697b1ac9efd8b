import Testing
@testable import ShopSettings

@Suite struct ConfigFileTests {
    let sample = """
        # reiterate-shop environments
        default_environment = "staging"

        [environments.staging]
        base_url = "https://staging.reiterate.invalid"   # a comment after a value
        user = "qa-alice"
        read_only = false
        token_env = "REITERATE_STAGING_TOKEN"
        ca_file = '/etc/ssl/staging ca.pem'
        timeout = 15

        [environments.prod]
        base_url = "https://shop.reiterate.invalid"
        user = "qa-readonly"
        """

    @Test func parsesEnvironments() throws {
        let file = try ConfigFile.parse(sample, path: "/c.toml")
        #expect(file.defaultEnvironment == "staging")
        #expect(file.environments["staging"] == EnvironmentConfig(
            name: "staging", baseURL: "https://staging.reiterate.invalid", user: "qa-alice", readOnly: false,
            tokenEnv: "REITERATE_STAGING_TOKEN", caFile: "/etc/ssl/staging ca.pem", timeout: 15))
        #expect(file.environments["prod"]?.readOnly == nil)
    }

    static let mistakes: [(String, Int, String?, String)] = [
        ("[environments.staging]\nbse_url = \"x\"", 2, "bse_url", "unknown key"),
        ("[environments.staging]\nbase_url = https://x", 2, "base_url", "strings need quotes"),
        ("[environments.staging]\nbase_url = \"ftp://x\"", 2, "base_url", "expected http(s)"),
        ("[environments.staging]\nread_only = \"yes\"", 2, "read_only", "expected true or false"),
        ("[environments.staging]\ntimeout = 0", 2, "timeout", "(0, 600]"),
        ("[environments.staging]\ntoken_env = \"abc-def.secret\"", 2, "token_env", "NAME of an environment variable"),
        ("[staging]\nuser = \"x\"", 1, nil, "unknown table [staging]"),
        ("[environments.a]\nuser = \"x\"\nuser = \"y\"", 3, nil, "set twice"),
        ("default_environment = \"nope\"\n[environments.a]", 1, "default_environment", "no [environments.nope]"),
        ("[environments.a\nuser = \"x\"", 1, nil, "table header"),
        ("\n\n[environments.a]\nuser = \"unterminated", 4, "user", "unterminated string"),
    ]

    @Test(arguments: mistakes)
    func mistakesNameTheLineAndKey(_ text: String, _ line: Int, _ key: String?, _ message: String) {
        do {
            _ = try ConfigFile.parse(text, path: "/home/qa/.config/reiterate-shop/config.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.line == line && error.key == key && error.message.contains(message), "\(error.description)")
            #expect(error.description.hasPrefix("/home/qa/.config/reiterate-shop/config.toml:\(line): "))
        }
    }

    @Test func defaultPath() {
        #expect(ConfigFile.defaultPath(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/reiterate-shop/config.toml")
        #expect(ConfigFile.defaultPath(environment: ["HOME": "/h"]) == "/h/.config/reiterate-shop/config.toml")
    }
}

@Suite struct ResolutionTests {
    let file: ConfigFile = {
        (try? ConfigFile.parse("""
            [environments.staging]
            base_url = "https://staging.reiterate.invalid"
            user = "qa-bob"
            token_env = "STAGING_TOKEN"
            ca_file = "/ca.pem"
            timeout = 20
            [environments.prod]
            base_url = "https://shop.reiterate.invalid"
            [environments.prodrw]
            base_url = "https://shop.reiterate.invalid"
            read_only = false
            """, path: "/c.toml")) ?? ConfigFile(path: "/c.toml", environments: [:], defaultEnvironment: nil)
    }()

    @Test func precedenceFlagsThenEnvironmentThenConfigThenDefaults() throws {
        let staging = try ResolvedSettings.resolve(flags: .init(env: "staging"), environment: [:], config: file)
        #expect(staging.baseURL == "https://staging.reiterate.invalid" && staging.user == "qa-bob" && staging.tokenEnv == "STAGING_TOKEN")
        #expect(staging.caFile == "/ca.pem" && staging.timeout == 20 && !staging.readOnly && staging.environment == "staging")
        let envWins = try ResolvedSettings.resolve(flags: .init(env: "staging"), environment: ["REITERATE_USER": "qa-carol"], config: file)
        #expect(envWins.user == "qa-carol" && envWins.sources["user"] == "environment variable REITERATE_USER")
        let flagWins = try ResolvedSettings.resolve(flags: .init(env: "staging", user: "qa-dave", timeout: 3), environment: ["REITERATE_USER": "qa-carol"], config: file)
        #expect(flagWins.user == "qa-dave" && flagWins.timeout == 3 && flagWins.sources["user"] == "flag")
        let viaEnvVar = try ResolvedSettings.resolve(flags: .init(), environment: ["REITERATE_ENV": "staging"], config: file)
        #expect(viaEnvVar.environment == "staging")
    }

    @Test func localIsBuiltInAndDefaultsApply() throws {
        let local = try ResolvedSettings.resolve(flags: .init(env: "local"), environment: [:], config: nil)
        #expect(local.baseURL == "http://127.0.0.1:8080" && local.user == "qa-alice" && !local.readOnly && local.tokenEnv == "REITERATE_TOKEN")
        let bare = try ResolvedSettings.resolve(flags: .init(), environment: [:], config: nil)
        #expect(bare.environment == "local" && bare.timeout == 10)
    }

    @Test func productionLikeIsReadOnlyUnlessConfigSaysOtherwise() throws {
        #expect(try ResolvedSettings.resolve(flags: .init(env: "prod"), environment: [:], config: file).readOnly)
        #expect(try !ResolvedSettings.resolve(flags: .init(env: "prodrw"), environment: [:], config: file).readOnly)
        #expect(try ResolvedSettings.resolve(flags: .init(env: "prodrw", readOnly: true), environment: [:], config: file).readOnly)
        let guessed = try ResolvedSettings.resolve(flags: .init(baseURL: "https://shop.example"), environment: [:], config: nil)
        #expect(guessed.environment == "production" && guessed.readOnly)
        #expect(try ResolvedSettings.resolve(flags: .init(baseURL: "https://staging.example"), environment: [:], config: nil).environment == "staging")
    }

    @Test func unknownEnvironmentIsAnError() {
        do {
            _ = try ResolvedSettings.resolve(flags: .init(env: "qa"), environment: [:], config: file)
            Issue.record("accepted")
        } catch {
            #expect(error.message == "no environment 'qa'; known: local, prod, prodrw, staging")
        }
    }

    @Test func tokensAreMasked() {
        #expect(ResolvedSettings.mask("secret-token-123") == "set (16 characters, hidden)")
        #expect(ResolvedSettings.mask(nil) == "not set" && ResolvedSettings.mask("") == "not set")
    }
}

/// `[environments.NAME.appstore]` (issue 38): the App Store Server API the ledger reads.
@Suite struct AppStoreTableTests {
    @Test func theTableIsReadWithTheSandboxAsItsDefaultURL() throws {
        let file = try ConfigFile.parse("""
            [environments.staging]
            base_url = "https://staging.reiterate.invalid"
            [environments.staging.appstore]
            key_file = "/keys/AuthKey_ABC.p8"
            key_id = "ABC"
            issuer_id = "57246542-96fe-1a63-e053-0824d011072a"
            bundle_id = "com.reiterate.app"
            """, path: "/c.toml")
        let settings = try ResolvedSettings.resolve(flags: .init(env: "staging"), environment: [:], config: file)
        #expect(settings.appStore == AppStoreSettings(keyFile: "/keys/AuthKey_ABC.p8", keyID: "ABC", issuerID: "57246542-96fe-1a63-e053-0824d011072a",
                                                      bundleID: "com.reiterate.app"))
        #expect(settings.appStore?.url == "https://api.storekit-sandbox.itunes.apple.com" && settings.appStore?.rootCA == nil)
        #expect(try ResolvedSettings.resolve(flags: .init(env: "local"), environment: [:], config: file).appStore == nil)
    }

    static let mistakes: [(String, Int, String?, String)] = [
        ("[environments.s.appstore]\nkey_id = \"A\"\nissuer_id = \"I\"\nbundle_id = \"B\"", 1, nil, "lacks key_file"),
        ("[environments.s.appstore]\nkey_file = \"k\"\nkey_id = \"A\"\nissuer_id = \"I\"\nbundle_id = \"B\"\nkey = \"x\"", 6, "key", "unknown key in [environments.s.appstore]"),
        ("[environments.s.appstore]\nkey_file = \"-----BEGIN PRIVATE KEY-----\"\nkey_id = \"A\"\nissuer_id = \"I\"\nbundle_id = \"B\"", 2, "key_file", "never goes in this file"),
        ("[environments.s.appstore]\nurl = \"ftp://x\"\nkey_file = \"k\"\nkey_id = \"A\"\nissuer_id = \"I\"\nbundle_id = \"B\"", 2, "url", "expected http(s)://"),
        ("[environments.s.appstore]\nkey_file = 3\nkey_id = \"A\"\nissuer_id = \"I\"\nbundle_id = \"B\"", 2, "key_file", "expected a non-empty string"),
        ("[environments.s]\nappstore = 1", 2, "appstore", "expected a table"),
    ]

    @Test(arguments: mistakes)
    func mistakesNameTheLineAndKey(_ text: String, _ line: Int, _ key: String?, _ message: String) {
        #expect(throws: ConfigError.self) { try ConfigFile.parse(text, path: "/c.toml") }
        do {
            _ = try ConfigFile.parse(text, path: "/c.toml")
        } catch {
            #expect(error.line == line && error.key == key && error.message.contains(message), "\(error.description)")
        }
    }
}
