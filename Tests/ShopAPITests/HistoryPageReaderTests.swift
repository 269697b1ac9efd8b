import Foundation
import JSONTokens
import StubCore
import Testing
@testable import ShopAPI

/// The token reader of history pages against its oracle, `JSONDecoder` (the path it replaces): on
/// every page it reads, the two agree exactly; where it declines, the decoder is used. Pages are
/// generated with every irregularity a server could send, and the fuzz corpus is replayed.
@Suite struct HistoryPageReaderTests {
    /// What `JSONDecoder` makes of the page (nil when it refuses it).
    static func oracle(_ body: [UInt8]) -> CheerHistoryPage? {
        try? JSONDecoder().decode(CheerHistoryPage.self, from: Data(JSONRepair.replacingLoneSurrogates(body)))
    }

    /// The reader's result, held to the oracle's.
    @discardableResult
    static func agree(_ body: [UInt8], _ note: @autoclosure () -> String) -> Bool {
        let fast = HistoryPageReader.read(body, tokens: JSONTokenizer.tokens(body))
        guard let fast else { return false }
        let slow = oracle(body)
        #expect(slow == fast, "\(note()): \(String(decoding: body.prefix(300), as: UTF8.self))")
        // The endpoint's decode gives the same, whichever way it went.
        #expect((try? CheerHistory.decode(body)) == slow)
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
        // Bad UTF-8, even in a value the page does not use, is left to the decoder (which lets it
        // pass there): declining is always safe, reading otherwise than the decoder never is.
        let bad: [UInt8] = Array(#"{"history":[],"x":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(HistoryPageReader.read(bad, tokens: JSONTokenizer.tokens(bad)) == nil)
        #expect((try? CheerHistory.decode(bad)) == Self.oracle(bad))
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
