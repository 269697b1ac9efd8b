import Testing
import ShopAPI
@testable import ShopSettings

/// `tier = "…"`: what kind of environment it is, whatever it is named.
@Suite struct TierTests {
    static let text = """
        [environments.prod-like]
        base_url = "https://shop.reiterate.invalid"
        tier = "staging"
        [environments.x]
        base_url = "https://staging.reiterate.invalid"
        tier = "production"
        [environments.staging]
        base_url = "https://staging.reiterate.invalid"
        [environments.eu]
        base_url = "https://staging-eu.reiterate.invalid"
        """

    @Test func theTierComesFromTheConfigNotTheName() throws {
        let file = try ConfigFile.parse(Self.text, path: "/c.toml")
        let prodLike = try ResolvedSettings.resolve(flags: .init(env: "prod-like"), environment: [:], config: file)
        #expect(prodLike.tier == .staging && prodLike.sources["tier"] == "config file [environments.prod-like]")
        // A staging tier is not read-only by default, whatever its URL looks like.
        #expect(!prodLike.readOnly && prodLike.sources["read_only"] == "default for a staging tier")
        let x = try ResolvedSettings.resolve(flags: .init(env: "x"), environment: [:], config: file)
        #expect(x.tier == .production && x.readOnly)
    }

    /// Without `tier`, as before: an environment named local or staging is that tier, any other a real
    /// one; read-only still follows the URL.
    @Test func withoutATierTheNameDecides() throws {
        let file = try ConfigFile.parse(Self.text, path: "/c.toml")
        let staging = try ResolvedSettings.resolve(flags: .init(env: "staging"), environment: [:], config: file)
        #expect(staging.tier == .staging && staging.sources["tier"] == "default")
        let eu = try ResolvedSettings.resolve(flags: .init(env: "eu"), environment: [:], config: file)
        #expect(eu.tier == .production && !eu.readOnly)
        let local = try ResolvedSettings.resolve(flags: .init(env: "local"), environment: [:], config: nil)
        #expect(local.tier == .local)
        // No environment named: guessed from the URL, the tier with it.
        let guessed = try ResolvedSettings.resolve(flags: .init(baseURL: "https://stg.example.com"), environment: [:], config: nil)
        #expect(guessed.environment == "staging" && guessed.tier == .staging)
    }

    @Test func anUnknownTierIsOneLineNamingItsLine() {
        do {
            _ = try ConfigFile.parse("[environments.a]\nuser = \"x\"\ntier = \"prod\"", path: "/q/config.toml")
            Issue.record("accepted")
        } catch {
            #expect(error.description == "/q/config.toml:3: tier: expected \"local\", \"staging\" or \"production\"")
        }
    }
}
