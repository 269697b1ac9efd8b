/// A key press, as a front end decodes it (plain values; no terminal library here).
public enum KeyPress: Sendable, Hashable {
    case char(Character)
    case ctrl(Character)
    case function(Int)
    case up, down, left, right, home, end, pageUp, pageDown
    case enter, escape, tab, backTab, backspace, delete

    /// Parses a key name as written in `config.toml`: `x`, `G`, `?`, `space`, `ctrl-q`, `f5`, `enter`,
    /// `esc`, `tab`, `shift-tab`, `up`, `down`, `left`, `right`, `home`, `end`, `pgup`, `pgdn`,
    /// `backspace`, `delete`. Names are case-insensitive except a single character.
    public init?(name: String) {
        if name.count == 1, let c = name.first, !c.isWhitespace, !c.isNewline, c.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) {
            self = .char(c)
            return
        }
        let n = name.lowercased()
        if let rest = n.dropPrefix("ctrl-") ?? n.dropPrefix("c-"), rest.count == 1, let c = rest.first, c.isASCII, c.isLetter,
           !Self.controlAliases.contains(c)
        {
            self = .ctrl(c)
            return
        }
        if n.hasPrefix("f"), let number = Int(n.dropFirst()), (1...12).contains(number) {
            self = .function(number)
            return
        }
        switch n {
        case "space": self = .char(" ")
        case "up": self = .up
        case "down": self = .down
        case "left": self = .left
        case "right": self = .right
        case "home": self = .home
        case "end": self = .end
        case "pgup", "pageup", "page_up", "page-up": self = .pageUp
        case "pgdn", "pagedown", "page_down", "page-down": self = .pageDown
        case "enter", "return": self = .enter
        case "esc", "escape": self = .escape
        case "tab": self = .tab
        case "shift-tab", "backtab": self = .backTab
        case "backspace": self = .backspace
        case "delete", "del": self = .delete
        default: return nil
        }
    }

    /// Ctrl-H, Ctrl-I, Ctrl-J and Ctrl-M reach a program as Backspace, Tab and Enter: not keys of their own.
    static let controlAliases: Set<Character> = ["h", "i", "j", "m"]

    /// A key that types a character into a text field (the filter, a dialog field).
    public var isText: Bool {
        if case .char = self { return true }
        return false
    }

    /// How the key is shown in the hint bar, the `?` overlay and the README.
    public var display: String {
        switch self {
        case let .char(c): return c == " " ? "Space" : String(c)
        case let .ctrl(c): return "Ctrl-\(c.uppercased())"
        case let .function(n): return "F\(n)"
        case .up: return "↑"
        case .down: return "↓"
        case .left: return "←"
        case .right: return "→"
        case .home: return "Home"
        case .end: return "End"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .enter: return "Enter"
        case .escape: return "Esc"
        case .tab: return "Tab"
        case .backTab: return "Shift-Tab"
        case .backspace: return "Backspace"
        case .delete: return "Delete"
        }
    }

    /// The name `config.toml` takes for this key.
    public var configName: String {
        switch self {
        case let .char(c): return c == " " ? "space" : String(c)
        case let .ctrl(c): return "ctrl-\(c.lowercased())"
        case let .function(n): return "f\(n)"
        case .up: return "up"
        case .down: return "down"
        case .left: return "left"
        case .right: return "right"
        case .home: return "home"
        case .end: return "end"
        case .pageUp: return "pgup"
        case .pageDown: return "pgdn"
        case .enter: return "enter"
        case .escape: return "esc"
        case .tab: return "tab"
        case .backTab: return "shift-tab"
        case .backspace: return "backspace"
        case .delete: return "delete"
        }
    }
}

extension String {
    fileprivate func dropPrefix(_ prefix: String) -> String? { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil }
}

