import Foundation
import HTTPTypes
@testable import ShopAPI
import Testing

@Suite struct ContractWatchdogTests {
    let ok = HTTPFields(pairs: [("Content-Type", "application/json; charset=utf-8"), ("X-Request-Id", "rq-1")])

    func page(_ number: Int, ids: [String], dates: [String], total: Int = 6, perPage: Int = 3) -> [UInt8] {
        let entries = zip(ids, dates).map { #"{"id":"\#($0)","creator":"c","amount":5,"product":"p","date":"\#($1)"}"# }
        return Array(#"{"history":[\#(entries.joined(separator: ","))],"page":\#(number),"per_page":\#(perPage),"total_pages":\#((total + perPage - 1) / perPage),"total_count":\#(total)}"#.utf8)
    }

    func check(_ body: [UInt8], page: Int, memory: inout HistoryMemory) -> [String] {
        ContractWatchdog.check(method: "GET", pathAndQuery: "/api/v1/cheer_history?user_id=qa-alice&page=\(page)&per_page=3",
                               status: 200, headers: ok, body: body, memory: &memory).map(\.check)
    }

    @Test func neighbouringPagesAreComparedForOrderAndDuplicates() {
        var memory = HistoryMemory()
        #expect(check(page(1, ids: ["a", "b", "c"], dates: ["2026-11-06T00:00:00Z", "2026-11-05T00:00:00Z", "2026-11-04T00:00:00Z"]), page: 1, memory: &memory).isEmpty)
        #expect(check(page(2, ids: ["d", "e", "f"], dates: ["2026-11-03T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-01T00:00:00Z"]), page: 2, memory: &memory).isEmpty)
        // Page 2 again, now starting with an entry newer than page 1's last, and one of page 1's ids.
        let again = check(page(2, ids: ["c", "e", "f"], dates: ["2026-11-04T12:00:00Z", "2026-11-02T00:00:00Z", "2026-11-01T00:00:00Z"]), page: 2, memory: &memory)
        #expect(again == ["order", "duplicate"])
    }

    @Test func aChangedTotalIsNoDeviation() {
        // One entry came in at the top: every boundary moved by one, and the total says so.
        var memory = HistoryMemory()
        _ = check(page(1, ids: ["a", "b", "c"], dates: ["2026-11-06T00:00:00Z", "2026-11-05T00:00:00Z", "2026-11-04T00:00:00Z"]), page: 1, memory: &memory)
        let shifted = check(page(2, ids: ["c", "d", "e"], dates: ["2026-11-04T00:00:00Z", "2026-11-03T00:00:00Z", "2026-11-02T00:00:00Z"], total: 7), page: 2, memory: &memory)
        #expect(shifted.isEmpty)
    }

    @Test func schemaTypesAreExactAndOptionalOrUnknownKeysPass() {
        var memory = HistoryMemory()
        let fine = Array(#"{"history":[{"creator":"c","amount":5,"product":"p","date":"2026-11-06T00:00:00.123+01:00","comments":null,"extra":{"x":1}}],"future_field":true}"#.utf8)
        #expect(check(fine, page: 1, memory: &memory).isEmpty)
        let wrong = Array(#"{"history":[{"creator":"c","amount":"5","product":true,"date":"yesterday"}]}"#.utf8)
        let findings = ContractWatchdog.check(method: "GET", pathAndQuery: "/api/v1/cheer_history?user_id=qa-alice", status: 200, headers: ok, body: wrong)
        #expect(findings.map(\.check) == ["schema", "schema", "schema"])
        #expect(Set(findings.map(\.expected)) == ["history[0].amount: integer", "history[0].product: string", "history[0].date: an ISO 8601 date-time"])
        let negative = Array(#"{"packs":[{"identifier":"i","name":"n","price_cents":-1}]}"#.utf8)
        #expect(ContractWatchdog.check(method: "GET", pathAndQuery: "/api/v1/audio_packs", status: 200, headers: ok, body: negative).map(\.expected)
            == ["packs[0].price_cents ≥ 0"])
    }

    @Test func theParserKeepsIntegersBooleansAndStringsApart() {
        #expect(JSONValue.parse(Array(#"[1, 1.0, true, "1", null, {"a":"\"q\""}]"#.utf8))
            == .array([.int(1), .double(1.0), .bool(true), .string("1"), .null, .object(["a": .string("\"q\"")])]))
        #expect(JSONValue.parse(Array(#"{"a":1"#.utf8)) == nil && JSONValue.parse(Array("[1] x".utf8)) == nil)
    }
}
