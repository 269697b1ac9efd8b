import AppStoreRecord
import Foundation
import ShopAPI
@testable import ShopLedger
import Testing

/// The ledger's verdicts on hand-made histories and exchanges: each verdict and blame, and what must
/// not be judged (a record that did not verify, an amount not seen, a refund no read spans).
@Suite struct LedgerTests {
    static let catalog = ["com.reiterate.cheer.100": 100, "com.reiterate.cheer.200": 200, "com.reiterate.cheer.500": 500]
    static let t0 = Date(timeIntervalSince1970: 1_790_000_000)

    static func paid(_ id: String, _ product: String = "com.reiterate.cheer.200", quantity: Int = 1, type: String = "Consumable",
                     revoked: Date? = nil) -> CheckedRecord {
        .verified(AppStoreTransaction(transactionID: id, bundleID: "com.reiterate.app", productID: product, type: type, quantity: quantity,
                                      purchaseDate: t0, signedDate: t0, revocationDate: revoked, revocationReason: revoked == nil ? nil : 0))
    }

    static func balance(_ value: Int, at seconds: Double, user: String = "qa-alice") -> ShopEvent {
        ShopEvent(kind: .balance, at: t0 + seconds, user: user, status: 200, balance: value, requestID: "read-\(Int(seconds))", source: "tool")
    }

    static func post(_ id: UInt64, _ product: String = "com.reiterate.cheer.200", status: Int?, answer: Int? = nil, at seconds: Double,
                     user: String = "qa-alice", request: String? = nil) -> ShopEvent {
        ShopEvent(kind: .purchase(.init(identifier: product, transactionID: .number(id))), at: t0 + seconds, user: user, status: status,
                  balance: status == 200 ? answer : nil, requestID: request ?? "post-\(Int(seconds))", source: "app")
    }

    static func only(_ ledger: Ledger) throws -> LedgerLine {
        try #require(ledger.lines.count == 1, "lines: \(ledger.lines)")
        return ledger.lines[0]
    }