/// Everything a key can ask for. The raw value is the name `[keys]` in `config.toml` uses.
public enum Action: String, Sendable, Hashable, CaseIterable {
    case quit, interrupt, help, back
    case nextTab = "next_tab", previousTab = "previous_tab", shop, history, requests, checks, live, purchases
    case down, up, first, last
    case pageDown = "page_down", pageUp = "page_up"
    case nextPage = "next_page", previousPage = "previous_page"
    case refresh, spend, buy, filter, sort, toggle
    case goTo = "go_to", find, nextMatch = "next_match", previousMatch = "previous_match"
    case runPrompt = "run_prompt", cancelPrompt = "cancel_prompt"
    case copyID = "copy_id", copyCurl = "copy_curl", showRequest = "show_request", bugReport = "bug_report", writeHAR = "write_har"
    case keepFilter = "keep_filter", clearFilter = "clear_filter"
    case deleteChar = "delete_char", nextField = "next_field", submit, confirm, cancel
    case sendAsTyped = "send_as_typed"
    case putAway = "put_away", dismiss
    case switchUser = "switch_user"
    case watch
    case pin
    case compare, snapshot
    /// The Requests tab's rows: both sources, the app's (through the proxy), the tool's.
    case showSource = "show_source"
    /// Put a fault into the app's traffic (the proxy's): Tab offers the common ones.
    case fault
    /// `explore`'s campaign from the TUI (asks once more; again while it runs stops it).
    case explore
    /// The Session tab, and its keys: open a session (a name typed), add a note, close it into its bundle.
    case session, sessionStart = "session_start", sessionNote = "session_note", sessionClose = "session_close"
}

/// One key binding: an action, its keys, its help, and when it is enabled. The same table resolves
/// keys, draws the hint bar and the `?` overlay, and is what the README's keys table is checked against
/// (Bubble Tea's key.Binding + help). A binding that is not enabled is in none of them.
public struct Binding: Sendable, Equatable {
    public var action: Action
    public var keys: [KeyPress]
    public var help: String
    /// The modes it applies in.
    public var modes: Set<Mode>
    /// The tabs it applies on (browse and help modes); empty means every tab.
    public var tabs: [Tab]
    /// The hint bar's label (`quit` → "q quit"); nil keeps it out of the hint bar.
    public var hint: String?
    /// How many of its keys the hint shows ("y/Enter confirm" shows two).
    public var hintKeys: Int
    /// Actions whose first keys join this hint ("j/k move").
    public var hintWith: [Action]
    /// It writes to the server: disabled in a read-only environment and while a write is out.
    public var writes: Bool

    public init(_ action: Action, _ keys: [KeyPress], _ help: String, modes: Set<Mode> = [.browse], tabs: [Tab] = [],
                hint: String? = nil, hintKeys: Int = 1, hintWith: [Action] = [], writes: Bool = false) {
        self.action = action
        self.keys = keys
        self.help = help
        self.modes = modes
        self.tabs = tabs
        self.hint = hint
        self.hintKeys = hintKeys
        self.hintWith = hintWith
        self.writes = writes
    }

    /// Whether it applies in `state` (mode, tab, read-only, a write in flight).
    public func isEnabled(in state: AppState) -> Bool {
        let mode = state.mode
        guard modes.contains(mode) else { return false }
        if (mode == .browse || mode == .help), !tabs.isEmpty, !tabs.contains(state.screen.tab) { return false }
        if writes, state.context.readOnly || state.isWriting { return false }
        return true
    }

    /// `(Shop, Requests)` or "".
    public var scope: String { tabs.isEmpty ? "" : " (" + tabs.map(\.title).joined(separator: ", ") + ")" }
}

/// A key binding changed in `config.toml` was refused.
public struct KeymapError: Error, Sendable, Equatable {
    /// The action named in the file (the `[keys]` entry's key).
    public var action: String
    public var line: Int?
    public var message: String
}

/// One `[keys]` entry: an action name, the key names it gets, and the config line it is on.
public typealias KeyOverride = (action: String, keys: [String], line: Int?)

public struct Keymap: Sendable, Equatable {
    public private(set) var bindings: [Binding]

