import Foundation
import ShopViewModels

/// Where the terminal's copy goes besides OSC 52: tmux ignores an application's OSC 52 unless its
/// `set-clipboard` option is `on` (the default, `external`, does not take it), so inside tmux the text
/// is also loaded into tmux's paste buffer with `tmux load-buffer -`.
enum Clipboard {
    /// Whether OSC 52 is known to reach a clipboard in this terminal: terminals that take it by
    /// default (kitty, WezTerm, iTerm2, foot, Alacritty, Ghostty, Windows Terminal). Elsewhere (xterm
    /// allows it only when configured, many ignore it) nothing says it arrived.
    static func osc52Known(_ environment: [String: String]) -> Bool {
        let program = environment["TERM_PROGRAM"] ?? ""
        let term = environment["TERM"] ?? ""
        if ["iTerm.app", "WezTerm", "ghostty"].contains(program) { return true }
        if ["xterm-kitty", "foot", "foot-extra", "alacritty", "xterm-ghostty", "wezterm"].contains(term) { return true }
        return environment["KITTY_WINDOW_ID"] != nil || environment["WT_SESSION"] != nil
    }

    /// Inside tmux (`$TMUX` set), loads `text` into tmux's paste buffer; true when tmux took it.
    /// Runs `tmux load-buffer -` with the text on its standard input (never in its arguments), its
    /// output to /dev/null, waiting at most a second.
    static func loadTmuxBuffer(_ text: String, environment: [String: String]) -> Bool {
        guard let session = environment["TMUX"], !session.isEmpty else { return false }
        // A socket pair, not a pipe: a tmux that exits before reading makes `send` fail with EPIPE
        // (MSG_NOSIGNAL) instead of raising SIGPIPE in the app.
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { return false }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = ["tmux", "load-buffer", "-"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "tmux", &actions, nil, &argv, environ)
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            return false
        }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let offset = written
            let n = bytes.withUnsafeBytes { send(writeEnd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            written += n
        }
        close(writeEnd)
        // tmux answers in milliseconds; a server that hangs is not waited for past a second.
        var status: Int32 = 0
        for _ in 0..<200 {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { return written == text.utf8.count && status == 0 }
            if done < 0 { return false }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return false
    }
}
