"""End-to-end: the real `reiterate-shop` TUI in tmux against the real stand-in (send-keys, capture-pane)."""
import json
import os
import re
import shlex
import signal
import subprocess
import time

import pytest

from conftest import ROOT, SHOP_BIN, Stub, tmux, wait_until, wcswidth


def next_frame(t):
    """A frame drawn after every key sent so far was handled: the help opened and closed again (keys are
    handled in order). What a "did not happen" check looks at: the moment it is about has passed."""
    t.keys("?")
    t.wait_for("┌─ Keys")
    t.keys("Escape")
    return t.wait_screen(lambda s: "┌─ Keys" not in s, what="the help closed again")

def test_launch_history_paging_comments_help_and_quit(stub, tui):
    t = tui(stub.url)
    t.wait_for("Balance 1,250 cheer")
    screen = t.wait_for("Whale Song Recordings 🐋")  # the balance and the packs answer separately
    assert "LOCAL" in screen and "qa-alice" in screen and "Balance 1,250 cheer" in screen
    assert t.info("#{alternate_on}") == "1"
    t.keys("2")
    t.wait_for("entry 1 of 230 · page 1 of 5")
    t.keys("]")
    t.wait_for("entry 51 of 230 · page 2 of 5")
    t.wait_for("2026-07-19 12:27")  # the first entry of page 2 (UTC), once it has loaded
    t.keys("Enter")
    t.wait_for("↳ ")
    t.keys("?")
    t.wait_for("┌─ Keys")
    # A frame reaches tmux in several writes: wait for the row, not only the box's first line.
    t.wait_for("copy the request as curl")  # the History tab's help: its keys and every tab's
    t.keys("Escape")
    t.keys("3")
    t.wait_for("GET /api/v1/cheer_hist")
    t.keys("q")
    assert t.wait_exit() == 0
    assert t.info("#{alternate_on}") == "0"


def test_offline_refresh_shows_the_cached_balance(start_stub, tui):
    s = start_stub("--quiet")
    t = tui(s.url)
    t.wait_for("Balance 1,250 cheer")
    s.stop()
    t.keys("r")
    screen = t.wait_for("Balance 1,250 cheer · cached")
    header = screen.splitlines()[0]
    assert "Balance 1,250 cheer · cached " in header and "offline" in header
    assert "connection refused" in screen  # the error line


def test_sigterm_restores_the_terminal(stub, tui):
    t = tui(stub.url)
    t.wait_for("Balance 1,250 cheer")
    os.kill(t.pid, signal.SIGTERM)
    assert t.wait_exit() == 128 + signal.SIGTERM
    assert t.info("#{alternate_on}") == "0"


def test_sighup_and_ctrl_c_also_restore(stub, tui):
    t = tui(stub.url)
    t.wait_for("Balance 1,250 cheer")
    t.keys("C-c")
    assert t.wait_exit() == 0
    assert t.info("#{alternate_on}") == "0"
    u = tui(stub.url)
    u.wait_for("Balance 1,250 cheer")
    os.kill(u.pid, signal.SIGHUP)
    assert u.wait_exit() == 128 + signal.SIGHUP
    assert u.info("#{alternate_on}") == "0"


def test_hostile_text_never_reaches_the_terminal(start_stub, tui):
    s = start_stub("--quiet", "--fault", "hostile")
    t = tui(s.url, width=120, height=40)
    title_before = t.info("#{pane_title}")
    screen = t.wait_for("RED ALERT")  # the visible words of the hostile samples are shown…
    t.keys("2")
    t.wait_for("page 1 of 5")
    t.keys("Enter", "j", "Enter")
    # Entry 2 selected and its comments open under the first entry's: both Enters were handled.
    history = t.wait_screen(lambda s: "entry 2 of 230" in s and "¡Qué bonito!" in s, what="the first two entries' comments")
    # …but no sequence took effect: the title is unchanged, nothing was put on tmux's clipboard,
    # the screen was not cleared, and every row keeps its width.
    assert t.info("#{pane_title}") == title_before and "pwned" not in t.info("#{pane_title}")
    buffers = tmux("list-buffers", check=False).stdout
    assert "rm -rf" not in buffers
    for text in (screen, history):
        lines = text.splitlines()
        assert lines[0].lstrip().startswith("reiterate-shop") and "LOCAL" in lines[0], text  # the header stays on the top row
        assert all(wcswidth(line) <= 120 and wcswidth(line) != -1 for line in lines)
    ends = set()
    for row in screen.splitlines()[3:30]:
        start = row.find("$") if "$" in row else row.find("free")
        if start < 0:
            continue
        token = row[start:].split(" ")[0]
        ends.add(wcswidth(row[:start]) + wcswidth(token))
    assert len(ends) == 1, f"the right-aligned price column ends at {sorted(ends)}"


def test_resize_relays_out_and_too_small_is_explained(stub, tui):
    t = tui(stub.url)
    t.wait_for("Balance 1,250 cheer")
    tmux("resize-window", "-t", t.name, "-x", "50", "-y", "12")
    t.wait_for("Terminal too small: 50×12")
    tmux("resize-window", "-t", t.name, "-x", "130", "-y", "35")
    screen = t.wait_for("Balance 1,250 cheer")
    assert "too small" not in screen and max(wcswidth(line) for line in screen.splitlines()) > 100


def stub_pids(session):
    """reiterate-stub processes of one terminal session (the tmux pane's), wherever their parent went."""
    rows = subprocess.run(["ps", "-eo", "pid=,sid=,args="], capture_output=True, text=True).stdout.splitlines()
    return {int(r.split()[0]) for r in rows if len(r.split()) > 2 and r.split()[1] == str(session) and "reiterate-stub" in r}


PURCHASE_ROW = re.compile(r"^ \d\d:\d\d:\d\d (com\.reiterate\.cheer\.\d+)(?: ×(\d+))? +(\d{16}) +(credited twice|credited|not credited|"
                          r"credit mismatch|refunded|not paid|not verified|not checked)(?: +(app|server|unknown))? +│")


def purchase_rows(screen):
    """The Purchases tab's list: (product, quantity, transaction id, verdict, blame) per row."""
    return [(m[1], int(m[2] or 1), m[3], m[4], m[5]) for m in map(PURCHASE_ROW.match, screen.splitlines()) if m]