    public init(bindings: [Binding]) { self.bindings = bindings }

    static let all = Set(Mode.allCases)

    /// The keys as shipped.
    public static let standard = Keymap(bindings: [
        Binding(.quit, [.char("q")], "quit", hint: "quit"),
        Binding(.interrupt, [.ctrl("c")], "quit from anywhere", modes: all),
        Binding(.help, [.char("?")], "help (this list); again to close", modes: [.browse, .help], hint: "help"),
        Binding(.back, [.escape], "stop a find or go-to, close the detail, clear the filter, dismiss the message"),
        Binding(.back, [.escape, .char("q")], "close this list", modes: [.help], hint: "close"),
        Binding(.nextTab, [.tab], "next tab"),
        Binding(.previousTab, [.backTab], "previous tab"),
        Binding(.shop, [.char("1")], "Shop tab", hint: "tabs", hintWith: [.history, .requests, .checks, .live, .purchases, .session]),
        Binding(.history, [.char("2")], "History tab"),
        Binding(.requests, [.char("3")], "Requests tab"),
        Binding(.checks, [.char("4")], "Checks tab: every write's verification"),
        Binding(.live, [.char("5")], "Live tab: what the watch saw, and how it reconciled"),
        Binding(.purchases, [.char("6")], "Purchases tab: the App Store's purchases beside the backend's credits"),
        Binding(.session, [.char("7")], "Session tab: the open test session, every command's"),
        Binding(.sessionStart, [.char("N")], "open a test session (its name typed)", tabs: [.session], hint: "new session"),
        Binding(.sessionNote, [.char("n")], "add a note to the open session", tabs: [.session], hint: "note"),
        Binding(.sessionClose, [.char("C")], "close the session into its bundle (HAR, report, curl, cases)", tabs: [.session], hint: "close"),
        Binding(.down, [.char("j"), .down], "move down (full-size detail: scroll)", hint: "move", hintWith: [.up]),
        Binding(.up, [.char("k"), .up], "move up (full-size detail: scroll)"),
        Binding(.first, [.char("g"), .home], "first row (History: the newest entry of all)"),
        Binding(.last, [.char("G"), .end], "last row (History: the oldest entry, never a walk)"),
        Binding(.pageDown, [.pageDown], "a screenful down"),
        Binding(.pageUp, [.pageUp], "a screenful up"),
        Binding(.nextPage, [.char("]")], "next page of the history", tabs: [.history], hint: "page", hintWith: [.previousPage]),
        Binding(.previousPage, [.char("[")], "start of this page, then the page before", tabs: [.history]),
        Binding(.goTo, [.char(":")], "go to an entry (4512), a page (p91) or a date (2026-10-01)", tabs: [.history], hint: "go to"),
        Binding(.find, [.char("/")], "find text in products, creators and comments", tabs: [.history], hint: "find"),
        Binding(.nextMatch, [.char("n")], "next match", tabs: [.history], hint: "match", hintWith: [.previousMatch]),
        Binding(.previousMatch, [.char("N")], "previous match", tabs: [.history]),
        Binding(.toggle, [.enter], "show / hide the comments; retry a page that failed", tabs: [.history], hint: "comments"),
        Binding(.toggle, [.enter], "details full size (j/k scroll) or beside the list", tabs: [.requests]),
        Binding(.toggle, [.enter], "the verified transaction and its exchanges full size, or beside the list", tabs: [.purchases], hint: "detail"),
        Binding(.filter, [.char("/")], "filter the packs", tabs: [.shop], hint: "filter"),
        Binding(.sort, [.char("o")], "sort: shop order, name, price, cheer", tabs: [.shop], hint: "sort"),
        Binding(.refresh, [.char("r")], "refresh", hint: "refresh"),
        Binding(.spend, [.char("s")], "spend cheer on the selected pack", tabs: [.shop], hint: "spend", writes: true),
        Binding(.buy, [.char("b")], "buy cheer", hint: "buy", writes: true),
        Binding(.switchUser, [.char("u")], "switch user: the environment's users (Tab) or any id", hint: "user"),
        Binding(.watch, [.char("w")], "watch this user: read every interval, reconcile each change; again pauses/resumes", hint: "watch"),
        Binding(.copyID, [.char("y")], "copy the request id (OSC 52)", tabs: [.requests], hint: "copy id"),
        Binding(.showSource, [.char("a")], "show every request, the app's only (through the proxy), or this tool's only", tabs: [.requests]),
        Binding(.fault, [.char("F")], "put a fault into the app's traffic (--proxy; Tab: common ones)"),
        Binding(.compare, [.char("D")], "compare this tab with another environment, user or snapshot (Tab completes)"),
        Binding(.snapshot, [.char("S")], "save a snapshot of what this user sees (D compares with it)"),
        Binding(.explore, [.char("X")], "explore's campaign: X again starts it, X while it runs stops it", writes: true),
        Binding(.down, [.char("j"), .down], "next difference", modes: [.diff]),
        Binding(.up, [.char("k"), .up], "previous difference", modes: [.diff]),
        Binding(.nextMatch, [.char("n")], "next difference", modes: [.diff], hint: "next", hintWith: [.previousMatch]),
        Binding(.previousMatch, [.char("N")], "previous difference", modes: [.diff]),
        Binding(.back, [.escape, .char("q")], "close the diff, back to the tab", modes: [.diff], hint: "back"),
        Binding(.pin, [.char("P")], "pin this answer: later answers to the request are compared with it (again unpins)", tabs: [.requests], hint: "pin"),
        Binding(.copyCurl, [.char("c")], "copy the request as curl (the selected one, or the one behind the error)", hint: "curl"),
        Binding(.showRequest, [.char("!")], "show the request behind the error (or the selected check)"),
        Binding(.bugReport, [.char("R")], "bug report on the write shown, the selected request or check, or the last error",
                modes: [.browse, .outcome, .sending], hint: "report"),
        Binding(.writeHAR, [.char("e")], "save the session's requests as a HAR file"),
        // Typing a filter.
        Binding(.keepFilter, [.enter], "keep the filter", modes: [.filter], hint: "keep"),
        Binding(.clearFilter, [.escape], "clear the filter", modes: [.filter], hint: "clear"),
        Binding(.down, [.down], "move down", modes: [.filter]),
        Binding(.up, [.up], "move up", modes: [.filter]),
        Binding(.deleteChar, [.backspace, .delete], "delete the last character", modes: [.filter, .form, .prompt]),
        // The go-to and find prompt.
        Binding(.runPrompt, [.enter], "go / find", modes: [.prompt], hint: "go"),
        Binding(.cancelPrompt, [.escape], "cancel", modes: [.prompt], hint: "cancel"),
        Binding(.nextField, [.tab], "the next of the environment's users, or what to compare with", modes: [.prompt]),
        // The spend and buy dialog.
        Binding(.submit, [.enter], "check the form and ask to confirm", modes: [.form], hint: "continue"),
        Binding(.nextField, [.tab, .backTab, .down, .up], "the other field", modes: [.form], hint: "next field"),
        Binding(.cancel, [.escape], "cancel", modes: [.form], hint: "cancel"),
        // A negative test: refused (with a notice) in a read-only environment.
        Binding(.sendAsTyped, [.ctrl("u")], "send as typed: the client's input checks off for this one write (never read-only)",
                modes: [.form], hint: "send as typed"),
        Binding(.confirm, [.char("y"), .enter], "send it", modes: [.confirm], hint: "confirm", hintKeys: 2),
        Binding(.cancel, [.char("n"), .escape], "cancel", modes: [.confirm], hint: "cancel", hintKeys: 2),
        Binding(.putAway, [.escape], "put the dialog away (the answer shows below)", modes: [.sending], hint: "put away (the answer shows below)"),
        Binding(.dismiss, [.enter, .escape, .char("q")], "close the dialog", modes: [.outcome], hint: "close", hintKeys: 2),
    ])

