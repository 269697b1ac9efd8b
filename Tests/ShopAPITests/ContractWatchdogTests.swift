import ContractReader
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

    func check(_ body: [UInt8], page: Int, watchdog: inout ContractWatchdog) -> [ContractCheck] {
        watchdog.check(ObservedExchange(operation: .getCheerHistory, pathAndQuery: "/api/v1/cheer_history?user_id=qa-alice&page=\(page)&per_page=3",
                                        status: 200, headers: ok, body: body)).map(\.check)
    }

    @Test func neighbouringPagesAreComparedForOrderAndDuplicates() {
        var memory = ContractWatchdog()
        #expect(check(page(1, ids: ["a", "b", "c"], dates: ["2026-11-06T00:00:00Z", "2026-11-05T00:00:00Z", "2026-11-04T00:00:00Z"]), page: 1, watchdog: &memory).isEmpty)
        #expect(check(page(2, ids: ["d", "e", "f"], dates: ["2026-11-03T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-01T00:00:00Z"]), page: 2, watchdog: &memory).isEmpty)
        // Page 2 again, now starting with an entry newer than page 1's last, and one of page 1's ids.
        let again = check(page(2, ids: ["c", "e", "f"], dates: ["2026-11-04T12:00:00Z", "2026-11-02T00:00:00Z", "2026-11-01T00:00:00Z"]), page: 2, watchdog: &memory)
        #expect(again == [.order, .duplicate])
    }

    @Test func aChangedTotalIsNoDeviation() {
        // One entry came in at the top: every boundary moved by one, and the total says so.
        var memory = ContractWatchdog()
        _ = check(page(1, ids: ["a", "b", "c"], dates: ["2026-11-06T00:00:00Z", "2026-11-05T00:00:00Z", "2026-11-04T00:00:00Z"]), page: 1, watchdog: &memory)
        let shifted = check(page(2, ids: ["c", "d", "e"], dates: ["2026-11-04T00:00:00Z", "2026-11-03T00:00:00Z", "2026-11-02T00:00:00Z"], total: 7), page: 2, watchdog: &memory)
        #expect(shifted.isEmpty)
    }

    @Test func schemaTypesAreExactAndOptionalOrUnknownKeysPass() {
        var memory = ContractWatchdog()
        let fine = Array(#"{"history":[{"creator":"c","amount":5,"product":"p","date":"2026-11-06T00:00:00.123+01:00","comments":null,"extra":{"x":1}}],"future_field":true}"#.utf8)
        #expect(check(fine, page: 1, watchdog: &memory).isEmpty)
        let wrong = Array(#"{"history":[{"creator":"c","amount":"5","product":true,"date":"yesterday"}]}"#.utf8)
        let findings = ContractWatchdog.check(ObservedExchange(operation: .getCheerHistory, pathAndQuery: "/api/v1/cheer_history?user_id=qa-alice", status: 200, headers: ok, body: wrong))
        #expect(findings.map(\.check) == [.schema, .schema, .schema])
        #expect(Set(findings.map(\.expected)) == ["history[0].amount: integer", "history[0].product: string", "history[0].date: an ISO 8601 date-time"])
        let negative = Array(#"{"packs":[{"identifier":"i","name":"n","price_cents":-1}]}"#.utf8)
        #expect(ContractWatchdog.check(ObservedExchange(operation: .listAudioPacks, pathAndQuery: "/api/v1/audio_packs", status: 200, headers: ok, body: negative)).map(\.expected)
            == ["packs[0].price_cents ≥ 0"])
    }

    // MARK: the rules the contract states in words

    func write(_ op: OperationID, request: String, status: Int, answer: String, id: String, _ watchdog: inout ContractWatchdog) -> [Finding] {
        var headers = ok
        headers[.requestID] = id
        return watchdog.check(ObservedExchange(operation: op, pathAndQuery: "/api/v1/x", requestBody: Array(request.utf8), status: status, headers: headers, body: Array(answer.utf8)))
    }

    @Test func aTransactionCreditedTwiceIsAFindingNamingTheFirstAnswer() {
        var w = ContractWatchdog()
        let buy = #"{"identifier":"com.reiterate.cheer.200","transaction_id":42}"#
        #expect(write(.purchaseCheer, request: buy, status: 200, answer: #"{"balance":200}"#, id: "rq-first", &w).isEmpty)
        // The contract's own answer to a second call: 409, no finding.
        #expect(write(.purchaseCheer, request: buy, status: 409, answer: #"{"message":"duplicate","code":"duplicate_transaction"}"#, id: "rq-409", &w).isEmpty)
        // Another transaction: no finding.
        #expect(write(.purchaseCheer, request: #"{"identifier":"com.reiterate.cheer.50","transaction_id":43}"#, status: 200, answer: #"{"balance":250}"#, id: "rq-2", &w).isEmpty)
        let again = write(.purchaseCheer, request: buy, status: 200, answer: #"{"balance":450}"#, id: "rq-again", &w)
        #expect(again.map(\.check) == [.creditedOnce] && again.first?.expected.contains("rq-first") == true)
    }

    @Test func aSpendAcceptedOnTooLowABalanceIsAFinding() {
        var w = ContractWatchdog()
        let spend = #"{"amount":7,"product":"p"}"#
        #expect(write(.spendCheer, request: spend, status: 200, answer: #"{"balance":0}"#, id: "rq-1", &w).isEmpty)  // may reach 0
        #expect(write(.spendCheer, request: spend, status: 402, answer: #"{"message":"too low"}"#, id: "rq-2", &w).isEmpty)
        let accepted = write(.spendCheer, request: spend, status: 200, answer: #"{"balance":-5}"#, id: "rq-3", &w)
        #expect(accepted.map(\.line) == ["[spend-refused] expected 402 when the balance is too low (nothing spent), got accepted, leaving a balance of -5"])
    }

    @Test func statusesAreTheDocumentsOwn() {
        func status(_ op: OperationID, _ code: Int) -> [ContractCheck] {
            ContractWatchdog.check(ObservedExchange(operation: op, pathAndQuery: "/", status: code, headers: ok, body: Array(#"{"message":"m"}"#.utf8))).map(\.check)
        }
        #expect(status(.spendCheer, 402).isEmpty && status(.purchaseCheer, 409).isEmpty && status(.getBalance, 503).isEmpty)
        // A status the document does not declare has no schema to hold its body to: the status is the finding.
        #expect(status(.getBalance, 201) == [.status] && status(.getBalance, 302) == [.status])
    }

    // MARK: found by review

    @Test func anIntegerTooLargeForTheDecoderIsANumberNotACrash() {
        let huge = Array(#"{"packs":[{"identifier":"i","name":"n","price_cents":100000000000000000000}]}"#.utf8)
        let findings = ContractWatchdog.check(ObservedExchange(operation: .listAudioPacks, pathAndQuery: "/api/v1/audio_packs", status: 200, headers: ok, body: huge))
        // Issue 35: said as the whole number it is, beyond 64 bits, not as "a number".
        #expect(findings.map(\.line) == ["[schema] expected packs[0].price_cents: integer (64-bit), got 100000000000000000000, beyond a 64-bit integer"])
        var memory = ContractWatchdog()
        let page = Array(#"{"history":[],"page":9223372036854775808,"per_page":3,"total_pages":0,"total_count":0}"#.utf8)
        #expect(check(page, page: 1, watchdog: &memory) == [.schema])
    }

    @Test func aTransactionIdPastIntMaxIsStillCheckedOnce() {
        var w = ContractWatchdog()
        let buy = #"{"identifier":"com.reiterate.cheer.200","transaction_id":18446744073709551615}"#
        #expect(write(.purchaseCheer, request: buy, status: 200, answer: #"{"balance":200}"#, id: "rq-first", &w).isEmpty)
        #expect(write(.purchaseCheer, request: buy, status: 200, answer: #"{"balance":400}"#, id: "rq-again", &w).map(\.check) == [.creditedOnce])
    }

    @Test func aDuplicateAcrossPagesIsStillSeenWhenAPageIsReadAgain() {
        var memory = ContractWatchdog()
        let one = page(1, ids: ["a", "b", "c"], dates: ["2026-11-06T00:00:00Z", "2026-11-05T00:00:00Z", "2026-11-04T00:00:00Z"])
        let two = page(2, ids: ["c", "d", "e"], dates: ["2026-11-03T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-01T00:00:00Z"])
        #expect(check(one, page: 1, watchdog: &memory).isEmpty)
        #expect(check(two, page: 2, watchdog: &memory) == [.duplicate])
        #expect(check(two, page: 2, watchdog: &memory) == [.duplicate])  // page 2 again: c is still on page 1
        #expect(check(one, page: 1, watchdog: &memory) == [.duplicate])
    }

    @Test func anExclusiveBoundLeavesTheBoundItselfOut() throws {
        let changed = Contract.bundledText.replacingOccurrences(of: "balance: { type: integer, description: Cheer units; may be 0. }",
                                                                with: "balance: { type: integer, exclusiveMinimum: 0 }")
        var w = ContractWatchdog(contract: try ContractDocument.read(changed, source: "test"))
        let zero = w.check(ObservedExchange(operation: .getBalance, pathAndQuery: "/api/v1/balance", status: 200, headers: ok, body: Array(#"{"balance":0}"#.utf8)))
        #expect(zero.map(\.line) == ["[schema] expected balance > 0, got 0"])
        #expect(w.check(ObservedExchange(operation: .getBalance, pathAndQuery: "/api/v1/balance", status: 200, headers: ok, body: Array(#"{"balance":1}"#.utf8))).isEmpty)
    }
}

/// Issue 35, item 4: a finding about one history entry is keyed by the entry's identity, never its position:
/// 20 entries arriving at the top while a malformed entry moves down leave one finding.
@Suite struct FindingByIdentityTests {
    let ok = HTTPFields(pairs: [("Content-Type", "application/json; charset=utf-8"), ("X-Request-Id", "rq-1")])

    func page(newOnTop: Int, perPage: Int = 50) -> [UInt8] {
        var entries: [String] = (0..<newOnTop).map { i in
            #"{"id":"new-\#(i)","creator":"C","amount":1,"product":"p","date":"2026-11-20T10:00:00Z","comments":[]}"#
        }
        for i in 0..<10 {
            // The malformed one: its amount is text (and it keeps its id).
            let amount = i == 3 ? #""three""# : "5"
            entries.append(#"{"id":"h-\#(i)","creator":"C","amount":\#(amount),"product":"p","date":"2026-11-19T10:00:00Z","comments":[]}"#)
        }
        let total = entries.count
        return Array(#"{"history":[\#(entries.joined(separator: ","))],"page":1,"per_page":\#(perPage),"total_pages":1,"total_count":\#(total)}"#.utf8)
    }

    @Test func aMalformedEntryThatMovesDownIsOneFinding() {
        var watchdog = ContractWatchdog()
        var keys = Set<FindingKey>()
        var places: [String] = []
        for (n, newOnTop) in [0, 20].enumerated() {
            let target = "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=\(50 - n)"
            let findings = watchdog.check(ObservedExchange(operation: .getCheerHistory, pathAndQuery: target, status: 200, headers: ok, body: page(newOnTop: newOnTop)))
                .filter { $0.check == .schema }
            #expect(findings.count == 1 && findings.first?.entry == "id=h-3")
            for f in findings {
                keys.insert(FindingKey(f, method: "GET", target: target))
                if case let .field(path, _)? = f.place { places.append(path) }
            }
        }
        // The words still say where it stood on each answer; the key is the entry's.
        #expect(places == ["history[3].amount", "history[23].amount"])
        #expect(keys.count == 1)
        // Another entry with the same fault is another finding.
        let other = Finding(check: .schema, expected: "history[4].amount: integer", actual: "x", place: .field(path: "history[4].amount", rule: .type))
        var named = other
        named.entry = "id=h-4"
        #expect(!keys.contains(FindingKey(named, method: "GET", target: "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50")))
    }
}
