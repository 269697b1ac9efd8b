/// The terminal a front end draws on (ratatui's `Terminal`): it holds the frame shown last and runs
/// each new frame's diff against it, so a backend only writes the runs it is given. A size change
/// forgets the frame shown and clears the screen: the next frame is written whole.
@MainActor
public final class Terminal {
    public let backend: any TerminalBackend
    /// The frame the terminal shows (nil: none yet, or forgotten after a size change).
    private var previous: Grid?
    /// Cells written by the last `draw` (its runs).
    public private(set) var cellsWritten = 0

    public init(_ backend: any TerminalBackend) {
        self.backend = backend
    }

    public var size: (width: Int, height: Int) { backend.size }

    /// Takes the terminal; nothing is taken to be on screen yet.
    public func start() {
        backend.start()
        previous = nil
    }

    public func stop() { backend.stop() }

    /// After SIGWINCH: the backend re-reads the size; if it is another than the frame shown, that
    /// frame is forgotten and the screen cleared.
    public func resize() {
        backend.resize()
        if let previous, (previous.width, previous.height) != backend.size { forget() }
    }

    /// Shows `grid`: the backend writes only the runs of cells that differ from the frame shown (all of
    /// them on a cleared screen).
    public func draw(_ grid: Grid) {
        if previous?.width != grid.width || previous?.height != grid.height { forget() }
        let runs = grid.diff(from: previous)
        backend.write(runs, of: grid)
        cellsWritten = runs.reduce(0) { $0 + $1.count }
        previous = grid
    }

    private func forget() {
        previous = nil
        backend.clear()
    }
}
