"""`reiterate-shop proxy` (issue 29) when things go wrong: the upstream resetting, hanging or cutting its
answer; an HTTP/1.0 client; 200 connections for 30 s (ApacheBench); 1,000 connections dropped
mid-request. Clients and fixtures as in test_proxy.py."""
import json
import re
import socket
import subprocess
import time

import pytest

from conftest import wait_until
from test_proxy import AUTH, app_connection, app_request, port_of, summary, tunnel_socket


# ---------------------------------------------------------------------------------------------------
# The upstream failing: a clean 502 for the app, a finding blamed on the server, and the proxy goes on

@pytest.mark.parametrize("fault", [{"kind": "reset"}, {"kind": "hang", "seconds": 2}, {"kind": "stall", "seconds": 2}],
                         ids=["reset", "hang-then-reset", "body-cut-mid-way"])
def test_an_upstream_failure_gives_the_app_a_clean_502_and_a_server_finding(fault, tls_proxy, tls_stub):
    p = tls_proxy("--json")
    tls_stub.fault(path="/api/v1/audio_packs", count=1, **fault)
    conn = app_connection(p, port_of(tls_stub.url))
    conn.request("GET", "/api/v1/audio_packs", headers=AUTH)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 502 and r.headers["X-Reiterate-Proxy"] == "upstream-failed", (r.status, r.headers, body)
    assert len(body.decode().strip().splitlines()) == 1, body
    # The app's connection goes on: the next request on it is answered.
    conn.request("GET", "/api/v1/audio_packs", headers=AUTH)
    again = conn.getresponse()
    assert again.status == 200 and len(json.loads(again.read())["packs"]) == 46
    conn.close()
    failed, answered = p.wait_for("exchange", count=2)[:2]
    assert failed["path"] == "/api/v1/audio_packs" and "status" not in failed and failed["error"], failed
    assert answered["status"] == 200 and "error" not in answered, answered
    # Stopped, the proxy has written every line it had: the one finding is all there is.
    assert p.stop() == 0
    findings = [l for l in p.lines() if l["kind"] == "finding"]
    assert [(f["check"], f["blame"], f["path"], f.get("request_id")) for f in findings] == [
        ("no-answer", "server", "/api/v1/audio_packs", failed.get("request_id"))], p.out()
    assert any(": [no-answer] " in line and "(the server's fault" in line for line in p.err().splitlines()), p.err()
    assert ", 1 error, " in summary(p), p.err()


def test_an_upstream_that_hangs_past_the_timeout_gives_the_app_a_504_and_a_server_finding(tls_proxy, tls_stub):
    p = tls_proxy("--json", "--timeout", "2")
    tls_stub.fault(kind="hang", seconds=10, path="/api/v1/audio_packs", count=1)
    started = time.monotonic()
    status, headers, body = app_request(p, tls_stub, "GET", "/api/v1/audio_packs")
    assert status == 504 and headers["X-Reiterate-Proxy"] == "upstream-timeout", (status, headers, body)
    assert time.monotonic() - started < 8
    exchange = p.wait_for("exchange")[0]
    assert exchange["error"] and exchange["ms"] >= 2000, exchange
    # Stopped, the proxy has written every line it had: the one finding is all there is.
    assert p.stop() == 0
    findings = [l for l in p.lines() if l["kind"] == "finding"]
    assert [(f["check"], f["blame"], f.get("request_id")) for f in findings] == [("no-answer", "server", exchange.get("request_id"))], p.out()


def test_an_answer_cut_short_within_its_length_is_a_server_finding(tls_proxy, tls_stub):
    """The stand-in cuts the JSON and sends a Content-Length that matches the cut: the exchange is whole
    (no error of the exchange: the app gets every byte the server sent), and the answer is a finding on
    the server's side."""
    p = tls_proxy("--json")
    tls_stub.fault(kind="truncate", path="/api/v1/audio_packs", count=1)
    status, headers, body = app_request(p, tls_stub, "GET", "/api/v1/audio_packs")
    assert status == 200 and int(headers["Content-Length"]) == len(body)   # the app gets what the server sent
    with pytest.raises(ValueError):
        json.loads(body)
    exchange = p.wait_for("exchange")[0]
    # Stopped, the proxy has written every line it had.
    assert p.stop() == 0
    findings = [l for l in p.lines() if l["kind"] == "finding" and l["request_id"] == exchange["request_id"]]
    assert exchange["status"] == 200 and "error" not in exchange, exchange
    assert [(f["check"], f["blame"]) for f in findings] == [("no-answer", "server")], p.out()
    assert "a JSON body that does not parse" in findings[0]["actual"], findings


def test_a_slow_answer_shows_its_real_milliseconds(tls_proxy, tls_stub):
    p = tls_proxy("--json")
    tls_stub.fault(kind="latency", ms=1250, path="/api/v1/audio_packs", count=1)
    started = time.monotonic()
    assert app_request(p, tls_stub, "GET", "/api/v1/audio_packs")[0] == 200
    took = (time.monotonic() - started) * 1000
    assert 1250 <= p.wait_for("exchange")[0]["ms"] <= took, (p.out(), took)


