import AppStoreRecord
import Foundation
import Logging
import ShopAPI
import StubServer
import Testing
@testable import ShopLedger

/// The ledger's read-and-judge, out of the executable (issue 44, item 5): the ids a history starts from, the
/// transactions a read holds, and the probe's posts against the stand-in in this process on 127.0.0.1.
@Suite struct LedgerSourcesTests {
    static func purchase(_ id: UInt64) -> ShopEvent {
        ShopEvent(kind: .purchase(.init(identifier: "com.reiterate.cheer.200", transactionID: .number(id))), at: LedgerTests.t0, user: "qa-alice",
                  status: 200, balance: nil, requestID: "post-\(id)", source: "app")
    }

    @Test func theHistoryStartsFromTheIdsGivenThenThosePostedEachOnceAndAtMostFive() {
        let events = [Self.purchase(7), Self.purchase(7), Self.purchase(8)] + (10...20).map { Self.purchase(UInt64($0)) }
        #expect(LedgerSources.candidates(given: ["9", "7"], events: events) == ["9", "7", "8", "10", "11"])
        #expect(LedgerSources.candidates(given: [], events: []).isEmpty)
    }

    @Test func aReadHoldsEveryVerifiedTransactionARefundedRecordKeptOverAnother() throws {
        let refundedAt = LedgerTests.t0 + 60
        let sources = LedgerSources(history: Listing(records: [LedgerTests.paid("1"), LedgerTests.paid("2")]),
                                    refunds: Listing(records: [LedgerTests.paid("2", revoked: refundedAt)]),
                                    lookups: ["3": .record(LedgerTests.paid("3")), "4": .unknown])
        let byID = sources.transactions
        #expect(byID.keys.sorted() == ["1", "2", "3"])
        #expect(byID["2"]?.isRevoked == true && byID["1"]?.isRevoked == false)
        // The judge over this read: a line for each of the customer's purchases (a lookup serves a credit the
        // events show, and none does here). With no exchanges given, neither is "never credited": not seen.
        let ledger = sources.judge([], catalog: LedgerTests.catalog)
        #expect(ledger.lines.map(\.transactionID).sorted() == ["1", "2"])
        #expect(ledger.lines.allSatisfy { $0.verdict == .notSeen && !$0.isFinding })
    }

    /// The probe posts each transaction once: a fresh id is credited, one posted before answers 409, and the
    /// balance across them moved by what the 200s say (the stand-in credits .N cheer for an id ending in .N).
    @Test func theProbePostsEachOnceAndJudgesTheBalanceAcrossThem() async throws {
        let stub = try await RunningStub.start(StubSettings(requestLog: false))
        let transport = try AsyncHTTPTransport(configuration: .init(connectTimeout: .seconds(2)))
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let client = ShopClient(configuration: ShopClientConfiguration(baseURL: stub.url, requestTimeout: .seconds(5)), transport: transport,
                                tokens: TokenStore(accessToken: "dev-token", refreshToken: nil), pipeline: .standard(logger: logger), logger: logger)
        let fresh = UInt64.random(in: 5_000_000_000...6_000_000_000)
        func paid(_ id: UInt64, _ product: String) throws -> AppStoreTransaction {
            try #require(LedgerTests.paid(String(id), product).transaction)
        }
        let outcome = await Result { () async throws -> (LedgerProbe.Run, LedgerProbe.Run) in
            let first = try await LedgerProbe.run([try paid(fresh, "com.reiterate.cheer.200")], client: client, user: "qa-alice",
                                                  catalog: LedgerTests.catalog)
            let again = try await LedgerProbe.run([try paid(fresh, "com.reiterate.cheer.200")], client: client, user: "qa-alice",
                                                  catalog: LedgerTests.catalog)
            return (first, again)
        }
        try? await transport.shutdown()
        await stub.stop()
        let (first, again) = try outcome.get()
        guard case .credited? = first.results[String(fresh)], case .alreadyCredited? = again.results[String(fresh)] else {
            Issue.record("results: \(first.results), then \(again.results)")
            return
        }
        #expect(first.balanceFinding == false && first.balanceWords?.contains("as the probe's answers say") == true, "\(first.balanceWords ?? "")")
        #expect(again.balanceFinding == false)
    }
}

extension Result where Failure == any Error {
    /// The result of an async throwing body (Swift's `Result(catching:)` takes a synchronous one).
    init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// `ledger`'s lines, out of the executable: the text line sanitizes what the server and the App Store sent,
/// the JSON line reads back, and the summary says what it did not cover.
@Suite struct LedgerWordsTests {
    static func line(_ verdict: Verdict, words: String = "seen", finding: Bool = false) -> LedgerLine {
        LedgerLine(at: LedgerTests.t0, transactionID: "20000\u{1B}[31m1", productID: "com.reiterate.cheer.200", quantity: 2, requestIDs: ["rq-1"],
                   user: "qa-alice", verdict: verdict, blame: finding ? .server : nil, words: words, isFinding: finding)
    }

    @Test func theTextLineIsOnePrintableLineWithItsBlame() {
        let text = Self.line(.creditMismatch, words: "credited 200\nnot 400", finding: true).text
        #expect(!text.contains("\u{1B}") && !text.contains("\n"))
        #expect(text.hasPrefix("2026-") && text.contains("com.reiterate.cheer.200 ×2") && text.contains("credit mismatch (the server's fault): credited 200"))
    }

    @Test func theJSONLineReadsBack() throws {
        let json = Self.line(.credited).json
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["transaction_id"] as? String == "20000\u{1B}[31m1")  // JSON keeps the value; its reader shows it
        #expect(object["verdict"] as? String == "credited" && object["finding"] as? Bool == false && object["blame"] is NSNull)
        #expect(object["request_ids"] as? [String] == ["rq-1"] && object["quantity"] as? Int == 2)
        let probe = try #require(try JSONSerialization.jsonObject(with: Data(LedgerProbe.findingJSON("moved by 3").utf8)) as? [String: Any])
        #expect(probe["probe"] as? Bool == true && probe["words"] as? String == "moved by 3")
    }

    @Test func theSummarySaysWhatItCovered() {
        var notSeen = Self.line(.notSeen)
        notSeen.transactionID = "2"
        let ledger = Ledger(lines: [Self.line(.credited), notSeen])
        #expect(ledger.summary == "ledger: 2 lines (1 credited, 1 not seen); 0 findings; 1 of 2 judged whole, 1 not seen or not checked")
        #expect(Ledger(lines: [Self.line(.credited)]).summary == "ledger: 1 line (1 credited); 0 findings")
    }
}
