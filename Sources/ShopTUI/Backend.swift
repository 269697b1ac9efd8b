import ShopViewModels

/// What a front end needs from a terminal (ratatui's `Backend`): its size, the runs of a frame
/// written, input, and the clipboard. `Terminal` holds the frame shown and works out the runs; a
/// backend only writes them. `CursesTerminal` is the real one; `TestBackend` keeps everything in
/// memory, so the whole loop runs in tests without a terminal.
@MainActor
public protocol TerminalBackend: AnyObject {
    var size: (width: Int, height: Int) { get }
    /// Takes the terminal (alternate screen, raw input).
    func start()
    /// Gives it back; safe to call twice.
    func stop()
    /// Re-reads the size after SIGWINCH.
    func resize()
    /// Blanks the screen (after a size change): the next runs are written on an empty terminal.
    func clear()
    /// Writes the cells of `runs` (taken from `grid`), then shows them.
    func write(_ runs: [Run], of grid: Grid)
    /// Every input waiting, decoded; never blocks.
    func readInput() -> [TerminalInput]
    /// Puts `text` on the clipboard as far as it can (OSC 52; inside tmux, tmux's paste buffer too)
    /// and answers where it is known to have gone.
    @discardableResult
    func copyToClipboard(_ text: String) -> ClipboardReach
    /// Rings the bell, or sends an OSC 9 notification (`text` made safe first).
    func alert(_ style: AlertStyle, _ text: String)
    /// Whether the terminal is still there (false once it hung up).
    var isConnected: Bool { get }
    /// Keys already read from the terminal and waiting in the backend (typed while `start` asked the
    /// terminal a question): no readable descriptor will announce them, so the loop reads them once.
    var hasPendingInput: Bool { get }
}

extension TerminalBackend {
    public var hasPendingInput: Bool { false }
}

/// A terminal in memory: what was drawn, how many cells each frame wrote, what was copied; input is
/// queued by the test. Like a real terminal it keeps what it was sent: each frame changes only the
/// cells of the runs `Terminal` gave it, so `text` is what a person would see, and a diff that
/// missed a change shows as a wrong screen.
@MainActor
public final class TestBackend: TerminalBackend {
    public private(set) var width: Int
    public private(set) var height: Int
    /// The last frame written (its runs only reached `text`).
    public private(set) var screen: Grid?
    /// Frames drawn, and the cells each one wrote (its runs).
    public private(set) var frames = 0
    public private(set) var cellsWritten: [Int] = []
    public private(set) var clipboard: [String] = []
    public private(set) var started = false
    private var input: [TerminalInput] = []
    /// The terminal's cells as text, written only by the runs of each frame, `shownWidth` to a row.
    private var shown: [String] = []
    private var shownWidth = 0

    public init(width: Int = 100, height: Int = 30) {
        self.width = width
        self.height = height
    }

    public var size: (width: Int, height: Int) { (width, height) }
    public func start() { started = true }
    public func stop() { started = false }
    /// The size is set by `setSize`: nothing to read.
    public func resize() {}

    public func clear() {
        shown = Array(repeating: " ", count: width * height)
        shownWidth = width
        screen = nil
    }

    public func write(_ runs: [Run], of grid: Grid) {
        // Runs of a grid of another size than the screen would land on the wrong cells: as on a
        // terminal that was never cleared for it, the screen starts blank (and shows what the runs left).
        if shownWidth != grid.width || shown.count != grid.width * grid.height {
            shown = Array(repeating: " ", count: grid.width * grid.height)
            shownWidth = grid.width
        }
        for run in runs {
            for x in run.x..<(run.x + run.count) { shown[run.y * grid.width + x] = grid.text(at: x, run.y) }
        }
        cellsWritten.append(runs.reduce(0) { $0 + $1.count })
        screen = grid
        frames += 1
    }

    public func readInput() -> [TerminalInput] {
        defer { input = [] }
        return input
    }

    /// What `copyToClipboard` answers (a test sets the terminal it plays).
    public var clipboardReach = ClipboardReach.unconfirmed
    @discardableResult
    public func copyToClipboard(_ text: String) -> ClipboardReach {
        clipboard.append(text)
        return clipboardReach
    }
    public private(set) var alerts: [(AlertStyle, String)] = []
    public func alert(_ style: AlertStyle, _ text: String) { alerts.append((style, text)) }
    public var isConnected: Bool { true }

    /// Queues key presses (read by the next `readInput`).
    public func press(_ keys: KeyPress...) { input += keys.map(TerminalInput.key) }

    /// Queues a mouse event at (x, y).
    public func mouse(_ button: MouseButton, x: Int, y: Int) { input.append(.mouse(x: x, y: y, button)) }

    /// Changes the size, as a terminal window would (followed by a SIGWINCH).
    public func setSize(width: Int, height: Int) {
        self.width = width
        self.height = height
        input.append(.resize)
    }

    /// The screen as text, as the terminal shows it (empty before the first frame): rows joined by
    /// newlines, trailing spaces trimmed, as `Grid.text`.
    public var text: String {
        guard let screen else { return "" }
        return (0..<screen.height).map { y in
            var line = shown[(y * screen.width)..<((y + 1) * screen.width)].joined()
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}
