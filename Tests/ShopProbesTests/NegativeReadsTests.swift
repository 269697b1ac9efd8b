import Foundation
import ShopAPI
import Testing
@testable import ShopProbes
import ShopViewModels

/// `negative`'s judging of one case's reads (moved out of the executable, issue 44): what changed, what an
/// earlier case's write explains, and what an answer says about the case.
@Suite struct NegativeReadsTests {
    static let rain = "com.reiterate.pack.rain"

    func reads(balance: Int?, total: Int = 230, newest: String? = "h-1 (5 on x)", amount: Int? = 5, product: String? = "x", rain: Int? = 50,
               second: Int? = 1_000_000) -> NegativeReads {
        NegativeReads(balance: balance, history: .init(total: total, newest: newest, newestAmount: amount, newestProduct: product),
                      packs: [Self.rain: rain], second: second, requestIDs: ["rq"])
    }

    @Test func aRefusedCaseThatChangedTheBalanceChangedIt() {
        let effect = NegativeEffect(body: #"{"product": "com.reiterate.pack.rain", "amount": 5}"#, write: .spendCheer, bundles: CheerBundle.standIn)
        #expect(effect.balanceMoves == [-5] && effect.packRises == [5] && effect.product == Self.rain)
        let (changed, unknown, meanwhile) = reads(balance: 100).changes(to: reads(balance: 95), pack: Self.rain, effect: effect)
        #expect(changed == ["balance 100 → 95"] && unknown.isEmpty && meanwhile.isEmpty)
        // A read that failed is "not known", never a change.
        #expect(reads(balance: nil).changes(to: reads(balance: 95), pack: Self.rain, effect: effect).unknown == ["balance"])
    }

    @Test func aChangeAnEarlierAcceptedWriteExplainsIsThatWritesNotThisCases() {
        // The previous case's spend of 1 on an unknown pack was accepted; a lagging replica shows its entry only
        // in this case's reads after.
        let earlier = NegativeEffect(body: #"{"product": "com.reiterate.pack.negative-test-unknown", "amount": 1}"#, write: .spendCheer,
                                     bundles: CheerBundle.standIn)
        let before = reads(balance: 100)
        let after = reads(balance: 99, total: 231, newest: "s0375b867 (1 on com.reiterate.pack.negative-test-unknown)", amount: 1,
                          product: "com.reiterate.pack.negative-test-unknown")
        #expect(before.explained(after, by: [earlier], pack: Self.rain))
        // Not with nothing pending, and not when the entry is not that write's (another product or amount).
        #expect(!before.explained(after, by: [], pack: Self.rain))
        let other = reads(balance: 99, total: 231, newest: "s-2 (1 on com.reiterate.pack.rain)", amount: 1, product: Self.rain)
        #expect(!before.explained(other, by: [earlier], pack: Self.rain))
        // A balance that moved by more than the pending writes' sum is not theirs.
        #expect(!before.explained(reads(balance: 90, total: 231, newest: after.history?.newest, amount: 1,
                                        product: "com.reiterate.pack.negative-test-unknown"), by: [earlier], pack: Self.rain))
        // Two pending purchases of 50 explain a balance up by 100.
        let purchase = NegativeEffect(balanceMoves: [50], packRises: [])
        #expect(before.explained(reads(balance: 200), by: [purchase, purchase], pack: Self.rain))
    }

    @Test func a200WithAnErrorBodyIsToldByItsStatus() {
        let problem = DecodeProblem(path: "", reason: .errorBody(status: 200, code: "insufficient_balance", message: "no"))
        guard case let .accepted(said) = NegativeAnswer.of(.undecodable(problem, requestID: "rq", endpoint: SpendCheer.endpoint.key)) else {
            Issue.record("not accepted")
            return
        }
        #expect(said.hasPrefix("HTTP 200 with an error body (insufficient_balance); the contract says 402"), "\(said)")
        #expect(NegativeAnswer.of(.http(status: 402, message: nil, code: nil, requestID: nil, endpoint: SpendCheer.endpoint.key, retryAfter: nil)) == .refused(402))
    }
}