@pytest.mark.timeout(300)
def test_make_run_judges_the_apps_purchases_and_leaves_no_stand_in_behind(tmp_path):
    status = tmp_path / "make.status"
    # The developer's own config: make run's TUI reads a copy of it with its `make-run` environment after.
    own = tmp_path / "own" / "reiterate-shop" / "config.toml"
    own.parent.mkdir(parents=True)
    own.write_text('[environments.mine]\nbase_url = "http://127.0.0.1:9"\ntier = "staging"\n')
    demo = ROOT / ".build" / "demo-run"
    log = demo / "purchases.log"
    log.unlink(missing_ok=True)  # a former run's
    command = f"cd {shlex.quote(str(ROOT))} && XDG_CONFIG_HOME={shlex.quote(str(own.parent.parent))} make -s run; echo $? > {shlex.quote(str(status))}"
    tmux("new-session", "-d", "-s", "makerun", "-x", "130", "-y", "30", command)
    tmux("resize-window", "-t", "makerun", "-x", "130", "-y", "30")
    pane = tmux("display", "-p", "-t", "makerun", "#{pane_pid}").stdout.strip()
    session = subprocess.run(["ps", "-o", "sid=", "-p", pane], capture_output=True, text=True).stdout.strip()
    capture = lambda: tmux("capture-pane", "-p", "-t", "makerun").stdout
    try:
        # `make run` builds first (incremental here, but it may wait for another build's lock).
        screen = wait_until(capture, lambda s: "Balance 1,250 cheer" in s, timeout=240, what="the balance on make run's screen", show=str)
        assert "qa-alice" in screen and "MAKE-RUN" in screen and "app proxy 127.0.0.1:" in screen, screen
        assert stub_pids(session), "make run started a stand-in"
        written = (demo / "reiterate-shop" / "config.toml").read_text()
        assert written.startswith(own.read_text()) and "[environments.make-run.appstore]" in written, written
        # The app (scripts/demo-purchases.py post, in the background) buys and posts through the TUI's proxy.
        done = wait_until(lambda: log.read_text() if log.exists() else "", lambda s: "post: done" in s, timeout=30,
                          what="the app's purchases (purchases.log)", show=str)
        assert "Traceback" not in done and "the sandbox purchases were not made" not in done, done
        tmux("send-keys", "-t", "makerun", "6")
        screen = wait_until(capture, lambda s: len(purchase_rows(s)) == 4 and "read just now" in s, timeout=30,
                            what="the Purchases tab's four lines", show=str)
        assert purchase_rows(screen) == [
            ("com.reiterate.cheer.200", 1, "2000000000000001", "credited", None),
            ("com.reiterate.cheer.100", 2, "2000000000000002", "credited", None),
            ("com.reiterate.cheer.500", 1, "2000000000000003", "not credited", "app"),
            ("com.reiterate.cheer.50", 1, "2000000000000004", "refunded", None)], screen
        assert "4 lines · 1 finding" in screen, screen
        # The detail beside the list: the amounts were seen (the app's balance reads through the proxy).
        tmux("send-keys", "-t", "makerun", "j")
        wait_until(capture, lambda s: "transaction: 2000000000000002" in s and "credited 200" in s, timeout=10,
                   what="the ×2 purchase credited 200", show=str)
        tmux("send-keys", "-t", "makerun", "j", "j")
        wait_until(capture, lambda s: "transaction: 2000000000000004" in s and "took back 50" in s, timeout=10,
                   what="the refund taken back", show=str)
        # The line make run printed, on the screen the TUI's own (alternate) screen covers.
        printed = tmux("capture-pane", "-p", "-a", "-J", "-t", "makerun").stdout
        assert f"make run: your {own} and the environment `make-run` in {demo}/reiterate-shop/config.toml" in printed, printed
        tmux("send-keys", "-t", "makerun", "q")
        ended = wait_until(lambda: status.read_text().strip() if status.exists() else "", timeout=15, what="make run ended")
        assert ended == "0", ended
        # make waits for the stand-in to end before it returns, so nothing of this session remains.
        assert not stub_pids(session), "a reiterate-stub was left running"
    finally:
        tmux("kill-session", "-t", "makerun", check=False)


def test_rebound_quit_key_quits_and_q_no_longer_does(stub, tui, tmp_path):
    config = tmp_path / "xdg" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[keys]\nquit = ["x"]\n')
    t = tui(stub.url, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    screen = t.wait_for("Balance 1,250 cheer")
    assert screen.splitlines()[-1].lstrip().startswith("x quit")  # the hint bar shows the new key
    # q does nothing now: ? after it opens the help (keys are handled in order), so q was handled first.
    t.keys("q", "?")
    help_screen = t.wait_screen(lambda s: "┌─ Keys" in s or t.exited() is not None, what="the help opened after q ?")
    assert t.exited() is None, f"q quit the app (exit status {t.exited()}), though quit is bound to x only"
    assert "┌─ Keys" in help_screen and t.info("#{alternate_on}") == "1", help_screen
    assert re.search(r"│ x +quit ", help_screen), help_screen
    assert not re.search(r"│ q +quit ", help_screen)
    t.keys("Escape")
    t.keys("x")
    assert t.wait_exit() == 0
    assert t.info("#{alternate_on}") == "0"


def test_a_broken_keys_table_is_refused_with_its_line(stub, tmp_path):
    config = tmp_path / "xdg" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[keys]\nquit = "x"\nrefresh = "j"\n')
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "REITERATE_TOKEN": "dev-token"}
    for args in (["config", "check"], ["keys"]):
        r = subprocess.run([SHOP_BIN, *args], capture_output=True, text=True, env=env, timeout=20)
        assert r.returncode == 78
        assert r.stderr == f"error: {config / 'config.toml'}:3: keys.refresh: 'j' would do both down and refresh (in browse mode)\n"


# Faults on the balance, pressed with r: the error line says what happened in plain words, with the
# request id when a response head came.
SCREEN_FAULTS = [
    ({"kind": "status", "status": 503, "message": "maintenance"}, "HTTP 503 Service Unavailable: maintenance", True),
    ({"kind": "html", "status": 502}, "HTTP 502 Bad Gateway with a non-JSON body (text/html)", True),
    ({"kind": "truncate"}, "the response is not valid JSON (it ends early: cut short)", True),
    ({"kind": "stall", "seconds": 1}, "the connection closed before the answer was complete", True),
    ({"kind": "reset"}, "the connection closed before an answer came", False),
    ({"kind": "hang", "seconds": 4}, "timed out waiting for the server", False),
]


def test_error_lines_on_screen_are_plain_words(stub, tui):
    banned = re.compile(r"NIOSSL|BoringSSL|HTTPClientError|HTTPParserError|\.swift\b|\.cc:|\b[a-z]+[A-Z][A-Za-z]*\(")
    t = tui(stub.url, args=["--timeout", "2"], width=160)
    t.wait_for("Balance 1,250 cheer")
    for fault, words, head in SCREEN_FAULTS:
        stub.reset()
        stub.fault(**fault, path="/api/v1/balance", count=3)
        t.keys("Escape", "r")  # dismiss the last message, refresh
        screen = t.wait_for(words, timeout=15)
        line = next(l for l in screen.splitlines() if words in l)
        assert line.lstrip().startswith("✖ GET /api/v1/balance: "), line
        assert not banned.search(screen), screen
        assert ("(request id rq-" in line) == head, line
        assert "Balance 1,250 cheer · cached" in screen.splitlines()[0]  # the balance survives every fault


# ---------------------------------------------------------------------------------------------------
# The whole history as one list (issue 11), against the stand-in with a 1,000,000-entry whale.