    /// What `key` does in `state`: an action of an enabled binding, else typed text in a text field, else nothing.
    public func message(for key: KeyPress, in state: AppState) -> Message? {
        if let binding = bindings.first(where: { $0.keys.contains(key) && $0.isEnabled(in: state) }) {
            return .action(binding.action)
        }
        if [.filter, .form, .prompt].contains(state.mode), case let .char(c) = key, !c.isNewline {
            return .text(c)
        }
        return nil
    }

    /// The bindings enabled in `state`, in table order.
    public func enabled(in state: AppState) -> [Binding] { bindings.filter { $0.isEnabled(in: state) } }

    /// The hint bar for `state`: `q quit`, `? help`, the tab's own keys, then the others.
    public func hints(for state: AppState) -> [String] {
        let enabled = enabled(in: state)  // once a frame, not once a key named
        let live = enabled.filter { $0.hint != nil }
        func first(_ action: Action) -> KeyPress? { live.first { $0.action == action }?.keys.first ?? enabled.first { $0.action == action }?.keys.first }
        func text(_ b: Binding) -> String {
            var keys = b.keys.prefix(b.hintKeys).map(\.display)
            keys += b.hintWith.compactMap { first($0)?.display }
            // Three or more keys in a row (1 2 3 4 5) as a range: `1-5 tabs`.
            let digits = keys.compactMap { $0.count == 1 ? Int($0) : nil }
            if keys.count >= 3, digits.count == keys.count, zip(digits, digits.dropFirst()).allSatisfy({ $1 == $0 + 1 }), let low = keys.first, let high = keys.last {
                return "\(low)-\(high) " + (b.hint ?? "")
            }
            return keys.joined(separator: "/") + " " + (b.hint ?? "")
        }
        let top = live.filter { [.quit, .help].contains($0.action) }
        let own = live.filter { !$0.tabs.isEmpty && !top.contains($0) }
        let rest = live.filter { $0.tabs.isEmpty && !top.contains($0) }
        var out = (top + own + rest).map(text)
        switch state.mode {
        case .filter: out.insert("type to filter", at: 0)
        case .sending: out.insert("sending…", at: 0)
        default: break
        }
        if state.mode == .sending, let quit = first(.interrupt) { out.append("\(quit.display) quit") }
        return out
    }

