"""Issue 36, item 6: one error path for every command. Each subcommand, against a broken config and against
a server that is down, prints one `error:` line (in words: no library's type name) and exits with the
status the docs give it: 78 for a setting that is wrong, 69 for no answer (2 for `compare` and `replay`,
whose status says the comparison could not be made)."""
import os
import subprocess
import tempfile

import pytest

from conftest import ROOT, free_port

SHOP_BIN = os.environ.get("SHOP_BIN", str(ROOT / ".build" / "debug" / "reiterate-shop"))
DOWN = "http://127.0.0.1:9"

# Every subcommand, as a tester types it (`contract` reads no config and no server: the built-in document).
COMMANDS = {
    "tui": [],
    "print balance": ["print", "balance"],
    "print packs": ["print", "packs"],
    "print history": ["print", "history"],
    "spend": ["spend", "--yes", "--product", "com.reiterate.pack.rain", "--amount", "1"],
    "buy": ["buy", "--yes", "--bundle", "com.reiterate.cheer.10"],
    "watch": ["watch", "--for", "1s"],
    "snapshot": ["snapshot", "--out", "{tmp}/s.json"],
    "compare": ["compare", "env:local", "user:qa-bob"],
    "replay": ["replay", "{tmp}/recorded.har"],
    "pins": ["pins", "--add", "balance"],
    "negative": ["negative", "--yes"],
    "proxy": ["proxy", "--for", "1s", "--listen", "127.0.0.1:{port}"],
    "proxy --watch": ["proxy", "--watch", "--for", "1s", "--listen", "127.0.0.1:{port}"],
    "proxy ca": ["proxy", "ca"],
    "config check": ["config", "check"],
    "keys": ["keys"],
}


def run(args, tmp, env_extra, timeout=30):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "XDG_STATE_HOME": str(tmp / "state"), "XDG_CACHE_HOME": str(tmp / "cache"),
           "XDG_CONFIG_HOME": str(tmp / "config"), "REITERATE_TOKEN": "dev-token", "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    env.update(env_extra)
    port = str(free_port())
    argv = [SHOP_BIN] + [a.replace("{tmp}", str(tmp)).replace("{port}", port) for a in args]
    if not args:  # the TUI needs a terminal: script(1) gives it one
        argv = ["script", "-qec", " ".join(argv), "/dev/null"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL)
    # script(1) passes the program's output through the terminal (stderr on stdout, with CRs); -e gives
    # the program's status.
    return r.returncode, (r.stdout.replace("\r", "") if not args else r.stderr), r.stdout


def error_lines(err):
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_broken_config_is_one_error_line_and_78(name, tmp_path):
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[environments.staging\nbase_url = 3\n")
    status, err, _ = run(COMMANDS[name], tmp_path, {})
    lines = error_lines(err)
    assert status == 78, (name, status, err)
    assert len(lines) == 1 and "config.toml:1:" in lines[0] and "table header" in lines[0], (name, err)
    assert "CLIError" not in err and "ExitStatus" not in err and "Error:" not in err, (name, err)


@pytest.mark.parametrize("name", sorted(n for n in COMMANDS if n not in ("tui", "config check", "keys", "proxy ca", "proxy")))
def test_a_server_that_is_down_is_one_error_line_and_its_status(name, tmp_path):
    (tmp_path / "recorded.har").write_text(
        '{"log":{"version":"1.2","creator":{"name":"t","version":"0"},"entries":[{"startedDateTime":"2026-11-27T10:00:00Z","time":1,'
        '"request":{"method":"GET","url":"' + DOWN + '/api/v1/balance?user_id=qa-alice","httpVersion":"HTTP/1.1","cookies":[],"headers":[],'
        '"queryString":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],'
        '"headers":[{"name":"Content-Type","value":"application/json"}],"content":{"size":16,"mimeType":"application/json","text":"{\\"balance\\":5}"},'
        '"redirectURL":"","headersSize":-1,"bodySize":16},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}]}}')
    status, err, out = run(COMMANDS[name] + ["--base-url", DOWN], tmp_path, {})
    expected = 2 if name in ("compare", "replay") else 69
    assert status == expected, (name, status, err)
    if name == "replay":
        # Its report is the result: each recorded read on one line, this one failed, in words.
        lines = [line for line in out.splitlines() if line.startswith("failed ")]
        assert err == "" and out.endswith("1 read: 0 matched, 0 changed, 1 failed\n"), out
    else:
        lines = error_lines(err)
    assert len(lines) == 1 and "connection refused by 127.0.0.1" in lines[0], (name, err, out)
    assert "Error:" not in err, (name, err)
