"""The contract watchdog (issue 12) against the real stand-in: every check fires against its fault,
none fires without one, and the checks are the contract's (compared with the YAML itself)."""
import json
import re
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from conftest import ROOT, SPEC_PATH, TOKEN, shop, warnings


# ---------------------------------------------------------------------------------------------------
# the checks are the contract's

# What JSON Schema itself calls annotations (its meta-data vocabulary: `title`, `description`,
# `default`, `deprecated`, `readOnly`, `writeOnly`, `examples`; OpenAPI's `example`; `$comment`): they
# describe and never constrain, so the watchdog has nothing to check in them. Every other keyword the
# YAML uses must come back from the watchdog's reading: one it drops is a mismatch here.
ANNOTATIONS = {"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "example", "$comment"}


def normalized(schema, components):
    """A schema of the YAML as the watchdog must read it: $refs resolved, `type` a list, `required`
    sorted (and left out when empty), the annotations left out, and every other keyword kept as written."""
    if "$ref" in schema:
        return normalized(components[schema["$ref"].split("/")[-1]], components)
    out = {}
    for key, value in schema.items():
        # A number's default is kept: `explore` sends a parameter at it (the other annotations are left out).
        if key == "default" and schema.get("type") in ("integer", "number") and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
            continue
        if key in ANNOTATIONS:
            continue
        if key == "type":
            out[key] = value if isinstance(value, list) else [value]
        elif key == "required":
            if value:
                out[key] = sorted(value)
        elif key == "properties":
            out[key] = {k: normalized(v, components) for k, v in value.items()}
        elif key == "items":
            out[key] = normalized(value, components)
        else:
            out[key] = value
    return out


def parameter(entry, spec):
    """One declared parameter as the watchdog reads it."""
    if "$ref" in entry:
        entry = spec["components"]["parameters"][entry["$ref"].split("/")[-1]]
    return {"in": entry["in"], "name": entry["name"], "required": entry.get("required", False),
            "schema": normalized(entry["schema"], spec["components"]["schemas"])}


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
            assert got["parameters"] == [parameter(p, spec) for p in op.get("parameters", [])], op["operationId"]
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
    assert r.returncode == 0 and r.stdout == "1,250 cheer  (qa-alice)\n", (r.stdout, r.stderr)
    assert len(found) == 1 and "[schema] expected balance: string, got integer 1250" in found[0], r.stderr
    assert "request id rq-" in found[0], found
    r = shop("print", "balance", "--base-url", s.url, "--contract", str(changed), "--strict")
    assert r.returncode == 65, r.stderr
    # The same from the config file, per environment.
    r = shop("print", "balance", "--env", "next", config=f'[environments.next]\nbase_url = "{s.url}"\ncontract = "{changed}"\n')
    assert r.returncode == 0 and any("[schema] expected balance: string" in line for line in warnings(r.stderr)), r.stderr


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

def test_no_finding_without_a_fault(start_stub):
    s = start_stub("--quiet", "--whale-history", "1000")
    for args in (["print", "balance"], ["print", "packs"], ["print", "history"], ["print", "history", "--page", "5"],
                 ["print", "history", "--all"], ["print", "history", "--user", "qa-whale", "--per-page", "200", "--page", "3"],
                 ["print", "history", "--user", "qa-empty"]):
        r = shop(*args, "--base-url", s.url, "--strict")
        assert r.returncode == 0 and r.stdout and not warnings(r.stderr), (args, r.stderr)  # no warning line at all


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
    s.fault(**fault, count=1)
    what = "balance" if "balance" in fault["path"] else "history"
    r = shop("print", what, "--base-url", s.url, "--strict")
    found = warnings(r.stderr)
    assert r.returncode == 65 and any(f"[{check}] expected " in line for line in found), (r.returncode, r.stderr)
    # Every warning is a finding: a request, then the check it failed.
    assert all(re.match(r"warning: (GET|POST) /api/\S+: \[[a-z0-9-]+\] expected ", line) for line in found), r.stderr
    # The data still shows (a wrong label, paging or entry hides nothing): the balance, or the page's table.
    if what == "balance":
        assert r.stdout == "1,250 cheer  (qa-alice)\n", r.stdout + r.stderr
    else:
        lines = r.stdout.splitlines()
        assert lines[0].split() == ["DATE", "CREATOR", "PRODUCT", "AMOUNT", "COMMENTS"] and len(lines) >= 50, r.stdout + r.stderr
    # Without --strict the same run exits 0, with the same warnings (but for the request ids).
    s.fault(**fault, count=1)
    again = shop("print", what, "--base-url", s.url)

    def without_ids(text):
        return [re.sub(r"rq-[0-9a-f]+", "rq-…", line) for line in warnings(text)]

    assert again.returncode == 0 and again.stdout == r.stdout, again.stderr
    assert without_ids(again.stderr) == without_ids(r.stderr), (again.stderr, r.stderr)


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
    r = shop("buy", "--bundle", "com.reiterate.cheer.200", "--yes", "--env", "prod",
             config=f'[environments.prod]\nbase_url = "{s.url}"\nread_only = true\n')
    assert r.returncode == 78 and "PROD is read-only: buy is refused" in r.stderr, r.stderr
    assert s.get("/api/v1/balance?user_id=qa-alice").json()["balance"] == 1250  # nothing was sent


def test_spend_prints_its_verification_and_a_wrong_debit_fails_it(start_stub):
    s = start_stub("--quiet")
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--comment", "from a script", "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Spent 7 cheer on Rain on a Tin Roof. Balance 1,243 cheer. ✔ 3 checks passed")
    assert "✔ spend-balance: 1,243" in r.stdout and "✔ spend-history" in r.stdout and "✔ spend-pack-total" in r.stdout
    assert not warnings(r.stderr), r.stderr
    # The server debits one more than asked: the check says so, on stdout and as a warning.
    s.fault(kind="wrong_debit", path="/api/v1/spend_cheer", count=1)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 65, r.stdout + r.stderr
    assert "✗ spend-balance: expected 1,236 (1,243 − 7), got 1,235" in r.stdout
    assert any("[spend-balance] expected 1,236 (1,243 − 7), got 1,235" in line for line in warnings(r.stderr)), r.stderr
    # A cut comment fails spend-history, and a failed check exits 65 without --strict (issue 44: scripts rely on it).
    s.fault(kind="cut_comment", path="/api/v1/spend_cheer", count=1)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "1", "--comment", "a whole sentence", "--yes", "--base-url", s.url)
    assert r.returncode == 65 and "✗ spend-history" in r.stdout, r.stdout
    assert any("[spend-history]" in line for line in warnings(r.stderr)), r.stderr


