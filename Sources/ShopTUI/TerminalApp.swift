import Dispatch
import Foundation
import ShopViewModels

/// The interactive app: one loop on the main actor. Input (a stdin read source), resizes (SIGWINCH),
/// signals and a one-shot timer become messages into the store's one update function (keys through
/// the keymap); every state change re-renders (coalesced to one frame per main-queue turn), and the
/// `Terminal` diffs the frame against the one shown, so the backend writes only the cells that changed. Network work never runs here — the store runs it as
/// tasks — so keys are handled while requests are in flight. The timer runs only while something on
/// screen moves: 120 ms while a spinner turns, else until the next change of a "cached N min ago".
@MainActor
public final class TerminalApp {
    /// How redraws follow state changes: coalesced per main-queue turn (the terminal), or at once (tests).
    public enum Scheduling: Sendable { case coalesced, immediate }

    private let store: AppStore
    private let keymap: Keymap
    private let backend: any TerminalBackend
    /// The backend with the frame it shows: draws run through it.
    private let terminal: Terminal
    private let scheduling: Scheduling
    private let clock: @MainActor () -> Date
    private var tick = 0
    private var renderScheduled = false
    private var emptyWakeups = 0
    private var pumping = false
    private var pendingRender = false
    private var sources: [any DispatchSourceProtocol] = []
    private var timer: (any DispatchSourceTimer)?
    private var finished: CheckedContinuation<Int32, Never>?
    /// Set when the app has decided to end (0, or 128 + the signal).
    public private(set) var exitStatus: Int32?
    /// Where the last frame put its tabs and rows (mouse clicks are resolved against it).
    private var layout = Layout()
    /// The last frame drawn (a bug report quotes it as text).
    private var lastGrid: Grid?
    /// This session's laid-out history lines, kept between frames.
    private let layouts = HistoryLayoutCache()
    /// When the timer should fire next (nil: nothing on screen moves; no wake-ups).
    public private(set) var nextWake: Duration?

    public init(store: AppStore, keymap: Keymap = .standard, backend: any TerminalBackend = CursesTerminal(),
                scheduling: Scheduling = .coalesced, clock: @escaping @MainActor () -> Date = { Date() }) {
        self.store = store
        self.keymap = keymap
        self.backend = backend
        self.terminal = Terminal(backend)
        self.scheduling = scheduling
        self.clock = clock
    }

    /// Takes the terminal and draws the first frame at once, from `cached` (read before the terminal
    /// was taken: nothing on this path waits for the network, a thread pool or a poll loop); then the
    /// loads start.
    public func start(cached: CachedShop? = nil) {
        terminal.start()
        store.onChange = { [weak self] _ in self?.scheduleRender() }
        store.onFrontEnd = { [weak self] effect in self?.carryOut(effect) }
        store.screenText = { [weak self] in self?.lastGrid?.text }
        let (width, height) = terminal.size
        // The first frame first: the requests start once it is drawn, not while it is drawn.
        store.hold()
        store.send(.resize(width: width, height: height))
        store.send(cached.map { .startWithCache($0) } ?? .start)
        StartupTrace.mark("sent")
        render()
        StartupTrace.mark("drawn")
        store.release()
    }

