import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// One outcome per write: a pure function of the write, its answer, what was known before and the
/// reads after, the same rules for every kind of write (only their numbers and words differ).
@Suite struct WriteOutcomeTests {
    let at = Date(timeIntervalSince1970: 1_795_305_600)
    let spend = ShopWrite.spend(product: "com.reiterate.pack.rain", amount: 7, comment: nil)
    let buy = ShopWrite.purchase(identifier: "com.reiterate.cheer.200", transactionID: 42)
    let cut = ShopAPIError.transport(.cutShort(status: 200, requestID: "rq-cut"), endpoint: .post("/api/v1/spend_cheer"))

    func verification(_ kind: ShopWrite, _ answer: Result<Int, ShopAPIError>, fresh: Int?, newest: CheerHistoryEntry? = nil, packAfter: Int? = nil,
                      balanceBefore: Int = 1_250, packs: [String]? = ["com.reiterate.pack.rain"]) -> Verification {
        // What the shop owes the write comes from its data: the balance, the packs and the bundles.
        var credit: Int?
        if let purchase = kind.purchase { credit = WriteExpectation.credit(purchase.identifier, bundles: CheerBundle.standIn) }
        let refusals = WriteExpectation.refusals(kind, balance: balanceBefore, packs: packs, bundles: CheerBundle.standIn)
        // The pack's name as the shop listed it when the write was sent.
        let name = kind.spend.map { _ in "Rain" }
        var v = Verification(kind: kind, at: at, before: .init(balance: balanceBefore, historyTotal: 230, packCheer: 100, refusals: refusals, packName: name,
                                                               credit: credit), answer: answer)
        v.balance = fresh.map { .read($0) } ?? .unread("the read failed")
        v.history = .read(.init(newest: newest, total: 231))
        v.packs = .read(packAfter)
        return v
    }

    @Test func aSpendThatWentThroughIsCheckedOnEveryCount() {
        let entry = CheerHistoryEntry(id: "h-231", creator: "c", amount: 7, product: "com.reiterate.pack.rain", date: at, comments: nil)
        let o = WriteOutcome.judge(verification(spend, .success(1_243), fresh: 1_243, newest: entry, packAfter: 107), requestID: "rq-1")
        #expect(o.applied == .yes && o.answer == .accepted && o.succeeded && o.checks.map(\.name) == ["spend-balance", "spend-history", "spend-pack-total"])
        #expect(o.text == "Spent 7 cheer on Rain. Balance 1,243 cheer. ✔ 3 checks passed")
        let off = WriteOutcome.judge(verification(spend, .success(1_243), fresh: 1_242, newest: entry, packAfter: 107), requestID: "rq-1")
        #expect(!off.succeeded && off.failed.map(\.line) == ["✗ spend-balance: expected 1,243 (1,250 − 7), got answered 1,243, read 1,242"])
    }

    @Test func aLostAnswerIsSettledByTheBalanceReadAgain() {
        let applied = WriteOutcome.judge(verification(spend, .failure(cut), fresh: 1_243), requestID: nil)
        #expect(applied.applied == .yes && applied.headline.hasSuffix("— the spend was applied (balance 1,243 = 1,250 − 7)."))
        let not = WriteOutcome.judge(verification(spend, .failure(cut), fresh: 1_250), requestID: nil)
        #expect(not.applied == .no && not.headline.hasSuffix("— the spend was not applied (balance 1,250, unchanged)."))
        let neither = WriteOutcome.judge(verification(spend, .failure(cut), fresh: 1_000), requestID: nil)
        #expect(neither.applied == .unknown && neither.failed.map(\.name) == ["spend-balance"])
        let unread = WriteOutcome.judge(verification(spend, .failure(cut), fresh: nil), requestID: nil)
        #expect(unread.applied == .unknown && unread.checks.isEmpty && unread.headline.hasSuffix("the balance could not be read again."))
        // What `spend`/`buy` exit with reads these: no answer (69) whether or not it was applied after all.
        #expect([applied, not, neither, unread].map(\.answer) == [.unanswered, .unanswered, .unanswered, .unanswered])
        // The same rules for a purchase, in its words; credited after all settles the lost purchase.
        let credited = WriteOutcome.judge(verification(buy, .failure(cut), fresh: 1_450), requestID: nil)
        #expect(credited.applied == .yes && credited.settlesLostPurchase && credited.headline.contains("transaction 42 will not be credited again"))
    }

