"""`reiterate-shop ledger` against the stand-in's App Store side (issue 38): every verdict and blame from
a fault of the stand-in, records that do not verify, the key file's mode, Apple's errors and Retry-After,
and no key or token text in anything the runs leave. The backend's side comes from the tool's own HAR
files, and from the app's: its posts through `reiterate-shop proxy --har` (Python's requests, and
scripts/phone.py's buying modes)."""
import base64
import json
import os
import re
import stat
import time
from pathlib import Path

import pytest
import requests

from conftest import TOKEN, Stub, free_port, shop
from test_pairing import phone

BUNDLE = "com.reiterate.cheer.200"
# The ledger calls a purchase "never posted" only when the exchanges given go on this long after it.
GRACE = 5.0


def past_the_grace():
    """Waits out the ledger's grace period after the last purchase (a wait the rule itself asks for: the
    exchanges must go on past it for a purchase with no post to be the app's fault)."""
    time.sleep(GRACE + 0.2)  # the ledger's grace period, not a synchronisation


class AppStore:
    """A stand-in with its App Store side written to a folder, and the config that points the tool at it."""

    def __init__(self, folder: Path, *flags: str):
        self.folder = folder
        self.stub = Stub("--appstore-dir", str(folder), *flags)
        self.facts = json.loads((folder / "appstore.json").read_text())
        self.runs = []  # every CompletedProcess, for the secret scan

    def config(self, key_file=None, key_id=None, url=None, root_ca=None) -> str:
        f = self.facts
        return f"""
[environments.stub]
base_url = "{self.stub.url}"
user = "qa-alice"
read_only = false
[environments.stub.appstore]
url = "{url or self.stub.url}"
key_file = "{key_file or f['key_file']}"
key_id = "{key_id or f['key_id']}"
issuer_id = "{f['issuer_id']}"
bundle_id = "{f['bundle_id']}"
root_ca = "{root_ca or f['root_ca']}"
"""

    def mark(self):
        """From here on, `since` counts the stand-in's log lines (its log is the module's)."""
        self.start = len(self.stub.log_lines())

    def since(self, needle: str) -> list:
        return [line for line in self.stub.log_lines()[self.start:] if needle in line]

    def run(self, *args, config=None, **kw):
        result = shop(*args, "--env", "stub", config=config or self.config(), **kw)
        self.runs.append(result)
        return result

    def purchase(self, product=BUNDLE, quantity=1, customer="sandbox-1", user="qa-alice") -> str:
        r = self.stub.http.post(self.stub.url + "/_stub/appstore/purchases", timeout=5,
                                json={"product_id": product, "quantity": quantity, "customer": customer, "user": user})
        assert r.status_code == 201, r.text
        return r.json()["transaction_id"]

    def refund(self, tx: str):
        r = self.stub.http.post(self.stub.url + "/_stub/appstore/refunds", json={"transaction_id": tx, "reason": 0}, timeout=5)
        assert r.status_code == 200, r.text
        return r.json()

    def buy(self, tx, har: Path, bundle=BUNDLE):
        """The tool's own post of `tx`, its exchanges written to `har`."""
        return self.run("buy", "--bundle", bundle, "--transaction-id", tx, "--yes", "--har", str(har))

    def ledger(self, *args, config=None):
        """The ledger's JSON lines, and the run."""
        r = self.run("ledger", "--json", *args, config=config)
        lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
        return lines, r


@pytest.fixture(scope="module")
def appstore_module(tmp_path_factory):
    store = AppStore(tmp_path_factory.mktemp("appstore"), "--appstore-verify")
    yield store
    store.stub.stop()


@pytest.fixture
def appstore(appstore_module):
    appstore_module.stub.reset()
    appstore_module.runs = []
    appstore_module.mark()
    yield appstore_module
    appstore_module.stub.reset()


def by_id(lines):
    return {line["transaction_id"]: line for line in lines}


def test_a_purchase_posted_once_is_credited_with_its_request_id(appstore, tmp_path):
    tx = appstore.purchase(quantity=2)
    bought = appstore.buy(tx, tmp_path / "buy.har")
    assert bought.returncode == 0, bought.stderr
    lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(lines) == 1
    line = lines[0]
    assert (line["verdict"], line["blame"], line["product_id"], line["quantity"]) == ("credited", None, BUNDLE, 2)
    assert line["words"] == "credited 400"
    # The backend's request id is the stand-in's, as its log has it.
    assert line["request_ids"] and all(appstore.since(rid) for rid in line["request_ids"])
    text = appstore.run("ledger", "--transaction", tx, "--har", str(tmp_path / "buy.har"))
    assert re.search(rf"{BUNDLE} ×2  {tx}  \S+  credited: credited 400", text.stdout), text.stdout
    assert "1 credited" in text.stdout.splitlines()[-1]


