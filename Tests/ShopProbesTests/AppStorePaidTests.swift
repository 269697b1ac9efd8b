import AppStoreRecord
import Foundation
import ShopAPI
import ShopLedger
import StubCore
import StubServer
import Testing
@testable import ShopProbes

/// What `buy` and the ledger read of the App Store (out of the executable, issue 44), against the stand-in's
/// App Store Server API in this process: records believed only once their chain to the stand-in's root verifies.
@Suite struct AppStorePaidTests {
    /// An App Store client of the stand-in's App Store side (its minted root and API key, written to a folder).
    static func withAppStore<T: Sendable>(_ body: (AppStoreClient, RunningStub) async throws -> T) async throws -> T {
        try await withStandIn { _, stub in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let files = try stub.service.appStore.writeFiles(to: folder)
            let key = try AppStoreKey.load(path: files.key, keyID: AppStoreAccount.keyID, issuerID: AppStoreAccount.issuerID, bundleID: AppStoreAccount.bundleID)
            let checker = try TransactionChecker.make(rootFile: files.root, bundleID: AppStoreAccount.bundleID, environment: AppStoreAccount.environment)
            let transport = try AsyncHTTPTransport(configuration: .init())
            let client = AppStoreClient(baseURL: stub.url, tokens: AppStoreTokens(key: key), checker: checker, transport: transport, timeout: .seconds(5))
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body(client, stub)) } catch { outcome = .failure(error) }
            try? await transport.shutdown()
            return try outcome.get()
        }
    }

    @Test func aVerifiedRecordSaysWhatWasPaidAndARefundedOneThatTheShopMustRefuseIt() async throws {
        let (paid, refunded, unknown) = try await Self.withAppStore { client, stub in
            let now = Date().timeIntervalSince1970
            let bought = try await stub.service.store.appStorePurchase(productID: "com.reiterate.cheer.200", quantity: 2, now: now)
            let gone = try await stub.service.store.appStorePurchase(productID: "com.reiterate.cheer.50", now: now)
            _ = await stub.service.store.refund(transactionID: gone.id, reason: 0, now: now)
            return (await AppStorePaid.read(client, id: bought.id), await AppStorePaid.read(client, id: gone.id),
                    await AppStorePaid.read(client, id: "9999999999999"))
        }
        #expect(paid.paid == ShopWrite.Purchase.Paid(product: "com.reiterate.cheer.200", quantity: 2, revoked: false))
        #expect(paid.line.hasPrefix("note: the App Store's record of ") && paid.line.hasSuffix("2 × com.reiterate.cheer.200; the credit expected comes from it\n"))
        #expect(refunded.paid?.revoked == true && refunded.line.hasSuffix(", refunded: the shop must refuse to credit it\n"))
        #expect(unknown.paid == nil && unknown.line.hasPrefix("warning: the App Store does not know transaction 9999999999999"))
    }

    /// The ledger's App Store read: the history from the first id the App Store knows (an unknown one first is
    /// passed over), its refunds, and the judge over them.
    @Test func theLedgerReadsTheCustomersHistoryFromTheFirstIdItKnows() async throws {
        let (sources, bought) = try await Self.withAppStore { client, stub in
            let now = Date().timeIntervalSince1970
            let bought = try await stub.service.store.appStorePurchase(productID: "com.reiterate.cheer.200", now: now)
            let read = await LedgerSources.read(client: client, candidates: ["9999999999999", bought.id], events: [])
            return (try read.get(), bought.id)
        }
        #expect(sources.transactions.keys.contains(bought))
        let ledger = sources.judge([], catalog: ["com.reiterate.cheer.200": 200])
        #expect(ledger.lines.contains { $0.transactionID == bought && $0.verdict == .notSeen })
    }
}
