import Foundation
import JSONTokens
import ShopAPI
@testable import ShopCompare
import Testing
@testable import ShopProbes

/// `replay`'s reads, out of the executable (issue 44, item 5), against the stand-in in this process.
@Suite struct ReplayTests {
    @Test func aReadThatStillAnswersTheSameMatchesAndOneThatMovedIsChangedWithItsDifference() async throws {
        let (same, moved) = try await withStandIn { client, _ in
            let recorded = RecordedRead(try await client.sendRecorded(Balance(user: "qa-alice")), as: .balance)
            let same = try await Replay.settled(recorded, as: nil, client: client, rules: IgnoreRules())
            _ = try await client.send(SpendCheer(amount: 3, product: "com.reiterate.pack.rain", user: "qa-alice"))
            let moved = try await Replay.settled(recorded, as: nil, client: client, rules: IgnoreRules())
            return (same, moved)
        }
        #expect(same.outcome == .matched && same.differences.isEmpty && same.reads.isEmpty)
        #expect(moved.outcome == .changed && moved.differences.count == 1)
        let text = Replay.text([same, moved], writes: [RecordedWrite(method: "POST", target: "/api/v1/spend_cheer", requestID: "rq-w")],
                               environment: "local", baseURL: "http://127.0.0.1:1")
        #expect(text.hasPrefix("Replayed on LOCAL (http://127.0.0.1:1):\n"))
        #expect(text.contains("matched   GET /api/v1/balance?user_id=qa-alice") && text.contains("changed   GET /api/v1/balance?user_id=qa-alice"))
        #expect(text.contains("not sent  POST /api/v1/spend_cheer  (a write: replay never sends one)"))
        #expect(text.hasSuffix("2 reads: 1 matched, 1 changed, 0 failed; 1 write not sent\n"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(Replay.json([same, moved], writes: []).utf8)) as? [String: Any])
        let reads = try #require(json["reads"] as? [[String: Any]])
        #expect(reads.map { $0["outcome"] as? String } == ["matched", "changed"])
        #expect((reads[1]["differences"] as? [Any])?.count == 1)
    }
}
