"""The app's proxy inside the TUI (issue 29, item 4), end to end: the real binary in tmux with --proxy,
the app played by Python's HTTP client through it, against the real stand-in."""
import re

import requests

from conftest import TOKEN, free_port
from test_tui import tmux_server, tui  # noqa: F401  (fixtures: the private tmux server, a TUI in it)


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
    assert re.search(r"✗ request-body\s+app's fault · amount · POST /api/v1/spend_cheer", screen), screen
