"""Cause and effect (issue 30): `reiterate-shop proxy --watch` pairs each change the watch reads with the
app's write that made it, and gives the verdicts only that pairing can give, each blamed on the app or
the server. The app is `scripts/phone.py` going through the proxy; the server is the real stand-in,
with its faults; the proxy's own faults (`--fault`, `POST /_proxy/faults`) break the app's traffic."""
import json
import subprocess
import sys

import pytest
import requests

from conftest import ROOT, TOKEN, wait_until

PHONE = ROOT / "scripts" / "phone.py"
INTERVAL = "0.5"
BALANCE_READ = "GET /api/v1/balance?user_id=qa-alice "  # the watch's reads of the balance, in the stand-in's log


def reads(stub) -> int:
    """The watch's reads of the balance the stand-in has answered so far: a round reads the balance, the
    newest entries, the balance again; the next round's first read is sent only once the round is judged."""
    return len(stub.log_lines(BALANCE_READ))


def watching(stub, start_proxy, *args):
    """A proxy watching qa-alice on the stand-in, once its first round is read and judged (a write before
    it has no read before it to pair with): its two reads of the balance and the next round's first."""
    mark = reads(stub)
    proxy = start_proxy(stub.url, "--watch", "--interval", INTERVAL, "--json", *args, env={"REITERATE_TOKEN": TOKEN})
    wait_until(proxy.err, lambda err: "note: watching qa-alice" in err, 10, "the watch started", show=str)
    wait_until(lambda: reads(stub), lambda n: n >= mark + 3, 20, "the watch's first round judged", show=lambda n: proxy.err())
    return proxy


