"""Issue 44 (one judge): verdicts on the writes that explain them, against the real binaries.

The stand-in's `stale_read` gains a replica that lags longer than the gap between two writes (`ms=4000`:
the state of 4 s ago, several writes back) and one that stays behind until the next write (`writes=1`).
Against each, correct writes made back to back fail no check, `negative` finds only the lag, and a real
wrong debit is still flagged. The shop's rules in words: a 402 while the balance covers the amount is a
failed check, and `spend`/`buy` exit 65 on a failed check without `--strict`."""
import http.server
import json
import re
import tempfile
import threading

import pytest

from conftest import shop, warnings
from test_settled_reads import twenty_correct_writes

RAIN = "com.reiterate.pack.rain"
LAGS = ["stale_read,rate=1,ms=4000", "stale_read,rate=1,writes=1"]


def test_the_stand_in_replica_lags_several_writes_or_one_write_until_the_next(start_stub):
    s = start_stub("--fault", "stale_read,rate=1,writes=1")
    assert [(f["kind"], f["writes"]) for f in s.get("/_stub/faults").json()["faults"]] == [("stale_read", 1)]
    balance = lambda: s.get("/api/v1/balance?user_id=qa-alice").json()["balance"]
    assert balance() == 1250
    s.post("/api/v1/spend_cheer", json={"user_id": "qa-alice", "product": RAIN, "amount": 3})
    assert balance() == 1250  # one write behind, however long it waits
    s.post("/api/v1/spend_cheer", json={"user_id": "qa-alice", "product": RAIN, "amount": 4})
    assert balance() == 1247  # the next write moved it one write on
    timed = start_stub("--fault", "stale_read,rate=1,ms=60000")
    read = lambda: timed.get("/api/v1/balance?user_id=qa-alice").json()["balance"]
    for amount in (1, 2, 3):
        timed.post("/api/v1/spend_cheer", json={"user_id": "qa-alice", "product": RAIN, "amount": amount})
    assert read() == 1250  # three writes within the lag: the state from before all three


@pytest.mark.parametrize("fault", LAGS)
def test_twenty_correct_writes_behind_a_replica_lagging_past_the_next_write_fail_no_check(start_stub, fault):
    s = start_stub("--fault", fault)
    stale = sum("[stale-read]" in w for w in twenty_correct_writes(s.url, judged=False))
    assert "fault=stale_read" in s.log() and stale >= 1
    # What the writes did, on the primary (the answer of one more write tells it): 14 spends of 3, 6 purchases of 50.
    last = s.post("/api/v1/spend_cheer", json={"user_id": "qa-alice", "product": RAIN, "amount": 1}).json()["balance"]
    assert last == 1250 - 14 * 3 + 6 * 50 - 1


@pytest.mark.parametrize("fault", LAGS)
def test_a_wrong_debit_behind_such_a_replica_is_still_flagged(start_stub, fault):
    s = start_stub("--fault", fault)
    cache = tempfile.mkdtemp()
    for _ in range(2):
        r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", "3", "--yes", cache=cache)
        assert r.returncode == 0 and "✗" not in r.stdout, r.stdout + r.stderr
    s.fault(kind="wrong_debit", count=1)
    r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", "3", "--yes", cache=cache)
    # Judged against the state the earlier writes made (1,244), never the lagging read of an older one.
    assert "✗ spend-balance: expected 1,241 (1,244 − 3), got answered 1,240" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 65, r.stdout + r.stderr  # a failed check exits 65 without --strict


@pytest.mark.parametrize("fault", LAGS)
def test_negative_behind_such_a_replica_finds_only_the_lag(start_stub, fault):
    s = start_stub("--fault", fault)
    r = shop("negative", "--base-url", s.url, "--yes", "--pace", "0", timeout=300)
    lines = [line for line in r.stdout.splitlines() if line and not re.match(r"^\d+ findings?", line)]
    assert lines and all(" refused 4" in line and "but it changed" not in line for line in lines), r.stdout
    found = warnings(r.stderr)
    assert all("[stale-read]" in w for w in found) and len(found) <= 1, r.stderr
    assert r.returncode in (0, 65), r.stdout + r.stderr


