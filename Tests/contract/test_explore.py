"""`reiterate-shop explore` (issue 45): a campaign the contract's document and the shop's model make, judged by
them, bounded and paced. Each dimension has stand-in faults that break it; the clean stand-in gives no finding;
a failure replays as a replay case and is shrunk; it stays within its budget and pace (the stand-in's log
counts its requests); it is refused where it must be; Ctrl-C keeps what it found."""
import json
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SHOP_BIN, shop, shop_env


def api_requests(s) -> list:
    """The requests the stand-in's log holds for the API (not its control endpoints)."""
    return [line for line in s.log().splitlines() if re.match(r"^(GET|POST|PUT|DELETE) /api/", line)]


def explore(s, tmp_path, *args, pace="0"):
    """One campaign, unpaced unless `pace` (the pace has its own test), its files in tmp_path/out."""
    return shop("explore", "--yes", "--json", "--pace", pace, "--out", str(tmp_path / "out"), "--base-url", s.url, *args, timeout=180)


def lines(r) -> list:
    return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]


def kinds(r) -> set:
    """The kind of every finding: the cases' and the contract watchdog's `warning:` lines on the answers."""
    found = {f["kind"] for l in lines(r) for f in l["shop_findings"]}
    found |= set(re.findall(r"^warning: .*?: \[([a-z0-9-]+)\]", r.stderr, re.M))
    return found


def test_the_clean_stand_in_gives_no_finding_and_the_campaign_stays_within_its_budget(start_stub, tmp_path):
    s = start_stub()
    r = explore(s, tmp_path, "--budget", "400")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = lines(r)
    assert out and all(l["verdict"] == "passed" for l in out), [l for l in out if l["verdict"] != "passed"]
    assert {l["family"] for l in out} == {"legal", "auth", "edges", "concurrent", "text", "identity"}
    assert "warning:" not in r.stderr, r.stderr
    said = re.search(r"(\d+) cases: \1 passed, 0 with findings, 0 not judged; (\d+) of 400 requests", r.stderr)
    assert said, r.stderr
    # The stand-in's own log counts what was sent: exactly what the campaign says, within the budget.
    assert len(api_requests(s)) == int(said.group(2)) <= 400
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| legal | 10 | 10 | 0 | 0 |" in report and "## Not covered" in report and "an expired token: REITERATE_EXPIRED_TOKEN is not set" in report
    assert (tmp_path / "out" / "findings.jsonl").read_text() == ""


def test_the_default_pace_holds_ten_requests_a_second(start_stub, tmp_path):
    s = start_stub()
    started = time.monotonic()
    r = explore(s, tmp_path, "--only", "legal,auth", pace="10")
    took = time.monotonic() - started
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    sent = api_requests(s)
    # n requests at 10 a second take at least (n - 1) / 10 seconds; the log's own times agree.
    assert len(sent) >= 40 and took >= (len(sent) - 1) / 10, (len(sent), took)


def test_without_yes_it_lists_the_cases_and_what_it_will_spend_and_sends_nothing(start_stub):
    s = start_stub()
    r = shop("explore", "--base-url", s.url)
    assert r.returncode == 0, r.stderr
    assert "legal-getCheerHistory-per_page-200" in r.stdout and "contract: getCheerHistory per_page maximum 200" in r.stdout
    assert "auth-spendCheer-none" in r.stdout and "text-comment-beyond-bmp" in r.stdout
    assert re.search(r"\d+ cases to LOCAL as qa-alice: at most 400 requests, 10 a second; as qa-alice it will spend its whole balance", r.stderr), r.stderr
    assert "nothing sent: add --yes" in r.stderr
    assert api_requests(s) == []


def test_it_is_refused_in_a_read_only_environment(start_stub):
    s = start_stub()
    config = f'[environments.shared]\nbase_url = "{s.url}"\ntier = "staging"\nread_only = true\n'
    r = shop("explore", "--yes", "--env", "shared", config=config)
    assert r.returncode == 78 and "SHARED is read-only: explore is refused" in r.stderr, r.stderr
    assert api_requests(s) == []


