"""`reiterate-shop watch` (issue 19) against the real stand-in while another process plays the phone:
each change reconciled, each of the stand-in's rule-breaking faults flagged by its own check, and no
finding over a run of random writes with no fault."""
import json
import os
import random
import subprocess
import tempfile
import time

from conftest import ROOT

SHOP_BIN = os.environ.get("SHOP_BIN", str(ROOT / ".build" / "debug" / "reiterate-shop"))
RAIN = "com.reiterate.pack.rain"


def watch(url, *args):
    """Starts `reiterate-shop watch --json` in the background; its stdout is read as it comes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(REITERATE_TOKEN="dev-token", XDG_CACHE_HOME=tempfile.mkdtemp(), XDG_CONFIG_HOME=tempfile.mkdtemp(), TZ="UTC")
    return subprocess.Popen([SHOP_BIN, "watch", "--base-url", url, "--json", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def events_until(proc, want, timeout=20.0):
    """JSON events from `proc` until `want(events)` holds (or the process ends)."""
    events = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        events.append(json.loads(line))
        if want(events):
            return events
    raise AssertionError(f"not seen in {timeout} s; events: {json.dumps(events, indent=1)}")


def spend(s, amount, comment=None, user="qa-alice"):
    body = {"user_id": user, "product": RAIN, "amount": amount}
    if comment:
        body["comment"] = comment
    r = s.post(f"/api/v1/spend_cheer?user_id={user}", json=body, timeout=5)
    assert r.status_code == 200, r.text


def buy(s, bundle=200, user="qa-alice"):
    r = s.post(f"/api/v2/purchase_cheer?user_id={user}", json={"user_id": user, "identifier": f"com.reiterate.cheer.{bundle}",
                                                               "transaction_id": random.randrange(1, 2**63)}, timeout=5)
    assert r.status_code == 200, r.text


def stop(proc):
    proc.terminate()
    out, err = proc.communicate(timeout=10)
    return out, err


def test_watch_json_reads_a_cheer_and_a_purchase_reconciled(start_stub):
    s = start_stub("--quiet")
    proc = watch(s.url, "--interval", "0.5", "--count", "4")
    time.sleep(1.5)  # the first round is the baseline
    spend(s, 7, "great pack")
    time.sleep(1.2)
    buy(s, 200)
    events = events_until(proc, lambda ev: len(ev) >= 4)
    proc.wait(timeout=10)
    assert proc.returncode == 0, proc.stderr.read()
    kinds = [(e["kind"], e.get("outcome")) for e in events]
    balance = [e for e in events if e["kind"] == "balance"]
    entry = next(e for e in events if e["kind"] == "entry")
    assert balance[0]["from"] == 1250 and balance[0]["to"] == 1243 and balance[0]["delta"] == -7, kinds
    assert entry["entry"]["amount"] == 7 and entry["entry"]["comments"] == ["great pack"] and entry["product_name"] == "Rain on a Tin Roof"
    assert any(e["kind"] == "balance" and e["delta"] == 200 for e in events), kinds
    assert all(e["outcome"] == "reconciled" for e in events if e["kind"] in ("balance", "entry")), kinds
    # Each names the reads on both sides, with the time.
    assert all(len(e["request_ids"]) >= 2 and e["time"].endswith("Z") for e in events)
    assert "note: watched qa-alice on LOCAL" in proc.stderr.read()


def test_each_fault_that_breaks_a_rule_is_flagged_by_its_check(start_stub):
    s = start_stub("--quiet")
    nothing = lambda: None
    cases = [  # the fault, where, what the phone does first (seen by a round), what it does with the fault on, the check
        ("double_entry", "/api/v1/spend_cheer", nothing, lambda: spend(s, 5, "twice"), "debit-mismatch"),
        ("no_entry", "/api/v1/spend_cheer", nothing, lambda: spend(s, 5), "debit-without-entry"),
        ("no_debit", "/api/v1/spend_cheer", nothing, lambda: spend(s, 5), "entry-without-debit"),
        # A cheer first seen in the round right after a packs read is not held against the totals
        # (it may be older than that read): three, a round apart, leave no doubt.
        ("stuck_total", "/api/v1/spend_cheer", nothing, lambda: [spend(s, 5) or time.sleep(0.5) for _ in range(3)], "pack-total"),
        ("stray_credit", "/api/v1/balance", nothing, nothing, "credit-unexplained"),
        ("vanish_entry", "/api/v1/cheer_history", lambda: spend(s, 5), nothing, "entry-vanished"),
    ]
    for kind, path, first, act, check in cases:
        proc = watch(s.url, "--interval", "0.4", "--strict")
        try:
            time.sleep(1.2)  # the baseline round
            first()
            time.sleep(1.2)
            s.http.post(s.url + "/_stub/faults", json={"kind": kind, "path": path, "count": 3 if kind == "stuck_total" else 1}, timeout=5)
            act()
            # --strict ends the watch after the round of the first finding, all of it printed.
            out, err = proc.communicate(timeout=20)
            events = [json.loads(line) for line in out.splitlines()]
            findings = [e["check"] for e in events if e["kind"] == "finding"]
            assert check in findings, (kind, findings, err)
            assert proc.returncode == 65, (kind, proc.returncode, err)
            assert f"warning: [{check}] expected" in err and "request id" in err, err
        finally:
            if proc.poll() is None:
                stop(proc)
        s.http.delete(s.url + "/_stub/faults", timeout=5)
        if kind == "double_entry":
            # Two entries alike within seconds: a note to look at, beside the finding.
            assert any(e["kind"] == "note" and "possible double submission" in e["text"] for e in events), events


def play_phone(s, proc, seconds, seed, gap, spend_share=0.6, comments=(None, "nice", "great pack", "again"), bundles=(50, 100, 200, 500)):
    """Random spends and purchases for `seconds`, `gap` (min, max) seconds apart, while `proc` watches;
    then the watch's events, asserted free of findings and errors, and the count of writes."""
    rng = random.Random(seed)
    time.sleep(1.5)  # the first round is the baseline
    writes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if rng.random() < spend_share:
            spend(s, rng.randrange(1, 20), rng.choice(comments))
        else:
            buy(s, rng.choice(bundles))
        writes += 1
        time.sleep(rng.uniform(*gap))
    out, err = proc.communicate(timeout=30)
    events = [json.loads(line) for line in out.splitlines()]
    findings = [e for e in events if e["kind"] in ("finding", "error")]
    assert not findings, json.dumps(findings, indent=1)
    return events, writes, err


