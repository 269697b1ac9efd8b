import Foundation
import ShopAPI
import ShopViewModels
import StubCore
import StubServer
import Testing
@testable import ShopProbes

/// `negative`'s runner, out of the executable (issue 44, item 5): run against the stand-in in this process on
/// 127.0.0.1, its events and tally are what the command prints and exits on.
@Suite(.serialized) struct NegativeRunTests {
    static let bundles = [CheerBundle(identifier: "com.reiterate.cheer.50", cheer: 50)]

    /// Runs the cases named (every case when nil) against a fresh stand-in with `faults`.
    static func run(_ names: Set<String>?, faults: [String] = [], token: String = "dev-token") async throws
        -> (tally: NegativeRun.Tally, lines: [NegativeRun.Line], warnings: [String]) {
        let cases = NegativeCase.catalogue(bundles: bundles).filter { names?.contains($0.name) ?? true }
        var lines: [NegativeRun.Line] = []
        var warnings: [String] = []
        let tally = try await withStandIn(faults: faults, token: token) { client, _ in
            try await NegativeRun(client: client, user: "qa-alice", second: "qa-whale", bundles: bundles, pacer: Pacer(perSecond: 0), appStore: nil)
                .run(cases) { event in
                    switch event {
                    case let .line(line, _): lines.append(line)
                    case let .warning(text): warnings.append(text)
                    case let .finding(finding): warnings.append(finding.warningLine)
                    case .note: break
                    }
                }
        }
        return (tally, lines, warnings)
    }

    /// A shop that refuses what it must: every case refused with a 4xx, nothing changed, no finding.
    @Test func aShopThatRefusesEverythingItMustGivesNoFinding() async throws {
        let (tally, lines, warnings) = try await Self.run(nil)
        #expect(lines.count == NegativeCase.catalogue(bundles: Self.bundles).count)
        #expect(lines.allSatisfy { $0.verdict == "refused" && $0.refused && ($0.status ?? 0) / 100 == 4 && $0.changed.isEmpty }, "\(lines.filter { $0.verdict != "refused" })")
        #expect(tally.findings == 0 && tally.notJudged == 0 && tally.lag == nil && warnings.isEmpty)
    }

    /// A shop that takes a spend on an unknown pack: that case, and only it, is a finding, with what changed;
    /// the next cases' reads do not blame it on them.
    @Test func anAcceptedCaseIsTheOneFinding() async throws {
        let (tally, lines, warnings) = try await Self.run(["unknown-pack", "overspend", "amount-zero"],
                                                          faults: ["accept_unknown_product,path=/api/v1/spend_cheer"])
        #expect(lines.map(\.name) == ["unknown-pack", "overspend", "amount-zero"])
        let accepted = try #require(lines.first)
        #expect(accepted.verdict == "accepted" && accepted.finding != nil && accepted.changed.contains { $0.contains("balance") })
        // `--json`'s line carries the one finding's record too.
        #expect(accepted.shopFinding?.kind == .write(.refusalExpected) && accepted.shopFinding?.subject == "negative unknown-pack")
        let json = try Output.jsonLine(accepted)
        #expect(json.contains(#""shop_finding":{"#) && json.contains(#""kind":"refusal-expected""#), "\(json)")
        #expect(lines.dropFirst().allSatisfy { $0.verdict == "refused" && $0.changed.isEmpty })
        #expect(tally.findings == 1 && warnings.count == 1 && warnings[0].hasPrefix("warning: negative unknown-pack: [refusal-expected] expected "), "\(warnings)")
        #expect(warnings.first?.contains(" refused (") == true && warnings.first?.contains(", got accepted (") == true && warnings.first?.contains(" (the server's fault; request id rq-") == true, "\(warnings)")
    }

    /// No baseline, no case: a balance that cannot be read sends nothing and says why, with the answer's failure.
    @Test func anUnreadableBalanceSendsNoCase() async throws {
        await #expect(throws: NegativeRun.NotSent.self) { try await Self.run(["overspend"], token: "not-a-token") }
        do {
            _ = try await Self.run(["overspend"], token: "not-a-token")
        } catch let notSent as NegativeRun.NotSent {
            #expect(notSent.failure?.status == 401 && notSent.words.hasSuffix("; no case was sent"))
        }
    }

    @Test func thePacerSpacesTurns() async {
        let pacer = Pacer(perSecond: 50)
        let start = ContinuousClock.now
        for _ in 0..<4 { await pacer.turn() }
        #expect(ContinuousClock.now - start >= .milliseconds(60))  // three gaps of 20 ms: a floor, not a timing target
    }
}
