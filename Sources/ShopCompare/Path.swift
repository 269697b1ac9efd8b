import JSONTokens

/// Where a value sits in what a side read: `packs[com.reiterate.pack.rain].price_cents`,
/// `history[id=h-1].comments[0].body`, `balance.balance`. An element of a list the shop keys (packs
/// by `identifier`, history entries by `id`) is named by its key, not its place, so an inserted pack
/// does not shift every pack after it.
public struct DiffPath: Hashable, Sendable, CustomStringConvertible, Comparable {
    public enum Step: Hashable, Sendable {
        case field(String)
        /// An element of a keyed list, by its key.
        case key(String)
        /// An element of a list compared by place.
        case index(Int)
    }

    public private(set) var steps: [Step]

    public init(_ steps: [Step] = []) { self.steps = steps }

    public static func root(_ name: String) -> DiffPath { DiffPath([.field(name)]) }

    public func field(_ name: String) -> DiffPath { DiffPath(steps + [.field(name)]) }
    public func key(_ key: String) -> DiffPath { DiffPath(steps + [.key(key)]) }
    public func index(_ i: Int) -> DiffPath { DiffPath(steps + [.index(i)]) }

    public var description: String {
        var out = ""
        for step in steps {
            switch step {
            case let .field(name): out += out.isEmpty ? name : "." + name
            case let .key(key): out += "[\(key)]"
            case let .index(i): out += "[\(i)]"
            }
        }
        return out
    }

    /// The form ignore rules are written in: every element step is `[]` (`packs[].price_cents`).
    public var rule: String {
        var out = ""
        for step in steps {
            switch step {
            case let .field(name): out += out.isEmpty ? name : "." + name
            case .key, .index: out += "[]"
            }
        }
        return out
    }

    public static func < (a: DiffPath, b: DiffPath) -> Bool { a.description < b.description }
}

/// Paths left out of a comparison: `packs[].cheer_total`, `history[].comments[].body`, `balance`.
/// A rule names a path in its `[]` form; it leaves out that path and everything under it. `*`
/// stands for any one field name (`packs[].*_url`).
public struct IgnoreRules: Sendable, Equatable {
    public private(set) var patterns: [String]
    private var parsed: [[Segment]]

    enum Segment: Equatable, Sendable {
        case field(String)
        case elements
    }

    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        public var rule: String
        public var reason: String
        public var description: String { "ignore rule “\(rule)”: \(reason)" }
    }

    /// No rule: nothing is left out.
    public init() {
        patterns = []
        parsed = []
    }

    public init(_ patterns: [String]) throws {
        self.patterns = []
        parsed = []
        for pattern in patterns { try add(pattern) }
    }

    public mutating func add(_ pattern: String) throws {
        let text = pattern.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { throw Invalid(rule: pattern, reason: "it is empty") }
        var segments: [Segment] = []
        for part in text.split(separator: ".", omittingEmptySubsequences: false) {
            var name = Substring(part)
            var elements = 0
            while name.hasSuffix("[]") {
                name = name.dropLast(2)
                elements += 1
            }
            guard !name.isEmpty || (elements > 0 && !segments.isEmpty) else {
                throw Invalid(rule: pattern, reason: "a name is missing (write paths as packs[].price_cents)")
            }
            guard !name.contains("[") && !name.contains("]") else {
                throw Invalid(rule: pattern, reason: "write an element as [] (packs[].price_cents), not by its key or place")
            }
            if !name.isEmpty { segments.append(.field(String(name))) }
            segments += Array(repeating: .elements, count: elements)
        }
        patterns.append(text)
        parsed.append(segments)
    }

    /// Whether `path` (or a path above it) is left out.
    public func ignores(_ path: DiffPath) -> Bool {
        guard !parsed.isEmpty else { return false }
        let steps = path.steps
        return parsed.contains { rule in
            guard rule.count <= steps.count else { return false }
            for (segment, step) in zip(rule, steps) {
                switch (segment, step) {
                case let (.field(pattern), .field(name)): if !Self.matches(pattern, name) { return false }
                case (.elements, .key), (.elements, .index): continue
                default: return false
                }
            }
            return true
        }
    }

    static func matches(_ pattern: String, _ name: String) -> Bool {
        guard pattern.contains("*") else { return pattern == name }
        let parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
        var rest = Substring(name)
        guard let first = parts.first, rest.hasPrefix(first) else { return false }
        rest = rest.dropFirst(first.count)
        for (i, part) in parts.enumerated().dropFirst() {
            if i == parts.count - 1 { return part.isEmpty || rest.hasSuffix(part) }
            guard let r = rest.range(of: part) else { return false }
            rest = rest[r.upperBound...]
        }
        return true
    }
}
