import Foundation

/// `theme = "auto"`: is the terminal's background dark or light? Asked with OSC 11 (xterm's "what is
/// colour 11": `ESC ] 11 ; ? ST`) followed by a device-attributes request (`ESC [ c`), which every
/// terminal answers: when that answer comes without an OSC 11 one, the terminal does not tell, and
/// the probe stops at once instead of waiting out its timeout. No answer at all within the timeout
/// (a pipe, a slow link) falls back to `COLORFGBG`, then to dark.
public enum TerminalBackground {
    /// How long to wait for the terminal's answers. A local terminal answers in well under 1 ms; over
    /// SSH an answer takes a round trip.
    public static let timeout: Duration = .milliseconds(150)

    static let query = Array("\u{1B}]11;?\u{1B}\\\u{1B}[c".utf8)

    /// The background from an OSC 11 answer in `bytes` (`ESC ] 11 ; rgb:RRRR/GGGG/BBBB` ended by BEL
    /// or ST; 1 to 4 hex digits a component), judged by its relative luminance; nil when there is none.
    public static func parse(_ bytes: [UInt8]) -> Theme.Background? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let start = text.range(of: "\u{1B}]11;rgb:") else { return nil }
        let rest = text[start.upperBound...]
        let end = rest.firstIndex { $0 == "\u{07}" || $0 == "\u{1B}" } ?? rest.endIndex
        let parts = rest[..<end].split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var channels: [Double] = []
        for part in parts {
            guard (1...4).contains(part.count), let value = UInt32(part, radix: 16) else { return nil }
            channels.append(Double(value) / Double((1 << (4 * part.count)) - 1))
        }
        return luminance(channels[0], channels[1], channels[2]) > 0.5 ? .light : .dark
    }

    /// rxvt's and Konsole's `COLORFGBG="15;0"` (foreground;background, ANSI numbers): 7 and 9–15 are
    /// light backgrounds, 0–6 and 8 dark ones.
    public static func fromColorFGBG(_ value: String?) -> Theme.Background? {
        guard let last = value?.split(separator: ";").last, let index = Int(last), (0...15).contains(index) else { return nil }
        return index == 7 || index >= 9 ? .light : .dark
    }

    /// Relative luminance (sRGB, ITU-R BT.709 weights on linear light), 0 black to 1 white.
    static func luminance(_ r: Double, _ g: Double, _ b: Double) -> Double {
        func linear(_ c: Double) -> Double { c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
        return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    }

    /// Asks the terminal on `input`/`output` (both must be a terminal), before curses takes it. The
    /// terminal's modes are put back as they were; its answers are read here, so none reaches the app
    /// as keys (a late one is dropped by `LateReplyFilter`).
    public static func ask(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, timeout: Duration = timeout) -> Theme.Background? {
        guard isatty(input) == 1, isatty(output) == 1 else { return nil }
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        defer { _ = tcsetattr(input, TCSANOW, &saved) }
        guard tcsetattr(input, TCSANOW, &raw) == 0 else { return nil }
        let written = query.withUnsafeBufferPointer { write(output, $0.baseAddress, $0.count) }
        guard written == query.count else { return nil }
        var answer: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 256)
        while !LateReplyFilter.endsWithDeviceAttributes(answer) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        return parse(answer)
    }
}

/// Drops terminal answers that arrive as input: an OSC 11 answer (`ESC ] … BEL` or `… ESC \`) or a
/// device-attributes answer (`ESC [ ? … c`) that came after the probe gave up would otherwise be
/// read as Escape followed by keys, each a command. Only a whole answer inside one read is dropped.
public enum LateReplyFilter {
    static func endsWithDeviceAttributes(_ bytes: [UInt8]) -> Bool {
        guard bytes.last == UInt8(ascii: "c"), let start = lastIndex(of: [0x1B, UInt8(ascii: "["), UInt8(ascii: "?")], in: bytes) else { return false }
        return bytes[(start + 3)..<(bytes.count - 1)].allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ";") }
    }

    private static func lastIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return stride(from: bytes.count - needle.count, through: 0, by: -1).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }

    /// `items` (the keys of one read, each with its character code; a function key's code is above
    /// 255 and matches nothing here) without the terminal answers in them.
    public static func removingReplies<Item>(_ items: [Item], code: (Item) -> Int32) -> [Item] {
        let codes = items.map(code)
        guard codes.contains(0x1B) else { return items }
        var out: [Item] = []
        out.reserveCapacity(items.count)
        var i = 0
        while i < codes.count {
            if codes[i] == 0x1B, i + 1 < codes.count, let end = replyEnd(codes, from: i) {
                i = end
                continue
            }
            out.append(items[i])
            i += 1
        }
        return out
    }

    /// Where the answer starting at `start` (an ESC) ends, if it is a whole one.
    private static func replyEnd(_ codes: [Int32], from start: Int) -> Int? {
        let next = codes[start + 1]
        if next == Int32(UInt8(ascii: "]")) {
            var j = start + 2
            while j < codes.count {
                if codes[j] == 0x07 { return j + 1 }
                if codes[j] == 0x1B { return j + 1 < codes.count && codes[j + 1] == Int32(UInt8(ascii: "\\")) ? j + 2 : nil }
                guard (0x20..<0x7F).contains(codes[j]) else { return nil }
                j += 1
            }
            return nil
        }
        if next == Int32(UInt8(ascii: "[")), start + 2 < codes.count, codes[start + 2] == Int32(UInt8(ascii: "?")) {
            var j = start + 3
            while j < codes.count {
                if codes[j] == Int32(UInt8(ascii: "c")) { return j + 1 }
                guard (0x30...0x39).contains(codes[j]) || codes[j] == Int32(UInt8(ascii: ";")) else { return nil }
                j += 1
            }
        }
        return nil
    }
}
