"""The app's proxy inside the TUI (issue 29, item 4), end to end: the real binary in tmux with --proxy,
the app played by Python's HTTP client through it, against the real stand-in."""
import json
import re
import subprocess
import sys

import requests

from conftest import ROOT, TOKEN, free_port, wait_until


def watch_round_done(lines):
    """Whether the stand-in's log shows a whole round of the watch: its read of the newest entries
    (`per_page=20`), then the balance read that closes it."""
    reads = [i for i, line in enumerate(lines) if line.startswith("GET /api/v1/cheer_history") and "per_page=20" in line]
    return bool(reads) and any(line.startswith("GET /api/v1/balance") for line in lines[reads[0] + 1:])


def test_a_500_to_the_app_shows_on_the_message_line_with_its_request_id(start_stub, tui):
    stub = start_stub()
    port = free_port()
    t = tui(stub.url, width=140, height=30, args=("--proxy", f"127.0.0.1:{port}"))
    t.wait_for(f"⇄ app proxy 127.0.0.1:{port} · 0 app")
    app = requests.Session()
    app.proxies = {"http": f"http://127.0.0.1:{port}"}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    # A good request first: no message, counted in the header.
    assert app.get(stub.url + "/api/v1/balance?user_id=qa-alice", headers=auth, timeout=5).status_code == 200
    t.wait_for("· 1 app")
    # On the History tab, the app gets a 500.
    t.keys("2")
    stub.fault(kind="status", status=500, path="/api/v1/audio_packs", count=1)
    r = app.get(stub.url + "/api/v1/audio_packs", headers=auth, timeout=5)
    assert r.status_code == 500
    request_id = r.headers["X-Request-Id"]
    screen = t.wait_for(request_id)
    line = next(l for l in screen.splitlines() if request_id in l)
    assert "The app's request failed: GET /api/v1/audio_packs: HTTP 500" in line, screen
    # The Checks tab keeps it; the Requests tab marks it the app's, beside the tool's own.
    t.keys("4")
    screen = t.wait_for("app-error")
    assert re.search(r"✗ app-error\s+GET /api/v1/audio_packs", screen), screen
    t.keys("3")
    screen = t.wait_for("FROM")
    assert re.search(r"app\s+⚠ GET /api/v1/audio_packs\s+500", screen), screen  # ⚠: the Checks tab keeps it
    assert re.search(r"tool\s+GET /api/v1/audio_packs\s+200", screen), screen
    # `a` shows the app's alone.
    t.keys("a")
    screen = t.wait_for("the app's only")
    assert not re.search(r"^\s*tool\s", screen, re.M), screen


def test_an_app_request_that_breaks_the_contract_is_blamed_on_the_app(start_stub, tui):
    stub = start_stub()
    port = free_port()
    t = tui(stub.url, width=140, height=30, args=("--proxy", f"127.0.0.1:{port}"))
    t.wait_for("⇄ app proxy")
    r = requests.post(stub.url + "/api/v1/spend_cheer", json={"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": "3"},
                      headers={"Authorization": f"Bearer {TOKEN}"}, proxies={"http": f"http://127.0.0.1:{port}"}, timeout=5)
    assert r.status_code == 400
    t.keys("4")
    screen = t.wait_for("request-body")
    assert re.search(r"✗ request-body\s+the app's fault · amount · POST /api/v1/spend_cheer", screen), screen


def test_the_live_tab_pairs_the_apps_writes_and_f_loses_the_answer_to_its_next_purchase(start_stub, tui):
    """Issue 30: the paired timeline, and a `lose_answer` fault put in from the TUI's key (F, Tab, Enter)."""
    stub = start_stub()
    port = free_port()
    t = tui(stub.url, width=240, height=40, args=("--proxy", f"127.0.0.1:{port}", "--watch"))
    t.wait_for(f"⇄ app proxy 127.0.0.1:{port}")
    t.keys("5")
    t.wait_for("watching qa-alice")
    # The watch's first round is in: what the phone does next is a change from it.
    wait_until(lambda: stub.log().splitlines(), watch_round_done, timeout=15, what="the watch's first round",
               show=lambda lines: "\n".join(lines[-8:]))

    def phone(mode, *args):
        run = subprocess.run([sys.executable, str(ROOT / "scripts" / "phone.py"), stub.url, "--proxy", f"127.0.0.1:{port}", "--mode", mode,
                              "--start-delay", "0", *args], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]

    [spend] = phone("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--comment", "great pack")
    rid = spend["request_id"]
    screen = t.wait_for(f"new entry: 7 cheer on Rain on a Tin Roof “great pack” (app, {rid})")
    assert re.search(rf"⇄ app POST spend_cheer 7 on Rain on a Tin Roof “great pack” → 200 \(balance 1,243\) {rid}", screen), screen
    assert re.search(rf"✔ balance 1,250 → 1,243 \(−7\) \(app, {rid}\)", screen), screen
    # F: the fault prompt; Tab offers the first common fault (lose the answer to the next purchase).
    t.keys("F")
    t.wait_for("fault: ")
    t.keys("Tab")
    screen = t.wait_for("lose the answer to the app's next purchase")
    t.keys("Enter")
    t.wait_for("fault put into the app's traffic: lose_answer on POST /api/v2/purchase_cheer, next 1")
    tries = phone("lost-retry-same", "--bundle", "com.reiterate.cheer.200")
    assert [x["status"] for x in tries] == [None, 409], tries
    screen = t.wait_for("credited once", timeout=20)
    assert re.search(r"⇄ app POST purchase_cheer com\.reiterate\.cheer\.200 tx \d+ → 200 \(balance 1,443\), not delivered.* rq-", screen), screen
    assert "but the app never got the answer: a retry must reuse its transaction id" in screen, screen
    assert "handled well: retried with the same transaction id" in screen, screen
