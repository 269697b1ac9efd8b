"""Issue 36, item 6 (and issue 37, item 4): one error path for every command. Each subcommand, against a
broken config and against a server that is down, prints one `error:` line (in words: no library's type
name) and exits with the status the docs give it: 78 for a setting that is wrong, 69 for no answer (2
for `compare` and `replay`, whose status says the comparison could not be made).

The subcommands are read from `reiterate-shop --help` (and each one's own help, down to nested ones
such as `proxy ca` and the values of `print <what>`), so a subcommand added later fails here until
this file says how to run it."""
import re
import subprocess

import pytest

from conftest import SHOP_BIN, free_port, shop_env

DOWN = "http://127.0.0.1:9"


def help_text(*path):
    r = subprocess.run([str(SHOP_BIN), *path, "--help"], capture_output=True, text=True, timeout=30,
                       env=shop_env(token=None))
    assert r.returncode == 0, (path, r.stderr)
    return r.stdout


def commands_in_help(path=()):
    """Every command a tester can type, from the help: `tui` (no subcommand), each subcommand, a
    nested one as `proxy ca` (and its parent alone when it has a default), and a subcommand whose
    first argument takes listed values once per value (`print balance`, …)."""
    text = help_text(*path)
    found = [] if path else ["tui"]
    section = re.search(r"^SUBCOMMANDS:\n(.*?)(?:\n\n|\Z)", text, re.S | re.M)
    if section:
        for m in re.finditer(r"^  (\S+)( \(default\))?", section.group(1), re.M):
            if m.group(2):
                found.append(" ".join(path))
            found += commands_in_help(path + (m.group(1),))
        return found
    arguments = re.search(r"^ARGUMENTS:\n(.*?)\n\n", text, re.S | re.M)
    values = re.search(r"\(values:\s+([^)]*)\)", " ".join(arguments.group(1).split())) if arguments else None
    if values:
        return found + [" ".join(path + (v.strip(),)) for v in values.group(1).split(",")]
    return found + [" ".join(path)]


HELP_COMMANDS = commands_in_help()

# How each command is run (a tester's usual invocation); `proxy --watch` is a second way of `proxy`.
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
    "explore": ["explore", "--yes", "--pace", "0"],
    "proxy": ["proxy", "--for", "1s", "--listen", "127.0.0.1:{port}"],
    "proxy run": ["proxy", "run", "--for", "1s", "--listen", "127.0.0.1:{port}"],
    "proxy --watch": ["proxy", "--watch", "--for", "1s", "--listen", "127.0.0.1:{port}"],
    "proxy ca": ["proxy", "ca"],
    "config check": ["config", "check"],
    "keys": ["keys"],
    "contract": ["contract"],
    "ledger": ["ledger", "--transaction", "1"],
    "session start": ["session", "start", "--name", "errors"],
    "session show": ["session", "show"],
    "session note": ["session", "note", "a note"],
    "session close": ["session", "close"],
    "session diff": ["session", "diff", "1.4.2", "1.4.3"],
    "session list": ["session", "list"],
}
VARIANTS = {"proxy --watch": "proxy"}

# Commands that read no config: the broken file is not theirs to report.
NO_CONFIG = {"contract": "prints the built-in contract document (`--contract FILE` for another)"}
# The session's own record is all they read (test_sessions.py): with none yet, one line and 64, or nothing and 0.
NO_CONFIG_SESSION = {"session show": 64, "session note": 64, "session diff": 64, "session list": 0}

# Commands that send nothing to the server (or, for the TUI, show it offline: test_tui.py).
NO_SERVER = {
    "tui": "shows the cached data and the server as offline (test_tui.py)",
    "config check": "checks the file and the environment; sends nothing",
    "keys": "prints the key bindings",
    "proxy ca": "writes the proxy's CA",
    "proxy": "waits for the app's requests; sends nothing of its own without --watch",
    "proxy run": "as `proxy`",
    "contract": "prints the built-in contract document",
    "ledger": "reads the App Store Server API, not the shop: with no [appstore] table it is a setting (78); an App Store that is down is test_ledger.py's",
    **{name: "reads and writes the test session's record only" for name in NO_CONFIG_SESSION},
    "session start": "opens the record; sends nothing",
    "session close": "writes the bundle; sends nothing",
}


