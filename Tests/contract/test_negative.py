"""Negative tests of the writes (issue 27, items 3–5): what the shop must refuse is expected from its
data, never from the input; the stand-in's lenient faults take each such write; `--unchecked` sends
it as typed; `--strict` scopes to the write; `reiterate-shop negative` runs the catalogue."""
import json
import re
import socket
import threading
import time

from conftest import shop as run_shop
from conftest import warnings

RAIN = "com.reiterate.pack.rain"


def shop(*args, config=None):
    """conftest's `shop`; `negative` runs unpaced, the stand-in being this test's own (the pace itself
    has its test, which says --pace)."""
    if args and args[0] == "negative" and "--pace" not in args:
        args = (*args, "--pace", "0")
    return run_shop(*args, config=config)


def balance(s, user="qa-alice"):
    return s.get(f"/api/v1/balance?user_id={user}").json()["balance"]


def posts(s):
    """The writes the stand-in's request log holds."""
    return [line for line in s.log().splitlines() if "POST /api/" in line]


# ---------------------------------------------------------------------------------------------------
# item 4: expect from the shop, never from the input

def test_an_overspend_the_server_takes_leads_the_verdict_and_is_never_ticked(start_stub):
    s = start_stub()
    s.fault(kind="accept_overspend", path="/api/v1/spend_cheer")
    # Checked (the default): the client refuses before sending.
    r = shop("spend", "--product", RAIN, "--amount", "1255", "--yes", "--base-url", s.url)
    assert r.returncode == 64, r.stdout + r.stderr
    assert "the shop must refuse this spend: 1,255 cheer is more than the balance (1,250 cheer); nothing was sent (add --unchecked" in r.stderr
    assert balance(s) == 1250 and not posts(s)
    # --unchecked: sent as typed; the lenient server takes it.
    r = shop("spend", "--product", RAIN, "--amount", "1255", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65, r.stdout + r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("The server accepted a spend it must refuse: 1,255 cheer is more than the balance (1,250 cheer). Balance -5 cheer."), r.stdout
    assert "✗ refusal-expected" in first
    assert r.stderr.splitlines()[0].startswith("warning: POST /api/v1/spend_cheer: [refusal-expected] expected a refusal (4xx): 1,255 cheer"), r.stderr
    assert "✔" not in r.stdout, r.stdout  # no "✔ spend-balance: -5"
    assert "✗ spend-balance: expected 1,250 (unchanged: the spend must be refused), got -5" in r.stdout
    assert balance(s) == -5


def test_a_purchase_expects_the_environments_bundle_not_the_identifiers_number(start_stub):
    s = start_stub()
    s.fault(kind="accept_any_bundle", path="/api/v2/purchase_cheer")
    r = shop("buy", "--bundle", "com.reiterate.cheer.7", "--yes", "--base-url", s.url)
    assert r.returncode == 64 and "“com.reiterate.cheer.7” is not a bundle this environment sells" in r.stderr, r.stdout + r.stderr
    assert balance(s) == 1250
    r = shop("buy", "--bundle", "com.reiterate.cheer.7", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("The server accepted a purchase it must refuse: “com.reiterate.cheer.7” is not a bundle"), r.stdout
    assert "✔ purchase-balance" not in r.stdout and "✗ purchase-balance: expected 1,250 (unchanged: the purchase must be refused), got 1,257" in r.stdout
    assert "[refusal-expected]" in r.stderr.splitlines()[0]
    # The environment's own list: a bundle it does not name is expected refused, whatever the stand-in sells.
    config = f'[environments.shop]\nbase_url = "{s.url}"\nbundles = ["com.reiterate.cheer.100", "com.reiterate.cheer.500"]\n'
    r = shop("buy", "--bundle", "com.reiterate.cheer.200", "--yes", "--unchecked", "--env", "shop", config=config)
    assert r.returncode == 65 and "[refusal-expected]" in r.stderr, r.stdout + r.stderr
    r = shop("buy", "--bundle", "com.reiterate.cheer.500", "--yes", "--env", "shop", "--strict", config=config)
    assert r.returncode == 0 and "✔ purchase-balance: 1,957" in r.stdout, r.stdout + r.stderr


def test_a_spend_on_a_pack_not_in_the_list_is_expected_refused(start_stub):
    s = start_stub()
    r = shop("spend", "--product", "com.reiterate.pack.nope", "--amount", "5", "--yes", "--unchecked", "--base-url", s.url)
    # Refused, as it must be: no finding, the server's refusal (1).
    assert r.returncode == 1 and "[refusal-expected]" not in r.stderr and "✔ refused-unchanged: 1,250" in r.stdout, r.stdout + r.stderr
    s.fault(kind="accept_unknown_product", path="/api/v1/spend_cheer")
    r = shop("spend", "--product", "com.reiterate.pack.nope", "--amount", "5", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65 and r.stdout.startswith("The server accepted a spend it must refuse: “com.reiterate.pack.nope” is not in the pack list"), r.stdout
    assert "✔" not in r.stdout, r.stdout


def test_amount_minus_three_is_taken_as_a_value(start_stub):
    s = start_stub()
    r = shop("spend", "--product", RAIN, "--amount", "-3", "--yes", "--base-url", s.url)
    assert r.returncode == 64 and "--amount must be 1 or more (add --unchecked to send it as typed)" in r.stderr, r.stderr
    assert "Missing value" not in r.stderr
    r = shop("spend", "--product", RAIN, "--amount=-3", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 1 and "✔ refused-unchanged: 1,250" in r.stdout, r.stdout + r.stderr
    s.fault(kind="accept_nonpositive_amount", path="/api/v1/spend_cheer")
    r = shop("spend", "--product", RAIN, "--amount", "-3", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65 and "below the contract's minimum of 1" in r.stdout.splitlines()[0], r.stdout + r.stderr
    assert balance(s) == 1253


# ---------------------------------------------------------------------------------------------------
# item 3: the lenient faults, each taking one kind of write the shop must refuse (and nothing else)

def test_each_lenient_fault_takes_its_write_and_only_it(start_stub):
    s = start_stub()
    spend = lambda body, user="qa-alice": s.post(f"/api/v1/spend_cheer?user_id={user}", json=body)
    buy = lambda body, user="qa-alice": s.post(f"/api/v2/purchase_cheer?user_id={user}", json=body)
    # Without a fault every one is refused.
    assert spend({"amount": 5, "product": "com.nope"}).status_code == 400
    assert spend({"amount": 5000, "product": RAIN}).status_code == 402
    assert spend({"amount": 0, "product": RAIN}).status_code == 400
    assert spend({"amount": 5, "product": RAIN}, user="qa-nobody").status_code == 404
    assert buy({"identifier": "com.reiterate.cheer.7", "transaction_id": 1}).status_code == 400
    assert buy({"identifier": "com.reiterate.cheer.50", "transaction_id": "2"}).status_code == 400
    assert buy({"identifier": "com.reiterate.cheer.50", "transaction_id": -3}).status_code == 400
    assert balance(s) == 1250
    # With its fault, each is taken.
    cases = [
        ("accept_unknown_product", lambda: spend({"amount": 5, "product": "com.nope"}), 1245),
        ("accept_overspend", lambda: spend({"amount": 5000, "product": RAIN}), 1250 - 5000),
        ("accept_nonpositive_amount", lambda: spend({"amount": -3, "product": RAIN}), 1253),
        ("accept_unknown_user", lambda: spend({"amount": 5, "product": RAIN}, user="qa-nobody"), 1245),
        ("accept_any_bundle", lambda: buy({"identifier": "com.reiterate.cheer.7", "transaction_id": 1}), 1257),
        ("accept_negative_transaction", lambda: buy({"identifier": "com.reiterate.cheer.50", "transaction_id": -3}), 1300),
    ]
    for kind, write, after in cases:
        s.reset()
        fault = s.fault(kind=kind)
        r = write()
        assert r.status_code == 200 and balance(s) == after, (kind, r.status_code, r.text, balance(s))
        listed = s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"]
        assert [f["hits"] for f in listed if f["id"] == fault["id"]] == [1], (kind, listed)
    # A transaction id sent once as a number and once as a string: credited twice.
    s.reset()
    s.fault(kind="retyped_transaction")
    assert buy({"identifier": "com.reiterate.cheer.50", "transaction_id": 42}).status_code == 200
    assert buy({"identifier": "com.reiterate.cheer.50", "transaction_id": 42}).status_code == 409
    assert buy({"identifier": "com.reiterate.cheer.50", "transaction_id": "42"}).status_code == 200
    assert balance(s) == 1350
    # A lenient fault leaves the writes it is not about alone (a 402 is still a 402).
    s.reset()
    s.fault(kind="accept_unknown_product")
    assert spend({"amount": 5000, "product": RAIN}).status_code == 402


# ---------------------------------------------------------------------------------------------------
# item 3: --strict is about the write; --strict=all about every answer

def test_strict_gates_the_write_and_strict_all_every_answer(start_stub):
    s = start_stub()
    # An entry of the history page that is not the newest, unreadable: a finding about another read.
    s.fault(kind="malformed_entry", path="/api/v1/cheer_history", index=3)
    r = shop("spend", "--product", RAIN, "--amount", "7", "--yes", "--strict", "--base-url", s.url)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    note = next(i for i, line in enumerate(lines) if line.startswith("note: findings about other reads (not the spend's: --strict leaves them out)"))
    assert any("history[3]" in line for line in lines[note + 1:] if line.startswith("warning: ")), r.stderr
    assert not any(line.startswith("warning: ") for line in lines[:note]), r.stderr
    r = shop("spend", "--product", RAIN, "--amount", "7", "--yes", "--strict=all", "--base-url", s.url)
    assert r.returncode == 65 and "they count under --strict=all" in r.stderr, r.stdout + r.stderr
    # Without --strict neither sets the status.
    r = shop("spend", "--product", RAIN, "--amount", "7", "--yes", "--base-url", s.url)
    assert r.returncode == 0 and "history[3]" in r.stderr, r.stdout + r.stderr
    # A finding on the write's own answer sets it under --strict.
    s.http.delete(s.url + "/_stub/faults", timeout=5)
    s.fault(kind="no_request_id", path="/api/v1/spend_cheer", count=1)
    r = shop("spend", "--product", RAIN, "--amount", "7", "--yes", "--strict", "--base-url", s.url)
    assert r.returncode == 65 and "note: findings about other reads" not in r.stderr, r.stdout + r.stderr
    assert any("[request-id]" in line for line in warnings(r.stderr)), r.stderr
    # A purchase does not depend on the history: a finding there is another read's.
    s.fault(kind="malformed_entry", path="/api/v1/cheer_history", index=0)
    r = shop("buy", "--bundle", "com.reiterate.cheer.50", "--yes", "--strict", "--base-url", s.url)
    assert r.returncode == 0 and "note: findings about other reads (not the buy's" in r.stderr, r.stdout + r.stderr
    r = shop("buy", "--bundle", "com.reiterate.cheer.50", "--yes", "--strict=all", "--base-url", s.url)
    assert r.returncode == 65, r.stdout + r.stderr


# ---------------------------------------------------------------------------------------------------
# item 5: reiterate-shop negative

LENIENT = [
    ("accept_unknown_product", ["unknown-pack"]),
    ("accept_overspend", ["overspend"]),
    ("accept_nonpositive_amount", ["amount-zero", "amount-negative"]),
    ("accept_unknown_user", ["unknown-user-spend", "unknown-user-purchase"]),
    ("accept_any_bundle", ["not-a-bundle"]),
    ("retyped_transaction", ["transaction-as-text"]),
    ("accept_negative_transaction", ["transaction-negative"]),
] + [({"kind": "lenient_body", "case": name}, [name]) for name in [
    "amount-fraction", "amount-as-text", "amount-missing", "product-missing", "product-not-text", "comment-not-text", "body-not-object",
    "transaction-replayed", "transaction-fraction", "transaction-missing", "identifier-missing", "identifier-not-text",
    "purchase-body-not-object",
]]


def case_lines(stdout):
    return {line.split()[0]: line for line in stdout.splitlines() if line and not SUMMARY.match(line)}


SUMMARY = re.compile(r"^\d+ findings?(, \d+ not judged)?$")


def test_negative_without_yes_lists_and_sends_nothing(start_stub, tmp_path):
    s = start_stub()
    r = shop("negative", "--base-url", s.url)
    assert r.returncode == 0 and "22 cases, nothing sent: add --yes" in r.stdout, r.stdout + r.stderr
    assert "overspend" in r.stdout and "[contract: spendCheer amount minimum 1]" in r.stdout
    assert "/api/" not in s.log(), s.log()  # not even a read
    r = shop("negative", "--base-url", s.url, "--only", "nope")
    assert r.returncode == 64 and "no case named nope" in r.stderr
    config = f'[environments.prod]\nbase_url = "{s.url}"\nread_only = true\n'
    r = shop("negative", "--env", "prod", "--yes", config=config)
    assert r.returncode == 78 and "PROD is read-only: negative tests are refused" in r.stderr, r.stderr
    assert "/api/" not in s.log()


def test_negative_paces_its_requests(start_stub):
    """Issue 35: at most --pace requests a second (10 by default), so a shared staging sees no burst."""
    s = start_stub()
    started = time.monotonic()
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "overspend,amount-zero", "--pace", "10")
    elapsed = time.monotonic() - started
    sent = len([line for line in s.log().splitlines() if "/api/" in line])
    assert r.returncode == 0, r.stdout + r.stderr
    # n requests at 10 a second take at least (n - 1) / 10 s: a lower bound, which no machine's speed breaks.
    assert sent >= 10 and elapsed >= (sent - 1) / 10, (sent, elapsed)
    r = shop("negative", "--base-url", s.url, "--yes", "--pace", "2000")
    assert r.returncode == 64 and "--pace takes 0" in r.stderr


def test_negative_against_the_stand_in_finds_nothing(start_stub):
    s = start_stub()
    r = shop("negative", "--base-url", s.url, "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = case_lines(r.stdout)
    assert len(lines) == 22 and all(" refused 4" in line for line in lines.values()), r.stdout
    assert lines["overspend"].split()[1:3] == ["refused", "402"] and lines["transaction-replayed"].split()[1:3] == ["refused", "409"]
    assert r.stdout.rstrip().endswith("0 findings") and not warnings(r.stderr), r.stderr
    # --json: one object a case.
    r = shop("negative", "--base-url", s.url, "--yes", "--json", "--only", "unknown-pack,overspend")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.returncode == 0 and [(x["name"], x["refused"], x["status"]) for x in rows] == [("unknown-pack", True, 400), ("overspend", True, 402)]


def test_each_lenient_fault_is_found_by_its_case(start_stub):
    s = start_stub()
    for kind, names in LENIENT:
        s.reset()
        s.http.delete(s.url + "/_stub/faults", timeout=5)
        s.fault(**kind) if isinstance(kind, dict) else s.fault(kind=kind)
        r = shop("negative", "--base-url", s.url, "--yes")
        assert r.returncode == 65, (kind, r.stdout, r.stderr)
        lines = case_lines(r.stdout)
        flagged = sorted(name for name, line in lines.items() if " refused 4" not in line or "but it changed" in line)
        assert flagged == sorted(names), (kind, r.stdout)
        for name in names:
            assert "ACCEPTED" in lines[name] and "reads before rq-" in lines[name], (kind, lines[name])
            assert any(line.startswith(f"warning: negative {name}: ") for line in warnings(r.stderr)), (kind, r.stderr)
    # An accepted write for an unknown user shows where it landed: the tested user's balance.
    s.reset()
    s.http.delete(s.url + "/_stub/faults", timeout=5)
    s.fault(kind="accept_unknown_user")
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "unknown-user-spend")
    assert r.returncode == 65 and "balance 1,250 → 1,249" in case_lines(r.stdout)["unknown-user-spend"], r.stdout + r.stderr


# review of `negative`, item 1: an answer that does not judge the write is never a refusal

def test_an_answer_that_does_not_judge_the_write_is_not_judged_never_refused(start_stub):
    s = start_stub()
    faults = [
        ({"kind": "status", "status": 401}, "401"),
        ({"kind": "status", "status": 408}, "408"),
        ({"kind": "rate_limit", "retry_after": 1}, "429"),
        ({"kind": "status", "status": 503}, "503"),
        ({"kind": "reset"}, "no answer"),
    ]
    for fault, said in faults:
        s.reset()
        s.fault(path="/api/v1/spend_cheer", **fault)
        r = shop("negative", "--base-url", s.url, "--yes", "--only", "overspend,amount-zero")
        lines = case_lines(r.stdout)
        for name in ["overspend", "amount-zero"]:
            assert lines[name].split()[1:3] == ["not", "judged:"] and said in lines[name], (fault, r.stdout)
            assert " refused" not in lines[name], (fault, r.stdout)
        if said != "no answer":
            assert "(rq-" in lines["overspend"], (fault, r.stdout)
        # Not a pass and not a finding: exit 69, the summary counts them.
        assert r.returncode == 69, (fault, r.returncode, r.stdout, r.stderr)
        assert r.stdout.splitlines()[-1] == "0 findings, 2 not judged", (fault, r.stdout)
        assert not any(line.startswith("warning: negative ") for line in warnings(r.stderr)), r.stderr
    # A finding beside a case not judged: the finding sets the status (65).
    s.reset()
    s.fault(kind="accept_nonpositive_amount", path="/api/v1/spend_cheer")
    s.fault(kind="status", status=429, path="/api/v1/spend_cheer", count=1)  # overspend comes first
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "amount-zero,overspend")
    assert r.returncode == 65 and r.stdout.splitlines()[-1] == "1 finding, 1 not judged", r.stdout + r.stderr
    assert "not judged" in case_lines(r.stdout)["overspend"] and "ACCEPTED" in case_lines(r.stdout)["amount-zero"], r.stdout


# review of `negative`, item 2: only what the case could change, and a failed read is not a change

class HeldWrite:
    """A pass-through between `negative` and the stand-in (`url` is what negative is pointed at) that
    holds the case's write — the first request it sees to `POST path` — until `act` has run, then lets it
    on. So `act` lands after the case's reads before the write (negative sends the write only once they are
    answered) and before the write reaches the stand-in, so before its reads after: while the write is
    out, every time, with no wait guessed."""

    def __init__(self, s, act, path="/api/v1/spend_cheer"):
        self.act, self.marker = act, f"POST {path}".encode()
        self.upstream = s.url.split("//")[1].rsplit(":", 1)
        self.acted, self.errors, self.lock = 0, [], threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                app, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection((self.upstream[0], int(self.upstream[1])), timeout=30)
            threading.Thread(target=self._pipe, args=(app, server, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(server, app, False), daemon=True).start()

    def _pipe(self, src, dst, from_app):
        try:
            while data := src.recv(65536):
                if from_app and self.marker in data:
                    with self.lock:
                        first, self.acted = self.acted == 0, self.acted + 1
                    if first:
                        try:
                            self.act()
                        except BaseException as e:  # reported by done(), in the test's thread
                            self.errors.append(e)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
                try:
                    sock.shutdown(how)
                except OSError:
                    pass

    def done(self):
        """After the run: `act` ran, once, while the write was held (and raised nothing)."""
        self.listener.close()
        if self.errors:
            raise self.errors[0]
        assert self.acted == 1, f"{self.acted} writes held: the case's write never came (or came {self.acted} times)"


def while_the_write_is_out(s, act, path="/api/v1/spend_cheer"):
    return HeldWrite(s, act, path)


def test_another_packs_cheer_is_not_a_side_effect(start_stub):
    s = start_stub()
    packs = s.get("/api/v1/audio_packs").json()["packs"]
    tested = sorted(p["identifier"] for p in packs)[0]  # the pack negative's spends name
    other = next(p for p in packs if p["identifier"] != tested)
    # Someone else cheers for another pack while the case is out.
    t = while_the_write_is_out(s, lambda: s.http.put(s.url + "/_stub/packs/" + other["identifier"],
                                                     json={"cheer_total": other["cheer_total"] + 9}, timeout=5))
    r = shop("negative", "--base-url", t.url, "--yes", "--only", "overspend")
    t.done()
    assert s.get("/api/v1/audio_packs").json()["packs"] != packs  # it did happen, during the case
    assert r.returncode == 0 and case_lines(r.stdout)["overspend"].split()[1:3] == ["refused", "402"], r.stdout + r.stderr
    assert "but it changed" not in r.stdout and not any(w.startswith("warning: negative") for w in warnings(r.stderr)), r.stdout + r.stderr
    # The pack the case names is compared: a rise by the case's amount (the balance + 1) is a side effect.
    s.reset()
    was = next(p["cheer_total"] for p in packs if p["identifier"] == tested)
    t = while_the_write_is_out(s, lambda: s.http.put(s.url + "/_stub/packs/" + tested, json={"cheer_total": was + 1251}, timeout=5))
    r = shop("negative", "--base-url", t.url, "--yes", "--only", "overspend")
    t.done()
    assert r.returncode == 65 and f"but it changed: {tested} cheer_total" in case_lines(r.stdout)["overspend"], r.stdout + r.stderr


def test_a_busy_staging_moving_the_pack_and_the_second_user_by_other_amounts_is_no_side_effect(start_stub):
    """Other testers cheer on the tested pack and buy for the second user while the case is out: those
    moves are not the case's amount, so they are said on the line ("moved meanwhile"), never a finding."""
    s = start_stub()
    packs = s.get("/api/v1/audio_packs").json()["packs"]
    tested = sorted(p["identifier"] for p in packs)[0]
    was = next(p["cheer_total"] for p in packs if p["identifier"] == tested)

    def others():
        s.http.put(s.url + "/_stub/packs/" + tested, json={"cheer_total": was + 7}, timeout=5)
        assert s.post("/api/v2/purchase_cheer?user_id=qa-whale", json={"identifier": "com.reiterate.cheer.50", "transaction_id": 424242}).status_code == 200

    t = while_the_write_is_out(s, others)
    r = shop("negative", "--base-url", t.url, "--yes", "--only", "overspend")
    t.done()
    assert balance(s, "qa-whale") == 1_000_050  # it did happen, during the case
    line = case_lines(r.stdout)["overspend"]
    assert r.returncode == 0 and line.split()[1:3] == ["refused", "402"] and "but it changed" not in line, r.stdout + r.stderr
    assert "moved meanwhile (not this write's amount)" in line, line
    assert f"{tested} cheer_total {was:,} → {was + 7:,}" in line and "second user's balance 1,000,000 → 1,000,050" in line, line
    assert r.stdout.splitlines()[-1] == "0 findings" and not any(w.startswith("warning: negative") for w in warnings(r.stderr)), r.stdout + r.stderr
    # --json: the moves are listed apart from what changed.
    s.reset()
    t = while_the_write_is_out(s, others)
    r = shop("negative", "--base-url", t.url, "--yes", "--json", "--only", "overspend")
    t.done()
    row = json.loads(r.stdout.splitlines()[0])
    assert r.returncode == 0 and row["changed"] == [] and len(row["meanwhile"]) == 2 and "finding" not in row, r.stdout + r.stderr


def test_a_read_that_failed_after_is_unknown_not_a_change(start_stub):
    s = start_stub()

    def fail_reads():
        s.fault(kind="status", status=500, path="/api/v1/balance")
        s.fault(kind="status", status=500, path="/api/v1/audio_packs")
        s.fault(kind="status", status=500, path="/api/v1/cheer_history")

    t = while_the_write_is_out(s, fail_reads)
    r = shop("negative", "--base-url", t.url, "--yes", "--only", "overspend")
    t.done()
    line = case_lines(r.stdout)["overspend"]
    assert r.returncode == 0 and line.split()[1:3] == ["refused", "402"] and "but it changed" not in line, r.stdout + r.stderr
    assert "not known" in line and "unread" not in line, line
    assert not any(w.startswith("warning: negative") for w in warnings(r.stderr)), r.stderr


# review of `negative`, item 3: the watchdog's findings on its own exchanges are shown, verdicts kept

def test_contract_findings_on_negatives_exchanges_are_warning_lines(start_stub):
    s = start_stub()
    s.fault(kind="no_request_id", path="/api/v1/spend_cheer")
    s.fault(kind="content_type", content_type="text/plain", path="/api/v1/spend_cheer")
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "overspend,amount-zero")
    lines = case_lines(r.stdout)
    # Still refused, as they were: a deviation of the answer does not make the case accepted.
    assert lines["overspend"].split()[1:3] == ["refused", "402"] and lines["amount-zero"].split()[1:3] == ["refused", "400"], r.stdout
    found = [w for w in warnings(r.stderr) if w.startswith("warning: POST /api/v1/spend_cheer")]
    assert any("[request-id]" in w for w in found) and any("content-type" in w.lower() for w in found), r.stderr
    assert any("(×2" in w for w in found), r.stderr  # grouped, as the other write commands do
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "0 findings", r.stdout + r.stderr


# review of `negative`, item 4: refused but applied, and a write that changes a second user

def test_a_refusal_that_still_applied_and_a_second_users_balance_are_flagged(start_stub):
    s = start_stub()
    # The plain stand-in: refused, nothing changed.
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "overspend")
    assert r.returncode == 0 and case_lines(r.stdout)["overspend"].split()[1:3] == ["refused", "402"], r.stdout + r.stderr
    # Taken (accept_overspend) but answered 400 (refuse_but_apply): "refused, but it changed".
    s.fault(kind="accept_overspend", path="/api/v1/spend_cheer")
    s.fault(kind="refuse_but_apply", path="/api/v1/spend_cheer")
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "overspend")
    line = case_lines(r.stdout)["overspend"]
    assert r.returncode == 65 and line.split()[1:3] == ["refused", "400"] and "but it changed: balance 1,250 → -1" in line, r.stdout + r.stderr
    assert any(w.startswith("warning: negative overspend: ") and "side effect" in w for w in warnings(r.stderr)), r.stderr
    assert balance(s) == -1
    # Every write, refused or not, also debits qa-whale (the second user) 1 cheer: each case that spends 1
    # (the second user's balance moved by the case's amount) is flagged.
    s.reset()
    s.fault(kind="second_user_write")
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "unknown-pack,comment-not-text")
    lines = case_lines(r.stdout)
    assert r.returncode == 65 and r.stdout.splitlines()[-1] == "2 findings", r.stdout + r.stderr
    for name, was in [("unknown-pack", "1,000,000 → 999,999"), ("comment-not-text", "999,999 → 999,998")]:
        assert " refused 4" in lines[name] and f"but it changed: second user's balance {was}" in lines[name], lines[name]
    assert balance(s, "qa-whale") == 999_998 and balance(s) == 1250


