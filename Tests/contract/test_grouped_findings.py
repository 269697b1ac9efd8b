"""Issue 27, item 3: a finding that recurs is one finding — one row of the Checks tab with its count,
one `warning:` line of `print` — and the status bar's ⚠ N counts distinct findings."""
import re
import time

from test_cli import shop
from conftest import tui, tmux_server  # noqa: F401


def test_print_groups_a_finding_repeated_within_a_run(stub):
    # Every history page without X-Request-Id: one finding about the operation, on every page read.
    stub.fault(kind="no_request_id", path="/api/v1/cheer_history")
    before = stub.log().count("GET /api/v1/cheer_history")
    r = shop("print", "history", "--all", "--base-url", stub.url)
    assert r.returncode == 0, r.stderr
    pages = stub.log().count("GET /api/v1/cheer_history") - before
    assert pages >= 2
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: GET /api/v1/cheer_history: [request-id] expected an X-Request-Id header, got none (×{pages})"], r.stderr
    assert shop("print", "history", "--all", "--base-url", stub.url, "--strict").returncode == 65


def status_count(screen):
    found = re.search(r"⚠ (\d+)\s*$", screen, re.MULTILINE)
    return int(found.group(1)) if found else None


def test_five_refreshes_leave_the_finding_count_unchanged(stub, tui):  # noqa: F811
    # One entry of every history page comes with wrong types and an unreadable date: the same
    # schema findings, at the same paths, on every read of page 1.
    stub.fault(kind="malformed_entry", path="/api/v1/cheer_history", index=3)
    t = tui(stub.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.keys("2")
    t.wait_for("entry 1 of 230")
    screen = t.wait_for("⚠ ")
    time.sleep(0.5)
    before = status_count(t.settled(t.screen()))
    assert before, screen
    reads = stub.log().count("/api/v1/cheer_history")
    for n in range(5):
        t.keys("r")
        deadline = time.monotonic() + 10
        while stub.log().count("/api/v1/cheer_history") <= reads and time.monotonic() < deadline:
            time.sleep(0.05)
        reads = stub.log().count("/api/v1/cheer_history")
        time.sleep(0.3)
    screen = t.settled(t.screen())
    assert status_count(screen) == before, screen
    t.keys("4")
    screen = t.wait_for("×6")  # the first read and five refreshes: one row each finding, counted
    assert re.search(rf"(\d+) checks · {before} failed", screen), screen
    assert "first request id rq-" in screen and "last request id rq-" in screen, screen
