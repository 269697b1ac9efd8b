import Foundation
import ShopAPI

/// Where a history page comes from.
public enum DataSource: Equatable, Sendable {
    case live
    /// From the on-disk cache; `reason` says why the live data is missing (nil while a refresh runs).
    case cached(reason: String?)
}

/// A page's earlier content, shown while it reloads.
public struct StalePage: Equatable, Sendable {
    public var page: CheerHistoryPage
    public var fetchedAt: Date
    public var source: DataSource
}

/// One resident history page.
public enum PageSlot: Equatable, Sendable {
    /// In flight; `stale` is what to show meanwhile (the cached first page, or the page before a refresh).
    case loading(requestID: Int, stale: StalePage?)
    case loaded(CheerHistoryPage, fetchedAt: Date, source: DataSource)
    case failed(message: String, requestID: String?)
}

/// The history pages held in memory: at most `capacity`, least recently used evicted first,
/// so memory stays flat however many pages are visited.
public struct PageCache: Equatable, Sendable {
    public let capacity: Int
    private(set) var slots: [Int: PageSlot] = [:]
    /// Pages, least recently used first.
    private(set) var order: [Int] = []

    public init(capacity: Int) { self.capacity = max(1, capacity) }

    public var residentCount: Int { slots.count }
    public var residentPages: [Int] { order }

    public subscript(page: Int) -> PageSlot? { slots[page] }

    /// Stores `slot` as the most recently used; answers the slots evicted to stay within capacity.
    @discardableResult
    public mutating func set(_ page: Int, _ slot: PageSlot) -> [PageSlot] {
        slots[page] = slot
        touch(page)
        var evicted: [PageSlot] = []
        while order.count > capacity, let oldest = order.first {
            order.removeFirst()
            if let gone = slots.removeValue(forKey: oldest) { evicted.append(gone) }
        }
        return evicted
    }

    /// Request ids of the pages in flight.
    public var loadingRequestIDs: [Int] {
        order.compactMap { if case let .loading(id, _) = slots[$0] { return id } else { return nil } }
    }

    public mutating func touch(_ page: Int) {
        guard slots[page] != nil else { return }
        order.removeAll { $0 == page }
        order.append(page)
    }

    public mutating func removeAll() {
        slots = [:]
        order = []
    }
}