    @Test func aRefusalChangesNothingAndAReplayIsTheServersOwnAnswer() {
        let low = ShopAPIError.http(status: 402, message: "too low", code: "insufficient_balance", requestID: "rq-402", endpoint: .post("/api/v1/spend_cheer"), retryAfter: nil)
        let refused = WriteOutcome.judge(verification(spend, .failure(low), fresh: 1_250), requestID: "rq-402")
        #expect(refused.applied == .no && refused.checks.map(\.name) == ["refused-unchanged", "insufficient-balance"] && refused.headline.hasSuffix("Nothing was spent (balance 1,250, unchanged)."))
        // A 402 while the balance (1,250 before and after) covers the spend is the shop's rule broken.
        #expect(refused.failed.map(\.name) == ["insufficient-balance"])
        #expect(refused.requestID == "rq-402" && !refused.succeeded && refused.answer == .refused)
        let replay = ShopAPIError.http(status: 409, message: "dup", code: "duplicate_transaction", requestID: "rq-409", endpoint: .post("/api/v2/purchase_cheer"), retryAfter: nil)
        let again = WriteOutcome.judge(verification(buy, .failure(replay), fresh: 1_250), requestID: "rq-409")
        #expect(again.applied == .no && again.checks.map(\.name) == ["replay-unchanged"] && again.failed.isEmpty)
    }

    // Expect from the shop, never from the input (issue 27, item 4).

