"""`reiterate-shop proxy` (issue 29) with real clients playing the app: curl, Python's http.client,
openssl s_client and raw sockets, through the proxy to the stand-in over TLS (the throwaway CA of
`make certs` as the environment's `ca_file`), or over plain HTTP for absolute-form requests.
Upstream failures, load and leaks: test_proxy_load.py."""
import base64
import http.client
import json
import re
import secrets
import signal
import socket
import ssl
import subprocess
from datetime import timedelta

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from conftest import SHOP_BIN, free_port, proxy_env
from test_checks import har_requests

AUTH = {"Authorization": "Bearer dev-token"}


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def app_connection(proxy, port: int, host: str = "localhost") -> http.client.HTTPSConnection:
    """Python's HTTP client as the app: CONNECT through the proxy, trusting only the proxy's CA."""
    conn = http.client.HTTPSConnection("127.0.0.1", proxy.port, context=ssl.create_default_context(cafile=str(proxy.ca)), timeout=30)
    conn.set_tunnel(host, port)
    return conn


def app_request(proxy, stub, method: str, path: str, body=None, headers=None):
    """One request of the app on its own connection: (status, headers, body bytes)."""
    conn = app_connection(proxy, port_of(stub.url))
    try:
        h = dict(AUTH, **(headers or {}))
        if isinstance(body, dict):
            body, h["Content-Type"] = json.dumps(body), "application/json"
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        return r.status, r.headers, r.read()
    finally:
        conn.close()


def curl(proxy, url: str, *args: str):
    return subprocess.run(["curl", "-sS", "--proxy", proxy.url, *args, url], capture_output=True, text=True, timeout=60)


def s_client(proxy, host: str, port: int, *args: str):
    """openssl s_client through the proxy: its output and the certificates the server presented (PEM)."""
    r = subprocess.run(["openssl", "s_client", "-proxy", f"127.0.0.1:{proxy.port}", "-connect", f"{host}:{port}", "-showcerts", *args],
                       input="", capture_output=True, text=True, timeout=30)
    return r.stdout, re.findall(r"-----BEGIN CERTIFICATE-----\n.+?-----END CERTIFICATE-----\n", r.stdout, re.S)


def openssl_verify(ca, cert_pem: str, tmp_path, *args: str):
    path = tmp_path / f"cert-{secrets.token_hex(4)}.pem"
    path.write_text(cert_pem)
    return subprocess.run(["openssl", "verify", "-CAfile", str(ca), *args, str(path)], capture_output=True, text=True, timeout=30)


def summary(proxy) -> str:
    return next(line for line in proxy.err().splitlines() if line.startswith("note: proxy on "))


# ---------------------------------------------------------------------------------------------------
# Interception: curl and Python's client as the app, the leaf, the CA's name constraints

def test_curl_and_python_reach_the_stand_in_through_the_proxy_on_one_kept_connection(tls_proxy, tls_stub):
    p = tls_proxy("--json")
    port = port_of(tls_stub.url)
    r = curl(p, f"https://localhost:{port}/api/v1/balance?user_id=qa-alice", "--cacert", str(p.ca), "-H", "Authorization: Bearer dev-token")
    assert r.returncode == 0 and json.loads(r.stdout) == {"balance": 1250}, r.stderr
    conn = app_connection(p, port)
    conn.request("GET", "/api/v1/balance?user_id=qa-alice", headers=AUTH)
    first = conn.getresponse()
    first_body, sock = first.read(), conn.sock
    conn.request("POST", "/api/v1/spend_cheer?user_id=qa-alice", body=iter([b'{"product":"com.reiterate.pack.rain",', b'"amount":7}']),
                 headers=dict(AUTH, **{"Content-Type": "application/json"}), encode_chunked=True)
    second = conn.getresponse()
    second_body = second.read()
    assert conn.sock is sock, "the proxy closed the app's connection between two requests"
    conn.close()
    assert (first.status, json.loads(first_body)) == (200, {"balance": 1250})
    assert (second.status, json.loads(second_body)) == (200, {"balance": 1243}), second_body
    lines = p.wait_for("exchange", count=3)
    assert [(l["source"], l["method"], l["path"], l["status"]) for l in lines] == [
        ("app", "GET", "/api/v1/balance?user_id=qa-alice", 200), ("app", "GET", "/api/v1/balance?user_id=qa-alice", 200),
        ("app", "POST", "/api/v1/spend_cheer?user_id=qa-alice", 200)]
    assert all(l["request_id"].startswith("rq-") and l["ms"] >= 0 and l["time"].endswith("Z") for l in lines), lines
    assert all(l["kind"] == "exchange" for l in p.lines()), p.out()
    assert p.stop(signal.SIGTERM) == 0
    assert re.fullmatch(rf"note: proxy on 127\.0\.0\.1:{p.port} for .+: 3 app exchanges, 0 findings, 0 errors, 0 tunnels, 0 refused \(terminated\)",
                        summary(p)), p.err()


