import Foundation
import Testing
@testable import StubCore

/// The App Store's side of the stand-in (issue 38) as pure state: ids, Apple's paging by 20 with
/// revisions, refunds and what the shop takes back, and the rules of a purchase verified with it.
@Suite struct AppStoreLedgerTests {
    func expectAppStore(_ expected: AppStoreError, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(expected.errorCode)")
        } catch let error as AppStoreError {
            #expect(error == expected)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func idsCountUpFrom2000000000000001AndFitAUInt64() throws {
        var ledger = AppStoreLedger()
        let first = try ledger.purchase(productID: "com.reiterate.cheer.200", now: 1_000)
        let second = try ledger.purchase(productID: "com.reiterate.cheer.50", quantity: 3, customer: "sandbox-2", user: "qa-empty", now: 1_001.5)
        #expect(first.id == "2000000000000001" && second.id == "2000000000000002" && UInt64(second.id) != nil && second.id.count == 16)
        #expect(first.customer == "sandbox-1" && first.user == "qa-alice" && first.bundleID == AppStoreAccount.bundleID && first.type == "Consumable")
        #expect(second.purchaseDate == 1_001_500 && second.quantity == 3 && second.price == 495)
    }

    @Test func aPurchaseOutOfRangeIsRefused() {
        var ledger = AppStoreLedger()
        for (product, quantity, type) in [("", 1, "Consumable"), ("p", 0, "Consumable"), ("p", 11, "Consumable"), ("p", 1, "Consumable Thing")] {
            #expect(throws: ShopError.self) { try ledger.purchase(productID: product, quantity: quantity, type: type, now: 1) }
        }
        #expect(ledger.transactions.isEmpty)
    }

    @Test func lookupsAnswerApplesErrors() throws {
        var ledger = AppStoreLedger()
        let ours = try ledger.purchase(productID: "com.reiterate.cheer.200", now: 1)
        let theirs = try ledger.purchase(productID: "com.reiterate.cheer.200", bundleID: "com.other.app", now: 2)
        #expect(try ledger.transaction(id: ours.id) == ours)
        expectAppStore(.transactionNotFound) { _ = try ledger.transaction(id: theirs.id) }
        expectAppStore(.transactionNotFound) { _ = try ledger.transaction(id: "2000000000009999") }
        for bad in ["", "12a", "-1", "123456789012345678901", "١٢٣"] {
            expectAppStore(.invalidTransactionID) { _ = try ledger.transaction(id: bad) }
        }
        #expect(AppStoreError.invalidRevision.errorCode == 4_000_005 && AppStoreError.rateLimitExceeded.status == 429)
    }

    @Test func historyPagesBy20OldestFirstWithRevisions() throws {
        var ledger = AppStoreLedger()
        var ids: [String] = []
        for i in 0..<45 { ids.append(try ledger.purchase(productID: "com.reiterate.cheer.50", now: Double(i)).id) }
        _ = try ledger.purchase(productID: "com.reiterate.cheer.50", customer: "sandbox-2", now: 50)
        _ = try ledger.purchase(productID: "com.reiterate.cheer.50", bundleID: "com.other.app", now: 51)
        var seen: [String] = []
        var revision: String?
        var sizes: [Int] = []
        var more: [Bool] = []
        repeat {
            let page = try ledger.page(.history, of: ids[9], revision: revision)
            sizes.append(page.transactions.count)
            more.append(page.hasMore)
            seen += page.transactions.map(\.id)
            revision = page.revision
        } while more.last == true
        #expect(sizes == [20, 20, 5] && more == [true, true, false] && seen == ids)
        // The same place gives the same revision; the end's revision shows what came after.
        #expect(try ledger.page(.history, of: ids[0], revision: nil).revision == (try ledger.page(.history, of: ids[1], revision: nil).revision))
        let end = try #require(revision)
        #expect(try ledger.page(.history, of: ids[0], revision: end).transactions.isEmpty)
        let newer = try ledger.purchase(productID: "com.reiterate.cheer.50", now: 60)
        #expect(try ledger.page(.history, of: ids[0], revision: end).transactions.map(\.id) == [newer.id])
    }

