import Foundation

/// The part of TOML a settings file needs: `# comments`, `[table]` / `[table.sub]` headers, and
/// `key = value` with "basic" or 'literal' strings, booleans, integers and floats. Every error names
/// the line; anything else (arrays, inline tables, multi-line strings, dates) is refused with its line.
public enum MiniTOML {
    public enum Value: Sendable, Equatable {
        case string(String), bool(Bool), int(Int), double(Double)

        public var text: String {
            switch self {
            case let .string(s): return s
            case let .bool(b): return String(b)
            case let .int(i): return String(i)
            case let .double(d): return String(d)
            }
        }
    }

    public struct Entry: Sendable, Equatable {
        public var table: [String]
        public var key: String
        public var value: Value
        public var line: Int
    }

    public struct ParseError: Error, Sendable, Equatable {
        public var line: Int
        public var message: String
        public var key: String? = nil
    }

    public static func parse(_ text: String) throws(ParseError) -> (entries: [Entry], tables: [(name: [String], line: Int)]) {
        var entries: [Entry] = []
        var tables: [(name: [String], line: Int)] = []
        var table: [String] = []
        var seen = Set<String>()
        for (i, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = i + 1
            let line = stripComment(String(rawLine)).trimmingSpaces()
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), !line.hasPrefix("[[") else { throw ParseError(line: lineNumber, message: "a table header is [name] or [name.sub]") }
                let inner = String(line.dropFirst().dropLast()).trimmingSpaces()
                let parts = inner.split(separator: ".", omittingEmptySubsequences: false).map { String($0).trimmingSpaces().unquoted() }
                guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty }) else { throw ParseError(line: lineNumber, message: "empty table name") }
                table = parts
                tables.append((parts, lineNumber))
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { throw ParseError(line: lineNumber, message: "expected key = value") }
            let key = String(line[..<eq]).trimmingSpaces().unquoted()
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                throw ParseError(line: lineNumber, message: "invalid key '\(key)'")
            }
            let full = (table + [key]).joined(separator: ".")
            guard seen.insert(full).inserted else { throw ParseError(line: lineNumber, message: "key '\(key)' is set twice") }
            let value: Value
            do {
                value = try parseValue(String(line[line.index(after: eq)...]).trimmingSpaces(), line: lineNumber, key: key)
            } catch {
                throw ParseError(line: error.line, message: error.message.replacingOccurrences(of: " for key '\(key)'", with: "")
                    .replacingOccurrences(of: " of '\(key)'", with: "").replacingOccurrences(of: " (key '\(key)')", with: ""), key: key)
            }
            entries.append(Entry(table: table, key: key, value: value, line: lineNumber))
        }
        return (entries, tables)
    }

    static func stripComment(_ line: String) -> String {
        var inBasic = false, inLiteral = false, escaped = false
        for (offset, c) in line.enumerated() {
            if escaped { escaped = false; continue }
            if inBasic {
                if c == "\\" { escaped = true } else if c == "\"" { inBasic = false }
            } else if inLiteral {
                if c == "'" { inLiteral = false }
            } else if c == "\"" {
                inBasic = true
            } else if c == "'" {
                inLiteral = true
            } else if c == "#" {
                return String(line.prefix(offset))
            }
        }
        return line
    }

    static func parseValue(_ raw: String, line: Int, key: String) throws(ParseError) -> Value {
        if raw.isEmpty { throw ParseError(line: line, message: "key '\(key)' has no value") }
        if raw == "true" { return .bool(true) }
        if raw == "false" { return .bool(false) }
        if raw.hasPrefix("\"\"\"") || raw.hasPrefix("'''") { throw ParseError(line: line, message: "multi-line strings are not supported (key '\(key)')") }
        if raw.hasPrefix("'") {
            guard raw.count >= 2, raw.hasSuffix("'") else { throw ParseError(line: line, message: "unterminated string for key '\(key)'") }
            return .string(String(raw.dropFirst().dropLast()))
        }
        if raw.hasPrefix("\"") {
            var out = ""
            var escaped = false
            var closed = false
            for c in raw.dropFirst() {
                if closed { throw ParseError(line: line, message: "unexpected text after the string for key '\(key)'") }
                if escaped {
                    switch c {
                    case "n": out.append("\n")
                    case "t": out.append("\t")
                    case "\"": out.append("\"")
                    case "\\": out.append("\\")
                    default: throw ParseError(line: line, message: "unsupported escape \\\(c) for key '\(key)'")
                    }
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else if c == "\"" {
                    closed = true
                } else {
                    out.append(c)
                }
            }
            guard closed else { throw ParseError(line: line, message: "unterminated string for key '\(key)'") }
            return .string(out)
        }
        let number = raw.replacingOccurrences(of: "_", with: "")
        if let i = Int(number) { return .int(i) }
        if let d = Double(number), d.isFinite { return .double(d) }
        throw ParseError(line: line, message: "cannot read the value of '\(key)' (strings need quotes)")
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return String(s)
    }

    func unquoted() -> String {
        if count >= 2, (hasPrefix("\"") && hasSuffix("\"")) || (hasPrefix("'") && hasSuffix("'")) { return String(dropFirst().dropLast()) }
        return self
    }
}