def test_one_line_per_app_exchange_and_count_ends_it(tls_proxy, tls_stub):
    p = tls_proxy("--count", "2")
    for path in ("/api/v1/balance?user_id=qa-alice", "/api/v1/audio_packs"):
        assert app_request(p, tls_stub, "GET", path)[0] == 200
    assert p.proc.wait(20) == 0
    lines = p.out().splitlines()
    assert len(lines) == 2, lines
    for line, path in zip(lines, ("/api/v1/balance?user_id=qa-alice", "/api/v1/audio_packs")):
        assert re.fullmatch(rf"\d\d:\d\d:\d\d app GET {re.escape(path)} 200 \d+\.\d ms rq-[0-9a-f]+", line), line
    assert "2 app exchanges" in summary(p)


def test_listen_on_port_zero_takes_a_free_port_and_names_it(tls_proxy, tls_stub):
    p = tls_proxy(listen="127.0.0.1:0")
    assert p.port != 0
    assert app_request(p, tls_stub, "GET", "/api/v1/balance?user_id=qa-alice")[0] == 200


def test_the_leaf_verifies_for_its_host_with_san_server_auth_and_at_most_825_days(tls_proxy, tls_stub, tmp_path):
    p = tls_proxy()
    out, certs = s_client(p, "localhost", port_of(tls_stub.url), "-servername", "localhost", "-alpn", "h2,http/1.1")
    assert certs, out
    assert "ALPN protocol: http/1.1" in out, out
    r = openssl_verify(p.ca, certs[0], tmp_path, "-verify_hostname", "localhost")
    assert r.returncode == 0 and r.stdout.strip().endswith(": OK"), r.stdout + r.stderr
    assert openssl_verify(p.ca, certs[0], tmp_path, "-verify_hostname", "other.example").returncode != 0
    leaf = x509.load_pem_x509_certificate(certs[0].encode())
    assert leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName) == ["localhost"]
    assert ExtendedKeyUsageOID.SERVER_AUTH in leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert leaf.not_valid_after_utc - leaf.not_valid_before_utc <= timedelta(days=825)
    ca = x509.load_pem_x509_certificate(p.ca.read_bytes())
    assert leaf.issuer == ca.subject
    assert oct(p.ca_key.stat().st_mode & 0o777) == "0o600"
    assert "PRIVATE KEY" not in p.err() + p.out()


def test_a_certificate_the_ca_signs_for_another_host_fails_its_name_constraints(tls_proxy, tls_stub, tmp_path):
    p = tls_proxy()
    assert app_request(p, tls_stub, "GET", "/api/v1/audio_packs")[0] == 200   # the CA exists once the proxy runs

    def sign(name: str, san: str) -> str:
        key, csr, ext, out = (tmp_path / f"{name}.{suffix}" for suffix in ("key", "csr", "ext", "pem"))
        subprocess.run(["openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
                        "-out", str(csr), "-subj", f"/CN={name}"], check=True, capture_output=True)
        ext.write_text(f"subjectAltName={san}\nextendedKeyUsage=serverAuth\n")
        subprocess.run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(p.ca), "-CAkey", str(p.ca_key), "-set_serial", "7",
                        "-days", "30", "-extfile", str(ext), "-out", str(out)], check=True, capture_output=True)
        return out.read_text()

    # The same signing for a permitted name verifies: what fails below fails for its name alone.
    assert openssl_verify(p.ca, sign("localhost", "DNS:localhost"), tmp_path).returncode == 0
    r = openssl_verify(p.ca, sign("evil.example", "DNS:evil.example"), tmp_path)
    assert r.returncode != 0 and "permitted subtree violation" in r.stdout + r.stderr, r.stdout + r.stderr
    r = openssl_verify(p.ca, sign("an-address", "IP:203.0.113.7"), tmp_path)
    assert r.returncode != 0 and "subtree violation" in r.stdout + r.stderr, r.stdout + r.stderr


