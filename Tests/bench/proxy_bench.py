"""The app's proxy (issue 29, item 6) beside mitmdump as a plain forward proxy: the pieces bench.py's
proxy rows measure with. Python 3 standard library only (mitmdump from the project's .venv, `make venv`;
`wrk` from Debian, `.ci/deps bench`).

- `OurProxy`: `reiterate-shop proxy --base-url URL --listen 127.0.0.1:PORT` on a free port (it takes
  no port 0), waited for until its `note: proxy listening on` line; SIGTERM at the end, whose summary
  line says how many app exchanges it forwarded.
- `Mitmdump`: `mitmdump --mode regular` on a free port, quiet, no flow printed, bodies streamed.
- `Client`: one persistent HTTP/1.1 connection (http.client), to the stand-in itself or to a proxy
  (then the request line is in absolute form); `interleaved_gets` times the same GETs on several
  clients in turns, so every side meets the same moments of a busy machine.
- `wrk`: requests a second with many keep-alive connections, through a proxy or straight to the
  stand-in (a Lua script puts the absolute-form target and the Host of the stand-in on each request).
"""
import http.client
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

from benchlib import APP_ENV, BIN, SCRATCH

BALANCE_PATH = "/api/v1/balance?user_id=qa-alice"
PACKS_PATH = "/api/v1/audio_packs"  # 17 KB of JSON
AUTH = {"Authorization": "Bearer dev-token"}
MITMDUMP = Path(os.environ.get("MITMDUMP", ".venv/bin/mitmdump"))


def _wait_file(path, text, proc, what, timeout=60):
    """Waits until the file `path` (a child's stderr) holds `text`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        written = path.read_text(errors="replace") if path.exists() else ""
        if text in written:
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}: {written.strip()[-300:]}")
        time.sleep(0.02)  # the gap between two looks (a poll)
    raise RuntimeError(f"{what} did not start within {timeout} s")


def _end(proc, err, sig=signal.SIGTERM):
    """Ends a child (SIGKILL if `sig` has not within 10 s) and closes the file its stderr went to."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    err.close()


class OurProxy:
    """`reiterate-shop proxy` in the foreground, its app exchanges printed to /dev/null."""

    def __init__(self, base_url):
        self.err = SCRATCH / f"proxy-{time.monotonic_ns()}.err"
        env = dict(os.environ, **APP_ENV, XDG_STATE_HOME=str(SCRATCH / "proxy-state"))
        self.host, self.port, self.summary = "127.0.0.1", free_port(), None
        self.err_file = open(self.err, "w")
        self.proc = subprocess.Popen([str(BIN / "reiterate-shop"), "proxy", "--base-url", base_url, "--listen", f"{self.host}:{self.port}"],
                                     env=env, stdout=subprocess.DEVNULL, stderr=self.err_file)
        try:
            _wait_file(self.err, "proxy listening on", self.proc, "reiterate-shop proxy")
        except BaseException:
            self.stop()
            raise

    def stop(self):
        """Ends it with SIGTERM; `summary` is its last line (`note: proxy on … N app exchanges, …`)."""
        _end(self.proc, self.err_file)
        lines = self.err.read_text(errors="replace").strip().splitlines()
        self.summary = lines[-1] if lines else ""

    def exchanges(self):
        """App exchanges the summary counts (after `stop`)."""
        m = re.search(r"([\d,]+) app exchange", self.summary or "")
        return int(m.group(1).replace(",", "")) if m else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mitmdump:
    """mitmdump as a plain forward proxy: nothing printed per flow, bodies streamed, its own confdir."""

    def __init__(self):
        if not MITMDUMP.exists():
            raise RuntimeError(f"{MITMDUMP} not found: `make venv` installs mitmproxy (Tests/contract/requirements.txt)")
        self.host, self.port = "127.0.0.1", free_port()
        self.err = SCRATCH / f"mitmdump-{time.monotonic_ns()}.err"
        self.err_file = open(self.err, "w")
        self.argv = [str(MITMDUMP), "--mode", "regular", "--listen-host", self.host, "--listen-port", str(self.port), "-q",
                     "--set", "flow_detail=0", "--set", "stream_large_bodies=1", "--set", f"confdir={SCRATCH / 'mitmproxy'}"]
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=self.err_file)
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection((self.host, self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"mitmdump did not start: {self.err.read_text(errors='replace').strip()[-300:]}")
                time.sleep(0.05)  # the gap between two looks (a poll)

    def stop(self):
        _end(self.proc, self.err_file, signal.SIGINT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Client:
    """One keep-alive connection; `via` (host, port) of a proxy, or None for the stand-in itself."""

    def __init__(self, base_url, via=None):
        m = re.match(r"http://([^/:]+):(\d+)", base_url)
        self.authority = f"{m.group(1)}:{m.group(2)}"
        host, port = via or (m.group(1), int(m.group(2)))
        self.conn = http.client.HTTPConnection(host, port, timeout=30)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.via = via

    def get(self, path=BALANCE_PATH):
        """Milliseconds for one GET, the whole answer read; raises unless 200."""
        target = f"http://{self.authority}{path}" if self.via else path
        t0 = time.perf_counter_ns()
        self.conn.request("GET", target, headers=AUTH)  # http.client puts the URL's authority in Host
        r = self.conn.getresponse()
        body = r.read()
        dt = (time.perf_counter_ns() - t0) / 1e6
        if r.status != 200 or not body:
            raise RuntimeError(f"GET {target}{' via ' + ':'.join(map(str, self.via)) if self.via else ''}: {r.status} {body[:200]!r}")
        return dt

    def close(self):
        self.conn.close()


def interleaved_gets(clients, n, chunk=50, warmup=100):
    """{name: [ms]}: `n` GETs on each client, in turns of `chunk` (the order turning each round), after
    `warmup` untimed ones each."""
    for c in clients.values():
        for _ in range(warmup):
            c.get()
    samples = {name: [] for name in clients}
    names = list(clients)
    for r in range(0, n, chunk):
        names = names[1:] + names[:1]
        for name in names:
            c = clients[name]
            samples[name] += [c.get() for _ in range(min(chunk, n - r))]
    return samples


def wrk(base_url, via, seconds, connections):
    """wrk -t1 -cN -dS with keep-alive: {"rps", "requests", "errors", "p50_ms", "p99_ms", "output"};
    through `via` (host, port) of a proxy, else straight to the stand-in."""
    m = re.match(r"http://([^/]+)", base_url)
    authority = m.group(1)
    script = SCRATCH / f"wrk-{time.monotonic_ns()}.lua"
    target = f"http://{authority}{BALANCE_PATH}" if via else BALANCE_PATH
    script.write_text(f'wrk.method = "GET"\nwrk.path = "{target}"\nwrk.headers["Host"] = "{authority}"\n'
                      f'wrk.headers["Authorization"] = "{AUTH["Authorization"]}"\n')
    url = f"http://{via[0]}:{via[1]}/" if via else f"http://{authority}/"
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "5s", "--latency", "-s", str(script), url]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    out = r.stdout
    if r.returncode != 0 or "Requests/sec" not in out:
        raise RuntimeError(f"wrk: exit {r.returncode}: {(r.stderr or out).strip()[-300:]}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(int(g) for g in sock.groups()) if sock else 0)

    def latency(p):
        lm = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not lm:
            return None
        return float(lm.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[lm.group(2)]

    return {"rps": rps, "requests": requests, "errors": errors, "p50_ms": latency(50), "p99_ms": latency(99), "output": out}