def test_it_is_refused_in_a_production_tier(start_stub):
    s = start_stub()
    config = f'[environments.prod]\nbase_url = "{s.url}"\ntier = "production"\nread_only = false\n'
    r = shop("explore", "--yes", "--env", "prod", config=config)
    assert r.returncode == 78 and "is a production tier: explore is refused" in r.stderr, r.stderr
    assert api_requests(s) == []


def test_writes_go_only_as_the_environments_explore_users(start_stub, tmp_path):
    s = start_stub()
    # A staging tier with no explore_users: nothing is written, and the cases that would write say why.
    config = f'[environments.stage]\nbase_url = "{s.url}"\ntier = "staging"\nread_only = false\n'
    r = shop("explore", "--yes", "--json", "--pace", "0", "--env", "stage", "--out", str(tmp_path / "a"), config=config, timeout=120)
    assert r.returncode == 69, r.stdout[-2000:] + r.stderr[-2000:]
    assert not [l for l in api_requests(s) if l.startswith("POST")]
    writing = [l for l in lines(r) if l["family"] in ("edges", "concurrent", "text") or re.match(r"(legal|auth)-(spend|purchase)Cheer", l["name"])]
    assert len(writing) == 24 and all(l["verdict"] == "not-judged" and "names no explore user" in l["note"] for l in writing), writing
    assert all(l["verdict"] == "passed" for l in lines(r) if l not in writing and l["name"] != "identity-server-clock")
    # With explore_users, its writes are that user's alone.
    config += 'explore_users = ["qa-whale"]\n'
    r = shop("explore", "--yes", "--json", "--pace", "0", "--env", "stage", "--only", "edges,text", "--out", str(tmp_path / "b"), config=config, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    writes = [l for l in api_requests(s) if l.startswith("POST")]
    assert writes and all("user_id=qa-whale" in l for l in writes), writes
    assert "as qa-whale it will spend" in r.stderr


# Each dimension's faults, and the finding each must give (its kind).
FAULTS = [
    ("legal", {"kind": "narrow_per_page"}, "legal-refused"),
    ("auth", {"kind": "ignore_auth", "path": "/api/v1/balance"}, "ignored-auth"),
    ("auth", {"kind": "ignore_auth", "path": "/api/v1/spend_cheer"}, "ignored-auth"),
    ("edges", {"kind": "refuse_whole_balance"}, "edge-outcome"),
    ("edges", {"kind": "accept_overspend"}, "edge-outcome"),
    ("concurrent", {"kind": "race_overspend"}, "concurrent-writes"),
    ("concurrent", {"kind": "race_replay"}, "concurrent-writes"),
    ("text", {"kind": "escape_markup"}, "text-changed"),
    ("text", {"kind": "narrow_text"}, "text-changed"),
    ("text", {"kind": "cut_comment"}, "text-changed"),
    ("identity", {"kind": "duplicate_entry"}, "duplicate-id"),
    ("identity", {"kind": "shifted_page"}, "duplicate-id"),
    ("identity", {"kind": "unstable_entry"}, "entry-unstable"),
    ("identity", {"kind": "latin1_body"}, "charset"),
    ("identity", {"kind": "public_cache"}, "shared-cacheable"),
    ("identity", {"kind": "future_date"}, "date-outside-clock"),
    # A replica that lags 0.7 s: the third read catches up; named once, never a wrong balance or a lost entry.
    ("legal", {"kind": "stale_read", "ms": 700}, "stale-read"),
]


@pytest.mark.parametrize("family,fault,kind", FAULTS, ids=[f"{f[0]}-{f[1]['kind']}" for f in FAULTS])
def test_each_dimension_finds_the_faults_that_break_it(start_stub, tmp_path, family, fault, kind):
    s = start_stub()
    s.fault(**fault)
    r = explore(s, tmp_path)
    assert r.returncode == 65, r.stdout[-3000:] + r.stderr[-3000:]
    found = [l for l in lines(r) if l["verdict"] == "finding"]
    assert any(l["family"] == family and any(f["kind"] == kind for f in l["shop_findings"]) for l in found), \
        [(l["name"], [f["kind"] for f in l["shop_findings"]]) for l in found]
    # Every finding names the server's answer it rests on, and is the one finding's JSON.
    for l in found:
        for f in l["shop_findings"]:
            assert f["request_ids"] and f["expected"] and f["actual"], f
    assert (tmp_path / "out" / "findings.jsonl").read_text().count("\n") >= 1


def test_a_race_replays_as_a_case_that_fails_on_the_faulty_stand_in_and_passes_on_the_clean_one(start_stub, tmp_path):
    faulty = start_stub()
    faulty.fault(kind="race_overspend")
    r = explore(faulty, tmp_path, "--only", "concurrent")
    assert r.returncode == 65, r.stdout + r.stderr
    (failing,) = [l for l in lines(r) if l["verdict"] == "finding"]
    assert failing["name"] == "concurrent-overspend"
    # Shrunk no further than needed: a race needs its two writes at once; one of them alone is taken rightly.
    assert failing["shrunk"] == ["at once: spend half the balance + 1 ∥ spend half the balance + 1"], failing
    case = tmp_path / "out" / "cases" / "concurrent-overspend.json"
    script = (tmp_path / "out" / "cases" / "concurrent-overspend.sh").read_text()
    assert json.loads(case.read_text())["kind"] == "reiterate-shop explore case"
    assert script.count(" &\n") == 2 and "\nwait\n" in script and "$REITERATE_TOKEN" in script and "dev-token" not in script
    for rid in failing["shop_findings"][0]["request_ids"]:
        assert rid in script
    # A replay that writes needs --yes.
    r = shop("replay", str(case), "--base-url", faulty.url)
    assert r.returncode == 64 and "writes: add --yes" in r.stderr, r.stderr
    r = shop("replay", str(case), "--yes", "--base-url", faulty.url, "--json", timeout=60)
    assert r.returncode == 65, r.stdout + r.stderr
    clean = start_stub()
    r = shop("replay", str(case), "--yes", "--base-url", clean.url, "--json", timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [l["verdict"] for l in lines(r)] == ["passed"]


def test_a_failure_that_needs_no_race_is_shrunk_to_one_write(start_stub, tmp_path):
    s = start_stub()
    s.fault(kind="wrong_debit", path="/api/v1/spend_cheer")
    r = explore(s, tmp_path, "--only", "concurrent-same-spend")
    assert r.returncode == 65, r.stdout + r.stderr
    (failing,) = lines(r)
    assert failing["shrunk"] == ["spend 1"], failing
    assert {f["kind"] for f in failing["shop_findings"]} == {"write-effect"}
    # Its replay case holds the shrunk step: one write.
    case = json.loads((tmp_path / "out" / "cases" / "concurrent-same-spend.json").read_text())
    assert case["case"]["plan"] == {"writes": [[{"spend": 1}]]}, case


def test_a_budget_too_small_ends_the_campaign_incomplete_and_says_so(start_stub, tmp_path):
    s = start_stub()
    r = explore(s, tmp_path, "--budget", "30")
    assert r.returncode == 69, r.stdout[-2000:] + r.stderr[-2000:]
    assert re.search(r"not run \(incomplete\); 30 of 30 requests", r.stderr) or re.search(r"; (\d+) of 30 requests", r.stderr), r.stderr
    assert any(l.get("note") == "not sent: the request budget is spent" for l in lines(r))
    assert len(api_requests(s)) <= 30


def test_ctrl_c_stops_it_with_the_findings_so_far_saved(start_stub, tmp_path):
    s = start_stub()
    s.fault(kind="narrow_per_page")
    out = tmp_path / "out"
    p = subprocess.Popen([str(SHOP_BIN), "explore", "--yes", "--pace", "5", "--out", str(out), "--base-url", s.url],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=shop_env())
    deadline = time.monotonic() + 60
    # per_page=200 is the seventh legal case: wait until its finding is on disk, then interrupt.
    while time.monotonic() < deadline and not (out / "cases" / "legal-getCheerHistory-per_page-200.json").exists():
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == 65, stdout + stderr
    assert "explore interrupted:" in stderr and "not run (incomplete)" in stderr, stderr
    report = (out / "report.md").read_text()
    assert "### `legal-getCheerHistory-per_page-200`" in report and "per_page must be at most 50" in report


def test_the_tui_runs_the_campaign_with_x_and_its_findings_go_to_the_checks_tab(start_stub, tui, tmp_path):
    s = start_stub()
    s.fault(kind="race_overspend")
    t = tui(s.url, width=160, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.wait_for("46 of 46 packs")

    def quiet():
        """The stand-in's count of API requests once it has not moved for a second (the TUI's start is done)."""
        before = -1
        while True:
            now = len(api_requests(s))
            if now == before:
                return now
            before = now
            time.sleep(1.0)  # the interval the count must hold still over (a poll)

    sent = quiet()
    t.keys("X")
    t.wait_for("X again to start it")
    assert quiet() == sent  # the plan is said; nothing of the campaign is sent
    t.keys("X")
    t.wait_for("Explore 1/46", timeout=20)
    screen = t.wait_for("Explore done:", timeout=120)
    assert "46 cases: 45 passed, 1 with findings, 0 not judged" in screen, screen
    # The campaign went through the session's client: its requests are the stand-in's too.
    assert len(api_requests(s)) > sent + 150
    t.keys("4")
    checks = t.wait_for("concurrent-writes")
    assert "the server's fault" in checks and "spend-refused" in checks, checks
    # Its files are in the session's state folder.
    folders = list((tmp_path / "state" / "reiterate-shop" / "explore").iterdir())
    assert len(folders) == 1 and (folders[0] / "cases" / "concurrent-overspend.json").exists()


def test_an_expired_token_is_sent_when_the_environment_gives_one(start_stub, tmp_path):
    # Tokens live one second: the campaign's own is renewed with the refresh token; the expired one is the first.
    s = start_stub("--token-ttl", "1")
    s.fault(kind="ignore_auth", path="/api/v1/balance")
    time.sleep(1.2)  # the start's token expires (the wait is the fault's premise, not a synchronisation)
    env = {"REITERATE_REFRESH_TOKEN": "dev-refresh", "REITERATE_EXPIRED_TOKEN": "dev-token"}
    r = shop("explore", "--yes", "--json", "--pace", "0", "--only", "auth", "--out", str(tmp_path / "out"), "--base-url", s.url, env=env, timeout=120)
    assert r.returncode == 65, r.stdout[-2000:] + r.stderr[-2000:]
    by_name = {l["name"]: l for l in lines(r)}
    assert len(by_name) == 5 * 4  # every operation that takes a token, with each of the four
    assert [f["kind"] for f in by_name["auth-getBalance-expired"]["shop_findings"]] == ["ignored-auth"]
    assert by_name["auth-getCheerHistory-expired"]["verdict"] == "passed"
    # The expired token is the environment's secret: never in a file the campaign wrote.
    for f in (tmp_path / "out").rglob("*"):
        if f.is_file():
            assert "dev-token" not in f.read_text(errors="replace"), f
    script = (tmp_path / "out" / "cases" / "auth-getBalance-expired.sh").read_text()
    assert '"Authorization: Bearer $REITERATE_EXPIRED_TOKEN"' in script
