import JSONTokens
import ShopAPI

/// One difference between two sides: what was added, removed, changed (old → new), or moved (the
/// same element at another place in its list, nothing else about it changed).
public struct Difference: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case changed, removed, added, moved
    }

    public var kind: Kind
    public var path: DiffPath
    public var old: JSONValue?
    public var new: JSONValue?
    /// For an element of a keyed list: what a person calls it (a pack's name).
    public var label: String?
    /// For a move: the places in each list (0-based).
    public var places: (old: Int, new: Int)?

    public init(_ kind: Kind, _ path: DiffPath, old: JSONValue? = nil, new: JSONValue? = nil, label: String? = nil, places: (old: Int, new: Int)? = nil) {
        self.kind = kind
        self.path = path
        self.old = old
        self.new = new
        self.label = label
        self.places = places
    }

    public static func == (a: Difference, b: Difference) -> Bool {
        a.kind == b.kind && a.path == b.path && a.old == b.old && a.new == b.new && a.label == b.label
            && a.places?.old == b.places?.old && a.places?.new == b.places?.new
    }
}

/// How the shop's lists are keyed: each pack by its `identifier`, each history entry by its
/// `EntryKey` (its `id`, or when it has none its date, product, amount and creator — the key the
/// History tab holds entries by), named in paths as `id=…` or `date|product|amount|creator`.
/// Other lists (comments, tags) are compared by place.
public enum ShopKeys {
    /// Lists whose elements are known by a key.
    public static func isKeyed(_ rule: String) -> Bool { rule == "packs" || rule == "history" }

    /// The element's key as its path names it; nil for an element that is not an object.
    public static func key(of element: JSONValue, inList rule: String) -> String? {
        switch rule {
        case "packs":
            if case let .object(o) = element, case let .string(id)? = o["identifier"] { return id }
            return nil
        case "history":
            return EntryKey(json: element)?.description
        default:
            return nil
        }
    }

    /// What a person calls an element: a pack's name; an entry's amount, product and date.
    public static func label(of element: JSONValue, inList rule: String) -> String? {
        guard case let .object(o) = element else { return nil }
        switch rule {
        case "packs":
            if case let .string(name)? = o["name"] { return name }
        case "history":
            let amount = o["amount"].map(EntryKey.text) ?? "?"
            let product = o["product"].map(EntryKey.text) ?? "?"
            let date = o["date"].map(EntryKey.text) ?? "?"
            return "\(amount) cheer on \(product) at \(date)"
        default: break
        }
        return nil
    }
}

/// The structural diff: objects field by field, keyed lists by key, other lists by place. Pure.
public struct Differ: Sendable {
    public var ignore: IgnoreRules

    public init(ignore: IgnoreRules = IgnoreRules()) {
        self.ignore = ignore
    }

    /// The differences between `a` and `b` at `path` (nil: absent on that side).
    public func diff(_ a: JSONValue?, _ b: JSONValue?, at path: DiffPath) -> [Difference] {
        var out: [Difference] = []
        diff(a, b, at: path, into: &out)
        return out
    }

    func diff(_ a: JSONValue?, _ b: JSONValue?, at path: DiffPath, into out: inout [Difference]) {
        guard !ignore.ignores(path) else { return }
        switch (a, b) {
        case (nil, nil): return
        case let (nil, b?): out.append(Difference(.added, path, new: b))
        case let (a?, nil): out.append(Difference(.removed, path, old: a))
        case let (.object(x)?, .object(y)?):
            // Each distinct key once, its value as a reader takes it (the last of a key given twice).
            var seen = Set<String>()
            for (key, _) in x where seen.insert(key).inserted { diff(x[key], y[key], at: path.field(key), into: &out) }
            for (key, _) in y where seen.insert(key).inserted { diff(nil, y[key], at: path.field(key), into: &out) }
        case let (.array(x)?, .array(y)?):
            if ShopKeys.isKeyed(path.rule) {
                var keyed = KeyedListDiff(path: path, differ: self)
                keyed.add(a: x)
                keyed.add(b: y)
                out += keyed.finish()
            } else {
                for i in 0..<max(x.count, y.count) {
                    diff(i < x.count ? x[i] : nil, i < y.count ? y[i] : nil, at: path.index(i), into: &out)
                }
            }
        case let (a?, b?):
            if a != b { out.append(Difference(.changed, path, old: a, new: b)) }
        }
    }
}

/// A keyed list compared a piece at a time (history pages as they come from each side): an element
/// is compared as soon as its key has come from both sides, and only the elements still waiting for
/// their other side are held — two sides that mostly agree keep little in memory however long they
/// are. Moves are the elements outside the longest run of common elements in the same order.
public struct KeyedListDiff: Sendable {
    let path: DiffPath
    let differ: Differ
    let rule: String
    /// Elements waiting for their other side, by key: a queue, since a key given twice on one side (a
    /// server bug worth showing) pairs the nth of one side with the nth of the other.
    var waitingA: [String: Waiting] = [:]
    var waitingB: [String: Waiting] = [:]

