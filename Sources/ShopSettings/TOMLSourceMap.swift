/// Where each key and table of a TOML document is written: TOMLKit gives positions only for syntax
/// errors, so a settings mistake found later (unknown key, wrong type...) is located here.
///
/// The scanner runs only on text TOMLKit has already accepted, so it can be lenient: it follows
/// `[table]` and `[[array]]` headers, dotted and quoted keys, inline tables, arrays and every string
/// form (basic, literal, multi-line) to keep its line count right, and records for every key path the
/// line where it first appears. A path it cannot place has no line (never a guessed one).
struct TOMLSourceMap {
    /// A key path → the line where it is first written (its own `key =`, a header, or the first
    /// dotted key / inline table that creates it), and its position in file order.
    private var first: [[String]: (line: Int, order: Int)] = [:]
    /// Tables written as `[a.b]` or `[[a.b]]` headers → the line of the (first) header.
    private var headers: [[String]: Int] = [:]
    private var counter = 0
    /// The first table header whose name does not start as a key may (`[é]`, `[ ]`): toml++ asserts on
    /// those instead of reporting them (found by `make fuzz`), so they are refused before it reads the text.
    private(set) var badHeaderLine: Int?
    /// The first `}` met where an array expects a value (toml++ asserts on that too).
    private(set) var braceInArrayLine: Int?

    init(_ text: String) {
        var scanner = Scanner(bytes: Array(text.utf8))
        var events: [SourceEvent] = []
        scanner.run { events.append($0) }
        for event in events {
            switch event {
            case let .header(path, line):
                if headers[path] == nil { headers[path] = line }
                record(path, line: line)
            case let .key(path, line):
                record(path, line: line)
            case let .badHeader(line):
                if badHeaderLine == nil { badHeaderLine = line }
            case let .braceInArray(line):
                if braceInArrayLine == nil { braceInArrayLine = line }
            }
        }
    }

    private mutating func record(_ path: [String], line: Int) {
        guard !path.isEmpty else { return }
        for length in 1...path.count {
            let prefix = Array(path.prefix(length))
            if first[prefix] == nil {
                first[prefix] = (line, counter)
                counter += 1
            }
        }
    }

    /// The line of `key = ...` (or of the header / dotted key that first names this path).
    func line(of path: [String]) -> Int? { headers[path] ?? first[path]?.line }

    /// Whether `path` is written as a `[table]` header (rather than a key, dotted key or inline table).
    func isHeader(_ path: [String]) -> Bool { headers[path] != nil }

    /// A sort key that puts paths in the order they first appear in the file; unknown paths last.
    func order(of path: [String]) -> Int { first[path]?.order ?? Int.max }
}

private enum SourceEvent {
    case header([String], line: Int)
    case key([String], line: Int)
    /// A `[` header whose name starts with neither a bare-key character nor a quote (`[é]`).
    case badHeader(line: Int)
    /// A `}` where an array expects a value or its `]` (`[}]`).
    case braceInArray(line: Int)
}

/// A forgiving tokenizer over a valid TOML document (bytes; every structural character is ASCII).
private struct Scanner {
    let bytes: [UInt8]
    var i = 0
    var line = 1

    init(bytes: [UInt8]) { self.bytes = bytes }

    private var atEnd: Bool { i >= bytes.count }
    private func peek(_ offset: Int = 0) -> UInt8? { i + offset < bytes.count ? bytes[i + offset] : nil }

    private mutating func advance() {
        if bytes[i] == UInt8(ascii: "\n") { line += 1 }
        i += 1
    }

    private mutating func skipSpaces() {
        while let c = peek(), c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { advance() }
    }