    @Test func aRevisionNotIssuedForThatListAndCustomerIsInvalid() throws {
        var ledger = AppStoreLedger()
        let mine = try ledger.purchase(productID: "com.reiterate.cheer.50", now: 1)
        let theirs = try ledger.purchase(productID: "com.reiterate.cheer.50", customer: "sandbox-2", now: 2)
        let issued = try ledger.page(.history, of: mine.id, revision: nil).revision
        expectAppStore(.invalidRevision) { _ = try ledger.page(.history, of: mine.id, revision: "made-up") }
        expectAppStore(.invalidRevision) { _ = try ledger.page(.history, of: theirs.id, revision: issued) }
        expectAppStore(.invalidRevision) { _ = try ledger.page(.refunds, of: mine.id, revision: issued) }
        expectAppStore(.transactionNotFound) { _ = try ledger.page(.history, of: "2000000000009999", revision: nil) }
    }

    @Test func refundsAreListedOnceRevokedAndKeepTheirFirstDate() throws {
        var ledger = AppStoreLedger()
        let ids = try (0..<3).map { try ledger.purchase(productID: "com.reiterate.cheer.50", now: Double($0)).id }
        #expect(try ledger.page(.refunds, of: ids[0], revision: nil).transactions.isEmpty)
        #expect(ledger.refund(id: ids[1], reason: 1, now: 10)?.revocationDate == 10_000)
        #expect(ledger.refund(id: ids[1], reason: 0, now: 20)?.revocationReason == 1)
        #expect(ledger.refund(id: "2000000000009999", reason: 0, now: 20) == nil)
        let page = try ledger.page(.refunds, of: ids[2], revision: nil)
        #expect(page.transactions.map(\.id) == [ids[1]] && !page.hasMore)
        let payload = try #require(page.transactions.first).payload(signedDate: 30_000)
        #expect(payload.revocationDate == 10_000 && payload.revocationReason == 1 && payload.signedDate == 30_000)
    }

    @Test func theAppAccountTokenIsTheNameBasedUUIDOfTheUser() {
        // Python: uuid.uuid5(uuid.NAMESPACE_URL, "reiterate:user:qa-alice")
        #expect(AppStoreLedger.appAccountToken(for: "qa-alice") == "5de2059b-f64c-5a85-bc5d-78f54f052f37")
        #expect(AppStoreLedger.appAccountToken(for: "qa-bob") == "8c5d6d10-d330-54eb-beaf-3b07eedceedf")
        #expect(NameUUID.v5("") == "1b4db7eb-4057-5ddf-91e0-36dec72071f5")
    }

    @Test func thePayloadIsApplesDecodedTransaction() throws {
        var ledger = AppStoreLedger()
        let t = try ledger.purchase(productID: "com.reiterate.cheer.1000", quantity: 2, user: "qa-empty", now: 5)
        let json = String(decoding: try StubJSON.encode(t.payload(signedDate: 6_000)), as: UTF8.self)
        #expect(json == #"{"appAccountToken":"\#(AppStoreLedger.appAccountToken(for: "qa-empty"))","bundleId":"com.reiterate.app","currency":"USD","#
            + #""environment":"Sandbox","inAppOwnershipType":"PURCHASED","originalPurchaseDate":5000,"originalTransactionId":"2000000000000001","#
            + #""price":9900,"productId":"com.reiterate.cheer.1000","purchaseDate":5000,"quantity":2,"signedDate":6000,"storefront":"USA","#
            + #""storefrontId":"143441","transactionId":"2000000000000001","transactionReason":"PURCHASE","type":"Consumable"}"#)
    }
}

/// A purchase verified with the App Store, and each fault's waiver.
@Suite struct VerifiedPurchaseTests {
    let store = ShopStore(config: ShopConfig(whaleHistory: 10, appStoreVerify: true), now: 1_000)
    let bundle = "com.reiterate.cheer.200"

