"""Fixtures that run the real `reiterate-stub` binary on 127.0.0.1 and talk HTTP to it."""
import atexit
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
STUB_BIN = Path(os.environ.get("STUB_BIN", ROOT / ".build" / "debug" / "reiterate-stub"))
SPEC_PATH = Path(os.environ.get("API_SPEC", ROOT.parent / "shared" / "api" / "reiterate-api.yaml"))
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
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.log()
            if needle in text:
                return text
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} not in the request log:\n{self.log()[-2000:]}")

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
