"""Fixtures that run the real `reiterate-stub` binary on 127.0.0.1 and talk HTTP to it."""
import atexit
import ctypes
import json
import locale
import queue
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
STUB_BIN = Path(os.environ.get("STUB_BIN", ROOT / ".build" / "debug" / "reiterate-stub"))
SPEC_PATH = Path(os.environ.get("API_SPEC", ROOT.parent / "shared" / "api" / "reiterate-api.yaml"))
SHOP_BIN = Path(os.environ.get("SHOP_BIN", ROOT / ".build" / "debug" / "reiterate-shop"))
TOKEN = "dev-token"

# Every temporary file and folder the tests make (tempfile.mkdtemp() and friends, here and in the test
# modules, which conftest precedes) goes under one folder, removed when the run ends.
_SCRATCH = tempfile.mkdtemp(prefix="reiterate-tests-")
tempfile.tempdir = _SCRATCH
atexit.register(shutil.rmtree, _SCRATCH, True)

# The machine's own proxy settings would route the tests' requests elsewhere: the proxy tests set theirs.
for _name in list(os.environ):
    if _name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        del os.environ[_name]


# ---------------------------------------------------------------------------------------------------
# The harness: every test file takes these from here and defines none of its own.

POLL = 0.02  # how often a wait looks again (a poll, never a synchronisation)


def wait_until(seen, holds=bool, timeout: float = 10.0, what: str = "the condition", show=repr):
    """Calls `seen()` until `holds(value)` is true and returns that value; after `timeout` seconds
    fails with what was seen last. The one way a test waits: on a condition, never on a time."""
    deadline = time.monotonic() + timeout
    while True:
        value = seen()
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not hold within {timeout} s; last seen:\n{show(value)}")
        time.sleep(POLL)  # the gap between two looks (a poll, not a synchronisation)


def shop_env(token=TOKEN, cache=None, config=None, env=None) -> dict:
    """The environment `reiterate-shop` runs in here: none of the developer's REITERATE_ settings, a
    fresh cache folder (or `cache`, kept between runs), UTC, and `config` as its config.toml if given."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    e.update(XDG_CACHE_HOME=str(cache) if cache else tempfile.mkdtemp(), TZ="UTC")
    if token is not None:
        e["REITERATE_TOKEN"] = token
    if config is not None:
        home = tempfile.mkdtemp()
        os.makedirs(os.path.join(home, "reiterate-shop"))
        with open(os.path.join(home, "reiterate-shop", "config.toml"), "w") as f:
            f.write(config)
        e["XDG_CONFIG_HOME"] = home
    e.update(env or {})
    return e


def shop(*args, token=TOKEN, cache=None, config=None, env=None, timeout=90, input=None):
    """One run of the real `reiterate-shop`, to its end: a CompletedProcess (stdout, stderr as text)."""
    return subprocess.run([str(SHOP_BIN), *map(str, args)], capture_output=True, text=True, input=input,
                          env=shop_env(token, cache, config, env), timeout=timeout)


def warnings(stderr: str) -> list:
    """The one meaning of "no warning": every line the app wrote that starts `warning: `."""
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


class Lines:
    """A process's output read line by line without blocking: every read is bounded by a timeout."""

    def __init__(self, stream):
        self._queue = queue.Queue()
        self.seen = []

        def pump():
            for line in iter(stream.readline, ""):
                self._queue.put(line)
            self._queue.put(None)

        threading.Thread(target=pump, daemon=True).start()
        self.ended = False

    def next(self, timeout: float = 10.0):
        """The next line, or None at the end of the stream; fails after `timeout` with what was seen."""
        if self.ended:
            return None
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout} s; seen so far:\n" + "".join(self.seen[-40:])) from None
        if line is None:
            self.ended = True
        else:
            self.seen.append(line)
        return line

    def until(self, holds, timeout: float = 20.0, what: str = "the line wanted"):
        """Lines until `holds(line)`; returns that line. Fails at the end of the stream or the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"{what}: the output ended first; seen:\n" + "".join(self.seen[-40:]))
            if holds(line):
                return line


# ---------------------------------------------------------------------------------------------------
# The TUI in tmux: a private tmux server per test process, one session per app

SOCKET = f"reiterate-e2e-{os.getpid()}"

locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
_libc = ctypes.CDLL("libc.so.6")
_libc.wcswidth.argtypes = [ctypes.c_wchar_p, ctypes.c_size_t]


def wcswidth(text: str) -> int:
    """glibc's wcswidth(3): what ncurses and tmux use to place characters (the width oracle)."""
    return _libc.wcswidth(text, len(text))