def test_negative_on_a_lenient_server_behind_a_replica_finds_exactly_the_accepted_cases(start_stub):
    """The accepted case's write shows only in the next case's reads: it is that case's, never the next one's."""
    s = start_stub("--fault", "stale_read,rate=1,writes=1", "--fault", "accept_unknown_product,path=/api/v1/spend_cheer")
    r = shop("negative", "--base-url", s.url, "--yes", "--pace", "0", "--only", "unknown-pack,overspend,amount-zero,amount-negative",
             timeout=300)
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line and not re.match(r"^\d+ findings?", line)}
    assert "ACCEPTED" in lines["unknown-pack"], r.stdout
    others = {name: line for name, line in lines.items() if name != "unknown-pack"}
    assert others and all(" refused 4" in line and "but it changed" not in line for line in others.values()), r.stdout
    case_findings = [w for w in warnings(r.stderr) if "warning: negative " in w]
    assert len(case_findings) == 1 and "negative unknown-pack" in case_findings[0], r.stderr


def test_a_402_for_the_whole_balance_is_a_failed_check(start_stub):
    """A spend of exactly the balance is covered: refused 402 is the shop's rule broken, and exits 65."""
    s = start_stub()
    balance = s.get("/api/v1/balance?user_id=qa-alice").json()["balance"]
    s.fault(kind="status", status=402, message="insufficient_balance", path="/api/v1/spend_cheer", count=1)
    r = shop("spend", "--base-url", s.url, "--product", RAIN, "--amount", str(balance), "--yes")
    assert "✗ insufficient-balance" in r.stdout and "✔ 1 check passed" not in r.stdout, r.stdout
    assert r.returncode == 65, r.stdout + r.stderr
    assert any("[insufficient-balance]" in w and "(request id rq-" in w for w in warnings(r.stderr)), r.stderr


class _ErrorBodyOn200(http.server.BaseHTTPRequestHandler):
    """A shop that answers a spend 200 with the contract's Error object and no balance (the status is the bug:
    the contract says 402), and answers every read as the contract says."""

    balance = 120

    def answer(self, body, status=200):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Request-Id", f"rq-eb-{self.path.split('?')[0].rsplit('/', 1)[-1]}")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/api/v1/balance"):
            self.answer({"balance": self.balance})
        elif self.path.startswith("/api/v1/audio_packs"):
            self.answer({"packs": [{"identifier": RAIN, "name": "Rain", "cheer_total": 5}]})
        else:
            self.answer({"history": [], "page": 1, "per_page": 50, "total_count": 0, "total_pages": 0})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer({"message": "not enough cheer", "code": "insufficient_balance"})

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("balance", [120, 0])
def test_a_200_with_an_error_body_is_told_by_its_status_and_exits_65(balance):
    _ErrorBodyOn200.balance = balance
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ErrorBodyOn200)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = shop("spend", "--base-url", url, "--product", RAIN, "--amount", "5", "--yes", "--unchecked")
        first = r.stdout.splitlines()[0] if r.stdout else ""
        assert "HTTP 200 with an error body (insufficient_balance); the contract says 402: not enough cheer" in first, r.stdout + r.stderr
        assert "(request id rq-eb-spend_cheer)" in r.stdout, r.stdout
        assert "ACCEPTED" not in r.stdout and "no answer" not in r.stdout + r.stderr, r.stdout + r.stderr
        assert r.returncode == 65, r.stdout + r.stderr
    finally:
        server.shutdown()


