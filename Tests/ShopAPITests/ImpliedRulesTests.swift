import Foundation
import HTTPTypes
@testable import ShopAPI
import Testing

/// The rules the contract implies beyond its schemas (docs/checks.md, "Rules the contract implies"):
/// each fires on an answer that breaks it and stays quiet on one that keeps it.
@Suite struct ImpliedRulesTests {
    let ok = HTTPFields(pairs: [("Content-Type", "application/json"), ("X-Request-Id", "rq-1")])
    /// The clock these tests run at: 2026-11-25T00:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_795_564_800)

    func watchdog() -> ContractWatchdog {
        var w = ContractWatchdog()
        w.implied.now = { Self.now }
        return w
    }

    func check(_ op: OperationID, _ body: String, status: Int = 200, headers: HTTPFields? = nil, path: String = "/api/v1/x") -> [Finding] {
        var w = watchdog()
        return w.check(ObservedExchange(operation: op, pathAndQuery: path, status: status, headers: headers ?? ok, body: Array(body.utf8)))
    }

    func history(amounts: [Int], dates: [String], total: Int? = nil) -> String {
        let entries = zip(amounts, dates).enumerated().map { i, e in
            #"{"id":"h\#(i)","creator":"c","amount":\#(e.0),"product":"com.reiterate.pack.rain","date":"\#(e.1)"}"#
        }
        let count = total ?? entries.count
        return #"{"history":[\#(entries.joined(separator: ","))],"page":1,"per_page":50,"total_pages":\#((count + 49) / 50),"total_count":\#(count)}"#
    }

    static let path = "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50"