def test_random_writes_with_no_fault_make_no_finding(start_stub):
    s = start_stub("--quiet")
    seconds = float(os.environ.get("WATCH_QUIET_SECONDS", "60"))
    proc = watch(s.url, "--interval", "1", "--for", f"{seconds + 4}s")
    events, writes, err = play_phone(s, proc, seconds, seed=19, gap=(0.2, 1.5))
    assert writes >= 20 and sum(1 for e in events if e["kind"] == "balance") >= 10, (writes, len(events))
    assert proc.returncode == 0 and "0 findings" in err, err


def test_writes_racing_slow_reads_make_no_finding(start_stub):
    """The race CI met: writes land between a round's reads. The history read is slowed (100 ms ± 60)
    while the phone writes every 200-600 ms, so about a third of the reads of the entries are crossed
    by a write; the round's second balance read sees it and the entries are read again. No finding,
    and the balance still reconciles. (Before the second read, this test flagged a dozen mismatches.)"""
    s = start_stub("--quiet")
    r = s.http.post(s.url + "/_stub/faults", json={"kind": "latency", "ms": 100, "jitter": 60, "path": "/api/v1/cheer_history"}, timeout=5)
    assert r.status_code in (200, 201), r.text
    seconds = float(os.environ.get("WATCH_RACE_SECONDS", "20"))
    proc = watch(s.url, "--interval", "0.3", "--for", f"{seconds + 4}s")
    events, writes, _ = play_phone(s, proc, seconds, seed=21, gap=(0.2, 0.6), spend_share=0.7, comments=(None, "nice"), bundles=(50, 100, 200))
    reconciled = [e for e in events if e["kind"] == "balance" and e.get("outcome") == "reconciled"]
    assert writes >= 25 and len(reconciled) >= 10, (writes, len(reconciled), [(e["kind"], e.get("outcome"), e.get("text")) for e in events][:40])


def test_an_unreadable_slot_with_entries_moving_through_it_makes_no_balance_or_vanished_finding(start_stub):
    """Issue 27, item 2: the stand-in sends the 4th entry of every history page without its required fields
    (its id kept); every write moves the entries down through that slot. The watch matches entries by id, so
    over 60 s of random correct writes there is no balance or vanished-entry finding; a new entry that lands
    in the slot leaves that round's balance unjudged, and the Live line says why."""
    s = start_stub("--quiet", "--fault", "malformed_entry,index=3,path=/api/v1/cheer_history")
    seconds = float(os.environ.get("WATCH_SLOT_SECONDS", "60"))
    proc = watch(s.url, "--interval", "1", "--for", f"{seconds + 4}s")
    rng = random.Random(27)
    time.sleep(1.5)
    writes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if rng.random() < 0.7:
            spend(s, rng.randrange(1, 20), rng.choice((None, "nice")))
        else:
            buy(s, rng.choice((50, 100, 200)))
        writes += 1
        time.sleep(rng.uniform(0.3, 1.5))
    out, err = proc.communicate(timeout=30)
    events = [json.loads(line) for line in out.splitlines()]
    watch_checks = ("debit-mismatch", "debit-without-entry", "entry-without-debit", "credit-unexplained", "entry-vanished",
                    "entry-changed", "history-shrank")
    bad = [e for e in events if e["kind"] == "finding" and any(f"[{c}]" in e.get("text", "") for c in watch_checks)]
    assert not bad, json.dumps(bad, indent=1)
    assert writes >= 20 and sum(1 for e in events if e["kind"] == "balance") >= 10, (writes, len(events))
