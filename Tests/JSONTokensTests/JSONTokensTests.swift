import JSONTokens
import Testing

@Suite struct JSONTokensTests {
    func kinds(_ text: String) -> [JSONToken.Kind] { JSONTokenizer.tokens(Array(text.utf8)).map(\.kind) }

    @Test func tokensCarryTheirRangesAndTheGapsAreWhitespaceOnly() {
        let text = #" {"a" : [1, -2.5e3, true, false, null, "x\"y"], "b":tru }  "#
        let bytes = Array(text.utf8)
        let tokens = JSONTokenizer.tokens(bytes)
        #expect(tokens.map(\.kind) == [.beginObject, .string, .colon, .beginArray, .number, .comma, .number, .comma, .literalTrue, .comma,
                                       .literalFalse, .comma, .literalNull, .comma, .string, .endArray, .comma, .string, .colon, .invalid, .endObject])
        #expect(String(decoding: bytes[tokens[14].range], as: UTF8.self) == #""x\"y""# && tokens[14].escaped)
        var at = 0
        for t in tokens {
            #expect(bytes[at..<t.start].allSatisfy { [0x20, 0x0A, 0x0D, 0x09].contains($0) })
            at = t.end
        }
        #expect(bytes[at...].allSatisfy { $0 == 0x20 })
    }

    @Test func aCutStringRunsToTheEnd() {
        let tokens = JSONTokenizer.tokens(Array(#"{"k":"abc\"#.utf8))
        #expect(tokens.last?.kind == .string && tokens.last?.unterminated == true && tokens.last?.end == 10)
    }

    @Test func theParserKeepsIntegersBooleansAndStringsApart() {
        #expect(JSONValue.parse(Array(#"[1, 1.0, true, "1", null, {"a":"\"q\""}]"#.utf8))
            == .array([.int(1), .double(1.0), .bool(true), .string("1"), .null, .object(["a": .string("\"q\"")])]))
        #expect(JSONValue.parse(Array(#"{"a":1"#.utf8)) == nil && JSONValue.parse(Array("[1] x".utf8)) == nil)
        for bad in ["01", "1.", "-", "1e", "+1", "[1,]", "{\"a\" 1}", "tru", "\"\\x\"", "{1:2}"] {
            #expect(JSONValue.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(JSONValue.parse(Array("-0.5E+2".utf8)) == .double(-50) && JSONValue.parse(Array("9223372036854775808".utf8)) == .double(9.223372036854775808e18))
    }

    @Test func escapesAreReadAndSurrogatesPairedOrReplaced() {
        #expect(JSONValue.parse(Array(#""a\nb\t\u00e9\/\\ \uD83D\uDE00""#.utf8)) == .string("a\nb\té/\\ 😀"))
        #expect(JSONValue.parse(Array(#""x\uD800y""#.utf8)) == .string("x\u{FFFD}y"))
    }

    @Test func loneSurrogatesAreRepairedInStringsOnly() {
        let body = Array(#"{"a":"\uD800 \uD83D\uDE00","b":"\\uD800"}"#.utf8)
        let repaired = String(decoding: JSONText.replacingLoneSurrogates(body, tokens: JSONTokenizer.tokens(body)), as: UTF8.self)
        #expect(repaired == #"{"a":"\ufffd \uD83D\uDE00","b":"\\uD800"}"#)
        let clean = Array(#"{"a":"\u00e9"}"#.utf8)
        #expect(JSONText.replacingLoneSurrogates(clean, tokens: JSONTokenizer.tokens(clean)) == clean)
    }

    @Test func secretValuesAreReplacedEvenWhenCut() {
        let body = Array(#"{"access_token" : "abc", "n":"access_token", "refresh_token":"xy"#.utf8)
        let out = String(decoding: JSONText.replacingValues(body, tokens: JSONTokenizer.tokens(body), placeholder: "<r>") { $0.contains("token") }, as: UTF8.self)
        #expect(out == #"{"access_token" : "<r>", "n":"access_token", "refresh_token":"<r>""#)
    }

    @Test func prettyIndentsAndKeepsWhatItCannotRead() {
        let body = Array(#"{"a":[1,{}],"b":[] ,"c":x}"#.utf8)
        #expect(JSONText.pretty(body, tokens: JSONTokenizer.tokens(body)) == "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": [],\n  \"c\": x\n}")
    }
}
