"""`reiterate-shop snapshot` and `compare` (issue 20) end to end: the real binary against real
stand-ins on 127.0.0.1, one of them changed on purpose through its control endpoints."""
import json
import re

import pytest

from conftest import shop

RAIN = "com.reiterate.pack.rain"


@pytest.fixture
def two(start_stub, tmp_path):
    """Two stand-ins from the same seed, and a config naming them `one` and `two`."""
    one, two = start_stub("--quiet"), start_stub("--quiet")
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'[environments.one]\nbase_url = "{one.url}"\n\n[environments.two]\nbase_url = "{two.url}"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    return one, two, env


def packs_of(stub):
    return stub.get("/api/v1/audio_packs").json()["packs"]


def change_catalogue(stub):
    """One price changed, one pack removed, one added."""
    packs = packs_of(stub)
    gone = packs[-1]["identifier"]
    price = next(p for p in packs if p["identifier"] == RAIN)["price_cents"]
    assert stub.http.put(f"{stub.url}/_stub/packs/{RAIN}", json={"price_cents": price + 50}, timeout=5).status_code == 200
    assert stub.http.delete(f"{stub.url}/_stub/packs/{gone}", timeout=5).status_code == 200
    assert stub.http.put(f"{stub.url}/_stub/packs/com.reiterate.pack.new", json={"name": "Brand New Pack"}, timeout=5).status_code == 200
    return gone, price


def test_three_changes_made_on_purpose_are_exactly_three_differences(two):
    one, other, env = two
    gone, price = change_catalogue(other)
    r = shop("compare", "env:one", "env:two", "--what", "packs", env=env)
    assert r.returncode == 1, r.stderr
    lines = [l for l in r.stdout.splitlines() if re.match(r"^(changed|removed|added|moved) ", l)]
    assert len(lines) == 3, r.stdout
    assert re.search(rf"^changed  packs\[{re.escape(RAIN)}\]\.price_cents +{price} → {price + 50}  \(Rain on a Tin Roof\)$", r.stdout, re.M), r.stdout
    assert re.search(rf"^removed  packs\[{re.escape(gone)}\] +“", r.stdout, re.M) and re.search(r"^added    packs\[com\.reiterate\.pack\.new\] +“Brand New Pack”$", r.stdout, re.M), r.stdout
    assert "3 differences: 1 changed, 1 removed, 1 added" in r.stdout
    j = shop("compare", "env:one", "env:two", "--what", "packs", "--json", env=env)
    assert j.returncode == 1
    doc = json.loads(j.stdout)
    assert sorted((d["kind"], d["path"]) for d in doc["differences"]) == sorted([
        ("changed", f"packs[{RAIN}].price_cents"), ("removed", f"packs[{gone}]"), ("added", "packs[com.reiterate.pack.new]")])
    assert doc["same"] is False and doc["a"]["environment"] == "one" and doc["b"]["environment"] == "two"
    assert doc["a"]["request_ids"] and doc["b"]["request_ids"]  # the reads on each side, by request id
    # Only reads: neither stand-in saw a write.
    for s in (one, other):
        assert not re.search(r"\bPOST /api/", s.log()), s.log()


