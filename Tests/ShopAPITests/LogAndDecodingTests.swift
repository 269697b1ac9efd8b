import Foundation
import HTTPTypes
import JSONTokens
import Logging
import StubCore
import StubServer
import Testing
@testable import ShopAPI

@Suite struct ExchangeLogTests {
    @Test func tokensAreRedactedEverywhereTheExchangeIsKept() async throws {
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("shop-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let logger = Logger(label: "reiterate.api", factory: try FileLogHandler.factory(path: logPath))
        let harness = try await Harness.start(logger: logger)
        await harness.stub.service.store.revokeAccessTokens()
        let sent = await Result(catching: { try await harness.client.send(Balance(user: "qa-alice")) })  // 401 → refresh → 200
        let exchanges = await harness.client.exchanges.all()
        let tokens = (await harness.client.tokens.accessToken, await harness.client.tokens.refreshToken)
        await harness.stop()
        #expect(try sent.get().balance == 1250)
        let newAccess = try #require(tokens.0)
        let newRefresh = try #require(tokens.1)

        #expect(exchanges.map(\.path) == ["/api/v1/balance?user_id=qa-alice", "/api/v1/auth/refresh", "/api/v1/balance?user_id=qa-alice"])
        #expect(exchanges.map(\.status) == [401, 200, 200])
        #expect(exchanges.allSatisfy { $0.requestID?.hasPrefix("rq-") == true && $0.responseBytes > 0 })
        #expect(exchanges[0].requestHeaders[.authorization] == Redactor.placeholder)
        #expect(exchanges[1].requestBodyPreview == #"{"refresh_token":"<redacted>"}"#)
        #expect(exchanges[1].responseBodyPreview?.contains(#""access_token":"<redacted>""#) == true)
        let everything = String(describing: exchanges)
        for secret in ["dev-token", "dev-refresh", newAccess, newRefresh] {
            #expect(!everything.contains(secret), "\(secret) leaked into the exchange log")
        }
        let file = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(file.contains("GET /api/v1/balance?user_id=qa-alice 401"))
        #expect(file.contains("POST /api/v1/auth/refresh 200"))
        for secret in ["dev-token", "dev-refresh", newAccess, newRefresh] { #expect(!file.contains(secret)) }
        let attributes = try FileManager.default.attributesOfItem(atPath: logPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func logFileIsNarrowedTo0600AndLinksAreRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("logs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let existing = dir + "/existing.log"
        #expect(FileManager.default.createFile(atPath: existing, contents: Data(), attributes: [.posixPermissions: 0o644]))
        _ = try FileLogHandler.factory(path: existing)
        #expect((try FileManager.default.attributesOfItem(atPath: existing)[.posixPermissions] as? Int) == 0o600)
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.log", withDestinationPath: existing)
        #expect(throws: LogFileError.self) { _ = try FileLogHandler.factory(path: dir + "/link.log") }
        do {
            _ = try FileLogHandler.factory(path: dir + "/missing/x.log")
        } catch let error as LogFileError {
            #expect(error.description.hasSuffix("its directory does not exist"))
        }
    }

    @Test func bearerTokenCharacters() {
        for good in ["dev-token", "abc.DEF_123~+/", "eyJh.eyJz.sig==", "at-0f3"] { #expect(TokenStore.isValidBearerToken(good)) }
        for bad in ["", "with space", "new\nline", "tab\t", "a=b", "é", "cr\r"] { #expect(!TokenStore.isValidBearerToken(bad)) }
    }

    @Test func boundedAndObservable() async throws {
        let log = ExchangeLog(capacity: 5)
        let updates = await log.updates()
        let template = Exchange(
            id: 0, method: "GET", path: "/x", startedAt: Date(), duration: .zero, status: 200, failure: nil, requestID: nil,
            attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:],
            requestBodyPreview: nil, responseBodyPreview: nil
        )
        for _ in 0..<12 { await log.record(template) }
        #expect(await log.all().map(\.id) == [8, 9, 10, 11, 12])
        var seen: [Int] = []
        for await e in updates {
            seen.append(e.id)
            if seen.count == 5 { break }
        }
        #expect(seen == [8, 9, 10, 11, 12])  // the stream keeps the newest `capacity`
    }

    /// Issue 35: a session of 150 exchanges with a failed write early on: the window drops reads, never the
    /// write, so a HAR saved a minute later (and the report's attachment) still holds it.
    @Test func aWriteOutlivesTheWindowOfReads() async throws {
        let log = ExchangeLog(capacity: 100)
        func exchange(_ method: String, _ path: String, status: Int, requestID: String) -> Exchange {
            Exchange(id: 0, method: method, path: path, startedAt: Date(), duration: .zero, status: status, failure: nil, requestID: requestID,
                     attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:],
                     requestBodyPreview: #"{"amount":7}"#, responseBodyPreview: #"{"message":"boom"}"#)
        }
        for i in 0..<5 { await log.record(exchange("GET", "/api/v1/balance?user_id=qa-alice", status: 200, requestID: "rq-r\(i)")) }
        await log.record(exchange("POST", "/api/v1/spend_cheer", status: 500, requestID: "rq-failed-write"))
        for i in 5..<150 { await log.record(exchange("GET", "/api/v1/balance?user_id=qa-alice", status: 200, requestID: "rq-r\(i)")) }
        let kept = await log.all()
        #expect(kept.count == 101 && kept.filter { $0.method == "GET" }.count == 100)
        #expect(kept.contains { $0.requestID == "rq-failed-write" } && kept.first?.requestID == "rq-failed-write")
        let har = String(decoding: try HAR.encode(kept, baseURL: "http://127.0.0.1:1", creator: "t", version: "0"), as: UTF8.self)
        #expect(har.contains("rq-failed-write") && har.contains("/api/v1/spend_cheer"))
    }

    /// Issue 35: past the window, exchanges spill to a 0600 file; past the spill's bound the oldest reads
    /// go, never a write (more writes than the in-memory 1,000 included); the HAR holds both, in order.
    @Test func exchangesPastTheWindowSpillToAFileBoundedBySize() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/session.jsonl"
        let limit = 256 * 1024
        let log = ExchangeLog(capacity: 10, spillFile: file, spillLimit: limit)
        let page = String(repeating: "x", count: 2_000)
        func exchange(_ method: String, _ requestID: String, body: String?) -> Exchange {
            Exchange(id: 0, method: method, path: method == "GET" ? "/api/v1/balance?user_id=qa-alice" : "/api/v1/spend_cheer", startedAt: Date(),
                     duration: .milliseconds(3), status: method == "GET" ? 200 : 500, failure: nil, requestID: requestID, attempt: 1, requestBytes: 0,
                     responseBytes: 0, requestHeaders: [:], responseHeaders: [:], requestBodyPreview: body, responseBodyPreview: body.map { #"{"p":"\#($0)"}"# })
        }
        await log.record(exchange("POST", "rq-first-write", body: #"{"amount":7}"#))
        // A read still pending when the window drops it: its answer follows it to the spill.
        let pending = await log.begin(exchange("GET", "rq-pending", body: nil))
        for i in 0..<1_100 { await log.record(exchange("POST", "rq-w\(i)", body: nil)) }
        for i in 0..<400 { await log.record(exchange("GET", "rq-r\(i)", body: page)) }
        var answered = pending
        answered.status = 200
        await log.finish(answered)
        #expect(await log.all().count == 1_000 + 10)
        let session = await log.session()
        #expect(!session.spillFailed && session.droppedReads > 0)
        // Every write is there: the first, and those beyond the 1,000 kept in memory.
        #expect(session.writeIDs.count == 1_101)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(((attributes[.size] as? Int) ?? .max) <= limit)
        let har = try HAR.encode(session, baseURL: "http://127.0.0.1:1/", creator: "t", version: "0")
        let entries = try #require(((try JSONSerialization.jsonObject(with: har) as? [String: Any])?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let ids = entries.compactMap { $0["_requestId"] as? String }
        #expect(entries.count == session.count && ids.first == "rq-first-write" && ids.last == "rq-r399")
        #expect(ids.filter { $0.hasPrefix("rq-w") || $0 == "rq-first-write" }.count == 1_101)
        // The newest reads are kept whole, the oldest dropped first.
        #expect(ids.contains("rq-r398") && !ids.contains("rq-r0"))
        #expect(!ids.contains("rq-pending") || entries.contains { $0["_requestId"] as? String == "rq-pending" && (($0["response"] as? [String: Any])?["status"] as? Int) == 200 })
        // The status's reason phrase, from the one table every layer uses (a HAR viewer shows it).
        #expect(entries.first.flatMap { ($0["response"] as? [String: Any])?["statusText"] as? String } == "Internal Server Error")
        #expect(HTTPStatusWords.reasonPhrase(418) == "Client Error" && HTTPStatusWords.reasonPhrase(599) == "Server Error" && HTTPStatusWords.known(999) == nil)
        let urls = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(urls.allSatisfy { $0.hasPrefix("http://127.0.0.1:1/api/v1/") })
        await log.close()
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    /// A pending read's answer that comes after the window dropped it is the one the HAR shows.
    @Test func anAnswerAfterTheSpillReplacesThePendingLine() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("spill-\(UUID().uuidString).jsonl").path
        let log = ExchangeLog(capacity: 2, spillFile: file)
        let read = Exchange(id: 0, method: "GET", path: "/api/v1/audio_packs", startedAt: Date(), duration: .zero, status: nil, failure: nil, requestID: "rq-slow",
                            attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:], requestBodyPreview: nil, responseBodyPreview: nil)
        let pending = await log.begin(read)
        for _ in 0..<3 { await log.record(read) }
        var answered = pending
        answered.status = 200
        await log.finish(answered)
        let har = String(decoding: try HAR.encode(await log.session(), baseURL: "http://h", creator: "t", version: "0"), as: UTF8.self)
        #expect(!har.contains("no answer yet"))
        #expect(await log.session().count == 4)
        // The file's name taken away under a live session (another program's sweep): what it holds is
        // still read, through the descriptor the log keeps.
        unlink(file)
        #expect(await log.session().count == 4)
        await log.close()
    }

    @Test func redactorHandlesCutAndTrickyJSON() {
        let cut = Array(#"{"a":1,"access_token":"abc.def","nested":{"refresh_token" : "x\"y","note":"token"},"id_token":"zz"#.utf8)
        let preview = Redactor.bodyPreview(cut) ?? ""
        #expect(preview == #"{"a":1,"access_token":"<redacted>","nested":{"refresh_token" : "<redacted>","note":"token"},"id_token":"<redacted>""#)
        #expect(Redactor.path("/x?user_id=a&access_token=s3cr3t&b=2") == "/x?user_id=a&access_token=<redacted>&b=2")
        #expect(Redactor.headers(HTTPFields(pairs: [("Cookie", "a=b"), ("X-Auth-Token", "t"), ("Accept", "x")])).map(\.value) == ["<redacted>", "<redacted>", "x"])
        let big = Array(repeating: UInt8(ascii: "a"), count: Redactor.previewLimit + 10)
        #expect(Redactor.bodyPreview(big)?.hasSuffix("… (10 more bytes)") == true)
    }

    @Test func aSecretCutByThePreviewLimitDoesNotLeak() {
        // The limit falls inside the token's value: what is shown of it is replaced too.
        let pad = String(repeating: "p", count: Redactor.previewLimit - 40)
        let body = Array(#"{"pad":"\#(pad)","refresh_token":"SECRETSECRETSECRETSECRETSECRETSECRET"}"#.utf8)
        let preview = Redactor.bodyPreview(body) ?? ""
        #expect(!preview.contains("SECRET") && preview.contains(#""refresh_token":"<redacted>""#) && preview.contains("more bytes"))
        #expect(Redactor.isSecretName("X-Refresh-TOKEN") && Redactor.isSecretName("apiKey") && !Redactor.isSecretName("tok") && !Redactor.isSecretName(""))
    }
}

@Suite struct DecodingTests {
    @Test func datesInEveryAllowedForm() throws {
        let base = try #require(ISO8601.parse("2022-08-18T02:30:00Z")).timeIntervalSince1970
        #expect(base == 1_660_789_800)
        #expect(ISO8601.parse("2022-08-18T02:30:00.123Z")?.timeIntervalSince1970 == base + 0.123)
        #expect(ISO8601.parse("2022-08-18T04:30:00+02:00")?.timeIntervalSince1970 == base)
        #expect(ISO8601.parse("2022-08-17T21:30:00-0500")?.timeIntervalSince1970 == base)
        #expect(ISO8601.parse("2022-08-18T02:30:00.5+00:00")?.timeIntervalSince1970 == base + 0.5)
        #expect(ISO8601.parse("2022-08-18t02:30:00z")?.timeIntervalSince1970 == base)
        for bad in ["yesterday", "2022-08-18", "2022-08-18T02:30:00", "2022-02-30T00:00:00Z", "2022-08-18T25:00:00Z", "2022-08-18T02:30:00.Z", ""] {
            #expect(ISO8601.parse(bad) == nil, "\(bad)")
        }
        #expect(ISO8601.format(Date(timeIntervalSince1970: base + 0.25)) == "2022-08-18T02:30:00.250Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: base + 0.9999)) == "2022-08-18T02:30:01Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func unknownKeysIgnoredOptionalsOptional() throws {
        let json = #"{"packs":[{"identifier":"p1","name":"One","extra":{"x":[1,2]}},{"identifier":"p2","name":"Two","price_cents":"cheap"},{"name":"no id"}],"next":null}"#
        let list = try AudioPacks.decode(Array(json.utf8))
        #expect(list.packs.map(\.identifier) == ["p1"])
        #expect(list.packs[0].creator == nil && list.packs[0].released == nil)
        #expect(list.unreadable == [
            UnreadableEntry(index: 1, id: nil, reason: "price_cents: expected a number"),
            UnreadableEntry(index: 2, id: nil, reason: "identifier: missing"),
        ])
    }

    @Test func historyWithoutPagingIsOneWholePage() throws {
        let json = #"{"history":[{"creator":"c","amount":5,"product":"p","date":"2022-08-18T02:30:00Z","comments":null},{"creator":"c","amount":"x","product":"p","date":"2022-08-18T02:30:00Z","id":"h2"},{"creator":"c","amount":6,"product":"p","date":"2022-08-18T02:30:00.1+01:00","comments":[{"signature":null,"body":"hi"},{}]}]}"#
        let page = try CheerHistory.decode(Array(json.utf8))
        #expect(page.page == 1 && page.totalPages == 1 && page.totalCount == 3 && page.perPage == 3)
        #expect(page.items[1] == .unreadable(UnreadableEntry(index: 1, id: "h2", reason: "amount: expected a number")))
        #expect(page.entries[0].comments == nil)
        #expect(page.entries[1].comments == [CheerComment(signature: nil, body: "hi"), CheerComment(signature: nil, body: nil)])
        let empty = try CheerHistory.decode(Array(#"{"history":[]}"#.utf8))
        #expect(empty.totalPages == 0 && empty.totalCount == 0)
    }

    @Test func anUnreadableDateIsNamedWithWhatWasSent() throws {
        let json = #"{"history":[{"creator":"c","amount":5,"product":"p","date":"yesterday","id":"h1"}]}"#
        let page = try CheerHistory.decode(Array(json.utf8))
        #expect(page.items[0] == .unreadable(UnreadableEntry(index: 0, id: "h1", reason: "date: unreadable date 'yesterday'")))
    }

    @Test func endpointsKnowTheirPaths() {
        #expect(AudioPacks.endpoint.description == "GET /api/v1/audio_packs")
        #expect(Balance.endpoint.path == "/api/v1/balance")
        #expect(CheerHistory.endpoint.path == "/api/v1/cheer_history")
        #expect(PurchaseCheer.endpoint.description == "POST /api/v2/purchase_cheer")
        #expect(SpendCheer.endpoint.description == "POST /api/v1/spend_cheer")
        #expect(RefreshToken.endpoint.description == "POST /api/v1/auth/refresh" && !RefreshToken.requiresAuth && Balance.requiresAuth)
        #expect(CheerHistory(user: "u", page: 0, perPage: 900).query.map(\.value) == ["u", "1", "200"])
    }

    @Test func badBaseURLIsAConfigurationError() async throws {
        try await withTransport { transport in
            for url in ["ftp://x", "not a url", "http://", "http://h/?q=1", "http://127.0.0.1:99999", "http://h:0", "http://h#frag", "http://u:p@h"] {
                let client = ShopClient(configuration: .init(baseURL: url), transport: transport, tokens: TokenStore(accessToken: nil))
                let error = await apiError { try await client.send(AudioPacks()) }
                guard case .configuration = error else { Issue.record("\(url): \(String(describing: error))"); continue }
            }
        }
    }
}

/// Issue 35, item 6: a number beyond 64 bits in valid JSON is a finding about that field, never "not valid JSON".
@Suite struct Beyond64BitsTests {
    func answer(_ body: String) -> TransportResponse {
        TransportResponse(status: 200, headers: [.contentType: "application/json", .requestID: "rq-big"], body: Array(body.utf8))
    }

    @Test func aBalanceBeyond64BitsIsNamedByItsFieldAndDigits() {
        for body in [#"{"balance": 100000000000000000000}"#, #"{"balance": 1e20}"#] {
            #expect(throws: ShopAPIError.undecodable(DecodeProblem(path: "balance", reason: .beyond64Bits("100000000000000000000")),
                                                     requestID: "rq-big", endpoint: Balance.endpoint.key)) {
                _ = try ShopClient.decoded(Balance.self, answer(body))
            }
        }
        #expect(DecodingFailure.describe(DecodeProblem(path: "balance", reason: .beyond64Bits("100000000000000000000")))
                == "balance 100000000000000000000 is beyond a 64-bit integer")
        // Invalid JSON is still told as such, and a number that fits is read.
        #expect(throws: ShopAPIError.undecodable(DecodeProblem(path: "", reason: .invalidJSON), requestID: "rq-big", endpoint: Balance.endpoint.key)) {
            _ = try ShopClient.decoded(Balance.self, answer(#"{"balance": 1e20"#.replacingOccurrences(of: "e20", with: "e20,,}")))
        }
        #expect((try? ShopClient.decoded(Balance.self, answer(#"{"balance": 9223372036854775807}"#)))?.balance == Int.max)
    }

    @Test func theWatchdogSaysTheNumberItIs() {
        #expect(DecodingFailure.beyond64Bits(in: .object(["history": .array([.object(["amount": .double(-1e19)])])]))?.path == "history[0].amount")
        #expect(DecodingFailure.beyond64Bits(in: .object(["amount": .double(1.5e3)])) == nil)
    }
}

/// Issue 44: a 2xx whose body is the contract's Error object is told by its status first ("HTTP 200 with an
/// error body; the contract says 402"), never as a field missing from an accepted answer.
@Suite struct ErrorBodyOn2xxTests {
    func answer(_ body: String, status: Int = 200) -> TransportResponse {
        TransportResponse(status: status, headers: [.contentType: "application/json", .requestID: "rq-eb"], body: Array(body.utf8))
    }

    @Test func aSpendAnswered200WithAnErrorBodyNamesTheStatusTheContractGives() {
        let body = #"{"message": "not enough cheer", "code": "insufficient_balance"}"#
        let problem = DecodeProblem(path: "", reason: .errorBody(status: 200, code: "insufficient_balance", message: "not enough cheer"))
        #expect(throws: ShopAPIError.undecodable(problem, requestID: "rq-eb", endpoint: SpendCheer.endpoint.key)) {
            _ = try ShopClient.decoded(SpendCheer.self, answer(body))
        }
        #expect(DecodingFailure.describe(problem) == "HTTP 200 with an error body (insufficient_balance); the contract says 402")
        let unnamed = DecodeProblem(path: "", reason: .errorBody(status: 201, code: nil, message: "nope"))
        #expect(DecodingFailure.describe(unnamed) == "HTTP 201 with an error body; the contract gives an error body only with a 4xx or 5xx")
    }

    @Test func aBodyThatIsNoErrorObjectIsStillAFieldMissing() {
        #expect(throws: ShopAPIError.undecodable(DecodeProblem(path: "balance", reason: .missing), requestID: "rq-eb", endpoint: Balance.endpoint.key)) {
            _ = try ShopClient.decoded(Balance.self, answer(#"{"saldo": 3}"#))
        }
        // A `message` that is not text is no Error object either.
        #expect(throws: ShopAPIError.undecodable(DecodeProblem(path: "balance", reason: .missing), requestID: "rq-eb", endpoint: Balance.endpoint.key)) {
            _ = try ShopClient.decoded(Balance.self, answer(#"{"message": 3}"#))
        }
    }
}

/// Issue 44: a comment whose bytes are not UTF-8 costs that field's bytes, not the entry: the entry reads
/// (the byte as �), and the watchdog names the field and the byte.
@Suite struct NotUTF8Tests {
    @Test func anEntryWithACommentNotInUTF8StaysReadable() throws {
        var body = Array(#"{"history": [{"id": "s-1", "creator": "C", "amount": 4, "product": "p", "date": "2026-11-28T10:00:00Z", "comments": [{"signature": "qa", "body": "caf"#.utf8)
        body += [0xE9]
        body += Array(#""}]}], "page": 1, "per_page": 50, "total_pages": 1, "total_count": 1}"#.utf8)
        let page = try CheerHistory.decode(body)
        guard case let .entry(e)? = page.items.first else { Issue.record("unreadable: \(page.items)"); return }
        #expect(e.id == "s-1" && e.amount == 4 && e.comments?.first?.body == "caf\u{FFFD}")
        #expect(UTF8Scan.firstInvalid(Array("caf".utf8) + [0xE9]) == 3)
        #expect(UTF8Scan.firstInvalid(Array("café 東京 🎧".utf8)) == nil)
        // Overlong forms and surrogates are not UTF-8 either.
        #expect(UTF8Scan.firstInvalid([0xC0, 0xAF]) == 0 && UTF8Scan.firstInvalid([0xED, 0xA0, 0x80]) == 0)
        // The watchdog names the field, the byte and the entry (by its id).
        let findings = ContractWatchdog.check(ObservedExchange(operation: .getCheerHistory, pathAndQuery: "/api/v1/cheer_history?user_id=qa&page=1&per_page=50",
                                                               status: 200, headers: [.contentType: "application/json"], body: body))
        let utf8 = findings.first { if case .field(_, .utf8)? = $0.place { true } else { false } }
        #expect(utf8?.expected == "history[0].comments[0].body: text in UTF-8 (a JSON body's charset)", "\(findings)")
        #expect(utf8?.actual == "byte 4 of the value is 0xE9, not UTF-8 — in the entry id=s-1" && utf8?.entry == "id=s-1", "\(findings)")
        // A body all UTF-8 is returned as it was.
        let clean = Array(#"{"a": "café"}"#.utf8)
        #expect(JSONRepair.replacingInvalidUTF8(clean) == clean)
    }
}
