import Foundation
import ShopAPI

/// One resident history page: loading (showing what it had, and holding its request's token),
/// loaded, or failed.
public typealias PageSlot = Loadable<CheerHistoryPage>

/// The history pages held in memory: at most `capacity`, least recently used evicted first,
/// so memory stays flat however many pages are visited.
public struct PageCache: Equatable, Sendable {
    public let capacity: Int
    private(set) var slots: [Int: PageSlot] = [:]
    /// Pages, least recently used first.
    private(set) var order: [Int] = []
    /// The lowest and highest amount of each page's entries, noted when the page is stored (a frame
    /// sizes the AMOUNT column from them without reading every entry held).
    private var amountBounds: [Int: AmountBounds] = [:]

    /// The lowest and highest amount of entries.
    public struct AmountBounds: Equatable, Sendable {
        public var low: Int
        public var high: Int
        public init(low: Int, high: Int) { self.low = low; self.high = high }
        public func union(_ other: AmountBounds) -> AmountBounds { AmountBounds(low: min(low, other.low), high: max(high, other.high)) }
    }

    /// At least 2: the page on screen and the one fetched ahead.
    public init(capacity: Int) { self.capacity = max(2, capacity) }

    public var residentCount: Int { slots.count }
    public var residentPages: [Int] { order }

    public subscript(page: Int) -> PageSlot? { slots[page] }

    /// Stores `slot`. A new page, or the page on screen (`current`), becomes the most recently used;
    /// an answer for another resident page replaces it in place. Evicts the least recently used pages
    /// beyond capacity — never `current` — and answers the requests the evicted pages held (to cancel).
    @discardableResult
    public mutating func set(_ page: Int, _ slot: PageSlot, current: Int? = nil) -> [Token] {
        let isNew = slots[page] == nil
        slots[page] = slot
        amountBounds[page] = Self.bounds(of: slot)
        if isNew || page == current { touch(page) }
        var orphaned: [Token] = []
        while order.count > capacity, let victim = order.first(where: { $0 != current }) {
            order.removeAll { $0 == victim }
            if let token = slots[victim]?.token { orphaned.append(token) }
            slots[victim] = nil
            amountBounds[victim] = nil
        }
        return orphaned
    }

    /// The lowest and highest amount of the entries held ((0, 0) when none: the column's least).
    public var heldAmounts: AmountBounds {
        amountBounds.values.reduce(AmountBounds(low: 0, high: 0)) { $0.union($1) }
    }

    private static func bounds(of slot: PageSlot) -> AmountBounds? {
        var bounds: AmountBounds?
        for case let .entry(e) in slot.value?.items ?? [] {
            bounds = bounds?.union(AmountBounds(low: e.amount, high: e.amount)) ?? AmountBounds(low: e.amount, high: e.amount)
        }
        return bounds
    }

    /// The page whose request is `token`.
    public func page(loading token: Token) -> Int? {
        slots.first { $0.value.token == token }?.key
    }

    public mutating func remove(_ page: Int) {
        slots[page] = nil
        amountBounds[page] = nil
        order.removeAll { $0 == page }
    }

    public mutating func touch(_ page: Int) {
        guard slots[page] != nil else { return }
        order.removeAll { $0 == page }
        order.append(page)
    }

    public mutating func removeAll() {
        slots = [:]
        order = []
        amountBounds = [:]
    }
}
