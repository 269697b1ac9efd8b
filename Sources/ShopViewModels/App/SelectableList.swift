/// The rows of a list and the one selected: the packs, the requests, the checks, the Live timeline
/// and the diff. Moving the selection, and keeping it on its row when rows arrive or go, is written
/// here once; the update alone changes it.
public struct SelectableList<Row: Equatable & Sendable>: Equatable, Sendable {
    public private(set) var rows: [Row]
    /// Always a row's index (0 when there is none).
    public internal(set) var selectedIndex = 0

    public init(_ rows: [Row] = []) { self.rows = rows }

    public var selected: Row? { rows.indices.contains(selectedIndex) ? rows[selectedIndex] : nil }
    public var count: Int { rows.count }
    public var isEmpty: Bool { rows.isEmpty }

    /// Selects the row at `index`, clamped to the rows.
    mutating func select(_ index: Int) { selectedIndex = ShopUpdate.clamp(index, count: rows.count) }

    /// Moves the selection by a movement key (`j`, `k`, PgDn, `g`, …); false for any other key.
    mutating func move(_ action: Action, page: Int) -> Bool {
        guard let index = ShopUpdate.moved(selectedIndex, by: action, count: rows.count, page: page) else { return false }
        selectedIndex = index
        return true
    }

    /// The next (`step` 1) or previous (−1) row, round the ends.
    mutating func cycle(_ step: Int) {
        selectedIndex = rows.isEmpty ? 0 : ((selectedIndex + step) % rows.count + rows.count) % rows.count
    }

    /// New rows. The selected row moves with its identity (`id`) when it is among them; else the
    /// selection keeps its place (clamped). With `topStays`, a selected top row stays selected: the
    /// newest row of a list that grows at the top.
    mutating func replace<ID: Equatable>(with new: [Row], topStays: Bool = false, id: (Row) -> ID?) {
        let key = selected.flatMap(id)
        replace(with: new, topStays: topStays) { _ in key.flatMap { key in new.firstIndex { id($0) == key } } }
    }

    /// New rows, the selected one now at `position(selectedIndex)` (nil: where it was), clamped.
    mutating func replace(with new: [Row], topStays: Bool = false, position: (Int) -> Int?) {
        let old = selectedIndex
        let wasTop = old == 0 || !rows.indices.contains(old)
        rows = new
        select(topStays && wasTop ? 0 : position(old) ?? old)
    }

    /// The row at `index` replaced by a newer state of itself (the selection stays).
    mutating func update(at index: Int, _ row: Row) { rows[index] = row }
}
