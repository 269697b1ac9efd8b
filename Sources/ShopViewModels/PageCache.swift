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
        if isNew || page == current { touch(page) }
        var orphaned: [Token] = []
        while order.count > capacity, let victim = order.first(where: { $0 != current }) {
            order.removeAll { $0 == victim }
            if let token = slots[victim]?.token { orphaned.append(token) }
            slots[victim] = nil
        }
        return orphaned
    }

    /// The page whose request is `token`.
    public func page(loading token: Token) -> Int? {
        slots.first { $0.value.token == token }?.key
    }

    public mutating func remove(_ page: Int) {
        slots[page] = nil
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
    }
}
