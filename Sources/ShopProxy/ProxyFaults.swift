import JSONTokens
import Synchronization

/// A fault as it stands in the proxy: its id, what is left of its count, and how often it was applied.
public struct ActiveProxyFault: Sendable, Equatable {
    public let id: Int
    public let fault: ProxyFault
    /// Matching requests it will still hit, when it was added with a `count`.
    public var remaining: Int?
    /// Requests it was applied to.
    public var hits = 0

    /// As `GET /_proxy/faults` lists it: `id`, `remaining` (with a count), `hits`, then the fault's keys.
    public var json: JSONObject {
        var o = JSONObject()
        o.append("id", .int(id))
        if let remaining { o.append("remaining", .int(remaining)) }
        o.append("hits", .int(hits))
        for member in fault.json { o.append(member.key, member.value) }
        return o
    }
}

/// The faults in force in one proxy (`--fault` at start, `POST /_proxy/faults`, the TUI's menu). Safe from
/// any thread: a fault's count is spent exactly once however many connections race for it.
public final class ProxyFaults: Sendable {
    private struct State {
        var faults: [ActiveProxyFault] = []
        var nextID = 1
        var dice: FaultDice
    }

    private let state: Mutex<State>

    /// `initial` in force from the start; `seed` makes the rates repeatable (tests), else they are random.
    public init(_ initial: [ProxyFault] = [], seed: UInt64? = nil) {
        var start = State(dice: FaultDice(seed: seed))
        for fault in initial {
            start.faults.append(ActiveProxyFault(id: start.nextID, fault: fault, remaining: fault.count))
            start.nextID += 1
        }
        state = Mutex(start)
    }

    /// Puts a fault in force; answers its id.
    @discardableResult
    public func add(_ fault: ProxyFault) -> Int { added(fault).id }

    /// Puts a fault in force; answers it as it stands.
    func added(_ fault: ProxyFault) -> ActiveProxyFault {
        state.withLock { s in
            let active = ActiveProxyFault(id: s.nextID, fault: fault, remaining: fault.count)
            s.nextID += 1
            s.faults.append(active)
            return active
        }
    }

    /// The faults in force, in the order they were added.
    public func list() -> [ActiveProxyFault] { state.withLock { $0.faults } }

    /// Removes every fault; answers how many there were.
    @discardableResult
    public func clear() -> Int {
        state.withLock { s in
            defer { s.faults = [] }
            return s.faults.count
        }
    }

    /// Removes one fault; answers whether it was there.
    @discardableResult
    public func remove(id: Int) -> Bool {
        state.withLock { s in
            guard let i = s.faults.firstIndex(where: { $0.id == id }) else { return false }
            s.faults.remove(at: i)
            return true
        }
    }

    /// The first fault in force that matches a request of `method` for `path` (its path without the query)
    /// and wins its roll of `rate`, with one use of its count spent (a fault whose count is spent is gone).
    func take(method: String, path: String) -> ProxyFault? {
        take { $0.matches(method: method, path: path) }
    }

    /// For a CONNECT: an `offline` fault, with one use spent (no other fault is about a tunnel).
    func takeForConnect() -> ProxyFault? {
        take { $0.kind == .offline }
    }

    /// Whether an `offline` fault is in force (none of its uses spent).
    var offlineInForce: Bool { state.withLock { s in s.faults.contains { $0.fault.kind == .offline } } }

    private func take(where applies: (ProxyFault) -> Bool) -> ProxyFault? {
        state.withLock { s in
            for i in s.faults.indices where applies(s.faults[i].fault) {
                if let rate = s.faults[i].fault.rate, s.dice.roll() >= rate { continue }
                s.faults[i].hits += 1
                let fault = s.faults[i].fault
                if let remaining = s.faults[i].remaining {
                    if remaining <= 1 { s.faults.remove(at: i) } else { s.faults[i].remaining = remaining - 1 }
                }
                return fault
            }
            return nil
        }
    }
}

/// The rolls of a fault's `rate`: repeatable from a seed (SplitMix64), else the system's randomness.
struct FaultDice: Sendable {
    private var state: UInt64?

    init(seed: UInt64?) { state = seed }

    /// A number in [0, 1).
    mutating func roll() -> Double {
        guard var z = state else { return Double.random(in: 0..<1) }
        z &+= 0x9E37_79B9_7F4A_7C15
        state = z
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }
}
