"""The read faults `stale_read` (a read replica that lags behind the latest write) and `short_pages` (a
history page shorter than its `per_page`, its paging fields unchanged), observed over HTTP on the real
`reiterate-stub` binary."""
import time

BALANCE = "/api/v1/balance"
HISTORY = "/api/v1/cheer_history"


def log_line(stub, response):
    """The request log's line of this answer (found by its request id)."""
    rid = response.headers["X-Request-Id"]
    return next(line for line in stub.wait_for_log(rid).splitlines() if rid in line)


def test_stale_read_answers_the_state_before_the_write_within_the_lag(start_stub):
    s = start_stub("--fault", "stale_read,rate=1,ms=1000")
    listed = s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"]
    assert [(f["kind"], f["ms"], f["rate"]) for f in listed] == [("stale_read", 1000, 1)]
    # No write yet: fresh, and the fault is not noted.
    r = s.get(BALANCE, params={"user_id": "qa-alice"})
    assert r.json() == {"balance": 1250}
    assert "stale_read" not in log_line(s, r)
    before = s.get(HISTORY, params={"user_id": "qa-alice", "per_page": 5}).json()
    assert before["total_count"] == 230

    pack = s.get("/api/v1/audio_packs").json()["packs"][0]["identifier"]
    t0 = time.monotonic()
    spent = s.post("/api/v1/spend_cheer", json={"amount": 7, "product": pack, "comment": "lagging?"})
    assert spent.json() == {"balance": 1243}  # the write itself is answered fresh
    stale = s.get(BALANCE, params={"user_id": "qa-alice"})
    stale_history = s.get(HISTORY, params={"user_id": "qa-alice", "per_page": 5})
    whale = s.get(BALANCE, params={"user_id": "qa-whale"})
    # The reads above must fall inside the 1 s window for the check to mean anything.
    assert time.monotonic() - t0 < 1.0, "the reads right after the spend took a second: the machine is too slow for this test"
    assert stale.json() == {"balance": 1250}
    assert "fault=stale_read" in log_line(s, stale)
    # The history as it was before the spend: no new entry, counted from the older list.
    assert stale_history.json() == before
    assert "lagging?" not in stale_history.text
    assert "fault=stale_read" in log_line(s, stale_history)
    # Another user had no write: fresh.
    assert whale.json() == {"balance": 1000000}
    assert "stale_read" not in log_line(s, whale)

    time.sleep(1.5)  # a deliberate delay, the point of the test: past the 1,000 ms lag window a read is fresh
    fresh = s.get(BALANCE, params={"user_id": "qa-alice"})
    assert fresh.json() == {"balance": 1243}
    assert "stale_read" not in log_line(s, fresh)
    after = s.get(HISTORY, params={"user_id": "qa-alice", "per_page": 5}).json()
    assert after["total_count"] == 231
    top = after["history"][0]
    assert top["amount"] == 7 and top["product"] == pack
    assert top["comments"] == [{"signature": "qa-alice", "body": "lagging?"}]
    assert after["history"][1:] == before["history"][:4]
    # Spent only by the two stale answers.
    assert s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"][0]["hits"] == 2


def test_short_pages_cut_a_page_to_cap_entries_and_keep_the_paging_asked(start_stub):
    s = start_stub("--fault", "short_pages,cap=50,path=/api/v1/cheer_history")
    r = s.get(HISTORY, params={"user_id": "qa-whale", "per_page": 200, "page": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["history"]) == 50
    assert (body["page"], body["per_page"], body["total_count"], body["total_pages"]) == (2, 200, 100000, 500)
    assert "fault=short_pages" in log_line(s, r)
    # The first 50 of the window asked (offsets 200...399): offsets 200...249, page 5 at 50 a page.
    r50 = s.get(HISTORY, params={"user_id": "qa-whale", "per_page": 50, "page": 5})
    fifth = r50.json()
    assert (fifth["page"], fifth["per_page"], fifth["total_pages"]) == (5, 50, 2000)
    assert body["history"][0]["id"] == fifth["history"][0]["id"] == "h-qa-whale-200"
    assert body["history"] == fifth["history"]
    # A page of no more than `cap` entries is not cut: the fault is not noted.
    assert len(fifth["history"]) == 50
    assert "short_pages" not in log_line(s, r50)
    listed = s.http.get(s.url + "/_stub/faults", timeout=5).json()["faults"]
    assert [(f["kind"], f["cap"], f["hits"]) for f in listed] == [("short_pages", 50, 1)]


def test_cap_is_checked_on_the_control_endpoint(stub):
    for cap in (0, 201, 1.5, "ten"):
        r = stub.http.post(stub.url + "/_stub/faults", json={"kind": "short_pages", "cap": cap}, timeout=5)
        assert r.status_code == 400, r.text
        assert "fault key 'cap' needs a whole number in 1...200" in r.text
    added = stub.fault(kind="short_pages", cap=3, path=HISTORY)
    assert (added["kind"], added["cap"]) == ("short_pages", 3)
    page = stub.get(HISTORY, params={"user_id": "qa-alice", "per_page": 10, "page": 2}).json()
    assert len(page["history"]) == 3 and page["per_page"] == 10 and page["total_pages"] == 23