def test_each_new_lenient_fault_takes_its_body_and_only_it(start_stub):
    s = start_stub()
    spend = lambda body: s.post("/api/v1/spend_cheer?user_id=qa-alice", data=body, headers={"Content-Type": "application/json"})
    buy = lambda body: s.post("/api/v2/purchase_cheer?user_id=qa-alice", data=body, headers={"Content-Type": "application/json"})
    cases = [
        ("amount-fraction", spend, '{"amount":1.5,"product":"%s"}' % RAIN, 1249),
        ("amount-as-text", spend, '{"amount":"3","product":"%s"}' % RAIN, 1247),
        ("amount-missing", spend, '{"product":"%s"}' % RAIN, 1249),
        ("product-missing", spend, '{"amount":2}', 1248),
        ("product-not-text", spend, '{"amount":2,"product":42}', 1248),
        ("comment-not-text", spend, '{"amount":2,"product":"%s","comment":42}' % RAIN, 1248),
        ("body-not-object", spend, "[]", 1249),
        ("transaction-fraction", buy, '{"identifier":"com.reiterate.cheer.50","transaction_id":1.5}', 1300),
        ("transaction-missing", buy, '{"identifier":"com.reiterate.cheer.50"}', 1300),
        ("identifier-missing", buy, '{"transaction_id":77}', 1300),
    ]
    for name, write, body, after in cases:
        s.reset()
        assert write(body).status_code == 400 and balance(s) == 1250, name  # refused without the fault
        fault = s.fault(kind="lenient_body", case=name)
        r = write(body)
        assert r.status_code == 200 and balance(s) == after, (name, r.status_code, r.text, balance(s))
        listed = s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"]
        assert [(f["hits"], f["case"]) for f in listed if f["id"] == fault["id"]] == [(1, name)], (name, listed)
        # The fault takes its one malformed body, not the others.
        for other, write2, body2, _ in cases:
            if other != name:
                assert write2(body2).status_code == 400, (name, other)
    s.reset()
    ok = '{"identifier":"com.reiterate.cheer.50","transaction_id":9}'
    assert buy(ok).status_code == 200 and buy(ok).status_code == 409
    s.fault(kind="lenient_body", case="transaction-replayed")
    assert buy(ok).status_code == 200 and balance(s) == 1350
    # A comment the plain stand-in refuses, recorded as text under the fault.
    s.reset()
    s.fault(kind="lenient_body", case="comment-not-text")
    assert spend('{"amount":2,"product":"%s","comment":42}' % RAIN).status_code == 200
    newest = s.get("/api/v1/cheer_history?user_id=qa-alice&per_page=1").json()["history"][0]
    assert (newest["amount"], newest["comments"][0]["body"]) == (2, "42"), newest
    r = s.post("/_stub/faults", json={"kind": "lenient_body"})
    assert r.status_code == 400 and "needs case=" in r.text, r.text
    # A 5xx too (issue 35: "the server failed the write but applied it"); never a 2xx or 3xx.
    r = s.post("/_stub/faults", json={"kind": "refuse_but_apply", "status": 500})
    assert r.status_code in (200, 201), r.text
    r = s.post("/_stub/faults", json={"kind": "refuse_but_apply", "status": 302})
    assert r.status_code == 400, r.text


