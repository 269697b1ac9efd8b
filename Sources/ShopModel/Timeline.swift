import Foundation

/// One user's state as this machine came to know it, write after write: the baseline settled before each
/// write and the state settled after it, in the order they were known (the newest last). The model's
/// memory between reads, between writes and between runs (the cache keeps it): a read that shows a state
/// the timeline has left behind is a lagging replica's, never the state now, and never a change a later
/// write made. Pure data; the view models record into it, the cache stores it.
public struct Timeline: Codable, Equatable, Sendable {
    /// One known state: the balance and the history's total, when each was known, and the request id
    /// that showed it.
    public struct Point: Codable, Equatable, Sendable {
        public var balance: Int?
        public var historyTotal: Int?
        public var at: Date
        public var requestID: String?

        public init(balance: Int?, historyTotal: Int?, at: Date, requestID: String? = nil) {
            self.balance = balance
            self.historyTotal = historyTotal
            self.at = at
            self.requestID = requestID
        }

        enum CodingKeys: String, CodingKey {
            case balance, historyTotal = "history_total", at, requestID = "request_id"
        }
    }

    /// At most this many points are kept (the oldest go first): a replica more writes behind than this is
    /// told as another writer, never as this machine's lag.
    public static let kept = 32

    public private(set) var points: [Point]

    public init(points: [Point] = []) {
        self.points = Array(points.suffix(Self.kept))
    }

    /// The newest state known.
    public var latest: Point? { points.last }

    /// Records a state known now. A point that says nothing new (the same values as the latest) only
    /// moves the latest's time on.
    public mutating func record(_ point: Point) {
        if let last = points.last, last.balance == point.balance || point.balance == nil,
           last.historyTotal == point.historyTotal || point.historyTotal == nil {
            points[points.count - 1].at = max(last.at, point.at)
            return
        }
        var point = point
        // A value not read this time is the latest's still.
        if point.balance == nil { point.balance = points.last?.balance }
        if point.historyTotal == nil { point.historyTotal = points.last?.historyTotal }
        points.append(point)
        if points.count > Self.kept { points.removeFirst(points.count - Self.kept) }
    }

    /// How long after a state was left a read of it still counts as a lagging replica's: past this, the
    /// same value read again is another writer's doing (a balance can come back to a value it had), and the
    /// read is believed.
    public static let lagWindow: TimeInterval = 120

    /// Whether `balance` is a balance the user's state has left, as of `now`: held by an earlier point, not
    /// by the latest, and left (the point after it known) less than `lagWindow` before `now` — a read that
    /// shows it answers from before a write this machine saw take effect.
    public func hasLeft(balance: Int, now: Date) -> Bool {
        guard let latest, latest.balance != balance else { return false }
        return points.indices.dropLast().contains { i in points[i].balance == balance && points[i + 1].at >= now - Self.lagWindow }
    }

    /// Whether `total` is a history total the user's history has left (as `hasLeft(balance:now:)`).
    public func hasLeft(historyTotal total: Int, now: Date) -> Bool {
        guard let latest, latest.historyTotal != total else { return false }
        return points.indices.dropLast().contains { i in points[i].historyTotal == total && points[i + 1].at >= now - Self.lagWindow }
    }
}
