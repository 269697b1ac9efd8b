import CNcursesw
import Foundation
import TerminalText
import ShopViewModels

/// The only code that calls curses. Main-actor isolated: curses is not thread-safe, so every call
/// happens on one actor. It writes the runs `Terminal` gives it (one curses call per stretch of one
/// style), decodes keys, and gives the terminal back on `stop()` (idempotent).
@MainActor
public final class CursesTerminal: TerminalBackend {
    private var started = false
    private let mouse: Bool
    private let themeRequest: ThemeRequest
    /// The palette in use once started (nil: no colours — NO_COLOR, or a terminal without them), the
    /// number of colours the terminal has, and how `auto` decided.
    public private(set) var theme: Theme?
    private var colorCount = 0
    public private(set) var themeSource: ThemeSource = .asked
    /// Keys typed during the probe, given back to curses and not yet read.
    public private(set) var hasPendingInput = false
    /// Drops the terminal's answers to `auto`'s question if they come after the probe gave up.
    private var lateReplies = LateReplyFilter()
    /// Each style's curses attributes, worked out once per style.
    private var attributeCache: [Style: attr_t] = [:]

    /// How the palette was chosen (the log says it).
    public enum ThemeSource: Sendable, Equatable, CustomStringConvertible {
        case asked
        /// `auto`: the terminal's answer to OSC 11, COLORFGBG, or neither (dark).
        case terminalAnswer, colorFGBG, fallback
        case noColor

        public var description: String {
            switch self {
            case .asked: "as asked"
            case .terminalAnswer: "auto: the terminal told its background"
            case .colorFGBG: "auto: the terminal did not tell; COLORFGBG did"
            case .fallback: "auto: neither the terminal nor COLORFGBG told the background; dark"
            case .noColor: "NO_COLOR"
            }
        }
    }

    /// `mouse: false` leaves the mouse to the terminal (its own text selection); `theme` picks the
    /// palette (`auto`: the terminal's background, asked once curses has the terminal in raw mode).
    public init(mouse: Bool = true, theme: ThemeRequest = .standard) {
        self.mouse = mouse
        self.themeRequest = theme
    }

    /// Initialises curses: alternate screen (initscr), no echo, raw input (Ctrl-C, Ctrl-Q, Ctrl-S and
    /// Ctrl-Z arrive as keys, so every Ctrl key can be bound), keypad, non-blocking reads,
    /// hidden cursor, 25 ms ESC delay unless ESCDELAY is set, then the palette (`auto` asks the terminal)
    /// and colours unless NO_COLOR or unsupported.
    public func start() { start(environment: ProcessInfo.processInfo.environment) }

    public func start(environment: [String: String]) {
        guard !started else { return }
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        _ = shim_set_locale()  // before initscr, or wide characters print as blanks
        initscr()
        started = true
        shim_restore_terminal_on_crash()
        raw()
        noecho()
        nonl()
        keypad(shim_stdscr(), true)
        nodelay(shim_stdscr(), true)
        curs_set(0)
        if mouse { shim_mouse(1) }
        if environment["ESCDELAY"] == nil { set_escdelay(25) }
        StartupTrace.mark("initscr")
        let chosen: Theme
        switch themeRequest {
        case let .fixed(theme):
            chosen = theme
            themeSource = noColor ? .noColor : .asked
        case let .auto(colorBlindSafe):
            // Asked in raw mode without echo, before curses reads any input: the answers are read
            // here, keys typed meanwhile are given back to curses, and an answer that comes too late
            // is dropped by the armed filter rather than read as keys.
            let answer = noColor ? nil : TerminalBackground.ask()
            if let answer {
                for byte in answer.typed.reversed() { ungetch(Int32(byte)) }
                hasPendingInput = !answer.typed.isEmpty
                if !answer.complete { lateReplies.arm() }
            }
            if noColor {
                chosen = Theme(.dark, colorBlindSafe: colorBlindSafe)
                themeSource = .noColor
            } else if let background = answer?.background {
                chosen = Theme(background, colorBlindSafe: colorBlindSafe)
                themeSource = .terminalAnswer
            } else if let background = TerminalBackground.fromColorFGBG(environment["COLORFGBG"]) {
                chosen = Theme(background, colorBlindSafe: colorBlindSafe)
                themeSource = .colorFGBG
            } else {
                chosen = Theme(.dark, colorBlindSafe: colorBlindSafe)
                themeSource = .fallback
            }
        }
        StartupTrace.mark("probed")
        theme = nil
        if !noColor, has_colors() {
            start_color()
            use_default_colors()
            colorCount = Int(shim_colors())
            // One pair per semantic colour (pair n is Color(rawValue: n - 1)), on the default background.
            for color in Color.allCases {
                let ink = chosen.ink(color)
                init_pair(Int16(color.rawValue) + 1, colorCount >= 256 ? ink.index256 : (ink.index8 ?? -1), -1)
            }
            theme = chosen
        }
        attributeCache = [:]
    }

    /// Gives the terminal back: leaves the alternate screen, shows the cursor. Safe to call twice.
    public func stop() {
        guard started else { return }
        curs_set(1)
        endwin()
        started = false
    }

    public var size: (width: Int, height: Int) { (Int(shim_cols()), Int(shim_lines())) }

