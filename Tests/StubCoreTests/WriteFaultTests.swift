import Testing
@testable import StubCore

/// The faults of issue 30 at the store: what a write did to the balance and history, and what it answered.
@Suite struct WriteFaultTests {
    let store = ShopStore(config: ShopConfig(whaleHistory: 10), now: 1_000)
    let bundle = "com.reiterate.cheer.200"

    func state() async throws -> (balance: Int, entries: Int) {
        (try await store.balance(user: "qa-alice"), try await store.history(user: "qa-alice", page: 1, perPage: 1).paging.totalCount)
    }

    func expect409(_ transaction: String) async {
        do {
            _ = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: transaction)
            Issue.record("a replay of \(transaction) was credited")
        } catch let error as ShopError {
            #expect(error.status == 409 && error.code == "duplicate_transaction")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func doubleCreditCreditsTheBundleTwiceAndAnswersWhatItLeft() async throws {
        #expect(try await state() == (1250, 230))
        let outcome = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: "7", quirks: [.creditTwice])
        #expect(outcome == .init(before: 1250, after: 1650, answer: 1650, broke: [], took: [.creditTwice]))
        #expect(try await state() == (1650, 230))
        await expect409("7")  // recorded once, as a transaction
        #expect(try await store.purchase(user: "qa-alice", identifier: bundle, transactionID: 8) == 1850)
    }

    @Test func replayCreditCreditsAKnownTransactionAgain() async throws {
        #expect(try await store.purchase(user: "qa-alice", identifier: bundle, transactionID: 7) == 1450)
        await expect409("7")
        let fresh = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: "8", lenient: [.replayedTransaction])
        #expect(fresh.broke.isEmpty && fresh.answer == 1650)  // a new id breaks no rule
        let replay = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: "7", lenient: [.replayedTransaction])
        #expect(replay == .init(before: 1650, after: 1850, answer: 1850, broke: [.replayedTransaction], took: []))
        #expect(try await state() == (1850, 230))
        await expect409("7")
    }

    @Test func noCreditAnswersWhatItWouldHaveLeftAndRecordsNothing() async throws {
        let outcome = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: "7", quirks: [.noCredit])
        #expect(outcome == .init(before: 1250, after: 1250, answer: 1450, broke: [], took: [.noCredit]))
        #expect(try await state() == (1250, 230))
        // The transaction was not recorded: the same id is credited now.
        #expect(try await store.purchase(user: "qa-alice", identifier: bundle, transactionID: 7) == 1450)
        // noCredit wins over creditTwice; a replay it would answer is still refused.
        let both = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: "9", quirks: [.noCredit, .creditTwice])
        #expect(both.took == [.noCredit] && both.answer == 1650 && both.after == 1450)
        await expect409("7")
        #expect(try await state() == (1450, 230))
    }

    @Test func staleAnswerAppliesASpendAndAnswersTheBalanceBefore() async throws {
        let product = try #require(await store.audioPacks().first)
        let outcome = try await store.spendLeniently(user: "qa-alice", amount: 7, product: product.identifier, comment: "again!", now: 5,
                                                     quirks: [.staleAnswer])
        #expect(outcome == .init(before: 1250, after: 1243, answer: 1250, broke: [], took: [.staleAnswer]))
        #expect(try await state() == (1243, 231))
        let top = try #require(try await store.history(user: "qa-alice", page: 1, perPage: 1).entries.first)
        #expect(top.amount == 7 && top.comments?.first?.body == "again!")
        #expect(await store.audioPacks().first?.cheerTotal == product.cheerTotal + 7)
        // A spend that moves nothing (no_debit) answers the same either way: the quirk does not take.
        let still = try await store.spendLeniently(user: "qa-alice", amount: 3, product: product.identifier, comment: nil, now: 6,
                                                   quirks: [.staleAnswer, .noDebit])
        #expect(still.answer == 1243 && still.took == [.noDebit])
    }

    @Test func staleAnswerAppliesAPurchaseAndAnswersTheBalanceBefore() async throws {
        let outcome = try await store.purchaseLeniently(user: "qa-alice", identifier: bundle, transaction: "7", quirks: [.staleAnswer])
        #expect(outcome == .init(before: 1250, after: 1450, answer: 1250, broke: [], took: [.staleAnswer]))
        #expect(try await state() == (1450, 230))
        await expect409("7")
    }

    @Test func theNewKindsParseListAndAreNamedInTheKindList() throws {
        for name in ["double_credit", "replay_credit", "no_credit", "stale_answer"] {
            let spec = try FaultSpec.parse("\(name),path=/api/v2/purchase_cheer,count=1")
            #expect(spec.kind.rawValue == name && spec.count == 1)
            let listed = String(decoding: try StubJSON.encode(ActiveFault(id: 1, spec: spec, remaining: 1)), as: UTF8.self)
            #expect(listed == #"{"count":1,"hits":0,"id":1,"kind":"\#(name)","path":"/api/v2/purchase_cheer","remaining":1}"#)
        }
        do {
            _ = try FaultSpec.parse("credit_thrice")
            Issue.record("an unknown kind parsed")
        } catch let error as FaultSpecError {
            #expect(["double_credit", "replay_credit", "no_credit", "stale_answer"].allSatisfy(error.message.contains))
        }
    }
}