def test_every_subcommand_in_the_help_is_run_here():
    assert len(HELP_COMMANDS) == len(set(HELP_COMMANDS)), HELP_COMMANDS
    assert {"print balance", "proxy ca", "config check", "pins"} <= set(HELP_COMMANDS), HELP_COMMANDS  # the help was read
    assert set(HELP_COMMANDS) == set(COMMANDS) - set(VARIANTS), (
        f"in the help but not run here: {sorted(set(HELP_COMMANDS) - set(COMMANDS))}; "
        f"run here but not in the help: {sorted(set(COMMANDS) - set(VARIANTS) - set(HELP_COMMANDS))}")
    assert set(VARIANTS.values()) <= set(HELP_COMMANDS) and set(NO_CONFIG) | set(NO_SERVER) | set(NO_CONFIG_SESSION) <= set(HELP_COMMANDS)


def run(args, tmp, config=None, timeout=30):
    extra = {"HOME": str(tmp), "XDG_STATE_HOME": str(tmp / "state"), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    if config is None:
        extra["XDG_CONFIG_HOME"] = str(tmp / "config")  # no config file: never the developer's
    env = shop_env(cache=tmp / "cache", config=config, env=extra)
    port = str(free_port())
    argv = [str(SHOP_BIN)] + [a.replace("{tmp}", str(tmp)).replace("{port}", port) for a in args]
    if not args:  # the TUI needs a terminal: script(1) gives it one
        argv = ["script", "-qec", " ".join(argv), "/dev/null"]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, stdin=subprocess.DEVNULL)
    # script(1) passes the program's output through the terminal (stderr on stdout, with CRs); -e gives
    # the program's status.
    return r.returncode, (r.stdout.replace("\r", "") if not args else r.stderr), r.stdout


def error_lines(err):
    return [line for line in err.splitlines() if line.startswith("error:")]


BROKEN = "[environments.staging\nbase_url = 3\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_broken_config_is_one_error_line_and_78(name, tmp_path):
    status, err, out = run(COMMANDS[name], tmp_path, config=BROKEN)
    if name in NO_CONFIG:
        assert status == 0 and out.startswith("{") and not error_lines(err), (name, status, err)
        return
    if name in NO_CONFIG_SESSION:
        lines = error_lines(err)
        assert status == NO_CONFIG_SESSION[name] and len(lines) == (1 if status else 0) and "config.toml" not in err, (name, status, err)
        assert [line for line in err.splitlines() if line.strip()] == lines, (name, err)
        return
    lines = error_lines(err)
    assert status == 78, (name, status, err)
    assert len(lines) == 1 and "config.toml:1:" in lines[0] and "table header" in lines[0], (name, err)
    assert [line for line in err.splitlines() if line.strip()] == lines, (name, err)  # the one line, nothing else
    assert "CLIError" not in err and "ExitStatus" not in err and "Error:" not in err, (name, err)


RECORDED_HAR = (
    '{"log":{"version":"1.2","creator":{"name":"t","version":"0"},"entries":[{"startedDateTime":"2026-11-27T10:00:00Z","time":1,'
    '"request":{"method":"GET","url":"' + DOWN + '/api/v1/balance?user_id=qa-alice","httpVersion":"HTTP/1.1","cookies":[],"headers":[],'
    '"queryString":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],'
    '"headers":[{"name":"Content-Type","value":"application/json"}],"content":{"size":16,"mimeType":"application/json","text":"{\\"balance\\":5}"},'
    '"redirectURL":"","headersSize":-1,"bodySize":16},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}]}}')


@pytest.mark.parametrize("name", sorted(n for n in COMMANDS if n not in NO_SERVER))
def test_a_server_that_is_down_is_one_error_line_and_its_status(name, tmp_path):
    (tmp_path / "recorded.har").write_text(RECORDED_HAR)
    status, err, out = run(COMMANDS[name] + ["--base-url", DOWN], tmp_path)
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