def test_a_purchase_never_posted_is_the_apps_fault(appstore, tmp_path):
    hars = [str(tmp_path / name) for name in ("start.har", "buy.har", "end.har")]
    # The exchanges begin before the purchases and go on past the grace period after them.
    assert appstore.run("print", "balance", "--har", hars[0]).returncode == 0
    posted = appstore.purchase()
    forgotten = appstore.purchase(product="com.reiterate.cheer.500")
    assert appstore.buy(posted, Path(hars[1])).returncode == 0
    past_the_grace()
    assert appstore.run("print", "balance", "--har", hars[2]).returncode == 0
    lines, r = appstore.ledger("--har", *hars)  # the id is learned from the HAR
    assert r.returncode == 65, r.stderr
    found = by_id(lines)
    assert found[posted]["verdict"] == "credited"
    assert (found[forgotten]["verdict"], found[forgotten]["blame"], found[forgotten]["request_ids"]) == ("not credited", "app", [])
    # The same without the exchanges after it: not seen (it may still be on its way), no finding.
    lines, r = appstore.ledger("--har", *hars[:2])
    assert r.returncode == 69 and by_id(lines)[forgotten]["verdict"] == "not seen", r.stdout


def app_posts_one_of_two(appstore, proxy_url: str):
    """The app (Python's requests, the proxy as its HTTP proxy) reads its balance, two App Store purchases
    are made, and the app posts the first: (the app's session, posted, forgotten, the post's answer)."""
    app = requests.Session()
    app.trust_env = False
    app.proxies = {"http": proxy_url}
    app.headers["Authorization"] = f"Bearer {TOKEN}"
    assert app.get(appstore.stub.url + "/api/v1/balance?user_id=qa-alice", timeout=10).status_code == 200
    posted = appstore.purchase()
    forgotten = appstore.purchase(product="com.reiterate.cheer.500")
    answer = app.post(appstore.stub.url + "/api/v2/purchase_cheer?user_id=qa-alice", timeout=10,
                      json={"identifier": BUNDLE, "transaction_id": int(posted)})
    assert answer.status_code == 200, answer.text
    return app, posted, forgotten, answer


def app_har_entries(har: Path) -> list:
    """The HAR's entries as (method, path and query, status, _source, X-Request-Id)."""
    def request_id(entry):
        return next((h["value"] for h in entry["response"]["headers"] if h["name"].lower() == "x-request-id"), None)
    return [(e["request"]["method"], re.sub(r"^https?://[^/]+", "", e["request"]["url"]), e["response"]["status"], e.get("_source"),
             request_id(e)) for e in json.loads(har.read_text())["log"]["entries"]]


def test_the_apps_post_through_the_proxy_is_read_from_its_har(appstore, start_proxy, tmp_path):
    """The backend's side from the app's own traffic: the app (Python's requests, with the proxy as its
    HTTP proxy) reads its balance and posts one of two App Store purchases; the ledger reads only the
    HAR `proxy --har` wrote."""
    har = tmp_path / "app.har"
    proxy = start_proxy(appstore.stub.url, "--har", str(har))
    app, posted, forgotten, answer = app_posts_one_of_two(appstore, proxy.url)
    request_id = answer.headers["X-Request-Id"]
    past_the_grace()
    assert app.get(appstore.stub.url + "/api/v1/balance?user_id=qa-alice", timeout=10).status_code == 200
    assert proxy.stop() == 0  # the HAR is written as the proxy ends
    # The app's three exchanges, as the stand-in answered them; nothing else.
    entries = app_har_entries(har)
    assert [(method, path, status, source) for method, path, status, source, _ in entries] == [
        ("GET", "/api/v1/balance?user_id=qa-alice", 200, "app"), ("POST", "/api/v2/purchase_cheer?user_id=qa-alice", 200, "app"),
        ("GET", "/api/v1/balance?user_id=qa-alice", 200, "app")], entries
    assert entries[1][4] == request_id
    lines, r = appstore.ledger("--har", str(har))  # the id is learned from the app's post
    assert r.returncode == 65, r.stdout + r.stderr
    found = by_id(lines)
    assert set(found) == {posted, forgotten}, lines
    assert (found[posted]["verdict"], found[posted]["blame"], found[posted]["request_ids"]) == ("credited", None, [request_id])
    assert found[posted]["words"] == "credited 200"
    # The request id is the one the stand-in logged for the app's post (the proxy passed it on).
    assert appstore.since(f"POST /api/v2/purchase_cheer?user_id=qa-alice 200 ") and appstore.since(request_id)
    assert [line for line in appstore.since(request_id) if "POST /api/v2/purchase_cheer" in line]
    assert (found[forgotten]["verdict"], found[forgotten]["blame"], found[forgotten]["request_ids"]) == ("not credited", "app", [])


