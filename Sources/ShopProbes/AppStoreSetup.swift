import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import ShopSettings
import ShopViewModels

/// The App Store Server API's client for an environment's `[appstore]` table: the key (refused when open
/// to others), the root its records must chain to, and a transport of its own. `ledger` and `negative`
/// open it the same way; every failure is a setting (78) in words that name no path.
public struct AppStoreSetup: Sendable {
    public let client: AppStoreClient
    let transport: AsyncHTTPTransport

    public init(_ settings: ResolvedSettings) throws(SetupProblem) {
        guard let appStore = settings.appStore else {
            throw SetupProblem(words: "the environment '\(settings.environment)' has no [environments.\(settings.environment).appstore] table: "
                           + "the App Store Server API's url and an App Store Connect key are needed (docs/ledger.md)", status: .config)
        }
        let key: AppStoreKey
        do {
            key = try AppStoreKey.load(path: appStore.keyFile, keyID: appStore.keyID, issuerID: appStore.issuerID, bundleID: appStore.bundleID)
        } catch {
            throw SetupProblem(words: error.words, status: .config)
        }
        let checker: TransactionChecker
        do {
            checker = try TransactionChecker.make(rootFile: appStore.rootCA, bundleID: appStore.bundleID, environment: AppStoreClient.environment(of: appStore.url))
        } catch {
            throw SetupProblem(words: error.words, status: .config)
        }
        do {
            transport = try AsyncHTTPTransport(configuration: .init(caFile: settings.caFile))
        } catch {
            throw SetupProblem(words: "the HTTP client could not start", status: .software)
        }
        client = AppStoreClient(baseURL: appStore.url, tokens: AppStoreTokens(key: key), checker: checker, transport: transport,
                                timeout: .milliseconds(Int64(settings.timeout * 1000)))
    }

    public func close() async { try? await transport.shutdown() }

    /// The App Store's record of one transaction (`AppStorePaid`), by a client made for it and closed after.
    public static func record(_ id: String, settings: ResolvedSettings) async throws(SetupProblem) -> AppStoreRecordRead {
        let setup = try AppStoreSetup(settings)
        let record = await AppStorePaid.read(setup.client, id: id)
        await setup.close()
        return record
    }
}

extension ResolvedSettings {
    /// The cheer of each product id the environment sells (its `bundles`): what a purchase must credit.
    public var cheerByProduct: [String: Int] { Dictionary(zip(bundleIdentifiers, bundles), uniquingKeysWith: { first, _ in first }) }
}

/// A setting that keeps a command from starting, in words, with its exit status.
public struct SetupProblem: Error, Sendable {
    public var words: String
    public var status: ExitStatus
    public init(words: String, status: ExitStatus) {
        self.words = words
        self.status = status
    }
}

extension ResolvedSettings {
    /// What the view models know of the settings: the one way the TUI, `print`, `spend` and `buy` make it.
    public var shopContext: ShopContext {
        ShopContext(environment: environment, tier: tier, baseURL: baseURL, user: user, readOnly: readOnly, tokenVariable: tokenEnv, users: users,
                    bundles: zip(bundleIdentifiers, bundles).map { CheerBundle(identifier: $0, cheer: $1) })
    }

    /// The watch as the settings make it (off until `w`, `--watch` or `watch = true`).
    public var watchState: WatchState {
        var state = WatchState(interval: watchInterval, alert: notify == .none ? nil : AlertStyle(rawValue: notify.rawValue))
        state.onAtStart = watch
        return state
    }
}