    @Test func aHistoryEntryOfLessThanOneCheerIsAFinding() {
        let past = ["2026-11-20T18:04:11Z", "2026-11-19T10:00:00Z", "2026-11-18T10:00:00Z"]
        #expect(check(.getCheerHistory, history(amounts: [5, 1, 500], dates: past), path: Self.path).isEmpty)
        let findings = check(.getCheerHistory, history(amounts: [5, 0, -3], dates: past), path: Self.path)
        #expect(findings.map(\.check) == [.entryAmount, .entryAmount])
        #expect(findings.first?.line == "[entry-amount] expected history[1].amount ≥ 1 (a cheer: spendCheer's amount has minimum 1), got 0")
        #expect(findings.map(\.place) == [.field(path: "history[1].amount", rule: .minimum), .field(path: "history[2].amount", rule: .minimum)])
        // An amount that is not an integer is the schema's finding, not a second one.
        let text = check(.getCheerHistory, #"{"history":[{"creator":"c","amount":"lots","product":"p","date":"2026-11-20T00:00:00Z"}]}"#, path: Self.path)
        #expect(text.map(\.check) == [.schema])
    }

    @Test func aHistoryEntryDatedAheadOfTheClockIsAFinding() {
        // Up to the skew allowance ahead is the clocks disagreeing, not a finding.
        let within = ISO8601.format(Self.now.addingTimeInterval(ImpliedRules.skew - 1))
        #expect(check(.getCheerHistory, history(amounts: [5, 5], dates: [within, "2026-11-24T00:00:00Z"]), path: Self.path).isEmpty)
        let findings = check(.getCheerHistory, history(amounts: [5, 5], dates: ["2026-11-28T00:00:00Z", "2026-11-24T00:00:00Z"]), path: Self.path)
        #expect(findings.map(\.check) == [.futureDate])
        #expect(findings.first?.actual == "2026-11-28T00:00:00Z, 3 d ahead")
        #expect(findings.first?.place == .field(path: "history[0].date", rule: .notAhead))
        #expect(findings.first?.expected.hasPrefix("history[0].date not after this machine's clock (2026-11-25T00:00:00Z") == true)
    }

    @Test func theServersOwnDateHeaderIsTheClockWhenItSendsOne() {
        // This machine's clock is behind (2026-11-25) but the server says it is 2026-11-28: its entry of
        // that day is not in the future.
        var headers = ok
        headers[.date] = "Sat, 28 Nov 2026 12:00:00 GMT"
        let dates = ["2026-11-28T11:00:00Z", "2026-11-24T00:00:00Z"]
        #expect(check(.getCheerHistory, history(amounts: [5, 5], dates: dates), headers: headers, path: Self.path).isEmpty)
        // An entry ahead of the server's own clock is, whatever this machine says.
        headers[.date] = "Fri, 20 Nov 2026 00:00:00 GMT"
        let ahead = check(.getCheerHistory, history(amounts: [5, 5], dates: dates), headers: headers, path: Self.path)
        #expect(ahead.first?.check == .futureDate && ahead.first?.expected.contains("the server's own clock (its Date header)") == true)
    }

    @Test func aPageHoldingMoreEntriesThanItsTotalIsAFinding() {
        let dates = ["2026-11-20T00:00:00Z", "2026-11-19T00:00:00Z", "2026-11-18T00:00:00Z"]
        #expect(check(.getCheerHistory, history(amounts: [5, 5, 5], dates: dates, total: 3), path: Self.path).isEmpty)
        let findings = check(.getCheerHistory, history(amounts: [5, 5, 5], dates: dates, total: 2), path: Self.path)
        #expect(findings.map(\.line) == ["[paging] expected total_count at least the 3 entries of this page, got total_count 2"])
        #expect(findings.first?.place == .field(path: "total_count", rule: .minimum))
    }

    @Test func aPackIdentifierTwiceInTheListIsAFinding() {
        let distinct = #"{"packs":[{"identifier":"com.reiterate.pack.rain","name":"Rain"},{"identifier":"com.reiterate.pack.fire","name":"Fire"}]}"#
        #expect(check(.listAudioPacks, distinct).isEmpty)
        let twice = #"{"packs":[{"identifier":"com.reiterate.pack.rain","name":"Rain"},7,{"name":"Fire","identifier":"com.reiterate.pack.rain"}]}"#
        let findings = check(.listAudioPacks, twice)
        #expect(findings.filter { $0.check == .duplicate }.map(\.actual) == ["“com.reiterate.pack.rain” at packs[0] and packs[2]"])
        #expect(findings.first { $0.check == .duplicate }?.place == .field(path: "packs[2].identifier", rule: .unique))
    }

    @Test func aBalanceBelowZeroReadOrCreditedIsAFinding() {
        #expect(check(.getBalance, #"{"balance":0}"#).isEmpty)
        #expect(check(.getBalance, #"{"balance":-5}"#).map(\.line) == ["[balance-range] expected balance ≥ 0 (“may be 0”; a spend the balance cannot pay is refused with 402), got -5"])
        #expect(check(.purchaseCheer, #"{"balance":-1}"#).map(\.check) == [.balanceRange])
        #expect(check(.purchaseCheer, #"{"balance":50}"#).isEmpty)
        // A spend's own answer stays `spend-refused`, not a second finding.
        #expect(check(.spendCheer, #"{"balance":-2}"#).map(\.check) == [.spendRefused])
        // An error answer's body is not a balance.
        #expect(check(.getBalance, #"{"message":"no","balance":-1}"#, status: 404).isEmpty)
    }

    @Test func aRefreshWithAnUnusableTokenOrLifetimeIsAFinding() {
        #expect(check(.refreshToken, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":900}"#).isEmpty)
        #expect(check(.refreshToken, #"{"access_token":"at-1"}"#).isEmpty)  // no rotation, no lifetime: both optional
        let findings = check(.refreshToken, #"{"access_token":"","refresh_token":"  ","expires_in":0}"#)
        #expect(findings.map(\.place) == [.field(path: "access_token", rule: .nonEmpty), .field(path: "refresh_token", rule: .nonEmpty),
                                          .field(path: "expires_in", rule: .minimum)])
        #expect(findings.map(\.actual) == ["an empty string", "only spaces", "0"])
        #expect(findings.allSatisfy { $0.check == .token })
        #expect(check(.refreshToken, #"{"access_token":"secret-at","expires_in":-60}"#).map(\.line) == ["[token] expected expires_in ≥ 1 (the seconds a new access token lasts), got -60"])
    }

    @Test func aNegativeRetryAfterIsAFinding() {
        func limited(_ status: Int, _ value: String) -> [Finding] {
            var headers = ok
            headers[.retryAfter] = value
            return check(.getBalance, #"{"message":"slow down"}"#, status: status, headers: headers)
        }
        #expect(limited(429, "2").isEmpty && limited(503, "0").isEmpty && limited(429, "Wed, 25 Nov 2026 00:00:10 GMT").isEmpty)
        #expect(limited(429, "-5").map(\.line) == ["[retry-after] expected a Retry-After of 0 seconds or more, got “-5”"])
        #expect(limited(503, "-1").map(\.place) == [.header("Retry-After")])
    }
}