def history_requests(stub):
    """The cheer_history requests in the stand-in's log, as (page, per_page) pairs, in order."""
    out = []
    for m in re.finditer(r"GET /api/v1/cheer_history\?\S*?page=(\d+)&per_page=(\d+) ", stub.log()):
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def settled_requests(stub, until=lambda requests: True, quiet=0.4, timeout=10.0):
    """The history requests once `until(requests)` holds (the ones a key must send are in the log) and no
    new one has come for `quiet` seconds after it (one that would come later is not part of the count)."""
    wait_until(lambda: history_requests(stub), until, timeout, "the history requests wanted")
    seen = {"requests": history_requests(stub), "since": time.monotonic()}

    def quiet_for():
        now = history_requests(stub)
        if now != seen["requests"]:
            seen.update(requests=now, since=time.monotonic())
        return time.monotonic() - seen["since"]

    wait_until(quiet_for, lambda q: q >= quiet, timeout, f"{quiet} s with no new history request",
               show=lambda _: seen["requests"][-10:])
    return seen["requests"]


def selected_row(t):
    """The screen line drawn in reverse video (the cursor's entry): its index and its text."""
    styled = tmux("capture-pane", "-p", "-e", "-t", t.name).stdout.splitlines()
    plain = t.screen().splitlines()
    for i, line in enumerate(styled[3:-2], start=3):
        if line.startswith("\x1b[7m") and i < len(plain):
            return i, plain[i]
    return None, None


def entry_at(stub, user, index):
    """Entry `index` (0 = newest) of a user's history, straight from the stand-in."""
    r = stub.get(f"/api/v1/cheer_history?user_id={user}&page={index + 1}&per_page=1")
    assert r.status_code == 200, r.text
    return r.json()["history"][0]


@pytest.fixture(scope="module")
def whale_stub():
    s = Stub("--whale-history", "1000000")
    yield s
    s.stop()


def test_G_reaches_the_last_of_a_million_entries_with_one_request(whale_stub, tui):
    t = tui(whale_stub.url, args=("--user", "qa-whale"))
    t.keys("2")
    t.wait_for("entry 1 of 1,000,000 · page 1 of 20,000")
    before = settled_requests(whale_stub)
    t.keys("G")
    t.wait_for("entry 1,000,000 of 1,000,000 · page 20,000 of 20,000")
    after = settled_requests(whale_stub, until=lambda r: (20_001, 50) in r[len(before):])
    # The last page, and — since it is full — the page after it once (empty here): a server whose totals
    # count fewer entries than it has would show the rest there (issue 27).
    assert after[len(before):] == [(20_000, 50), (20_001, 50)], after[len(before):]
    oldest = entry_at(whale_stub, "qa-whale", 999_999)
    _, row = selected_row(t)
    assert row is not None and oldest["date"][:10] in row


def test_go_to_a_page_and_a_date(whale_stub, tui):
    t = tui(whale_stub.url, args=("--user", "qa-whale"))
    t.keys("2")
    t.wait_for("entry 1 of 1,000,000")
    t.keys(":")
    t.wait_for("go to: ")
    t.keys("p1234", "Enter")
    t.wait_for("entry 61,651 of 1,000,000 · page 1,234 of 20,000")
    before = settled_requests(whale_stub)
    t.keys(":", "2026-10-01", "Enter")
    screen = t.wait_for("Went to 2026-10-01")
    steps = settled_requests(whale_stub)[len(before):]
    assert 0 < len(steps) <= 25, steps
    m = re.search(r"entry ([\d,]+) of 1,000,000", screen)
    assert m, screen
    n = int(m.group(1).replace(",", ""))
    # The newest entry on or before the day: entry n is on or before it, entry n - 1 after it.
    assert entry_at(whale_stub, "qa-whale", n - 1)["date"] < "2026-10-02"
    assert entry_at(whale_stub, "qa-whale", n - 2)["date"] >= "2026-10-02"
    _, row = selected_row(t)
    assert row is not None and row.split()[0] == entry_at(whale_stub, "qa-whale", n - 1)["date"][:10]


def test_find_reaches_a_comment_only_on_page_3(stub, tui):
    text = "ferryman's whistle"
    # What the stand-in holds: the text is on one entry, on page 3.
    pages = [stub.get(f"/api/v1/cheer_history?user_id=qa-alice&page={p}&per_page=50").json()["history"] for p in range(1, 6)]
    holders = [(p + 1, i) for p, page in enumerate(pages) for i, e in enumerate(page)
               if any(text.lower() in (c.get("body") or "").lower() for c in e.get("comments") or [])]
    assert [p for p, _ in holders] == [3], holders
    t = tui(stub.url)
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.keys("/")
    t.wait_for("find: ")
    t.keys("FERRYMAN", "Enter")  # case does not matter
    screen = t.wait_for("1 match · n/N")
    index = 100 + holders[0][1]
    assert f"entry {index + 1} of 230 · page 3 of 5" in screen
    t.keys("Enter")  # its comments, with the text highlighted
    t.wait_for("ferryman")
    styled = tmux("capture-pane", "-p", "-e", "-t", t.name).stdout
    assert re.search(r"\x1b\[[0-9;]*m(?i:ferryman)", styled), styled


def test_find_and_G_reach_every_entry_through_short_pages(start_stub, tui):
    """Issue 35: a server that serves at most 50 entries a page whatever `per_page` asks (its paging fields as
    asked): `/` reads on from the entry it reached in pages of 50, so the comment on page 3 is still found;
    `G` reaches the oldest entry."""
    s = start_stub("--fault", "short_pages,cap=50")
    t = tui(s.url)
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.keys("/")
    t.wait_for("find: ")
    t.keys("ferryman", "Enter")
    screen = t.wait_for("1 match · n/N")
    assert re.search(r"entry 1\d\d of 230 · page 3 of 5", screen), screen
    asked = re.findall(r"per_page=(\d+)", s.log())
    assert "200" in asked and asked[-1] == "50", asked
    t.keys("G")
    t.wait_for("entry 230 of 230 · page 5 of 5")


def test_j_held_across_a_page_boundary_moves_on_without_a_jump(stub, tui):
    t = tui(stub.url)
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.keys(":", "30", "Enter")
    t.wait_for("entry 30 of 230 · page 1 of 5")
    assert "loading" not in next_frame(t)  # page 2 is not on screen yet (nor asked for)
    y0, _ = selected_row(t)
    for _ in range(30):  # a held key: autorepeat at about 30 a second
        t.keys("j")
        time.sleep(0.03)  # a pace: a held key's autorepeat, about 30 a second (the test's input, not a wait)
    screen = t.wait_for("entry 60 of 230 · page 2 of 5")
    y1, row = selected_row(t)
    assert y0 is not None and y1 == y0, (y0, y1, screen)  # the cursor row stays put; the list scrolls
    assert "loading" not in screen  # page 2 was fetched ahead
    dates = [line.split()[0] + " " + line.split()[1] for line in screen.splitlines()[3:-2] if re.match(r" \d{4}-\d\d-\d\d ", line)]
    assert dates == sorted(dates, reverse=True) and len(set(dates)) == len(dates), dates


