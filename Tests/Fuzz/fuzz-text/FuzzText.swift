import FuzzReplay
import TerminalText

/// libFuzzer target (`make fuzz`) for the sanitizer and display width: nothing that could move the
/// cursor, change the terminal or reorder text gets through, and widths add up. Without `-D FUZZING`
/// it replays the files it is given.
func check(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let line = Sanitizer.line(text)
    for s in line.unicodeScalars {
        let v = s.value
        precondition(v >= 0x20 && v != 0x7F && !(0x80..<0xA0).contains(v), "a control character got through: U+\(String(v, radix: 16))")
        precondition(!(0x202A...0x202E).contains(v) && !(0x2066...0x2069).contains(v) && v != 0x200E && v != 0x200F && v != 0x61C,
                     "a bidi control got through")
    }
    precondition(Sanitizer.line(line) == line, "sanitizing is not idempotent")
    for l in Sanitizer.lines(text) { precondition(!l.contains("\n") && !l.unicodeScalars.contains { $0.value < 0x20 }, "a line holds a control") }
    let width = DisplayWidth.of(line)
    precondition(width == line.reduce(0) { $0 + DisplayWidth.of($1) }, "a string's width is not the sum of its characters'")
    for w in [0, 1, 2, 5, 17, 80] {
        precondition(DisplayWidth.of(Columns.truncate(line, to: w)) <= w, "truncate overflows \(w)")
        precondition(DisplayWidth.of(Columns.truncateMiddle(line, to: w)) <= w, "truncateMiddle overflows \(w)")
        precondition(DisplayWidth.of(Columns.fit(line, to: w)) == w, "fit is not \(w) wide")
        if w >= 2 { precondition(Columns.wrap(line, to: w).allSatisfy { DisplayWidth.of($0) <= w }, "wrap overflows \(w)") }
    }
}

#if FUZZING
@_cdecl("fuzz_text_main")
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
