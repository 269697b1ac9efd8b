"""Semantics of the stand-in over real HTTP on 127.0.0.1: startup line, auth, paging, writes, tokens, log."""
import json
import re
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from conftest import wait_until


def test_first_line_names_the_url_and_curl_example_holds(stub):
    assert re.fullmatch(r"reiterate-stub listening on http://127\.0\.0\.1:\d+", stub.first_line)
    assert not stub.url.endswith(":0")
    r = stub.get("/api/v1/balance", params={"user_id": "qa-alice"})
    assert r.text == '{"balance":1250}'
    assert r.headers["Content-Type"].startswith("application/json")
    r = stub.get("/api/v1/balance", params={"user_id": "qa-alice"}, token=None)
    assert r.status_code == 401 and r.json()["code"] == "unauthorized" and r.json()["message"]
    assert r.headers["WWW-Authenticate"].startswith("Bearer")


def test_request_ids_are_unique_and_on_every_response(stub):
    responses = [stub.get("/api/v1/balance", params={"user_id": "qa-alice"}),
                 stub.get("/api/v1/nope"), stub.get("/api/v1/balance", token=None),
                 stub.get("/api/v1/spend_cheer"), stub.http.get(stub.url + "/_stub/faults")]
    ids = [r.headers.get("X-Request-Id") for r in responses]
    assert all(ids) and len(set(ids)) == len(ids)
    assert responses[1].status_code == 404 and responses[1].json()["code"] == "not_found"
    assert responses[3].status_code == 405 and responses[3].headers["Allow"] == "POST"


def pages(stub, user, per_page):
    first = stub.get("/api/v1/cheer_history", params={"user_id": user, "per_page": per_page}).json()
    entries = list(first["history"])
    for page in range(2, first["total_pages"] + 1):
        body = stub.get("/api/v1/cheer_history", params={"user_id": user, "page": page, "per_page": per_page}).json()
        assert body["page"] == page and body["per_page"] == per_page
        entries += body["history"]
    return first, entries


def test_paging_arithmetic(stub):
    first, by_37 = pages(stub, "qa-alice", 37)
    assert first["total_count"] == 230 and first["total_pages"] == 7  # ceil(230 / 37)
    _, by_200 = pages(stub, "qa-alice", 200)
    assert by_37 == by_200 and len(by_37) == 230
    assert len({e["id"] for e in by_37}) == 230
    dates = [e["date"][:19] for e in by_37]
    assert dates == sorted(dates, reverse=True), "newest first"
    default = stub.get("/api/v1/cheer_history", params={"user_id": "qa-alice"}).json()
    assert default["page"] == 1 and default["per_page"] == 50 and len(default["history"]) == 50
    past = stub.get("/api/v1/cheer_history", params={"user_id": "qa-alice", "page": 8, "per_page": 37})
    assert past.status_code == 200 and past.json()["history"] == [] and past.json()["total_pages"] == 7
    empty = stub.get("/api/v1/cheer_history", params={"user_id": "qa-empty"}).json()
    assert empty["history"] == [] and empty["total_count"] == 0 and empty["total_pages"] == 0


@pytest.mark.parametrize("params, status", [
    # The largest page the contract's integer takes is past the end (an empty page); beyond it, or not a
    # whole number, or a page size below 1 or past any integer, is the client's error.
    ({"page": "9223372036854775807"}, 200), ({"page": "99999999999999999999999"}, 400), ({"per_page": "-3"}, 400),
    ({"per_page": "999999999999999999999"}, 400), ({"page": ""}, 400), ({"page": "1e3"}, 400),
])
def test_hostile_paging_values_never_break_the_server(stub, params, status):
    r = stub.get("/api/v1/cheer_history", params={"user_id": "qa-whale", **params})
    assert r.status_code == status and r.headers["X-Request-Id"], (r.status_code, r.text)
    if status == 200:
        assert r.json()["history"] == [] and r.json()["total_count"] == 100_000, r.text
    else:
        assert set(r.json()) >= {"message", "code"} and r.json()["message"], r.text
    assert stub.get("/api/v1/balance", params={"user_id": "qa-whale"}).status_code == 200


def test_control_endpoint_refuses_huge_bodies(stub):
    r = stub.http.post(stub.url + "/_stub/faults", data=b"[" + b" " * (2 << 20) + b"]", timeout=10)
    assert r.status_code == 413 and r.json()["code"] == "body_too_large"