    @Test func aPurchaseCreditedByItsBundleTimesQuantityIsCredited() throws {
        let ledger = Ledger.judge(history: [Self.paid("2000000000000001", quantity: 2)], lookups: [:],
                                  events: [Self.balance(100, at: 1), Self.post(2_000_000_000_000_001, status: 200, answer: 500, at: 2)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .credited && line.blame == nil && !line.isFinding)
        #expect(line.words == "credited 400" && line.requestIDs == ["post-2"] && line.quantity == 2)
        #expect(ledger.findings == 0)
    }

    @Test func aQuantityCreditedOnceIsACreditMismatchOfTheServer() throws {
        let ledger = Ledger.judge(history: [Self.paid("2000000000000001", quantity: 2)], lookups: [:],
                                  events: [Self.balance(100, at: 1), Self.post(2_000_000_000_000_001, status: 200, answer: 300, at: 2)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .creditMismatch && line.blame == .server && line.isFinding)
        #expect(line.words.contains("credited 200") && line.words.contains("= 400"))
    }

    /// Issue 44: the ledger left out a credit made for the identifier `42` (a JSON number, not text): its body
    /// did not read as a purchase, so the credit was never weighed.
    @Test func aCreditForAnIdentifierSentAsANumberIsWeighed() throws {
        let body = #"{"identifier": 42, "transaction_id": 7}"#
        let event = try #require(ShopEvents.event(.purchaseCheer, requestBody: body, status: 200, responseBody: #"{"balance": 300}"#, user: "qa-alice",
                                                  at: Self.t0 + 2, end: nil, requestID: "post-42", source: "app"))
        #expect(event.purchase == ShopWrite.Purchase(identifier: "42", transactionID: 7))
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.balance(100, at: 1), event], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.transactionID == "7" && line.requestIDs == ["post-42"] && line.isFinding && line.blame == .app, "\(line)")
        #expect(line.words == "credited the App Store's 200, but the app posted it as 42, not com.reiterate.cheer.200", "\(line.words)")
        // An identifier that is neither text nor a whole number names no product: the post is one whose body could not be read.
        for odd in ["4.5", "null", "{}"] {
            let e = ShopEvents.event(.purchaseCheer, requestBody: #"{"identifier": \#(odd), "transaction_id": 7}"#, status: 200, responseBody: nil,
                                     user: "qa-alice", at: Self.t0, end: nil, requestID: "p", source: "app")
            #expect(e?.kind == .unreadablePurchase, "\(odd)")
        }
    }

    @Test func aPostUnderAnotherProductIsACreditMismatch() throws {
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:],
                                  events: [Self.balance(0, at: 1), Self.post(7, "com.reiterate.cheer.500", status: 200, answer: 500, at: 2)],
                                  catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .creditMismatch && line.blame == .server)
        #expect(line.words.contains("posted as com.reiterate.cheer.500") && line.words.contains("credited 500"))
    }

    @Test func twoCreditsOfOneTransactionAreCreditedTwice() throws {
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:],
                                  events: [Self.post(7, status: 200, answer: 200, at: 1), Self.post(7, status: 200, answer: 400, at: 2)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .creditedTwice && line.blame == .server && line.requestIDs == ["post-1", "post-2"])
    }

    @Test func aPurchaseNeverPostedIsNotCreditedByTheAppWhenTheExchangesCoverIt() throws {
        // The exchanges began before the purchase and went on past the grace period: it was never posted.
        let covered = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.balance(0, at: -1), Self.balance(0, at: 10)], catalog: Self.catalog)
        let line = try Self.only(covered)
        #expect(line.verdict == .notCredited && line.blame == .app && line.isFinding && line.requestIDs.isEmpty)
        // They began after it (it may have been posted before), or end within the grace period: not seen, no finding.
        for events in [[Self.balance(0, at: 1), Self.balance(0, at: 60)], [Self.balance(0, at: -1), Self.balance(0, at: 3)], []] {
            let unseen = try Self.only(Ledger.judge(history: [Self.paid("7")], lookups: [:], events: events, catalog: Self.catalog))
            #expect(unseen.verdict == .notSeen && unseen.blame == nil && !unseen.isFinding, "\(events)")
        }
    }

    @Test func aPostAnswered409IsACreditBeforeNotARefusal() throws {
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.post(7, status: 409, at: 1)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .credited && !line.isFinding && line.words.contains("answered 409"))
    }

    @Test func aRefusalBlamesTheAppWhenItPostedAnotherProductAndNoOneForSignIn() throws {
        let wrong = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.post(7, "com.reiterate.cheer.500", status: 400, at: 1)], catalog: Self.catalog)
        #expect(try Self.only(wrong).blame == .app && (try Self.only(wrong).words.contains("posted it as com.reiterate.cheer.500")))
        let signIn = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.post(7, status: 401, at: 1)], catalog: Self.catalog)
        #expect(try Self.only(signIn).blame == .unknown)
    }

    @Test func anAmountNeedsANamedUserAndABaselineThatEndedBeforeThePost() throws {
        // No user named (production: the token names the user): the amount is not judged.
        var anonymous = Self.post(7, status: 200, answer: 300, at: 2)
        anonymous.user = nil
        var before = Self.balance(100, at: 1)
        before.user = nil
        let line = try Self.only(Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [before, anonymous], catalog: Self.catalog))
        #expect(line.verdict == .credited && !line.isFinding && line.words.contains("not seen"))
        // A read still out when the post began may have been served after it.
        var late = Self.balance(100, at: 1)
        late.end = Self.t0 + 2.5
        let overlapping = try Self.only(Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [late, Self.post(7, status: 200, answer: 300, at: 2)],
                                                     catalog: Self.catalog))
        #expect(overlapping.verdict == .credited && !overlapping.isFinding)
    }

    @Test func aCreditAfterTheRefundIsTheServersFault() throws {
        let ledger = Ledger.judge(history: [Self.paid("7", revoked: Self.t0 + 1)], lookups: [:], events: [Self.post(7, status: 200, answer: 200, at: 2)],
                                  catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .refunded && line.blame == .server && line.isFinding && line.words.contains("then credited"))
    }

    @Test func aPurchaseRefusedByTheBackendIsNotCreditedByTheServer() throws {
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.post(7, status: 400, at: 1), Self.post(7, status: 503, at: 2)],
                                  catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .notCredited && line.blame == .server && line.words.contains("(400, 503)"))
    }

    @Test func aPostWhoseAnswerWasLostBlamesNoOne() throws {
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:], events: [Self.post(7, status: nil, at: 1)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .notCredited && line.blame == .unknown && line.words.contains("not known"))
    }

    @Test func anAmountIsNotJudgedAcrossAWriteWithNoBalanceInItsAnswer() throws {
        let spend = ShopEvent(kind: .spend, at: Self.t0 + 2, user: "qa-alice", status: 400, balance: nil, requestID: "s", source: "tool")
        let ledger = Ledger.judge(history: [Self.paid("7")], lookups: [:],
                                  events: [Self.balance(100, at: 1), spend, Self.post(7, status: 200, answer: 250, at: 3)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .credited && !line.isFinding && line.words.contains("not seen"))
        // Another user's balance between is not this user's start.
        let other = Ledger.judge(history: [Self.paid("7")], lookups: [:],
                                 events: [Self.balance(100, at: 1), Self.balance(5, at: 2, user: "qa-bob"), Self.post(7, status: 200, answer: 250, at: 3)],
                                 catalog: Self.catalog)
        #expect(try Self.only(other).verdict == .creditMismatch)
    }

    @Test func aRefundTheBackendKeptIsAFindingAndOneTakenBackIsNot() throws {
        let revoked = Self.t0 + 10
        let credit = [Self.balance(0, at: 1), Self.post(7, status: 200, answer: 200, at: 2)]
        let kept = Ledger.judge(history: [Self.paid("7", revoked: revoked)], lookups: [:], events: credit + [Self.balance(200, at: 20)], catalog: Self.catalog)
        let keptLine = try Self.only(kept)
        #expect(keptLine.verdict == .refunded && keptLine.blame == .server && keptLine.isFinding && keptLine.words.contains("kept the 200"))
        // Read 1 s after the refund: the backend may not have heard of it yet. Not judged, no finding.
        let early = try Self.only(Ledger.judge(history: [Self.paid("7", revoked: revoked)], lookups: [:], events: credit + [Self.balance(200, at: 11)],
                                               catalog: Self.catalog))
        #expect(early.verdict == .refunded && early.blame == nil && !early.isFinding && early.words.contains("not judged yet"))
        // The latest read after it is the backend's latest word: an early read and a later one that shows the cheer taken back.
        let later = try Self.only(Ledger.judge(history: [Self.paid("7", revoked: revoked)], lookups: [:],
                                               events: credit + [Self.balance(200, at: 11), Self.balance(0, at: 20)], catalog: Self.catalog))
        #expect(later.words.contains("took back 200") && !later.isFinding)
        let taken = Ledger.judge(history: [Self.paid("7", revoked: revoked)], lookups: [:], events: credit + [Self.balance(0, at: 11)], catalog: Self.catalog)
        let takenLine = try Self.only(taken)
        #expect(takenLine.verdict == .refunded && !takenLine.isFinding && takenLine.words.contains("took back 200"))
        // No read after the refund: not judged either way.
        let unseen = Ledger.judge(history: [Self.paid("7", revoked: revoked)], lookups: [:], events: credit, catalog: Self.catalog)
        #expect(try Self.only(unseen).words.contains("was not seen") && !(try Self.only(unseen).isFinding))
        // A revocation the refund listing has but the history's older record lacks still counts.
        let late = Ledger.judge(history: [Self.paid("7")], refunds: [Self.paid("7", revoked: revoked)], lookups: [:],
                                events: credit + [Self.balance(200, at: 11)], catalog: Self.catalog)
        #expect(try Self.only(late).verdict == .refunded)
    }

    @Test func creditsWithNoPaymentAreNotPaidWithTheirReason() throws {
        let events = [
            Self.post(99, status: 200, answer: 0, at: 0.5),
            Self.post(11, status: 200, answer: 200, at: 1), Self.post(12, status: 200, answer: 400, at: 2), Self.post(13, status: 200, answer: 600, at: 3),
            ShopEvent(kind: .purchase(.init(identifier: "com.reiterate.cheer.200", transactionID: .text("abc"))), at: Self.t0 + 4, user: "qa-alice",
                      status: 200, balance: 800, requestID: "t", source: "app"),
            Self.post(14, status: 409, at: 5),
        ]
        #expect(Ledger.lookupsNeeded(history: [Self.paid("99")], events: events) == ["11", "12", "13"])
        let lookups: [String: Lookup] = ["11": .unknown, "12": .record(Self.paid("12")), "13": .record(Self.paid("13", type: "Non-Consumable"))]
        let ledger = Ledger.judge(history: [Self.paid("99")], lookups: lookups, events: events, catalog: Self.catalog)
        let byID = Dictionary(uniqueKeysWithValues: ledger.lines.map { ($0.transactionID, $0) })
        #expect(byID["11"]?.verdict == .notPaid && byID["11"]?.words.contains("does not know") == true)
        #expect(byID["12"]?.verdict == .notPaid && byID["12"]?.words.contains("another customer") == true)
        #expect(byID["13"]?.verdict == .notPaid && byID["13"]?.words.contains("Non-Consumable") == true)
        #expect(byID["\"abc\""]?.verdict == .notPaid && byID["\"abc\""]?.blame == .server)
        // The refused post (409) is no credit: nothing is said of 14. The paid 99 was credited.
        #expect(byID["14"] == nil && byID["99"]?.verdict == .credited)
        #expect(ledger.findings == 4)
        // Another customer's purchase credited to a user who posted none of this customer's: not this ledger's.
        let bob = Ledger.judge(history: [Self.paid("99")], lookups: ["12": .record(Self.paid("12"))],
                               events: [Self.post(99, status: 200, answer: 0, at: 0.5), Self.post(12, status: 200, answer: 400, at: 2, user: "qa-bob")],
                               catalog: Self.catalog)
        #expect(bob.lines.first { $0.transactionID == "12" }?.verdict == .notChecked && bob.findings == 0)
    }

    @Test func aCreditThatCouldNotBeLookedUpIsNotCheckedNotAFinding() throws {
        let ledger = Ledger.judge(history: [], lookups: ["11": .failed(.rateLimited(until: nil))], events: [Self.post(11, status: 200, answer: 1, at: 1),
                                                                                                          Self.post(12, status: 200, answer: 2, at: 2)],
                                  catalog: Self.catalog)
        #expect(ledger.lines.map(\.verdict) == [.notChecked, .notChecked] && ledger.findings == 0 && ledger.unchecked == 2)
    }

    @Test func aRecordThatDidNotVerifyGivesOneFindingAndNoVerdict() throws {
        let rejected = CheckedRecord.notVerified(NotVerified(claimedTransactionID: "7", reason: .record(.badSignature)))
        // The backend credited 7: with its only record unbelieved, 7 is looked up, not taken as paid.
        let events = [Self.post(7, status: 200, answer: 200, at: 1)]
        #expect(Ledger.lookupsNeeded(history: [rejected], events: events) == ["7"])
        let ledger = Ledger.judge(history: [rejected], lookups: ["7": .record(rejected)], events: events, catalog: Self.catalog)
        #expect(ledger.lines.map(\.verdict) == [.notVerified, .notVerified])
        #expect(ledger.lines.allSatisfy { $0.isFinding && $0.blame == nil && $0.words.contains("signature") })
        let bundle = CheckedRecord.notVerified(NotVerified(claimedTransactionID: "8", reason: .bundle(found: "com.other.app", expected: "com.reiterate.app")))
        #expect(try Self.only(Ledger.judge(history: [bundle], lookups: [:], events: [], catalog: Self.catalog)).words.contains("com.other.app"))
    }

    @Test func aProductOutsideTheCatalogIsCreditedWithoutAJudgedAmount() throws {
        let ledger = Ledger.judge(history: [Self.paid("7", "com.reiterate.cheer.999")], lookups: [:],
                                  events: [Self.balance(0, at: 1), Self.post(7, "com.reiterate.cheer.999", status: 200, answer: 1, at: 2)], catalog: Self.catalog)
        let line = try Self.only(ledger)
        #expect(line.verdict == .credited && !line.isFinding && line.words.contains("not among"))
    }
}