    struct Waiting: Sendable {
        var items: [(place: Int, value: JSONValue, occurrence: Int)] = []
        /// Taken from the front so far (the next one's occurrence follows them).
        var taken = 0
    }
    var countA = 0
    var countB = 0
    /// Places of each element found on both sides, in the order it completed, and its key (what a
    /// person calls it only for a short list: a long history keeps no text per entry for moves).
    var pairs: [(a: Int32, b: Int32)] = []
    /// The pairs' keys, end to end (a 100,000-entry history holds them in about 2 MB, not 100,000 strings).
    var keyBytes: [UInt8] = []
    var keyEnds: [Int32] = []
    /// Labels of a short list's pairs (packs), by pair.
    var labels: [Int: String] = [:]
    public private(set) var differences: [Difference] = []

    public init(path: DiffPath, differ: Differ) {
        self.path = path
        self.differ = differ
        rule = path.rule
    }

    public mutating func add(a elements: [JSONValue]) { add(elements, sideA: true) }
    public mutating func add(b elements: [JSONValue]) { add(elements, sideA: false) }

    mutating func add(_ elements: [JSONValue], sideA: Bool) {
        for element in elements {
            let place = sideA ? countA : countB
            if sideA { countA += 1 } else { countB += 1 }
            let key = ShopKeys.key(of: element, inList: rule) ?? "#\(place)"
            if sideA, let other = Self.take(key, from: &waitingB) {
                complete(key: key, a: (place, element), b: (other.place, other.value))
                continue
            }
            if !sideA, let other = Self.take(key, from: &waitingA) {
                complete(key: key, a: (other.place, other.value), b: (place, element))
                continue
            }
            if sideA { Self.wait(key, place, element, in: &waitingA) } else { Self.wait(key, place, element, in: &waitingB) }
        }
    }

    static func take(_ key: String, from waiting: inout [String: Waiting]) -> (place: Int, value: JSONValue, occurrence: Int)? {
        guard var queue = waiting[key], !queue.items.isEmpty else { return nil }
        let first = queue.items.removeFirst()
        queue.taken += 1
        waiting[key] = queue.items.isEmpty ? nil : queue
        return first
    }

    static func wait(_ key: String, _ place: Int, _ element: JSONValue, in waiting: inout [String: Waiting]) {
        var queue = waiting[key] ?? Waiting()
        queue.items.append((place, element, queue.taken + queue.items.count + 1))
        waiting[key] = queue
    }

    /// Only one side's elements, in their places, named `key`, `key#2`… when a key came more than once.
    static func leftovers(_ waiting: [String: Waiting]) -> [(key: String, place: Int, value: JSONValue)] {
        waiting.flatMap { key, queue in queue.items.map { (nth(key, $0.occurrence), $0.place, $0.value) } }.sorted { $0.place < $1.place }
    }

    static func nth(_ key: String, _ n: Int) -> String { n == 1 ? key : "\(key)#\(n)" }

    mutating func complete(key: String, a: (place: Int, value: JSONValue), b: (place: Int, value: JSONValue)) {
        let elementPath = path.key(key)
        var changes = differ.diff(a.value, b.value, at: elementPath)
        let label = changes.isEmpty && rule == "history" ? nil : ShopKeys.label(of: b.value, inList: rule)
        for i in changes.indices where changes[i].label == nil { changes[i].label = label }
        differences += changes
        if rule != "history", let label { labels[pairs.count] = label }
        pairs.append((Int32(truncatingIfNeeded: a.place), Int32(truncatingIfNeeded: b.place)))
        keyBytes.append(contentsOf: key.utf8)
        keyEnds.append(Int32(truncatingIfNeeded: keyBytes.count))
    }

    /// What is left: elements only one side had, and the moves.
    public mutating func finish() -> [Difference] {
        var out = differences
        differences = []
        for a in Self.leftovers(waitingA) where !differ.ignore.ignores(path.key(a.key)) {
            out.append(Difference(.removed, path.key(a.key), old: a.value, label: ShopKeys.label(of: a.value, inList: rule)))
        }
        for b in Self.leftovers(waitingB) where !differ.ignore.ignores(path.key(b.key)) {
            out.append(Difference(.added, path.key(b.key), new: b.value, label: ShopKeys.label(of: b.value, inList: rule)))
        }
        waitingA = [:]
        waitingB = [:]
        // Moves: common elements outside the longest run kept in the same order on both sides.
        let byA = pairs.indices.sorted { pairs[$0].a < pairs[$1].a }
        let kept = Self.longestIncreasing(byA.map { Int(pairs[$0].b) })
        for (i, n) in byA.enumerated() where !kept[i] {
            let start = n == 0 ? 0 : Int(keyEnds[n - 1])
            let key = String(decoding: keyBytes[start..<Int(keyEnds[n])], as: UTF8.self)
            guard !differ.ignore.ignores(path.key(key)) else { continue }
            out.append(Difference(.moved, path.key(key), label: labels[n], places: (Int(pairs[n].a), Int(pairs[n].b))))
        }
        pairs = []
        keyBytes = []
        keyEnds = []
        labels = [:]
        return out
    }

    /// Which of `values` make one longest strictly increasing subsequence (patience sorting, n log n).
    static func longestIncreasing(_ values: [Int]) -> [Bool] {
        var tails: [Int] = []  // index into values of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var kept = [Bool](repeating: false, count: values.count)
        var i = tails.last ?? -1
        while i >= 0 {
            kept[i] = true
            i = previous[i]
        }
        return kept
    }
}
