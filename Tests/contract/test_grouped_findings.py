"""Issue 27, item 3: a finding that recurs is one finding — one row of the Checks tab with its count,
one `warning:` line of `print` — and the status bar's ⚠ N counts distinct findings."""
import re

from conftest import shop, wait_until, warnings


def test_print_groups_a_finding_repeated_within_a_run(stub):
    # Every history page without X-Request-Id: one finding about the operation, on every page read.
    stub.fault(kind="no_request_id", path="/api/v1/cheer_history")
    before = stub.log().count("GET /api/v1/cheer_history")
    r = shop("print", "history", "--all", "--base-url", stub.url)
    assert r.returncode == 0, r.stderr
    pages = stub.log().count("GET /api/v1/cheer_history") - before
    assert pages == 2, pages  # 230 entries, 200 a page
    assert warnings(r.stderr) == [f"warning: GET /api/v1/cheer_history: [request-id] expected an X-Request-Id header, got none (×{pages})"], r.stderr
    assert shop("print", "history", "--all", "--base-url", stub.url, "--strict").returncode == 65


def status_count(screen):
    found = re.search(r"⚠ (\d+)\s*$", screen, re.MULTILINE)
    return int(found.group(1)) if found else None


def requests_shown(screen):
    """The Requests tab's count of requests (its tab line), and whether a row is still pending (…)."""
    count = re.search(r"(\d+) requests", screen.splitlines()[1])
    pending = any(re.match(r"\s*(GET|POST) \S+\s+…\s", line) for line in screen.splitlines()[3:-2])
    return (int(count.group(1)) if count else 0), pending


def test_five_refreshes_leave_the_finding_count_unchanged(stub, tui):
    # One entry of every history page comes with wrong types and an unreadable date: the same
    # schema findings, at the same paths, on every read of page 1.
    stub.fault(kind="malformed_entry", path="/api/v1/cheer_history", index=3)
    t = tui(stub.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.wait_screen(status_count, what="⚠ N in the status bar")
    # The Requests tab: each refresh is done when its reads are listed and none is pending.
    t.keys("3")
    screen = t.wait_screen(lambda sc: requests_shown(sc)[0] >= 3 and not requests_shown(sc)[1], what="the first reads, done")
    before = status_count(screen)
    assert before, screen
    reads = stub.log().count("/api/v1/cheer_history")
    for n in range(5):
        shown = requests_shown(screen)[0]
        t.keys("r")
        wait_until(lambda: stub.log().count("/api/v1/cheer_history"), lambda c: c > reads, timeout=10,
                   what=f"refresh {n + 1}'s history read in the stand-in's log")
        reads = stub.log().count("/api/v1/cheer_history")
        screen = t.wait_screen(lambda sc: requests_shown(sc)[0] > shown and not requests_shown(sc)[1],
                               what=f"refresh {n + 1}'s reads listed, none pending")
    t.keys("4")
    # The first read and five refreshes, all judged: one row each finding, counted.
    screen = t.wait_for("×6")
    assert status_count(screen) == before, screen
    assert re.search(rf"(\d+) checks · {before} failed", screen), screen
    assert "first request id rq-" in screen and "last request id rq-" in screen, screen
