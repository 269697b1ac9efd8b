"""Test sessions (issue 46): one record every command and the TUI append to, read by `session show`, the
ledger, the Purchases and Checks tabs; crash-safe under SIGKILL; closed into a bundle mitmproxy opens with no
secret in any file; and diffed between two sessions by kind and subject. Every run is the real binary, the
stand-in on 127.0.0.1, the TUI in tmux; each test keeps its sessions in its own state folder."""
import json
import os
import re
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import requests

from conftest import SHOP_BIN, Stub, shop, shop_env, wait_until
from test_checks import har_requests
from test_ledger import BUNDLE, AppStore
from test_tui import spend_in_tui

SECRET = "session-secret-token-4f2c9a"


class Session:
    """A tester's machine: one state folder (the sessions), one config folder, the token in the environment."""

    def __init__(self, folder: Path, config: str = "", token: str = "dev-token"):
        self.state = folder / "state"
        self.config_home = folder / "config"
        (self.config_home / "reiterate-shop").mkdir(parents=True, exist_ok=True)
        (self.config_home / "reiterate-shop" / "config.toml").write_text(config)
        self.token = token
        self.env = {"XDG_STATE_HOME": str(self.state), "XDG_CONFIG_HOME": str(self.config_home)}

    def run(self, *args, **kw):
        return shop(*args, token=self.token, env=self.env, **kw)

    def show(self, *which):
        r = self.run("session", "show", "--json", *which)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def folders(self):
        return sorted(p for p in (self.state / "reiterate-shop" / "test-sessions").iterdir() if p.is_dir())

    def record(self, folder=None) -> Path:
        return (folder or self.folders()[-1]) / "record.jsonl"


@pytest.fixture
def store(tmp_path):
    s = AppStore(tmp_path / "appstore", "--appstore-verify")
    yield s
    s.stub.stop()


# ---------------------------------------------------------------------------------------------------
# One session, four sources: a CLI buy, a TUI spend, the app's purchase through the proxy, a negative run