# review of `negative`, item 6: buy --unchecked sends a transaction id as typed (text, negative)

def test_buy_unchecked_sends_a_transaction_id_as_text_or_negative(start_stub):
    s = start_stub()
    cheer50 = "com.reiterate.cheer.50"
    # Checked: a transaction id that is not a whole number is not sent.
    r = shop("buy", "--bundle", cheer50, "--transaction-id", '"42"', "--yes", "--base-url", s.url)
    assert r.returncode == 64 and "--transaction-id must be a whole number" in r.stderr and "add --unchecked" in r.stderr, r.stderr
    assert not posts(s)
    # The plain stand-in refuses both: exit 1, nothing credited.
    for typed in ['"42"', "-3", "abc"]:
        r = shop("buy", "--bundle", cheer50, "--transaction-id", typed, "--yes", "--unchecked", "--base-url", s.url)
        assert r.returncode == 1 and "[refusal-expected]" not in r.stderr, (typed, r.stdout, r.stderr)
    assert balance(s) == 1250 and len(posts(s)) == 3
    # retyped_transaction takes the string as another transaction than the number 42: credited twice.
    s.fault(kind="retyped_transaction", path="/api/v2/purchase_cheer")
    r = shop("buy", "--bundle", cheer50, "--transaction-id", "42", "--yes", "--base-url", s.url)
    assert r.returncode == 0 and balance(s) == 1300, r.stdout + r.stderr
    r = shop("buy", "--bundle", cheer50, "--transaction-id", '"42"', "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65 and balance(s) == 1350, r.stdout + r.stderr
    assert r.stdout.startswith('The server accepted a purchase it must refuse: the transaction id "42" is not a whole number'), r.stdout
    assert "[refusal-expected]" in r.stderr.splitlines()[0], r.stderr
    # accept_negative_transaction takes -3 (sent as the JSON number -3; --transaction-id=-3 alike).
    s.fault(kind="accept_negative_transaction", path="/api/v2/purchase_cheer")
    r = shop("buy", "--bundle", cheer50, "--transaction-id", "-3", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65 and balance(s) == 1400, r.stdout + r.stderr
    assert r.stdout.startswith("The server accepted a purchase it must refuse: the transaction id -3 is not a whole number"), r.stdout
    r = shop("buy", "--bundle", cheer50, "--transaction-id=-3", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 1 and "Transaction -3 was already credited" in r.stdout and balance(s) == 1400, r.stdout + r.stderr  # a replay


def test_the_catalogue_covers_every_rule_of_the_writes_request_bodies_in_the_contract(start_stub):
    """The catalogue is held to the contract document, read here by PyYAML (an independent reader): every
    request body of a write operation is an object, and each of its fields has a case for its type, its
    required-ness, its minimum and its format. A field or a rule the document gains fails this test until
    a case is added."""
    import yaml
    from conftest import SPEC_PATH

    spec = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    wanted = set()
    for path_item in spec["paths"].values():
        for method, op in path_item.items():
            if method != "post" or op.get("operationId") == "refreshToken":
                continue  # refreshToken is the client's sign-in, not a shop write
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            name = op["operationId"]
            wanted.add((name, "", "type"))
            for field, prop in schema.get("properties", {}).items():
                wanted.add((name, field, "type"))
                if "minimum" in prop:
                    wanted.add((name, field, "minimum"))
                if "format" in prop:
                    wanted.add((name, field, "format"))
            for field in schema.get("required", []):
                wanted.add((name, field, "required"))
    s = start_stub()
    r = shop("negative", "--base-url", s.url, "--json")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    covered = {(x["operation"], x["field"], x["rule"]) for x in rows if x.get("rule")}
    assert wanted - covered == set(), sorted(wanted - covered)
    assert "/api/" not in s.log()  # listing sends nothing


# review of `negative` (second), item 2: a case skipped, and a write applied but answered an error

def test_replay_cases_skipped_when_the_setup_purchase_fails_are_not_judged(start_stub):
    s = start_stub()
    s.fault(kind="status", status=503, path="/api/v2/purchase_cheer", count=1)  # the setup purchase
    r = shop("negative", "--base-url", s.url, "--yes", "--only", "not-a-bundle,transaction-replayed,transaction-as-text")
    lines = case_lines(r.stdout)
    assert r.returncode == 69, (r.returncode, r.stdout, r.stderr)
    assert lines["not-a-bundle"].split()[1:3] == ["refused", "400"], r.stdout
    for name in ["transaction-replayed", "transaction-as-text"]:
        assert lines[name].split()[1:3] == ["not", "judged:"] and "skipped, the setup purchase it resends was not taken" in lines[name], lines[name]
        assert "503" in lines[name], lines[name]
    assert r.stdout.splitlines()[-1] == "0 findings, 2 not judged", r.stdout
    assert "they are skipped (not judged)" in r.stderr, r.stderr
    assert len(posts(s)) == 2  # the setup purchase and not-a-bundle: nothing resent
    # --json says so too.
    s.reset()
    s.fault(kind="status", status=503, path="/api/v2/purchase_cheer", count=1)
    r = shop("negative", "--base-url", s.url, "--yes", "--json", "--only", "transaction-replayed")
    row = json.loads(r.stdout.splitlines()[0])
    assert r.returncode == 69 and row["verdict"] == "not-judged" and row["why"].startswith("skipped"), r.stdout + r.stderr


def test_a_5xx_whose_write_was_applied_on_the_user_is_a_finding(start_stub):
    s = start_stub()
    packs = s.get("/api/v1/audio_packs").json()["packs"]
    tested = sorted(p["identifier"] for p in packs)[0]

    def answered_503_then_moved(amount):
        def move_then_fail():
            # While the write is held, the user's balance moves (as if the server had applied it)...
            assert s.post("/api/v1/spend_cheer?user_id=qa-alice", json={"amount": amount, "product": tested}).status_code == 200
            # ...and the write, let on, is answered 503.
            s.fault(kind="status", status=503, path="/api/v1/spend_cheer", count=1)
        return while_the_write_is_out(s, move_then_fail)

    # comment-not-text spends 1: a move of the user's balance by −1 (and a newest entry of 1) is its write.
    t = answered_503_then_moved(1)
    r = shop("negative", "--base-url", t.url, "--yes", "--only", "comment-not-text")
    t.done()
    assert balance(s) == 1249
    line = case_lines(r.stdout)["comment-not-text"]
    assert r.returncode == 65 and line.split()[1:3] == ["APPLIED,", "answered"] and "503" in line and "balance 1,250 → 1,249" in line, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "1 finding", r.stdout
    assert any(w.startswith("warning: negative comment-not-text: ") and "applied, answered" in w for w in warnings(r.stderr)), r.stderr
    # Moved by another amount (3): not this write; not judged, as before (exit 69).
    s.reset()
    t = answered_503_then_moved(3)
    r = shop("negative", "--base-url", t.url, "--yes", "--only", "comment-not-text")
    t.done()
    assert balance(s) == 1247
    line = case_lines(r.stdout)["comment-not-text"]
    assert r.returncode == 69 and line.split()[1:3] == ["not", "judged:"] and "meanwhile it changed: balance 1,250 → 1,247" in line, r.stdout + r.stderr
    assert not any(w.startswith("warning: negative") for w in warnings(r.stderr)), r.stderr
