import Foundation
import ShopAPI
import Testing

/// The one finding type (issue 44, item 3): every judge's finding is one `ShopFinding`, worded here once.
@Suite struct ShopFindingTests {
    let watch = ShopFinding(kind: .watch(.debitWithoutEntry), subject: "watch of qa-alice", blame: .server, expected: "a new entry for the debit of 5",
                            actual: "balance 1,250 → 1,245, no new entry", requestIDs: ["rq-b1", "rq-h1", "rq-b2", "rq-h2"],
                            causedBy: "possibly caused by [entry-vanished] (above)")

    @Test func everyJudgesKindIsOneNamespace() {
        #expect(ShopFinding(Finding(check: .schema, expected: "a", actual: "b"), subject: "GET /x", requestID: "rq-1").kind.name == "schema")
        #expect(CheckID.write(.spendBalance).name == "spend-balance" && CheckID.watch(.packTotal).name == "pack-total")
        #expect(CheckID.ledger(.notCredited).name == "ledger-not-credited")
    }

    @Test func theWordsAreOneLineWithItsBlameIdsAndCause() {
        #expect(watch.verdict(passed: false) == "✗ debit-without-entry: expected a new entry for the debit of 5, got balance 1,250 → 1,245, no new entry")
        #expect(watch.verdict(passed: true) == "✔ debit-without-entry")
        #expect(watch.warningLine == "warning: watch of qa-alice: [debit-without-entry] expected a new entry for the debit of 5, got balance 1,250 → 1,245, "
                + "no new entry (the server's fault; request ids rq-b1, rq-h1, rq-b2, rq-h2; possibly caused by [entry-vanished] (above))\n")
        #expect(watch.line.hasPrefix("✗ debit-without-entry (the server's fault): expected ") && watch.line.hasSuffix(
            "— watch of qa-alice, request ids rq-b1, rq-h1, rq-b2, rq-h2; possibly caused by [entry-vanished] (above)"))
        // A contract finding on the tool's own answer blames no one in its words, as before; its core is `Finding.line`'s.
        let own = Finding(check: .schema, expected: "balance: integer", actual: "string \"12\"")
        var mine = ShopFinding(own, subject: "GET /api/v1/balance", requestID: "rq-9")
        mine.blame = nil
        #expect(mine.warningLine == "warning: GET /api/v1/balance: \(own.line) (request id rq-9)\n")
    }

    @Test func serverTextNeverReachesTheLineRaw() {
        let hostile = ShopFinding(kind: .contract(.schema), subject: "GET /x\u{1B}[2J", blame: .server, expected: "e", actual: "a\u{202E}b\nc",
                                  requestIDs: ["rq\u{7}1"])
        for text in [hostile.line, hostile.warningLine] {
            #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E || $0.value == 0x07 }, "\(text)")
            #expect(text.dropLast(text.hasSuffix("\n") ? 1 : 0).contains("\n") == false)
        }
    }

    @Test func theJSONObjectIsTheSameWrittenDirectlyOrEncoded() throws {
        let direct = try #require(try JSONSerialization.jsonObject(with: Data(watch.json.utf8)) as? [String: Any])
        let encoded = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(watch)) as? [String: Any])
        #expect(NSDictionary(dictionary: direct).isEqual(to: encoded), "\(direct) \(encoded)")
        #expect(direct["kind"] as? String == "debit-without-entry" && direct["blame"] as? String == "server")
        #expect(direct["request_ids"] as? [String] == ["rq-b1", "rq-h1", "rq-b2", "rq-h2"])
        let bare = ShopFinding(kind: .appError, subject: "GET /x", expected: "e", actual: "a")
        let none = try #require(try JSONSerialization.jsonObject(with: Data(bare.json.utf8)) as? [String: Any])
        #expect(none["blame"] is NSNull && none["caused_by"] is NSNull)
    }
}
