"""`reiterate-shop print` end to end: the real binary against the real stand-in on 127.0.0.1."""
import json
import os
import select
import subprocess
import time
import unicodedata

import pytest

from conftest import SHOP_BIN, shop, shop_env, warnings, wcswidth


def unsafe_characters(text: str):
    """Characters that must never reach a terminal raw: C0 (but newline), DEL, C1, and format characters."""
    return [hex(ord(c)) for c in text
            if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or unicodedata.category(c) == "Cf"]


def test_print_balance(stub):
    r = shop("print", "balance", "--base-url", stub.url, "--user", "qa-alice")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1,250 cheer  (qa-alice)\n" and r.stderr == ""


def test_environment_variables_and_json(stub):
    r = shop("print", "balance", "--json", env={"REITERATE_BASE_URL": stub.url, "REITERATE_USER": "qa-empty"})
    assert r.returncode == 0 and json.loads(r.stdout) == {"balance": 0, "source": "live"}
    # A flag beats the environment.
    r = shop("print", "balance", "--json", "--user", "qa-whale", env={"REITERATE_BASE_URL": stub.url, "REITERATE_USER": "qa-empty"})
    assert json.loads(r.stdout) == {"balance": 1000000, "source": "live"}


def test_tokens_are_never_taken_from_argv(stub):
    r = shop("print", "balance", "--base-url", stub.url, "--token", "dev-token", token=None)
    assert r.returncode == 64 and "--token" in r.stderr


def test_history_json_pages_through_the_whale(stub):
    seen = []
    for page in (1, 2, 3, 500):
        r = shop("print", "history", "--json", "--base-url", stub.url, "--user", "qa-whale", "--page", str(page), "--per-page", "200")
        assert r.returncode == 0, r.stderr
        body = json.loads(r.stdout)
        assert body["page"] == page and body["per_page"] == 200 and body["total_pages"] == 500 and body["total_count"] == 100000
        seen += [e["id"] for e in body["history"]]
        assert all(set(e) >= {"creator", "amount", "product", "date", "comments"} for e in body["history"])
    assert seen[:600] == [f"h-qa-whale-{i}" for i in range(600)]
    assert seen[-1] == "h-qa-whale-99999"


def test_history_text_table(stub):
    r = shop("print", "history", "--base-url", stub.url, "--per-page", "10")
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["DATE", "CREATOR", "PRODUCT", "AMOUNT", "COMMENTS"]
    assert len(lines) == 12 and lines[-1] == "page 1 of 23 · 230 cheers · qa-alice"


@pytest.mark.parametrize("fault,status,needle", [
    ({"kind": "html", "status": 502}, 65, "HTTP 502 Bad Gateway with a non-JSON body (text/html): 502 Bad Gateway (request id rq-"),
    ({"kind": "truncate"}, 65, "the response is not valid JSON (it ends early: cut short) (request id rq-"),
    ({"kind": "stall", "seconds": 5}, 69, "timed out waiting for the server"),
    ({"kind": "status", "status": 500, "message": "db down"}, 1, "HTTP 500 Internal Server Error: db down [injected_fault] (request id rq-"),
    ({"kind": "reset"}, 69, "the connection closed before an answer came"),
    ({"kind": "hang", "seconds": 5}, 69, "timed out waiting for the server"),
])
def test_each_error_class_is_one_line_and_non_zero(stub, fault, status, needle):
    stub.fault(**fault, path="/api/v1/balance")
    r = shop("print", "balance", "--base-url", stub.url, "--timeout", "1")
    assert r.returncode == status, r.stderr
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: GET /api/v1/balance: ") and needle in r.stderr


