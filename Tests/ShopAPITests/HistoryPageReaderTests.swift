import Foundation
import JSONTokens
import StubCore
import Testing
@testable import ShopAPI

/// The token reader of history pages against its oracle, `JSONDecoder` on the raw bytes into a page as
/// this test reads the contract (`OraclePage`, not the app's own types or repair): on every page it
/// reads, the two agree exactly; where it declines, the endpoint falls back to the app's decoder, whose
/// results are held to values written out here. Pages are generated with every irregularity a server
/// could send, and the fuzz corpus is replayed.
@Suite struct HistoryPageReaderTests {
    /// A history page as the contract has it, decoded by `JSONDecoder` alone: every row a plain entry
    /// (a row that is not makes the whole oracle decline: the reader must decline it too).
    struct OraclePage: Decodable {
        struct Entry: Decodable {
            var id: String?
            var creator: String
            var amount: Int
            var product: String
            var date: String
            var comments: [Comment]?
        }

        struct Comment: Decodable {
            var signature: String?
            var body: String?
        }

        var history: [Entry]
        var page: Int?
        var per_page: Int?
        var total_pages: Int?
        var total_count: Int?
    }

    /// What `JSONDecoder` makes of the page (nil when it refuses it, or a row is not a plain entry). Lone
    /// surrogate escapes, which Foundation refuses the whole body for, are made `\uFFFD` first by this
    /// test's own scan (`lonelySurrogatesReplaced`); dates are read by the contract's reader
    /// (`ISO8601.parse`, a unit of its own, tested in LogAndDecodingTests; the reader under test uses it too).
    static func oracle(_ body: [UInt8]) -> CheerHistoryPage? {
        guard let page = try? JSONDecoder().decode(OraclePage.self, from: Data(lonelySurrogatesReplaced(body))) else { return nil }
        var items: [HistoryItem] = []
        for e in page.history {
            guard let date = ISO8601.parse(e.date) else { return nil }
            let comments = e.comments.map { $0.map { ShopAPI.CheerComment(signature: $0.signature, body: $0.body) } }
            items.append(.entry(ShopAPI.CheerHistoryEntry(id: e.id, creator: e.creator, amount: e.amount, product: e.product, date: date, comments: comments)))
        }
        if let p = page.page, let per = page.per_page, let pages = page.total_pages, let count = page.total_count {
            return CheerHistoryPage(items: items, page: p, perPage: per, totalPages: pages, totalCount: count)
        }
        // The contract's older servers send no paging: the whole history is one page.
        return CheerHistoryPage(items: items, page: 1, perPage: max(items.count, 1), totalPages: items.isEmpty ? 0 : 1, totalCount: items.count)
    }