def phone(stub, proxy, mode, *args, timeout=90):
    """The app: phone.py through the proxy; answers its JSON lines (one per attempt)."""
    run = subprocess.run([sys.executable, str(PHONE), stub.url, "--proxy", f"127.0.0.1:{proxy.port}", "--mode", mode,
                          "--start-delay", "0", *args], capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def findings(proxy):
    return [l for l in proxy.lines() if l["kind"] == "finding"]


def wait_for_finding(proxy, check, timeout=10):
    return proxy.wait_for("finding", check=check, timeout=timeout)[0]


def settle(stub, proxy, rounds=2):
    """Waits until the watch has read and judged `rounds` whole rounds begun after now (call it once the
    app's writes are answered), so that what the app did is read and paired: 2 × rounds + 3 reads of the
    balance. The first may have been sent before now; from the second on, each was sent after, so the
    rounds' reads are among them, and the read after a round is sent only once it is judged."""
    mark = reads(stub)
    want = mark + 2 * rounds + 3
    wait_until(lambda: reads(stub), lambda n: n >= want or proxy.proc.poll() is not None, 30,
               f"{want - mark} reads of the watch", show=lambda n: f"{n - mark} reads\n{proxy.err()[-2000:]}")
    assert reads(stub) >= want, f"the proxy ended before the watch judged the rounds:\n{proxy.err()[-2000:]}"


def test_an_app_spend_is_paired_with_its_debit_and_its_entry(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    [sent] = phone(stub, proxy, "spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--comment", "great pack")
    assert sent["status"] == 200
    rid = sent["request_id"]
    app = proxy.wait_for("app")[0]
    assert app["app"]["op"] == "spend" and app["app"]["request_id"] == rid and app["app"]["balance"] == sent["balance"]
    assert "app POST spend_cheer 7 on Rain on a Tin Roof “great pack” → 200" in app["text"], proxy.out()
    entry = proxy.wait_for("entry")[0]
    assert entry["cause"] == [rid] and entry["made_by"] == ["app"], entry
    balance = proxy.wait_for("balance")[0]
    assert balance["delta"] == -7 and balance["cause"] == [rid] and balance["outcome"] == "reconciled", balance
    assert f"(app, {rid})" in balance["text"]
    settle(stub, proxy)
    assert findings(proxy) == []


def test_a_change_no_request_explains_is_made_elsewhere(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    # Another device: straight to the stand-in, not through the proxy.
    assert stub.post("/api/v1/spend_cheer?user_id=qa-alice", json={"product": "com.reiterate.pack.rain", "amount": 3}).status_code == 200
    entry = proxy.wait_for("entry")[0]
    assert entry["made_by"] == ["elsewhere"] and entry["cause"] == [] and "(made elsewhere)" in entry["text"]
    settle(stub, proxy)
    assert findings(proxy) == []


def test_one_app_request_two_entries_is_the_servers(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    stub.fault(kind="double_entry", path="/api/v1/spend_cheer", count=1)
    [sent] = phone(stub, proxy, "spend", "--product", "com.reiterate.pack.rain", "--amount", "5")
    f = wait_for_finding(proxy, "entry-twice")
    assert f["blame"] == "server" and f["request_ids"][0] == sent["request_id"] and len(f["request_ids"]) >= 3, f
    # The debit that does not match follows from it, and says so; no "possible double submission" note.
    settle(stub, proxy)
    follow = [l for l in findings(proxy) if l["check"] != "entry-twice"]
    assert follow and all("entry-twice" in (l.get("caused_by") or "") for l in follow), findings(proxy)
    assert not any("possible double submission" in l["text"] for l in proxy.lines() if l["kind"] == "note")


@pytest.mark.parametrize("fault, check, credited", [("double_credit", "credit-mismatch", "+400"), ("no_credit", "not-credited", "no credit")])
def test_a_purchase_credited_other_than_its_bundle_is_the_servers(stub, start_proxy, fault, check, credited):
    proxy = watching(stub, start_proxy)
    stub.fault(kind=fault, path="/api/v2/purchase_cheer", count=1)
    [sent] = phone(stub, proxy, "purchase", "--bundle", "com.reiterate.cheer.200")
    assert sent["status"] == 200
    f = wait_for_finding(proxy, check)
    assert f["blame"] == "server" and sent["request_id"] in f["request_ids"], f
    assert "+200 for the app's purchase of com.reiterate.cheer.200" in f["expected"] and credited in f["actual"], f
    settle(stub, proxy)
    assert [l["check"] for l in findings(proxy)] == [check]


def test_a_replayed_transaction_credited_again_is_the_servers(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    stub.fault(kind="replay_credit", path="/api/v2/purchase_cheer", count=1)
    first = phone(stub, proxy, "purchase", "--bundle", "com.reiterate.cheer.50", "--transaction-id", "424242")
    settle(stub, proxy)
    again = phone(stub, proxy, "purchase", "--bundle", "com.reiterate.cheer.50", "--transaction-id", "424242")
    assert first[0]["status"] == 200 and again[0]["status"] == 200
    f = wait_for_finding(proxy, "replay-credited")
    assert f["blame"] == "server" and f["request_ids"] == [first[0]["request_id"], again[0]["request_id"]], f
    # The contract watchdog sees the same 200 on the answer (`credited-once`): the watch's verdict says so.
    assert f"the same fault as the contract watchdog's [credited-once] on that answer ({again[0]['request_id']}" in f["caused_by"], f
    settle(stub, proxy)
    assert sorted(l["check"] for l in findings(proxy)) == ["credited-once", "replay-credited"]
    assert [l["blame"] for l in findings(proxy)] == ["server", "server"]


def test_an_answer_the_next_read_contradicts_is_the_servers(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    stub.fault(kind="stale_answer", path="/api/v1/spend_cheer", count=1)
    [sent] = phone(stub, proxy, "spend", "--product", "com.reiterate.pack.rain", "--amount", "4")
    f = wait_for_finding(proxy, "answer-contradicted")
    assert f["blame"] == "server" and f["request_ids"][0] == sent["request_id"], f
    assert f"balance {sent['balance']:,}" in f["expected"], f
    settle(stub, proxy)
    assert [l["check"] for l in findings(proxy)] == ["answer-contradicted"]


@pytest.mark.parametrize("overlap", [False, True], ids=["after-the-answer", "before-the-answer"])
def test_the_same_write_twice_within_a_second_is_the_apps(stub, start_proxy, overlap):
    proxy = watching(stub, start_proxy)
    sent = phone(stub, proxy, "double-tap", "--product", "com.reiterate.pack.rain", "--amount", "6", *(["--overlap"] if overlap else []))
    assert [s["status"] for s in sent] == [200, 200]
    f = wait_for_finding(proxy, "double-submission")
    assert f["blame"] == "app" and sorted(f["request_ids"]) == sorted(s["request_id"] for s in sent), f
    # The server recorded both, each paired with its own request: nothing else is wrong.
    settle(stub, proxy)
    assert [l["check"] for l in findings(proxy)] == ["double-submission"]
    entries = [l for l in proxy.lines() if l["kind"] == "entry"]
    assert sorted(e["cause"][0] for e in entries) == sorted(s["request_id"] for s in sent)


def lose_next_purchase(proxy):
    r = requests.post(proxy.url + "/_proxy/faults", json={"kind": "lose_answer", "path": "/api/v2/purchase_cheer", "method": "POST", "count": 1}, timeout=5)
    assert r.status_code == 201, r.text


def test_a_lost_answer_retried_with_the_same_transaction_is_handled_well(stub, start_proxy, tmp_path):
    har = tmp_path / "session.har"
    proxy = watching(stub, start_proxy, "--har", str(har))
    lose_next_purchase(proxy)
    tries = phone(stub, proxy, "lost-retry-same", "--bundle", "com.reiterate.cheer.200")
    assert [t["status"] for t in tries] == [None, 409], tries
    assert tries[0]["transaction_id"] == tries[1]["transaction_id"]
    notes = wait_until(lambda: [l["text"] for l in proxy.lines() if l["kind"] == "note"],
                       lambda notes: any("credited once" in n for n in notes), 15, "the note that it was credited once")
    assert any("handled well: retried with the same transaction id" in n and "credited once" in n for n in notes), notes
    settle(stub, proxy)  # the reads after the retry judged: no finding came of them
    # The proxy recorded the answer the app never got: the server did credit it.
    lost = [l for l in proxy.lines() if l["kind"] == "app" and l["app"].get("fault") == "lose_answer"]
    assert lost and lost[0]["app"]["status"] == 200 and lost[0]["app"]["delivered"] is False
    balance = [l for l in proxy.lines() if l["kind"] == "balance"]
    assert sum(b["delta"] for b in balance) == 200, balance
    assert findings(proxy) == []
    # The HAR keeps the answer the app never got, with the fault that kept it from the app.
    assert proxy.stop() == 0
    entries = json.loads(har.read_text())["log"]["entries"]
    faulted = [e for e in entries if e.get("_fault")]
    assert [(e["_fault"], e["_source"], e["response"]["status"]) for e in faulted] == [("lose_answer", "app", 200)], faulted


def test_a_lost_answer_whose_retry_the_server_credits_again_is_the_servers(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    stub.fault(kind="replay_credit", path="/api/v2/purchase_cheer", count=1)
    lose_next_purchase(proxy)
    tries = phone(stub, proxy, "lost-retry-same", "--bundle", "com.reiterate.cheer.200")
    assert [t["status"] for t in tries] == [None, 200], tries
    f = wait_for_finding(proxy, "replay-credited")
    assert f["blame"] == "server" and tries[1]["request_id"] in f["request_ids"], f


def test_a_lost_answer_retried_with_a_new_transaction_is_the_apps(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    lose_next_purchase(proxy)
    tries = phone(stub, proxy, "lost-retry-new", "--bundle", "com.reiterate.cheer.200")
    assert [t["status"] for t in tries] == [None, 200], tries
    assert tries[0]["transaction_id"] != tries[1]["transaction_id"]
    f = wait_for_finding(proxy, "retry-new-transaction")
    assert f["blame"] == "app" and f["request_ids"][-1] == tries[1]["request_id"] and len(f["request_ids"]) == 2, f
    settle(stub, proxy)
    # Both purchases were credited, as asked: the reads agree with what the app did.
    assert [l["check"] for l in findings(proxy)] == ["retry-new-transaction"]


def test_strict_ends_the_watch_at_the_first_finding_with_65(stub, start_proxy):
    proxy = watching(stub, start_proxy, "--strict")
    stub.fault(kind="no_credit", path="/api/v2/purchase_cheer", count=1)
    phone(stub, proxy, "purchase", "--bundle", "com.reiterate.cheer.50")
    assert proxy.proc.wait(15) == 65
    assert any(line.startswith("warning: watch of ") and ": [not-credited] expected" in line and "(the server's fault; request id" in line
               for line in proxy.err().splitlines()), proxy.err()


@pytest.mark.slow
def test_sixty_seconds_of_random_app_writes_with_no_fault_make_no_finding(stub, start_proxy):
    proxy = watching(stub, start_proxy)
    sent = phone(stub, proxy, "clean", "--for", "60", "--interval", "0.3", timeout=120)
    settle(stub, proxy)
    assert len(sent) >= 100, len(sent)
    assert sum(1 for l in proxy.lines() if l["kind"] == "app") == len(sent)
    assert findings(proxy) == [], findings(proxy)[:5]
    # Every change was paired with the app's writes: none made elsewhere.
    changes = [l for l in proxy.lines() if l["kind"] in ("balance", "entry")]
    assert changes and all(l["made_by"] and "elsewhere" not in l["made_by"] for l in changes), [l for l in changes if "elsewhere" in (l["made_by"] or [])][:3]
