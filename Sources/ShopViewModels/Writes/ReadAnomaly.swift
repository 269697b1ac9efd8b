import Foundation
import ShopAPI
import ShopModel

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
        case .settled, .behind:
            guard !settlement.staleSightings.isEmpty else { return [] }
            check = .staleRead
            sightings = settlement.staleSightings
            expected = "reads after a write show it, never the state from before it"
        case let .disagree(all):
            check = .readsDisagree
            sightings = all
            expected = "reads of one value that agree (no write was seen between them)"
        case .unread:
            return []
        }
        let reads = sightings.map { "\(describe($0.value)) (\($0.requestID ?? "no request id"))" }.joined(separator: ", ")
        let staleWords: String
        switch settlement {
        case .behind: staleWords = ": every read answered the state from before the write, whose answer showed it (a lagging replica, or a write not applied: the next reads tell)"
        default: staleWords = what.hasPrefix("before the write") ? ": a read answered a state an earlier write had already changed" : ": a read answered the state from before the write"
        }
        let actual = "\(what) read \(sightings.count) times: \(reads)" + (check == .staleRead ? staleWords : ": not judged")
        // The key leaves the values out: the same fault of the server's reads is one finding.
        let key = FindingKey(Finding(check: check, expected: expected, actual: "reads of \(user)"), method: "GET", target: "reads of \(user)")
        return [CheckRecord(check: .contract(check), outcome: .failed, expected: expected, actual: actual, request: request,
                            requestID: sightings.last?.requestID, at: at, key: key)]
    }
}

extension ReadAnomaly {
    /// The newest entry read several times, the same by id, with fields that moved between reads: a
    /// `reads-disagree` finding on the entry (the contract: an entry's content is stable), each read with
    /// its request id. The fields the write's check judges are judged all the same.
    static func drift(_ sightings: [Sighting<Verification.HistoryFacts>], request: String, user: String, at: Date) -> [CheckRecord] {
        guard let id = sightings.first?.value.newest?.id else { return [] }
        let expected = "an entry's content the same on every read (entry \(id))"
        let reads = sightings.map { "\($0.value.described) (\($0.requestID ?? "no request id"))" }.joined(separator: ", ")
        let actual = "the history's newest entry \(id) read \(sightings.count) times, its content moved: \(reads); its other fields were judged"
        let key = FindingKey(Finding(check: .readsDisagree, expected: "an entry's content the same on every read", actual: "entries of \(user)"),
                             method: "GET", target: "entries of \(user)")
        return [CheckRecord(check: .contract(.readsDisagree), outcome: .failed, expected: expected, actual: actual, request: request,
                            requestID: sightings.last?.requestID, at: at, key: key)]
    }
}

extension Settlement {
    /// As the judging reads it: reads that lag behind a write never judge it (neither ✔ nor ✗).
    var read: Verification.Read<Value> {
        switch self {
        case let .settled(v, _): return .read(v)
        case .disagree: return .unread("not judged: the reads disagree")
        case .behind: return .unread("not judged: every read still showed the state from before the write (stale-read)")
        case let .unread(words): return .unread(words)
        }
    }
}
