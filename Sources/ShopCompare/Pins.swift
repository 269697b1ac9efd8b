import Foundation
import JSONTokens
import ShopAPI

/// An answer the tester pinned for its request (`P` on the Requests tab, `pins --add`): later answers
/// to the same request are compared with it, under the ignore rules.
public struct Pin: Sendable, Equatable {
    /// `GET /api/v1/balance?user_id=qa-alice`.
    public var request: RequestKey
    public var body: JSONValue
    public var requestID: String?
    public var pinnedAt: Date

    public init(request: RequestKey, body: JSONValue, requestID: String?, pinnedAt: Date) {
        self.request = request
        self.body = body
        self.requestID = requestID
        self.pinnedAt = pinnedAt
    }

    /// What a later answer to the same request differs by (nothing when it is not a read this tool
    /// compares: only GETs of the balance, the packs and the history are pinned).
    public func differences(from answer: JSONValue?, ignore: IgnoreRules, dates: @escaping @Sendable (String) -> Date? = Stamp.date) -> [Difference] {
        guard let what = RecordedRead.What(key: request) else { return [] }
        let method = request.method.rawValue, target = request.target
        let pinned = RecordedRead(what: what, method: method, target: target, requestID: requestID, status: 200, at: pinnedAt, body: body)
        let now = RecordedRead(what: what, method: method, target: target, requestID: nil, status: 200, at: nil, body: answer)
        var comparison = Comparison(ignore: ignore, dates: dates)
        switch what {
        case .balance: comparison.balance(pinned, now)
        case .packs: comparison.packs(pinned, now)
        case .history: comparison.history(a: pinned, b: now)
        }
        return comparison.finish()
    }
}

/// The pins of one environment, as their file holds them (JSON, a pin a line).
public struct PinBook: Sendable, Equatable {
    public private(set) var pins: [Pin] = []

    public init(_ pins: [Pin] = []) { self.pins = pins }

    public subscript(request: RequestKey) -> Pin? { pins.first { $0.request == request } }

    /// Pins `pin`, in place of an older pin of the same request.
    public mutating func add(_ pin: Pin) {
        pins.removeAll { $0.request == pin.request }
        pins.append(pin)
    }

    /// Removes the pin of `request`; false when there was none.
    @discardableResult
    public mutating func remove(_ request: RequestKey) -> Bool {
        let before = pins.count
        pins.removeAll { $0.request == request }
        return pins.count != before
    }

    public static func read(_ bytes: [UInt8]) throws -> PinBook {
        guard case let .object(root)? = JSONValue.parse(bytes), case let .array(items)? = root["pins"] else {
            throw Snapshot.Unreadable(reason: "it is not a file of pins")
        }
        var book = PinBook()
        for case let .object(o) in items {
            guard case let .string(line)? = o["request"], let request = Self.key(line), let body = o["body"] else { continue }
            let at = Snapshot.string(o["pinned_at"]).flatMap(Stamp.date) ?? Date(timeIntervalSince1970: 0)
            book.add(Pin(request: request, body: body, requestID: Snapshot.string(o["request_id"]), pinnedAt: at))
        }
        return book
    }

    /// The key of a request line as the file (and `pins --remove`) spells it: `GET /path?query`.
    public static func key(_ line: String) -> RequestKey? {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        return RequestKey(method: parts[0], target: parts[1])
    }

    public func encoded() -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.raw("{\"pins\":[")
        for (i, pin) in pins.enumerated() {
            w.raw(i == 0 ? "\n" : ",\n")
            w.value(.object(["request": .string(pin.request.description), "request_id": pin.requestID.map(JSONValue.string) ?? .null,
                             "pinned_at": .string(Stamp.text(pin.pinnedAt)), "body": pin.body]))
        }
        w.raw("\n]}\n")
        return w.bytes
    }
}

extension DiffReport {
    /// The first differences in one line (`changed balance.balance 1250 → 1243; added history[id=h-9]`),
    /// and how many more: a finding's "got".
    public static func brief(_ differences: [Difference], limit: Int = 3) -> String {
        var parts: [String] = differences.prefix(limit).map { d in
            switch d.kind {
            case .changed: return "changed \(d.path) \(value(d.old)) → \(value(d.new))"
            case .added: return "added \(d.path)"
            case .removed: return "removed \(d.path)"
            case .moved: return "moved \(d.path)"
            }
        }
        if differences.count > limit { parts.append("\(differences.count - limit) more") }
        return parts.joined(separator: "; ")
    }

    /// `2026-11-24 12:01:03 UTC`.
    public static func stamp(_ date: Date) -> String { Stamp.text(date) }
}
