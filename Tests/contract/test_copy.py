"""`c` (copy as curl) in the real TUI in tmux (issue 27): inside tmux the curl line goes to tmux's
paste buffer whatever tmux's set-clipboard says; where no clipboard is known to take it, to a file
the notice names. The notice never quotes the command."""
import os
import re
import stat

from conftest import tmux, wait_until


def notice(t):
    """The message line (above the hint bar)."""
    return t.screen().rstrip("\n").splitlines()[-2]


def open_requests(t):
    t.wait_for("Balance 1,250 cheer")
    t.keys("3")
    t.wait_for("GET /api/v1/balance")
    t.keys("g")


def test_c_inside_tmux_fills_the_paste_buffer(stub, tui):
    # tmux's default ignores an application's OSC 52; "off" makes sure it is not what fills the buffer.
    tmux("set-option", "-g", "set-clipboard", "off")
    tmux("set-buffer", "-b", "marker", "nothing copied yet")
    t = tui(stub.url, width=120, height=30, env={"REITERATE_TOKEN": "dev-token"})
    open_requests(t)
    t.keys("c")
    line = t.wait_for("to tmux's paste buffer")
    buffer = tmux("show-buffer").stdout
    assert buffer.startswith("curl -sS '" + stub.url + "/api/v1/"), buffer
    assert "dev-token" not in buffer and '"Authorization: Bearer $REITERATE_TOKEN"' in buffer, buffer
    shown = notice(t)
    assert f"copied as curl ({len(buffer):,} characters) to tmux's paste buffer" in shown, (shown, line)
    assert "curl -sS" not in shown and "…" not in shown, shown


def test_c_without_a_clipboard_writes_the_curl_line_to_a_file_the_notice_names(stub, tui, tmp_path):
    # No tmux for the app (TMUX empty) and a terminal not known to take OSC 52 (xterm-256color).
    t = tui(stub.url, width=300, height=30, env={"REITERATE_TOKEN": "dev-token", "TMUX": ""})
    open_requests(t)
    before = tmux("show-buffer", check=False).stdout
    t.keys("c")
    t.wait_for("written to /")
    reports = tmp_path / "state" / "reiterate-shop" / "reports"
    files = wait_until(lambda: list(reports.glob("curl-*.sh")) if reports.exists() else [], timeout=5,
                       what="the curl file in the reports folder")
    [path] = files
    text = path.read_text()
    assert text.startswith("curl -sS '" + stub.url + "/api/v1/") and text.endswith("\n"), text
    assert "dev-token" not in text and '"Authorization: Bearer $REITERATE_TOKEN"' in text, text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    shown = notice(t)
    assert f"curl line ({len(text) - 1:,} characters) written to {path}" in shown, shown
    assert "curl -sS" not in shown, shown
    # Not in tmux's buffer: the app was told there is no tmux.
    assert tmux("show-buffer", check=False).stdout == before


def test_a_request_the_app_withdrew_shows_as_cancelled_not_err(start_stub, tui):
    """A user switch withdraws the reads still out for the user left: their rows say `cancelled`."""
    s = start_stub("--quiet")
    whale = s.get("/api/v1/balance?user_id=qa-whale").json()["balance"]
    t = tui(s.url, width=140, height=30)
    t.wait_for("Balance 1,250 cheer")
    t.keys("3")
    t.wait_for("GET /api/v1/balance?user_id=qa-alice")
    s.fault(kind="latency", ms=3000, path="/api/v1/balance", count=1)
    t.keys("r")
    # The balance read is out, held by the stand-in: its row (the newest, on top) is pending.
    t.wait_screen(lambda sc: re.search(r"GET /api/v1/balance\?user_id=qa-alice\s+…", sc), what="the balance read pending")
    t.keys("u", *"qa-whale", "Enter")
    screen = t.wait_for(f"Balance {whale:,} cheer")
    assert "qa-whale" in screen.splitlines()[0], screen
    screen = t.wait_for("cancelled")
    rows = [line[:80] for line in screen.splitlines()[3:-2] if "/api/v1/balance?user_id=qa-alice" in line[:80]]
    assert any(re.search(r"\?user_id=qa-alice\s+cancelled", row) for row in rows), screen
    assert not any(" ERR " in row for row in rows), screen