def test_an_http_1_0_client_is_not_left_waiting_on_a_kept_connection(stub, start_proxy):
    p = start_proxy(stub.url)
    answer, kept_open = b"", False
    # A proxy keeps no connection with an HTTP/1.0 client (RFC 9112 §9.3): it answers `Connection: close`
    # and closes. (10 s: a closed connection ends the read at once; a kept one would end it here.)
    with socket.create_connection(("127.0.0.1", p.port), timeout=10) as s:
        s.sendall(f"GET {stub.url}/api/v1/balance?user_id=qa-alice HTTP/1.0\r\nHost: {stub.url.split('//')[1]}\r\n"
                  "Connection: Keep-Alive\r\nAuthorization: Bearer dev-token\r\n\r\n".encode())
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except socket.timeout:
            kept_open = True
    head = answer.split(b"\r\n\r\n")[0]
    assert head.startswith(b"HTTP/1.1 200 "), answer
    assert not kept_open, answer
    assert re.search(rb"\r\nConnection: close\r\n", head + b"\r\n", re.I), head
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"balance": 1250}, answer


# ---------------------------------------------------------------------------------------------------
# Load and leaks (slow: about 45 s together)

@pytest.mark.slow
def test_200_connections_for_30_s_fail_nothing_and_keep_the_memory_flat(start_stub, start_proxy):
    s = start_stub("--quiet")
    p = start_proxy(s.url)
    # Without -k: ab's HTTP/1.0 keep-alive waits for a `Connection: keep-alive` the proxy does not send
    # (test_an_http_1_0_client_is_not_left_waiting_on_a_kept_connection).
    ab = subprocess.Popen(["ab", "-q", "-X", f"127.0.0.1:{p.port}", "-c", "200", "-t", "30", "-n", "100000000",
                           "-H", "Authorization: Bearer dev-token", f"{s.url}/api/v1/audio_packs"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    time.sleep(10)  # a deliberate delay: the first memory sample, 10 s into the 30 s of load
    rss_at_10 = p.status("VmRSS")
    assert ab.poll() is None, "ab ended before 10 s: the load is not running"
    time.sleep(max(0, 29 - (time.monotonic() - started)))  # a deliberate delay: the second sample, near the load's end
    rss_at_30 = p.status("VmRSS")
    assert ab.poll() is None, "ab ended before 29 s: the second sample is not under load"
    out, err = ab.communicate(timeout=90)
    assert ab.returncode == 0, out + err

    def number(label):
        return int(re.search(rf"^{label}:\s+(\d+)", out, re.M).group(1))

    assert number("Complete requests") >= 1000 and number("Failed requests") == 0, out
    assert "Non-2xx responses" not in out, out
    assert rss_at_30 <= rss_at_10 * 1.2, f"RSS {rss_at_10} KiB at 10 s, {rss_at_30} KiB at 30 s"
    assert p.proc.poll() is None and p.stop() == 0


def dropped_mid_request(proxy, kind: str, plain_port: int, tls_port: int):
    """Opens a connection and leaves it with half a request: what `kind` says."""
    def half_body(target: str, host: str) -> bytes:
        return (f"POST {target}/api/v1/spend_cheer HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                'Content-Length: 100\r\n\r\n{"product":"com.reiterate.pack.rain",').encode()

    if kind == "head":
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        s.sendall(f"GET http://127.0.0.1:{plain_port}/api/v1/audio_packs HTTP/1.1\r\nHost: 127.0.0.1:{plain_port}\r\nAuthor".encode())
    elif kind == "body":
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        s.sendall(half_body(f"http://127.0.0.1:{plain_port}", f"127.0.0.1:{plain_port}"))
    elif kind == "tls-body":
        s = tunnel_socket(proxy, tls_port)
        s.sendall(half_body("", f"localhost:{tls_port}"))
    else:   # a blind tunnel: half a TLS ClientHello to the real server
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
        s.sendall(f"CONNECT 127.0.0.1:{tls_port} HTTP/1.1\r\nHost: 127.0.0.1:{tls_port}\r\n\r\n".encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        s.sendall(bytes.fromhex("160301020001"))
    return s


def settled_fds(proxy) -> int:
    """The proxy's open descriptors once the count holds still (the app's connection just closed is
    closed on the proxy's side a moment later): the same in three reads, 0.1 s apart."""
    seen = []

    def read():
        if not seen or time.monotonic() - seen[-1][0] >= 0.1:
            seen.append((time.monotonic(), proxy.fds()))
        return [n for _, n in seen[-3:]]

    return wait_until(read, lambda last: len(last) == 3 and len(set(last)) == 1, 10, "the descriptors settled",
                      show=lambda _: [n for _, n in seen[-10:]])[0]


@pytest.mark.slow
def test_1000_connections_dropped_mid_request_leave_no_descriptor_behind(tls_proxy, tls_stub, stub):
    p = tls_proxy("--json")
    plain, tls = port_of(stub.url), port_of(tls_stub.url)
    assert app_request(p, tls_stub, "GET", "/api/v1/audio_packs")[0] == 200   # the upstream pool and the leaf exist
    p.wait_for("exchange")
    before = settled_fds(p)
    kinds = ["head", "body", "tls-body", "tunnel"]
    for batch in range(10):
        held = [dropped_mid_request(p, kinds[(batch * 100 + i) % 4], plain, tls) for i in range(100)]
        for s in held:
            s.close()
    wait_until(p.fds, lambda n: n <= before + 4, 15, f"the descriptors back to {before} (+4) after 1,000 dropped connections")
    assert app_request(p, tls_stub, "GET", "/api/v1/audio_packs")[0] == 200   # and it still serves
