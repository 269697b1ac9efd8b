import Foundation
import ShopAPI
import JSONTokens
import Testing
@testable import ShopCompare

/// The structural diff: keyed by the shop's identities, by place elsewhere; ignore rules; moves;
/// a long history compared a page at a time.
@Suite struct DifferTests {
    static func json(_ text: String) -> JSONValue {
        guard let v = JSONValue.parse(Array(text.utf8)) else { fatalError("bad JSON in a test: \(text)") }
        return v
    }

    static func pack(_ id: String, _ name: String, price: Int = 199, cheer: Int = 10) -> String {
        #"{"identifier":"\#(id)","name":"\#(name)","price_cents":\#(price),"cheer_total":\#(cheer),"tags":["rain","sleep"]}"#
    }

    static func packs(_ items: [String]) -> JSONValue { json(#"{"packs":["# + items.joined(separator: ",") + "]}") }

    static func read(_ what: RecordedRead.What, _ body: JSONValue) -> RecordedRead {
        RecordedRead(what: what, target: "/api/v1/x", requestID: nil, status: 200, at: nil, body: body)
    }

    static func compare(_ a: JSONValue, _ b: JSONValue, ignore: [String] = []) throws -> [Difference] {
        var c = Comparison(ignore: try IgnoreRules(ignore))
        c.packs(read(.packs, a), read(.packs, b))
        return c.finish()
    }

    /// The issue's case: one price changed, one pack removed, one added — exactly three differences,
    /// named by identifier, not a cascade of shifted places.
    @Test func aPriceChangeARemovalAndAnAdditionAreThreeDifferences() throws {
        let a = Self.packs([Self.pack("p.rain", "Rain"), Self.pack("p.cafe", "Café"), Self.pack("p.ocean", "Ocean")])
        let b = Self.packs([Self.pack("p.rain", "Rain", price: 249), Self.pack("p.ocean", "Ocean"), Self.pack("p.new", "New")])
        let d = try Self.compare(a, b)
        #expect(d.map { "\($0.kind.rawValue) \($0.path)" } == ["changed packs[p.rain].price_cents", "removed packs[p.cafe]", "added packs[p.new]"])
        #expect(d[0].old == .int(199) && d[0].new == .int(249) && d[0].label == "Rain" && d[0].path.rule == "packs[].price_cents")
        #expect(try Self.compare(a, a).isEmpty)
    }

    @Test func ignoreRulesLeaveOutAPathAndWhatIsUnderIt() throws {
        let a = Self.packs([Self.pack("p.rain", "Rain", cheer: 10)])
        let b = Self.packs([Self.pack("p.rain", "Rain", cheer: 17)])
        #expect(try Self.compare(a, b).map(\.path.description) == ["packs[p.rain].cheer_total"])
        #expect(try Self.compare(a, b, ignore: ["packs[].cheer_total"]).isEmpty)
        #expect(try Self.compare(a, b, ignore: ["packs[].cheer_*"]).isEmpty)
        #expect(try Self.compare(a, b, ignore: ["packs"]).isEmpty)
        // A rule for another field leaves this one.
        #expect(try Self.compare(a, b, ignore: ["packs[].price_cents", "history[].comments[].body"]).count == 1)
        #expect(throws: IgnoreRules.Invalid.self) { try IgnoreRules(["packs[p.rain].cheer_total"]) }
        #expect(throws: IgnoreRules.Invalid.self) { try IgnoreRules([""]) }
    }

    /// Order only: the elements outside the longest run kept in order are moved; nothing else is said.
    @Test func aReorderIsAMoveNotAChange() throws {
        let a = Self.packs([Self.pack("p.1", "One"), Self.pack("p.2", "Two"), Self.pack("p.3", "Three")])
        let b = Self.packs([Self.pack("p.3", "Three"), Self.pack("p.1", "One"), Self.pack("p.2", "Two")])
        let d = try Self.compare(a, b)
        #expect(d.count == 1 && d[0].kind == .moved && d[0].path.description == "packs[p.3]" && d[0].places?.old == 2 && d[0].places?.new == 0)
    }

    /// Lists the shop does not key (tags, comments) are compared by place; a whole object added or
    /// removed is one difference.
    @Test func unkeyedListsByPlaceAndFieldsByPath() {
        let differ = Differ()
        let a = Self.json(#"{"balance":1250}"#), b = Self.json(#"{"balance":1243,"currency":"cheer"}"#)
        #expect(differ.diff(a, b, at: .root("balance")).map { "\($0.kind.rawValue) \($0.path)" } == ["changed balance.balance", "added balance.currency"])
        let x = Self.json(#"{"comments":[{"body":"a"},{"body":"b"}]}"#), y = Self.json(#"{"comments":[{"body":"a"},{"body":"c"},{"body":"d"}]}"#)
        #expect(differ.diff(x, y, at: .root("e")).map { "\($0.kind.rawValue) \($0.path)" } == ["changed e.comments[1].body", "added e.comments[2]"])
        // A value that changes type is a change, not a silent equality (1 is not 1.0, nor "1").
        #expect(differ.diff(.int(1), .double(1), at: .root("n")).count == 1)
        #expect(differ.diff(.int(1), .string("1"), at: .root("n")).count == 1)
    }

    static func entry(_ i: Int, amount: Int = 5, comment: String = "nice") -> String {
        #"{"id":"h-\#(i)","creator":"F","amount":\#(amount),"product":"p.rain","date":"2026-11-\#(10 + i % 10)T00:00:00Z","comments":[{"signature":"qa","body":"\#(comment)"}]}"#
    }

    static func page(_ entries: [String], page: Int = 1, total: Int? = nil) -> JSONValue {
        json(#"{"history":["# + entries.joined(separator: ",") + #"],"page":\#(page),"per_page":200,"total_pages":1,"total_count":\#(total ?? entries.count)}"#)
    }

    /// A snapshot before a spend against a read after: the new entry is added, and nothing else of
    /// the history differs, though every old entry moved down a place.
    @Test func aNewEntryAtTheTopIsOneAdditionNotACascade() throws {
        let before = (1...30).map { Self.entry($0) }
        let after = [Self.entry(99, amount: 7)] + before
        var c = Comparison()
        c.history(a: Self.read(.history(page: 1), Self.page(before)), b: Self.read(.history(page: 1), Self.page(after)))
        let d = c.finish()
        #expect(d.map { "\($0.kind.rawValue) \($0.path)" } == ["changed history_total", "added history[id=h-99]"])
    }

    /// Two long histories, a page at a time from each side and out of step: the same differences as
    /// comparing them whole, and only the entries still waiting for their other side are held.
    @Test func pagesFromEachSideOutOfStepGiveTheSameDifferences() throws {
        let count = 5_000
        let a = (0..<count).map { Self.entry($0) }
        var b = a
        b[1_234] = Self.entry(1_234, comment: "edited")
        b.remove(at: 3_000)
        b.insert(Self.entry(90_000, amount: 9), at: 10)
        var whole = Comparison()
        whole.history(a: Self.read(.history(page: 1), Self.page(a)), b: Self.read(.history(page: 1), Self.page(b)))
        let expected = whole.finish()
        #expect(expected.map { "\($0.kind.rawValue) \($0.path)" }.sorted() == ["added history[id=h-90000]", "changed history[id=h-1234].comments[0].body", "removed history[id=h-3000]"])
        var paged = Comparison()
        var peak = 0
        let pagesA = stride(from: 0, to: a.count, by: 200).map { Array(a[$0..<min(a.count, $0 + 200)]) }
        let pagesB = stride(from: 0, to: b.count, by: 150).map { Array(b[$0..<min(b.count, $0 + 150)]) }
        for i in 0..<max(pagesA.count, pagesB.count) {
            paged.history(a: i < pagesA.count ? Self.read(.history(page: i + 1), Self.page(pagesA[i], page: i + 1, total: a.count)) : nil,
                          b: i < pagesB.count ? Self.read(.history(page: i + 1), Self.page(pagesB[i], page: i + 1, total: b.count)) : nil)
            peak = max(peak, paged.history.waitingA.count + paged.history.waitingB.count)
        }
        let got = paged.finish()
        #expect(got.filter { $0.path.description != "history_total" }.map { "\($0.kind.rawValue) \($0.path)" }.sorted()
                == expected.map { "\($0.kind.rawValue) \($0.path)" }.sorted())
        #expect(peak < 1_500, "held \(peak) entries at most of \(count)")
    }

    /// Differences are symmetric: B against A says the opposite of A against B.
    @Test func swappingTheSidesSwapsAddedAndRemoved() throws {
        let a = Self.packs([Self.pack("p.rain", "Rain"), Self.pack("p.cafe", "Café")])
        let b = Self.packs([Self.pack("p.rain", "Rain", price: 249), Self.pack("p.new", "New")])
        let ab = try Self.compare(a, b), ba = try Self.compare(b, a)
        let flipped = ab.map { d -> String in
            let kind = d.kind == .added ? "removed" : d.kind == .removed ? "added" : d.kind.rawValue
            return "\(kind) \(d.path)"
        }
        #expect(Set(flipped) == Set(ba.map { "\($0.kind.rawValue) \($0.path)" }))
    }

    /// A key given twice on a side (a server bug) pairs the nth with the nth, whichever side comes first.
    @Test func aRepeatedKeyPairsInOrder() throws {
        let dup = [Self.entry(1), Self.entry(1), Self.entry(2)]
        var c = Comparison()
        c.history(a: Self.read(.history(page: 1), Self.page(dup)), b: nil)
        c.history(a: nil, b: Self.read(.history(page: 1), Self.page([Self.entry(1), Self.entry(2)])))
        let d = c.finish()
        #expect(d.map { "\($0.kind.rawValue) \($0.path)" } == ["removed history[id=h-1#2]"])
    }

    @Test func textAndJSONSayTheSame() throws {
        let a = Self.packs([Self.pack("p.rain", "Rain \u{1B}[31mred"), Self.pack("p.cafe", "Café")])
        let b = Self.packs([Self.pack("p.rain", "Rain \u{1B}[31mred", price: 249)])
        let d = try Self.compare(a, b)
        let sideA = SideDescription(name: "env:local", environment: "local", user: "qa-alice", takenAt: nil)
        let sideB = SideDescription(name: "before.json", environment: "staging", user: "qa-alice", takenAt: nil)
        let text = DiffReport.text(d, a: sideA, b: sideB)
        #expect(text.contains("changed  packs[p.rain].price_cents") && text.contains("199 → 249") && text.contains("2 differences: 1 changed, 1 removed"))
        #expect(!text.contains("\u{1B}"))  // server text made safe
        guard case let .object(o)? = JSONValue.parse(Array(DiffReport.json(d, a: sideA, b: sideB, requestIDs: (["rq-1"], ["rq-2"])).utf8)),
              case let .array(items)? = o["differences"] else { Issue.record("not JSON"); return }
        #expect(items.count == 2 && o["same"] == .bool(false))
        if case let .object(first) = items[0] {
            #expect(first["kind"] == .string("changed") && first["rule"] == .string("packs[].price_cents") && first["old"] == .int(199) && first["new"] == .int(249))
        }
        #expect(DiffReport.text([], a: sideA, b: sideB).contains("The same: no difference."))
    }
}

/// Snapshot files and HAR files read as snapshots.
@Suite struct SnapshotFileTests {
    @Test func aSnapshotReadsBackAsItWasWritten() throws {
        let reads = [
            RecordedRead(what: .balance, target: "/api/v1/balance?user_id=qa-alice", requestID: "rq-1", status: 200, at: Date(timeIntervalSince1970: 1_790_000_000.5),
                         body: DifferTests.json(#"{"balance":1250}"#)),
            RecordedRead(what: .history(page: 2), target: "/api/v1/cheer_history?user_id=qa-alice&page=2&per_page=200", requestID: "rq-2", status: 200, at: nil,
                         body: DifferTests.page([DifferTests.entry(1, comment: "\u{202E}bidi \\\"quoted\\\"")])),
        ]
        let snapshot = Snapshot(environment: "local", baseURL: "http://user:secret@127.0.0.1:8080", user: "qa-alice", takenAt: Date(timeIntervalSince1970: 1_790_000_000), reads: reads)
        #expect(snapshot.baseURL == "http://127.0.0.1:8080")  // no user info kept
        let again = try Snapshot.read(snapshot.encoded())
        #expect(again == snapshot)
        #expect(again.balance?.requestID == "rq-1" && again.historyPages.first?.what == .history(page: 2))
    }

    @Test func aHARReadsAsASnapshotAndItsWritesAreListed() throws {
        let har = #"""
        {"log":{"version":"1.2","entries":[
         {"startedDateTime":"2026-11-24T10:00:00.000Z","request":{"method":"GET","url":"http://127.0.0.1:8080/api/v1/balance?user_id=qa-bob","headers":[]},
          "response":{"status":200,"headers":[{"name":"X-Request-Id","value":"rq-b"}],"content":{"mimeType":"application/json","text":"{\"balance\":5}"}}},
         {"startedDateTime":"2026-11-24T10:00:01.000Z","request":{"method":"POST","url":"http://127.0.0.1:8080/api/v1/spend_cheer?user_id=qa-bob","headers":[]},
          "response":{"status":200,"headers":[],"content":{"text":"{\"balance\":4}"}}},
         {"startedDateTime":"2026-11-24T10:00:02.000Z","request":{"method":"GET","url":"http://127.0.0.1:8080/api/v1/cheer_history?user_id=qa-bob&page=1&per_page=50","headers":[]},
          "response":{"status":200,"headers":[],"content":{"text":"{\"history\":[], \"total_count\": 0\n… (900 more bytes)"}}}
        ]}}
        """#
        let s = try Snapshot.read(Array(har.utf8))
        #expect(s.user == "qa-bob" && s.baseURL == "http://127.0.0.1:8080")
        #expect(s.balance?.body == DifferTests.json(#"{"balance":5}"#) && s.balance?.requestID == "rq-b")
        #expect(s.writes.map(\.target) == ["/api/v1/spend_cheer?user_id=qa-bob"])
        // A body the HAR cut short is not compared as if it were empty.
        #expect(s.historyPages.isEmpty && s.cut == ["GET /api/v1/cheer_history?user_id=qa-bob&page=1&per_page=50"])
        #expect(throws: Snapshot.Unreadable.self) { try Snapshot.read(Array(#"{"hello":1}"#.utf8)) }
    }
}

extension DifferTests {
    /// One new entry on top pushes the last of page 1 onto page 2: comparing page 1 alone, that entry
    /// is not called removed (the other side has more pages, and it is no newer than what was read).
    @Test func anEntryPushedPastTheLastPageComparedIsNotCalledRemoved() {
        func dated(_ i: Int, day: Int) -> String {
            #"{"id":"h-\#(i)","creator":"F","amount":5,"product":"p.rain","date":"2026-11-\#(String(format: "%02d", day))T00:00:00Z"}"#
        }
        let a = (0..<10).map { dated($0, day: 20 - $0) }                 // h-0 newest … h-9 oldest
        let b = [dated(99, day: 21)] + a.prefix(9)                        // a new one on top; h-9 now on page 2
        func page(_ items: [String]) -> JSONValue {
            Self.json(#"{"history":["# + items.joined(separator: ",") + #"],"page":1,"per_page":10,"total_pages":2,"total_count":20}"#)
        }
        var c = Comparison()
        c.history(a: Self.read(.history(page: 1), page(a)), b: Self.read(.history(page: 1), page(b)))
        let d = c.finish()
        #expect(d.map { "\($0.kind.rawValue) \($0.path)" } == ["added history[id=h-99]"] && c.pastTheEdge == 1)
        // With no page after it, the same entry missing is removed.
        var last = Comparison()
        let lastPage = Self.json(#"{"history":["# + b.joined(separator: ",") + #"],"page":2,"per_page":10,"total_pages":2,"total_count":20}"#)
        last.history(a: Self.read(.history(page: 2), page(a)), b: Self.read(.history(page: 2), lastPage))
        #expect(last.finish().contains { $0.kind == .removed && $0.path.description == "history[id=h-9]" })
    }
}

extension DifferTests {
    /// Nine entries sharing a key on both sides (keyless entries alike in date, product, amount and
    /// creator) pair up: no difference. Duplicate keys inside an object are read as a reader takes them.
    @Test func manyRepeatsOfAKeyPairUpAndAnObjectsRepeatedKeyIsItsLast() {
        let same = #"{"creator":"F","amount":5,"product":"p.rain","date":"2026-11-10T00:00:00Z"}"#
        var c = Comparison()
        let page = Self.page(Array(repeating: same, count: 9))
        c.history(a: Self.read(.history(page: 1), page), b: Self.read(.history(page: 1), page))
        #expect(c.finish().isEmpty)
        let differ = Differ()
        #expect(differ.diff(Self.json(#"{"price":1,"price":2}"#), Self.json(#"{"price":2}"#), at: .root("p")).isEmpty)
    }
}

extension SnapshotFileTests {
    /// A session's HAR holds the list's pages (per_page 50), the watch's (20), and another user's after
    /// a switch: the history compared is one series of the snapshot's user, by page number.
    @Test func aSessionsHARGivesOneSeriesOfTheUsersPages() {
        func read(_ user: String, page: Int, perPage: Int) -> RecordedRead {
            RecordedRead(what: .history(page: page), target: "/api/v1/cheer_history?user_id=\(user)&page=\(page)&per_page=\(perPage)", requestID: nil, status: 200,
                         at: nil, body: DifferTests.page([DifferTests.entry(page)], page: page))
        }
        let s = Snapshot(environment: nil, baseURL: nil, user: "qa-alice", takenAt: nil,
                         reads: [read("qa-alice", page: 1, perPage: 50), read("qa-alice", page: 1, perPage: 20), read("qa-alice", page: 3, perPage: 50),
                                 read("qa-whale", page: 2, perPage: 50)])
        #expect(s.historyPages.map(\.what) == [.history(page: 1), .history(page: 3)] && s.historyPages.allSatisfy { $0.target.hasSuffix("per_page=50") })
        #expect(s.historyPage(1)?.target.contains("qa-alice") == true && s.historyPage(2) == nil)
    }
}

extension DifferTests {
    /// The edge of the pages compared reads entry dates with the reader it is given: the contract
    /// allows `-05` offsets and a space for the T, which the default reader does not take.
    @Test func theEdgeUsesTheDateReaderItIsGiven() {
        func dated(_ i: Int, _ date: String) -> String { #"{"id":"h-\#(i)","creator":"F","amount":5,"product":"p.rain","date":"\#(date)"}"# }
        let a = (0..<3).map { dated($0, "2026-11-2\(5 - $0) 10:00:00-05") }
        let b = [dated(9, "2026-11-26 10:00:00-05")] + a.prefix(2)
        func page(_ items: [String]) -> JSONValue {
            Self.json(#"{"history":["# + items.joined(separator: ",") + #"],"page":1,"per_page":3,"total_pages":2,"total_count":6}"#)
        }
        var plain = Comparison()
        plain.history(a: Self.read(.history(page: 1), page(a)), b: Self.read(.history(page: 1), page(b)))
        #expect(plain.finish().contains { $0.kind == .removed })  // no date read: not excused
        // The reader the app gives it (`compare`, `replay`, pins): the contract's, ShopAPI's ISO8601.
        #expect(ISO8601.parse("2026-11-25 10:00:00-05") != nil && Stamp.date("2026-11-25 10:00:00-05") == nil)
        var c = Comparison(dates: { ISO8601.parse($0) })
        c.history(a: Self.read(.history(page: 1), page(a)), b: Self.read(.history(page: 1), page(b)))
        #expect(c.finish().map { $0.kind } == [.added] && c.pastTheEdge == 1)
    }
}