def test_a_spend_from_another_process_leaves_no_duplicate(start_stub, tui):
    s = start_stub("--quiet")
    t = tui(s.url, width=120)
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.keys(":", "20", "Enter")
    t.wait_for("entry 20 of 230")
    # Another process cheers: one entry more at the top, every page boundary moves by one.
    r = s.post("/api/v1/spend_cheer", json={"amount": 5, "product": "com.reiterate.pack.rain", "comment": "from elsewhere"})
    assert r.status_code == 200, r.text
    t.keys(":", "49", "Enter")  # page 2 comes on screen, read after the spend; page 1 was read before
    t.wait_for("1 new entry · g to see it")
    t.wait_for("entry 50 of 231")
    screen = next_frame(t)  # a frame after the new page's: no duplicate came late
    rows = [line for line in screen.splitlines()[3:-2] if re.match(r" \d{4}-\d\d-\d\d ", line)]
    assert len(rows) > 20 and len(set(rows)) == len(rows), screen
    assert "entry 50 of 231" in screen  # the cursor stayed on its entry, now one further down
    t.keys("g")
    t.wait_for("entry 1 of 231")
    assert "Rain on a Tin Roof" in t.screen().splitlines()[3]


# ---------------------------------------------------------------------------------------------------
# Every write verified (issue 12): a spend whose answer was lost is settled by reading again.

def spend_in_tui(t, amount):
    """Shop tab, first pack (once the packs are there), `s`, the amount, Enter, confirm."""
    t.keys("1")
    t.wait_for("46 of 46 packs")
    t.keys("g", "s")
    t.wait_for("Spend cheer")
    t.keys(str(amount), "Enter")
    t.wait_for("Spend " + str(amount) + " cheer on")
    t.keys("y")


def transaction_id(t):
    """The buy form's transaction id, once the random one has filled in."""
    screen = t.wait_screen(lambda s: re.search(r"Transaction:\s*\[(\d+)", s), what="the buy form's random transaction id")
    return re.search(r"Transaction:\s*\[(\d+)", screen).group(1)


@pytest.mark.parametrize("fault,applied", [
    ({"kind": "truncate"}, True),      # the server applied it, then the body was cut
    ({"kind": "reset"}, False),        # refused before the shop saw it
    ({"kind": "html", "status": 502}, False),
    ({"kind": "hang", "seconds": 30}, False),  # no answer within --timeout 3
])
def test_a_spend_whose_answer_was_lost_says_whether_it_was_applied(start_stub, tui, fault, applied):
    s = start_stub("--quiet")
    t = tui(s.url, args=["--timeout", "3"], width=140)
    t.wait_for("Balance 1,250 cheer")
    s.fault(**fault, path="/api/v1/spend_cheer", count=1)
    spend_in_tui(t, 7)
    if applied:
        screen = t.wait_for("the spend was applied (balance 1,243 = 1,250 − 7)", timeout=15)
        assert "Balance 1,243 cheer" in screen.splitlines()[0] and "┌─ Done" in screen
    else:
        screen = t.wait_for("the spend was not applied (balance 1,250, unchanged)", timeout=15)
        # "Failed" only now, with the balance just read: the header is the fresh one, not a cached one.
        assert "Balance 1,250 cheer" in screen.splitlines()[0] and "cached" not in screen.splitlines()[0]
        assert "┌─ Failed" in screen
    t.keys("Enter", "4")
    t.wait_for("3 checks · 0 failed" if applied else "1 check · 0 failed", timeout=10)
    # Never sent twice: the stand-in's balance says so.
    assert s.get("/api/v1/balance?user_id=qa-alice").json()["balance"] == (1243 if applied else 1250)


def test_checks_tab_lists_a_verified_spend_with_no_false_positive(start_stub, tui):
    s = start_stub("--quiet")
    t = tui(s.url, width=140)
    t.wait_for("Balance 1,250 cheer")
    spend_in_tui(t, 5)
    t.wait_for("✔ 3 checks passed")
    t.keys("Enter", "4")
    screen = t.wait_for("3 checks · 0 failed")
    for name in ("spend-balance", "spend-history", "spend-pack-total"):
        assert name in screen
    assert "⚠" not in screen.splitlines()[-1]  # no failed check counted


