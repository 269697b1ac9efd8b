"""The TUI's "send as typed" (issue 27, item 5), in tmux against the real stand-in: Ctrl-U in the spend
form turns the client's own input checks off for one write, clearly marked; a lenient server that takes
what it must refuse is flagged `refusal-expected`, first; the next form has the checks on again."""


def posts(s):
    return [line for line in s.log().splitlines() if "POST /api/" in line]


def test_an_overspend_sent_as_typed_to_a_lenient_server_is_flagged_refusal_expected(start_stub, tui, tmp_path):
    s = start_stub("--fault", "accept_overspend,path=/api/v1/spend_cheer")
    t = tui(s.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.keys("1")
    t.wait_for("46 of 46 packs")
    t.keys("g", "s")
    t.wait_for("Spend cheer")
    t.keys("1255", "Enter")
    # The client's own check: refused in the form, nothing sent.
    screen = t.wait_for("That is more than the balance (1,250 cheer).")
    assert "SEND AS TYPED" not in screen and "Ctrl-U send as typed" in screen.splitlines()[-1]
    assert not posts(s)
    t.keys("C-u")
    screen = t.wait_for("⚠ SEND AS TYPED: the client's checks are off for this write")
    assert "Product:" in screen  # the product is a field now
    t.keys("Enter")
    screen = t.wait_for("┌─ Confirm")
    assert "⚠ SEND AS TYPED" in screen
    assert "The shop must refuse it: 1,255 cheer is more than the" in screen and "balance (1,250 cheer)." in screen, screen
    t.keys("y")
    t.wait_for("The server accepted a spend it must refuse")
    # The finding leads the verdict, once the reads after the write are back.
    screen = t.wait_for("refusal-expected: expected a refusal (4xx): 1,255 cheer is", timeout=10)
    assert "┌─ Failed" in screen and "✖ The server accepted a spend it must refuse" in screen.splitlines()[-2], screen
    assert len(posts(s)) == 1 and s.get("/api/v1/balance?user_id=qa-alice").json()["balance"] == -5
    # The Checks tab: refusal-expected leads, and nothing the spend should not have done is ticked.
    t.keys("Enter", "4")
    screen = t.wait_for("refusal-expected")
    rows = [line for line in screen.splitlines() if "spend-" in line or "refusal-expected" in line]
    assert rows and "refusal-expected" in rows[0], screen
    assert not any("✔" in line for line in rows), screen
    # The bug report's steps say it was sent as typed.
    t.keys("g", "R")
    t.wait_for("bug report written")
    [report] = list((tmp_path / "state" / "reiterate-shop" / "reports").iterdir())
    steps = report.read_text().split("## Steps")[1].split("##")[0]
    assert "spent 1,255 cheer on “Whale Song Recordings 🐋” with no comment — sent as typed (the client's input checks off)" in steps, steps
    # The next form has the client's checks on again.
    t.keys("1", "s")
    screen = t.wait_for("Spend cheer")
    assert "SEND AS TYPED" not in screen and "Product:" not in screen
    t.keys("Escape")


def test_a_transaction_id_as_text_goes_as_a_json_string(start_stub, tui):
    s = start_stub()
    t = tui(s.url, width=140, height=40)
    t.wait_for("Balance 1,250 cheer")
    t.keys("b")
    t.wait_for("Transaction:")
    t.keys("Tab", *(["BSpace"] * 24), '"42"', "Enter")
    t.wait_for("The transaction id is a whole number")
    t.keys("C-u", "Enter")
    t.wait_for("┌─ Confirm")
    t.keys("y")
    # The stand-in reads a string where a number belongs and refuses it (400), as the shop must: no
    # finding, nothing credited (a JSON number 42 would have been credited).
    screen = t.wait_for("✔ 1 check passed", timeout=10)
    # The message line keeps the request, the status and the request id whole and shortens the server's
    # own words first (issue 28); their start still names the field.
    line = next((l for l in screen.splitlines() if "✖ POST /api/v2/purchase_cheer" in l), "")
    assert "POST /api/v2/purchase_cheer: HTTP 400 Bad Request: transaction_" in line and "(request id rq-" in line, screen
    assert "refusal-expected" not in screen and len(posts(s)) == 1
    assert s.get("/api/v1/balance?user_id=qa-alice").json()["balance"] == 1250