def test_refused_dns_config_and_auth_errors(stub):
    cases = [
        (shop("print", "balance", "--base-url", "http://127.0.0.1:1"), 69, "connection refused by 127.0.0.1"),
        (shop("print", "balance", "--base-url", "http://no-such-host.invalid:8080"), 69, "the host name no-such-host.invalid could not be found"),
        (shop("print", "balance", "--base-url", "ftp://x"), 78, "invalid base URL 'ftp://x'"),
        (shop("print", "balance", "--base-url", stub.url, token="not-a-token"), 1, "HTTP 401 Unauthorized: unknown access token"),
        (shop("print", "balance", "--base-url", stub.url, "--user", "ghost"), 1, "unknown user 'ghost' [unknown_user]"),
        (shop("print", "balance", "--base-url", stub.url, token="stale", env={"REITERATE_REFRESH_TOKEN": "wrong"}), 1,
         "sign-in expired: the refresh token was refused"),
    ]
    for r, status, needle in cases:
        assert r.returncode == status and needle in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert "set REITERATE_TOKEN" in cases[3][0].stderr
    # No token at all, or an empty one, is named before any request is sent (issue 35).
    before = stub.log().count("/api/v1/balance")
    for token in (None, "", "  "):
        r = shop("print", "balance", "--base-url", stub.url, token=token)
        state = "is not set" if token is None else "is empty"
        assert r.returncode == 78 and r.stderr == f"error: no access token: REITERATE_TOKEN {state}; set it to LOCAL's access token " \
            "(or set REITERATE_REFRESH_TOKEN to sign in with a refresh token); nothing was sent\n", r.stderr
    assert stub.log().count("/api/v1/balance") == before
    # A refresh token alone signs in: the refresh is the first request.
    r = shop("print", "balance", "--base-url", stub.url, token=None, env={"REITERATE_REFRESH_TOKEN": "dev-refresh"})
    assert r.returncode == 0, r.stderr


def test_bad_settings_exit_78_without_echoing_secrets(stub):
    r = shop("print", "balance", "--base-url", stub.url, token="SECRET\x1b[31mX")
    assert r.returncode == 78 and "REITERATE_TOKEN holds characters" in r.stderr and "SECRET" not in r.stderr
    r = shop("print", "balance", "--base-url", "http://127.0.0.1:99999")
    assert r.returncode == 78 and "port 1–65535" in r.stderr
    r = shop("print", "balance", "--base-url", stub.url, "--log-file", "/nonexistent-dir/x.log")
    assert r.returncode == 78 and r.stderr == "error: cannot open log file /nonexistent-dir/x.log: its directory does not exist\n"
    # A trailing newline (a token read from a file) is trimmed, not fatal.
    assert shop("print", "balance", "--base-url", stub.url, token="dev-token\n").returncode == 0


def test_an_outage_during_refresh_is_not_reported_as_sign_in_expired(stub):
    stub.fault(kind="html", status=502, path="/api/v1/auth/refresh", count=1)
    r = shop("print", "balance", "--base-url", stub.url, token="stale", env={"REITERATE_REFRESH_TOKEN": "dev-refresh"})
    assert r.returncode == 65 and r.stderr.startswith("error: POST /api/v1/auth/refresh: HTTP 502 Bad Gateway")
    assert r.stderr.count("request id") == 1


def test_refresh_from_the_environment(stub):
    r = shop("print", "balance", "--base-url", stub.url, token="stale", env={"REITERATE_REFRESH_TOKEN": "dev-refresh"})
    assert r.returncode == 0 and r.stdout.startswith("1,250 cheer")


def test_hostile_text_never_reaches_stdout_raw_and_columns_align(stub):
    stub.fault(kind="hostile", count=2)
    packs = shop("print", "packs", "--base-url", stub.url)
    history = shop("print", "history", "--base-url", stub.url, "--per-page", "30")
    for r in (packs, history):
        assert r.returncode == 0, r.stderr
        assert unsafe_characters(r.stdout) == []
    rows = packs.stdout.splitlines()[:-1]
    assert len(rows) == 47
    # The last column (identifier: ASCII, no spaces) starts at the same display column on every row,
    # measured by glibc wcswidth(3) — the widths ncurses and tmux use.
    starts = {wcswidth(line[: line.rfind("  ") + 2]) for line in rows}
    assert len(starts) == 1 and -1 not in starts, f"identifier column starts at {sorted(starts)}"
    assert all(wcswidth(line) > 0 for line in history.stdout.splitlines())


def test_hostile_json_is_valid_and_escaped(stub):
    stub.fault(kind="hostile", count=1)
    r = shop("print", "history", "--json", "--base-url", stub.url, "--per-page", "5")
    assert r.returncode == 0
    assert unsafe_characters(r.stdout) == []
    body = json.loads(r.stdout)
    assert any("\x1b" in (c["body"] or "") for e in body["history"] for c in e["comments"])  # intact once decoded