def test_phone_py_buys_then_posts_or_forgets_and_the_ledger_blames_the_app(appstore, start_proxy, tmp_path):
    """scripts/phone.py's buying modes through the proxy: `buy` (bought at the App Store, then posted)
    and `buy-forget` (bought, never posted)."""
    har = tmp_path / "phone.har"
    proxy = start_proxy(appstore.stub.url, "--har", str(har))
    bought = phone(appstore.stub, proxy, "buy", "--bundle", "com.reiterate.cheer.100", "--quantity", "2")
    forgot = phone(appstore.stub, proxy, "buy-forget", "--bundle", "com.reiterate.cheer.50")
    past_the_grace()
    after = requests.get(appstore.stub.url + "/api/v1/balance?user_id=qa-alice", proxies={"http": proxy.url}, timeout=10,
                         headers={"Authorization": f"Bearer {TOKEN}"})
    assert after.status_code == 200
    assert [(line["op"], line["status"], line.get("then")) for line in bought] == [("appstore", 201, "post"), ("purchase", 200, None)], bought
    assert bought[1]["transaction_id"] == bought[0]["transaction_id"]
    assert [(line["op"], line["status"], line["then"]) for line in forgot] == [("appstore", 201, "forget")], forgot
    assert proxy.stop() == 0
    # Only the post went through the proxy: StoreKit's purchase never does.
    assert [(method, path, source) for method, path, _, source, _ in app_har_entries(har)] == [
        ("POST", "/api/v2/purchase_cheer?user_id=qa-alice", "app"), ("GET", "/api/v1/balance?user_id=qa-alice", "app")]
    lines, r = appstore.ledger("--har", str(har))
    assert r.returncode == 65, r.stdout + r.stderr
    found = by_id(lines)
    posted, forgotten = str(bought[0]["transaction_id"]), str(forgot[0]["transaction_id"])
    assert (found[posted]["verdict"], found[posted]["quantity"], found[posted]["request_ids"]) == ("credited", 2, [bought[1]["request_id"]])
    assert (found[forgotten]["verdict"], found[forgotten]["blame"]) == ("not credited", "app")


def test_a_post_the_backend_failed_is_the_servers_fault(appstore, tmp_path):
    tx = appstore.purchase()
    appstore.stub.fault(kind="status", status=503, path="/api/v2/purchase_cheer", count=1)
    assert appstore.buy(tx, tmp_path / "buy.har").returncode != 0
    lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"))
    assert r.returncode == 65
    assert (lines[0]["verdict"], lines[0]["blame"]) == ("not credited", "server")
    assert "(503)" in lines[0]["words"] and len(lines[0]["request_ids"]) == 1


@pytest.mark.parametrize("fault,verdict,words", [
    ("ignore_quantity", "credit mismatch", "credited 200"),
    ("replay_credit", "credited twice", "credited 2 times"),
])
def test_a_backend_fault_gives_its_verdict_blamed_on_the_server(appstore, tmp_path, fault, verdict, words):
    tx = appstore.purchase(quantity=2)
    appstore.stub.fault(kind=fault, path="/api/v2/purchase_cheer")
    hars = [tmp_path / "one.har", tmp_path / "two.har"]
    # `buy` judges the credit by the App Store's record: one bundle for two is its own failed check (65).
    assert appstore.buy(tx, hars[0]).returncode == (65 if fault == "ignore_quantity" else 0)
    if fault == "replay_credit":
        appstore.buy(tx, hars[1])
    lines, r = appstore.ledger("--transaction", tx, "--har", *[str(h) for h in hars if h.exists()])
    assert r.returncode == 65, r.stdout + r.stderr
    assert (lines[0]["verdict"], lines[0]["blame"]) == (verdict, "server")
    assert words in lines[0]["words"]