def test_buy_makes_a_transaction_id_and_its_replay_changes_nothing(start_stub):
    s = start_stub("--quiet")
    r = shop("buy", "--bundle", "com.reiterate.cheer.200", "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 0, r.stdout + r.stderr
    # The verdict leads stdout; the transaction id it made comes after the checks.
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Bought com.reiterate.cheer.200. Balance 1,450 cheer."), r.stdout
    m = re.fullmatch(r"transaction id (\d+): made up by this tool, no App Store purchase has it \(give --transaction-id for a real one; replay this with --transaction-id \1\)", lines[-1])
    assert m and "✔ purchase-balance: 1,450" in r.stdout, r.stdout
    r = shop("buy", "--bundle", "com.reiterate.cheer.200", "--transaction-id", m.group(1), "--yes", "--base-url", s.url, "--strict")
    assert r.returncode == 1 and f"Transaction {m.group(1)} was already credited" in r.stdout and "✔ replay-unchanged: 1,450" in r.stdout, r.stdout + r.stderr


def test_a_spend_whose_answer_is_cut_is_settled_not_resent(start_stub):
    s = start_stub("--quiet")
    s.fault(kind="truncate", path="/api/v1/spend_cheer", count=1)
    r = shop("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--yes", "--base-url", s.url)
    assert r.returncode == 0 and "the spend was applied (balance 1,243 = 1,250 − 7)" in r.stdout, r.stdout + r.stderr
    s.fault(kind="reset", path="/api/v1/spend_cheer", count=1)
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


def har_entries(path):
    """A HAR file's entries as (method, path and query, status, request id), read as JSON."""
    doc = json.loads(Path(path).read_text())
    assert doc["log"]["version"] == "1.2", doc["log"].get("version")
    return [(e["request"]["method"], urlsplit(e["request"]["url"])._replace(scheme="", netloc="").geturl(),
             e["response"]["status"], e["_requestId"]) for e in doc["log"]["entries"]]


def logged(stub, since=0):
    """The stand-in's request log from line `since` on, as HAR entries read: the API's requests only."""
    out = []
    for line in stub.log().splitlines()[since:]:
        m = re.match(r"(GET|POST|PUT|DELETE) (/api/\S+) (\d{3}) \S+ (rq-[0-9a-f]+)", line)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3)), m.group(4)))
    return out