    /// The `?` overlay: what can be done from the lists, given read-only and a write in flight.
    public func helpRows(for state: AppState) -> [Binding] {
        bindings.filter { b in
            // The keys of this tab and of every tab (the list fits a 40-row terminal in one column).
            guard b.modes.contains(.browse), b.tabs.isEmpty || b.tabs.contains(state.screen.tab) else { return false }
            if b.writes, state.context.readOnly || state.isWriting { return false }
            return true
        }
    }

    /// This keymap with `overrides` applied: each names an action whose bindings get the listed keys.
    /// In the filter and the form a character is text, so there a binding takes only the override's
    /// other keys (and keeps its own when none is left). Refuses an unknown action, an unknown key
    /// name, and a key that two actions would share in the same context.
    public func rebound(with overrides: [KeyOverride]) throws(KeymapError) -> Keymap {
        var map = self
        for o in overrides {
            guard let action = Action(rawValue: o.action) else {
                let known = Action.allCases.map(\.rawValue).joined(separator: ", ")
                throw KeymapError(action: o.action, line: o.line, message: "unknown action; actions: \(known)")
            }
            var keys: [KeyPress] = []
            for name in o.keys {
                guard let key = KeyPress(name: name) else {
                    let alias = ["ctrl-h": "backspace", "ctrl-i": "tab", "ctrl-j": "enter", "ctrl-m": "enter"][name.lowercased()]
                    let message = alias.map { "'\(name)' reaches a program as \($0); name it \($0)" }
                        ?? "unknown key name '\(name)' (keys are a character, ctrl-x, f1–f12, enter, esc, tab, shift-tab, up, down, left, right, home, end, pgup, pgdn, backspace, delete, space)"
                    throw KeymapError(action: o.action, line: o.line, message: message)
                }
                if !keys.contains(key) { keys.append(key) }
            }
            guard !keys.isEmpty else { throw KeymapError(action: o.action, line: o.line, message: "give at least one key") }
            for i in map.bindings.indices where map.bindings[i].action == action {
                let typing = !map.bindings[i].modes.isDisjoint(with: [.filter, .form])
                let usable = typing ? keys.filter { !$0.isText } : keys
                if !usable.isEmpty { map.bindings[i].keys = usable }
            }
        }
        if let clash = map.firstClash() {
            let line = overrides.first { $0.action == clash.a.rawValue || $0.action == clash.b.rawValue }
            throw KeymapError(action: line?.action ?? clash.a.rawValue, line: line?.line,
                              message: "'\(clash.key.configName)' would do both \(clash.a.rawValue) and \(clash.b.rawValue) (\(clash.where_))")
        }
        return map
    }