def test_a_post_under_another_product_credited_by_that_one_is_a_mismatch(appstore, tmp_path):
    tx = appstore.purchase(product="com.reiterate.cheer.100")
    appstore.stub.fault(kind="trust_product", path="/api/v2/purchase_cheer")
    # The App Store's record says 100 was paid: `buy` refuses to post 500 (nothing sent) unless sent as typed,
    # and a backend that credits it so is the finding that leads (65).
    refused = appstore.buy(tx, tmp_path / "refused.har", bundle="com.reiterate.cheer.500")
    assert refused.returncode == 64 and "was paid, not com.reiterate.cheer.500; nothing was sent" in refused.stderr, refused.stderr
    r = appstore.run("buy", "--bundle", "com.reiterate.cheer.500", "--transaction-id", tx, "--yes", "--unchecked", "--har", str(tmp_path / "buy.har"))
    assert r.returncode == 65 and "✗ refusal-expected" in r.stdout, r.stdout + r.stderr
    lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"))
    assert r.returncode == 65
    assert (lines[0]["verdict"], lines[0]["blame"]) == ("credit mismatch", "server")
    assert "posted as com.reiterate.cheer.500" in lines[0]["words"]


def test_credits_without_payment_are_not_paid(appstore, tmp_path):
    mine = appstore.purchase()
    others = appstore.purchase(customer="sandbox-2")
    assert appstore.buy(mine, tmp_path / "a.har").returncode == 0
    # Another tester's real purchase, credited to this user: the stand-in's account check is off.
    appstore.stub.fault(kind="any_account", path="/api/v2/purchase_cheer")
    assert appstore.buy(others, tmp_path / "b.har").returncode == 0
    # A made-up id, credited by a backend that does not verify.
    appstore.stub.fault(kind="unverified_credit", path="/api/v2/purchase_cheer")
    assert appstore.buy("4242", tmp_path / "c.har").returncode == 0
    lines, r = appstore.ledger("--transaction", mine, "--har", *(str(tmp_path / n) for n in ("a.har", "b.har", "c.har")))
    assert r.returncode == 65
    found = by_id(lines)
    assert found[mine]["verdict"] == "credited"
    assert (found[others]["verdict"], found[others]["blame"]) == ("not paid", "server")
    assert "another customer" in found[others]["words"]
    assert (found["4242"]["verdict"], found["4242"]["blame"]) == ("not paid", "server")
    assert "does not know" in found["4242"]["words"]


@pytest.mark.parametrize("keep", [False, True])
def test_a_refund_is_shown_and_cheer_kept_after_it_is_a_finding(appstore, tmp_path, keep):
    tx = appstore.purchase()
    assert appstore.buy(tx, tmp_path / "buy.har").returncode == 0
    if keep:
        appstore.stub.fault(kind="keep_refunded", path="/api/v2/purchase_cheer")
    refunded = appstore.refund(tx)
    assert refunded["debited"] == (0 if keep else 200)
    if keep:
        # Read at once, a kept cheer proves nothing yet (the backend learns of a refund late): not judged.
        soon = appstore.run("print", "balance", "--har", str(tmp_path / "soon.har"))
        assert soon.returncode == 0, soon.stderr
        lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"), str(tmp_path / "soon.har"))
        assert (lines[0]["verdict"], lines[0]["blame"], lines[0]["finding"], r.returncode) == ("refunded", None, False, 0), lines
        assert "not judged yet" in lines[0]["words"]
        past_the_grace()
    after = appstore.run("print", "balance", "--har", str(tmp_path / "after.har"))
    assert after.returncode == 0, after.stderr
    lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"), str(tmp_path / "after.har"))
    assert lines[0]["verdict"] == "refunded"
    if keep:
        assert (r.returncode, lines[0]["blame"], lines[0]["finding"]) == (65, "server", True)
        assert "kept the 200" in lines[0]["words"]
    else:
        assert (r.returncode, lines[0]["blame"], lines[0]["finding"]) == (0, None, False)
        assert "took back 200" in lines[0]["words"]