def tmux(*args, check=True):
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=check, timeout=10)


@pytest.fixture(scope="session", autouse=True)
def tmux_server():
    # One idle session keeps the private server alive between tests (no start/stop races).
    tmux("new-session", "-d", "-s", "keepalive", "-x", "80", "-y", "24", "sleep 3600")
    yield
    tmux("kill-server", check=False)


class TUI:
    def __init__(self, name, url, cache_dir, width=100, height=30, env=None, args=()):
        self.name = name
        self.status_file = cache_dir.parent / f"{name}.status"
        variables = {"REITERATE_TOKEN": TOKEN, "TZ": "UTC", "TERM": "xterm-256color", "LANG": "C.UTF-8",
                     "XDG_STATE_HOME": str(cache_dir.parent / "state"), **(env or {})}
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
        # The shell records the app's exit status (tmux reaps lazily; its pane_dead_status can lag).
        extra = " ".join(shlex.quote(a) for a in args)
        command = (f"env {assignments} {shlex.quote(str(SHOP_BIN))} --base-url {shlex.quote(url)} {extra} "
                   f"--cache-dir {shlex.quote(str(cache_dir))}; echo $? > {shlex.quote(str(self.status_file))}")
        tmux("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), command)
        tmux("set-option", "-t", name, "remain-on-exit", "on")
        tmux("resize-window", "-t", name, "-x", str(width), "-y", str(height))  # whatever the other sessions' size
        shell = tmux("display", "-p", "-t", name, "#{pane_pid}").stdout.strip()
        children = wait_until(lambda: subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True).stdout.split(),
                              timeout=5, what="the app started")
        self.pid = int(children[0])

    def screen(self):
        return tmux("capture-pane", "-p", "-t", self.name).stdout

    def keys(self, *keys):
        tmux("send-keys", "-t", self.name, *keys)

    def wait_for(self, text, timeout=10.0):
        screen = wait_until(self.screen, lambda s: text in s, timeout, f"{text!r} on the screen", show=str)
        return self.settled(screen, text)

    def wait_screen(self, holds, timeout=10.0, what="the screen wanted"):
        """The screen once `holds(screen)` is true (settled, as wait_for's)."""
        return self.settled(wait_until(self.screen, holds, timeout, what, show=str))

    def settled(self, screen, text=None, limit=1.5):
        """The screen once the frame being drawn is complete. A frame reaches tmux in several
        writes, so the text waited for can show while the rest of its frame is still the old one:
        wait until two captures 50 ms apart agree (a turning spinner ends the wait at `limit`)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            time.sleep(0.05)  # the gap between the two captures compared (a poll, not a synchronisation)
            again = self.screen()
            if again == screen:
                return screen
            if text is not None and text not in again:
                return screen  # the text was passing: report the screen that had it
            screen = again
        return screen

    def info(self, fmt):
        return tmux("display", "-p", "-t", self.name, fmt).stdout.strip()

    def exited(self):
        """The app's exit status if it has exited, else None."""
        if self.status_file.exists() and self.status_file.read_text().strip():
            return int(self.status_file.read_text())
        return None

    def wait_exit(self, timeout=10.0):
        """The app's exit status, once it has exited."""
        return wait_until(self.exited, lambda status: status is not None, timeout, "the app exited",
                          show=lambda _: self.screen())

    def close(self):
        tmux("kill-session", "-t", self.name, check=False)


