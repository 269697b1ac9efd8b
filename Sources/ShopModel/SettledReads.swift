import Foundation

// The one settled-read rule (docs/checks.md, "Settled reads"): a verdict rests on reads that agree, never
// on one read. A value that disagrees with what is expected is read again, at most three reads over at
// most two seconds; what the reads settle on is judged. A read that shows a state the user's data has
// already left (the state before a write whose effect was seen, or an older one the timeline holds) is a
// stale read, named once; a value that keeps moving with no write to explain it is not judged. The
// baseline before a write is settled by the same rule as the reads after it.

/// One read of a value: what it said and the request id of its answer.
public struct Sighting<Value: Equatable & Sendable>: Equatable, Sendable {
    public var value: Value
    public var requestID: String?

    public init(_ value: Value, requestID: String?) {
        self.value = value
        self.requestID = requestID
    }
}

/// The reads of one value, in the order they were answered.
public struct ReadSeries<Value: Equatable & Sendable>: Equatable, Sendable {
    /// At most this many reads of one value, the first included.
    public static var maxReads: Int { 3 }
    /// The waits before the second and the third read: the three reads span about 1.5 s, within 2 s.
    public static var pauses: [Double] { [0.5, 1.0] }

    public private(set) var sightings: [Sighting<Value>] = []
    /// The last read failed (its words): the reads stop; what was read before still counts.
    public private(set) var failure: String?
    /// A read is out (or asked for).
    public var out = false

    public init() {}

    public var isDone: Bool { !out && (failure != nil || !sightings.isEmpty) }

    /// The read out answered: a value with its request id, or the words of its failure (a failure ends
    /// the reads; what was read before still counts).
    public mutating func answered(_ result: Result<Sighting<Value>, ReadFailure>) {
        out = false
        switch result {
        case let .success(sighting): sightings.append(sighting)
        case let .failure(failure): self.failure = failure.words
        }
    }

    /// Whether one more read is due, by the one rule (`ReadRule.next`): the latest one disagrees with what
    /// is expected, and the bound is not reached.
    public func wantsAnother(_ isTarget: @escaping (Value) -> Bool) -> Bool {
        guard !out, failure == nil, !sightings.isEmpty else { return false }
        return ReadRule(expecting: isTarget).next(after: sightings.map(\.value)) != .done
    }

    /// What the reads settle on.
    ///
    /// - `isTarget`: the value expected (a read showing it ends the reads);
    /// - `isOlder`: a state the value has already left (the state from before the write, or one the
    ///   timeline holds as superseded): a read showing it may be a lagging replica's;
    /// - `answerIsNewer`: something other than these reads already showed a newer state (a write's 2xx,
    ///   a later state in the timeline), so any read of an older state went back;
    /// - `known`: the newest state known from outside these reads (the write's own answer; the
    ///   timeline's latest): when every read shows an older state, the reads lag and this is what they
    ///   settle on; nil when nothing newer is known (the reads then say what they say, or `behind`).
    public func settle(isTarget: (Value) -> Bool, isOlder: (Value) -> Bool, answerIsNewer: Bool, known: Value? = nil) -> Settlement<Value> {
        guard let last = sightings.last else {
            return .unread(failure ?? "the read was not made")
        }
        let settled: Value?
        if isTarget(last.value) {
            settled = last.value
        } else {
            let newer = sightings.filter { !isOlder($0.value) }
            if newer.isEmpty {
                // Every read shows a state already left: the reads lag behind what is known.
                if let known { return .settled(known, stale: sightings) }
                if answerIsNewer { return .behind(sightings) }
                settled = last.value  // every read shows the state from before the write, and nothing says it moved
            } else if newer.allSatisfy({ $0.value == newer[0].value }) {
                settled = newer[0].value  // the reads of the older state are explained by lag
            } else if sightings.count >= 2, sightings[sightings.count - 2].value == last.value {
                settled = last.value  // it moved, then held
            } else {
                settled = nil
            }
        }
        guard let settled else { return .disagree(sightings) }
        // A read that went back: an older state after a newer one (or after an answer that showed one),
        // while the reads settle on a newer state.
        var wentBack = false
        if !isOlder(settled) {
            var newerSeen = answerIsNewer
            for s in sightings {
                if isOlder(s.value), newerSeen { wentBack = true }
                if !isOlder(s.value) { newerSeen = true }
            }
        }
        return .settled(settled, stale: wentBack ? sightings : [])
    }
}

/// Why a read of a series did not answer, in words.
public struct ReadFailure: Error, Equatable, Sendable {
    public var words: String

