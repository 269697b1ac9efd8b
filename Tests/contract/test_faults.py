"""Each fault kind, observed the way a client sees it on the wire; plus scoping by path, method, count, rate."""
import json
import socket
import time

import pytest
import requests

BALANCE = ("/api/v1/balance", {"user_id": "qa-alice"})
HISTORY = ("/api/v1/cheer_history", {"user_id": "qa-alice", "per_page": 20})


def get(stub, target, **kw):
    path, params = target
    return stub.get(path, params=params, **kw)


def test_latency_fixed_and_jittered(stub):
    stub.fault(kind="latency", ms=400, path="/api/v1/balance", count=1)
    t0 = time.monotonic()
    assert get(stub, BALANCE).json() == {"balance": 1250}
    assert time.monotonic() - t0 >= 0.4
    stub.fault(kind="latency", ms=600, jitter=200, path="/api/v1/balance", count=3)
    for _ in range(3):
        t0 = time.monotonic()
        assert get(stub, BALANCE).status_code == 200
        assert 0.6 <= time.monotonic() - t0 < 3.0
    # Count exhausted: the fault is gone, and no more delay (the jittered one is 600 ms at least).
    assert stub.http.get(stub.url + "/_stub/faults", timeout=5).json()["faults"] == []
    t0 = time.monotonic()
    get(stub, BALANCE)
    assert time.monotonic() - t0 < 0.6, "count exhausted: no more delay"


def test_status_with_json_error(stub):
    stub.fault(kind="status", status=500, message="database on fire", path="/api/v1/balance", count=1)
    r = get(stub, BALANCE)
    assert r.status_code == 500
    assert r.json() == {"message": "database on fire", "code": "injected_fault"}
    assert r.headers["X-Request-Id"].startswith("rq-")


@pytest.mark.parametrize("status", [502, 503])
def test_html_proxy_page(stub, status):
    stub.fault(kind="html", status=status, count=1)
    r = get(stub, BALANCE)
    assert r.status_code == status
    assert r.headers["Content-Type"] == "text/html"
    assert r.text.startswith("<html>") and f"<h1>{status} " in r.text and "nginx" in r.text
    assert "Retry-After" not in r.headers
    with pytest.raises(json.JSONDecodeError):
        json.loads(r.text)


def test_html_503_can_carry_retry_after(stub):
    stub.fault(kind="html", status=503, retry_after=30, count=1)
    r = get(stub, BALANCE)
    assert r.status_code == 503 and r.headers["Retry-After"] == "30" and "<html>" in r.text


def test_rate_limit_with_retry_after(stub):
    stub.fault(kind="rate_limit", retry_after=7, count=1)
    r = get(stub, HISTORY)
    assert r.status_code == 429 and r.headers["Retry-After"] == "7" and r.json()["code"] == "rate_limited"