def test_a_blind_tunnel_presents_the_real_servers_certificate_and_records_only_its_size(tls_proxy, tls_stub, certificates, tmp_path):
    p = tls_proxy("--json")
    port = port_of(tls_stub.url)
    out, certs = s_client(p, "127.0.0.1", port)
    assert certs, out
    server = x509.load_pem_x509_certificate(certs[0].encode())
    assert server.issuer.rfc4514_string() == "CN=reiterate throwaway CA"
    assert openssl_verify(certificates / "ca.pem", certs[0], tmp_path).returncode == 0
    # A request through the tunnel verifies with the stand-in's own CA: nothing decrypts it on the way.
    marker = secrets.token_hex(6)
    r = curl(p, f"https://127.0.0.1:{port}/api/v1/balance?user_id=qa-alice&probe={marker}", "--cacert", str(certificates / "ca.pem"),
             "-H", "Authorization: Bearer dev-token")
    assert r.returncode == 0 and json.loads(r.stdout) == {"balance": 1250}, r.stderr
    tls_stub.wait_for_log(f"probe={marker}")
    tunnels = p.wait_for("tunnel", count=2)
    for t in tunnels:
        assert (t["host"], t["port"]) == ("127.0.0.1", port) and t["bytes_up"] > 0 and t["bytes_down"] > 0 and t["ms"] >= 0, t
        assert "path" not in t and "method" not in t and marker not in json.dumps(t), t
    assert not [l for l in p.lines() if l["kind"] == "exchange"], p.out()
    p.stop()
    assert ", 2 tunnels," in summary(p), p.err()


# ---------------------------------------------------------------------------------------------------
# Security: a password beyond loopback; requests parsers could read two ways

def test_beyond_loopback_a_password_is_required_and_never_shown(tls_proxy, tls_stub, certificates, tmp_path):
    base = f"https://localhost:{port_of(tls_stub.url)}"
    r = subprocess.run([str(SHOP_BIN), "proxy", "--env", "t", "--listen", f"0.0.0.0:{free_port()}"], capture_output=True, text=True, timeout=30,
                       env=proxy_env(tmp_path / "nopass", base, certificates / "ca.pem"))
    assert r.returncode == 78 and r.stdout == "", r.stdout + r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("error: ") and "REITERATE_PROXY_PASSWORD" in r.stderr, r.stderr

    password = "lan-" + secrets.token_urlsafe(12)
    har = tmp_path / "lan.har"
    p = tls_proxy("--json", "--har", str(har), listen=f"0.0.0.0:{free_port()}", env={"REITERATE_PROXY_PASSWORD": password})
    with socket.create_connection(("127.0.0.1", p.port), timeout=10) as s:
        s.sendall(f"CONNECT localhost:{port_of(tls_stub.url)} HTTP/1.1\r\nHost: localhost:{port_of(tls_stub.url)}\r\n\r\n".encode())
        answer = read_all(s)
    assert answer.startswith(b"HTTP/1.1 407 "), answer
    assert re.search(rb"\r\nProxy-Authenticate: Basic realm=", answer, re.I), answer
    url = f"{base}/api/v1/balance?user_id=qa-alice"
    r = curl(p, url, "--cacert", str(p.ca), "-H", "Authorization: Bearer dev-token", "--proxy-user", "qa:not-the-password")
    assert r.returncode != 0 and "407" in r.stderr, r.stdout + r.stderr
    r = curl(p, url, "--cacert", str(p.ca), "-H", "Authorization: Bearer dev-token", "--proxy-user", f"qa:{password}")
    assert r.returncode == 0 and json.loads(r.stdout) == {"balance": 1250}, r.stderr
    p.wait_for("exchange", status=200)
    assert p.stop() == 0
    assert "2 wrong or missing passwords" in summary(p), p.err()
    encoded = base64.b64encode(f"qa:{password}".encode()).decode()
    for text in (p.out(), p.err(), har.read_text()):
        assert password not in text and encoded not in text


