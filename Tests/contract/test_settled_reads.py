"""Issue 35: verdicts on settled reads, the lag named once, and a history read whole or marked partial —
against the real binaries: the stand-in's `stale_read` (a read replica that lags behind the latest write)
and `short_pages` (pages capped below `per_page`, their paging fields as asked)."""
import http.server
import json
import os
import re
import tempfile
import threading

from conftest import shop, wait_until, warnings

RAIN = "com.reiterate.pack.rain"


def lag_warning(line):
    """A warning the lag explains: the lag itself, or a finding that says it follows from it."""
    return "[stale-read]" in line or "possibly caused by reads that lag" in line


def twenty_correct_writes(url, judged=True):
    """14 spends of 3 and 6 purchases of 50, back to back, each `spend`/`buy` run with one cache between them:
    none fails a check or exits other than 0, and every warning is the lag's (with its request id); with
    `judged`, each verdict has a check that passed (a replica that never shows a write leaves a purchase's
    balance "not judged" instead). The warnings, for the caller to count."""
    cache = tempfile.mkdtemp()
    seen = []
    for i in range(20):
        if i % 3 == 2:
            r = shop("buy", "--base-url", url, "--bundle", "com.reiterate.cheer.50", "--yes", cache=cache)
        else:
            r = shop("spend", "--base-url", url, "--product", RAIN, "--amount", "3", "--yes", cache=cache)
        assert r.returncode == 0, (i, r.stdout, r.stderr)
        assert "✗" not in r.stdout and (not judged or "passed" in r.stdout.splitlines()[0]), (i, r.stdout, r.stderr)
        assert [w for w in warnings(r.stderr) if not lag_warning(w)] == [], (i, r.stderr)
        # Every warning names the request id of the exchange it is about.
        assert all(re.search(r"\(request id rq-|first rq-", w) for w in warnings(r.stderr)), r.stderr
        seen += warnings(r.stderr)
    return seen


def test_twenty_correct_writes_behind_a_lagging_replica_fail_no_check(start_stub):
    s = start_stub("--fault", "stale_read,rate=0.5,ms=1000")
    seen_lag = sum("[stale-read]" in w for w in twenty_correct_writes(s.url))
    # The lag was there (the stand-in answered stale reads) and was named.
    assert "fault=stale_read" in s.log()
    assert seen_lag >= 1
    # What the writes did, read past the stand-in's 1 s lag (a read right after the last write may lag, and
    # then shows an older balance: read until the lag has passed, and at most 10 s): 14 spends of 3, 6 purchases of 50.
    wait_until(lambda: s.get("/api/v1/balance?user_id=qa-alice").json()["balance"], lambda b: b == 1250 - 14 * 3 + 6 * 50,
               10, "the balance the writes made, once the lag has passed")


def test_a_wrong_debit_behind_a_lagging_replica_is_still_flagged(start_stub):
    s = start_stub("--fault", "stale_read,rate=1,ms=1000", "--fault", "wrong_debit,count=1")
    r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", "3", "--yes")
    assert "✗ spend-balance: expected 1,247 (1,250 − 3), got 1,246" in r.stdout, r.stdout + r.stderr
    flagged = [w for w in warnings(r.stderr) if "[spend-balance]" in w]
    assert len(flagged) == 1 and "(request id rq-" in flagged[0], r.stderr
    # The lag that the reads went through is named beside it, once.
    assert sum("[stale-read]" in w for w in warnings(r.stderr)) >= 1, r.stderr


def test_negative_behind_a_lagging_replica_finds_only_the_lag(start_stub):
    s = start_stub("--fault", "stale_read,rate=1,ms=1000")
    r = shop("negative", "--base-url", s.url, "--yes", timeout=180)
    lines = [line for line in r.stdout.splitlines() if line and not re.match(r"^\d+ findings?", line)]
    assert lines and all(" refused 4" in line and "but it changed" not in line for line in lines), r.stdout
    # The setup purchase lagged behind: the one finding is the lag itself, grouped, with its request ids.
    found = warnings(r.stderr)
    assert len(found) == 1 and "[stale-read]" in found[0] and "rq-" in found[0], r.stderr
    assert r.stdout.rstrip().endswith("1 finding") and r.returncode == 65, r.stdout