def test_unreadable_entry_is_marked_in_place(stub):
    stub.fault(kind="malformed_entry", index=2, count=1)
    r = shop("print", "history", "--base-url", stub.url, "--per-page", "5")
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[3] == "⚠ unreadable entry history[2] of page 1 (h-alice-228): creator: expected text"
    # One numbering: the warning about that entry names the same place (the JSON path, from 0).
    about_page = [w for w in warnings(r.stderr) if "page=1" in w]
    assert about_page and all("history[2]" in w for w in about_page if "history[" in w), r.stderr
    assert any("history[2]." in w for w in about_page), r.stderr


def test_log_file_has_requests_and_no_tokens(stub, tmp_path):
    log = tmp_path / "shop.log"
    r = shop("print", "balance", "--base-url", stub.url, "--log-file", str(log), token="stale",
             env={"REITERATE_REFRESH_TOKEN": "dev-refresh"})
    assert r.returncode == 0
    text = log.read_text()
    assert "GET /api/v1/balance?user_id=qa-alice 401" in text and "POST /api/v1/auth/refresh 200" in text
    for secret in ("stale", "dev-refresh", "Bearer", "at-", "rt-"):
        assert secret not in text
    assert oct(log.stat().st_mode & 0o777) == "0o600"


def test_offline_after_one_good_run_prints_the_cached_balance_and_exits_75(start_stub, tmp_path):
    s = start_stub("--quiet")
    cache = tmp_path / "cache"
    live = shop("print", "balance", "--base-url", s.url, "--cache-dir", str(cache))
    assert live.returncode == 0 and live.stdout == "1,250 cheer  (qa-alice)\n"
    assert json.loads(shop("print", "balance", "--json", "--base-url", s.url, "--cache-dir", str(cache)).stdout) == {"balance": 1250, "source": "live"}
    s.stop()
    offline = shop("print", "balance", "--base-url", s.url, "--cache-dir", str(cache), "--user", "qa-alice")
    assert offline.returncode == 75, offline.stderr
    assert offline.stdout.startswith("1,250 cheer  (qa-alice) · cached ") and offline.stdout.endswith(" · offline: connection refused\n")
    assert offline.stderr.startswith("warning: showing the cached balance: GET /api/v1/balance: connection refused")
    as_json = shop("print", "balance", "--json", "--base-url", s.url, "--cache-dir", str(cache))
    body = json.loads(as_json.stdout)
    assert as_json.returncode == 75 and body["source"] == "cache" and body["balance"] == 1250
    assert body["fetched_at"].endswith("Z") and body["reason"] == "offline: connection refused"
    # Another user has nothing cached: one error line, the network's exit status.
    other = shop("print", "balance", "--base-url", s.url, "--cache-dir", str(cache), "--user", "qa-empty")
    assert other.returncode == 69 and other.stderr.startswith("error: ")
    # The cache never holds a token; directory 0700, files 0600.
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    for f in cache.iterdir():
        assert oct(f.stat().st_mode & 0o777) == "0o600"
        assert "dev-token" not in f.read_text() and "Bearer" not in f.read_text()


def test_a_refusal_is_not_hidden_behind_the_cache(stub, tmp_path):
    cache = tmp_path / "cache"
    assert shop("print", "balance", "--base-url", stub.url, "--cache-dir", str(cache)).returncode == 0
    r = shop("print", "balance", "--base-url", stub.url, "--cache-dir", str(cache), token="not-a-token")
    assert r.returncode == 1 and "HTTP 401" in r.stderr and "set REITERATE_TOKEN" in r.stderr and r.stdout == ""


def test_a_garbage_cache_file_breaks_no_command(stub, tmp_path):
    cache = tmp_path / "cache"
    assert shop("print", "balance", "--base-url", stub.url, "--cache-dir", str(cache)).returncode == 0
    for f in cache.iterdir():
        f.write_bytes(b"\x00garbage{{{")
    for args in (["print", "balance"], ["print", "packs"], ["print", "history"], ["print", "balance", "--json"]):
        r = shop(*args, "--base-url", stub.url, "--cache-dir", str(cache))
        assert r.returncode == 0, (args, r.stderr)
    assert all(json.loads(f.read_text())["format"] == 1 for f in cache.iterdir())  # replaced by the good value
    stub.fault(kind="status", status=500, path="/api/v1/balance")
    r = shop("print", "balance", "--base-url", stub.url, "--cache-dir", str(cache))
    assert r.returncode == 75 and "server error: HTTP 500" in r.stdout  # and read back when the server fails


