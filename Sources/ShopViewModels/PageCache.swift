import Foundation
import ShopAPI

/// A page's earlier content, shown while it reloads.
public struct StalePage: Equatable, Sendable {
    public var page: CheerHistoryPage
    public var fetchedAt: Date
    public var source: DataSource
}

/// One resident history page.
public enum PageSlot: Equatable, Sendable {
    /// In flight; `stale` is what to show meanwhile (the cached first page, or the page before a refresh).
    case loading(token: Token, stale: StalePage?)
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

    /// At least 2: the page on screen and the one fetched ahead.
    public init(capacity: Int) { self.capacity = max(2, capacity) }

    public var residentCount: Int { slots.count }
    public var residentPages: [Int] { order }

    public subscript(page: Int) -> PageSlot? { slots[page] }

    /// Stores `slot`. A new page, or the page on screen (`current`), becomes the most recently used;
    /// an answer for another resident page replaces it in place. Evicts the least recently used pages
    /// beyond capacity — never `current` — and answers the evicted slots.
    @discardableResult
    public mutating func set(_ page: Int, _ slot: PageSlot, current: Int? = nil) -> [PageSlot] {
        let isNew = slots[page] == nil
        slots[page] = slot
        if isNew || page == current { touch(page) }
        var evicted: [PageSlot] = []
        while order.count > capacity, let victim = order.first(where: { $0 != current }) {
            order.removeAll { $0 == victim }
            if let gone = slots.removeValue(forKey: victim) { evicted.append(gone) }
        }
        return evicted
    }

    public mutating func remove(_ page: Int) {
        slots[page] = nil
        order.removeAll { $0 == page }
    }

    /// Tokens of the pages in flight.
    public var loadingTokens: [Token] {
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
