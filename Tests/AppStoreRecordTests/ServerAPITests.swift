@testable import AppStoreRecord
import Foundation
import Testing

/// The App Store Server API's requests and answers as the client reads them (its network runs are
/// pytest's, against the stand-in's App Store side: Tests/contract/test_ledger.py).
@Suite struct ServerAPITests {
    @Test func retryAfterIsAUnixTimeInMillisecondsAsAppleSendsIt() {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(AppStoreClient.retryAfter("1790000002500", now: now) == Date(timeIntervalSince1970: 1_790_000_002.5))
        // A server that sends seconds, as HTTP has it, is not waited on for decades.
        #expect(AppStoreClient.retryAfter("3", now: now) == now + 3)
        #expect(AppStoreClient.retryAfter("soon", now: now) == nil && AppStoreClient.retryAfter(nil, now: now) == nil)
        #expect(AppStoreClient.retryAfter("-5", now: now) == nil)
    }

    @Test func pathsAreApplesAndTheRevisionIsEscaped() {
        #expect(AppStoreRead.history(transactionID: "2000000000000001", revision: nil).path == "/inApps/v2/history/2000000000000001")
        #expect(AppStoreRead.history(transactionID: "1", revision: "a+b/c=").path == "/inApps/v2/history/1?revision=a%2Bb%2Fc%3D")
        #expect(AppStoreRead.transaction(transactionID: "5").path == "/inApps/v1/transactions/5")
        #expect(AppStoreRead.refunds(transactionID: "5", revision: "r1").path == "/inApps/v2/refund/lookup/5?revision=r1")
        #expect(AppStoreRead.isTransactionID("2000000000000001") && !AppStoreRead.isTransactionID("../x") && !AppStoreRead.isTransactionID("")
            && !AppStoreRead.isTransactionID(String(repeating: "1", count: 21)))
    }

    @Test func applesErrorIsShownInItsWordsWithItsCode() {
        #expect(AppStoreFailure.apple(status: 404, code: 4_040_010, message: "Transaction id not found.").words
            == "the App Store answered 404 with error 4040010: \"Transaction id not found.\"")
        #expect(AppStoreFailure.apple(status: 500, code: nil, message: nil).words == "the App Store answered 500 (no error body)")
        #expect(AppStoreFailure.apple(status: 400, code: 1, message: "a\u{1B}[31mb\nc").words.hasSuffix(": \"a[31mbc\""))
        let unauthorized = AppStoreFailure.unauthorized.words
        #expect(["key_id", "issuer_id", "bundle_id", "clock"].allSatisfy(unauthorized.contains))
    }

    @Test func aVerifiedRecordOfAnotherAppOrEnvironmentIsNotVerified() async throws {
        let minted = try Minted()
        let checker = TransactionChecker(verifier: SignedRecordVerifier(root: minted.root), bundleID: "com.reiterate.app")
        let ours = await checker.check(try minted.record(payload: transaction))
        #expect(ours.transaction?.productID == "com.reiterate.cheer.200" && ours.transaction?.quantity == 2)
        var other = transaction
        other["bundleId"] = "com.other.app"
        #expect(await checker.check(try minted.record(payload: other))
            == .notVerified(NotVerified(claimedTransactionID: "2000000123456789", reason: .bundle(found: "com.other.app", expected: "com.reiterate.app"))))
        var production = transaction
        production["environment"] = "Production"
        #expect(await checker.check(try minted.record(payload: production))
            == .notVerified(NotVerified(claimedTransactionID: "2000000123456789", reason: .environment(found: "Production", expected: "Sandbox"))))
        let forged = await checker.check(try minted.record(payload: transaction, key: minted.rootKey))
        #expect(forged == .notVerified(NotVerified(claimedTransactionID: "2000000123456789", reason: .record(.badSignature))))
    }

    @Test func theEnvironmentFollowsTheURL() {
        #expect(AppStoreClient.environment(of: AppStoreClient.sandboxURL) == "Sandbox")
        #expect(AppStoreClient.environment(of: AppStoreClient.productionURL) == "Production")
        #expect(AppStoreClient.environment(of: "http://127.0.0.1:8080") == "Sandbox")
    }
}