    func buy(_ product: String = "com.reiterate.cheer.200", quantity: Int = 1, user: String = "qa-alice", bundleID: String? = nil,
             type: String = "Consumable") async throws -> String {
        try await store.appStorePurchase(productID: product, quantity: quantity, user: user, bundleID: bundleID, type: type, now: 1_000).id
    }

    func expectRefusal(_ code: String, _ transaction: String, identifier: String = "com.reiterate.cheer.200", user: String = "qa-alice",
                       waivers: Set<AppStoreWaiver> = []) async throws {
        do {
            _ = try await store.verifiedPurchase(user: user, identifier: identifier, transaction: transaction, waivers: waivers)
            Issue.record("\(transaction) was credited; expected \(code)")
        } catch let error as ShopError {
            #expect(error.status == 400 && error.code == code, "\(error)")
        }
        #expect(try await store.balance(user: "qa-alice") == 1250)
        #expect(await store.credit(of: transaction) == nil)
    }

    @Test func creditsTheAppStoresProductTimesQuantityOnceAndRemembersWhom() async throws {
        let tx = try await buy(quantity: 3)
        let (outcome, waived) = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: tx)
        #expect(outcome.after == 1850 && outcome.answer == 1850 && waived.isEmpty)
        #expect(await store.credit(of: tx) == ShopStore.Credit(user: "qa-alice", amount: 600))
        await #expect(throws: ShopError(status: 409, code: "duplicate_transaction", message: "transaction \(tx) was already credited; nothing changed")) {
            _ = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: tx)
        }
    }

    @Test func whatTheAppStoreDoesNotBackIsRefused() async throws {
        try await expectRefusal("unverified_transaction", "2000000000009999")
        try await expectRefusal("unverified_transaction", try await buy(bundleID: "com.other.app"))
        try await expectRefusal("unverified_transaction", try await buy(type: "Non-Consumable"))
        let refunded = try await buy()
        #expect(await store.refund(transactionID: refunded, reason: 0, now: 1_001)?.debited == 0)
        try await expectRefusal("refunded_transaction", refunded)
        try await expectRefusal("product_mismatch", try await buy("com.reiterate.cheer.50"))
        try await expectRefusal("not_this_users_transaction", try await buy(user: "qa-whale"))
        try await expectRefusal("unknown_product", try await buy("com.reiterate.sticker"), identifier: "com.reiterate.sticker")
    }

    @Test func trustProductCreditsThePostedBundleTimesQuantity() async throws {
        let tx = try await buy("com.reiterate.cheer.50", quantity: 2)
        let (outcome, waived) = try await store.verifiedPurchase(user: "qa-alice", identifier: "com.reiterate.cheer.500", transaction: tx,
                                                                 waivers: [.trustProduct])
        #expect(outcome.after == 2250 && waived == [.trustProduct])
        // A posted product that is the App Store's: nothing waived.
        let same = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: try await buy(), waivers: [.trustProduct])
        #expect(same.waived.isEmpty && same.outcome.after == 2450)
    }

    @Test func ignoreQuantityCreditsOneBundle() async throws {
        let one = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: try await buy(), waivers: [.ignoreQuantity])
        #expect(one.waived.isEmpty && one.outcome.after == 1450)
        let four = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: try await buy(quantity: 4), waivers: [.ignoreQuantity])
        #expect(four.waived == [.ignoreQuantity] && four.outcome.after == 1650)
    }

    @Test func keepRefundedKeepsTheCheerAndCreditsARefundedTransaction() async throws {
        let tx = try await buy(quantity: 2)
        _ = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: tx)
        let kept = try #require(await store.refund(transactionID: tx, reason: 1, keepRefunded: true, now: 1_001))
        #expect(kept.kept && kept.debited == 0 && kept.user == "qa-alice" && kept.transaction.isRevoked)
        #expect(try await store.balance(user: "qa-alice") == 1650)
        let refunded = try await buy()
        let nothingOwed = try #require(await store.refund(transactionID: refunded, reason: 0, keepRefunded: true, now: 1_002))
        #expect(!nothingOwed.kept && nothingOwed.user == nil)
        let credited = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: refunded, waivers: [.keepRefunded])
        #expect(credited.waived == [.keepRefunded] && credited.outcome.after == 1850)
    }

    @Test func aRefundTakesBackWhatWasCreditedOnce() async throws {
        let tx = try await buy("com.reiterate.cheer.500", quantity: 2)
        _ = try await store.purchaseLeniently(user: "qa-alice", identifier: "com.reiterate.cheer.500", transaction: tx, quirks: [.creditTwice],
                                              credit: 1000)
        #expect(try await store.balance(user: "qa-alice") == 3250)
        let refund = try #require(await store.refund(transactionID: tx, reason: 0, now: 1_001))
        #expect(refund.user == "qa-alice" && refund.debited == 2000 && !refund.kept)
        #expect(try await store.balance(user: "qa-alice") == 1250)
        #expect(await store.refund(transactionID: tx, reason: 0, now: 1_002)?.debited == 0)
        #expect(await store.refund(transactionID: "2000000000009999", reason: 0, now: 1_002) == nil)
        #expect(await store.credit(of: tx) == ShopStore.Credit(user: "qa-alice", amount: 2000, takenBack: 2000))
    }

    @Test func anyAccountCreditsAnotherUsersTransaction() async throws {
        let tx = try await buy(user: "qa-whale")
        let (outcome, waived) = try await store.verifiedPurchase(user: "qa-alice", identifier: bundle, transaction: tx, waivers: [.anyAccount])
        #expect(outcome.after == 1450 && waived == [.anyAccount])
        #expect(await store.credit(of: tx)?.user == "qa-alice")
    }

    @Test func unverifiedCreditDiffersOnlyWhereVerifyingWould() async throws {
        let good = try await buy()
        #expect(!(await store.verifyingWouldDiffer(user: "qa-alice", identifier: bundle, transaction: good, credited: 200)))
        #expect(await store.verifyingWouldDiffer(user: "qa-alice", identifier: bundle, transaction: "2000000000009999", credited: 200))
        #expect(await store.verifyingWouldDiffer(user: "qa-alice", identifier: bundle, transaction: try await buy(quantity: 2), credited: 200))
    }

    @Test func resetForgetsThePurchases() async throws {
        _ = try await buy()
        await store.reset(now: 2_000)
        #expect(await store.appStoreTransactions().isEmpty)
        #expect(try await buy() == "2000000000000001")
    }

    @Test func theNewKindsParseListAndTheSigningOnesDefaultToInApps() throws {
        for name in ["unverified_credit", "trust_product", "ignore_quantity", "keep_refunded", "any_account"] {
            let spec = try FaultSpec.parse(name)
            #expect(spec.kind.rawValue == name && spec.path == "/api/*" && !spec.kind.signsTransactions)
        }
        for name in ["broken_chain", "broken_signature", "wrong_bundle", "wrong_environment"] {
            let spec = try FaultSpec.parse("\(name),count=1")
            #expect(spec.path == "/inApps/*" && spec.kind.signsTransactions)
            let listed = String(decoding: try StubJSON.encode(ActiveFault(id: 1, spec: spec, remaining: 1)), as: UTF8.self)
            #expect(listed == #"{"count":1,"hits":0,"id":1,"kind":"\#(name)","path":"/inApps/*","remaining":1}"#)
            #expect(try FaultSpec.parse("\(name),path=/inApps/v1/*").path == "/inApps/v1/*")
        }
    }

    @Test func aControlEndpointFindsAFaultOfAKindWhateverItsPath() async throws {
        let registry = FaultRegistry(initial: [try FaultSpec.parse("keep_refunded,count=1")])
        let hit = try #require(await registry.trigger(kind: .keepRefunded))
        #expect(await registry.trigger(kind: .keepRefunded) == nil)  // its one use is reserved
        await registry.settle(applied: [], released: [hit])
        #expect(await registry.list().first?.remaining == 1)
        #expect(await registry.trigger(kind: .anyAccount) == nil)
    }
}