def test_a_target_compared_with_itself_is_the_same(two):
    _, _, env = two
    r = shop("compare", "env:one", "env:one", "--history-pages", "2", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "The same: no difference." in r.stdout


def test_an_ignore_rule_removes_a_difference(two, tmp_path):
    _, other, env = two
    change_catalogue(other)
    r = shop("compare", "env:one", "env:two", "--what", "packs", "--ignore", "packs[].price_cents", "--json", env=env)
    assert r.returncode == 1
    kinds = sorted(d["kind"] for d in json.loads(r.stdout)["differences"])
    assert kinds == ["added", "removed"], r.stdout
    # The same from the config file's [compare] section; and everything ignored is the same.
    config = tmp_path / "config" / "reiterate-shop" / "config.toml"
    config.write_text(config.read_text() + '\n[compare]\nignore = ["packs"]\n')
    r = shop("compare", "env:one", "env:two", "--what", "packs", env=env)
    assert r.returncode == 0, r.stdout
    r = shop("compare", "env:one", "env:two", "--ignore", "packs[p.rain]", env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "ignore rule" in r.stderr, r.stderr


def test_a_snapshot_before_a_spend_shows_the_balance_the_entry_and_the_total_changed(stub, tmp_path):
    before = tmp_path / "before.json"
    r = shop("snapshot", "--base-url", stub.url, "--out", str(before))
    assert r.returncode == 0, r.stderr
    assert oct(before.stat().st_mode & 0o777) == "0o600" and "dev-token" not in before.read_text()
    doc = json.loads(before.read_text())
    assert doc["user"] == "qa-alice" and all(read["request_id"] for read in doc["reads"])
    spent = stub.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": RAIN, "amount": 7, "comment": "great pack"})
    assert spent.status_code == 200
    r = shop("compare", str(before), f"user:qa-alice", "--base-url", stub.url, "--json")
    assert r.returncode == 1, r.stderr
    got = sorted((d["kind"], d["rule"]) for d in json.loads(r.stdout)["differences"])
    assert got == sorted([("changed", "balance.balance"), ("changed", "packs[].cheer_total"), ("changed", "history_total"), ("added", "history[]")]), r.stdout


def test_a_har_reads_as_a_side(stub, tmp_path):
    har = tmp_path / "s.har"
    assert shop("print", "balance", "--base-url", stub.url, "--har", str(har)).returncode == 0
    r = shop("compare", str(har), "user:qa-alice", "--what", "balance", "--base-url", stub.url)
    assert r.returncode == 0, r.stdout + r.stderr
    r = shop("compare", str(har), "user:qa-whale", "--what", "balance", "--base-url", stub.url)
    assert r.returncode == 1 and "changed  balance.balance" in r.stdout, r.stdout


def test_what_cannot_be_compared_is_exit_2_with_one_line(two, tmp_path):
    _, _, env = two
    config = tmp_path / "config" / "reiterate-shop" / "config.toml"
    config.write_text(config.read_text() + '\n[environments.down]\nbase_url = "http://127.0.0.1:9"\n')
    r = shop("compare", "env:one", "env:down", env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("error: could not compare: side B:") and r.stderr.count("\n") == 1, r.stderr
    r = shop("compare", "env:one", "no-such-file.json", env=env)
    assert r.returncode == 2 and "neither env:NAME" in r.stderr, r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    r = shop("compare", "env:one", str(bad), env=env)
    assert r.returncode == 2 and "neither a snapshot" in r.stderr, r.stderr


def test_replay_of_a_snapshot_before_a_spend_shows_the_balance_the_entry_and_the_total(stub, tmp_path):
    before = tmp_path / "before.json"
    assert shop("snapshot", "--base-url", stub.url, "--out", str(before)).returncode == 0
    # A file is not trusted with a token: its base URL is no environment's, so it is refused.
    r = shop("replay", str(before), "--json")
    assert r.returncode == 2 and "which no environment of the config names" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = shop("replay", str(before), "--json", "--base-url", stub.url)
    assert r.returncode == 0, r.stdout + r.stderr  # nothing changed yet: all matched
    assert {x["outcome"] for x in json.loads(r.stdout)["reads"]} == {"matched"}
    spent = stub.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": RAIN, "amount": 7, "comment": "great pack"})
    assert spent.status_code == 200
    r = shop("replay", str(before), "--json", "--base-url", stub.url)
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    got = sorted((d["kind"], d["rule"]) for x in doc["reads"] for d in x.get("differences", []))
    assert got == sorted([("changed", "balance.balance"), ("changed", "packs[].cheer_total"), ("changed", "history_total"), ("added", "history[]")]), r.stdout
    assert all(x["request_id"] and x["recorded_request_id"] for x in doc["reads"])
    text = shop("replay", str(before), "--base-url", stub.url)
    assert text.returncode == 1 and "changed   GET /api/v1/balance?user_id=qa-alice" in text.stdout and "3 reads: 0 matched, 3 changed, 0 failed" in text.stdout, text.stdout


def test_replay_lists_the_writes_of_a_har_and_never_sends_them(stub, tmp_path):
    har = tmp_path / "spend.har"
    r = shop("spend", "--base-url", stub.url, "--har", str(har), "--yes", "--product", RAIN, "--amount", "3")
    assert r.returncode == 0, r.stderr
    posts = len(re.findall(r"POST /api/v1/spend_cheer", stub.log()))
    r = shop("replay", str(har), "--base-url", stub.url)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "not sent  POST /api/v1/spend_cheer" in r.stdout and "1 write not sent" in r.stdout, r.stdout
    assert len(re.findall(r"POST /api/v1/spend_cheer", stub.log())) == posts  # no write sent again


def test_a_pin_shows_a_finding_after_the_stand_in_changes_the_pinned_answer(stub, tmp_path):
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    r = shop("pins", "--base-url", stub.url, "--add", "balance", env=env)
    assert r.returncode == 0 and "pinned GET /api/v1/balance?user_id=qa-alice" in r.stderr, r.stderr
    listed = shop("pins", "--base-url", stub.url, env=env)
    assert listed.stdout.startswith("GET /api/v1/balance?user_id=qa-alice  pinned "), listed.stdout
    same = shop("print", "balance", "--base-url", stub.url, env=env)
    assert same.returncode == 0 and "[pinned]" not in same.stderr, same.stderr
    stub.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": RAIN, "amount": 7})
    changed = shop("print", "balance", "--base-url", stub.url, env=env)
    assert changed.returncode == 0, changed.stderr
    warning = next((l for l in changed.stderr.splitlines() if "[pinned]" in l), "")
    assert warning.startswith("warning: GET /api/v1/balance?user_id=qa-alice: [pinned] expected the answer pinned ") and "changed balance.balance 1250 → 1243" in warning, changed.stderr
    assert "request id rq-" in warning, warning
    # Under an ignore rule the same change is no finding; and a pin taken away is gone.
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[compare]\nignore = ["balance.balance"]\n')
    quiet = shop("print", "balance", "--base-url", stub.url, env={**env, "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert "[pinned]" not in quiet.stderr, quiet.stderr
    assert shop("pins", "--base-url", stub.url, "--remove", "GET /api/v1/balance?user_id=qa-alice", env=env).returncode == 0
    assert "No pins on LOCAL." in shop("pins", "--base-url", stub.url, env=env).stdout
    # Issue 35: --remove takes the request id `pins` lists beside the request, too.
    assert shop("pins", "--base-url", stub.url, "--add", "balance", env=env).returncode == 0
    listed = shop("pins", "--base-url", stub.url, env=env).stdout
    pinned_id = listed.split("request id ")[1].split()[0]
    assert pinned_id.startswith("rq-"), listed
    wrong = shop("pins", "--base-url", stub.url, "--remove", "rq-nothing-pinned", env=env)
    assert wrong.returncode == 64 and "neither a request line" in wrong.stderr, wrong.stderr
    assert shop("pins", "--base-url", stub.url, "--remove", pinned_id, env=env).returncode == 0
    assert "No pins on LOCAL." in shop("pins", "--base-url", stub.url, env=env).stdout
    assert "[pinned]" not in shop("print", "balance", "--base-url", stub.url, env=env).stderr


def test_config_check_names_an_ignore_rule_that_is_not_a_path(tmp_path):
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[compare]\nignore = ["packs[].cheer_total", "packs[p.rain].name"]\n')
    r = shop("config", "check", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert r.returncode == 78 and r.stderr.count("\n") == 1 and "packs[p.rain].name" in r.stderr, r.stderr
    (config / "config.toml").write_text('[compare]\nignore = ["packs[].cheer_total"]\n')
    r = shop("config", "check", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert r.returncode == 0 and "ignore     packs[].cheer_total" in r.stdout, r.stdout + r.stderr
