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

    /// What the terminal said, and what else arrived meanwhile.
    public struct Answer: Sendable, Equatable {
        /// From an OSC 11 answer; nil when the terminal did not tell.
        public var background: Theme.Background?
        /// The device-attributes answer came: nothing more is on its way.
        public var complete: Bool
        /// Bytes that were no answer: keys typed meanwhile, for the app to read after all.
        public var typed: [UInt8]
    }

    /// Asks the terminal on `input`/`output` — one terminal, both ends of it — and reads its answers.
    /// Meant to run once curses has it in raw mode without echo (so a late answer is never echoed,
    /// and Ctrl-C typed meanwhile is a key); the modes are set so here too and put back as they were.
    /// Nil when there is no terminal to ask.
    public static func ask(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, timeout: Duration = timeout) -> Answer? {
        guard isatty(input) == 1, isatty(output) == 1, sameTerminal(input, output) else { return nil }
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        defer { _ = tcsetattr(input, TCSANOW, &saved) }
        guard tcsetattr(input, TCSANOW, &raw) == 0 else { return nil }
        let written = query.withUnsafeBufferPointer { write(output, $0.baseAddress, $0.count) }
        guard written == query.count else { return nil }
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 256)
        var complete = false
        while !complete {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { break }
            var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
            complete = LateReplyFilter.strip(bytes.map(Int32.init)).sawDeviceAttributes
        }
        let stripped = LateReplyFilter.strip(bytes.map(Int32.init))
        return Answer(background: parse(bytes), complete: complete, typed: stripped.kept.map { bytes[$0] })
    }

    /// Whether two descriptors are the same terminal device (stdin may be one terminal and stdout
    /// another: the question would go to one and its answer to the other).
    static func sameTerminal(_ a: Int32, _ b: Int32) -> Bool {
        var sa = stat(), sb = stat()
        guard fstat(a, &sa) == 0, fstat(b, &sb) == 0 else { return false }
        return sa.st_rdev == sb.st_rdev
    }
}

/// A key as curses read it: a character (kind 1) or a function key (kind 2; codes above 255).
public struct RawKey: Sendable, Equatable {
    public var kind: Int32
    public var code: Int32
    public init(kind: Int32, code: Int32) {
        self.kind = kind
        self.code = code
    }
}

/// Drops the terminal's answers to `auto`'s question when they arrive as input: an OSC 11 answer
/// (`ESC ] … BEL` or `… ESC \`) or a device-attributes answer (`ESC [ ? … c`) read as keys would be
/// Escape followed by commands (`1`, `r`, `b`). Armed only when the probe gave up before the
/// terminal's last answer, for a few seconds or until that answer has been dropped; an answer cut
/// across two reads is held until the rest comes. Disarmed, it passes every key through.
public struct LateReplyFilter: Sendable {
    private var until: ContinuousClock.Instant?
    private var held: [RawKey] = []

    public init() {}

    public var isArmed: Bool { until != nil }

    public mutating func arm(for duration: Duration = .seconds(2), now: ContinuousClock.Instant = .now) {
        until = now + duration
    }

    /// The keys of one read without the answers in them (and without the start of one cut short).
    public mutating func filter(_ keys: [RawKey], now: ContinuousClock.Instant = .now) -> [RawKey] {
        guard let until else { return keys }
        let all = held + keys
        held = []
        guard now < until else {
            self.until = nil
            return all
        }
        let result = Self.strip(all.map(\.code))
        var kept = result.kept.map { all[$0] }
        if result.sawDeviceAttributes {
            self.until = nil  // the terminal's last answer: nothing more comes
        } else if let start = Self.openAnswer(kept.map(\.code)) {
            held = Array(kept[start...])
            kept.removeSubrange(start...)
        }
        return kept
    }

    /// The indices of `codes` that are not inside a whole answer, and whether a device-attributes
    /// answer was among the answers.
    static func strip(_ codes: [Int32]) -> (kept: [Int], sawDeviceAttributes: Bool) {
        var kept: [Int] = []
        kept.reserveCapacity(codes.count)
        var sawDeviceAttributes = false
        var i = 0
        while i < codes.count {
            if codes[i] == 0x1B, i + 1 < codes.count, let (end, deviceAttributes) = answerEnd(codes, from: i) {
                sawDeviceAttributes = sawDeviceAttributes || deviceAttributes
                i = end
                continue
            }
            kept.append(i)
            i += 1
        }
        return (kept, sawDeviceAttributes)
    }

    /// Where an answer still open at the end of `codes` starts (ESC followed by `]` or `[?` and the
    /// characters an answer holds, with no end yet).
    static func openAnswer(_ codes: [Int32]) -> Int? {
        guard let start = codes.lastIndex(of: 0x1B), start + 1 < codes.count else { return nil }
        let body = codes[(start + 1)...]
        if body.first == Int32(UInt8(ascii: "]")) {
            return body.dropFirst().allSatisfy { (0x20..<0x7F).contains($0) } ? start : nil
        }
        if body.first == Int32(UInt8(ascii: "[")) {
            let rest = body.dropFirst()
            guard rest.first.map({ $0 == Int32(UInt8(ascii: "?")) }) ?? true else { return nil }
            return rest.dropFirst().allSatisfy { (0x30...0x39).contains($0) || $0 == Int32(UInt8(ascii: ";")) } ? start : nil
        }
        return nil
    }

    /// Where the answer starting at `start` (an ESC) ends, if it is a whole one, and whether it is a
    /// device-attributes answer.
    private static func answerEnd(_ codes: [Int32], from start: Int) -> (Int, Bool)? {
        let next = codes[start + 1]
        if next == Int32(UInt8(ascii: "]")) {
            var j = start + 2
            while j < codes.count {
                if codes[j] == 0x07 { return (j + 1, false) }
                if codes[j] == 0x1B { return j + 1 < codes.count && codes[j + 1] == Int32(UInt8(ascii: "\\")) ? (j + 2, false) : nil }
                guard (0x20..<0x7F).contains(codes[j]) else { return nil }
                j += 1
            }
            return nil
        }
        if next == Int32(UInt8(ascii: "[")), start + 2 < codes.count, codes[start + 2] == Int32(UInt8(ascii: "?")) {
            var j = start + 3
            while j < codes.count {
                if codes[j] == Int32(UInt8(ascii: "c")) { return (j + 1, true) }
                guard (0x30...0x39).contains(codes[j]) || codes[j] == Int32(UInt8(ascii: ";")) else { return nil }
                j += 1
            }
        }
        return nil
    }
}
