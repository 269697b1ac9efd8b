import Dispatch
import Foundation
import ShopViewModels

/// The interactive app: one loop on the main actor. Keys (a stdin read source), resizes (SIGWINCH),
/// signals and a slow timer become messages into the store's one update function (keys through the
/// keymap); every state change re-renders (coalesced to one frame per main-queue turn). Network work
/// never runs here — the store runs it as tasks — so keys are handled while requests are in flight.
@MainActor
public final class TerminalApp {
    private let store: AppStore
    private let keymap: Keymap
    private let terminal = CursesTerminal()
    private var tick = 0
    private var renderScheduled = false
    private var sources: [any DispatchSourceProtocol] = []
    private var finished: CheckedContinuation<Int32, Never>?
    private var exitStatus: Int32?

    public init(store: AppStore, keymap: Keymap = .standard) {
        self.store = store
        self.keymap = keymap
    }

    /// Runs until `q`, Ctrl-C, SIGTERM or SIGHUP; the terminal is restored on every way out.
    /// Answers the exit status (0, or 128 + the signal).
    public func run() async -> Int32 {
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGWINCH] { signal(sig, SIG_IGN) }
        terminal.start()
        store.onChange = { [weak self] _ in self?.scheduleRender() }
        store.onFrontEnd = { [weak self] effect in self?.carryOut(effect) }
        store.observeExchanges()
        let (width, height) = terminal.size
        store.send(.resize(width: width, height: height))
        store.send(.start)
        // The first frame shows the cached balance: wait (at most 200 ms) for the cache to be read.
        for _ in 0..<40 where !store.cacheRead { try? await Task.sleep(for: .milliseconds(5)) }
        render()
        installSources()
        resized()  // a resize between initscr and the SIGWINCH source would otherwise be missed
        let status = await withCheckedContinuation { continuation in
            if let exitStatus {
                continuation.resume(returning: exitStatus)
            } else {
                finished = continuation
            }
        }
        sources.forEach { $0.cancel() }
        store.onChange = nil
        store.onFrontEnd = nil
        store.stop()
        terminal.stop()
        return status
    }

    private func finish(_ status: Int32) {
        guard exitStatus == nil else { return }
        exitStatus = status
        terminal.stop()  // at once: the terminal is back even if something below hangs
        finished?.resume(returning: status)
        finished = nil
    }

    private func installSources() {
        let input = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: .main)
        input.setEventHandler { @Sendable in MainActor.assumeIsolated { self.readInput() } }
        input.resume()
        sources.append(input)
        let signals: [(Int32, Int32?)] = [(SIGWINCH, nil), (SIGINT, 0), (SIGTERM, 128 + SIGTERM), (SIGHUP, 128 + SIGHUP)]
        for (sig, status) in signals {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
            source.setEventHandler { @Sendable in
                MainActor.assumeIsolated {
                    if status != nil { self.store.send(.signal(sig)) } else { self.resized() }
                }
            }
            source.resume()
            sources.append(source)
        }
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + .milliseconds(120), repeating: .milliseconds(120))
        timer.setEventHandler { @Sendable in MainActor.assumeIsolated { self.timerFired() } }
        timer.resume()
        sources.append(timer)
    }

    private func resized() {
        terminal.resize()
        let (width, height) = terminal.size
        store.send(.resize(width: width, height: height))
        render()
    }

    private func readInput() {
        for input in terminal.readKeys() {
            switch input {
            case .resize: resized()
            case let .key(key):
                if let message = keymap.message(for: key, in: store.state) { store.send(message) }
            }
            if exitStatus != nil { return }
        }
    }

    /// What only the terminal can do.
    private func carryOut(_ effect: Effect) {
        switch effect {
        case let .quit(status): finish(status)
        case let .copy(text): terminal.copyToClipboard(text)
        default: break
        }
    }

    /// The spinner and "cached N min ago" move with the ticks (the update decides when a tick changes the screen).
    private func timerFired() {
        tick += 1
        store.send(.tick(tick))
    }

    private func scheduleRender() {
        guard !renderScheduled else { return }
        renderScheduled = true
        DispatchQueue.main.async { @Sendable in
            MainActor.assumeIsolated {
                self.renderScheduled = false
                self.render()
            }
        }
    }

    private func render() {
        guard exitStatus == nil else { return }
        let (width, height) = terminal.size
        let frame = Frame(app: store.state, keymap: keymap, width: width, height: height, now: Date())
        terminal.draw(Renderer.render(frame))
        // A scroll past the end of the request detail comes back to it (so k scrolls at once after G).
        if let limit = Renderer.detailMaxScroll(frame), store.state.screen.detailScroll > limit { store.send(.detailMaxScroll(limit)) }
    }
}