@pytest.mark.parametrize("fault,words", [
    ("broken_signature", "signature does not verify"),
    ("broken_chain", "another root"),
    ("wrong_bundle", "com.other.app"),
    ("wrong_environment", "Production environment"),
])
def test_a_record_that_does_not_verify_is_one_finding_and_no_verdict(appstore, tmp_path, fault, words):
    tx = appstore.purchase()
    assert appstore.buy(tx, tmp_path / "buy.har").returncode == 0
    appstore.stub.fault(kind=fault, path="/inApps/*")
    lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"))
    assert r.returncode == 65, r.stdout + r.stderr
    # The history's record and the lookup of the credit it then leaves unexplained: neither is believed.
    assert lines and all(line["verdict"] == "not verified" and line["blame"] is None for line in lines), lines
    assert all(words in line["words"] for line in lines)
    assert "credited" not in {line["verdict"] for line in lines}


def test_a_key_file_open_to_others_is_refused(appstore, tmp_path):
    open_key = tmp_path / "AuthKey_open.p8"
    open_key.write_bytes(Path(appstore.facts["key_file"]).read_bytes())
    open_key.chmod(0o644)
    r = appstore.run("ledger", "--transaction", "1", config=appstore.config(key_file=str(open_key)))
    assert r.returncode == 78
    assert r.stderr.strip() == "error: the App Store key file (key_file) is open to other users (mode 644), so it is not used: make it private to you (chmod 600)"
    assert not appstore.since("/inApps/")  # nothing was sent


def test_the_app_store_unreadable_is_69_with_apples_words(appstore, tmp_path):
    tx = appstore.purchase()
    wrong_key = appstore.run("ledger", "--transaction", tx, config=appstore.config(key_id="WRONGKEY01"))
    assert wrong_key.returncode == 69
    assert "refused the token (401)" in wrong_key.stderr and "key_id" in wrong_key.stderr
    unknown = appstore.run("ledger", "--transaction", "1999999999999999")
    assert unknown.returncode == 69
    assert 'the App Store answered 404 with error 4040010: "Transaction id not found."' in unknown.stderr
    closed = appstore.run("ledger", "--transaction", tx, config=appstore.config(url="http://127.0.0.1:9"))
    assert closed.returncode == 69 and "could not be reached" in closed.stderr


def test_a_429_waits_until_apples_retry_after_in_milliseconds(appstore, tmp_path):
    tx = appstore.purchase()
    assert appstore.buy(tx, tmp_path / "buy.har").returncode == 0
    appstore.stub.fault(kind="rate_limit", path="/inApps/v2/history/*", count=1, retry_after=1)
    lines, r = appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"))
    assert r.returncode == 0, r.stderr
    assert lines[0]["verdict"] == "credited"
    assert len(appstore.since("/inApps/v2/history/")) == 2  # the 429, then the page after the wait


def test_every_page_of_a_long_history_is_read(appstore, tmp_path):
    ids = [appstore.purchase() for _ in range(45)]
    lines, r = appstore.ledger("--transaction", ids[0])
    assert r.returncode == 69  # no exchanges given: every purchase is "not seen", and the ledger is incomplete
    assert sorted(line["transaction_id"] for line in lines) == sorted(ids)
    assert {line["verdict"] for line in lines} == {"not seen"}
    assert len(appstore.since("/inApps/v2/history/")) == 3  # 20 + 20 + 5