    /// Two actions on one key where both apply.
    func firstClash() -> (key: KeyPress, a: Action, b: Action, where_: String)? {
        for (i, x) in bindings.enumerated() {
            for y in bindings[(i + 1)...] where x.action != y.action {
                let modes = x.modes.intersection(y.modes)
                guard !modes.isEmpty else { continue }
                let tabsOverlap = x.tabs.isEmpty || y.tabs.isEmpty || !Set(x.tabs).isDisjoint(with: y.tabs)
                guard tabsOverlap else { continue }
                if let key = x.keys.first(where: { y.keys.contains($0) }) {
                    let mode = Mode.allCases.first { modes.contains($0) }?.rawValue ?? ""
                    return (key, x.action, y.action, "in \(mode) mode")
                }
            }
        }
        return nil
    }

    /// Where a binding applies, in words (for `reiterate-shop keys`).
    public static func whereText(_ b: Binding) -> String {
        var parts: [String] = []
        if b.modes == all {
            parts.append("everywhere")
        } else {
            parts.append(Mode.allCases.filter { b.modes.contains($0) }.map(\.rawValue).joined(separator: ", "))
        }
        if !b.tabs.isEmpty { parts.append(b.tabs.map(\.title).joined(separator: ", ")) }
        if b.writes { parts.append("not read-only") }
        return parts.joined(separator: " · ")
    }
}

extension Keymap {
    /// `reiterate-shop keys`: the bindings in effect as a table (action, keys, where, help).
    public var textTable: String {
        let keymap = self
        let rows = keymap.bindings.map { b in
            (b.action.rawValue, b.keys.map(\.configName).joined(separator: " "), Keymap.whereText(b), b.help)
        }
        let w0 = max(6, rows.map(\.0.count).max() ?? 0), w1 = max(4, rows.map(\.1.count).max() ?? 0), w2 = max(5, rows.map(\.2.count).max() ?? 0)
        func pad(_ s: String, _ w: Int) -> String { s + String(repeating: " ", count: max(0, w - s.count)) }
        var out = "\(pad("ACTION", w0))  \(pad("KEYS", w1))  \(pad("WHERE", w2))  HELP\n"
        for r in rows { out += "\(pad(r.0, w0))  \(pad(r.1, w1))  \(pad(r.2, w2))  \(r.3)\n" }
        return out
    }

    /// `keys --markdown`: the README's keys table.
    public var markdownTable: String {
        let keymap = self
        var out = "| keys | action | what it does | where |\n|---|---|---|---|\n"
        for b in keymap.bindings {
            out += "| \(b.keys.map { "`\($0.display)`" }.joined(separator: " ")) | `\(b.action.rawValue)` | \(b.help) | \(Keymap.whereText(b)) |\n"
        }
        return out
    }
}
