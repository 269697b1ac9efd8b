"""Every failure a user can meet is one line of plain words: no library's type names, error numbers,
file paths or enum dumps, on stderr (`print`) or on screen (the TUI, in test_tui.py). The request id
is there whenever a response head came, even when its body never finished."""
import json
import re
import subprocess

import pytest

from test_cli import shop

# Words and shapes that belong to libraries, never to a user: type and module names, source files,
# C error numbers, Swift enum dumps such as `handshakeFailed(` or `sslError([`.
BANNED = re.compile(r"NIOSSL|BoringSSL|NIOCore|HTTPClientError|HTTPParserError|IOError|ChannelError|"
                    r"\.swift\b|\.cc:|\.hpp|errno|\bError\b\(|\b[a-z]+[A-Z][A-Za-z]*\(|\[Error:|OPENSSL_internal")

# Every fault kind of the stand-in that changes a balance answer, with the exit status `print` gives,
# and whether a response head (and so a request id) reaches the client.
FAULTS = [
    ({"kind": "status", "status": 503, "message": "maintenance"}, 1, True),
    ({"kind": "status", "status": 404}, 1, True),
    ({"kind": "html", "status": 502}, 65, True),
    ({"kind": "rate_limit", "retry_after": 1}, 1, True),
    ({"kind": "truncate"}, 65, True),
    ({"kind": "content_type", "content_type": "text/html"}, 0, True),  # JSON labelled HTML still reads
    ({"kind": "latency", "ms": 50}, 0, True),
    ({"kind": "reset"}, 69, False),
    ({"kind": "hang", "seconds": 3}, 69, False),
    ({"kind": "stall", "seconds": 3}, 69, True),  # head and half the body, then nothing: the client times out
    ({"kind": "stall", "seconds": 1}, 69, True),  # … then the server resets: a body cut mid-stream
]


def check_line(stderr):
    lines = stderr.splitlines()
    assert len(lines) <= 2, stderr  # one error line (and at most a "warning: showing the cached balance")
    assert not BANNED.search(stderr), f"library words reached the user: {stderr!r}"


@pytest.mark.parametrize("fault,status,head", FAULTS, ids=lambda v: str(v) if not isinstance(v, dict) else v["kind"])
def test_every_fault_kind_is_plain_words_with_the_request_id(stub, fault, status, head):
    stub.fault(**fault, path="/api/v1/balance", count=5)
    r = shop("print", "balance", "--base-url", stub.url, "--timeout", "2")
    assert r.returncode == status, r.stderr
    check_line(r.stderr)
    if status != 0:
        assert r.stderr.startswith("error: GET /api/v1/balance: "), r.stderr
        if head:
            assert "(request id rq-" in r.stderr, r.stderr


def test_a_body_cut_mid_stream_says_so_and_keeps_the_request_id(stub):
    stub.fault(kind="stall", seconds=1, path="/api/v1/balance", count=5)
    r = shop("print", "balance", "--base-url", stub.url, "--timeout", "5")
    assert r.returncode == 69
    assert re.fullmatch(r"error: GET /api/v1/balance: the connection closed before the answer was complete "
                        r"\(request id rq-[0-9a-f]+\)\n", r.stderr), r.stderr


@pytest.fixture
def tls_server(certificates, start_stub):
    """The stand-in itself over HTTPS (`--tls-cert`/`--tls-key`), with the named certificate."""
    def start(name):
        s = start_stub("--quiet", "--tls-cert", str(certificates / f"{name}.pem"), "--tls-key", str(certificates / f"{name}.key"))
        assert s.url.startswith("https://127.0.0.1:"), s.url
        return s.url

    return start


def with_ca(tmp_path, certificates, url):
    """Environment variables for a config whose `tls` environment trusts the test CA."""
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'[environments.tls]\nbase_url = "{url}"\nca_file = "{certificates / "ca.pem"}"\n')
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


def test_an_untrusted_certificate_says_to_set_ca_file(tls_server):
    url = tls_server("right")
    r = shop("print", "balance", "--base-url", url, "--timeout", "3")
    assert r.returncode == 69
    assert r.stderr == ("error: GET /api/v1/balance: TLS error: the server's certificate is not trusted "
                        "(set ca_file for this environment)\n")
    check_line(r.stderr)


def test_a_trusted_ca_through_ca_file_works(tls_server, certificates, tmp_path):
    url = tls_server("right")
    r = shop("print", "balance", "--env", "tls", "--timeout", "3", env=with_ca(tmp_path, certificates, url))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1,250 cheer  (qa-alice)\n"


def test_a_certificate_for_another_host_name(tls_server, certificates, tmp_path):
    url = tls_server("wrong")
    r = shop("print", "balance", "--env", "tls", "--timeout", "3", env=with_ca(tmp_path, certificates, url))
    assert r.returncode == 69
    assert r.stderr == "error: GET /api/v1/balance: TLS error: the server's certificate is for another host name\n"


def test_an_expired_certificate_says_so(tls_server, certificates, tmp_path):
    url = tls_server("expired")
    r = shop("print", "balance", "--env", "tls", "--timeout", "3", env=with_ca(tmp_path, certificates, url))
    assert r.returncode == 69
    # BoringSSL says only "verify failed": the client reads the certificate's dates (a handshake, no request).
    assert r.stderr == "error: GET /api/v1/balance: TLS error: the server's certificate has expired or is not valid yet\n"
    check_line(r.stderr)


def test_make_certs_gives_a_ca_the_stand_in_and_curl_agree_on(tls_server, certificates):
    url = tls_server("right")
    r = subprocess.run(["curl", "-sS", "--cacert", str(certificates / "ca.pem"), "-H", "Authorization: Bearer dev-token",
                        url + "/api/v1/balance?user_id=qa-alice"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and json.loads(r.stdout) == {"balance": 1250}, r.stderr


def test_an_expired_certificate_under_an_untrusted_ca_says_expired_too(tls_server):
    r = shop("print", "balance", "--base-url", tls_server("expired"), "--timeout", "3")
    assert r.returncode == 69
    assert r.stderr == "error: GET /api/v1/balance: TLS error: the server's certificate has expired or is not valid yet\n"
