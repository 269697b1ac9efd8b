/// A fault as it stands in the registry.
public struct ActiveFault: Sendable, Equatable, Encodable {
    public let id: Int
    public let spec: FaultSpec
    /// Matching requests it will still hit, when it was added with a `count`.
    public var remaining: Int?
    /// Requests that matched it and are still being answered (a `count` is spent only when applied).
    var reserved = 0
    public var hits: Int = 0

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: FaultKey.self)
        try c.encode(id, forKey: "id")
        try c.encodeIfPresent(remaining, forKey: "remaining")
        try c.encode(hits, forKey: "hits")
        try spec.encode(to: encoder)
    }
}

/// A fault that matched a request: applied to it, or released if something else decided the answer.
public struct FaultHit: Sendable, Equatable {
    public let id: Int
    public let spec: FaultSpec
}

/// The faults in force. An actor, so a `count` is consumed exactly once under concurrent requests:
/// `trigger` reserves one use, `settle` spends it (the fault changed the answer) or gives it back
/// (it did not: another fault won, or the answer had nothing to change).
public actor FaultRegistry {
    private var faults: [ActiveFault] = []
    private var nextID = 1
    private var rng: SeededGenerator

    public init(seed: UInt64 = SeedData.defaultSeed, initial: [FaultSpec] = []) {
        rng = SeededGenerator(seed: SeededGenerator.mix(seed ^ 0xFA017))
        faults = initial.enumerated().map { ActiveFault(id: $0.offset + 1, spec: $0.element, remaining: $0.element.count) }
        nextID = initial.count + 1
    }

    @discardableResult
    public func add(_ spec: FaultSpec) -> ActiveFault {
        let fault = ActiveFault(id: nextID, spec: spec, remaining: spec.count)
        nextID += 1
        faults.append(fault)
        return fault
    }

    public func list() -> [ActiveFault] { faults }

    /// Removes every fault; answers how many there were.
    @discardableResult
    public func clear() -> Int {
        defer { faults = [] }
        return faults.count
    }

    public func remove(id: Int) -> Bool {
        guard let i = faults.firstIndex(where: { $0.id == id }) else { return false }
        faults.remove(at: i)
        return true
    }

    /// The faults that match this request, in the order they were added, each with one use reserved.
    /// Only kinds in `applicable` are considered (a malformed entry only makes sense in a history page).
    public func trigger(method: String, path: String, applicable: Set<FaultKind>) -> [FaultHit] {
        var hits: [FaultHit] = []
        for i in faults.indices {
            let spec = faults[i].spec
            guard applicable.contains(spec.kind), spec.method.map({ $0 == method }) ?? true,
                  Glob.matches(spec.path, path)
            else { continue }
            if let remaining = faults[i].remaining, remaining - faults[i].reserved <= 0 { continue }
            if let rate = spec.rate, !rng.chance(rate) { continue }
            if faults[i].remaining != nil { faults[i].reserved += 1 }
            hits.append(FaultHit(id: faults[i].id, spec: spec))
        }
        return hits
    }

    /// The first fault of `kind` in force, whatever its path and method, with one use reserved (its rate
    /// still applies): for a control endpoint that acts as the shop would (a refund under `keep_refunded`),
    /// though control endpoints are otherwise never faulted. Settle it as `trigger`'s hits.
    public func trigger(kind: FaultKind) -> FaultHit? {
        for i in faults.indices where faults[i].spec.kind == kind {
            if let remaining = faults[i].remaining, remaining - faults[i].reserved <= 0 { continue }
            if let rate = faults[i].spec.rate, !rng.chance(rate) { continue }
            if faults[i].remaining != nil { faults[i].reserved += 1 }
            return FaultHit(id: faults[i].id, spec: faults[i].spec)
        }
        return nil
    }

    /// Spends the reserved use of each applied fault (removing those whose count reaches 0) and gives
    /// back the use of each released one.
    public func settle(applied: [FaultHit], released: [FaultHit]) {
        let appliedIDs = Set(applied.map(\.id))
        let releasedIDs = Set(released.map(\.id))
        faults = faults.compactMap { fault in
            var f = fault
            if appliedIDs.contains(f.id) {
                f.hits += 1
                if let remaining = f.remaining {
                    f.reserved -= 1
                    f.remaining = remaining - 1
                    if remaining - 1 <= 0 { return nil }
                }
            } else if releasedIDs.contains(f.id), f.remaining != nil {
                f.reserved -= 1
            }
            return f
        }
    }
}

/// Shell-style glob over a path: `*` any run of characters (slashes included), `?` one character.
public enum Glob {
    public static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.utf8), t = Array(text.utf8)
        var pi = 0, ti = 0
        var star = -1, mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == UInt8(ascii: "?") || p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == UInt8(ascii: "*") {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}