def read_all(sock, limit: int = 1 << 20) -> bytes:
    """Everything the peer sends until it closes (or stops for 10 s)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if len(data) > limit:
                break
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def tunnel_socket(proxy, port: int) -> ssl.SSLSocket:
    """A raw TLS socket inside a CONNECT to the intercepted localhost:PORT."""
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=10)
    s.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        byte = s.recv(1)   # bounded: the socket's 10 s timeout
        assert byte, f"the proxy closed the CONNECT before its answer's end: {head!r}"
        head += byte
    assert head.startswith(b"HTTP/1.1 200"), head
    return ssl.create_default_context(cafile=str(proxy.ca)).wrap_socket(s, server_hostname="localhost")


AMBIGUOUS = {
    "length-and-chunked": "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "two-lengths": "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "folded-header": "X-Note: one\r\n  folded\r\nContent-Length: 2\r\n\r\n{}",
    "bad-chunk-size": "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
}


@pytest.mark.parametrize("via", ["tunnel", "plain"])
@pytest.mark.parametrize("case", sorted(AMBIGUOUS))
def test_an_ambiguous_request_gets_400_and_never_reaches_the_stand_in(case, via, tls_proxy, tls_stub, stub, start_proxy):
    target_stub = tls_stub if via == "tunnel" else stub
    p = tls_proxy("--json") if via == "tunnel" else start_proxy(stub.url, "--json")
    port = port_of(target_stub.url)

    def send(raw: str) -> bytes:
        if via == "tunnel":
            s = tunnel_socket(p, port)
            target, host = "", f"localhost:{port}"
        else:
            s = socket.create_connection(("127.0.0.1", p.port), timeout=10)
            target, host = f"http://127.0.0.1:{port}", f"127.0.0.1:{port}"
        with s:
            s.sendall(raw.replace("TARGET", target).replace("HOST", host).encode())
            return read_all(s)

    probe = f"{case}-{secrets.token_hex(4)}"
    head = "POST TARGET/api/v1/spend_cheer?user_id=qa-alice&probe=PROBE HTTP/1.1\r\nHost: HOST\r\nAuthorization: Bearer dev-token\r\nContent-Type: application/json\r\n"
    answer = send(head.replace("PROBE", probe) + AMBIGUOUS[case])
    assert answer.startswith(b"HTTP/1.1 400 "), answer
    assert re.search(rb"\r\nX-Reiterate-Proxy: refused\r\n", answer, re.I), answer
    # A well-formed request after it does reach the stand-in's log; the refused one never did.
    control = send(head.replace("PROBE", "control-" + probe) + "Connection: close\r\nContent-Length: 48\r\n\r\n" + '{"product":"com.reiterate.pack.rain","amount":1}')
    assert control.startswith(b"HTTP/1.1 200 "), control
    log = target_stub.wait_for_log("probe=control-" + probe)
    assert f"probe={probe} " not in log and f"probe={probe}\n" not in log
    assert p.wait_for("error", status=400)


# ---------------------------------------------------------------------------------------------------
# What the tester keeps: a HAR mitmproxy reads, and no secret anywhere

def test_the_har_of_app_traffic_opens_in_mitmproxy(tls_proxy, tls_stub, tmp_path):
    har = tmp_path / "app.har"
    p = tls_proxy("--har", str(har))
    requests = [("GET", "/api/v1/balance?user_id=qa-alice", None), ("GET", "/api/v1/audio_packs", None),
                ("GET", "/api/v1/cheer_history?user_id=qa-alice&per_page=5", None),
                ("POST", "/api/v1/spend_cheer?user_id=qa-alice", {"product": "com.reiterate.pack.rain", "amount": 3})]
    for method, path, body in requests:
        assert app_request(p, tls_stub, method, path, body)[0] == 200
    assert p.stop() == 0
    base = f"https://localhost:{port_of(tls_stub.url)}"
    assert har_requests(har) == [f"{method} {base}{path} 200" for method, path, _ in requests]
    entries = json.loads(har.read_text())["log"]["entries"]
    assert len(entries) == 4 and all(e["_source"] == "app" for e in entries), [e.get("_source") for e in entries]
    assert oct(har.stat().st_mode & 0o777) == "0o600"


def test_no_token_reaches_the_har_the_log_or_the_lines(tls_proxy, tls_stub, tmp_path):
    planted = {name: f"planted-{name}-{secrets.token_hex(8)}" for name in ("bearer", "refresh", "cookie", "query")}
    har, log = tmp_path / "secret.har", tmp_path / "proxy.log"
    p = tls_proxy("--json", "--har", str(har), "--log-file", str(log))
    status, _, _ = app_request(p, tls_stub, "GET", "/api/v1/balance?user_id=qa-alice",
                               headers={"Authorization": f"Bearer {planted['bearer']}", "Cookie": f"session={planted['cookie']}; theme=dark"})
    assert status == 401
    status, _, _ = app_request(p, tls_stub, "POST", "/api/v1/auth/refresh", {"refresh_token": planted["refresh"]},
                               headers={"Cookie": f"session={planted['cookie']}"})
    assert status == 401
    status, _, body = app_request(p, tls_stub, "POST", "/api/v1/auth/refresh", {"refresh_token": "dev-refresh"})
    assert status == 200
    issued = json.loads(body)
    status, _, _ = app_request(p, tls_stub, "GET", f"/api/v1/balance?user_id=qa-alice&access_token={planted['query']}")
    assert status == 200
    p.wait_for("exchange", count=4)
    assert p.stop() == 0
    assert log.exists() and har.exists()
    secrets_ = [*planted.values(), issued["access_token"], issued["refresh_token"], "dev-refresh", "dev-token"]
    for name, text in (("HAR", har.read_text()), ("log", log.read_text()), ("stdout", p.out()), ("stderr", p.err())):
        leaked = [s for s in secrets_ if s in text]
        assert not leaked, f"{leaked} in the {name}"
    # What was kept, redacted: headers, the bodies both ways, the query; each exchange in the log.
    entries = json.loads(har.read_text())["log"]["entries"]
    assert len(entries) == 4 and {"name": "Authorization", "value": "<redacted>"} in entries[0]["request"]["headers"]
    assert {"name": "Cookie", "value": "<redacted>"} in entries[0]["request"]["headers"]
    assert json.loads(entries[1]["request"]["postData"]["text"]) == {"refresh_token": "<redacted>"}
    assert json.loads(entries[2]["response"]["content"]["text"])["access_token"] == "<redacted>"
    assert entries[3]["request"]["url"].endswith("access_token=<redacted>"), entries[3]["request"]["url"]
    assert log.read_text().count("POST /api/v1/auth/refresh ") == 2, log.read_text()


# ---------------------------------------------------------------------------------------------------
# Checks on both directions, each finding with its blame

def test_findings_blame_the_app_for_its_requests_and_the_server_for_its_answers(tls_proxy, tls_stub):
    p = tls_proxy("--json")
    status, _, _ = app_request(p, tls_stub, "GET", "/api/v1/balance?user_id=qa-alice")
    assert status == 200
    status, _, _ = app_request(p, tls_stub, "POST", "/api/v1/spend_cheer?user_id=qa-alice", {"product": "com.reiterate.pack.rain", "amount": "7"})
    assert status == 400
    status, _, _ = app_request(p, tls_stub, "POST", "/api/v1/purchase_cheer", {"identifier": "com.reiterate.cheer.50", "transaction_id": 9001})
    assert status == 404
    tls_stub.fault(kind="malformed_entry", path="/api/v1/cheer_history", count=1)
    status, _, _ = app_request(p, tls_stub, "GET", "/api/v1/cheer_history?user_id=qa-alice")
    assert status == 200
    exchanges = {l["path"].split("?")[0]: l for l in p.wait_for("exchange", count=4)}
    # Stopped, the proxy has written every line it had: what is not there did not happen.
    assert p.stop() == 0
    findings = [l for l in p.lines() if l["kind"] == "finding"]

    def of(path):
        return [f for f in findings if f["request_id"] == exchanges[path]["request_id"]]

    assert of("/api/v1/balance") == []
    spend = of("/api/v1/spend_cheer")
    assert any(f["check"] == "request-body" and f["blame"] == "app" and "amount" in f["expected"] for f in spend), spend
    version = of("/api/v1/purchase_cheer")
    assert any(f["check"] == "request-version" and f["blame"] == "app" and "/api/v2/purchase_cheer" in f["expected"] for f in version), version
    history = of("/api/v1/cheer_history")
    assert history and all(f["blame"] == "server" for f in history) and any(f["check"] == "schema" for f in history), history
    assert all(f["source"] == "app" and f["method"] and f["time"] for f in findings)
    # The one finding's words: the request, the check, whose fault, the request id.
    assert any(line.startswith("warning: POST ") and ": [request-body] " in line and "(the app's fault; request id" in line
               for line in p.err().splitlines()), p.err()
    assert "(the server's fault; request id" in p.err(), p.err()
    assert all(f["shop_finding"]["kind"] == f["check"] and f["shop_finding"]["blame"] == f["blame"] for f in findings), findings
