import Foundation
import ShopAPI

// Settled reads (docs/checks.md, "Settled reads"): a verdict rests on reads that agree, never on one
// read. A value that disagrees with what a write implies is read again, at most three reads over at
// most two seconds; what the reads settle on is judged, reads that go back to the state from before
// the write are named (`stale-read`), and a value that keeps moving is not judged at all.

/// One read of a value: what it said and the request id of its answer.
public struct Sighting<Value: Equatable & Sendable>: Equatable, Sendable {
    public var value: Value
    public var requestID: String?

    public init(_ value: Value, requestID: String?) {
        self.value = value
        self.requestID = requestID
    }
}

/// The reads of one value after a write, in the order they were answered.
public struct ReadSeries<Value: Equatable & Sendable>: Equatable, Sendable {
    /// At most this many reads of one value, the first included.
    public static var maxReads: Int { 3 }
    /// The waits before the second and the third read: the three reads span about 1.5 s, within 2 s.
    static var pauses: [Double] { [0.5, 1.0] }

    public internal(set) var sightings: [Sighting<Value>] = []
    /// The last read failed (its words): the reads stop; what was read before still counts.
    public internal(set) var failure: String?
    /// A read is out (or asked for).
    var out = false

    public init() {}

    var isDone: Bool { !out && (failure != nil || !sightings.isEmpty) }

    /// The read out answered: a value with its request id, or the words of its failure (a failure ends
    /// the reads; what was read before still counts).
    mutating func answered(_ result: Result<Sighting<Value>, ReadFailure>) {
        out = false
        switch result {
        case let .success(sighting): sightings.append(sighting)
        case let .failure(failure): self.failure = failure.words
        }
    }

    /// Whether one more read is due: the latest one disagrees with what the write implies, and the
    /// bound is not reached.
    func wantsAnother(_ isTarget: (Value) -> Bool) -> Bool {
        guard !out, failure == nil, let last = sightings.last, sightings.count < Self.maxReads else { return false }
        return !isTarget(last.value)
    }

    /// What the reads settle on.
    ///
    /// - `isTarget`: the value the write implies (a read showing it ends the reads);
    /// - `isOlder`: the state from before the write (a read showing it after the write may be a
    ///   lagging replica's);
    /// - `answerIsNewer`: the write's answer already showed a state after it (a 2xx), so any read of
    ///   the older state went back.
    func settle(isTarget: (Value) -> Bool, isOlder: (Value) -> Bool, answerIsNewer: Bool) -> Settlement<Value> {
        guard let last = sightings.last else {
            return .unread(failure ?? "the read was not made")
        }
        let settled: Value?
        if isTarget(last.value) {
            settled = last.value
        } else {
            let newer = sightings.filter { !isOlder($0.value) }
            if newer.isEmpty {
                settled = last.value  // every read shows the state from before the write
            } else if newer.allSatisfy({ $0.value == newer[0].value }) {
                settled = newer[0].value  // the reads of the older state are explained by lag
            } else if sightings.count >= 2, sightings[sightings.count - 2].value == last.value {
                settled = last.value  // it moved, then held
            } else {
                settled = nil
            }
        }
        guard let settled else { return .disagree(sightings) }
        // A read that went back: the older state after a newer one (or after an answer that showed one),
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
}

/// What a value's reads settled on.
public enum Settlement<Value: Equatable & Sendable>: Equatable, Sendable {
    /// Judged on this value; `stale` holds every read when one of them went back to the state from before
    /// the write (a `stale-read` finding), else empty.
    case settled(Value, stale: [Sighting<Value>])
    /// The reads kept moving with no write seen: not judged.
    case disagree([Sighting<Value>])
    /// No read answered.
    case unread(String)

    var value: Value? { if case let .settled(v, _) = self { return v } else { return nil } }

    /// As the judging reads it.
    var read: Verification.Read<Value> {
        switch self {
        case let .settled(v, _): return .read(v)
        case .disagree: return .unread("not judged: the reads disagree")
        case let .unread(words): return .unread(words)
        }
    }
}

/// The finding a settlement can make: reads of one value that went back to an older state
/// (`stale-read`), or that never agreed (`reads-disagree`). One finding per user and check, however
/// often it recurs (its key has no values in it).
enum ReadAnomaly {
    static func records<Value>(_ settlement: Settlement<Value>, what: String, request: String, user: String, at: Date,
                               describe: (Value) -> String) -> [CheckRecord] {
        let check: ContractCheck
        let sightings: [Sighting<Value>]
        let expected: String
        switch settlement {
        case let .settled(_, stale) where !stale.isEmpty:
            check = .staleRead
            sightings = stale
            expected = "reads after a write show it, never the state from before it"
        case let .disagree(all):
            check = .readsDisagree
            sightings = all
            expected = "reads of one value that agree (no write was seen between them)"
        default:
            return []
        }
        let reads = sightings.map { "\(describe($0.value)) (\($0.requestID ?? "no request id"))" }.joined(separator: ", ")
        let actual = "\(what) read \(sightings.count) times: \(reads)"
            + (check == .staleRead ? ": a read answered the state from before the write" : ": not judged")
        // The key leaves the values out: the same fault of the server's reads is one finding.
        let key = FindingKey(Finding(check: check, expected: expected, actual: "reads of \(user)"), method: "GET", target: "reads of \(user)")
        return [CheckRecord(check: .contract(check), outcome: .failed, expected: expected, actual: actual, request: request,
                            requestID: sightings.last?.requestID, at: at, key: key)]
    }
}