def test_truncated_json_body(stub):
    whole = get(stub, HISTORY)
    stub.fault(kind="truncate", path="/api/v1/cheer_history", count=1)
    cut = get(stub, HISTORY)
    assert cut.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut.content)
    stub.fault(kind="truncate", keep=5, path="/api/v1/balance", count=1)
    assert get(stub, BALANCE).content == b'{"bal'
    assert cut.content == whole.content[: len(whole.content) // 2]


def raw_exchange(stub, request: bytes) -> bytes:
    host, port = stub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def test_truncated_body_is_a_complete_http_message(stub):
    stub.fault(kind="truncate", keep=9, path="/api/v1/balance", count=1)
    raw = raw_exchange(stub, b"GET /api/v1/balance?user_id=qa-alice HTTP/1.1\r\nHost: x\r\n"
                             b"Authorization: Bearer dev-token\r\nConnection: close\r\n\r\n")
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"\r\nContent-Length: 9\r\n" in head
    assert body == b'{"balance'


def test_wrong_content_type(stub):
    stub.fault(kind="content_type", content_type="text/plain", count=1)
    r = get(stub, BALANCE)
    assert r.headers["Content-Type"] == "text/plain" and r.json() == {"balance": 1250}


def test_one_malformed_entry_in_a_good_page(stub):
    good = get(stub, HISTORY).json()
    stub.fault(kind="malformed_entry", count=1)
    bad = get(stub, HISTORY).json()
    assert len(bad["history"]) == 20 and bad["total_count"] == 230
    differing = [i for i in range(20) if bad["history"][i] != good["history"][i]]
    assert differing == [10]
    entry = bad["history"][10]
    assert entry["id"] == good["history"][10]["id"]
    assert not isinstance(entry["amount"], int) and entry["product"] is None and entry["date"] == "yesterday at noon"
    stub.fault(kind="malformed_entry", index=0, count=1)
    assert get(stub, HISTORY).json()["history"][0]["creator"] == 42


def test_malformed_entry_skips_other_endpoints(stub):
    fault = stub.fault(kind="malformed_entry", count=1, path="*")
    assert get(stub, BALANCE).json() == {"balance": 1250}
    faults = stub.http.get(stub.url + "/_stub/faults").json()["faults"]
    assert faults[0]["id"] == fault["id"] and faults[0]["remaining"] == 1


def test_hostile_text_in_names_and_comments(stub):
    stub.fault(kind="hostile", count=2)
    packs = stub.get("/api/v1/audio_packs").json()["packs"]
    page = get(stub, HISTORY).json()["history"]
    names = "".join(p["name"] + p["creator"] + p["description"] for p in packs)
    comments = "".join((c["signature"] or "") + (c["body"] or "") for e in page for c in e["comments"])
    for text in (names, comments):
        assert "\x1b[" in text and "\x1b]" in text  # CSI and OSC
        assert any(0x80 <= ord(ch) <= 0x9F for ch in text)  # C1
        assert "\u202e" in text and "\u200b" in text  # bidi override, zero-width
        assert any(0x300 <= ord(ch) <= 0x36F for ch in text)  # combining
    assert any(len(word) >= 300 for word in names.split())
    assert get(stub, HISTORY).json()["history"][0]["creator"].isprintable(), "count=2 is used up"


def test_connection_reset(stub):
    stub.fault(kind="reset", path="/api/v1/balance", count=1)
    with pytest.raises(requests.exceptions.ConnectionError) as info:
        get(stub, BALANCE)
    assert "reset" in str(info.value).lower()
    assert get(stub, BALANCE).status_code == 200
    stub.wait_for_log("GET /api/v1/balance?user_id=qa-alice RESET")


def test_connection_reset_at_socket_level(stub):
    stub.fault(kind="reset", count=1)
    host, port = stub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"GET /api/v1/balance?user_id=qa-alice HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-token\r\n\r\n")
        with pytest.raises(ConnectionResetError):
            while s.recv(4096):
                pass


def test_hang_until_the_client_gives_up(stub):
    stub.fault(kind="hang", path="/api/v1/audio_packs", count=1)
    t0 = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        stub.get("/api/v1/audio_packs", timeout=0.8)
    assert time.monotonic() - t0 >= 0.8
    stub.wait_for_log("GET /api/v1/audio_packs HANG(client gave up)")
    assert stub.get("/api/v1/audio_packs").status_code == 200


def test_stall_sends_the_head_and_part_of_the_body_then_nothing(stub):
    stub.fault(kind="stall", keep=5, path="/api/v1/balance", count=1)
    host, port = stub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=1) as s:
        s.sendall(b"GET /api/v1/balance?user_id=qa-alice HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-token\r\n\r\n")
        data = b""
        with pytest.raises(socket.timeout):
            while chunk := s.recv(4096):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"\r\nContent-Length: 16\r\n" in head
    assert body == b'{"bal'
    stub.wait_for_log("GET /api/v1/balance?user_id=qa-alice 200")


def test_hang_ends_at_its_bound(stub):
    stub.fault(kind="hang", seconds=1, count=1)
    with pytest.raises(requests.exceptions.ConnectionError):
        get(stub, BALANCE, timeout=5)
    stub.wait_for_log("HANG(timeout)")


