import Foundation
import HTTPTypes
import Logging
import ShopAPI
import ShopViewModels
import StubServer
import Testing
@testable import ShopProbes

/// Test sessions (issue 46): the record every command appends to, read back; its bound; what `show`,
/// `diff` and the bundle make of it. The exchanges are real ones, sent to the stand-in in this process.
@Suite struct SessionTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sessions-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func started(_ name: String = "refunds", in root: String? = nil, baseURL: String = "http://127.0.0.1:1") throws -> (TestSessions, TestSessions.Session) {
        let sessions = TestSessions(folder: try root ?? folder())
        let session = try sessions.start(name: name, build: "1.4.3", charter: "purchases after a refund", environment: "local", baseURL: baseURL, user: "qa-alice")
        return (sessions, session)
    }

    /// `body` with a client whose exchanges go into `journal` (as a command's do while a session is open).
    static func withJournaledClient<T: Sendable>(_ journal: SessionJournal, faults: [String] = [], _ body: (ShopClient, RunningStub) async throws -> T) async throws -> T {
        let stub = try await RunningStub.start(StubSettings(requestLog: false))
        let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let client = ShopClient(configuration: ShopClientConfiguration(baseURL: stub.url, requestTimeout: .seconds(5)), transport: transport,
                                tokens: TokenStore(accessToken: "dev-token", refreshToken: nil),
                                pipeline: .standard(logger: logger, extra: [SessionJournal.observer(base: stub.url, journal: journal)]), logger: logger)
        let outcome: Result<T, any Error>
        do {
            for fault in faults { try await stub.addFault(fault) }
            outcome = .success(try await body(client, stub))
        } catch {
            outcome = .failure(error)
        }
        try? await transport.shutdown()
        await stub.stop()
        return try outcome.get()
    }

    // MARK: The record

    @Test func everyKindOfLineComesBackAndAWriteIsKeptFromBeforeItsAnswer() async throws {
        let (sessions, session) = try Self.started()
        #expect(sessions.current() == session)
        let journal = try #require(SessionJournal(folder: session.folder, command: "buy"))
        journal.commandStarted(["buy", "--bundle", "com.reiterate.cheer.200", "--yes"])
        let requestID = try await Self.withJournaledClient(journal, faults: ["missing_balance,path=/api/v1/balance,count=1"]) { client, _ in
            _ = try? await client.send(Balance(user: "qa-alice"))
            return try await client.sendAnswered(PurchaseCheer(ShopWrite.Purchase(identifier: "com.reiterate.cheer.200", transactionID: 42), user: "qa-alice")).requestID
        }
        journal.finding(ShopFinding(kind: .write(.purchaseBalance), subject: "POST /api/v2/purchase_cheer", blame: .server, expected: "1,450", actual: "1,250",
                                    requestIDs: ["rq-1"]))
        journal.note("the app showed 1,450")
        journal.verdict(transaction: "42", product: "com.reiterate.cheer.200", verdict: "credited", blame: nil, requestIDs: [requestID ?? ""])
        journal.file("/tmp/x.har", what: "HAR")
        journal.commandEnded(0)
        let record = try #require(SessionRecord.read(folder: session.folder))
        #expect(record.meta?.name == "refunds" && record.meta?.build == "1.4.3" && record.meta?.charter == "purchases after a refund")
        // The read and the write, the write once (its `sent` line replaced by its answer).
        #expect(record.exchanges.map { "\($0.method) \($0.target.prefix { $0 != "?" }) \($0.status)" } == ["GET /api/v1/balance 200", "POST /api/v2/purchase_cheer 200"])
        #expect(record.exchanges.allSatisfy(\.answered) && record.exchanges.map(\.command) == ["buy", "buy"])
        // The contract's finding on the read travels with its exchange; the judge's as its own line.
        #expect(record.findings.map(\.kind) == ["schema", "purchase-balance"])
        #expect(record.findings[0].subject.hasPrefix("GET /api/v1/balance") && record.findings[0].requestIDs.count == 1)
        #expect(record.notes.map(\.text) == ["the app showed 1,450"] && record.files.map(\.path) == ["/tmp/x.har"])
        #expect(record.verdicts.map(\.verdict) == ["credited"] && record.commands.map(\.status) == [0])
        #expect(record.unreadableLines == 0)
        // The HAR the record makes is one the HAR reader reads, with the session's base URL.
        let har = try HAR.read(Array(try record.har(creator: "t", version: "1")))
        #expect(har.entries.map(\.operation) == [.getBalance, .purchaseCheer])
    }

    @Test func aWriteWhoseProcessDiedBeforeItsAnswerStaysAsSent() async throws {
        let (_, session) = try Self.started()
        let journal = try #require(SessionJournal(folder: session.folder, command: "buy"))
        try await Self.withJournaledClient(journal, faults: ["hang,path=/api/v2/purchase_cheer,count=1,seconds=30"]) { client, _ in
            let sending = Task { try? await client.send(PurchaseCheer(ShopWrite.Purchase(identifier: "com.reiterate.cheer.200", transactionID: 7), user: "qa-alice")) }
            // The sent line is flushed before the request goes: read it while the answer hangs.
            let path = session.folder + "/" + SessionJournal.recordName
            for _ in 0..<200 where !(String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)).contains("\"kind\":\"sent\"") {
                try await Task.sleep(for: .milliseconds(10))
            }
            let record = try #require(SessionRecord.read(folder: session.folder))
            #expect(record.exchanges.count == 1 && !record.exchanges[0].answered && record.exchanges[0].status == 0)
            let summary = SessionSummary(record)
            #expect(summary.covered.writesUnanswered == 1)
            #expect(summary.incomplete.contains { $0.hasPrefix("1 write was sent with no answer recorded") })
            // What it posted is known: the purchase is listed, with no answer.
            #expect(summary.purchases.map(\.transaction) == ["7"] && summary.purchases[0].posts.map(\.status) == [0])
            sending.cancel()
        }
    }

    @Test func linesFromManyWritersAtOnceStayWholeAndACutLastLineIsCounted() async throws {
        let (_, session) = try Self.started()
        // Eight journals (as eight processes would have), 200 notes each, all at once.
        await withTaskGroup(of: Void.self) { group in
            for w in 0..<8 {
                group.addTask {
                    guard let journal = SessionJournal(folder: session.folder, command: "w\(w)") else { return }
                    for n in 0..<200 { journal.note(String(repeating: "\(w)", count: 50 + n)) }
                }
            }
        }
        var record = try #require(SessionRecord.read(folder: session.folder))
        #expect(record.notes.count == 1600 && record.unreadableLines == 0)
        for w in 0..<8 { #expect(record.notes.filter { $0.command == "w\(w)" }.count == 200) }
        // A line a power cut left half written: counted, the rest read.
        let handle = try #require(FileHandle(forWritingAtPath: session.folder + "/" + SessionJournal.recordName))
        handle.seekToEndOfFile()
        handle.write(Data("{\"kind\":\"note\",\"te".utf8))
        try handle.close()
        record = try #require(SessionRecord.read(folder: session.folder))
        #expect(record.notes.count == 1600 && record.unreadableLines == 1)
        #expect(SessionSummary(record).incomplete.first == "1 line of the record could not be read (a process killed while writing one?)")
    }

    @Test func pastItsBoundAReadLosesItsBodiesThenIsCountedAndAWriteIsAlwaysKept() async throws {
        let (_, session) = try Self.started()
        let journal = try #require(SessionJournal(folder: session.folder, command: "watch", bodyLimit: 6_000, readLimit: 40_000))
        try await Self.withJournaledClient(journal) { client, _ in
            for _ in 0..<40 { _ = try await client.send(CheerHistory(user: "qa-alice", page: 1, perPage: 5)) }
            _ = try await client.send(SpendCheer(ShopWrite.Spend(product: "com.reiterate.pack.rain", amount: 1), user: "qa-alice"))
        }
        journal.commandEnded(0)
        let record = try #require(SessionRecord.read(folder: session.folder))
        let size = (try FileManager.default.attributesOfItem(atPath: session.folder + "/" + SessionJournal.recordName)[.size] as? Int) ?? 0
        #expect(record.droppedReads > 0 && record.exchanges.count + record.droppedReads == 41)
        #expect(record.exchanges.last?.method == "POST")  // the write, past both bounds, kept whole
        #expect(size < 40_000 + 20_000)
        let logged = record.logged()
        #expect(logged.first?.responseBodyPreview != nil && logged.dropLast().last?.responseBodyPreview == nil)
        #expect(logged.last?.requestBodyPreview?.contains("com.reiterate.pack.rain") == true)
        #expect(SessionSummary(record).incomplete.contains { $0.contains("reads past the record's bound were counted, not kept (every write and finding is)") })
    }

    @Test func startIsRefusedWhileOneIsOpenAndFindTakesANameAnIDOrAFolder() throws {
        let root = try Self.folder()
        let (sessions, first) = try Self.started("build 1.4.2", in: root)
        #expect(throws: TestSessions.Problem.self) { _ = try sessions.start(name: "again", build: nil, charter: nil, environment: "local", baseURL: "x", user: "u") }
        #expect(first.id.hasSuffix("-build-1-4-2") && TestSessions.isID(first.id))
        sessions.endCurrent(first)
        let second = try sessions.start(name: "../../etc", build: nil, charter: nil, environment: "local", baseURL: "x", user: "u")
        #expect(second.id.hasSuffix("-etc") && !second.id.contains("/"))
        #expect(try sessions.find("build 1.4.2") == first && sessions.find(first.id) == first && sessions.find(first.folder) == first)
        #expect(try sessions.find(nil) == second)
        #expect(throws: TestSessions.Problem.self) { _ = try sessions.find("nope") }
    }

    @Test func aCloseStopsEveryJournalOfTheSessionAndTheLedgerKeepsAWriteWithNoAnswer() async throws {
        let (sessions, session) = try Self.started()
        let running = try #require(SessionJournal(folder: session.folder, command: "proxy"))
        running.commandStarted(["proxy"])
        // A purchase whose process was killed before its answer: the ledger still sees the post, with no status.
        let line = "{\"at\":\"2026-11-29T10:00:00Z\",\"command\":\"buy\",\"entry\":{\"_source\":\"tool\",\"cache\":{},\"request\":{\"bodySize\":60,\"cookies\":[],"
            + "\"headers\":[],\"headersSize\":-1,\"httpVersion\":\"HTTP/1.1\",\"method\":\"POST\",\"postData\":{\"mimeType\":\"application/json\",\"text\":"
            + "\"{\\\"identifier\\\":\\\"com.reiterate.cheer.200\\\",\\\"transaction_id\\\":2000000000000009}\"},\"queryString\":[],"
            + "\"url\":\"http://127.0.0.1:1/api/v2/purchase_cheer?user_id=qa-alice\"},\"response\":{\"bodySize\":0,\"content\":{\"mimeType\":\"\",\"size\":0},"
            + "\"cookies\":[],\"headers\":[],\"headersSize\":-1,\"httpVersion\":\"HTTP/1.1\",\"redirectURL\":\"\",\"status\":0,\"statusText\":\"\"},"
            + "\"startedDateTime\":\"2026-11-29T10:00:00Z\",\"time\":0,\"timings\":{\"receive\":0,\"send\":0,\"wait\":0}},\"key\":\"9-1-1\",\"kind\":\"sent\",\"pid\":9}\n"
        let handle = try #require(FileHandle(forWritingAtPath: session.folder + "/" + SessionJournal.recordName))
        handle.seekToEndOfFile()
        handle.write(Data(line.utf8))
        try handle.close()
        let (events, name) = SessionLedger.sessionEvents(sessions)
        #expect(name == "refunds" && events.count == 1 && events[0].purchase?.transactionID == 2_000_000_000_000_009 && events[0].status == nil)
        let closed = try sessions.closeCurrent(tokenVariable: "T", secrets: [])
        #expect(closed.summary.stillRunning == ["proxy"] && closed.lines.contains { $0.hasPrefix("still running at the close: proxy") })
        // The proxy runs on: nothing more of it goes into the closed session, and it knows.
        running.note("after the close")
        running.commandEnded(0)
        #expect(running.closedUnder)
        let record = try #require(SessionRecord.read(folder: session.folder))
        #expect(record.notes.isEmpty && record.afterClose == 0 && record.closed != nil)
        #expect(SessionSummary(record).incomplete.contains("1 command had not said how it ended when the session closed (still running then, or killed)"))
    }

    // MARK: show, diff, close

    static func finding(_ kind: CheckID, _ subject: String, ids: [String], blame: Blame? = .server) -> ShopFinding {
        ShopFinding(kind: kind, subject: subject, blame: blame, expected: "e", actual: "a", requestIDs: ids)
    }

    @Test func diffMatchesByKindAndSubjectWithTheSessionsOwnIdsMaskedNeverByPositionOrCount() throws {
        let root = try Self.folder()
        let (sessions, a) = try Self.started("1.4.2", in: root)
        let ja = try #require(SessionJournal(folder: a.folder, command: "ledger"))
        ja.finding(Self.finding(.ledger(.notCredited), "transaction 2000000000000001 (com.reiterate.cheer.200 ×1)", ids: []))
        ja.finding(Self.finding(.contract(.schema), "GET /api/v1/cheer_history?user_id=qa-alice&page=1", ids: ["rq-aaaa"]))
        ja.finding(Self.finding(.write(.spendBalance), "POST /api/v1/spend_cheer", ids: ["rq-bbbb"]))
        ja.verdict(transaction: "2000000000000001", product: nil, verdict: "not credited", blame: .server, requestIDs: [])
        sessions.endCurrent(a)
        let (_, b) = try Self.started("1.4.3", in: root)
        let jb = try #require(SessionJournal(folder: b.folder, command: "ledger"))
        // The same not-credited purchase on another transaction, the same schema finding twice, on other ids.
        jb.finding(Self.finding(.ledger(.notCredited), "transaction 2000000000000077 (com.reiterate.cheer.200 ×1)", ids: []))
        jb.finding(Self.finding(.contract(.schema), "GET /api/v1/cheer_history?user_id=qa-alice&page=1", ids: ["rq-cccc"]))
        jb.finding(Self.finding(.contract(.schema), "GET /api/v1/cheer_history?user_id=qa-alice&page=1", ids: ["rq-dddd"]))
        jb.finding(Self.finding(.contract(.balanceRange), "GET /api/v1/balance?user_id=qa-alice", ids: ["rq-eeee"]))
        jb.verdict(transaction: "2000000000000001", product: nil, verdict: "credited", blame: nil, requestIDs: ["rq-ffff"])
        let diff = SessionDiff(try #require(SessionRecord.read(folder: a.folder)), try #require(SessionRecord.read(folder: b.folder)))
        #expect(diff.new.map(\.kind) == ["balance-range"])
        #expect(diff.fixed.map(\.kind) == ["spend-balance"])
        #expect(Set(diff.still.map(\.kind)) == ["ledger-not-credited", "schema"] && diff.still.first { $0.kind == "schema" }?.count == 2)
        #expect(diff.verdictsChanged == [SessionDiff.Changed(transaction: "2000000000000001", before: "not credited", after: "credited")])
        #expect(diff.hasNew)
        let back = SessionDiff(try #require(SessionRecord.read(folder: b.folder)), try #require(SessionRecord.read(folder: a.folder)))
        #expect(back.new.map(\.kind) == ["spend-balance"] && back.fixed.map(\.kind) == ["balance-range"])
        // A subject's numbers under six digits (a page, a pack's id) are its own, not masked.
        #expect(SessionDiff.masked("GET /x?page=2&id=abc rq-77 transaction 123456789") == "GET /x?page=2&id=# rq-# transaction #")
    }

    @Test func showGroupsFindingsByKindAndBlameAndListsPurchasesWithTheirLatestVerdict() throws {
        let (_, s) = try Self.started()
        let j = try #require(SessionJournal(folder: s.folder, command: "negative"))
        j.commandStarted(["negative", "--yes"])
        j.finding(Self.finding(.write(.refusalExpected), "negative overspend", ids: ["rq-1"]))
        j.finding(Self.finding(.write(.refusalExpected), "negative amount-zero", ids: ["rq-2"]))
        j.finding(Self.finding(.write(.refusalExpected), "negative overspend", ids: ["rq-3"]))
        j.finding(Self.finding(.ledger(.notCredited), "transaction 9", ids: [], blame: .app))
        j.verdict(transaction: "9", product: "com.reiterate.cheer.50", verdict: "not seen", blame: nil, requestIDs: [])
        j.verdict(transaction: "9", product: "com.reiterate.cheer.50", verdict: "not credited", blame: .app, requestIDs: [])
        j.commandEnded(65)
        let summary = SessionSummary(try #require(SessionRecord.read(folder: s.folder)))
        #expect(summary.groups.map { "\($0.kind) \($0.blame?.rawValue ?? "-") ×\($0.count)" } == ["refusal-expected server ×3", "ledger-not-credited app ×1"])
        #expect(summary.groups[0].subjects.map { "\($0.subject) ×\($0.count) \($0.requestIDs)" } == ["negative overspend ×2 [\"rq-1\", \"rq-3\"]", "negative amount-zero ×1 [\"rq-2\"]"])
        #expect(summary.purchases.map { "\($0.transaction) \($0.verdict ?? "-") \($0.posts.count)" } == ["9 not credited 0"])
        let text = summary.text(zone: TimeZone(identifier: "UTC") ?? .current)
        #expect(text.contains("  [refusal-expected] the server's fault ×3\n    negative overspend ×2: expected e, got a (rq-1, rq-3)\n"))
        #expect(text.contains("ran negative --yes") && text.contains("negative ended (exit 65)"))
        #expect(summary.incomplete.isEmpty)
    }

    @Test func theBundleHoldsEveryFindingNoSecretAndATarThatTarReads() async throws {
        let (sessions, s) = try Self.started()
        let secret = "dev-token-but-secret-\(UUID().uuidString)"
        let j = try #require(SessionJournal(folder: s.folder, command: "buy"))
        j.finding(Self.finding(.write(.purchaseBalance), "POST /api/v2/purchase_cheer", ids: ["rq-0011"]))
        j.note("the token was \(secret)")  // a tester who pasted a token into a note
        try await Self.withJournaledClient(j) { client, _ in
            _ = try await client.send(PurchaseCheer(ShopWrite.Purchase(identifier: "com.reiterate.cheer.50", transactionID: 99), user: "qa-alice"))
        }
        let closed = try sessions.closeCurrent(tokenVariable: "REITERATE_TOKEN", secrets: [secret])
        #expect(sessions.current() == nil)
        #expect(closed.bundle.files == ["session.har", "report.md", "curl.sh", "record.jsonl"])
        for name in closed.bundle.files {
            let data = try #require(FileManager.default.contents(atPath: closed.bundle.folder + "/" + name))
            #expect(!String(decoding: data, as: UTF8.self).contains(secret), "\(name)")
        }
        let report = String(decoding: FileManager.default.contents(atPath: closed.bundle.folder + "/report.md") ?? Data(), as: UTF8.self)
        #expect(report.contains("### purchase-balance — the server's fault ×1") && report.contains("`rq-0011`") && report.contains("the token was <redacted>"))
        let curl = String(decoding: FileManager.default.contents(atPath: closed.bundle.folder + "/curl.sh") ?? Data(), as: UTF8.self)
        #expect(curl.contains("-X POST") && curl.contains("\"Authorization: Bearer $REITERATE_TOKEN\"") && curl.contains("\"transaction_id\":99"))
        // tar(1) is the oracle for the archive.
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/tar")
        tar.arguments = ["-tvf", closed.bundle.archive]
        let out = Pipe()
        tar.standardOutput = out
        try tar.run()
        tar.waitUntilExit()
        let listing = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(tar.terminationStatus == 0)
        #expect(listing.split(separator: "\n").map { String($0.split(separator: " ").last ?? "") } == closed.bundle.files.map { "\(s.id)/\($0)" })
        #expect(listing.split(separator: "\n").allSatisfy { $0.hasPrefix("-rw-------") })
        // Closed: its record ends with the close, and no journal can be had for it.
        #expect(SessionRecord.read(folder: s.folder)?.closed?.bundle == closed.bundle.folder && sessions.journal(command: "x") == nil)
    }
}
