"""Every failure a user can meet is one line of plain words: no library's type names, error numbers,
file paths or enum dumps, on stderr (`print`) or on screen (the TUI, in test_tui.py). The request id
is there whenever a response head came, even when its body never finished."""
import json
import re
import subprocess

import pytest

from conftest import shop

# Words and shapes that belong to libraries, never to a user: type and module names, source files,
# C error numbers, Swift enum dumps such as `handshakeFailed(` or `sslError([`.
BANNED = re.compile(r"NIOSSL|BoringSSL|NIOCore|HTTPClientError|HTTPParserError|IOError|ChannelError|"
                    r"\.swift\b|\.cc:|\.hpp|errno|\bError\b\(|\b[a-z]+[A-Z][A-Za-z]*\(|\[Error:|OPENSSL_internal")

BALANCE = "1,250 cheer  (qa-alice)\n"

# Every fault kind of the stand-in that changes a balance answer, with the exit status `print` gives,
# whether a response head (and so a request id) reaches the client, and the one line the user reads
# (None: no line at all, the balance shows as it is).
FAULTS = [
    ({"kind": "status", "status": 503, "message": "maintenance"}, 1, True,
     "error: GET /api/v1/balance: HTTP 503 Service Unavailable: maintenance [injected_fault]"),
    ({"kind": "status", "status": 404}, 1, True,
     "error: GET /api/v1/balance: HTTP 404 Not Found: injected fault: HTTP 404 [injected_fault]"),
    ({"kind": "html", "status": 502}, 65, True,
     "error: GET /api/v1/balance: HTTP 502 Bad Gateway with a non-JSON body (text/html): 502 Bad Gateway"),
    ({"kind": "rate_limit", "retry_after": 1}, 1, True,
     "error: GET /api/v1/balance: HTTP 429 Too Many Requests: too many requests; retry in 1 s [rate_limited] (retry after 1 s)"),
    ({"kind": "truncate"}, 65, True,
     "error: GET /api/v1/balance: the response is not valid JSON (it ends early: cut short)"),
    # JSON labelled HTML still reads: the balance, and the finding about its label.
    ({"kind": "content_type", "content_type": "text/html"}, 0, True,
     "warning: GET /api/v1/balance?user_id=qa-alice: [content-type] expected application/json (or +json), got “text/html”"),
    ({"kind": "latency", "ms": 50}, 0, True, None),
    ({"kind": "reset"}, 69, False, "error: GET /api/v1/balance: the connection closed before an answer came"),
    ({"kind": "hang", "seconds": 3}, 69, False, "error: GET /api/v1/balance: timed out waiting for the server"),
    # Head and half the body, then nothing: the client times out.
    ({"kind": "stall", "seconds": 3}, 69, True, "error: GET /api/v1/balance: timed out waiting for the server"),
    # … then the server resets: a body cut mid-stream.
    ({"kind": "stall", "seconds": 1}, 69, True,
     "error: GET /api/v1/balance: the connection closed before the answer was complete"),
]


def check_line(stderr, words, request_id=False):
    """stderr is the one line `words` (then the request id, when a head came): what must appear, and
    nothing a library would say."""
    assert not BANNED.search(stderr), f"library words reached the user: {stderr!r}"
    pattern = re.escape(words) + (r" \(request id rq-[0-9a-f]+\)" if request_id else "") + r"\n"
    assert re.fullmatch(pattern, stderr), f"expected the one line {words!r}, got {stderr!r}"


def test_check_line_fails_without_its_line():
    """The check can fail: an empty stderr, another line, a second line, or library words do not pass."""
    words = FAULTS[0][3]
    check_line(words + " (request id rq-0123abcd)\n", words, request_id=True)
    for wrong in ("", "\n", words + "\n", "error: GET /api/v1/balance: HTTP 500\n",
                  words + " (request id rq-0123abcd)\nerror: again\n", words + " NIOSSLError( (request id rq-0123abcd)\n"):
        with pytest.raises(AssertionError):
            check_line(wrong, words, request_id=True)


@pytest.mark.parametrize("fault,status,head,line", FAULTS, ids=["-".join(map(str, f[0].values())) for f in FAULTS])
def test_every_fault_kind_is_plain_words_with_the_request_id(stub, fault, status, head, line):
    stub.fault(**fault, path="/api/v1/balance", count=5)
    r = shop("print", "balance", "--base-url", stub.url, "--timeout", "2")
    assert r.returncode == status, r.stderr
    assert r.stdout == ("" if status else BALANCE), r.stdout
    if line is None:
        assert r.stderr == "", r.stderr
    else:
        check_line(r.stderr, line, request_id=head)


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
    check_line(r.stderr, "error: GET /api/v1/balance: TLS error: the server's certificate is not trusted "
                         "(set ca_file for this environment)")


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
    check_line(r.stderr, "error: GET /api/v1/balance: TLS error: the server's certificate has expired or is not valid yet")


def test_make_certs_gives_a_ca_the_stand_in_and_curl_agree_on(tls_server, certificates):
    url = tls_server("right")
    r = subprocess.run(["curl", "-sS", "--cacert", str(certificates / "ca.pem"), "-H", "Authorization: Bearer dev-token",
                        url + "/api/v1/balance?user_id=qa-alice"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and json.loads(r.stdout) == {"balance": 1250}, r.stderr


def test_an_expired_certificate_under_an_untrusted_ca_says_expired_too(tls_server):
    r = shop("print", "balance", "--base-url", tls_server("expired"), "--timeout", "3")
    assert r.returncode == 69
    assert r.stderr == "error: GET /api/v1/balance: TLS error: the server's certificate has expired or is not valid yet\n"