    /// `\uD800`–`\uDFFF` escapes that are not a high-then-low pair become `\uFFFD`; every other escape
    /// and byte is kept.
    static func lonelySurrogatesReplaced(_ b: [UInt8]) -> [UInt8] {
        func unit(at j: Int) -> Int? {
            guard j + 6 <= b.count, b[j] == UInt8(ascii: "\\"), b[j + 1] == UInt8(ascii: "u"),
                  b[(j + 2)..<(j + 6)].allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }) else { return nil }
            return Int(String(decoding: b[(j + 2)..<(j + 6)], as: UTF8.self), radix: 16)
        }
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            guard b[i] == UInt8(ascii: "\\"), i + 1 < b.count else {
                out.append(b[i])
                i += 1
                continue
            }
            guard let u = unit(at: i) else {
                out += b[i...(i + 1)]  // another escape, kept whole (so `\\u` is not read as one)
                i += 2
                continue
            }
            if (0xD800...0xDBFF).contains(u), let low = unit(at: i + 6), (0xDC00...0xDFFF).contains(low) {
                out += b[i..<(i + 12)]
                i += 12
            } else {
                out += (0xD800...0xDFFF).contains(u) ? Array("\\uFFFD".utf8) : Array(b[i..<(i + 6)])
                i += 6
            }
        }
        return out
    }

    /// The reader's result, held to the oracle's; false when it declined. Where it declined, the
    /// oracle must decline too or the endpoint's fallback must give the oracle's page.
    @discardableResult
    static func agree(_ body: [UInt8], _ note: @autoclosure () -> String) -> Bool {
        let fast = HistoryPageReader.read(body, tokens: JSONTokenizer.tokens(body))
        let slow = oracle(body)
        guard let fast else {
            if let slow { #expect((try? CheerHistory.decode(body)) == slow, "declined, then decoded otherwise: \(note())") }
            return false
        }
        #expect(slow == fast, "\(note()): \(String(decoding: body.prefix(300), as: UTF8.self))")
        // The endpoint's decode gives the same (it took the reader's page).
        #expect((try? CheerHistory.decode(body)) == fast)
        return true
    }

    @Test func aPlainPageIsReadByTheTokensAndMatchesTheDecoder() throws {
        let json = #"{"history":[{"id":"h1","creator":"Field & Foley","amount":7,"product":"com.reiterate.pack.rain","date":"2026-11-20T08:15:30.5+01:00","comments":[{"signature":"tomás","body":"great \"pack\" \u00e9 \ud83d\ude00"},{"signature":null},{}]},{"creator":"c","amount":-3,"product":"p","date":"2022-08-18T02:30:00Z","comments":null,"extra":{"a":[1,2.5,true,null]}}],"page":2,"per_page":2,"total_pages":9,"total_count":17}"#
        let body = Array(json.utf8)
        let page = try #require(HistoryPageReader.read(body, tokens: JSONTokenizer.tokens(body)))
        #expect(page.page == 2 && page.perPage == 2 && page.totalPages == 9 && page.totalCount == 17 && page.entries.count == 2)
        #expect(page.entries[0].comments?[0].body == "great \"pack\" é 😀")
        #expect(page.entries[1].id == nil && page.entries[1].comments == nil)
        #expect(Self.agree(body, "plain"))
    }

    @Test func whatTheDecoderWordsIsLeftToIt() {
        // Each of these is read by JSONDecoder (an unreadable entry, kept in its place, or a refusal).
        let declined = [
            #"{"history":[{"creator":"c","amount":"x","product":"p","date":"2022-08-18T02:30:00Z"}]}"#,
            #"{"history":[{"creator":"c","amount":1.5,"product":"p","date":"2022-08-18T02:30:00Z"}]}"#,
            #"{"history":[{"creator":"c","amount":5,"product":"p","date":"yesterday"}]}"#,
            #"{"history":[{"creator":"c","amount":5,"product":"p"}]}"#,
            #"{"history":[{"creator":"c","creator":"d","amount":5,"product":"p","date":"2022-08-18T02:30:00Z"}]}"#,
            #"{"history":[{"unreadable":true,"index":0,"reason":"r"}]}"#,
            "{\"history\":[{\"creator\":\"a\u{01}b\",\"amount\":5,\"product\":\"p\",\"date\":\"2022-08-18T02:30:00Z\"}]}",
            #"{"history":[],"page":"1"}"#,
            #"{"history":[]"#,
            #"{"page":1}"#,
            #"[]"#,
        ]
        for json in declined {
            let body = Array(json.utf8)
            #expect(HistoryPageReader.read(body, tokens: JSONTokenizer.tokens(body)) == nil, "\(json)")
        }
        // What the fallback makes of them, written out: the one irregular entry kept in its place as
        // unreadable, or the page refused whole.
        for json in declined.prefix(4) + [declined[5]] {
            let page = try? CheerHistory.decode(Array(json.utf8))
            #expect(page?.items.count == 1 && page?.entries.isEmpty == true, "\(json): \(String(describing: page))")
            if case let .unreadable(u)? = page?.items.first { #expect(u.index == 0, "\(json)") } else { Issue.record("\(json): not unreadable") }
        }
        for json in declined.suffix(3) { #expect((try? CheerHistory.decode(Array(json.utf8))) == nil, "\(json)") }
        // Bad UTF-8, even in a value the page does not use, is left to the decoder (which lets it
        // pass there): declining is always safe, reading otherwise than the decoder never is.
        let bad: [UInt8] = Array(#"{"history":[],"x":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(HistoryPageReader.read(bad, tokens: JSONTokenizer.tokens(bad)) == nil)
        #expect((try? CheerHistory.decode(bad)) == CheerHistoryPage(items: [], page: 1, perPage: 1, totalPages: 0, totalCount: 0))
        // A page the reader declines (that bad UTF-8) and the decoder reads: the fallback's page is the
        // oracle's, an escaped lone surrogate shown as U+FFFD (the app's own repair is not the oracle's).
        let mixed = Array(#"{"history":[{"creator":"a\ud800","amount":5,"product":"p","date":"2022-08-18T02:30:00Z"}],"x":""#.utf8)
            + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(HistoryPageReader.read(mixed, tokens: JSONTokenizer.tokens(mixed)) == nil)
        #expect(Self.oracle(mixed)?.entries.first?.creator == "a\u{FFFD}")
        #expect((try? CheerHistory.decode(mixed)) == Self.oracle(mixed))
    }

    /// Generated pages: most read by the tokens, every one the same as the decoder's.
    @Test(arguments: [11, 12, 13, 14])
    func generatedPagesAgreeWithTheDecoder(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var read = 0
        let pages = 400
        for n in 0..<pages {
            let body = Array(Self.page(&rng).utf8)
            if Self.agree(body, "seed \(seed) page \(n)") { read += 1 }
        }
        // Most pages are plain: the fast path is taken (a reader that always declined would pass the rest).
        #expect(read > pages / 3, "only \(read) of \(pages) read by the tokens")
    }

    @Test func theFuzzCorpusAgreesWithTheDecoder() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus/fuzz-json")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count >= 5)
        // The corpus's page is read by the tokens (a reader that declined it would pass the rest), and
        // is what it says, written out by hand: its lone `\uD800` shown as U+FFFD.
        let history = Array(try Data(contentsOf: folder.appendingPathComponent("history.json")))
        #expect(Self.agree(history, "history.json"), "the reader declined the corpus's history page")
        let page = try CheerHistory.decode(history)
        #expect(page.page == 1 && page.perPage == 50 && page.totalPages == 1 && page.totalCount == 1 && page.items.count == 1)
        let entry = try #require(page.entries.first)
        #expect(entry.id == "h-1" && entry.creator == "Amélie" && entry.amount == 5 && entry.product == "com.reiterate.pack.rain")
        #expect(abs(entry.date.timeIntervalSince1970 - 1_793_923_200.123) < 0.000_5)  // 2026-11-06T00:00:00.123Z
        #expect(entry.comments == [ShopAPI.CheerComment(signature: nil, body: "é 😀 \u{FFFD}")])
        for file in files {
            let body = Array(try Data(contentsOf: folder.appendingPathComponent(file)))
            Self.agree(body, file)
            // Every prefix too: cut answers.
            for cut in stride(from: 0, to: body.count, by: max(1, body.count / 40)) { Self.agree(Array(body.prefix(cut)), "\(file) cut at \(cut)") }
        }
    }

    // MARK: generating pages

    static func page(_ rng: inout SeededGenerator) -> String {
        var members: [String] = []
        let entries = (0..<Int(rng.next() % 6)).map { _ in entry(&rng) }
        members.append("\"history\":[\(entries.joined(separator: ","))]")
        for key in ["page", "per_page", "total_pages", "total_count"] where rng.next() % 10 != 0 {
            members.append("\"\(key)\":\(rng.next() % 25 == 0 ? pick(&rng, ["null", "\"2\"", "1.0", "-1"]) : String(rng.next() % 50))")
        }
        if rng.next() % 8 == 0 { members.append("\"meta\":\(value(&rng, depth: 0))") }
        if rng.next() % 40 == 0 { members.append(members[0]) }  // a key twice
        return "{" + shuffled(members, &rng).joined(separator: ",") + "}" + (rng.next() % 50 == 0 ? " x" : "")
    }

    static func entry(_ rng: inout SeededGenerator) -> String {
        var members: [String] = []
        let odd = rng.next() % 4 == 0  // one entry in four carries something irregular
        func field(_ key: String, _ plain: String, _ irregular: [String]) {
            if odd, rng.next() % 4 == 0 {
                let choice = pick(&rng, irregular + ["<absent>"])
                if choice != "<absent>" { members.append("\"\(key)\":\(choice)") }
            } else {
                members.append("\"\(key)\":\(plain)")
            }
        }
        field("id", pick(&rng, [string(&rng), "null", "\"h-\(rng.next() % 1000)\""]), ["7", "true"])
        field("creator", string(&rng), ["null", "3", "[]"])
        field("amount", String(Int(rng.next() % 200) - 20), ["1.5", "1e2", "-0", "99999999999999999999", "\"5\"", "null", "05"])
        field("product", string(&rng), ["null", "{}"])
        field("date", pick(&rng, ["\"2026-11-2\(rng.next() % 10)T08:15:30Z\"", "\"2022-08-18T02:30:00.123+01:00\"", "\"2022-08-18 02:30:00-05\""]),
              ["\"yesterday\"", "null", "0", "\"2022-13-40T99:00:00Z\""])
        if rng.next() % 3 != 0 {
            let comments = (0..<Int(rng.next() % 3)).map { _ in comment(&rng, odd: odd) }
            field("comments", pick(&rng, ["[\(comments.joined(separator: ","))]", "null"]), ["{}", "[null]", "\"x\""])
        }
        if rng.next() % 6 == 0 { members.append("\"note\":\(value(&rng, depth: 0))") }
        return "{" + shuffled(members, &rng).joined(separator: ",") + "}"
    }

    static func comment(_ rng: inout SeededGenerator, odd: Bool) -> String {
        var members: [String] = []
        if rng.next() % 4 != 0 { members.append("\"signature\":\(pick(&rng, [string(&rng), "null"]))") }
        if rng.next() % 5 != 0 { members.append("\"body\":\(odd && rng.next() % 3 == 0 ? pick(&rng, ["1", "[]", "false"]) : string(&rng))") }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A JSON string with the text a hostile server sends: escapes, pairs and lone surrogates,
    /// accents, emoji, wide letters, bidi controls, an escaped NUL, now and then a raw control.
    static func string(_ rng: inout SeededGenerator) -> String {
        let parts = ["a", "Rain on a Tin Roof", "tomás", "佐藤", "🔥", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\ud83d\\ude00", "\\ud800",
                     "\\udc00x", "\\u0000", "\\u202e", "\u{202E}", "e\u{301}", " ", "\\t", "\u{7F}"]
        var s = (0..<Int(rng.next() % 5)).map { _ in pick(&rng, parts) }.joined()
        if rng.next() % 60 == 0 { s += "\u{1}" }
        if rng.next() % 80 == 0 { s += "\\x" }
        return "\"" + s + "\""
    }

    static func value(_ rng: inout SeededGenerator, depth: Int) -> String {
        switch rng.next() % (depth > 2 ? 4 : 6) {
        case 0: return string(&rng)
        case 1: return pick(&rng, ["0", "-12", "3.25", "1e-3", "true", "false", "null", "01", "1."])
        case 2: return "null"
        case 3: return "\(rng.next() % 1000)"
        case 4: return "[" + (0..<Int(rng.next() % 3)).map { _ in value(&rng, depth: depth + 1) }.joined(separator: ",") + "]"
        default: return "{" + (0..<Int(rng.next() % 3)).map { i in "\"k\(i)\":" + value(&rng, depth: depth + 1) }.joined(separator: ",") + "}"
        }
    }

    static func pick(_ rng: inout SeededGenerator, _ list: [String]) -> String { list[Int(rng.next() % UInt64(list.count))] }

    static func shuffled(_ list: [String], _ rng: inout SeededGenerator) -> [String] {
        var out = list
        for i in out.indices.reversed() where i > 0 { out.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        return out
    }
}
