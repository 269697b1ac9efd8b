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
    /// Runs `tmux load-buffer -` (`program`, found on `$PATH`) with the text on its standard input
    /// (never in its arguments), its output to /dev/null. The whole exchange, writing the text
    /// included, takes at most `limit`: the writes do not block (a tmux that hangs without reading a
    /// line larger than the socket's buffer cannot freeze the app), and a tmux still running then is
    /// killed.
    static func loadTmuxBuffer(_ text: String, environment: [String: String], program: String = "tmux",
                               limit: Duration = .seconds(1)) -> Bool {
        guard let session = environment["TMUX"], !session.isEmpty else { return false }
        let deadline = ContinuousClock.now + limit
        /// What is left of the limit, in whole milliseconds (0 once it has passed).
        func remaining() -> Int32 {
            let left = deadline - .now
            guard left > .zero else { return 0 }
            let (seconds, attoseconds) = left.components
            return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
        }
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
        let arguments = [program, "load-buffer", "-"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, nil, &argv, environ)
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            return false
        }
        // The text, as fast as tmux reads it, until the limit: each send takes what fits now.
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            var ready = pollfd(fd: writeEnd, events: Int16(POLLOUT), revents: 0)
            let polled = poll(&ready, 1, remaining())
            if polled < 0, errno == EINTR { continue }
            guard polled > 0 else { break }  // the limit passed with tmux not reading
            let offset = written
            let n = bytes.withUnsafeBytes {
                send(writeEnd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            if n <= 0 { break }
            written += n
        }
        close(writeEnd)
        // tmux answers in milliseconds; one that hangs is not waited for past the limit.
        var status: Int32 = 0
        repeat {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { return written == bytes.count && status == 0 }
            if done < 0 { return false }
            usleep(5_000)
        } while remaining() > 0
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return false
    }
}