    @Test func whatTheShopMustRefuseComesFromItsDataNotTheWordsTyped() {
        let rain = ["com.reiterate.pack.rain"]
        #expect(WriteExpectation.refusals(spend, balance: 1_250, packs: rain, bundles: CheerBundle.standIn).isEmpty)
        #expect(WriteExpectation.refusals(spend, balance: 5, packs: rain, bundles: CheerBundle.standIn) == [.overspend(amount: 7, balance: 5)])
        #expect(WriteExpectation.refusals(spend, balance: 1_250, packs: ["com.reiterate.pack.other"], bundles: CheerBundle.standIn)
                == [.unknownPack(product: "com.reiterate.pack.rain")])
        // Not known (no live balance, no readable pack list): nothing is expected, no finding invented.
        #expect(WriteExpectation.refusals(spend, balance: nil, packs: nil, bundles: CheerBundle.standIn).isEmpty)
        let zero = ShopWrite.spend(product: "com.reiterate.pack.rain", amount: 0, comment: nil)
        #expect(WriteExpectation.refusals(zero, balance: 1_250, packs: rain, bundles: CheerBundle.standIn) == [.notPositive(amount: 0)])
        // A bundle's credit is the environment's list's, whatever its name says.
        #expect(WriteExpectation.credit("com.reiterate.cheer.200", bundles: CheerBundle.standIn) == 200)
        #expect(WriteExpectation.credit("com.reiterate.cheer.7", bundles: CheerBundle.standIn) == nil)
        #expect(WriteExpectation.credit("com.reiterate.cheer.-50", bundles: CheerBundle.standIn) == nil)
        let gold = [CheerBundle(identifier: "com.acme.gold", cheer: 750)]
        #expect(WriteExpectation.credit("com.acme.gold", bundles: gold) == 750)
        #expect(WriteExpectation.refusals(.purchase(identifier: "com.reiterate.cheer.200", transactionID: 1), balance: nil, packs: nil, bundles: gold)
                == [.notABundle(identifier: "com.reiterate.cheer.200")])
    }

    @Test func anOverspendTheServerTookLeadsTheVerdictAndNothingOfItIsTicked() {
        let entry = CheerHistoryEntry(id: "h-231", creator: "c", amount: 7, product: "com.reiterate.pack.rain", date: at, comments: nil)
        let o = WriteOutcome.judge(verification(spend, .success(-2), fresh: -2, newest: entry, packAfter: 107, balanceBefore: 5), requestID: "rq-1")
        #expect(o.applied == .yes && o.answer == .accepted && !o.succeeded)
        #expect(o.acceptedRefusable?.name == "refusal-expected" && o.checks.first?.name == "refusal-expected")
        #expect(o.text.hasPrefix("The server accepted a spend it must refuse: 7 cheer is more than the balance (5 cheer). Balance -2 cheer. ✗ refusal-expected"))
        // Every value the spend changed is held to "unchanged": none of them is a ✔.
        #expect(o.checks.map(\.name) == ["refusal-expected", "spend-balance", "spend-history", "spend-pack-total"])
        #expect(o.checks.allSatisfy { $0.outcome == .failed }, "\(o.checks.map(\.line))")
        #expect(o.failed[1].line == "✗ spend-balance: expected 5 (unchanged: the spend must be refused), got -2")
    }

    @Test func anOverspendIsJudgedOnTheBalanceAfterTheWriteNotAnOldRead() {
        // The balance read before said 5; the phone bought 200 meanwhile; the spend of 7 is taken and leaves
        // 198: a correct server. No finding, and the usual checks run against what can be told.
        let o = WriteOutcome.judge(verification(spend, .success(198), fresh: 198, balanceBefore: 5), requestID: "rq-1")
        #expect(o.acceptedRefusable == nil, "\(o.checks.map(\.line))")
        // A pack that came into the list meanwhile (the list read after the spend has it): not unknown.
        let added = WriteOutcome.judge(verification(spend, .success(1_243), fresh: 1_243, packAfter: 57, packs: ["com.reiterate.pack.other"]), requestID: "rq-2")
        #expect(added.acceptedRefusable == nil, "\(added.checks.map(\.line))")
    }

    @Test func aPurchaseOfWhatIsNotABundleIsExpectedRefused() {
        // com.reiterate.cheer.7 credited 7: the name says 7, the environment sells no such bundle.
        let seven = ShopWrite.purchase(identifier: "com.reiterate.cheer.7", transactionID: 43)
        let o = WriteOutcome.judge(verification(seven, .success(1_257), fresh: 1_257), requestID: "rq-7")
        #expect(o.acceptedRefusable != nil && !o.checks.contains { $0.outcome == .passed })
        #expect(o.failed.map(\.name) == ["refusal-expected", "purchase-balance"])
        #expect(o.headline.hasPrefix("The server accepted a purchase it must refuse: “com.reiterate.cheer.7” is not a bundle this environment sells."))
        // Refused, as it should be: no finding.
        let bad = ShopAPIError.http(status: 400, message: "unknown", code: "unknown_product", requestID: "rq-400", endpoint: .post("/api/v2/purchase_cheer"), retryAfter: nil)
        let refused = WriteOutcome.judge(verification(seven, .failure(bad), fresh: 1_250), requestID: "rq-400")
        #expect(refused.acceptedRefusable == nil && refused.failed.isEmpty && refused.answer == .refused)
        // A spend on a pack not in the list, taken: flagged the same way.
        let unknown = WriteOutcome.judge(verification(spend, .success(1_243), fresh: 1_243, packs: ["com.reiterate.pack.other"]), requestID: "rq-2")
        #expect(unknown.acceptedRefusable?.expected == "a refusal (4xx): “com.reiterate.pack.rain” is not in the pack list")
    }

    @Test func theCreditExpectedIsTheEnvironmentsBundle() {
        var state = AppState(context: ShopContext(environment: "staging", baseURL: "http://shop.test", user: "qa-alice",
                                                  bundles: [CheerBundle(identifier: "com.acme.gold", cheer: 750)]))
        _ = ShopUpdate.send(.purchase(identifier: "com.acme.gold", transactionID: 9), summary: "", &state)
        #expect(state.write.before?.credit == 750 && state.write.before?.refusals == [])
        var other = AppState(context: alice)
        _ = ShopUpdate.send(.purchase(identifier: "com.acme.gold", transactionID: 9), summary: "", &other)
        #expect(other.write.before?.credit == nil && other.write.before?.refusals == [.notABundle(identifier: "com.acme.gold")])
    }
}

/// Every check the tool can name — the contract's, the watch's and the writes' — is explained in the
/// docs under its name (docs/checks.md, docs/watch.md).
@Suite struct CheckNamesTests {
    @Test func everyCheckIsDocumentedByName() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs")
        let text = try String(contentsOf: docs.appendingPathComponent("checks.md"), encoding: .utf8)
            + String(contentsOf: docs.appendingPathComponent("watch.md"), encoding: .utf8)
        let names = ContractCheck.allCases.map(\.rawValue) + WatchCheck.allCases.map(\.rawValue) + WriteCheck.allCases.map(\.rawValue)
        #expect(names.count == Set(names).count, "two kinds of check share a name")
        let missing = names.filter { !text.contains("`\($0)`") }
        #expect(missing.isEmpty, "not in docs/checks.md or docs/watch.md: \(missing)")
    }
}
