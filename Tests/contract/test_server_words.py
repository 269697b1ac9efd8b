"""Issue 27, item 6: an error body that does not follow the contract's Error schema is flagged, and the
words the server did send are still shown, sanitized, on the error line (the stand-in only sends
`{"message", "code"}`, so these answers come from a small server on 127.0.0.1)."""
from test_checks import serve_once
from conftest import shop


def run(status, content_type, body, *args):
    server = serve_once(status, {"Content-Type": content_type, "X-Request-Id": "rq-words"}, body)
    try:
        return shop("print", "balance", "--base-url", f"http://127.0.0.1:{server.server_port}", "--user", "qa-nobody", "--timeout", "3", *args)
    finally:
        server.shutdown()


def test_an_error_key_instead_of_message_is_flagged_and_its_words_shown():
    r = run(404, "application/json", b"{\"error\": \"no user 'qa-nobody'\"}")
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert "error: GET /api/v1/balance: HTTP 404 Not Found: no user 'qa-nobody' (request id rq-words)" in lines, r.stderr
    assert any(line.startswith("warning: GET /api/v1/balance?user_id=qa-nobody: [schema] expected message (required), got missing") for line in lines), r.stderr


def test_a_text_body_says_its_start_and_hostile_text_is_cleaned():
    r = run(503, "text/plain; charset=utf-8", b"maintenance until 14:00 \x1b]52;c;ZXZpbA==\x07\x1b[2J\nthen retry")
    assert r.returncode == 65, r.stderr  # not JSON: a data error, as before
    assert "HTTP 503 Service Unavailable with a non-JSON body (text/plain; charset=utf-8): maintenance until 14:00" in r.stderr, r.stderr
    assert "then retry (request id rq-words)" in r.stderr, r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
