"""The rules the contract implies (issue 27, item 8; docs/checks.md, "Rules the contract implies"):
no false positive on the stand-in — every read and write of the CLI against a fresh stand-in gives no
`warning:` line at all — and the rules bite through the CLI when the stand-in breaks them."""
from conftest import shop, warnings

RAIN = "com.reiterate.pack.rain"


def test_no_warning_on_the_stand_in(start_stub):
    s = start_stub("--quiet", "--whale-history", "1234")
    runs = [
        ("print", "packs"),
        ("print", "balance"),
        ("print", "history", "--all"),
        ("print", "history", "--all", "--user", "qa-whale"),
        ("print", "balance", "--user", "qa-whale"),
        ("spend", "--product", RAIN, "--amount", "7", "--comment", "implied rules", "--yes"),
        ("buy", "--bundle", "com.reiterate.cheer.50", "--yes"),
        ("spend", "--product", RAIN, "--amount", "5", "--yes", "--user", "qa-whale"),
        # After the writes: the new entries (dated by the stand-in's clock, this machine's) and the totals.
        ("print", "history", "--all"),
        ("print", "history", "--user", "qa-whale"),
        ("print", "packs"),
        ("print", "balance"),
    ]
    for args in runs:
        r = shop(*args, "--base-url", s.url, "--strict")
        assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr)
        assert warnings(r.stderr) == [], (args, r.stderr)
    # What was read is what the rules are about: Alice's 230 entries and the spend's, the whale's 1,234.
    r = shop("print", "history", "--all", "--json", "--base-url", s.url)
    assert r.returncode == 0 and r.stdout.count('"id"') >= 231, r.stderr


def test_the_rules_bite_through_the_cli(start_stub):
    s = start_stub("--quiet")
    # A spend of −3 the server takes: its history entry is a cheer of −3.
    s.fault(kind="accept_nonpositive_amount", path="/api/v1/spend_cheer")
    r = shop("spend", "--product", RAIN, "--amount", "-3", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65, r.stdout + r.stderr
    r = shop("print", "history", "--base-url", s.url)
    assert r.returncode == 0, r.stderr
    flagged = [w.split(" (request id rq-")[0] for w in warnings(r.stderr) if "[entry-amount]" in w]
    assert flagged == [
        "warning: GET /api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50: "
        "[entry-amount] expected history[0].amount ≥ 1 (a cheer: spendCheer's amount has minimum 1), got -3"
    ], r.stderr
    # An overspend the server takes: the balance read afterwards is below zero.
    s.reset()
    s.fault(kind="accept_overspend", path="/api/v1/spend_cheer")
    r = shop("spend", "--product", RAIN, "--amount", "1300", "--yes", "--unchecked", "--base-url", s.url)
    assert r.returncode == 65, r.stdout + r.stderr
    r = shop("print", "balance", "--base-url", s.url, "--strict")
    assert r.returncode == 65 and any("[balance-range] expected balance ≥ 0" in w and "got -50 (request id rq-" in w for w in warnings(r.stderr)), r.stderr