    /// Runs until `q`, Ctrl-C, SIGTERM or SIGHUP; the terminal is restored on every way out.
    /// Answers the exit status (0, or 128 + the signal).
    public func run(cached: CachedShop? = nil) async -> Int32 {
        // The signal sources first: a hang-up while the first frame is drawn (a pane closed at once)
        // must not be lost between SIG_IGN and its source.
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGWINCH] { signal(sig, SIG_IGN) }
        installSignalSources()
        start(cached: cached)
        store.observeExchanges()
        installInputAndTimer()
        resized()  // a resize between initscr and the SIGWINCH source would otherwise be missed
        let status = await withCheckedContinuation { continuation in
            if let exitStatus {
                continuation.resume(returning: exitStatus)
            } else {
                finished = continuation
            }
        }
        sources.forEach { $0.cancel() }
        timer?.cancel()
        stop()
        return status
    }

    /// Lets go of the store and the terminal.
    public func stop() {
        store.onChange = nil
        store.onFrontEnd = nil
        store.screenText = nil
        store.stop()
        terminal.stop()
    }

    private func finish(_ status: Int32) {
        guard exitStatus == nil else { return }
        exitStatus = status
        terminal.stop()  // at once: the terminal is back even if something below hangs
        finished?.resume(returning: status)
        finished = nil
    }

    private func installSignalSources() {
        let signals: [(Int32, Bool)] = [(SIGWINCH, false), (SIGINT, true), (SIGTERM, true), (SIGHUP, true)]
        for (sig, ends) in signals {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            source.setEventHandler { @Sendable in
                MainActor.assumeIsolated {
                    if ends { self.store.send(.signal(sig)) } else { self.resized() }
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    private func installInputAndTimer() {
        let input = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: .main)
        input.setEventHandler { @Sendable in MainActor.assumeIsolated { self.pump() } }
        input.resume()
        sources.append(input)
        if backend.hasPendingInput { pump() }
        armTimer()
    }

    private func resized() {
        let before = terminal.size
        terminal.resize()
        let (width, height) = terminal.size
        // Told of a resize that changed nothing (a KEY_RESIZE curses queued itself): no new frame.
        guard (width, height) != before || (width, height) != (store.state.screen.width, store.state.screen.height) else { return }
        store.send(.resize(width: width, height: height))
        render()
    }

    /// Handles every input waiting in the backend.
    public func pump() {
        // Keys are answered with a frame in the same turn (no hop through the main queue).
        pumping = true
        defer {
            pumping = false
            if pendingRender { render() }
        }
        let inputs = backend.readInput()
        // Woken with nothing to read, again and again: the terminal may be gone (a closed pane whose
        // hang-up was missed). Then end as on SIGHUP instead of spinning.
        emptyWakeups = inputs.isEmpty ? emptyWakeups + 1 : 0
        if emptyWakeups > 20, !backend.isConnected { return store.send(.signal(SIGHUP)) }
        for input in inputs {
            switch input {
            case .resize: resized()
            case let .key(key):
                if let message = keymap.message(for: key, in: store.state) { store.send(message) }
            case let .mouse(x, y, button):
                for message in Self.messages(forMouse: button, x: x, y: y, layout: layout, state: store.state) { store.send(message) }
            }
            if exitStatus != nil { return }
        }
    }

    /// A click on a tab switches to it, a click on a list row selects it, the wheel scrolls the list or
    /// the full-size detail (three rows a notch). Only in the lists: a dialog or the help list keeps
    /// the mouse out.
    public static func messages(forMouse button: MouseButton, x: Int, y: Int, layout: Layout, state: AppState) -> [Message] {
        guard state.mode == .browse else { return [] }
        switch button {
        case .press:
            if let tab = layout.tab(x: x, y: y) {
                let action: Action = switch tab {
                case .shop: .shop
                case .history: .history
                case .requests: .requests
                case .checks: .checks
                case .live: .live
                case .purchases: .purchases
                case .session: .session
                }
                return [.action(action)]
            }
            if let index = layout.row(x: x, y: y) { return [.select(index)] }
            return []
        case .wheelUp: return Array(repeating: .action(.up), count: 3)
        case .wheelDown: return Array(repeating: .action(.down), count: 3)
        }
    }

    /// What only the terminal can do.
    private func carryOut(_ effect: Effect) {
        switch effect {
        case let .quit(status): finish(status)
        case let .copy(text): backend.copyToClipboard(text)
        case let .copyCurl(copy): store.send(.curlCopied(copy, backend.copyToClipboard(copy.command)))
        case let .alert(style, text): backend.alert(style, text)
        default: break
        }
    }

    /// The spinner and "cached N min ago" move with the timer; it is re-armed after every frame.
    func timerFired() {
        tick += 1
        store.send(.tick(tick))
        render()
    }

    /// Arms the one-shot timer for what is on screen, or disarms it.
    private func armTimer() {
        nextWake = Self.nextWake(store.state, now: clock())
        // When nothing moves, no timer exists at all (a far-away deadline still woke libdispatch).
        timer?.cancel()
        timer = nil
        guard let wake = nextWake, !sources.isEmpty else { return }
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.setEventHandler { @Sendable in MainActor.assumeIsolated { self.timerFired() } }
        timer.schedule(deadline: .now() + .nanoseconds(Int(wake / .nanoseconds(1))), repeating: .never)
        timer.resume()
        self.timer = timer
    }

    /// 120 ms while a spinner turns; else until the first relative age on screen changes its text; else never.
    public static func nextWake(_ state: AppState, now: Date) -> Duration? {
        if state.isBusy { return .milliseconds(120) }
        let waits = state.shownAges.map { Wording.secondsUntilAgeChanges(of: $0, now: now) }
        return waits.min().map { .milliseconds(Int(($0 * 1000).rounded(.up)) + 5) }
    }

    private func scheduleRender() {
        if scheduling == .immediate { return render() }
        if pumping {
            pendingRender = true
            return
        }
        guard !renderScheduled else { return }
        renderScheduled = true
        DispatchQueue.main.async { @Sendable in
            MainActor.assumeIsolated {
                self.renderScheduled = false
                self.render()
            }
        }
    }

    /// Draws the current state now.
    public func render() {
        pendingRender = false
        guard exitStatus == nil else { return }
        let (width, height) = terminal.size
        let frame = Frame(app: store.state, keymap: keymap, width: width, height: height, now: clock(), layouts: layouts)
        let drawn = Renderer.draw(frame)
        StartupTrace.mark("built")
        layout = drawn.layout
        lastGrid = drawn.grid
        terminal.draw(drawn.grid)
        armTimer()
    }
}
