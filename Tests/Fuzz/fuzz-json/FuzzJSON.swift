import FuzzReplay
import JSONTokens

/// libFuzzer target (`make fuzz`) for the JSON tokenizer and all that reads it. Built without
/// `-D FUZZING` it is a plain program that runs the files it is given (a crash found, replayed).
func check(_ bytes: [UInt8]) {
    let tokens = JSONTokenizer.tokens(bytes)
    // Tokens are in order, inside the input, and only whitespace lies between them.
    var at = 0
    for t in tokens {
        precondition(t.start >= at && t.start < t.end && t.end <= bytes.count, "token out of place")
        precondition(bytes[at..<t.start].allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }, "a byte between tokens was lost")
        at = t.end
    }
    let value = JSONValue.parse(bytes, tokens: tokens)
    // The walk that builds nothing agrees with the parser on what is one JSON value.
    precondition(bytes.withUnsafeBufferPointer { JSONCursor.isValid($0, tokens) } == (value != nil), "the cursor and the parser disagree")
    // Pretty-printing keeps the value, and is idempotent.
    let pretty = Array(JSONText.pretty(bytes, tokens: tokens).utf8)
    if let value {
        precondition(JSONValue.parse(pretty) == value, "pretty-printing changed the value")
        let again = Array(JSONText.pretty(pretty, tokens: JSONTokenizer.tokens(pretty)).utf8)
        precondition(again == pretty, "pretty-printing is not idempotent")
    }
    // The repair changes nothing else, and twice is once.
    let repaired = JSONText.replacingLoneSurrogates(bytes, tokens: tokens)
    precondition(JSONText.replacingLoneSurrogates(repaired, tokens: JSONTokenizer.tokens(repaired)) == repaired, "repair is not idempotent")
    if !bytes.contains(UInt8(ascii: "\\")) { precondition(repaired == bytes, "repair changed a body with no escape") }
    // Written back as a JSON string (escaped for a terminal), any text reads back as itself.
    let text = String(decoding: bytes, as: UTF8.self)
    var writer = JSONWriter()
    writer.string(text)
    precondition(JSONValue.parse(writer.bytes) == .string(text), "a written string does not read back")
    precondition(!writer.bytes.contains { $0 < 0x20 || $0 == 0x7F }, "a control byte was written raw")
    // Redaction leaves no secret value behind.
    let redacted = JSONText.replacingValues(bytes, tokens: tokens, placeholder: "<r>") { $0.contains("token") }
    if value != nil, let after = JSONValue.parse(redacted) { precondition(noSecret(after), "a secret value survived redaction") }
}

func noSecret(_ v: JSONValue) -> Bool {
    switch v {
    case let .object(fields):
        return fields.allSatisfy { key, value in
            if key.contains("token"), case let .string(s) = value, s != "<r>" { return false }
            return noSecret(value)
        }
    case let .array(elements): return elements.allSatisfy(noSecret)
    default: return true
    }
}

#if FUZZING
@_cdecl("fuzz_json_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    FuzzDriver.run(argc, argv) { data, size in
        check(FuzzDriver.bytes(data, size))
        return 0
    }
}
#else
@main struct Replay {
    static func main() { FuzzReplay.run(check) }
}
#endif