@pytest.fixture
def tui(tmp_path, tmux_server):
    opened = []

    def open_tui(url, **kw):
        t = TUI(f"app{len(opened)}", url, tmp_path / "cache", **kw)
        opened.append(t)
        return t

    yield open_tui
    for t in opened:
        t.close()


class Stub:
    """One running stand-in: its URL, an HTTP session, and its stderr request log."""

    def __init__(self, *args: str):
        self.log_file = tempfile.NamedTemporaryFile(prefix="stub-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [str(STUB_BIN), "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=self.log_file, text=True,
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        if not ready:
            self.stop()
            raise RuntimeError("reiterate-stub printed nothing within 30 s")
        self.first_line = self.proc.stdout.readline().rstrip("\n")
        prefix = "reiterate-stub listening on "
        if not self.first_line.startswith(prefix):
            self.stop()
            raise RuntimeError(f"unexpected first line: {self.first_line!r}")
        self.url = self.first_line[len(prefix):]
        self.http = requests.Session()

    def request(self, method, path, token=TOKEN, **kw):
        headers = kw.pop("headers", {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        kw.setdefault("timeout", 10)
        return self.http.request(method, self.url + path, headers=headers, **kw)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def fault(self, **spec):
        r = self.http.post(self.url + "/_stub/faults", json=spec, timeout=5)
        assert r.status_code == 201, r.text
        return r.json()["faults"][0]

    def reset(self):
        r = self.http.post(self.url + "/_stub/reset", timeout=5)
        assert r.status_code == 200, r.text

    def log(self) -> str:
        return Path(self.log_file.name).read_text(encoding="utf-8", errors="replace")

    def wait_for_log(self, needle: str, timeout: float = 5.0) -> str:
        return wait_until(self.log, lambda text: needle in text, timeout, f"{needle!r} in the request log",
                          show=lambda text: text[-2000:])

    def log_lines(self, needle: str = "") -> list:
        """The request log's lines that hold `needle`."""
        return [line for line in self.log().splitlines() if needle in line]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if os.path.exists(self.log_file.name):
            os.unlink(self.log_file.name)


@pytest.fixture(scope="session")
def shared_stub():
    if not STUB_BIN.exists():
        pytest.exit(f"{STUB_BIN} is missing: run `swift build` (make test does)", returncode=2)
    stub = Stub()
    yield stub
    stub.stop()


@pytest.fixture
def stub(shared_stub):
    """The session's stand-in, back in its seeded state with no faults."""
    shared_stub.reset()
    yield shared_stub
    shared_stub.reset()


@pytest.fixture(scope="session")
def certificates(tmp_path_factory):
    """A throwaway CA and the server certificates it signs, from the script `make certs` runs:
    right (127.0.0.1), wrong (another host name), expired (one day in 2024)."""
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["bash", str(ROOT / "Tests" / "tls" / "make-certs.sh"), str(d)], check=True, capture_output=True)
    return d


@pytest.fixture
def start_stub():
    """Starts extra stand-ins with their own flags; stops them after the test."""
    started = []

    def start(*args):
        s = Stub(*args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


# ---------------------------------------------------------------------------------------------------
# `reiterate-shop proxy` (test_proxy.py): the stand-in over TLS, and proxies run in their own folders

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes tens of seconds (load, many connections); still part of `make test`")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def shared_tls_stub(certificates):
    if not STUB_BIN.exists():
        pytest.exit(f"{STUB_BIN} is missing: run `swift build` (make test does)", returncode=2)
    stub = Stub("--tls-cert", str(certificates / "right.pem"), "--tls-key", str(certificates / "right.key"))
    stub.http.trust_env = False   # else REQUESTS_CA_BUNDLE would win over the throwaway CA
    stub.http.verify = str(certificates / "ca.pem")
    yield stub
    stub.stop()


@pytest.fixture
def tls_stub(shared_tls_stub):
    """The session's stand-in over HTTPS (the throwaway CA's `right` certificate: 127.0.0.1 and
    localhost), back in its seeded state with no faults."""
    shared_tls_stub.reset()
    yield shared_tls_stub
    shared_tls_stub.reset()


def proxy_env(folder: Path, base_url: str, ca_file=None, extra=None) -> dict:
    """The environment of a proxy run in `folder`: its own config (one environment, `t`), state (the
    proxy's CA) and cache folders; none of the caller's REITERATE_ variables."""
    config = folder / "config" / "reiterate-shop"
    config.mkdir(parents=True, exist_ok=True)
    lines = ["[environments.t]", f'base_url = "{base_url}"'] + ([f'ca_file = "{ca_file}"'] if ca_file else [])
    (config / "config.toml").write_text("\n".join(lines) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(XDG_CONFIG_HOME=str(folder / "config"), XDG_STATE_HOME=str(folder / "state"), XDG_CACHE_HOME=str(folder / "cache"), TZ="UTC")
    env.update(extra or {})  # a caller's own state folder (a test session shared with other runs) among them
    return env


class Proxy:
    """One running `reiterate-shop proxy --env t`; stdout and stderr go to files read while it runs."""

    def __init__(self, folder: Path, base_url: str, args=(), ca_file=None, env=None, listen=None):
        self.folder = folder
        self.env = proxy_env(folder, base_url, ca_file, env)
        self.ca = folder / "state" / "reiterate-shop" / "proxy-ca" / "ca.pem"
        self.ca_key = self.ca.with_name("ca-key.pem")
        self.out_path, self.err_path = folder / "proxy.out", folder / "proxy.err"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([str(SHOP_BIN), "proxy", "--env", "t", "--listen", listen or f"127.0.0.1:{free_port()}", *args],
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=self.env)
        listening = lambda: re.search(r"^note: proxy listening on (\S+):(\d+), intercepting", self.err(), re.M)  # noqa: E731
        try:
            wait_until(lambda: listening() or self.proc.poll() is not None, timeout=30, what="the proxy listening",
                       show=lambda _: self.err())
        finally:
            if not listening():
                self.kill()
        m = listening()
        assert m, f"the proxy did not start:\n{self.err()}"
        self.host, self.port = m.group(1), int(m.group(2))
        self.url = f"http://127.0.0.1:{self.port}"

    def out(self) -> str:
        return self.out_path.read_text(encoding="utf-8", errors="replace")

    def err(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def lines(self) -> list:
        """The `--json` lines written so far."""
        return [json.loads(line) for line in self.out().splitlines() if line.startswith("{")]

    def wait_for(self, kind: str, count: int = 1, timeout: float = 10, **fields) -> list:
        """The `--json` lines of `kind` (with those fields), once there are at least `count` of them."""
        return wait_until(lambda: [l for l in self.lines() if l["kind"] == kind and all(l.get(k) == v for k, v in fields.items())],
                          lambda found: len(found) >= count, timeout, f"{count} {kind} line(s) with {fields}",
                          show=lambda _: self.out()[-3000:])

    def stop(self, sig=signal.SIGINT) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(20)

    def status(self, field: str) -> int:
        """A number from /proc/PID/status (VmRSS in KiB)."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(rf"^{field}:\s+(\d+)", text, re.M).group(1))

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def start_proxy(tmp_path):
    """Starts proxies (`start_proxy(base_url, *args, ca_file=…, env=…, listen=…)`), each in its own
    folder; kills any still running after the test."""
    started = []

    def start(base_url, *args, **kw):
        p = Proxy(tmp_path / f"proxy-{len(started)}", base_url, args, **kw)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()


@pytest.fixture
def tls_proxy(tls_stub, certificates, start_proxy):
    """Starts a proxy for the TLS stand-in named https://localhost:PORT, so that 127.0.0.1:PORT (the
    same stand-in) is another host, tunnelled blind."""
    def start(*args, **kw):
        return start_proxy(f"https://localhost:{tls_stub.url.rsplit(':', 1)[1]}", *args, ca_file=certificates / "ca.pem", **kw)
    return start