    public init(words: String) { self.words = words }
}

/// What a value's reads settled on.
public enum Settlement<Value: Equatable & Sendable>: Equatable, Sendable {
    /// Judged on this value; `stale` holds every read when one of them went back to a state already left
    /// (a `stale-read` finding), else empty.
    case settled(Value, stale: [Sighting<Value>])
    /// The reads kept moving with no write seen: not judged.
    case disagree([Sighting<Value>])
    /// Every read showed a state already left, and what came after it is not known: not judged (the
    /// reads lag: a `stale-read` finding), never a failed check.
    case behind([Sighting<Value>])
    /// No read answered.
    case unread(String)

    public var value: Value? { if case let .settled(v, _) = self { return v } else { return nil } }

    /// The reads of a stale-read finding: those of a settlement that went back, or that stayed behind.
    public var staleSightings: [Sighting<Value>] {
        switch self {
        case let .settled(_, stale): return stale
        case let .behind(all): return all
        case .disagree, .unread: return []
        }
    }
}

/// When to read a value again: the one rule every settled read follows, whether its reads are driven by
/// the view models' effects (`ReadSeries.wantsAnother`) or awaited in a row (`reads(_:)`: `negative`, the
/// live side of `compare` and `snapshot`, `replay`, the ledger probe's balance).
///
/// At most `ReadSeries.maxReads` reads (3). A read follows after a pause (0.5 s, then 1 s) when the latest
/// disagrees with what is expected (a lagging replica gets time to catch up), at once when nothing says it
/// is wrong but the verdict wants a second read that agrees with it. The reads end on what is expected
/// (`isExpected`), or, when the verdict rests on agreement (`twoAgree`), on two reads in a row that agree.
public struct ReadRule<Value> {
    /// What the reads are expected to show: a write's effect, the state this machine last settled on, a
    /// recording. Nil: nothing is known beforehand.
    public var isExpected: ((Value) -> Bool)?
    /// When set, the reads end only on two reads in a row that are the same by it, even when the first
    /// showed what was expected (a verdict never rests on one read).
    public var twoAgree: ((Value, Value) -> Bool)?

    public init(expecting isExpected: ((Value) -> Bool)? = nil, twoAgree: ((Value, Value) -> Bool)? = nil) {
        self.isExpected = isExpected
        self.twoAgree = twoAgree
    }

    public enum Step: Equatable, Sendable {
        /// No more reads: the rule is met, or the bound is reached.
        case done
        /// Read again, after this many seconds.
        case again(after: Double)
    }

    /// After `values` (in the order they were answered): done, or when to read again.
    public func next(after values: [Value]) -> Step {
        guard let last = values.last else { return .again(after: 0) }
        if met(by: values) || values.count >= ReadSeries<Int>.maxReads { return .done }
        let pauses = ReadSeries<Int>.pauses
        let pause = pauses[min(values.count - 1, pauses.count - 1)]
        // Only a confirmation is due (the first read showed what was expected, or nothing was): at once.
        if twoAgree != nil, values.count == 1, isExpected?(last) ?? true { return .again(after: 0) }
        return .again(after: pause)
    }

    /// Whether the reads end as the rule wants: on two in a row that agree when agreement is asked for,
    /// else on what is expected (or on any read when nothing is).
    public func met(by values: [Value]) -> Bool {
        guard let last = values.last else { return false }
        if let same = twoAgree {
            return values.count >= 2 && same(values[values.count - 2], last)
        }
        return isExpected?(last) ?? true
    }

    /// Takes the reads this rule asks for, one after another: `read` answers one (an error it throws ends
    /// the reads and is thrown on); `pause` waits between them (a pace, not a synchronisation).
    public func reads(pause: (Double) async -> Void = ReadRule.sleep, _ read: () async throws -> Value) async rethrows -> ReadsTaken<Value> {
        var values = [try await read()]
        while case let .again(after) = next(after: values) {
            if after > 0 { await pause(after) }
            values.append(try await read())
        }
        return ReadsTaken(all: values, met: met(by: values))
    }

    /// Waits `seconds` (cut short when the task is cancelled).
    public static func sleep(_ seconds: Double) async {
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
    }
}

/// The reads a `ReadRule` took: never none.
public struct ReadsTaken<Value> {
    /// In the order they were answered; the first is `all[0]`.
    public let all: [Value]
    /// The reads ended as the rule wants (on what was expected, or on two that agree).
    public let met: Bool

    /// The latest read.
    public var last: Value { all[all.count - 1] }
}

extension ReadsTaken: Sendable where Value: Sendable {}