def as_mitmproxy_lists(stub, entries):
    return [f"{method} {stub.url}{path} {status}" for method, path, status, _ in entries]


def test_print_writes_a_har_that_mitmproxy_reads_without_the_token(start_stub, tmp_path):
    s = start_stub()  # logging its requests: the HAR must hold exactly those
    s.fault(kind="status", status=500, path="/api/v1/audio_packs", count=5)
    har = tmp_path / "session.har"
    # The stand-in only knows dev-token: the planted one gets 401, and must not reach the file either.
    runs = {}
    for args in (["print", "history", "--page", "2"], ["print", "packs"], ["print", "balance"]):
        token = "planted-secret-token-0001" if args[1] == "balance" else TOKEN
        since = len(s.log().splitlines())
        runs[args[1]] = shop(*args, "--base-url", s.url, "--har", str(har) + "." + args[1], token=token)
        entries = har_entries(str(har) + "." + args[1])
        assert entries == logged(s, since), (args, entries, s.log())  # every request the run sent, none other
        # mitmproxy reads the same requests from the file.
        assert har_requests(str(har) + "." + args[1]) == as_mitmproxy_lists(s, entries), args
    history = har_entries(str(har) + ".history")
    assert [e[:3] for e in history] == [("GET", "/api/v1/cheer_history?user_id=qa-alice&page=2&per_page=50", 200)], history
    assert runs["history"].returncode == 0, runs["history"].stderr
    packs = har_entries(str(har) + ".packs")
    # The 500 and each of its retries (GET is retried), all answered 500, and the run says so.
    assert len(packs) >= 2 and {e[:3] for e in packs} == {("GET", "/api/v1/audio_packs", 500)}, packs
    assert runs["packs"].returncode == 1 and "HTTP 500" in runs["packs"].stderr, runs["packs"].stderr
    balance_file = (tmp_path / "session.har.balance")
    text = balance_file.read_text()
    assert "planted-secret-token-0001" not in text and TOKEN not in text
    doc = json.loads(text)
    [entry] = doc["log"]["entries"]
    assert entry["response"]["status"] == 401 and entry["_requestId"].startswith("rq-")
    assert {"name": "Authorization", "value": "<redacted>"} in entry["request"]["headers"]
    assert oct(balance_file.stat().st_mode & 0o777) == "0o600"
    # The history page's answer is in the file whole: the page the stand-in serves.
    [page] = json.loads((tmp_path / "session.har.history").read_text())["log"]["entries"]
    served = s.get("/api/v1/cheer_history?user_id=qa-alice&page=2&per_page=50").json()
    assert json.loads(page["response"]["content"]["text"]) == served


def test_the_tui_writes_its_session_as_har_on_quit(start_stub, tui, tmp_path):
    s = start_stub()  # logging its requests: the HAR must hold exactly those
    har = tmp_path / "tui.har"
    t = tui(s.url, width=120, height=40, args=("--har", str(har)))
    t.wait_for("46 of 46 packs", timeout=15)
    t.keys("2")
    t.wait_for("entry 1 of 230 · page 1 of 5")
    t.keys("]")
    t.wait_for("entry 51 of 230 · page 2 of 5")
    t.wait_for("2026-07-19 12:27")  # the first entry of page 2 (UTC), once it has loaded
    t.keys("3")
    t.wait_for("GET /api/v1/cheer_hist")
    t.keys("q")
    assert t.wait_exit() == 0
    entries = har_entries(har)
    # Every request of the session, none other: the stand-in's log, request id for request id.
    assert sorted(entries, key=lambda e: e[3]) == sorted(logged(s), key=lambda e: e[3]), (entries, s.log())
    assert {e[2] for e in entries} == {200}, entries
    paths = [e[1] for e in entries]
    for p in ("/api/v1/balance?user_id=qa-alice", "/api/v1/audio_packs",
              "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50", "/api/v1/cheer_history?user_id=qa-alice&page=2&per_page=50"):
        assert p in paths, paths
    assert sorted(har_requests(har)) == sorted(as_mitmproxy_lists(s, entries))
    assert TOKEN not in har.read_text()