def test_a_whole_session_without_faults_has_no_finding(start_stub, tui):
    """Every tab, pages of history, a spend, a purchase and its replay: no false positive."""
    s = start_stub("--quiet")
    t = tui(s.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.keys("2")
    t.wait_for("entry 1 of 230")
    for _ in range(4):
        t.keys("]")
    t.wait_for("page 5 of 5")
    t.keys("G", "g", "3", "j", "1")
    spend_in_tui(t, 5)
    t.wait_for("✔ 3 checks passed")
    t.keys("Enter", "b")
    tx = transaction_id(t)
    assert "made up by this tool: no App Store purchase has this id" in t.screen()  # issue 46: said, not hidden
    t.keys("Enter")
    t.wait_for("Buy 200 cheer")
    t.keys("y")
    t.wait_for("✔ 1 check passed")
    # The same transaction again: refused with 409, and the balance must not move.
    t.keys("Enter", "b")
    t.wait_for("Transaction")
    t.keys("Tab", *(["BSpace"] * 24), tx, "Enter")
    assert tx in t.wait_for("┌─ Confirm")
    t.keys("y")
    replay = t.wait_for(f"Transaction {tx} was already credited")
    # Issue 46: a 409 every check agrees with is not "Failed" above "✔ 1 check passed".
    assert "┌─ Already credited" in replay and "Failed" not in replay, replay
    t.keys("Enter", "4")
    screen = t.wait_for("5 checks · 0 failed")
    assert "replay-unchanged" in screen and "purchase-balance" in screen
    assert "⚠" not in screen  # no finding anywhere: not in the list, not in the status bar


def test_writes_behind_a_lagging_replica_pass_and_the_lag_is_one_finding(start_stub, tui):
    """Issue 35: every read within 1 s of a write answers the state from before it. A spend and a purchase in
    the TUI are judged on the reads that settle (about 1.5 s later): both pass, the header never shows the
    older balance after the answer, and the lag is one grouped finding on the Checks tab."""
    s = start_stub("--quiet", "--fault", "stale_read,rate=1,ms=1000")
    t = tui(s.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    spend_in_tui(t, 5)
    t.wait_for("✔ 3 checks passed", timeout=15)
    assert "Balance 1,245 cheer" in t.screen()
    t.keys("Enter", "b")
    transaction_id(t)
    t.keys("Enter")
    t.wait_for("Buy 200 cheer")
    t.keys("y")
    t.wait_for("✔ 1 check passed", timeout=15)
    assert "Balance 1,445 cheer" in t.screen()
    t.keys("Enter", "4")
    screen = t.wait_for("stale-read")
    assert "spend-balance" in screen and "purchase-balance" in screen
    # One record in the list (left of the detail pane), counted ×2: the spend's lag and the purchase's.
    rows = [line.split("│")[0] for line in screen.splitlines() if "stale-read" in line.split("│")[0]]
    assert len(rows) == 1 and "stale-read ×2" in rows[0], screen
    assert "⚠ 1" in screen.splitlines()[-1], screen.splitlines()[-1]
    assert s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"][0]["hits"] >= 2  # the reads did lag


def test_contract_findings_show_in_the_checks_tab_and_mark_their_request(start_stub, tui):
    # Every fault the stand-in can make a response deviate with, each on the first answer it fits.
    s = start_stub("--quiet", "--fault", "bad_paging,path=/api/v1/cheer_history,count=1",
                   "--fault", "out_of_order,path=/api/v1/cheer_history,count=1",
                   "--fault", "duplicate_entry,path=/api/v1/cheer_history,index=3,count=1",
                   "--fault", "malformed_entry,path=/api/v1/cheer_history,index=10,count=1",
                   "--fault", "content_type,path=/api/v1/audio_packs,count=1",
                   "--fault", "no_request_id,path=/api/v1/balance,count=1")
    t = tui(s.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.wait_for("46 of 46 packs")  # the data shows despite the label
    screen = t.wait_for("⚠ ")  # the status bar counts the findings
    t.keys("4")
    # The tab line, not the detail pane's "✗ … failed" (a frame reaches tmux in several writes).
    names = ("paging", "order", "duplicate", "schema", "content-type", "request-id")
    screen = t.wait_screen(lambda s: re.search(r"\d+ checks · \d+ failed", s) and all(f"✗ {n}" in s for n in names),
                           what="the Checks tab with every finding")
    for check in names:
        assert f"✗ {check}" in screen, screen
    assert re.search(r"(\d+) checks · \1 failed", screen), screen  # every one a finding: nothing passed by mistake
    t.keys("2")
    assert "unreadable entry" in t.wait_for("entry 1 of 230")  # the malformed entry shows in its place
    t.keys("3")
    screen = t.wait_for("⚠ GET /api/v1/cheer_history")
    assert "⚠ GET /api/v1/audio_packs" in screen


def test_status_and_retry_after_findings_in_the_tui(tui):
    """What the stand-in cannot be made to send: a 201 and a 429 whose Retry-After says "soon"."""
    from test_checks import serve_once
    created = serve_once(201, {"Content-Type": "application/json", "X-Request-Id": "rq-201"}, b'{"balance":77}')
    limited = serve_once(429, {"Content-Type": "application/json", "X-Request-Id": "rq-429", "Retry-After": "soon"},
                         b'{"message":"slow down"}')
    try:
        t = tui(f"http://127.0.0.1:{created.server_port}", width=140, height=40, args=["--timeout", "3"])
        t.wait_for("Balance 77 cheer")  # the data shows
        t.keys("4")
        screen = t.wait_for("✗ status")
        assert "GET /api/v1/balance" in screen
        u = tui(f"http://127.0.0.1:{limited.server_port}", width=140, height=40, args=["--timeout", "3"])
        u.wait_screen(lambda s: re.search(r"✖ GET /api/v1/\S+: HTTP 429 Too Many Requests: slow down \(request id rq-429\)", s),
                      what="the 429's error line")
        u.keys("4")
        u.wait_for("✗ retry-after", timeout=15)
    finally:
        created.shutdown()
        limited.shutdown()


# ---------------------------------------------------------------------------------------------------
# Evidence for a bug report (issue 13): copy as curl, and from an error to its request.

def copied(t):
    """What the app last put on the clipboard with OSC 52 (tmux keeps it as its newest buffer)."""
    return tmux("show-buffer", check=False).stdout  # none yet: ""


def test_copy_as_curl_reproduces_the_request(start_stub, tui, tmp_path):
    import subprocess as sp
    s = start_stub("--quiet")
    tmux("set-option", "-g", "set-clipboard", "on")
    t = tui(s.url, width=140, height=40, env={"REITERATE_TOKEN": "dev-token"})
    t.wait_for("Balance 1,250 cheer")
    spend_in_tui(t, 3)
    t.wait_for("✔ 3 checks passed")
    t.keys("Enter", "3")
    t.wait_for("POST /api/v1/spend_cheer")
    # The GET for the balance, and the spend's POST: each copied, then run by a shell.
    for request in ("GET /api/v1/balance", "POST /api/v1/spend_cheer"):
        t.keys("g")
        screen = t.settled(t.screen())
        # The list is the left half of the screen (the detail pane is on the right).
        rows = [line[:70] for line in screen.splitlines()[3:-2] if "/api/v1/" in line[:70]]
        index = next(i for i, line in enumerate(rows) if request in line)
        previous = copied(t)
        t.keys(*(["j"] * index), "c")
        command = wait_until(lambda: copied(t), lambda c: c != previous, timeout=5, what="a new curl line in tmux's buffer")
        assert ("-X POST" in command) == request.startswith("POST"), (request, command)
        assert command.startswith("curl -sS ") and "dev-token" not in command and '"Authorization: Bearer $REITERATE_TOKEN"' in command, command
        before = s.get("/api/v1/balance?user_id=qa-alice").json()["balance"]
        out = sp.run(["bash", "-c", command + " -o " + str(tmp_path / "body") + " -w '%{http_code}'"],
                     capture_output=True, text=True, env={**os.environ, "REITERATE_TOKEN": "dev-token"}, timeout=10)
        assert out.stdout == "200", (command, out.stdout, out.stderr)
        body = (tmp_path / "body").read_text()
        if request.startswith("GET"):
            assert json.loads(body) == {"balance": before}
        else:
            assert json.loads(body) == {"balance": before - 3}  # the same spend, sent again by hand


def balance_500(s, t):
    """A refresh the stand-in answers with 500 (every retry): the error's request id."""
    s.fault(kind="status", status=500, path="/api/v1/balance", count=3)
    t.keys("r")
    screen = t.wait_for("HTTP 500")
    return re.search(r"request id (rq-[0-9a-f]+)", screen).group(1)


def test_bang_opens_the_request_behind_the_error(start_stub, tui):
    s = start_stub("--quiet")
    t = tui(s.url, width=140)
    t.wait_for("Balance 1,250 cheer")
    request_id = balance_500(s, t)
    t.keys("!")
    screen = t.wait_for("┌─ Request")
    assert "1 Shop   2 History   3 Requests" in screen and f"request id {request_id}" in screen, screen


def test_bug_report_for_an_injected_500_has_its_request_id_curl_and_steps(start_stub, tui, tmp_path):
    s = start_stub("--quiet")
    tmux("set-option", "-g", "set-clipboard", "on")
    t = tui(s.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.keys("2")
    t.wait_for("entry 1 of 230 · page 1 of 5")
    t.keys("]")
    t.wait_for("entry 51 of 230 · page 2 of 5")
    request_id = balance_500(s, t)
    t.keys("R")
    screen = t.wait_for("bug report written (path copied): /")
    reports = tmp_path / "state" / "reiterate-shop" / "reports"
    [report] = list(reports.iterdir())
    assert copied(t) == str(report)
    assert oct(report.stat().st_mode & 0o777) == "0o600" and oct(reports.stat().st_mode & 0o777) == "0o700"
    text = report.read_text()
    assert text.startswith("# GET /api/v1/balance: HTTP 500"), text
    assert f"- **Request id:** `{request_id}`" in text, text
    assert f"curl -sS '{s.url}/api/v1/balance?user_id=qa-alice' -H" in text and '"Authorization: Bearer $REITERATE_TOKEN"' in text, text
    steps = text.split("## Steps")[1].split("##")[0]
    for step in ("started reiterate-shop as qa-alice on LOCAL", "opened the History tab", "went to entry 51 of 230 · page 2 of 5",
                 "refreshed (r)", "→ the app showed: GET /api/v1/balance: HTTP 500"):
        assert step in steps, steps
    assert "## The screen" in text and "2 History" in text.split("## The screen")[1]  # the screen as it was
    assert "dev-token" not in text
    # e: the session as HAR, read back by mitmproxy.
    from test_checks import har_requests
    t.keys("e")
    screen = t.wait_for("written (path copied): /")
    [har] = list((tmp_path / "state" / "reiterate-shop" / "har").iterdir())
    flows = har_requests(har)
    assert any(f.endswith("/api/v1/balance?user_id=qa-alice 500") for f in flows) and any("page=2" in f for f in flows), flows
    assert "dev-token" not in har.read_text()


def test_a_failed_write_early_in_a_long_session_is_in_the_har(start_stub, tui, tmp_path):
    """Issue 35: the request log keeps the last 100 reads in memory and spills the older ones to the state
    folder: after a spend answered 500 and 150 reads more, the session's HAR (read back by mitmproxy) holds
    the failed write and every read."""
    from test_checks import har_requests
    s = start_stub()
    s.fault(kind="status", status=500, path="/api/v1/spend_cheer", count=1)
    t = tui(s.url, width=140, height=40, args=("--user", "qa-whale"))
    t.wait_for("Balance 1,000,000 cheer")
    spend_in_tui(t, 5)
    screen = t.wait_for("✔ 1 check passed", timeout=15)  # its reads have settled
    assert "POST /api/v1/spend_cheer: HTTP 500" in screen and "the spend was not applied" in screen, screen
    t.keys("Enter")

    def reads_since_write():
        log = s.log().splitlines()
        at = max(i for i, line in enumerate(log) if "POST /api/v1/spend_cheer" in line)
        return sum(1 for line in log[at:] if line.startswith("GET /api/"))

    # 150 reads more: the whale's history, page after page (each a read).
    t.keys("2")
    for _ in range(150):  # each round of 20 pages forward adds a few reads (at least one, or it fails)
        before = reads_since_write()
        if before >= 150:
            break
        t.keys(*["]"] * 20)
        wait_until(reads_since_write, lambda n: n > before, timeout=10, what="the pages' reads after 20 × ]")
    assert reads_since_write() >= 150
    served = sum(1 for line in s.log().splitlines() if line.startswith("GET /api/"))
    t.keys("e")
    t.wait_for("written (path copied): /")
    [har] = list((tmp_path / "state" / "reiterate-shop" / "har").iterdir())
    flows = har_requests(har)
    assert any(f.endswith("/api/v1/spend_cheer?user_id=qa-whale 500") for f in flows), flows[:5]
    # Every read the stand-in served before `e`, not only the 100 kept in memory (the rest were spilled).
    assert sum(1 for f in flows if f.startswith("GET ")) >= served > 100, (len(flows), served)
    spilled = list((tmp_path / "state" / "reiterate-shop" / "sessions").iterdir())
    assert len(spilled) == 1 and oct(spilled[0].stat().st_mode & 0o777) == "0o600", spilled


def test_a_hanging_write_shows_as_pending_with_its_time(start_stub, tui):
    s = start_stub("--quiet")
    t = tui(s.url, width=140, args=["--timeout", "8"])
    t.wait_for("Balance 1,250 cheer")
    s.fault(kind="hang", path="/api/v1/spend_cheer", seconds=30, count=1)
    spend_in_tui(t, 3)
    t.wait_for("┌─ Sending")
    t.keys("Escape", "3")  # put the dialog away, look at the requests
    screen = t.wait_for("POST /api/v1/spend_cheer")
    row = next(line for line in screen.splitlines() if "POST /api/v1/spend_cheer" in line)
    assert "…" in row and re.search(r"\d+\.\d s", row), row

    def spend_row(screen):
        return next((line for line in screen.splitlines() if "POST /api/v1/spend_cheer" in line), "")

    # The time moves while it hangs: a later frame shows the row pending with another time.
    t.wait_screen(lambda s: spend_row(s) != row and "…" in spend_row(s) and re.search(r"\d+\.\d s", spend_row(s)),
                  what="the pending row's time moved on")
    # When the client gives up (--timeout 8), the row takes its outcome, and the message line says which.
    screen = t.wait_screen(lambda s: re.search(r"POST /api/v1/spend_cheer\S*\s+ERR\s+\d+ ms", s), timeout=20,
                           what="the spend's row ending ERR")
    assert re.search(r"ERR\s+(79\d\d|8\d\d\d) ms", spend_row(screen)), spend_row(screen)  # given up at the timeout, 8 s
    t.wait_for("✖ POST /api/v1/spend_cheer: timed out waiting for the server")
    # Then, once the balance is read again, what became of it.
    screen = t.wait_for("the spend was not applied (balance 1,250, unchanged)", timeout=15)
    line = screen.splitlines()[-2]
    assert line.lstrip().startswith("✖ POST /api/v1/spend_cheer: timed out waiting for the server — the spend was not applied"), screen


# ---------------------------------------------------------------------------------------------------
# Issue 14's fault matrix: the rough edges it found, each pinned here.

def opened(start_stub, tui, **kw):
    """A fresh stand-in and the app on it, once the balance shows."""
    s = start_stub("--quiet")
    t = tui(s.url, **kw)
    t.wait_for("Balance 1,250 cheer")
    return s, t


def test_after_a_put_away_spend_the_next_spend_starts_in_the_amount_field(start_stub, tui):
    s, t = opened(start_stub, tui, width=120)
    s.fault(kind="latency", ms=1500, path="/api/v1/spend_cheer", count=1)
    t.keys("1")
    t.wait_for("46 of 46 packs")
    t.keys("g", "s")
    t.wait_for("Spend cheer")
    t.keys("3", "Tab", "x")  # the cursor was in the comment field when the dialog went
    t.keys("Enter")
    t.wait_for("Spend 3 cheer on")
    t.keys("y")
    t.wait_for("┌─ Sending")
    t.keys("Escape")
    screen = t.wait_for("Still sending")
    notice = screen.splitlines()[-2]
    assert "✔" not in notice and "still sending" in notice.lower(), notice  # no success tick while nothing is known
    t.wait_for("3 checks passed", timeout=15)
    t.keys("s")
    t.wait_for("Spend cheer")
    t.keys("7")
    screen = t.wait_for("Amount")
    amount = next(line for line in screen.splitlines() if "Amount" in line)
    comment = next(line for line in screen.splitlines() if "Comment" in line)
    assert "7" in amount and "7" not in comment, screen


def test_an_error_line_clears_when_the_same_request_later_succeeds(start_stub, tui):
    s, t = opened(start_stub, tui, width=140)
    s.fault(kind="status", status=500, path="/api/v1/balance", count=3)
    t.keys("r")
    t.wait_for("✖ GET /api/v1/balance: HTTP 500")
    t.keys("r")
    screen = t.wait_for("recovered")
    assert "✖" not in screen and "server error" not in screen.splitlines()[0], screen


@pytest.mark.parametrize("status,word", [(400, "client error"), (401, "sign-in refused"), (403, "forbidden"), (404, "not found")])
def test_client_errors_are_not_called_server_errors(start_stub, tui, status, word):
    s, t = opened(start_stub, tui, width=140)
    s.fault(kind="status", status=status, path="/api/v1/balance", count=1)
    t.keys("r")
    header = t.wait_for(f"HTTP {status}").splitlines()[0]
    assert word in header and "server error" not in header, header


def test_a_revoked_token_says_what_to_do(start_stub, tui):
    s = start_stub("--quiet")
    t = tui(s.url, width=200, env={"REITERATE_TOKEN": "revoked-token"})
    screen = t.wait_for("HTTP 401")
    line = next(l for l in screen.splitlines() if "HTTP 401" in l and "✖" in l)
    assert "REITERATE_TOKEN" in line and "refresh" in line, line


def test_a_402_names_its_request_once(start_stub, tui):
    s, t = opened(start_stub, tui, width=200)
    s.fault(kind="status", status=402, path="/api/v1/spend_cheer", count=1)
    spend_in_tui(t, 5)
    screen = t.wait_for("┌─ Failed")
    t.keys("Enter")
    line = t.wait_for("✖ POST /api/v1/spend_cheer").splitlines()[-2]
    assert "POST /api/v1/spend_cheer" in line and "request id rq-" in line, line
    assert "nothing was spent" in line.lower() and line.lower().count("enough") <= 1, line


def test_a_long_error_line_keeps_its_request_id_and_its_end(start_stub, tui):
    s, t = opened(start_stub, tui, width=80)
    s.fault(kind="status", status=503, path="/api/v1/balance", count=3, message="x" * 300 + " the end")
    t.keys("r")
    line = t.wait_for("HTTP 503").splitlines()[-2]
    assert line.lstrip().startswith("✖ GET /api/v1/balance: HTTP 503") and "…" in line and line.rstrip().split(" (request id")[0].endswith("_fault]"), line
    assert re.search(r"\(request id rq-[0-9a-f]+\)\s*$", line), line


@pytest.mark.parametrize("width", [80, 100])
def test_the_request_detail_wraps_at_url_delimiters(start_stub, tui, width):
    s = start_stub("--quiet")
    t = tui(s.url, width=width)
    t.wait_for("Balance 1,250 cheer")
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.keys("3")
    screen = t.wait_for("GET /api/v1/cheer_hist")
    # The history page's row (which request is newest depends on which answer came last).
    rows = [line.split("│")[0] for line in screen.splitlines()[3:-2] if "GET /api/v1/" in line.split("│")[0]]
    index = next(i for i, row in enumerate(rows) if "cheer_hist" in row)
    t.keys("g", *(["j"] * index))

    def detail(screen):
        return [line.split("│")[1].strip() for line in screen.splitlines() if line.count("│") >= 2]

    screen = t.wait_screen(lambda s: any("cheer_history" in line for line in detail(s)[:3]), what="the history request's detail")
    pane = detail(screen)
    url_lines = [line for line in pane if re.search(r"[?&]|cheer_history|^'?http", line)]
    assert sum("per_page=50" in line for line in pane) == 2, pane  # whole, in the request line and in the curl command
    for line in url_lines:  # a URL broken over lines breaks after a delimiter
        if not line.endswith("'") and not line.endswith("50") and " " not in line.split("/")[-1]:
            assert line[-1] in "&?/,;=-.:", (line, pane)


def test_the_header_says_tls_error_not_offline(start_stub, tui, certificates):
    s = start_stub("--quiet", "--tls-cert", str(certificates / "right.pem"), "--tls-key", str(certificates / "right.key"))
    t = tui(s.url, width=140)  # no ca_file: the throwaway CA is not trusted
    screen = t.wait_for("TLS error")
    assert "offline" not in screen.splitlines()[0] and "set ca_file" in screen, screen


def test_u_switches_users_each_with_their_own_balance_and_place(start_stub, tui, tmp_path):
    s = start_stub("--quiet")
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'[environments.qa]\nbase_url = "{s.url}"\nuser = "qa-alice"\nusers = ["qa-alice", "qa-whale"]\n')
    whale = s.get("/api/v1/balance?user_id=qa-whale").json()["balance"]
    whale_total = s.get("/api/v1/cheer_history?user_id=qa-whale&page=1&per_page=1").json()["total_count"]
    t = tui(s.url, width=140, env={"XDG_CONFIG_HOME": str(tmp_path / "config")}, args=["--env", "qa"])
    t.wait_for("Balance 1,250 cheer")
    t.keys("2")
    t.wait_for("entry 1 of 230")
    t.keys("j", "j", "j")
    t.wait_for("entry 4 of 230")
    t.keys("u")
    t.wait_for("Tab: qa-whale")
    t.keys("Tab")
    t.wait_for("user: qa-whale")
    t.keys("Enter")
    screen = t.wait_for(f"Balance {whale:,} cheer")
    assert "qa-whale" in screen.splitlines()[0] and "qa-alice" not in screen.splitlines()[0], screen
    t.wait_for(f"entry 1 of {whale_total:,}")
    t.keys("u", *"qa-alice", "Enter")
    screen = t.wait_for("entry 4 of 230")
    assert "qa-alice" in screen.splitlines()[0] and "Balance 1,250 cheer" in screen.splitlines()[0], screen


def entries_reads(lines):
    """Where the watch read the newest entries (`per_page=20`, once a round; again when the balance moved
    during the round) in the stand-in's log lines."""
    return [i for i, line in enumerate(lines) if line.startswith("GET /api/v1/cheer_history") and "per_page=20" in line]


def wait_round(s):
    """Waits for a whole round of the watch begun after now: its entries read, and the balance read after it."""
    begun = len(entries_reads(s.log().splitlines()))

    def closed(lines):
        reads = entries_reads(lines)
        return len(reads) > begun and any(line.startswith("GET /api/v1/balance") for line in lines[reads[begun] + 1:])

    wait_until(lambda: s.log().splitlines(), closed, timeout=10, what="a whole round of the watch",
               show=lambda lines: "\n".join(lines[-8:]))


def reads_since(s, write):
    """The watch's reads of the newest entries since the last request `write` in the stand-in's log."""
    lines = s.log().splitlines()
    at = max(i for i, line in enumerate(lines) if line.startswith(write))
    return len(entries_reads(lines[at:]))


def test_the_live_tab_reconciles_what_another_process_does(start_stub, tui, tmp_path):
    """Issue 19: the TUI watches qa-alice while another process (the phone) spends 7 cheer with a
    comment and buys a bundle through the stand-in's API; within two rounds of the watch the Live tab
    shows both, reconciled. Then a debit with no entry is flagged, beside the reads on both sides.
    "Within N rounds" is counted in the watch's reads in the stand-in's log, not in wall time (which
    stretches on a loaded machine): a read of the entries more may come while the balance moved during
    the round, and one more may begin while the frame reaches the screen."""
    s = start_stub()
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'[environments.qa]\nbase_url = "{s.url}"\nwatch_interval = 1\nnotify = "none"\n')
    t = tui(s.url, width=140, height=32, env={"XDG_CONFIG_HOME": str(tmp_path / "config")}, args=["--env", "qa", "--watch"])
    t.wait_for("● watching 1 s")
    t.keys("2")
    t.wait_for("entry 1 of 230")
    wait_round(s)  # a baseline round: the watch has read the state before the spend
    r = s.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": 7,
                                                               "comment": "great pack"}, timeout=5)
    assert r.status_code == 200, r.text
    # The History tab shows the new entry marked `+` for a moment, and the header the balance's change.
    screen = t.wait_for("(−7)", timeout=15)
    assert reads_since(s, "POST /api/v1/spend_cheer") <= 4, s.log()[-1500:]  # two rounds (and the two reads more above)
    rows = screen.splitlines()
    assert "Balance 1,243 cheer (−7)" in rows[0] and any(line.startswith("+") and "Rain on a Tin Roof" in line for line in rows), screen
    # Briefly: the marks go again.
    t.wait_screen(lambda s: "(−7)" not in s and not any(line.startswith("+") for line in s.splitlines()), timeout=15,
                  what="the header's (−7) and the entry's + gone")
    t.keys("5")
    r = s.post("/api/v2/purchase_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "identifier": "com.reiterate.cheer.200",
                                                                  "transaction_id": 424242}, timeout=5)
    assert r.status_code == 200, r.text
    # Within two intervals (one balance event, or two when a round fell between the two writes).
    screen = t.wait_for("a purchase of 200 cheer (bundle 200)", timeout=15)
    assert reads_since(s, "POST /api/v2/purchase_cheer") <= 4, s.log()[-1500:]  # two rounds (and the two reads more above)
    rows = screen.splitlines()
    entry = next(line for line in rows if "new entry: 7 cheer on Rain on a Tin Roof “great pack”" in line)
    balances = [line for line in rows if re.search(r"balance 1,2[45]\d → 1,[24]4\d", line)]
    assert "✔" in entry and balances and all("✔" in line for line in balances), screen
    assert "Balance 1,443 cheer" in rows[0], screen  # the header follows the watch
    # A debit with no entry: flagged, in the Live tab and the Checks tab, with the status bar's count.
    s.http.post(s.url + "/_stub/faults", json={"kind": "no_entry", "path": "/api/v1/spend_cheer", "count": 1}, timeout=5)
    s.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": 3}, timeout=5)
    screen = t.wait_for("[debit-without-entry]", timeout=15)
    # A round that would make a finding is read twice more before it is judged (settled reads).
    assert reads_since(s, "POST /api/v1/spend_cheer") <= 5, s.log()[-1500:]  # three rounds (and the two reads more above)
    assert "✗" in next(line for line in screen.splitlines() if "[debit-without-entry]" in line) and "⚠ 1" in screen, screen
    t.keys("4")
    screen = t.wait_for("debit-without-entry")
    assert "watch of qa-alice" in screen, screen
    # w pauses the watch: the badge says so, and w resumes it.
    t.keys("w")
    screen = t.wait_for("Watch paused")
    assert "‖ paused" in screen.splitlines()[0] and "● watching" not in screen.splitlines()[0], screen
    t.keys("w")
    screen = t.wait_for("● watching 1 s")