/// `--probe`'s answers settle the lines they concern.
@Suite struct ProbeTests {
    static func ledger() -> Ledger {
        Ledger.judge(history: [LedgerTests.paid("1"), LedgerTests.paid("2"), LedgerTests.paid("3"), LedgerTests.paid("4")], lookups: [:],
                     events: [LedgerTests.balance(0, at: -1), LedgerTests.balance(0, at: 1), LedgerTests.post(1, status: 200, answer: 200, at: 2),
                              LedgerTests.post(4, status: 400, at: 3), LedgerTests.balance(200, at: 10)],
                     catalog: LedgerTests.catalog)
    }

    @Test func a200IsAPurchaseNeverCreditedAnd409OnANeverPostedOneIsCreditedElsewhere() throws {
        let before = Self.ledger()
        #expect(before.lines.map(\.verdict) == [.credited, .notCredited, .notCredited, .notCredited])
        #expect(before.lines.map(\.blame) == [nil, .app, .app, .server])
        let after = before.probed([
            "1": .alreadyCredited(requestID: "p1"), "2": .credited(requestID: "p2"), "3": .alreadyCredited(requestID: "p3"),
            "4": .refused(status: 400, code: "unverified_transaction", requestID: "p4"),
        ])
        let byID = Dictionary(uniqueKeysWithValues: after.lines.map { ($0.transactionID, $0) })
        #expect(byID["1"]?.verdict == .credited && byID["1"]?.isFinding == false && byID["1"]?.words.hasSuffix("answered 409") == true)
        #expect(byID["1"]?.requestIDs == ["post-2", "p1"])
        #expect(byID["2"]?.verdict == .notCredited && byID["2"]?.blame == .app && byID["2"]?.words.hasPrefix("paid, never credited; credited now by the probe") == true)
        #expect(byID["3"]?.verdict == .credited && byID["3"]?.isFinding == false && byID["3"]?.words.contains("not in the HAR files") == true)
        #expect(byID["4"]?.verdict == .notCredited && byID["4"]?.blame == .server && byID["4"]?.words.contains("400 unverified_transaction") == true)
        #expect(after.findings == 2 && before.findings == 3)
        // A credited one whose repeat is credited again: a replay, the server's.
        let replayed = before.probed(["1": .credited(requestID: "p1")]).lines.first { $0.transactionID == "1" }
        #expect(replayed?.verdict == .creditedTwice && replayed?.blame == .server && replayed?.isFinding == true)
    }