def test_no_key_or_token_text_in_anything_a_run_leaves(appstore, tmp_path):
    tx = appstore.purchase()
    assert appstore.buy(tx, tmp_path / "buy.har").returncode == 0
    appstore.ledger("--transaction", tx, "--har", str(tmp_path / "buy.har"))
    appstore.run("ledger", "--transaction", tx, "--har", str(tmp_path / "buy.har"))
    key_text = Path(appstore.facts["key_file"]).read_text()
    key_body = "".join(line for line in key_text.splitlines() if "-----" not in line)
    assert len(key_body) > 40
    left = [r.stdout + r.stderr for r in appstore.runs] + [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    left.append(appstore.stub.log())
    # A token of the App Store Server API is a JWT whose header is exactly this (the tool's own).
    header = base64.urlsafe_b64encode(json.dumps({"alg": "ES256", "kid": appstore.facts["key_id"], "typ": "JWT"},
                                                 separators=(",", ":")).encode()).decode().rstrip("=")
    assert len(left) >= 5
    for text in left:
        assert key_body[:40] not in text
        assert header not in text and "Bearer ey" not in text
    assert stat.S_IMODE(os.stat(appstore.facts["key_file"]).st_mode) == 0o600


def test_the_probe_lists_without_yes_and_sends_nothing(appstore, tmp_path):
    tx = appstore.purchase()
    r = appstore.run("ledger", "--transaction", tx, "--probe")
    assert r.returncode == 69  # no exchanges given: not seen, the ledger incomplete
    assert f'probe would post: purchase_cheer {{"identifier": "{BUNDLE}", "transaction_id": {tx}}} as qa-alice' in r.stdout
    assert "probe: nothing was sent (1 post); add --yes to send" in r.stdout
    assert not appstore.since("/api/v2/purchase_cheer")


def test_the_probe_credits_what_was_never_credited_and_a_credited_one_answers_409(appstore, tmp_path):
    credited = appstore.purchase()
    forgotten = appstore.purchase(product="com.reiterate.cheer.500")
    assert appstore.buy(credited, tmp_path / "buy.har").returncode == 0
    posts_before = len(appstore.since("/api/v2/purchase_cheer"))
    lines, r = appstore.ledger("--transaction", credited, "--har", str(tmp_path / "buy.har"), "--probe", "--yes")
    assert r.returncode == 65, r.stdout + r.stderr
    found = by_id(lines)
    assert found[credited]["verdict"] == "credited" and found[credited]["words"].endswith("the probe's repeat answered 409")
    # Bought before the exchanges began: the ledger had not seen it; the probe shows it was never credited.
    assert (found[forgotten]["verdict"], found[forgotten]["blame"]) == ("not credited", "not known")
    assert found[forgotten]["words"].startswith("paid, never credited; credited now by the probe")
    # One post each, and the balance moved by the forgotten one's 500 only (two settled reads each side).
    assert len(appstore.since("/api/v2/purchase_cheer")) == posts_before + 2
    moved = re.search(r"probe: the balance went from (\d+) to (\d+), as the probe's answers say", r.stderr)
    assert moved and int(moved.group(2)) - int(moved.group(1)) == 500, r.stderr


def test_the_probe_is_refused_in_a_read_only_environment(appstore):
    tx = appstore.purchase()
    config = appstore.config().replace("read_only = false", "read_only = true")
    r = appstore.run("ledger", "--transaction", tx, "--probe", "--yes", config=config)
    assert r.returncode == 78
    assert r.stderr.strip() == "error: STUB is read-only: the probe is refused (it posts purchases)"
    assert not appstore.since("/api/v2/purchase_cheer")


def buy_tester_purchases(appstore):
    """The sandbox tester's purchases the App Store cases use: two unrefunded, one refunded, and another
    tester's purchase (made for qa-bob)."""
    ids = [appstore.purchase(), appstore.purchase(product="com.reiterate.cheer.100")]
    refunded = appstore.purchase(product="com.reiterate.cheer.500")
    appstore.refund(refunded)
    other = appstore.purchase(customer="sandbox-2", user="qa-bob")
    return ids, refunded, other


APPSTORE_CASES = ["appstore-unknown-id", "appstore-other-product", "appstore-refunded", "appstore-other-tester"]


def test_negative_with_the_app_store_is_clean_on_a_stand_in_that_verifies(appstore):
    ids, _, other = buy_tester_purchases(appstore)
    r = appstore.run("negative", "--yes", "--json", "--pace", "0", "--transaction", ids[0], "--other-transaction", other, timeout=240)
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert r.returncode == 0, r.stdout + r.stderr
    verdicts = {line["name"]: line["verdict"] for line in lines}
    assert set(APPSTORE_CASES) <= set(verdicts), verdicts
    assert set(verdicts.values()) == {"refused"}, verdicts
    # The replay cases resent the tester's real purchase (credited by the setup), not a made-up id.
    assert f"note: setup: bought {BUNDLE} with transaction {ids[0]}" in r.stderr


@pytest.mark.parametrize("fault,cases", [
    # A backend that does not verify takes every one of them; each other fault breaks one rule.
    ("unverified_credit", set(APPSTORE_CASES)),
    ("trust_product", {"appstore-other-product"}),
    ("keep_refunded", {"appstore-refunded"}),
    ("any_account", {"appstore-other-tester"}),
])
def test_each_app_store_case_is_flagged_by_its_fault(appstore, fault, cases):
    ids, _, other = buy_tester_purchases(appstore)
    appstore.stub.fault(kind=fault, path="/api/v2/purchase_cheer")
    r = appstore.run("negative", "--yes", "--json", "--pace", "0", "--only", ",".join(APPSTORE_CASES),
                     "--transaction", ids[0], "--other-transaction", other, timeout=120)
    lines = {line["name"]: line for line in (json.loads(x) for x in r.stdout.splitlines() if x.strip())}
    assert r.returncode == 65, r.stdout + r.stderr
    assert all(lines[case]["verdict"] == "accepted" and lines[case]["changed"] for case in cases), lines
    assert {name for name, line in lines.items() if line["verdict"] != "refused"} == cases, lines


def test_an_app_store_case_without_its_fact_is_not_judged(appstore):
    tx = appstore.purchase()
    r = appstore.run("negative", "--yes", "--pace", "0", "--only", ",".join(APPSTORE_CASES), "--transaction", tx, timeout=120)
    assert r.returncode == 69, r.stdout + r.stderr
    assert "appstore-other-product   not judged: the tester has fewer than two unrefunded purchases" in r.stdout
    assert "appstore-refunded        not judged: the tester has no refunded purchase" in r.stdout
    assert "appstore-other-tester    not judged: needs --other-transaction" in r.stdout
    assert re.search(r"^appstore-unknown-id      refused 400 \(rq-", r.stdout, re.M), r.stdout


@pytest.mark.parametrize("fault,status", [(None, 0), ("ignore_quantity", 65)])
def test_buys_expected_credit_comes_from_the_app_stores_record(appstore, tmp_path, fault, status):
    tx = appstore.purchase(product="com.reiterate.cheer.100", quantity=2)
    if fault:
        appstore.stub.fault(kind=fault, path="/api/v2/purchase_cheer")
    r = appstore.run("buy", "--bundle", "com.reiterate.cheer.100", "--transaction-id", tx, "--yes", "--strict")
    assert f"note: the App Store's record of {tx}: 2 × com.reiterate.cheer.100; the credit expected comes from it" in r.stderr
    # The record's 2 × 100 is what the balance must rise by: a backend that credits one bundle is caught.
    assert r.returncode == status, r.stdout + r.stderr
    assert ("✔ purchase-balance: 1,450" if fault is None else "✗ purchase-balance") in r.stdout, r.stdout


def test_the_tuis_purchases_tab_holds_the_apps_purchases_against_the_app_store(appstore, tui, tmp_path):
    """The real binary in tmux, its proxy on: the app posts one of two App Store purchases through it;
    tab 6 reads the App Store and shows both verdicts, Enter the verified record and the app's post."""
    home = tmp_path / "config"
    (home / "reiterate-shop").mkdir(parents=True)
    (home / "reiterate-shop" / "config.toml").write_text(appstore.config())
    port = free_port()
    t = tui(appstore.stub.url, width=140, height=36, env={"XDG_CONFIG_HOME": str(home)}, args=("--env", "stub", "--proxy", f"127.0.0.1:{port}"))
    t.wait_for("app proxy")
    app, posted, forgotten, answer = app_posts_one_of_two(appstore, f"http://127.0.0.1:{port}")
    past_the_grace()
    assert app.get(appstore.stub.url + "/api/v1/balance?user_id=qa-alice", timeout=10).status_code == 200
    t.wait_for("3 app")  # the app's three exchanges are in the session before the tab reads
    t.keys("6")
    screen = t.wait_for("not credited", timeout=20)
    # The list's rows (the detail beside them names the selected transaction too).
    rows = {line.split()[2]: line for line in screen.splitlines() if re.match(r" \d\d:\d\d:\d\d ", line)}
    assert "credited" in rows[posted] and "not credited" not in rows[posted], screen
    assert "not credited" in rows[forgotten] and " app " in rows[forgotten] + " ", screen
    assert "2 lines · 1 finding" in screen, screen
    # The posted one (bought first, so the first line): its verified record and the app's post.
    t.keys("Enter")
    detail = t.wait_for("App Store (signature and chain verified)")
    assert f"transaction: {posted}" in detail and "Backend: 1 post of it" in detail, detail
    assert answer.headers["X-Request-Id"] in detail, detail
    t.keys("Escape", "q")
    assert t.wait_exit() == 0


def test_buy_of_a_refunded_transaction_expects_a_refusal(appstore):
    """Issue 44: `buy` of a transaction the App Store's record says was refunded passed ✔, exit 0. The shop must
    refuse it: without --unchecked nothing is sent; sent as typed, a backend that credits it is a finding."""
    tx = appstore.purchase(product="com.reiterate.cheer.100")
    appstore.refund(tx)
    appstore.mark()
    r = appstore.run("buy", "--bundle", "com.reiterate.cheer.100", "--transaction-id", tx, "--yes")
    assert r.returncode == 64, r.stdout + r.stderr
    assert f"the App Store's record says transaction {tx} was refunded" in r.stderr and "nothing was sent" in r.stderr, r.stderr
    assert appstore.since("purchase_cheer") == []
    # Sent as typed to a backend that keeps refunded purchases: the credit is the finding that leads (65).
    appstore.stub.fault(kind="keep_refunded", path="/api/v2/purchase_cheer")
    r = appstore.run("buy", "--bundle", "com.reiterate.cheer.100", "--transaction-id", tx, "--yes", "--unchecked")
    if r.stdout.startswith("The server accepted"):
        assert r.returncode == 65 and "✗ refusal-expected" in r.stdout, r.stdout + r.stderr
    else:  # refused as it should be: never a ✔ on a credit
        assert r.returncode == 1 and "✔ purchase-balance" not in r.stdout, r.stdout + r.stderr


def test_the_tuis_purchase_form_reads_the_app_stores_record_as_buy_does(appstore, tui, tmp_path):
    """Issue 44: the TUI's purchase form sent a refunded transaction with no expectation, and expected the
    bundle's credit for a purchase of two: only `buy` read the App Store's record. The real binary in tmux:
    the form reads the record first; a refunded transaction is refused before anything is sent, and a
    purchase of 2 × 200 expects 400."""
    paid = appstore.purchase(quantity=2)
    refunded = appstore.purchase(product="com.reiterate.cheer.100")
    appstore.refund(refunded)
    home = tmp_path / "config"
    (home / "reiterate-shop").mkdir(parents=True)
    (home / "reiterate-shop" / "config.toml").write_text(appstore.config())
    t = tui(appstore.stub.url, width=140, height=36, env={"XDG_CONFIG_HOME": str(home)}, args=("--env", "stub"))
    t.wait_for("Balance 1,250 cheer")
    appstore.mark()
    t.keys("b")
    t.wait_for("Transaction")
    t.keys("Tab", *(["BSpace"] * 24), refunded, "Enter")
    screen = t.wait_for("Send it as typed to try", timeout=15)
    assert "The shop must refuse this" in screen and "was refunded" in screen, screen
    assert appstore.since("purchase_cheer") == []  # nothing sent
    t.keys("Escape")
    t.wait_screen(lambda s: "Transaction" not in s, what="the form closed")
    t.keys("b")
    t.wait_for("Transaction")
    t.keys("Tab", *(["BSpace"] * 24), paid, "Enter")
    screen = t.wait_for("┌─ Confirm", timeout=15)
    assert "Buy 400 cheer (com.reiterate.cheer.200), transaction" in screen and paid in screen, screen
    t.keys("y")
    screen = t.wait_for("✔ 1 check passed", timeout=15)
    assert "Balance 1,650 cheer" in screen, screen
    t.keys("Enter", "q")
    assert t.wait_exit() == 0


def test_the_probe_posts_refunded_purchases_too_and_its_all_clear_says_what_it_covered(appstore, tmp_path):
    """Issue 44: `ledger --probe --yes` said "0 findings", exit 0, with a refunded purchase the backend would
    credit: the probe skipped refunded transactions. It posts them too; a backend that credits one is the
    server's finding. A credit the probe finds by its 409 has no amount seen: the all-clear says so (69)."""
    kept = appstore.purchase()
    refunded = appstore.purchase(product="com.reiterate.cheer.100")
    appstore.refund(refunded)
    assert appstore.buy(kept, tmp_path / "buy.har").returncode == 0
    appstore.stub.fault(kind="unverified_credit", path="/api/v2/purchase_cheer")
    lines, r = appstore.ledger("--transaction", kept, "--probe", "--yes")
    found = by_id(lines)
    assert r.returncode == 65, r.stdout + r.stderr
    assert found[refunded]["finding"] and found[refunded]["blame"] == "server", found[refunded]
    assert "a refunded transaction must be refused" in found[refunded]["words"]
    # The kept one: credited before (409), by a post the ledger was not given: its amount was not seen.
    assert found[kept]["verdict"] == "credited" and "the amount credited was not seen" in found[kept]["words"], found[kept]
    text = appstore.run("ledger", "--transaction", kept)
    assert "judged whole" in text.stdout.splitlines()[-1], text.stdout