    /// Takes the new size from the tty after SIGWINCH — only when it did change (`Terminal` then
    /// forgets the frame shown and clears). `resizeterm` queues a KEY_RESIZE for the application;
    /// answering that one with another `resizeterm` queued the next, so every key used to come after
    /// a resize and a repaint of the whole screen into curses.
    public func resize() {
        var ws = winsize()
        let ok = withUnsafeMutablePointer(to: &ws) { ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), $0) } == 0
        guard ok, ws.ws_row > 0, ws.ws_col > 0 else { return }
        guard Int32(ws.ws_row) != shim_lines() || Int32(ws.ws_col) != shim_cols() else { return }
        resizeterm(Int32(ws.ws_row), Int32(ws.ws_col))
    }

    /// Blanks curses' screen: the next `doupdate` clears the terminal.
    public func clear() {
        guard started else { return }
        erase()
    }

    /// Writes the cells of `runs` from `grid`, then shows them.
    public func write(_ runs: [Run], of grid: Grid) {
        guard started else { return }
        var wide: [UInt32] = []
        for run in runs {
            var x = run.x
            let end = run.x + run.count
            while x < end {
                // One curses call per stretch of one style.
                let style = grid[x, run.y].style
                let start = x
                wide.removeAll(keepingCapacity: true)
                while x < end, grid[x, run.y].style == style || grid[x, run.y].width == 0 {
                    grid.appendScalars(at: run.y * grid.width + x, to: &wide)
                    x += 1
                }
                wide.append(0)
                wide.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: wchar_t.self) { text in
                        shim_put(Int32(run.y), Int32(start), text.baseAddress, attributes(style))
                    }
                }
            }
        }
        StartupTrace.mark("put")
        wnoutrefresh(shim_stdscr())
        doupdate()
    }

    private func attributes(_ style: Style) -> attr_t {
        if let known = attributeCache[style] { return known }
        let look = theme?.look(style, colors: colorCount) ?? Theme.monochrome(style)
        var a = shim_a_normal()
        if look.bold { a |= shim_a_bold() }
        if look.reverse { a |= shim_a_reverse() }
        if look.underline { a |= shim_a_underline() }
        if look.dim { a |= shim_a_dim() }
        if look.ink != nil, let color = style.foreground { a |= shim_color_pair(Int16(color.rawValue) + 1) }
        attributeCache[style] = a
        return a
    }

    /// Every key waiting, decoded; never blocks.
    public func readInput() -> [TerminalInput] {
        var keys: [TerminalInput] = []
        var code: Int32 = 0
        var read: [RawKey] = []
        hasPendingInput = false
        while true {
            let kind = shim_read_key(&code)
            if kind == 0 { break }
            read.append(RawKey(kind: kind, code: code))
        }
        for key in lateReplies.filter(read) {
            let (kind, code) = (key.kind, key.code)
            if kind == 2, code == KEY_RESIZE {
                keys.append(.resize)
            } else if kind == 2, code == KEY_MOUSE {
                var x: Int32 = 0, y: Int32 = 0
                switch shim_read_mouse(&x, &y) {
                case 1: keys.append(.mouse(x: Int(x), y: Int(y), .press))
                case 2: keys.append(.mouse(x: Int(x), y: Int(y), .wheelUp))
                case 3: keys.append(.mouse(x: Int(x), y: Int(y), .wheelDown))
                default: break
                }
            } else if let key = kind == 2 ? Self.functionKey(code) : Self.character(code) {
                keys.append(.key(key))
            }
        }
        return keys
    }

    static func functionKey(_ code: Int32) -> KeyPress? {
        switch code {
        case KEY_UP: return .up
        case KEY_DOWN: return .down
        case KEY_LEFT: return .left
        case KEY_RIGHT: return .right
        case KEY_HOME: return .home
        case KEY_END: return .end
        case KEY_NPAGE: return .pageDown
        case KEY_PPAGE: return .pageUp
        case KEY_ENTER: return .enter
        case KEY_BTAB: return .backTab
        case KEY_BACKSPACE: return .backspace
        case KEY_DC: return .delete
        case (KEY_F0 + 1)...(KEY_F0 + 12): return .function(Int(code - KEY_F0))
        default: return nil
        }
    }

    static func character(_ code: Int32) -> KeyPress? {
        switch code {
        case 27: return .escape
        case 9: return .tab
        case 10, 13: return .enter
        case 8, 127: return .backspace
        case 1...26: return .ctrl(Character(Unicode.Scalar(UInt8(96 + code))))
        default:
            guard code >= 32, let scalar = Unicode.Scalar(UInt32(code)) else { return nil }
            return .char(Character(scalar))
        }
    }

    /// False once the terminal hung up (its settings can no longer be read).
    public var isConnected: Bool {
        var settings = termios()
        return tcgetattr(STDIN_FILENO, &settings) == 0
    }

    /// Puts `text` on the clipboard with OSC 52 (terminals and tmux that allow it), after the frame;
    /// inside tmux also into tmux's paste buffer (`tmux load-buffer`), which takes it whatever tmux's
    /// `set-clipboard` says. Answers where it is known to have gone.
    @discardableResult
    public func copyToClipboard(_ text: String) -> ClipboardReach {
        let payload = Data(text.utf8).base64EncodedString()
        FileHandle.standardOutput.write(Data("\u{1B}]52;c;\(payload)\u{07}".utf8))
        let environment = ProcessInfo.processInfo.environment
        if Clipboard.loadTmuxBuffer(text, environment: environment) { return .tmuxBuffer }
        return Clipboard.osc52Known(environment) ? .terminal : .unconfirmed
    }

    /// BEL, or OSC 9 with the text: no control character, escape or bidi control of the server's
    /// reaches the terminal inside it.
    public func alert(_ style: AlertStyle, _ text: String) {
        FileHandle.standardOutput.write(Data(Self.alertBytes(style, text).utf8))
    }

    public nonisolated static func alertBytes(_ style: AlertStyle, _ text: String) -> String {
        switch style {
        case .bell: return "\u{07}"
        case .osc9: return "\u{1B}]9;" + Columns.truncate(Sanitizer.line(text), to: 200) + "\u{07}"
        }
    }
}
