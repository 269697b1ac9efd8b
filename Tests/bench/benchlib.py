"""Shared pieces of the benchmarks: the stand-in, a private tmux server, statistics, /proc readers.

Python 3 standard library only. Imported by bench.py and cpu_while_waiting.py (same folder).
"""
import math
import os
import select
import signal
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(os.environ.get("BIN_DIR", ".build/release"))
# Every app run gets these: a known terminal, UTF-8, UTC dates, the stand-in's token, and no
# config file or cache of the user's own.
SCRATCH = Path(tempfile.mkdtemp(prefix="reiterate-bench-"))
(SCRATCH / "config").mkdir()
APP_ENV = {
    "TERM": "xterm-256color", "LANG": "C.UTF-8", "TZ": "UTC", "REITERATE_TOKEN": "dev-token",
    "XDG_CONFIG_HOME": str(SCRATCH / "config"), "XDG_CACHE_HOME": str(SCRATCH / "xdg-cache"),
}


def log(message):
    """Progress goes to stderr; stdout holds only the table."""
    print(message, file=sys.stderr, flush=True)


def cleanup_scratch():
    shutil.rmtree(SCRATCH, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------
# statistics

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def percentile(xs, p):
    """Nearest-rank percentile (p in 0...100)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    return s[max(1, math.ceil(p / 100 * len(s))) - 1]


# ---------------------------------------------------------------------------------------------------
# the stand-in

class Stub:
    """`reiterate-stub --port 0 --quiet [args]`; `url` once it listens. With `log=True` the stand-in
    logs each request (stderr, one line each) to a file: `requests()` reads them back."""

    def __init__(self, *args, log=False):
        self.log_path = SCRATCH / f"stub-{os.getpid()}-{time.monotonic_ns()}.log" if log else None
        self.proc = subprocess.Popen([str(BIN / "reiterate-stub"), "--port", "0", *([] if log else ["--quiet"]), *args],
                                     stdout=subprocess.PIPE, text=True,
                                     stderr=open(self.log_path, "w") if self.log_path else subprocess.DEVNULL)
        if not select.select([self.proc.stdout], [], [], 30)[0]:
            self.stop()
            raise RuntimeError("reiterate-stub did not start within 30 s")
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.stop()
            raise RuntimeError(f"reiterate-stub: unexpected first line {line!r}")
        self.url = line.split()[-1]

    def requests(self):
        """The request lines logged so far (`GET /path?query STATUS …`)."""
        return self.log_path.read_text(errors="replace").splitlines() if self.log_path else []

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# ---------------------------------------------------------------------------------------------------
# tmux

def tmux_quote(word):
    """One word for tmux's command parser (control mode): single quotes take everything literally."""
    if "'" not in word:
        return "'" + word + "'"
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("~", "\\~") + '"'


class Tmux:
    """A private tmux server (`tmux -L NAME`) with one idle session kept alive for the whole run (no
    start/stop races between sessions), and one control-mode client attached to that idle session.

    `cmd()` runs a command through the control client: one line written to a pipe, the answer read
    back, no process started per command. With POLL=exec every command is a fresh `tmux` process
    instead (the method the issue's figures were first taken with). Both sides of every comparison
    use the same method.
    """

    count = 0

    def __init__(self, poll=None):
        self.ctl, self.forced_kills = None, 0
        try:
            self._start(poll)
        except BaseException:
            self.close()
            raise

    def _start(self, poll):
        Tmux.count += 1
        self.socket = f"reiterate-bench-{os.getpid()}-{Tmux.count}"
        self.poll = poll or os.environ.get("POLL", "control")
        if self.poll not in ("control", "exec"):
            raise ValueError("POLL must be control or exec")
        self.exec("new-session", "-d", "-s", "keepalive", "-x", "80", "-y", "24", "sleep 86400")
        self.exec("set-option", "-g", "default-shell", "/bin/sh")  # the same shell runs every pane command
        self.exec("set-option", "-g", "history-limit", "0")
        if self.poll == "control":
            self.ctl = subprocess.Popen(["tmux", "-L", self.socket, "-C", "attach-session", "-t", "keepalive"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
            self._out = self.ctl.stdout
            while True:  # commands sent before the client is attached fail with "no current client"
                line = self._out.readline()
                if not line:
                    raise RuntimeError("tmux control client ended")
                if line.startswith(b"%session-changed"):
                    break
            self.raw("refresh-client -f no-output")  # no %output notifications for the idle pane

    def exec(self, *args, check=True):
        r = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, timeout=20)
        if check and r.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {r.stderr.decode(errors='replace').strip()}")
        return r.stdout

    def cmd(self, *args):
        """Runs one tmux command; answers its output (bytes). Raises on a tmux error."""
        if self.ctl is None:
            return self.exec(*args)
        return self.raw(" ".join(tmux_quote(a) for a in args))

    def raw(self, line):
        """One command line, as written, through the control client."""
        self.ctl.stdin.write(line.encode() + b"\n")
        return self._answer(line)

    def _answer(self, line):
        # Blocks: "%begin TIME NUMBER FLAGS" … "%end|%error TIME NUMBER FLAGS"; FLAGS 1 = our command.
        # Lines outside a block are notifications.
        while True:
            head = self._out.readline()
            if not head:
                raise RuntimeError("tmux control client ended")
            if not head.startswith(b"%begin "):
                continue
            _, _, number, flags = head.split()
            body = []
            while True:
                row = self._out.readline()
                if not row:
                    raise RuntimeError("tmux control client ended")
                if row.startswith((b"%end ", b"%error ")) and row.split()[2] == number:
                    break
                body.append(row)
            if flags != b"1":
                continue
            if row.startswith(b"%error"):
                raise RuntimeError(f"tmux {line}: {b''.join(body).decode(errors='replace').strip()}")
            return b"".join(body)

    def capture(self, target, styles=False, rows=None):
        """The pane's text; with styles, its SGR sequences too (`-e`: a moved highlight is a change);
        with rows=(first, last), only those lines. A full capture is slow in tmux 3.3 (~8 ms for a
        full 200×60 screen, ~15–30 ms at 400×100), a two-line one well under 1 ms."""
        extra = (["-e"] if styles else []) + (["-S", str(rows[0]), "-E", str(rows[1])] if rows else [])
        return self.cmd("capture-pane", "-p", *extra, "-t", target)

    def screen(self, target):
        return self.capture(target).decode("utf-8", errors="replace")

    def new_session(self, name, width, height, command, env=None):
        """A detached session running `command` (through /bin/sh -c) at exactly width × height."""
        args = ["new-session", "-d", "-s", name, "-x", str(width), "-y", str(height)]
        for k, v in (env or {}).items():
            args += ["-e", f"{k}={v}"]
        self.cmd(*args, command)
        self.cmd("resize-window", "-t", name, "-x", str(width), "-y", str(height))

    def kill_session(self, name):
        """Ends the session and makes sure its process is gone: the pane's SIGHUP first; a process
        still there after 1 s gets SIGTERM, then SIGKILL (each such case is logged and counted)."""
        try:
            pid = self.pane_pid(name)
        except (RuntimeError, ValueError):
            pid = None
        try:
            self.cmd("kill-session", "-t", name)
        except RuntimeError:
            pass
        if pid:
            self.reap([pid])

    def reap(self, pids):
        pids = [p for p in pids if _alive(p)]
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None and pids:
                names = {p: _name(p) for p in pids}
                log(f"  warning: {', '.join(f'{names[p]} ({p})' for p in pids)} still running after SIGHUP; sending {sig.name}")
                self.forced_kills += len(pids)
                for p in pids:
                    try:
                        os.kill(p, sig)
                    except ProcessLookupError:
                        pass
            deadline = time.monotonic() + 0.5
            while pids and time.monotonic() < deadline:
                pids = [p for p in pids if _alive(p)]
                time.sleep(0.005)  # the gap between two looks (a poll)
            if not pids:
                return

    def pane_pid(self, name):
        return int(self.cmd("display-message", "-p", "-t", name, "#{pane_pid}").decode().strip())

    def wait_for(self, name, predicate, timeout=15.0, what="the expected screen"):
        """Polls (1 ms apart) until predicate(screen text) holds; answers the screen."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen(name)
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} never appeared in {name}; the screen:\n{text}")
            time.sleep(0.001)  # the gap between two looks (a poll)

    def wait_text(self, name, text, timeout=15.0):
        return self.wait_for(name, lambda s: text in s, timeout, repr(text))

    def wait_stable(self, name, quiet=0.3, timeout=10.0):
        """Waits until the screen has not changed for `quiet` seconds; answers it."""
        deadline = time.monotonic() + timeout
        last, since = self.capture(name), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(min(0.02, quiet / 5))  # the gap between two looks (a poll)
            now = self.capture(name)
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return last.decode("utf-8", errors="replace")
        raise RuntimeError(f"the screen of {name} never settled")

    def close(self):
        try:
            pids = [int(p) for p in self.exec("list-panes", "-a", "-F", "#{pane_pid}", check=False).split()]
        except (subprocess.SubprocessError, ValueError):
            pids = []
        if self.ctl is not None:
            try:
                self.ctl.stdin.close()
                self.ctl.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.ctl.kill()
            self.ctl = None
        self.exec("kill-server", check=False)
        self.reap(pids)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def app_command(*args, binary=None):
    """The shell command of a pane that runs the app (exec: the pane's pid is the app's)."""
    import shlex
    return "exec " + " ".join(shlex.quote(str(a)) for a in [binary or BIN / "reiterate-shop", *args])


# ---------------------------------------------------------------------------------------------------
# platform floors: tiny Swift programs (Tests/bench/floor/*.swift) that show what the platform costs

FLOOR_SOURCES = Path(__file__).resolve().parent / "floor"


def swift_floor(name, static=False):
    """Path of Tests/bench/floor/NAME.swift built with `swiftc -O` (rebuilt when the source is newer);
    `static`: with the Swift runtime (and Foundation, if it imports it) linked in, as `make release` builds the app."""
    src = FLOOR_SOURCES / f"{name}.swift"
    out = BIN.parent / "bench-floor" / (name + ("-static" if static else ""))
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        swiftc = os.environ.get("SWIFTC", "swiftc")
        subprocess.run([swiftc, "-O", *(["-static-stdlib"] if static else []), str(src), "-o", str(out)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


# ---------------------------------------------------------------------------------------------------
# /proc

def proc_status(pid):
    """/proc/PID/status as {key: value string}."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def kib(value):
    """'12345 kB' → 12345."""
    return int(value.split()[0])


def context_switches(pid):
    """{tid: voluntary + nonvoluntary context switches} over every thread of the process."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            s = proc_status(f"{pid}/task/{tid}")
        except FileNotFoundError:
            continue  # the thread ended meanwhile
        out[int(tid)] = int(s["voluntary_ctxt_switches"]) + int(s["nonvoluntary_ctxt_switches"])
    return out


def cpu_ticks(pid):
    """utime + stime of the whole process (all threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of stat(5), counted after "(comm)"


def _alive(pid):
    """Running (not gone, not a zombie waiting for tmux to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _name(pid):
    try:
        return process_name(pid)
    except FileNotFoundError:
        return "?"


def process_name(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()