def test_one_session_holds_a_cli_buy_a_tui_spend_an_app_purchase_and_negative(store, start_proxy, tui, tmp_path):
    me = Session(tmp_path, store.config())
    r = me.run("session", "start", "--env", "stub", "--name", "purchases 1.4.3", "--build", "1.4.3 (42)", "--charter", "purchases after a refund")
    assert r.returncode == 0 and "session purchases 1.4.3 started" in r.stdout, r.stderr
    t = tui(store.stub.url, env=me.env, args=["--env", "stub"], width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    # 1. The CLI's purchase of an App Store transaction.
    tx1 = store.purchase()
    bought = me.run("buy", "--env", "stub", "--bundle", BUNDLE, "--transaction-id", tx1, "--yes")
    assert bought.returncode == 0, bought.stderr
    # The TUI's header follows the balance the buy settled (another process), with no `r`.
    t.wait_for("Balance 1,450 cheer", timeout=10)
    # 2. The app's purchase, through the proxy (Python's requests as the app), in the same session.
    proxy = start_proxy(store.stub.url, env={"XDG_STATE_HOME": me.env["XDG_STATE_HOME"]})
    app = requests.Session()
    app.trust_env = False
    app.proxies = {"http": proxy.url}
    app.headers["Authorization"] = "Bearer dev-token"
    tx2 = store.purchase(product="com.reiterate.cheer.500")
    posted = app.post(store.stub.url + "/api/v2/purchase_cheer?user_id=qa-alice", json={"identifier": "com.reiterate.cheer.500", "transaction_id": int(tx2)},
                      timeout=10)
    assert posted.status_code == 200, posted.text
    app_request_id = posted.headers["X-Request-Id"]
    assert proxy.stop() == 0
    # 3. The TUI's own spend.
    spend_in_tui(t, 5)
    t.wait_for("✔ 3 checks passed", timeout=20)
    t.keys("Enter")
    # 4. negative, with the stand-in taking one overspend it must refuse: a finding.
    store.stub.fault(kind="accept_overspend", path="/api/v1/spend_cheer", count=1)
    neg = me.run("negative", "--env", "stub", "--yes", "--only", "overspend", "--pace", "0")
    assert neg.returncode == 65, neg.stdout + neg.stderr

    shown = me.show()
    assert shown["meta"]["name"] == "purchases 1.4.3" and shown["meta"]["build"] == "1.4.3 (42)" and shown["open"]
    purchases = {p["transaction"]: p for p in shown["purchases"]}
    assert [(p["command"], p["source"], p["status"]) for p in purchases[tx1]["posts"]] == [("buy", "tool", 200)]
    assert [(p["command"], p["source"], p["status"], p["request_id"]) for p in purchases[tx2]["posts"]] == [("proxy", "app", 200, app_request_id)]
    negative = [g for g in shown["groups"] if "negative" in g["commands"]]
    assert negative and negative[0]["blame"] == "server", shown["groups"]
    timeline = [e["what"] for e in shown["timeline"]]
    assert any(w.startswith("POST /api/v1/spend_cheer → 200") for w in [e["what"] for e in shown["timeline"] if e["command"] == "tui"]), timeline
    assert any(w.startswith("the app: POST /api/v2/purchase_cheer → 200") for w in timeline), timeline
    assert {"buy", "proxy", "negative", "tui"} <= set(shown["covered"]["commands"]), shown["covered"]
    assert shown["incomplete"] == [], shown["incomplete"]

    # The ledger with no --read-har judges every purchase of the session: the CLI's and the app's.
    r = me.run("ledger", "--json", "--env", "stub")
    verdicts = {json.loads(l)["transaction_id"]: json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")}
    assert r.returncode == 0, r.stdout + r.stderr
    assert verdicts[tx1]["verdict"] == "credited" and verdicts[tx2]["verdict"] == "credited", verdicts
    assert verdicts[tx2]["request_ids"] == [app_request_id]
    # The ledger's verdicts went into the session too.
    assert {p["transaction"]: p["verdict"] for p in me.show()["purchases"]}[tx2] == "credited"

    # The Purchases tab reads the session: both purchases credited, neither "not seen".
    t.keys("6")
    screen = t.wait_screen(lambda s: tx1[-12:] in s and tx2[-12:] in s, timeout=20, what="both purchases on the Purchases tab")
    rows = [line.split("│")[0] for line in screen.splitlines() if tx1[-12:] in line.split("│")[0] or tx2[-12:] in line.split("│")[0]]
    assert len(rows) == 2 and all("credited" in row and "not seen" not in row for row in rows), screen
    # The Checks tab: negative's finding and the buy's passed check (other processes), the TUI's own spend checks.
    t.keys("4")
    screen = t.wait_for("negative overspend (negative,", timeout=10)
    assert "(buy, in the session)" in screen and "spend-balance" in screen, screen
    assert "⚠" in screen.splitlines()[-1], screen.splitlines()[-1]
    # The Session tab says the same as `session show`.
    t.keys("7")
    screen = t.wait_for("session purchases 1.4.3")
    assert f"{tx2} com.reiterate.cheer.500: credited" in screen and "the app posted → 200" in screen, screen


# ---------------------------------------------------------------------------------------------------
# Crash-safe: SIGKILL in the middle of a write loses nothing appended before it

def test_a_session_killed_in_the_middle_of_a_write_loses_nothing_appended_before(start_stub, tmp_path):
    s = start_stub("--quiet")
    me = Session(tmp_path, f'[environments.t]\nbase_url = "{s.url}"\n')
    assert me.run("session", "start", "--env", "t", "--name", "crash").returncode == 0
    assert me.run("print", "balance", "--env", "t").returncode == 0
    # The purchase's answer is held back 30 s: the buy is killed while it waits.
    s.fault(kind="latency", ms=30000, path="/api/v2/purchase_cheer", count=1)
    buy = subprocess.Popen([str(SHOP_BIN), "buy", "--env", "t", "--bundle", BUNDLE, "--yes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=shop_env(env=me.env))
    record = me.record()
    wait_until(lambda: record.read_text(), lambda text: '"kind":"sent"' in text and "purchase_cheer" in text, timeout=20,
               what="the purchase appended as sent")
    before = record.read_bytes()
    os.kill(buy.pid, signal.SIGKILL)
    buy.wait(10)
    after = record.read_bytes()
    assert after.startswith(before)  # every byte appended before the kill is there
    lines = [line for line in after.decode().splitlines() if line]
    assert all(json.loads(line) for line in lines)  # each line whole (one write(2) each)
    shown = me.show()
    assert shown["covered"]["writes_unanswered"] == 1, shown["covered"]
    assert any("sent with no answer recorded" in why for why in shown["incomplete"]), shown["incomplete"]
    assert any(why == "1 command ended without saying how (killed, or the machine stopped)" for why in shown["incomplete"]), shown["incomplete"]
    # The write is in the session as sent, its request whole: the bundle's curl line can send it again.
    sent = [e for e in shown["timeline"] if "sent, no answer recorded" in e["what"]]
    assert len(sent) == 1 and sent[0]["command"] == "buy" and "POST /api/v2/purchase_cheer" in sent[0]["what"], shown["timeline"]


def test_kills_at_any_moment_leave_only_whole_lines_and_at_most_the_last_cut(start_stub, tmp_path):
    """`watch --interval 0.2` appends its reads as fast as the stand-in answers; it is killed three times
    at a different moment each: the record stays readable, line for line, across the three."""
    s = start_stub("--quiet")
    me = Session(tmp_path, f'[environments.t]\nbase_url = "{s.url}"\n')
    assert me.run("session", "start", "--env", "t", "--name", "kills").returncode == 0
    record = me.record()
    for n in (3, 9, 17):
        size = record.stat().st_size
        p = subprocess.Popen([str(SHOP_BIN), "watch", "--interval", "0.2", "--env", "t"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env=shop_env(env=me.env))
        wait_until(lambda: record.read_bytes()[size:].count(b'"kind":"exchange"'), lambda c: c >= n, timeout=30, what=f"{n} exchanges appended")
        before = record.read_bytes()
        p.kill()
        p.wait(10)
        assert record.read_bytes().startswith(before)
    text = record.read_text()
    whole = text.endswith("\n")
    lines = text.splitlines()
    for line in (lines if whole else lines[:-1]):
        if line:
            json.loads(line)
    shown = me.show()
    assert shown["covered"]["requests"] >= 3 + 9 + 17
    # Three commands never said how they ended: said, not hidden.
    assert "3 commands ended without saying how (killed, or the machine stopped)" in shown["incomplete"], shown["incomplete"]


def test_a_line_cut_short_is_counted_and_the_rest_is_read(start_stub, tmp_path):
    s = start_stub("--quiet")
    me = Session(tmp_path, f'[environments.t]\nbase_url = "{s.url}"\n')
    assert me.run("session", "start", "--env", "t", "--name", "cut").returncode == 0
    assert me.run("print", "balance", "--env", "t").returncode == 0
    with open(me.record(), "ab") as f:
        f.write(b'{"kind":"note","text":"half a li')  # what a power cut in the middle of a write leaves
    shown = me.show()
    assert shown["covered"]["requests"] >= 1
    assert shown["incomplete"] == ["1 line of the record could not be read (a process killed while writing one?)"], shown["incomplete"]
    # The next command's line is read whole after it (each line starts on a line of its own), and the cut one
    # stays counted.
    assert me.run("session", "note", "after the cut").returncode == 0
    shown = me.show()
    assert shown["notes"] == ["after the cut"], shown["notes"]
    assert shown["incomplete"] == ["1 line of the record could not be read (a process killed while writing one?)"], shown["incomplete"]


# ---------------------------------------------------------------------------------------------------
# session close: the bundle

def test_close_writes_a_bundle_mitmproxy_opens_with_every_finding_and_no_secret(tmp_path):
    s = Stub("--token", SECRET)
    try:
        me = Session(tmp_path, f'[environments.t]\nbase_url = "{s.url}"\n', token=SECRET)
        assert me.run("session", "start", "--env", "t", "--name", "bundle", "--build", "2.0", "--charter", "refusals").returncode == 0
        s.fault(kind="missing_balance", path="/api/v1/balance", count=1)
        assert me.run("print", "balance", "--env", "t").returncode != 0
        s.fault(kind="accept_overspend", path="/api/v1/spend_cheer", count=1)
        assert me.run("negative", "--env", "t", "--yes", "--only", "overspend", "--pace", "0").returncode == 65
        assert me.run("print", "history", "--env", "t").returncode == 0
        assert me.run("session", "note", "the overspend went through on 2.0").returncode == 0
        shown = me.show()
        findings = [(g["kind"], sub["subject"], sub["request_ids"]) for g in shown["groups"] for sub in g["subjects"]]
        assert len(findings) >= 2 and all(ids for _, _, ids in findings), findings
        r = me.run("session", "close")
        assert r.returncode == 0, r.stderr
        bundle = Path(re.search(r"^wrote the bundle (\S+) \(", r.stdout, re.M).group(1))
        archive = Path(re.search(r"^wrote the archive (\S+)$", r.stdout, re.M).group(1))
        assert sorted(p.name for p in bundle.iterdir()) == ["curl.sh", "record.jsonl", "report.md", "session.har"]
        with tarfile.open(archive) as tar:
            assert sorted(Path(m.name).name for m in tar.getmembers()) == ["curl.sh", "record.jsonl", "report.md", "session.har"]
            assert all(m.mode == 0o600 and m.isfile() for m in tar.getmembers())
        # mitmproxy opens the HAR: every request the session sent, as the stand-in logged them.
        flows = har_requests(bundle / "session.har")
        api = [line for line in s.log().splitlines() if re.match(r"(GET|POST) /api/", line)]
        assert len(flows) == len(api) and len(flows) > 5, (flows, api)
        # The report names every finding with its request ids, the charter, the build and the note.
        report = (bundle / "report.md").read_text()
        for kind, subject, ids in findings:
            assert kind in report and all(i in report for i in ids), (kind, subject, ids)
        assert "**Charter:** refusals" in report and "**Build:** 2.0" in report and "the overspend went through on 2.0" in report
        assert 'Authorization: Bearer $REITERATE_TOKEN' in (bundle / "curl.sh").read_text()
        # No token in any file: the bundle's, the archive, the record.
        for path in [*bundle.iterdir(), archive, me.record(bundle.parent)]:
            assert SECRET.encode() not in path.read_bytes(), path
            assert path.stat().st_mode & 0o077 == 0, path
        # Closed: nothing more is appended, and the next session can start.
        listed = me.run("session", "list").stdout
        assert re.search(r"bundle\s+build 2\.0\s+closed\s+\d+ findings", listed), listed
        assert me.run("print", "balance", "--env", "t").returncode == 0
        assert "print balance" not in me.record(bundle.parent).read_text().split('"kind":"close"')[1]
        assert (bundle.parent / "closed").exists()  # the marker every journal of it checks before it appends
        assert me.run("session", "start", "--env", "t", "--name", "next").returncode == 0
    finally:
        s.stop()


# ---------------------------------------------------------------------------------------------------
# session diff

def checks_run(me):
    """The same checks on each build: the balance, two history pages, negative's overspend."""
    assert me.run("print", "balance", "--env", "t").returncode in (0, 65, 75)
    for page in ("1", "2"):
        me.run("print", "history", "--page", page, "--env", "t")
    me.run("negative", "--env", "t", "--yes", "--only", "overspend,amount-zero", "--pace", "0")


def test_diff_reports_exactly_the_faults_findings_as_new_and_nothing_else_both_ways(start_stub, tmp_path):
    """Two builds: both serve one malformed history entry (a finding in both: still there, on other request
    ids); only the second takes an overspend. `diff A B` says that fault's findings are new and nothing else;
    `diff B A` says they are fixed."""
    me = Session(tmp_path)
    sessions = {}
    for name, faults in (("1.4.2", []), ("1.4.3", [{"kind": "accept_overspend", "path": "/api/v1/spend_cheer", "count": 1}])):
        s = start_stub("--quiet")
        (me.config_home / "reiterate-shop" / "config.toml").write_text(f'[environments.t]\nbase_url = "{s.url}"\n')
        s.fault(kind="malformed_entry", path="/api/v1/cheer_history", count=1)
        for f in faults:
            s.fault(**f)
        assert me.run("session", "start", "--env", "t", "--name", name, "--build", name).returncode == 0
        checks_run(me)
        sessions[name] = me.show()
        assert me.run("session", "close").returncode == 0
    old, new = sessions["1.4.2"], sessions["1.4.3"]
    # What the fault made: the findings only the second build's session has.
    only_new = {(g["kind"], sub["subject"]) for g in new["groups"] for sub in g["subjects"]} - {(g["kind"], sub["subject"]) for g in old["groups"] for sub in g["subjects"]}
    assert only_new and all("negative" in g["commands"] for g in new["groups"] for sub in g["subjects"] if (g["kind"], sub["subject"]) in only_new), new["groups"]

    r = me.run("session", "diff", "1.4.2", "1.4.3", "--json")
    assert r.returncode == 65, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert {(i["kind"], i["subject"]) for i in d["new"]} == only_new
    assert d["fixed"] == []
    assert {i["kind"] for i in d["still"]} == {g["kind"] for g in old["groups"]} != set()  # the malformed entry, on both
    r = me.run("session", "diff", "1.4.3", "1.4.2", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["new"] == [] and {(i["kind"], i["subject"]) for i in d["fixed"]} == only_new
    text = me.run("session", "diff", "1.4.2", "1.4.3").stdout
    assert text.startswith("session diff: 1.4.2 → 1.4.3\n") and f"new in 1.4.3: {len(only_new)}\n" in text and "fixed (in 1.4.2 only): 0\n" in text, text


# ---------------------------------------------------------------------------------------------------
# The TUI opens, notes and closes a session; the spend form says what it checks against

def test_the_tui_opens_names_notes_and_closes_a_session(start_stub, tui, tmp_path):
    s = start_stub("--quiet")
    me = Session(tmp_path)
    t = tui(s.url, env=me.env, width=120, height=36)
    t.wait_for("Balance 1,250 cheer")
    t.keys("7")
    t.wait_for("No test session is open.")
    t.keys("N")
    t.wait_for("session name:")
    t.keys("tui build 9", "Enter")
    t.wait_for("session tui build 9")
    t.keys("n")
    t.wait_for("note:")
    t.keys("the header looked stale", "Enter")
    t.wait_for("- the header looked stale", timeout=10)
    # The spend form: the balance the amount is checked against, and how old it is.
    t.keys("1")
    t.wait_for("46 of 46 packs")
    t.keys("g", "s")
    form = t.wait_for("Spend cheer")
    assert re.search(r"checked against the balance: 1,250 cheer, read (just now|\d+ s ago)", form), form
    t.keys("Escape", "7", "C")
    screen = t.wait_for("closed the session into", timeout=10)
    assert "No test session is open." in t.wait_for("No test session is open.")
    folder = me.folders()[-1]
    assert (folder / "bundle" / "report.md").read_text().startswith("# Test session: tui build 9")
    shown = me.show(folder.name)
    assert shown["notes"] == ["the header looked stale"] and not shown["open"]
    assert "tui" in shown["covered"]["commands"]
    closed_size = me.record(folder).stat().st_size
    # A session opened by the CLI while the TUI runs: the TUI joins it (its next reads go into it), and
    # nothing more goes into the one closed.
    assert me.run("session", "start", "--name", "from the cli").returncode == 0
    t.wait_for("session from the cli", timeout=10)
    t.keys("r")
    joined = me.folders()[-1]
    wait_until(lambda: me.record(joined).read_text(), lambda text: '"command":"tui","entry"' in text, timeout=10, what="the TUI's reads in the new session")
    assert me.record(folder).stat().st_size == closed_size


def test_config_check_shows_every_table_and_names_secrets_without_showing_them(store, tmp_path):
    me = Session(tmp_path)
    config = store.config().replace('read_only = false\n', 'read_only = false\nusers = ["qa-alice", "qa-bob"]\nexplore_users = ["qa-whale"]\n')
    (me.config_home / "reiterate-shop" / "config.toml").write_text(config)
    r = me.run("config", "check", "--env", "stub")
    assert r.returncode == 0, r.stderr
    key_text = Path(store.facts["key_file"]).read_text()
    out = r.stdout
    assert "  users      qa-alice, qa-bob" in out and "  explore    qa-whale" in out
    assert "  bundles    com.reiterate.cheer.50 = 50," in out
    assert "  [appstore]" in out and f"key_file     {store.facts['key_file']} (readable; the key itself is never shown)" in out
    assert f"key_id       {store.facts['key_id']}" in out
    for line in key_text.splitlines():
        if len(line) > 16 and "-----" not in line:
            assert line not in out
