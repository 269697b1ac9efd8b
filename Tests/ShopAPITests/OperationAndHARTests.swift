import Foundation
import JSONTokens
@testable import ShopAPI
import Testing

/// Issue 44, item 4: which operation an exchange is, decided in one place (`RequestKey.operation`, relative to
/// the base URL by `BasePath`), and one HAR reader (`HAR.read`) for every command that reads a HAR file.
struct OperationAndHARTests {
    @Test func theOperationIsDecidedByMethodAndPathRelativeToTheBaseURL() throws {
        #expect(RequestKey(method: "get", target: "/api/v1/balance?user_id=qa-alice")?.operation == .getBalance)
        #expect(RequestKey(method: "POST", target: "/api/v2/purchase_cheer")?.operation == .purchaseCheer)
        #expect(RequestKey(method: "POST", target: "/api/v1/purchase_cheer")?.operation == nil)  // another version: not one the core sends
        #expect(RequestKey(method: "GET", target: "/api/v1/spend_cheer")?.operation == nil)  // another method
        let base = BasePath(of: try #require(URL(string: "https://staging.example/shop/")))
        #expect(base.prefix == "/shop")
        #expect(base.key(method: "GET", target: "/shop/api/v1/cheer_history?user_id=a&page=2")?.operation == .getCheerHistory)
        #expect(base.relative("/shop?x=1") == "/?x=1" && base.relative("/shop") == "/")
        #expect(base.relative("/shopping/api/v1/balance") == "/shopping/api/v1/balance")  // not under the prefix
        #expect(BasePath.none.relative("/shop/api/v1/balance") == "/shop/api/v1/balance")
        #expect(BasePath(inferredFrom: "/staging/eu/api/v1/audio_packs")?.prefix == "/staging/eu")
        #expect(BasePath(inferredFrom: "/api/v1/other") == nil)
        #expect(BasePath.split(url: "http://h:1?x")?.target == "/?x" && BasePath.split(url: "no scheme") == nil)
    }

    static func exchange(_ method: String, _ path: String, status: Int?, requestID: String, answer: String?) -> Exchange {
        Exchange(id: 0, method: method, path: path, startedAt: Date(timeIntervalSince1970: 1_800_000_000), duration: .milliseconds(40), status: status,
                 failure: nil, requestID: requestID, attempt: 1, requestBytes: 0, responseBytes: answer?.utf8.count ?? 0, requestHeaders: [:],
                 responseHeaders: [:], requestBodyPreview: method == "POST" ? #"{"identifier":"com.reiterate.cheer.50","transaction_id":42}"# : nil,
                 responseBodyPreview: answer)
    }

    /// What the writer writes, the reader reads back, relative to a base URL with a path of its own.
    @Test func theReaderReadsWhatTheWriterWroteUnderABasePath() throws {
        let written = [
            Self.exchange("GET", "/api/v1/balance?user_id=qa-alice", status: 200, requestID: "rq-1", answer: #"{"balance":1250}"#),
            Self.exchange("POST", "/api/v2/purchase_cheer", status: 200, requestID: "rq-2", answer: #"{"balance":1300}"#),
            Self.exchange("GET", "/api/v1/audio_packs", status: nil, requestID: "rq-3", answer: nil),
        ]
        let bytes = Array(try HAR.encode(written, baseURL: "https://staging.example/shop/", creator: "t", version: "0"))
        let recording = try HAR.read(bytes)
        #expect(recording.baseURL == "https://staging.example/shop")
        #expect(recording.entries.map(\.target) == ["/api/v1/balance?user_id=qa-alice", "/api/v2/purchase_cheer", "/api/v1/audio_packs"])
        #expect(recording.entries.map(\.operation) == [.getBalance, .purchaseCheer, .listAudioPacks])
        #expect(recording.entries.map(\.requestID) == ["rq-1", "rq-2", "rq-3"])
        #expect(recording.entries.map(\.status) == [200, 200, nil])  // a HAR's 0 is no answer
        #expect(recording.entries[1].requestBody?.contains("transaction_id") == true)
        let started = try #require(recording.entries[0].startedAt)
        let took = try #require(recording.entries[0].endedAt?.timeIntervalSince(started))
        #expect(abs(took - 0.04) < 0.001)
        let balances = recording.entries.compactMap { e in e.operation.flatMap { op in e.responseBody.flatMap { op.answeredBalance(Array($0.utf8)) } } }
        #expect(balances == [1250, 1300])
    }

    /// A request the proxy saw on a further host (`proxy_hosts`) keeps its own origin in the file: its URL
    /// was the base URL's + its path before, a request that never went there (kept in memory or spilled).
    @Test func aRequestToAnotherHostKeepsItsOwnURL() throws {
        var other = Self.exchange("GET", "/v2/events?since=1", status: 200, requestID: "rq-x", answer: "{}")
        other.origin = "https://analytics.example:443"
        let base = Self.exchange("GET", "/api/v1/balance?user_id=qa-alice", status: 200, requestID: "rq-1", answer: #"{"balance":1250}"#)
        var spilledOther = Self.exchange("GET", "/v2/ping", status: 204, requestID: "rq-y", answer: nil)
        spilledOther.origin = "https://analytics.example:443"
        spilledOther.id = 0
        var kept = [base, other]
        for i in kept.indices { kept[i].id = i + 1 }
        let session = SessionExchanges(kept: kept, spilled: [.init(id: 0, write: false, entry: HAR.entry(spilledOther, base: ""))], droppedReads: 0, spillFailed: false)
        let data = try HAR.encode(session, baseURL: "https://staging.example/shop/", creator: "t", version: "0")
        let doc = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require((doc["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let urls = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(urls == ["https://analytics.example:443/v2/ping", "https://staging.example/shop/api/v1/balance?user_id=qa-alice",
                         "https://analytics.example:443/v2/events?since=1"], "\(urls)")
        // Read back: the base URL's request is its operation; the other host's names none.
        let recording = try HAR.read(Array(data))
        #expect(recording.entries.map(\.operation) == [nil, .getBalance, nil])
    }

    /// An entry's findings are in HAR's own `comment`, in the one finding's words, beside `_findings`.
    @Test func anEntrysFindingsAreItsCommentInTheOneFindingsWords() throws {
        var e = Self.exchange("GET", "/api/v1/balance?user_id=qa-alice", status: 200, requestID: "rq-1", answer: #"{"balance":"12"}"#)
        e.findings = [Finding(check: .schema, expected: "balance: integer", actual: "string \u{201C}12\u{201D}")]
        let data = try HAR.encode([e], baseURL: "https://staging.example/", creator: "t", version: "0")
        let doc = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entry = try #require(((doc["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first)
        #expect(entry["comment"] as? String == "✗ schema: expected balance: integer, got string “12” — GET /api/v1/balance?user_id=qa-alice, request id rq-1",
                "\(entry["comment"] ?? "none")")
        #expect((entry["_findings"] as? [Any])?.count == 1)
    }

    /// A file another tool wrote (no `_baseURL`): each origin's base path is what comes before its first
    /// operation's path (an origin compared without its default port); a base64 body is decoded, and one
    /// that does not decode is kept as it came; a path that names no operation keeps its whole path.
    @Test func aForeignFileHasItsBasePathsInferredByOriginAndItsBase64BodiesRead() throws {
        let body = Data(#"{"balance":77}"#.utf8).base64EncodedString()
        let har = """
        {"log":{"version":"1.2","entries":[
          {"startedDateTime":"2026-11-28T10:00:00.000Z","time":12,"request":{"method":"GET","url":"https://cdn.example/assets/api/v1/balance"},
           "response":{"status":200,"headers":[],"content":{"text":"{}"}}},
          {"startedDateTime":"2026-11-28T10:00:01.000Z","time":12,"request":{"method":"GET","url":"https://API.example:443/staging/api/v1/balance?user_id=u"},
           "response":{"status":200,"headers":[{"name":"X-Request-Id","value":"rq-h"}],"content":{"text":"\(body)","encoding":"base64"}}},
          {"startedDateTime":"2026-11-28T10:00:02.000Z","time":12,"request":{"method":"POST","url":"https://api.example/staging/api/v1/spend_cheer"},
           "response":{"status":200,"headers":[],"content":{"text":"%%%","encoding":"base64"}}},
          {"startedDateTime":"2026-11-28T10:00:03.000Z","time":12,"request":{"method":"GET","url":"https://api.example/staging/health"},
           "response":{"status":200,"headers":[],"content":{"text":"ok"}}}
        ]}}
        """
        let recording = try HAR.read(Array(har.utf8))
        // The first request whose path names an operation sets the file's base URL: cdn.example's.
        #expect(recording.baseURL == "https://cdn.example/assets")
        #expect(recording.entries.map(\.operation) == [.getBalance, .getBalance, .spendCheer, nil])
        #expect(recording.entries[1].target == "/api/v1/balance?user_id=u" && recording.entries[3].target == "/health")
        #expect(recording.entries[1].responseBody == #"{"balance":77}"# && recording.entries[1].requestID == "rq-h")
        #expect(recording.entries[2].responseBody == "%%%")
        #expect(throws: HAR.Unreadable(reason: "it is not a HAR file (no log.entries)")) { try HAR.read(Array(#"{"log":{}}"#.utf8)) }
        #expect(throws: HAR.Unreadable(reason: "it is not JSON")) { try HAR.read(Array("nope".utf8)) }
    }

    @Test func theAnsweredBalanceIsReadByTheOperationsEndpointType() {
        #expect(OperationID.spendCheer.answeredBalance(Array(#"{"balance":5,"extra":1}"#.utf8)) == 5)
        #expect(OperationID.getBalance.answeredBalance(Array(#"{"code":"insufficient_balance"}"#.utf8)) == nil)
        #expect(OperationID.getCheerHistory.answeredBalance(Array(#"{"balance":5}"#.utf8)) == nil)  // not an answer with a balance
    }
}
