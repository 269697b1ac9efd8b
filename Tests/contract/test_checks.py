"""The contract watchdog (issue 12) against the real stand-in: every check fires against its fault,
none fires without one, and the checks are the contract's (compared with the YAML itself)."""
import json
import re
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, SPEC_PATH

SHOP_BIN = os.environ.get("SHOP_BIN", str(ROOT / ".build" / "debug" / "reiterate-shop"))


def shop(*args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(REITERATE_TOKEN="dev-token", XDG_CACHE_HOME=tempfile.mkdtemp(), TZ="UTC")
    return subprocess.run([SHOP_BIN, *args], capture_output=True, text=True, env=env, timeout=60)


# ---------------------------------------------------------------------------------------------------
# the checks are the contract's

def normalized(schema, components):
    """A schema of the YAML as the watchdog reads it from the document: $refs resolved, `type` a list,
    and only what is checked (required, properties, items, minimum, maximum, minLength, maxLength, format)."""
    if "$ref" in schema:
        return normalized(components[schema["$ref"].split("/")[-1]], components)
    out = {"type": schema["type"] if isinstance(schema["type"], list) else [schema["type"]]}
    for key in ("minimum", "maximum", "minLength", "maxLength", "format"):
        if key in schema:
            out[key] = schema[key]
    if schema.get("required"):
        out["required"] = sorted(schema["required"])
    if "properties" in schema:
        out["properties"] = {k: normalized(v, components) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = normalized(schema["items"], components)
    return out


def response(entry, spec):
    """One declared response as the watchdog reads it: its media types and its JSON body's schema."""
    if "$ref" in entry:
        entry = spec["components"]["responses"][entry["$ref"].split("/")[-1]]
    content = entry.get("content", {})
    out = {"contentTypes": list(content)}
    if "application/json" in content and "schema" in content["application/json"]:
        out["schema"] = normalized(content["application/json"]["schema"], spec["components"]["schemas"])
    return out


def test_the_watchdog_reads_the_contract_from_its_document():
    """OpenAPIKit's reading (`reiterate-shop contract`) against PyYAML's: same operations, statuses,
    media types and schemas."""
    spec = yaml.safe_load(SPEC_PATH.read_text())
    components = spec["components"]["schemas"]
    r = shop("contract")
    assert r.returncode == 0, r.stderr
    table = json.loads(r.stdout)
    assert table["source"] == "built in"
    by_id = {op["operationId"]: op for op in table["operations"]}
    expected_ids = []
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            expected_ids.append(op["operationId"])
            got = by_id[op["operationId"]]
            assert (got["method"], got["path"]) == (method.upper(), path)
            declared = {str(code): response(entry, spec) for code, entry in op["responses"].items()}
            assert {r["status"]: {k: v for k, v in r.items() if k != "status"} for r in got["responses"]} == declared, op["operationId"]
    assert sorted(by_id) == sorted(expected_ids)
    assert table["error"] == normalized(components["Error"], components)


def test_another_contract_is_read_without_a_rebuild(start_stub, tmp_path):
    """`--contract FILE`: a copy of the contract that declares `balance` a string makes `print balance`
    against the stand-in (which sends an integer) warn `[schema]` about `balance`; the built-in one does not."""
    s = start_stub("--quiet")
    text = SPEC_PATH.read_text()
    old = "balance: { type: integer, description: Cheer units; may be 0. }"
    assert old in text
    changed = tmp_path / "reiterate-api.yaml"
    changed.write_text(text.replace(old, "balance: { type: string }"))
    r = shop("print", "balance", "--base-url", s.url)
    assert r.returncode == 0 and not warnings(r.stderr), r.stderr
    r = shop("print", "balance", "--base-url", s.url, "--contract", str(changed))
    found = warnings(r.stderr)
    assert r.returncode == 0 and "1,250" in r.stdout, (r.stdout, r.stderr)
    assert any("[schema] expected balance: string, got integer 1250" in line for line in found), r.stderr
    assert all("request id rq-" in line for line in found), found
    r = shop("print", "balance", "--base-url", s.url, "--contract", str(changed), "--strict")
    assert r.returncode == 65, r.stderr
    # The same from the config file, per environment.
    home = tmp_path / "config"
    (home / "reiterate-shop").mkdir(parents=True)
    (home / "reiterate-shop" / "config.toml").write_text(
        f'[environments.next]\nbase_url = "{s.url}"\ncontract = "{changed}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(REITERATE_TOKEN="dev-token", XDG_CACHE_HOME=tempfile.mkdtemp(), XDG_CONFIG_HOME=str(home), TZ="UTC")
    r = subprocess.run([SHOP_BIN, "print", "balance", "--env", "next"], capture_output=True, text=True, env=env, timeout=60)
    assert any("[schema] expected balance: string" in line for line in warnings(r.stderr)), r.stderr


def test_a_contract_that_cannot_be_read_is_one_line_and_no_request(start_stub, tmp_path):
    s = start_stub("--quiet")
    broken = tmp_path / "broken.yaml"
    broken.write_text("openapi: 3.1.0\ninfo: [\n")
    for path in (str(broken), str(tmp_path / "missing.yaml")):
        r = shop("print", "balance", "--base-url", s.url, "--contract", path)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 78 and len(lines) == 1 and lines[0].startswith("error: ") and path in lines[0], r.stderr
        assert "Error" not in lines[0] and "Swift" not in lines[0], lines[0]


# ---------------------------------------------------------------------------------------------------
# each check fires against its fault; none without

def warnings(stderr):
    return [line for line in stderr.splitlines() if line.startswith("warning: ") and "] expected " in line]


def test_no_finding_without_a_fault(start_stub):
    s = start_stub("--quiet", "--whale-history", "1000")
    for args in (["print", "balance"], ["print", "packs"], ["print", "history"], ["print", "history", "--page", "5"],
                 ["print", "history", "--all"], ["print", "history", "--user", "qa-whale", "--per-page", "200", "--page", "3"],
                 ["print", "history", "--user", "qa-empty"]):
        r = shop(*args, "--base-url", s.url, "--strict")
        assert r.returncode == 0 and not warnings(r.stderr), (args, r.stderr)


@pytest.mark.parametrize("fault,check", [
    ({"kind": "content_type", "path": "/api/v1/balance"}, "content-type"),
    ({"kind": "no_request_id", "path": "/api/v1/cheer_history"}, "request-id"),
    ({"kind": "bad_paging", "path": "/api/v1/cheer_history"}, "paging"),
    ({"kind": "duplicate_entry", "path": "/api/v1/cheer_history"}, "duplicate"),
    ({"kind": "out_of_order", "path": "/api/v1/cheer_history"}, "order"),
    ({"kind": "malformed_entry", "path": "/api/v1/cheer_history"}, "schema"),
])
def test_each_check_fires_against_its_fault(start_stub, fault, check):
    s = start_stub("--quiet")
    r = s.http.post(s.url + "/_stub/faults", json={**fault, "count": 1}, timeout=5)
    assert r.status_code == 201, r.text
    what = "balance" if "balance" in fault["path"] else "history"
    r = shop("print", what, "--base-url", s.url, "--strict")
    found = warnings(r.stderr)
    assert r.returncode == 65 and any(f"[{check}] expected " in line for line in found), (r.returncode, r.stderr)
    # The data still shows when it can be read (a wrong label or paging hides nothing).
    if check in ("content-type", "request-id", "paging", "duplicate", "order", "schema"):
        assert r.stdout.strip(), r.stderr
    # Without --strict the same run exits 0, with the same warnings.
    s.http.post(s.url + "/_stub/faults", json={**fault, "count": 1}, timeout=5)
    r = shop("print", what, "--base-url", s.url)
    assert warnings(r.stderr) and r.returncode == 0, r.stderr


def serve_once(status, headers, body):
    """A server on 127.0.0.1 answering every GET with `status`, `headers` and `body` (what the
    stand-in cannot be made to send: a 201, an unreadable Retry-After)."""
    from http.server import BaseHTTPRequestHandler, HTTPServer
    import threading

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_429_without_a_readable_retry_after_is_a_finding():
    server = serve_once(429, {"Content-Type": "application/json", "X-Request-Id": "rq-429", "Retry-After": "soon"}, b'{"message":"slow down"}')
    try:
        r = shop("print", "balance", "--base-url", f"http://127.0.0.1:{server.server_port}", "--timeout", "3")
        assert any("[retry-after] expected a Retry-After of seconds or an HTTP date, got “soon”" in line for line in warnings(r.stderr)), r.stderr
    finally:
        server.shutdown()


def test_a_2xx_other_than_the_declared_one_is_a_finding_and_the_data_shows():
    server = serve_once(201, {"Content-Type": "application/json", "X-Request-Id": "rq-201"}, b'{"balance":77}')
    try:
        r = shop("print", "balance", "--base-url", f"http://127.0.0.1:{server.server_port}", "--strict")
        assert r.stdout.startswith("77 cheer"), r.stdout + r.stderr
        assert r.returncode == 65 and any("[status] expected 200, or a 4xx/5xx error, got 201" in line for line in warnings(r.stderr)), r.stderr
    finally:
        server.shutdown()


# ---------------------------------------------------------------------------------------------------
# spend and buy for scripts

def test_spend_and_buy_need_yes_and_a_writable_environment(start_stub, tmp_path):
    s = start_stub("--quiet")
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "5", "--base-url", s.url)
    assert r.returncode == 64 and "spend changes the balance on LOCAL as qa-alice: add --yes to do it" in r.stderr
    assert s.get("/api/v1/balance?user_id=qa-alice").json()["balance"] == 1250  # nothing was sent
    config = tmp_path / "config.toml"
    config.write_text(f'[environments.prod]\nbase_url = "{s.url}"\nread_only = true\n')
    env_config = {"XDG_CONFIG_HOME": str(tmp_path)}
    (tmp_path / "reiterate-shop").mkdir()
    (tmp_path / "reiterate-shop" / "config.toml").write_text(config.read_text())
    e = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    e.update(REITERATE_TOKEN="dev-token", XDG_CACHE_HOME=tempfile.mkdtemp(), **env_config)
    r = subprocess.run([SHOP_BIN, "buy", "--bundle", "com.reiterate.cheer.200", "--yes", "--env", "prod"],
                       capture_output=True, text=True, env=e, timeout=30)
    assert r.returncode == 78 and "PROD is read-only: buy is refused" in r.stderr, r.stderr


def test_spend_prints_its_verification_and_a_wrong_debit_fails_it(start_stub):
    s = start_stub("--quiet")
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--comment", "from a script", "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Spent 7 cheer on Rain on a Tin Roof. Balance 1,243 cheer. ✔ 3 checks passed")
    assert "✔ spend-balance: 1,243" in r.stdout and "✔ spend-history" in r.stdout and "✔ spend-pack-total" in r.stdout
    assert not warnings(r.stderr), r.stderr
    # The server debits one more than asked: the check says so, on stdout and as a warning.
    s.http.post(s.url + "/_stub/faults", json={"kind": "wrong_debit", "path": "/api/v1/spend_cheer", "count": 1}, timeout=5)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 65, r.stdout + r.stderr
    assert "✗ spend-balance: expected 1,236 (1,243 − 7), got 1,235" in r.stdout
    assert any("[spend-balance] expected 1,236 (1,243 − 7), got 1,235" in line for line in warnings(r.stderr)), r.stderr
    # A cut comment fails spend-history.
    s.http.post(s.url + "/_stub/faults", json={"kind": "cut_comment", "path": "/api/v1/spend_cheer", "count": 1}, timeout=5)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "1", "--comment", "a whole sentence", "--yes", "--base-url", s.url)
    assert r.returncode == 0 and "✗ spend-history" in r.stdout, r.stdout
    assert any("[spend-history]" in line for line in warnings(r.stderr)), r.stderr


def test_buy_makes_a_transaction_id_and_its_replay_changes_nothing(start_stub):
    s = start_stub("--quiet")
    r = shop("buy", "--bundle", "com.reiterate.cheer.200", "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 0, r.stdout + r.stderr
    # The verdict leads stdout; the transaction id it made comes after the checks.
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Bought com.reiterate.cheer.200. Balance 1,450 cheer."), r.stdout
    m = re.fullmatch(r"transaction id (\d+) \(replay it with --transaction-id \1\)", lines[-1])
    assert m and "✔ purchase-balance: 1,450" in r.stdout, r.stdout
    r = shop("buy", "--bundle", "com.reiterate.cheer.200", "--transaction-id", m.group(1), "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 1 and f"Transaction {m.group(1)} was already credited" in r.stdout and "✔ replay-unchanged: 1,450" in r.stdout, r.stdout + r.stderr


def test_a_spend_whose_answer_is_cut_is_settled_not_resent(start_stub):
    s = start_stub("--quiet")
    s.http.post(s.url + "/_stub/faults", json={"kind": "truncate", "path": "/api/v1/spend_cheer", "count": 1}, timeout=5)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--yes", "--base-url", s.url)
    assert r.returncode == 0 and "the spend was applied (balance 1,243 = 1,250 − 7)" in r.stdout, r.stdout + r.stderr
    s.http.post(s.url + "/_stub/faults", json={"kind": "reset", "path": "/api/v1/spend_cheer", "count": 1}, timeout=5)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--yes", "--base-url", s.url)
    assert r.returncode == 69 and "the spend was not applied (balance 1,243, unchanged)" in r.stdout, r.stdout + r.stderr
    assert s.get("/api/v1/balance?user_id=qa-alice").json()["balance"] == 1243


# ---------------------------------------------------------------------------------------------------
# HAR 1.2, read back by a real HAR reader (mitmproxy)

MITMDUMP = str(ROOT / ".venv" / "bin" / "mitmdump")


LIST_FLOWS = """
def response(flow):
    print("FLOW", flow.request.method, flow.request.pretty_url, flow.response.status_code if flow.response else "-")
"""


def har_requests(path):
    """What mitmproxy makes of a HAR file: `mitmdump -nr FILE` reads it, and a two-line addon prints
    each flow's method, full URL and status (mitmdump's own listing shortens long URLs)."""
    addon = Path(tempfile.mkdtemp()) / "list_flows.py"
    addon.write_text(LIST_FLOWS)
    r = subprocess.run([MITMDUMP, "-nr", str(path), "-q", "-s", str(addon)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line[5:] for line in r.stdout.splitlines() if line.startswith("FLOW ")]


def test_print_writes_a_har_that_mitmproxy_reads_without_the_token(start_stub, tmp_path):
    s = start_stub("--quiet")
    s.http.post(s.url + "/_stub/faults", json={"kind": "status", "status": 500, "path": "/api/v1/audio_packs", "count": 5}, timeout=5)
    har = tmp_path / "session.har"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(REITERATE_TOKEN="planted-secret-token-0001", XDG_CACHE_HOME=tempfile.mkdtemp())
    # The stand-in only knows dev-token: the planted one gets 401, and must not reach the file either.
    for args in (["print", "history", "--page", "2"], ["print", "packs"], ["print", "balance"]):
        e = dict(env, REITERATE_TOKEN="dev-token") if args[1] != "balance" else env
        subprocess.run([SHOP_BIN, *args, "--base-url", s.url, "--har", str(har) + "." + args[1]], env=e, capture_output=True, text=True, timeout=60)
    history = har_requests(str(har) + ".history")
    assert len(history) == 1 and history[0].startswith("GET ") and history[0].endswith("/api/v1/cheer_history?user_id=qa-alice&page=2&per_page=50 200"), history
    packs = har_requests(str(har) + ".packs")
    assert len(packs) >= 1 and all(line.endswith("/api/v1/audio_packs 500") for line in packs), packs  # the retries of the 500 too
    balance_file = (tmp_path / "session.har.balance")
    text = balance_file.read_text()
    assert "planted-secret-token-0001" not in text and "dev-token" not in text
    doc = json.loads(text)
    entry = doc["log"]["entries"][0]
    assert doc["log"]["version"] == "1.2" and entry["response"]["status"] == 401 and entry["_requestId"].startswith("rq-")
    assert {"name": "Authorization", "value": "<redacted>"} in entry["request"]["headers"]
    assert oct(balance_file.stat().st_mode & 0o777) == "0o600"
    assert har_requests(balance_file)


def test_the_tui_writes_its_session_as_har_on_quit(start_stub, tmp_path):
    s = start_stub("--quiet")
    har = tmp_path / "tui.har"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(REITERATE_TOKEN="dev-token", XDG_CACHE_HOME=tempfile.mkdtemp(), TERM="xterm-256color", LANG="C.UTF-8", TZ="UTC")
    socket = f"har-{os.getpid()}"
    cmd = f"{SHOP_BIN} --base-url {s.url} --har {har}"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-x", "120", "-y", "40", cmd], env=env, check=True)
    try:
        import time
        def screen():
            return subprocess.run(["tmux", "-L", socket, "capture-pane", "-p"], capture_output=True, text=True).stdout
        deadline = time.monotonic() + 15
        while "46 of 46 packs" not in screen() and time.monotonic() < deadline:
            time.sleep(0.05)
        for keys in (["2"], ["]"], ["3"], ["q"]):
            subprocess.run(["tmux", "-L", socket, "send-keys", *keys])
            time.sleep(0.4)
        deadline = time.monotonic() + 10
        while not har.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    lines = har_requests(har)
    paths = " ".join(lines)
    for p in ("/api/v1/balance", "/api/v1/audio_packs", "/api/v1/cheer_history?user_id=qa-alice&page=1", "page=2"):
        assert p in paths, lines
    assert "dev-token" not in har.read_text()
