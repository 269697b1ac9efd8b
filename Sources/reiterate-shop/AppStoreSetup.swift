import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import ShopSettings

/// The App Store Server API's client for an environment's `[appstore]` table: the key (refused when open
/// to others), the root its records must chain to, and a transport of its own. `ledger` and `negative`
/// open it the same way; every failure is a setting (78) in words that name no path.
struct AppStoreSetup {
    let client: AppStoreClient
    let transport: AsyncHTTPTransport

    init(_ settings: ResolvedSettings) throws {
        guard let appStore = settings.appStore else {
            throw CLIError(message: "the environment '\(settings.environment)' has no [environments.\(settings.environment).appstore] table: "
                           + "the App Store Server API's url and an App Store Connect key are needed (docs/ledger.md)", exitCode: .config)
        }
        let key: AppStoreKey
        do {
            key = try AppStoreKey.load(path: appStore.keyFile, keyID: appStore.keyID, issuerID: appStore.issuerID, bundleID: appStore.bundleID)
        } catch {
            throw CLIError(message: error.words, exitCode: .config)
        }
        let checker: TransactionChecker
        do {
            checker = try TransactionChecker.make(rootFile: appStore.rootCA, bundleID: appStore.bundleID, environment: AppStoreClient.environment(of: appStore.url))
        } catch {
            throw CLIError(message: error.words, exitCode: .config)
        }
        do {
            transport = try AsyncHTTPTransport(configuration: .init(caFile: settings.caFile))
        } catch {
            throw CLIError(message: "the HTTP client could not start", exitCode: .software)
        }
        client = AppStoreClient(baseURL: appStore.url, tokens: AppStoreTokens(key: key), checker: checker, transport: transport,
                                timeout: .milliseconds(Int64(settings.timeout * 1000)))
    }

    func close() async { try? await transport.shutdown() }

    /// The App Store's record of one transaction (`AppStorePaid`), by a client made for it and closed after.
    static func record(_ id: String, settings: ResolvedSettings) async throws -> AppStoreRecordRead {
        let setup = try AppStoreSetup(settings)
        let record = await AppStorePaid.read(setup.client, id: id)
        await setup.close()
        return record
    }
}

extension ResolvedSettings {
    /// The cheer of each product id the environment sells (its `bundles`): what a purchase must credit.
    var cheerByProduct: [String: Int] { Dictionary(zip(bundleIdentifiers, bundles), uniquingKeysWith: { first, _ in first }) }
}