def test_p_pins_an_answer_and_a_later_different_answer_is_a_finding(stub, tui, tmp_path):
    """Issue 20: P on the balance's row of the Requests tab pins its answer (◉); the phone spends; r
    reads the balance again, and the Checks tab holds a finding `pinned` with the difference."""
    t = tui(stub.url, width=120, height=32)
    t.wait_for("Balance 1,250 cheer")
    t.keys("3")
    screen = t.wait_for("GET /api/v1/balance")

    def detail_heading(screen):
        # The detail panel's first line names the selected request.
        line = screen.splitlines()[3]
        return line.split("│")[1] if "│" in line else ""

    rows = [line.split("│")[0] for line in screen.splitlines()[3:-2] if re.search(r"(GET|POST) /api/", line.split("│")[0])]
    index = next(i for i, row in enumerate(rows) if "GET /api/v1/balance" in row)
    t.keys("g", *(["j"] * index))
    t.wait_screen(lambda s: "GET /api/v1/balance" in detail_heading(s), what="the balance's request selected")
    t.keys("P")
    screen = t.wait_for("Pinned GET /api/v1/balance?user_id=qa-alice")
    assert any(line.startswith("◉") and "/api/v1/balance" in line for line in screen.splitlines()), screen
    assert "◉ pinned" in screen, screen  # the detail says it in words
    assert "◉ pinned: GET /api/v1/balance?user_id=qa-alice" in screen.splitlines()[1], screen  # the tab lists the pins
    pins = json.loads((tmp_path / "state" / "reiterate-shop" / "pins" / "local.json").read_text())
    assert [p["request"] for p in pins["pins"]] == ["GET /api/v1/balance?user_id=qa-alice"], pins
    r = stub.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": 7}, timeout=5)
    assert r.status_code == 200, r.text
    t.keys("r")
    t.wait_for("Balance 1,243 cheer")
    t.keys("4")
    screen = t.wait_for("balance.balance 1250 → 1243")
    assert any("pinned" in line and "✗" in line for line in screen.splitlines()), screen


