import Testing
@testable import ShopViewModels

/// The one list type: moves clamp, n/N go round, and the selection keeps its row when rows arrive.
@Suite struct SelectableListTests {
    struct Row: Equatable, Sendable {
        var id: Int
        var text = ""
    }

    static func list(_ ids: [Int], selected: Int = 0) -> SelectableList<Row> {
        var list = SelectableList(ids.map { Row(id: $0) })
        list.select(selected)
        return list
    }

    @Test func movesAreClampedAndOnlyMovementKeysMove() {
        var list = Self.list([1, 2, 3])
        #expect(list.move(.down, page: 10) && list.selectedIndex == 1)
        #expect(list.move(.pageDown, page: 10) && list.selectedIndex == 2)
        #expect(list.move(.up, page: 10) && list.selected?.id == 2)
        #expect(!list.move(.refresh, page: 10) && list.selectedIndex == 1)
        list.select(-4)
        #expect(list.selectedIndex == 0)
        list.select(99)
        #expect(list.selectedIndex == 2)
    }

    @Test func nextAndPreviousGoRoundTheEnds() {
        var list = Self.list([1, 2, 3], selected: 2)
        list.cycle(1)
        #expect(list.selectedIndex == 0)
        list.cycle(-1)
        #expect(list.selectedIndex == 2)
        var empty = Self.list([])
        empty.cycle(1)
        #expect(empty.selectedIndex == 0 && empty.selected == nil)
    }

    @Test func theSelectionFollowsItsRowByIdentity() {
        var list = Self.list([1, 2, 3], selected: 1)
        list.replace(with: [Row(id: 9), Row(id: 3), Row(id: 1), Row(id: 2)]) { $0.id }
        #expect(list.selected?.id == 2 && list.selectedIndex == 3)
        // Gone: the selection keeps its place, clamped to the rows left.
        list.replace(with: [Row(id: 9), Row(id: 3)]) { $0.id }
        #expect(list.selectedIndex == 1 && list.selected?.id == 3)
    }

    @Test func aSelectedTopRowStaysOnTopWhenNewerRowsArrive() {
        var list = Self.list([1, 2])
        list.replace(with: [Row(id: 3), Row(id: 1), Row(id: 2)], topStays: true) { $0.id }
        #expect(list.selected?.id == 3)
        list.select(1)
        list.replace(with: [Row(id: 4), Row(id: 3), Row(id: 1), Row(id: 2)], topStays: true) { $0.id }
        #expect(list.selected?.id == 1)
        // Without `topStays`, the top row is followed like any other.
        var packs = Self.list([1, 2])
        packs.replace(with: [Row(id: 0), Row(id: 1)]) { $0.id }
        #expect(packs.selected?.id == 1)
    }

    @Test func aPositionMapMovesTheSelectionAndIsClamped() {
        var list = Self.list([1, 2, 3], selected: 1)
        list.replace(with: [Row(id: 7), Row(id: 8), Row(id: 1), Row(id: 2)], topStays: true) { $0 + 2 }
        #expect(list.selectedIndex == 3 && list.selected?.id == 2)
        list.replace(with: [Row(id: 7)], topStays: true) { $0 + 5 }
        #expect(list.selectedIndex == 0)
        var same = Self.list([1, 2], selected: 1)
        same.update(at: 1, Row(id: 2, text: "answered"))
        #expect(same.selectedIndex == 1 && same.selected?.text == "answered")
    }
}
