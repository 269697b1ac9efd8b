import Foundation
import ShopAPI
import ShopLedger
import Testing
@testable import ShopCompare

/// Issue 44, item 4: `compare`/`replay` (through `Snapshot`) and `ledger` (through `ShopEvents`) read one HAR
/// file the same way. A base URL with a path of its own (`https://host/staging/`) made them disagree: the
/// ledger saw `/staging/api/v1/balance` as a balance read, `compare` dropped it.
struct PrefixedHARTests {
    static let har = """
    {"log":{"version":"1.2","_baseURL":"https://host.example/staging","entries":[
      {"startedDateTime":"2026-11-28T10:00:00.000Z","time":5,"_requestId":"rq-b","_source":"tool",
       "request":{"method":"GET","url":"https://host.example/staging/api/v1/balance?user_id=qa-alice"},
       "response":{"status":200,"headers":[],"content":{"text":"{\\"balance\\":1250}"}}},
      {"startedDateTime":"2026-11-28T10:00:01.000Z","time":5,"_requestId":"rq-s","_source":"app",
       "request":{"method":"POST","url":"https://host.example/staging/api/v1/spend_cheer?user_id=qa-alice","postData":{"mimeType":"application/json","text":"{\\"product\\":\\"p\\",\\"amount\\":3}"}},
       "response":{"status":200,"headers":[],"content":{"text":"{\\"balance\\":1247}"}}}
    ]}}
    """

    @Test func compareAndTheLedgerReadTheSameExchangesOfAPrefixedBaseURL() throws {
        let snapshot = try Snapshot.read(Array(Self.har.utf8))
        #expect(snapshot.baseURL == "https://host.example/staging")
        #expect(snapshot.reads.map(\.what) == [.balance] && snapshot.reads.first?.target == "/api/v1/balance?user_id=qa-alice")
        #expect(snapshot.writes.map(\.target) == ["/api/v1/spend_cheer?user_id=qa-alice"])
        let events = try ShopEvents.read(har: Array(Self.har.utf8), source: "file")
        #expect(events.map(\.requestID) == ["rq-b", "rq-s"] && events.map(\.balance) == [1250, 1247])
        #expect(events.map(\.user) == ["qa-alice", "qa-alice"] && events.map(\.source) == ["tool", "app"])
    }
}
