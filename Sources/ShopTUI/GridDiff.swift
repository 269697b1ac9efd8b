import Foundation

extension Grid {
    /// The cells that differ from `previous`, as runs (ratatui's diff, by runs of cells): everything
    /// when the size changed. A run never starts on the right half of a wide character, nor ends on
    /// its left half. Cells compare as integers, a cluster by its number in `previous` (each grid
    /// numbers its own: the numbers are matched by text once a diff); a row whose bytes are those of
    /// the row before is skipped whole when both grids number their clusters alike.
    public func diff(from previous: Grid?) -> [Run] {
        guard let previous, previous.width == width, previous.height == height else {
            return (0..<height).map { Run(y: $0, x: 0, count: width) }
        }
        var runs: [Run] = []
        let clusterMap = ClusterMap(new: clusters, old: previous.clusters)
        cells.withUnsafeBufferPointer { new in
            previous.cells.withUnsafeBufferPointer { old in
                guard let newBase = new.baseAddress, let oldBase = old.baseAddress else { return }
                let rowBytes = width * MemoryLayout<Cell>.stride
                for y in 0..<height {
                    let row = y * width
                    // Most rows of a frame are those of the frame before, byte for byte (the same
                    // bytes are the same picture when both grids number their clusters alike).
                    if clusterMap.sameNumbering, memcmp(newBase + row, oldBase + row, rowBytes) == 0 { continue }
                    var x = 0
                    while x < width {
                        guard clusterMap.differs(new[row + x], old[row + x]) else { x += 1; continue }
                        var start = x
                        if new[row + start].width == 0, start > 0 { start -= 1 }  // include the wide character
                        var end = x + 1
                        while end < width, clusterMap.differs(new[row + end], old[row + end]) { end += 1 }
                        if new[row + end - 1].width == 2, end < width { end += 1 }
                        if let last = runs.last, last.y == y, last.x + last.count >= start {
                            runs[runs.count - 1].count = end - last.x
                        } else {
                            runs.append(Run(y: y, x: start, count: end - start))
                        }
                        x = end
                    }
                }
            }
        }
        return runs
    }
}

/// Whether a cell of one grid shows something other than a cell of another: cells compare as
/// integers, two clusters by number once each cluster of the new grid has its number in the old one
/// (nil: the old grid has no such cluster), looked up once a diff.
private struct ClusterMap {
    /// For each cluster number of the new grid, the number of the same text in the old one.
    private let oldNumber: [UInt32?]
    /// Every cluster of the new grid has its own number in the old one: equal cells are equal bytes.
    let sameNumbering: Bool

    init(new: Clusters, old: Clusters) {
        let numbers = new.strings.map { old.existingNumber(of: $0) }
        oldNumber = numbers
        sameNumbering = numbers.indices.allSatisfy { numbers[$0] == UInt32($0) }
    }

    @inline(__always)
    func differs(_ a: Cell, _ b: Cell) -> Bool {
        if a.glyph.isCluster, b.glyph.isCluster, a.width == b.width, a.style == b.style {
            return oldNumber[a.glyph.clusterNumber].map { Int($0) != b.glyph.clusterNumber } ?? true
        }
        return a != b
    }
}