class _RefusesPerPage200(http.server.BaseHTTPRequestHandler):
    """A shop of 230 entries whose history refuses `per_page` above 100 (the contract allows 1–200)."""

    total = 230

    def answer(self, body, status=200, rid="rq-pp"):
        self.send_bytes(json.dumps(body).encode(), status, rid)

    def send_bytes(self, data, status=200, rid="rq-pp"):
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("X-Request-Id", rid)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/api/v1/balance"):
            return self.answer({"balance": 10})
        if self.path.startswith("/api/v1/audio_packs"):
            return self.answer({"packs": [{"identifier": RAIN, "name": "Rain", "cheer_total": 5}]})
        page = int(re.search(r"[?&]page=(\d+)", self.path).group(1))
        per_page = int(re.search(r"per_page=(\d+)", self.path).group(1))
        if per_page > 100:
            return self.answer({"message": "per_page too large", "code": "bad_request"}, status=400, rid=f"rq-refused-{per_page}")
        ids = range((page - 1) * per_page, min(page * per_page, self.total))
        entries = [{"id": f"h-{i}", "creator": "C", "amount": 1, "product": RAIN,
                    "date": f"2026-11-{1 + (self.total - i) // 1440:02d}T{((self.total - i) // 60) % 24:02d}:{(self.total - i) % 60:02d}:00Z",
                    "comments": []} for i in ids]
        self.answer({"history": entries, "page": page, "per_page": per_page, "total_count": self.total,
                     "total_pages": -(-self.total // per_page)})

    def log_message(self, *args):
        pass


def test_a_legal_page_size_refused_is_a_warning_and_every_entry_is_still_reached(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RefusesPerPage200)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = shop("print", "history", "--all", "--json", "--base-url", url)
        assert r.returncode == 0, r.stdout + r.stderr
        ids = [json.loads(line)["id"] for line in r.stdout.splitlines()]
        assert ids == [f"h-{i}" for i in range(230)], ids[:5]
        refused = [w for w in warnings(r.stderr) if "per_page=200" in w]
        assert len(refused) == 1 and "(request id rq-refused-200)" in refused[0] and "read on in pages of 100" in refused[0], r.stderr
        assert "the contract allows 1–200" in refused[0], refused[0]
        # A snapshot reads the same way: all of the history's first 200 entries, in pages of 100.
        out = tmp_path / "snap.json"
        r = shop("snapshot", "--base-url", url, "--out", str(out))
        assert r.returncode == 0, r.stdout + r.stderr
        assert any("read on in pages of 100" in w for w in warnings(r.stderr)), r.stderr
        pages = [read for read in json.loads(out.read_text())["reads"] if "cheer_history" in read.get("target", "")]
        assert pages and all("per_page=100" in p["target"] for p in pages), [p.get("target") for p in pages]
        assert sum(len(p["body"]["history"]) for p in pages) == 200
    finally:
        server.shutdown()


class _CommentNotUTF8(_RefusesPerPage200):
    """One entry whose comment is stored in Latin-1 (0xE9 for é): its bytes are not UTF-8."""

    def do_GET(self):
        if not self.path.startswith("/api/v1/cheer_history"):
            return super().do_GET()
        body = (b'{"history": [{"id": "s-1", "creator": "C", "amount": 4, "product": "com.reiterate.pack.rain", '
                b'"date": "2026-11-28T10:00:00Z", "comments": [{"signature": "qa-alice", "body": "caf\xe9"}]}], '
                b'"page": 1, "per_page": 50, "total_pages": 1, "total_count": 1}')
        self.send_bytes(body, rid="rq-latin1")


def test_a_comment_not_in_utf8_is_named_by_field_and_byte_and_its_entry_stays_readable():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CommentNotUTF8)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = shop("print", "history", "--json", "--base-url", url)
        entries = json.loads(r.stdout)["history"]
        assert [e.get("id") for e in entries] == ["s-1"] and entries[0]["amount"] == 4, r.stdout + r.stderr
        # The byte that is not UTF-8 reads as �, the rest of the comment as sent; nothing else is invented.
        assert entries[0]["comments"][0]["body"] == "caf\ufffd", entries[0]
        found = [w for w in warnings(r.stderr) if "history[0].comments[0].body" in w]
        assert found and "byte 4 of the value is 0xE9, not UTF-8 — in the entry id=s-1" in found[0] and "(request id rq-latin1)" in found[0], r.stderr
        assert "cannot be converted" not in r.stdout + r.stderr
    finally:
        server.shutdown()