def test_whale_pages_are_generated_on_demand(stub):
    last = stub.get("/api/v1/cheer_history", params={"user_id": "qa-whale", "page": 2000, "per_page": 50}).json()
    assert last["total_count"] == 100_000 and last["total_pages"] == 2000 and len(last["history"]) == 50
    assert last["history"][-1]["id"] == "h-qa-whale-99999"
    again = stub.get("/api/v1/cheer_history", params={"user_id": "qa-whale", "page": 2000, "per_page": 50}).json()
    assert again == last, "deterministic"


def test_same_seed_same_data_other_seed_other_data(stub, start_stub):
    other = start_stub("--seed", "7", "--whale-history", "12", "--quiet")
    mine = stub.get("/api/v1/audio_packs").json()
    assert stub.get("/api/v1/audio_packs").json() == mine
    theirs = other.get("/api/v1/audio_packs").json()
    assert theirs != mine and len(theirs["packs"]) == len(mine["packs"])
    whale = other.get("/api/v1/cheer_history", params={"user_id": "qa-whale"}).json()
    assert whale["total_count"] == 12 and len(whale["history"]) == 12


def test_purchase_replay_is_409_and_changes_nothing(stub):
    body = {"identifier": "com.reiterate.cheer.500", "transaction_id": 4242}
    assert stub.post("/api/v2/purchase_cheer", json=body).json() == {"balance": 1750}
    again = stub.post("/api/v2/purchase_cheer", json=body)
    assert again.status_code == 409 and again.json()["code"] == "duplicate_transaction"
    assert stub.get("/api/v1/balance", params={"user_id": "qa-alice"}).json() == {"balance": 1750}
    unknown = stub.post("/api/v2/purchase_cheer", json={"identifier": "com.reiterate.cheer.999", "transaction_id": 1})
    assert unknown.status_code == 400 and "com.reiterate.cheer.200" in unknown.json()["message"]
    assert stub.post("/api/v2/purchase_cheer", json={"identifier": "com.reiterate.cheer.200"}).status_code == 400
    for look_alike in ("com.reiterate.cheer.0050", "com.reiterate.cheer.+50", "com.reiterate.cheer.50 "):
        r = stub.post("/api/v2/purchase_cheer", json={"identifier": look_alike, "transaction_id": 11})
        assert r.status_code == 400 and r.json()["code"] == "unknown_product"
    bad_id = stub.post("/api/v2/purchase_cheer", json={"identifier": "com.reiterate.cheer.50", "transaction_id": -1})
    assert bad_id.status_code == 400 and "unsigned 64-bit" in bad_id.json()["message"]
    empty = stub.post("/api/v2/purchase_cheer", params={"user_id": "qa-empty"},
                      json={"identifier": "com.reiterate.cheer.50", "transaction_id": 7})
    assert empty.json() == {"balance": 50}


def test_spend_402_then_success_prepends_history(stub):
    pack = stub.get("/api/v1/audio_packs").json()["packs"][3]
    poor = stub.post("/api/v1/spend_cheer", json={"amount": 1251, "product": pack["identifier"]})
    assert poor.status_code == 402 and poor.json()["code"] == "insufficient_balance"
    assert stub.get("/api/v1/balance", params={"user_id": "qa-alice"}).json() == {"balance": 1250}
    r = stub.post("/api/v1/spend_cheer", json={"amount": 1250, "product": pack["identifier"], "comment": "All in 🎉"})
    assert r.json() == {"balance": 0}
    top = stub.get("/api/v1/cheer_history", params={"user_id": "qa-alice", "per_page": 1}).json()
    assert top["total_count"] == 231
    assert top["history"][0]["amount"] == 1250 and top["history"][0]["product"] == pack["identifier"]
    assert top["history"][0]["comments"] == [{"signature": "qa-alice", "body": "All in 🎉"}]
    packs = {p["identifier"]: p for p in stub.get("/api/v1/audio_packs").json()["packs"]}
    assert packs[pack["identifier"]]["cheer_total"] == pack["cheer_total"] + 1250
    assert stub.post("/api/v1/spend_cheer", json={"amount": 0, "product": pack["identifier"]}).status_code == 400
    assert stub.post("/api/v1/spend_cheer", json={"amount": 1, "product": "nope"}).json()["code"] == "unknown_product"