def test_print_all_reaches_every_entry_through_short_pages(start_stub, stub):
    s = start_stub("--fault", "short_pages,cap=50")
    whole = shop("print", "history", "--all", "--json", "--base-url", stub.url)
    r = shop("print", "history", "--all", "--json", "--base-url", s.url)
    assert r.returncode == 0, r.stderr
    ids = [json.loads(line)["id"] for line in r.stdout.splitlines()]
    assert len(ids) == 230 and ids == [json.loads(line)["id"] for line in whole.stdout.splitlines()]
    paging = [w for w in warnings(r.stderr) if "[paging]" in w and "served 50" in w]
    assert len(paging) == 1 and "(request id rq-" in paging[0] and "in pages of 50" in paging[0], r.stderr
    # The text form ends with the whole count; --find finds what a whole read finds.
    text = shop("print", "history", "--all", "--base-url", s.url)
    assert text.returncode == 0 and text.stdout.rstrip().endswith("230 cheers · qa-alice"), text.stdout[-300:]
    found = shop("print", "history", "--all", "--find", "rain", "--json", "--base-url", s.url)
    expected = shop("print", "history", "--all", "--find", "rain", "--json", "--base-url", stub.url)
    assert found.returncode == 0 and len(expected.stdout.splitlines()) > 3
    assert found.stdout == expected.stdout


def test_per_page_is_honoured_with_all(start_stub):
    s = start_stub()
    r = shop("print", "history", "--all", "--per-page", "40", "--json", "--base-url", s.url)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 230, r.stderr
    asked = re.findall(r"per_page=(\d+)", s.log())
    assert asked and set(asked) == {"40"}, asked