def test_d_compares_the_shop_tab_with_another_environment_and_s_saves_a_snapshot(start_stub, tui, tmp_path):
    """Issue 20: D on the Shop tab, Tab completes the other environment, Enter shows the diff view
    (glyph and word per row), n moves between differences, Esc goes back; S saves a snapshot that D
    then offers."""
    one, two = start_stub("--quiet"), start_stub("--quiet")
    packs = two.get("/api/v1/audio_packs").json()["packs"]
    price = next(p for p in packs if p["identifier"] == "com.reiterate.pack.rain")["price_cents"]
    two.http.put(f"{two.url}/_stub/packs/com.reiterate.pack.rain", json={"price_cents": price + 50}, timeout=5)
    two.http.delete(f"{two.url}/_stub/packs/{packs[-1]['identifier']}", timeout=5)
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'default_environment = "one"\n[environments.one]\nbase_url = "{one.url}"\n'
                                        f'[environments.two]\nbase_url = "{two.url}"\n')
    t = tui(one.url, width=120, height=32, env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    t.wait_for("Balance 1,250 cheer")
    t.keys("D")
    t.wait_for("compare the packs with:")
    t.keys("Tab")
    t.wait_for("env:two▏")
    t.keys("Enter")
    screen = t.wait_for("2 differences: 1 changed, 1 removed")
    rows = screen.splitlines()
    assert any(l.lstrip().startswith("~ changed") and "packs[com.reiterate.pack.rain].price_cents" in l for l in rows), screen
    assert any(l.lstrip().startswith("− removed") and packs[-1]["identifier"] in l for l in rows), screen
    assert f"│ {price}" in screen and f"│ {price + 50}" in screen, screen  # A and B side by side
    t.keys("n")
    screen = t.wait_for("(not there)")
    t.keys("Escape")
    screen = t.wait_screen(lambda s: re.search(r"NAME +CREATOR +PRICE", s), what="the Shop tab's list again")
    assert "46 of 46 packs" in screen.splitlines()[1] and "CHANGE" not in screen, screen
    # S: a snapshot, which D's Tab then offers; comparing with it says the same.
    t.keys("S")
    screen = t.wait_for("Saved the snapshot")
    t.keys("D", "Tab", "Tab")
    screen = t.wait_for("compare the packs with: " + str(tmp_path / "state" / "reiterate-shop" / "snapshots")[:30])
    t.keys("Enter")
    t.wait_for("The same: no difference")
    assert len(list((tmp_path / "state" / "reiterate-shop" / "snapshots").iterdir())) == 1