def write_config(tmp_path, text):
    (tmp_path / "xdg" / "reiterate-shop").mkdir(parents=True, exist_ok=True)
    (tmp_path / "xdg" / "reiterate-shop" / "config.toml").write_text(text)
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def test_a_named_environment_supplies_url_user_token_variable_and_ca_file(stub, tmp_path):
    env = write_config(tmp_path, f"""
[environments.staging]
base_url = "{stub.url}"
user = "qa-whale"
token_env = "STAGING_TOKEN"
timeout = 5
""")
    r = shop("print", "balance", "--env", "staging", token=None, env={**env, "STAGING_TOKEN": "dev-token"})
    assert r.returncode == 0 and r.stdout == "1,000,000 cheer  (qa-whale)\n", r.stderr
    # REITERATE_TOKEN is not this environment's variable: without STAGING_TOKEN nothing is sent, and it is named.
    r = shop("print", "balance", "--env", "staging", env=env)
    assert r.returncode == 78 and "no access token: STAGING_TOKEN is not set" in r.stderr
    # Flags beat the file.
    r = shop("print", "balance", "--env", "staging", "--user", "qa-empty", token=None, env={**env, "STAGING_TOKEN": "dev-token"})
    assert r.stdout.startswith("0 cheer  (qa-empty)")
    # The CA file is used: a missing one is a setting error.
    env_ca = write_config(tmp_path, f'[environments.staging]\nbase_url = "{stub.url}"\nca_file = "{tmp_path}/missing-ca.pem"\n')
    r = shop("print", "balance", "--env", "staging", env=env_ca)
    assert r.returncode == 78 and "missing-ca.pem is missing or unreadable" in r.stderr


def test_config_check_masks_tokens_and_reports_a_broken_file_with_its_line(tmp_path):
    env = write_config(tmp_path, '[environments.staging]\nbase_url = "https://staging.reiterate.invalid"\ntoken_env = "STAGING_TOKEN"\n')
    r = shop("config", "check", env={**env, "STAGING_TOKEN": "very-secret-token"})
    assert r.returncode == 0 and "[staging]" in r.stdout and "$STAGING_TOKEN: set (17 characters, hidden)" in r.stdout
    assert "very-secret-token" not in r.stdout + r.stderr
    broken = write_config(tmp_path, '[environments.staging]\nuser = "qa"\nbse_url = "https://x"\n')
    r = shop("config", "check", env=broken)
    path = tmp_path / "xdg" / "reiterate-shop" / "config.toml"
    assert r.returncode == 78 and r.stderr.startswith(f"error: {path}:3: bse_url: unknown key")
    assert shop("--help", env=broken).returncode == 0
    assert shop("print", "balance", env=broken).returncode == 78
    env = write_config(tmp_path, '[environments.staging]\nbase_url = "https://staging.reiterate.invalid"\n')
    r = shop("print", "balance", "--env", "nowhere", env=env)
    assert r.returncode == 78 and "no environment 'nowhere'; known: local, staging" in r.stderr


def read_bounded(stream, size, timeout=20.0):
    """The first `size` bytes of a pipe, waiting at most `timeout` seconds for them."""
    data, deadline = b"", time.monotonic() + timeout
    while len(data) < size:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"only {data!r} within {timeout} s"
        chunk = os.read(stream.fileno(), size - len(data))
        assert chunk, f"the output ended after {data!r}"
        data += chunk
    return data


def test_a_reader_that_goes_away_ends_print_quietly(stub):
    p = subprocess.Popen([str(SHOP_BIN), "print", "history", "--json", "--per-page", "200", "--user", "qa-whale", "--base-url", stub.url],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=shop_env())
    try:
        assert read_bounded(p.stdout, 10) == b'{\n  "histo'
        p.stdout.close()  # like `| head -c 10`
        _, stderr = p.communicate(timeout=20)
    finally:
        p.kill()
        p.wait(10)
    assert p.returncode == 141 and stderr == b"", stderr


# ---------------------------------------------------------------------------------------------------
# `print history --all` (issue 11): every page, streamed

def all_entries(stub, user="qa-alice"):
    """The user's whole history straight from the stand-in (pages of 200)."""
    out, page = [], 1
    while True:
        body = stub.get(f"/api/v1/cheer_history?user_id={user}&page={page}&per_page=200").json()
        out += body["history"]
        if page >= body["total_pages"]:
            return out
        page += 1