def test_scoping_by_path_method_count_and_rate(stub):
    stub.fault(kind="status", status=418, path="/api/v1/bal*", method="GET", count=2)
    assert stub.get("/api/v1/audio_packs").status_code == 200
    assert [get(stub, BALANCE).status_code for _ in range(3)] == [418, 418, 200]
    stub.fault(kind="status", status=500, method="POST")
    assert get(stub, BALANCE).status_code == 200
    assert stub.post("/api/v1/spend_cheer", json={"amount": 1, "product": "x"}).status_code == 500
    assert stub.http.delete(stub.url + "/_stub/faults").json() == {"cleared": 1}
    stub.fault(kind="status", status=503, rate=0.3, path="/api/v1/balance")
    codes = [get(stub, BALANCE).status_code for _ in range(300)]
    assert set(codes) == {200, 503} and 50 <= codes.count(503) <= 130


def test_control_endpoint_lists_and_removes(stub):
    a = stub.fault(kind="latency", ms=1)
    b = stub.fault(kind="hostile")
    listed = stub.http.get(stub.url + "/_stub/faults").json()["faults"]
    assert [f["id"] for f in listed] == [a["id"], b["id"]] and listed[0]["kind"] == "latency"
    assert stub.http.delete(f"{stub.url}/_stub/faults/{a['id']}").json() == {"removed": a["id"]}
    assert stub.http.delete(f"{stub.url}/_stub/faults/{a['id']}").status_code == 404
    bad = stub.http.post(stub.url + "/_stub/faults", json={"kind": "explode"})
    assert bad.status_code == 400 and "unknown fault kind" in bad.json()["message"]
    many = stub.http.post(stub.url + "/_stub/faults", json=[{"kind": "reset", "count": 1}, {"kind": "hang", "count": 1}])
    assert len(many.json()["faults"]) == 2


def test_a_fault_that_changes_nothing_keeps_its_count(stub):
    stub.fault(kind="malformed_entry", count=1)
    assert get(stub, HISTORY, token=None).status_code == 401
    past = stub.get("/api/v1/cheer_history", params={"user_id": "qa-alice", "page": 99})
    assert past.json()["history"] == []
    stub.fault(kind="status", status=503, count=1)
    stub.fault(kind="truncate", count=1)
    assert get(stub, BALANCE).status_code == 503  # the status fault decides; truncate is not spent
    assert get(stub, BALANCE).content == b'{"balanc'
    assert get(stub, HISTORY).json()["history"][10]["date"] == "yesterday at noon"
    assert stub.http.get(stub.url + "/_stub/faults").json()["faults"] == []


def test_faults_from_the_command_line(start_stub):
    s = start_stub("--fault", "status,status=503,path=/api/v1/balance,count=1",
                   "--fault", "kind=latency,ms=300,path=/api/v1/audio_packs,count=1", "--quiet")
    assert s.get(*BALANCE[:1], params=BALANCE[1]).status_code == 503
    assert s.get(*BALANCE[:1], params=BALANCE[1]).status_code == 200
    t0 = time.monotonic()
    assert s.get("/api/v1/audio_packs").status_code == 200
    assert time.monotonic() - t0 >= 0.3


@pytest.mark.parametrize("args,message", [
    (["--fault", "explode"], "unknown fault kind 'explode'"),
    (["--whale-history", "9223372036854775807"], "--whale-history must be"),
    (["--token-ttl", "nan"], "--token-ttl must be"),
    (["--token-ttl", "1e300"], "--token-ttl must be"),
    (["--port", "70000"], "--port must be"),
])
def test_bad_flags_are_refused_at_start(args, message):
    import subprocess
    from conftest import STUB_BIN
    r = subprocess.run([str(STUB_BIN), "--port", "0", *args], capture_output=True, text=True, timeout=20)
    assert r.returncode != 0 and message in r.stderr