class _ShortThenEmpty(http.server.BaseHTTPRequestHandler):
    """A server whose first page is cut short and whose every page after is empty, while its paging
    fields say 1,234 entries: a history that cannot be read whole."""

    def do_GET(self):
        page = int(re.search(r"page=(\d+)", self.path).group(1))
        per_page = int(re.search(r"per_page=(\d+)", self.path).group(1))
        entries = [] if page > 1 else [
            {"id": f"h-{i}", "creator": "C", "amount": 1, "product": RAIN, "date": "2026-11-01T00:00:00Z", "comments": []}
            for i in range(50)
        ]
        body = json.dumps({"history": entries, "page": page, "per_page": per_page, "total_count": 1234,
                           "total_pages": -(-1234 // per_page)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Request-Id", f"rq-short-{page}-{per_page}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_history_that_stays_incomplete_says_so_and_exits_69():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ShortThenEmpty)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = shop("print", "history", "--all", "--base-url", url)
        assert r.returncode == 69, r.stdout + r.stderr
        assert r.stdout.rstrip().splitlines()[-1].startswith("50 of 1,234 entries read"), r.stdout[-200:]
        assert "incomplete" in r.stdout.splitlines()[-1]
        assert any("the history is incomplete: 50 of 1,234" in w for w in warnings(r.stderr)), r.stderr
    finally:
        server.shutdown()


def test_the_watch_over_random_writes_behind_a_lagging_replica_flags_nothing(start_stub):
    """60 s of the watch while the phone (this test) spends and buys at random, the stand-in's reads lagging
    behind its writes: no balance, entry or credit finding; the lag is one grouped stale-read, told once."""
    from test_watch import Watch, play_phone

    s = start_stub("--fault", "stale_read,rate=0.5,ms=1000")
    seconds = float(os.environ.get("WATCH_LAG_SECONDS", "60"))
    w = Watch(s.url, "--interval", "1", "--for", f"{seconds + 60}s")  # --for: a bound only; play_phone ends the watch
    try:
        events, writes, err = play_phone(s, w, seconds, seed=35, gap=(0.5, 2.5))
    finally:
        w.stop()
    assert writes >= 20, writes
    assert "fault=stale_read" in s.log()  # the reads did lag
    told = [e for e in events if "stale read" in e.get("text", "")]
    assert len(told) <= 1, told
    assert "0 findings" in err, err


def test_snapshot_and_compare_reach_every_entry_through_short_pages(start_stub, stub, tmp_path):
    s = start_stub("--fault", "short_pages,cap=50")
    short, whole = tmp_path / "short.json", tmp_path / "whole.json"
    r = shop("snapshot", "--base-url", s.url, "--history-pages", "2", "--out", str(short))
    assert r.returncode == 0 and "230 history entries" in r.stderr, r.stderr
    # The short answer is a paging finding with its request id; the rest was read in pages of 50.
    assert any("[paging]" in w and "got 50" in w and "(request id rq-" in w for w in warnings(r.stderr)), r.stderr
    assert re.findall(r"per_page=(\d+)", s.log())[-1] == "50"
    r = shop("snapshot", "--base-url", stub.url, "--history-pages", "2", "--out", str(whole))
    assert r.returncode == 0 and "230 history entries" in r.stderr, r.stderr
    # Two snapshots, and the live short-paged server against the whole one: the same.
    r = shop("compare", str(short), str(whole), "--history-pages", "2")
    assert r.returncode == 0 and "The same: no difference." in r.stdout, r.stdout + r.stderr
    r = shop("compare", "user:qa-alice", str(whole), "--base-url", s.url, "--history-pages", "2")
    assert r.returncode == 0 and "The same: no difference." in r.stdout, r.stdout + r.stderr


def test_a_spend_answered_500_that_applied_is_told_so_and_its_missing_entry_flagged(start_stub):
    """Issue 35, item 7: a spend the server applied (debited, with no history entry) and answered 500: `spend`
    says the server failed the spend but applied it, and the missing entry is a failed check of its own."""
    s = start_stub("--fault", "refuse_but_apply,status=500,count=1", "--fault", "no_entry,count=1")
    r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", "3", "--yes")
    first = r.stdout.splitlines()[0]
    assert "the server failed the spend but applied it" in first, r.stdout + r.stderr
    assert "✗ spend-history" in r.stdout and "(request id rq-" in first, r.stdout
    # Not sent again: one POST.
    assert sum(1 for line in s.log().splitlines() if "POST /api/v1/spend_cheer" in line) == 1


def test_a_snapshot_right_after_a_write_keeps_the_settled_balance(start_stub, tmp_path):
    """Issue 35: a snapshot taken while the replica still lags behind the last write does not keep the older
    balance: a read that differs from the one this machine last settled on (the cache) is read again."""
    s = start_stub()
    cache = tempfile.mkdtemp()
    r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", "3", "--yes", cache=cache)
    assert r.returncode == 0 and "Balance 1,247 cheer" in r.stdout, r.stdout + r.stderr
    # From now on, reads within 1.4 s of that spend answer the balance from before it.
    s.fault(kind="stale_read", rate=1, ms=1400)
    out = tmp_path / "after.json"
    r = shop("snapshot", "--base-url", s.url, "--history-pages", "0", "--out", str(out), cache=cache)
    assert r.returncode == 0, r.stderr
    saved = json.loads(out.read_text())
    balance = next(read for read in saved["reads"] if read["target"].startswith("/api/v1/balance"))
    assert balance["body"] == {"balance": 1247}, balance
    # The snapshot's first read did lag (else this test proves nothing), and it was read again past the lag.
    hits = s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"][0]["hits"]
    assert hits >= 1, "the snapshot's first read came after the lag: the machine was too slow for this test"


class _BigBalance(http.server.BaseHTTPRequestHandler):
    """A balance beyond a 64-bit integer (after a huge credit), in valid JSON."""

    def do_GET(self):
        body = b'{"balance": 100000000000000000000}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Request-Id", "rq-big")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_balance_beyond_64_bits_is_named_not_called_invalid_json(tmp_path):
    """Issue 35, item 6: the number is a finding about its field; not "not valid JSON", not offline (75)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _BigBalance)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = shop("print", "balance", "--base-url", url)
        assert r.returncode == 65, r.stdout + r.stderr
        assert "error: GET /api/v1/balance: balance 100000000000000000000 is beyond a 64-bit integer (request id rq-big)" in r.stderr, r.stderr
        assert "not valid JSON" not in r.stderr and "offline" not in r.stdout + r.stderr
        assert any("[schema] expected balance: integer (64-bit), got 100000000000000000000, beyond a 64-bit integer" in w
                   for w in warnings(r.stderr)), r.stderr
    finally:
        server.shutdown()


def test_a_har_of_more_requests_than_the_window_holds_every_one_and_leaves_no_spill(stub, tmp_path):
    """Past the last 100 in memory, exchanges spill to the state folder; the HAR written at the end holds
    them all, in order, and the spill file is gone once it is written."""
    har, state = tmp_path / "all.har", tmp_path / "state"
    r = shop("print", "history", "--all", "--per-page", "2", "--json", "--base-url", stub.url, "--har", har,
             cache=tmp_path / "cache", env={"XDG_STATE_HOME": str(state)}, timeout=120)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 230, r.stderr
    entries = json.loads(har.read_text())["log"]["entries"]
    pages = [int(re.search(r"[?&]page=(\d+)", e["request"]["url"]).group(1)) for e in entries if "cheer_history" in e["request"]["url"]]
    # Every page once, in the order sent (two pages are read at a time, so neighbours may swap).
    assert len(pages) >= 115 and sorted(pages) == list(range(1, len(pages) + 1)), str(pages)
    assert all(e["request"]["url"].startswith(stub.url + "/api/v1/") and e["_requestId"].startswith("rq-") for e in entries)
    assert f"note: wrote {len(entries)} requests to" in r.stderr, r.stderr
    assert os.listdir(state / "reiterate-shop" / "sessions") == []


def _scripted_balances(answers):
    """A server whose balance answers follow `answers` (then repeat the last), each with its own request id."""
    served = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            value = answers[min(len(served), len(answers) - 1)]
            served.append(value)
            body = json.dumps({"balance": value}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-Request-Id", f"rq-b{len(served)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, served


def test_replay_judges_on_two_reads_that_agree_and_leaves_disagreeing_reads_unsettled(tmp_path):
    """Issue 35: `replay`'s verdicts rest on settled reads — a read that flips back is not a change, a
    change seen once and held is one, and reads that keep moving are not judged (exit 2), each with the
    reads' request ids."""
    cases = [
        # (what the server answers after the recording, outcome, exit, warned)
        ([1243, 1243], "changed", 1, False),
        ([1243, 1250, 1250], "matched", 0, True),   # a lagging flip, then the recording again
        ([1250, 1243, 1243], "changed", 1, True),   # a stale first read that matched, then the change held
        ([1243, 1250, 1243], "unsettled", 2, True),
        ([1250, 1250], "matched", 0, False),
    ]
    for i, (answers, outcome, code, warned) in enumerate(cases):
        server, served = _scripted_balances([1250] + answers)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            har = tmp_path / f"b{i}.har"
            assert shop("print", "balance", "--base-url", url, "--har", str(har)).returncode == 0
            r = shop("replay", str(har), "--json", "--base-url", url)
            assert r.returncode == code, (answers, r.stdout, r.stderr)
            read = json.loads(r.stdout)["reads"][0]
            assert read["outcome"] == outcome, (answers, r.stdout)
            assert len(served) == 1 + len(answers), (answers, served)  # exactly the reads needed
            lines = [w for w in warnings(r.stderr) if "[reads-disagree]" in w]
            if warned:
                ids = ", ".join(f"rq-b{n}" for n in range(2, 2 + len(answers)))
                assert len(lines) == 1 and f"(blame not known; request ids {ids})" in lines[0], (answers, r.stderr)
                assert read["request_ids"] == ids.split(", ")
            else:
                assert lines == [] and "request_ids" not in read, (answers, r.stderr)
        finally:
            server.shutdown()


def test_a_pin_is_judged_on_two_answers_that_agree(tmp_path):
    """Issue 35: a pinned answer's difference is a finding only once a read again agrees with it: a stale
    flip back to the pin is none; a difference that holds names both reads."""
    def run(*args):
        return shop(*args, cache=tmp_path / "cache", env={"XDG_STATE_HOME": str(tmp_path / "state")}, timeout=60)

    for answers, pinned in (([1243, 1250], None), ([1243, 1243], ("rq-b2", "rq-b3")), ([1250], None)):
        server, served = _scripted_balances([1250] + answers)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}"
            assert run("pins", "--base-url", url, "--add", "balance").returncode == 0
            r = run("print", "balance", "--base-url", url)
            assert r.returncode == 0, r.stderr
            lines = [w for w in warnings(r.stderr) if "[pinned]" in w]
            assert len(served) == 1 + len(answers), (answers, served)  # read again only while it differed
            if pinned:
                assert len(lines) == 1 and f"(the same in two answers in a row: {', '.join(pinned)})" in lines[0], r.stderr
                assert "changed balance.balance 1250 → 1243" in lines[0]
            else:
                assert lines == [], r.stderr
            assert run("pins", "--base-url", url, "--remove", "all").returncode == 0
        finally:
            server.shutdown()



def test_a_comparison_keeps_the_settled_history_not_a_lagging_first_page(start_stub, tmp_path):
    """Issue 35: a comparison's (and a snapshot's) first history page whose total differs from the one this
    machine last settled on is read again, and the latest kept: a page from before the latest write would
    hide the write's entry from the comparison."""
    s = start_stub()
    cache = tempfile.mkdtemp()
    before = tmp_path / "before.json"
    assert shop("snapshot", "--base-url", s.url, "--history-pages", "1", "--out", str(before), cache=cache).returncode == 0
    r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", "3", "--yes", cache=cache)
    assert r.returncode == 0, r.stdout + r.stderr
    # From now on, reads within 1.4 s of that spend answer the history from before it.
    s.fault(kind="stale_read", rate=1, ms=1400)
    r = shop("compare", str(before), "user:qa-alice", "--what", "history", "--history-pages", "1", "--base-url", s.url, "--json", cache=cache)
    assert r.returncode == 1, r.stdout + r.stderr
    got = sorted((d["kind"], d["rule"]) for d in json.loads(r.stdout)["differences"])
    assert got == [("added", "history[]"), ("changed", "history_total")], r.stdout
    hits = s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"][0]["hits"]
    assert hits >= 1, "the comparison's first read came after the lag: the machine was too slow for this test"