def test_fifty_concurrent_spends_lose_no_update(stub):
    pack = stub.get("/api/v1/audio_packs").json()["packs"][0]["identifier"]

    def spend(i):
        with requests.Session() as s:
            return s.post(stub.url + "/api/v1/spend_cheer", headers={"Authorization": "Bearer dev-token"},
                          json={"amount": 5, "product": pack, "comment": f"n{i}"}, timeout=20)

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(spend, range(50)))
    assert [r.status_code for r in results] == [200] * 50
    balances = sorted(r.json()["balance"] for r in results)
    assert balances == list(range(1250 - 250, 1250, 5)), "each spend saw a distinct balance"
    assert stub.get("/api/v1/balance", params={"user_id": "qa-alice"}).json() == {"balance": 1000}
    top = stub.get("/api/v1/cheer_history", params={"user_id": "qa-alice", "per_page": 50}).json()
    assert top["total_count"] == 280
    assert {e["comments"][0]["body"] for e in top["history"]} == {f"n{i}" for i in range(50)}


def test_token_expiry_and_refresh_rotation(start_stub):
    s = start_stub("--token-ttl", "1", "--token", "tok-A", "--refresh-token", "ref-A", "--quiet")
    balance = {"user_id": "qa-alice"}
    assert s.get("/api/v1/balance", params=balance, token="tok-A").status_code == 200
    assert s.get("/api/v1/balance", params=balance, token="dev-token").status_code == 401
    # The 1 s token expires: asked again until it is refused (within 5 s: margin for a loaded machine).
    expired = wait_until(lambda: s.get("/api/v1/balance", params=balance, token="tok-A"), lambda r: r.status_code != 200, 5,
                         "tok-A expired", show=lambda r: (r.status_code, r.text))
    assert expired.status_code == 401 and expired.json()["code"] == "token_expired", expired.text
    grant = s.post("/api/v1/auth/refresh", token=None, json={"refresh_token": "ref-A"}).json()
    assert grant["expires_in"] == 1 and grant["refresh_token"] != "ref-A"
    assert s.get("/api/v1/balance", params=balance, token=grant["access_token"]).status_code == 200
    reused = s.post("/api/v1/auth/refresh", token=None, json={"refresh_token": "ref-A"})
    assert reused.status_code == 401 and reused.json()["code"] == "invalid_refresh_token"
    second = s.post("/api/v1/auth/refresh", token=None, json={"refresh_token": grant["refresh_token"]})
    assert second.status_code == 200 and second.json()["access_token"] != grant["access_token"]
    # Revoking makes every issued access token fail at once, to exercise a client's refresh path.
    assert s.http.post(s.url + "/_stub/revoke_tokens").status_code == 200
    assert s.get("/api/v1/balance", params=balance, token=second.json()["access_token"]).status_code == 401


def test_request_log_lines_and_no_secrets(stub):
    stub.get("/api/v1/balance", params={"user_id": "qa-alice", "access_token": "sekrit-in-query"})
    stub.post("/api/v1/auth/refresh", token=None, json={"refresh_token": "dev-refresh"})
    log = stub.wait_for_log("POST /api/v1/auth/refresh 200")
    line = next(l for l in log.splitlines() if l.startswith("GET /api/v1/balance?user_id=qa-alice&access_token"))
    assert re.fullmatch(r"GET /api/v1/balance\?user_id=qa-alice&access_token=\*\*\* 200 \d+ms rq-[0-9a-f]{16}", line)
    for secret in ("dev-token", "dev-refresh", "sekrit-in-query", "Bearer"):
        assert secret not in log


def test_sigterm_stops_the_stub_even_with_a_hanging_request(start_stub):
    s = start_stub("--fault", "hang,path=/api/v1/audio_packs")
    host, port = s.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(f"GET /api/v1/audio_packs HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer dev-token\r\n\r\n".encode())
        # The request hangs: no answer within 1 s, where the stand-in answers in milliseconds (a deliberate wait:
        # the hang is what SIGTERM must not wait for).
        conn.settimeout(1.0)
        with pytest.raises(socket.timeout):
            conn.recv(1)
        # Still hanging, on its open connection: SIGTERM stops the stand-in at once all the same.
        s.proc.terminate()
        assert s.proc.wait(5) == 0