def test_print_history_all_as_a_table_and_as_json_lines(start_stub):
    s = start_stub("--quiet")
    expected = all_entries(s)
    r = shop("print", "history", "--all", "--base-url", s.url, env={"TZ": "UTC"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["DATE", "CREATOR", "PRODUCT", "AMOUNT", "COMMENTS"]
    assert len(lines) == len(expected) + 2 and lines[-1] == f"{len(expected)} cheers · qa-alice"
    assert [line[:16] for line in lines[1:-1]] == [e["date"][:10] + " " + e["date"][11:16] for e in expected]
    assert not [line for line in lines if unsafe_characters(line)]
    r = shop("print", "history", "--all", "--json", "--base-url", s.url)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["id"] for row in rows] == [e["id"] for e in expected] and len({row["id"] for row in rows}) == len(rows)


def test_print_history_since_stops_early_until_and_find_filter(start_stub):
    s = start_stub()  # logging its requests
    expected = all_entries(s)
    before = s.log().count("GET /api/v1/cheer_history")
    r = shop("print", "history", "--all", "--json", "--since", "2026-11-01", "--until", "2026-11-15", "--base-url", s.url, env={"TZ": "UTC"})
    assert r.returncode == 0, r.stderr
    got = [json.loads(line)["id"] for line in r.stdout.splitlines()]
    assert got and got == [e["id"] for e in expected if "2026-11-01" <= e["date"][:10] <= "2026-11-15"]
    # Newest first: the first page already reaches back before the 1st, so it was the only request.
    assert s.log().count("GET /api/v1/cheer_history") - before == 1
    r = shop("print", "history", "--all", "--find", "FERRYMAN", "--base-url", s.url)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "1 cheer · qa-alice", r.stdout
    r = shop("print", "history", "--since", "2026-11-01", "--base-url", s.url)
    assert r.returncode == 64 and "--since, --until and --find go with --all" in r.stderr
    r = shop("print", "history", "--all", "--until", "yesterday", "--base-url", s.url)
    assert r.returncode == 64 and "--until takes a day as YYYY-MM-DD" in r.stderr


def test_print_history_all_piped_into_head_stops_at_once(start_stub):
    s = start_stub("--quiet", "--whale-history", "1000000")
    cmd = f"{SHOP_BIN} print history --all --user qa-whale --base-url {s.url} | head -3; echo \"status=${{PIPESTATUS[0]}}\" >&2"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=shop_env(), timeout=20)
    assert len(r.stdout.splitlines()) == 3
    # The app ends quietly when head has gone (as `yes | head` does: SIGPIPE's status, no message).
    assert r.stderr.strip() == "status=141", r.stderr


def test_print_history_all_shows_progress_on_a_terminal_stderr(start_stub):
    import pty
    s = start_stub("--quiet")
    leader, follower = pty.openpty()
    p = subprocess.run([str(SHOP_BIN), "print", "history", "--all", "--base-url", s.url],
                       stdout=subprocess.PIPE, stderr=follower, env=shop_env(), timeout=30)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert p.returncode == 0
    text = seen.decode()
    assert "page 2 of 2 · 230 printed" in text and text.endswith("\r\x1b[K")
    # stdout (a pipe) has the rows only.
    assert b"printed" not in p.stdout


def test_the_ui_path_parses_alone_but_mistakes_and_help_read_as_before():
    """Bare `reiterate-shop [options]` is parsed by the UI's command alone (a faster first frame);
    what it refuses goes through the root parser, so the words and exit status are the same."""
    r = shop("--bogus")
    assert r.returncode == 64 and "Unknown option '--bogus'" in r.stderr and "Usage: reiterate-shop" in r.stderr, r.stderr
    r = shop("--timeout", "0")
    assert r.returncode == 64 and "--timeout must be in (0, 600] seconds" in r.stderr, r.stderr
    r = shop("--help")
    assert r.returncode == 0 and "SUBCOMMANDS:" in r.stdout and "print" in r.stdout, r.stdout
    r = shop("--version")
    assert r.returncode == 0 and r.stdout.startswith("reiterate-shop 0."), r.stdout
    r = shop("--theme", "light")  # parsed, then refused for want of a terminal (stdin is not one)
    assert r.returncode == 64 and "the interactive UI needs a terminal" in r.stderr, r.stderr
