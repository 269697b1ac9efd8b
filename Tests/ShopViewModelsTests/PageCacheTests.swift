import Foundation
import ShopAPI
import Testing
@testable import ShopViewModels

/// The page cache: bounded, and the amounts it notes are those of the pages it still holds.
@Suite struct PageCacheTests {
    static func slot(_ page: Int, amounts: [Int], loading: Token? = nil) -> PageSlot {
        let items = amounts.enumerated().map { i, amount in
            HistoryItem.entry(CheerHistoryEntry(id: "p\(page)-\(i)", creator: "c", amount: amount, product: "p", date: t0, comments: []))
        }
        let known = Known(CheerHistoryPage(items: items, page: page, perPage: 50, totalPages: 9, totalCount: 450), at: t0, source: .live)
        return loading.map { .loading($0, shown: known) } ?? .loaded(known)
    }

    @Test func theAmountsHeldFollowThePagesHeld() {
        var cache = PageCache(capacity: 2)
        #expect(cache.heldAmounts == .init(low: 0, high: 0))
        cache.set(1, Self.slot(1, amounts: [5, 120_000]))
        cache.set(2, Self.slot(2, amounts: [-3, 7]))
        #expect(cache.heldAmounts == .init(low: -3, high: 120_000))
        // Page 1 is evicted by page 3: its wide amount no longer widens the column.
        cache.set(3, Self.slot(3, amounts: [9]), current: 3)
        #expect(cache.residentPages == [2, 3] && cache.heldAmounts == .init(low: -3, high: 9))
        // A page answered again with other amounts replaces its own.
        cache.set(2, Self.slot(2, amounts: [40]))
        #expect(cache.heldAmounts == .init(low: 0, high: 40))
        cache.remove(2)
        #expect(cache.heldAmounts == .init(low: 0, high: 9))
        cache.removeAll()
        #expect(cache.heldAmounts == .init(low: 0, high: 0))
    }

    @Test func anEvictedLoadingPageGivesBackItsTokenToCancel() {
        var cache = PageCache(capacity: 2)
        cache.set(1, Self.slot(1, amounts: [1], loading: Token(7)))
        cache.set(2, Self.slot(2, amounts: [1]))
        #expect(cache.page(loading: Token(7)) == 1)
        let orphaned = cache.set(3, Self.slot(3, amounts: [1]), current: 3)
        #expect(orphaned == [Token(7)] && cache.page(loading: Token(7)) == nil)
    }
}