    /// Spaces, newlines and comments.
    private mutating func skipBlank() {
        while let c = peek() {
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") || c == UInt8(ascii: "\n") {
                advance()
            } else if c == UInt8(ascii: "#") {
                while let d = peek(), d != UInt8(ascii: "\n") { advance() }
            } else {
                return
            }
        }
    }

    mutating func run(_ emit: (SourceEvent) -> Void) {
        var table: [String] = []
        while true {
            skipBlank()
            guard let c = peek() else { return }
            if c == UInt8(ascii: "[") {
                let headerLine = line
                let isArray = peek(1) == UInt8(ascii: "[")
                advance()
                if isArray { advance() }
                skipSpaces()
                guard let d = peek(), Self.isBare(d) || d == UInt8(ascii: "\"") || d == UInt8(ascii: "'") else {
                    emit(.badHeader(line: headerLine))
                    return
                }
                table = keyPath()
                emit(.header(table, line: headerLine))
                // Past `]` / `]]` and anything else up to the end of the line (a comment).
                while let d = peek(), d != UInt8(ascii: "\n") {
                    if d == UInt8(ascii: "#") { break }
                    advance()
                }
            } else {
                let keyLine = line
                let start = i
                let path = keyPath()
                skipSpaces()
                guard peek() == UInt8(ascii: "="), !path.isEmpty else {
                    // Not a document TOMLKit accepted; give up rather than guess.
                    if i == start { return }
                    continue
                }
                advance()
                emit(.key(table + path, line: keyLine))
                skipSpaces()
                value(prefix: table + path, emit)
            }
        }
    }

    /// `a.b."c d".'e'` → ["a", "b", "c d", "e"]; stops before `=`, `]` or anything else.
    private mutating func keyPath() -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            guard let c = peek() else { return parts }
            if c == UInt8(ascii: "\"") {
                advance()
                parts.append(basicString())
            } else if c == UInt8(ascii: "'") {
                advance()
                parts.append(literalString())
            } else if Self.isBare(c) {
                let start = i
                while let d = peek(), Self.isBare(d) { advance() }
                parts.append(String(decoding: bytes[start..<i], as: UTF8.self))
            } else {
                return parts
            }
            skipSpaces()
            guard peek() == UInt8(ascii: ".") else { return parts }
            advance()
        }
    }

    private static func isBare(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_") || c == UInt8(ascii: "-")
    }

    /// A value; keys inside inline tables are reported under `prefix` (nil inside arrays: not addressable by name).
    private mutating func value(prefix: [String]?, depth: Int = 0, _ emit: (SourceEvent) -> Void) {
        // Deeper than toml++ reads (it refuses past 256, in its own words): stop scanning, never overflow the stack.
        guard depth < 256 else {
            i = bytes.count
            return
        }
        guard let c = peek() else { return }
        switch c {
        case UInt8(ascii: "{"):
            advance()
            while true {
                skipBlank()
                guard let d = peek() else { return }
                if d == UInt8(ascii: "}") { advance(); return }
                if d == UInt8(ascii: ",") { advance(); continue }
                let keyLine = line
                let start = i
                let path = keyPath()
                skipSpaces()
                guard peek() == UInt8(ascii: "=") else {
                    if i == start { advance() }
                    continue
                }
                advance()
                if let prefix { emit(.key(prefix + path, line: keyLine)) }
                skipSpaces()
                value(prefix: prefix.map { $0 + path }, depth: depth + 1, emit)
            }
        case UInt8(ascii: "["):
            advance()
            while true {
                skipBlank()
                guard let d = peek() else { return }
                if d == UInt8(ascii: "]") { advance(); return }
                if d == UInt8(ascii: ",") { advance(); continue }
                if d == UInt8(ascii: "}") {
                    emit(.braceInArray(line: line))
                    advance()
                    continue
                }
                let start = i
                value(prefix: nil, depth: depth + 1, emit)
                if i == start { advance() }
            }
        case UInt8(ascii: "\""):
            if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
                multiLine(quote: c, escapes: true)
            } else {
                advance()
                _ = basicString()
            }
        case UInt8(ascii: "'"):
            if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
                multiLine(quote: c, escapes: false)
            } else {
                advance()
                _ = literalString()
            }
        default:
            // Number, boolean, date, time; a date and a time may be separated by one space.
            bareValue()
            if peek() == UInt8(ascii: " "), let d = peek(1), d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9"),
               i >= 10, bytes[i - 3] == UInt8(ascii: "-") {
                advance()
                bareValue()
            }
        }
    }

    private mutating func bareValue() {
        while let c = peek() {
            switch c {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: ","),
                 UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "#"):
                return
            default:
                advance()
            }
        }
    }

    /// After the opening `"`: reads to the closing quote and returns the decoded text.
    private mutating func basicString() -> String {
        var out: [UInt8] = []
        while let c = peek(), c != UInt8(ascii: "\n") {
            advance()
            if c == UInt8(ascii: "\"") { break }
            guard c == UInt8(ascii: "\\"), let e = peek() else { out.append(c); continue }
            advance()
            switch e {
            case UInt8(ascii: "n"): out.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
            case UInt8(ascii: "r"): out.append(UInt8(ascii: "\r"))
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "e"): out.append(0x1B)
            case UInt8(ascii: "u"), UInt8(ascii: "U"), UInt8(ascii: "x"):
                let width = e == UInt8(ascii: "u") ? 4 : e == UInt8(ascii: "U") ? 8 : 2
                var scalar: UInt32 = 0
                for _ in 0..<width {
                    guard let h = peek(), let digit = Self.hex(h) else { break }
                    scalar = scalar * 16 + digit
                    advance()
                }
                if let u = Unicode.Scalar(scalar) { out.append(contentsOf: Array(String(Character(u)).utf8)) }
            default: out.append(e)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ c: UInt8) -> UInt32? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// After the opening `'`: reads to the closing quote.
    private mutating func literalString() -> String {
        let start = i
        while let c = peek(), c != UInt8(ascii: "'"), c != UInt8(ascii: "\n") { advance() }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if peek() == UInt8(ascii: "'") { advance() }
        return text
    }

    /// At `"""` or `'''`: skips to the closing delimiter (which may be followed by up to two more quotes).
    private mutating func multiLine(quote: UInt8, escapes: Bool) {
        advance(); advance(); advance()
        while let c = peek() {
            if escapes, c == UInt8(ascii: "\\") {
                advance()
                if !atEnd { advance() }
                continue
            }
            if c == quote, peek(1) == quote, peek(2) == quote {
                advance(); advance(); advance()
                var extra = 0
                while extra < 2, peek() == quote { advance(); extra += 1 }
                return
            }
            advance()
        }
    }
}