    /// Issue 44: the probe's all-clear covered neither refunds nor amounts.
    @Test func theProbeJudgesARefundedPurchaseAndSaysWhichAmountsItDidNotSee() throws {
        let before = Self.ledger()
        let after = before.probed(["3": .alreadyCredited(requestID: "p3")])
        let three = try #require(after.lines.first { $0.transactionID == "3" })
        // Credited before by a post the HAR files lack: credited, but its amount is not judged, and the
        // ledger's all-clear does not cover it.
        #expect(three.verdict == .credited && three.amountUnjudged && after.amountsUnjudged >= 1)
        // A refunded purchase the backend credits when the probe posts it again: the server's finding.
        let refunded = Ledger.judge(history: [LedgerTests.paid("9", revoked: LedgerTests.t0 + 60)], lookups: [:],
                                    events: [LedgerTests.balance(0, at: -5), LedgerTests.balance(0, at: 120)], catalog: LedgerTests.catalog)
        let credited = try LedgerTests.only(refunded.probed(["9": .credited(requestID: "p9")], refunded: ["9"]))
        #expect(credited.isFinding && credited.blame == .server && credited.words.contains("must be refused"))
        let refused = try LedgerTests.only(refunded.probed(["9": .refused(status: 400, code: "refunded", requestID: "p9")], refunded: ["9"]))
        #expect(!refused.isFinding && refused.words.contains("as a refunded transaction must be"))
    }

    /// Issue 44: "never credited" is said of a refunded purchase only where the exchanges cover it.
    @Test func aRefundWithNoCreditSeenIsNotSeenUnlessTheExchangesCoverIt() throws {
        let history = [LedgerTests.paid("9", revoked: LedgerTests.t0 + 60)]
        // The exchanges begin after the purchase: a credit before them may have happened.
        let late = try LedgerTests.only(Ledger.judge(history: history, lookups: [:], events: [LedgerTests.balance(0, at: 30), LedgerTests.balance(0, at: 90)],
                                                     catalog: LedgerTests.catalog))
        #expect(late.verdict == .notSeen && !late.isFinding && late.words.contains("was not seen") && !late.words.contains("never credited"))
        // From before the purchase to past the refund: never credited is a fact.
        let covered = try LedgerTests.only(Ledger.judge(history: history, lookups: [:], events: [LedgerTests.balance(0, at: -5), LedgerTests.balance(0, at: 90)],
                                                        catalog: LedgerTests.catalog))
        #expect(covered.verdict == .refunded && covered.words.contains("never credited (the exchanges given cover it)"))
    }
}
