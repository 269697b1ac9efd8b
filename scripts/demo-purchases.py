#!/usr/bin/env python3
"""`make run`'s sandbox purchases: the app buying cheer in the App Store and posting it through the
TUI's proxy, for the Purchases tab (6) to judge. Standard library only. Three steps, in `make run`'s order:

  python3 scripts/demo-purchases.py port
  python3 scripts/demo-purchases.py config URL --appstore-dir DIR --config-home DIR --shop BIN --proxy HOST:PORT
  python3 scripts/demo-purchases.py post URL --proxy HOST:PORT [--wait SECONDS]

port    prints a free TCP port on 127.0.0.1: the TUI's app proxy (`--proxy 127.0.0.1:PORT`).
config  writes CONFIG_HOME/reiterate-shop/config.toml: the developer's own config file, as it is (if
        there is one: $XDG_CONFIG_HOME/reiterate-shop/config.toml when XDG_CONFIG_HOME is absolute,
        else ~/.config/reiterate-shop/config.toml), and after it one environment, `make-run`: the
        stand-in at URL as qa-alice (read_only false), and its `[environments.make-run.appstore]` table
        from DIR/appstore.json (url = the stand-in's, key_file, key_id, issuer_id, bundle_id, root_ca,
        and transaction = the first purchase's id: the stand-in counts from 2000000000000001 on every
        start). The developer's file is never written to: the TUI reads this one by XDG_CONFIG_HOME.
        A developer's file that already has an environment `make-run` is refused (exit 1, one line).
        Then prints one line: what `make run` does and where the purchases' log is.
post    plays the app (scripts/phone.py) once the proxy accepts connections (polled, at most --wait
        seconds, default 10): reads qa-alice's balance through the proxy, as the app does when it
        opens; buys four consumables at the stand-in's App Store side (directly, as StoreKit's traffic
        goes) and posts three of them to purchase_cheer through the proxy: com.reiterate.cheer.200,
        com.reiterate.cheer.100 × 2, com.reiterate.cheer.500 never posted (buy-forget: "not credited",
        the app's fault) and com.reiterate.cheer.50, which is then refunded (`POST
        /_stub/appstore/refunds`, directly) before the balance is read through the proxy once more, so
        that the refund's take-back is seen; and once more --settle seconds later (default 6), so
        that the session's exchanges go on past the purchases by more than the ledger's grace for a
        post still on its way (5 s) and the one never posted is judged. Its output (phone.py's JSON
        lines, then `post: done`) is meant for a log file: `make run` sends it to
        .build/demo-run/purchases.log.

Exit 1 with one line on a failure."""
import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ENV = "make-run"
USER = "qa-alice"
FIRST_TRANSACTION = "2000000000000001"
HERE = Path(__file__).resolve().parent
MARK = f"# ---- appended by `make run`: the environment `{ENV}` (its stand-in at {{url}}); written again on every `make run`."
# (product, quantity, what happens to it): the verdicts a correct shop gives, one of each.
PURCHASES = [("com.reiterate.cheer.200", 1, "post"), ("com.reiterate.cheer.100", 2, "post"),
             ("com.reiterate.cheer.500", 1, "forget"), ("com.reiterate.cheer.50", 1, "refund")]

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
steps = parser.add_subparsers(dest="step", required=True)
steps.add_parser("port", help="print a free port on 127.0.0.1")
config_step = steps.add_parser("config", help="write the config the TUI runs with")
config_step.add_argument("url", help="the stand-in's base URL")
config_step.add_argument("--appstore-dir", required=True, help="the stand-in's --appstore-dir (appstore.json, the key, root.pem)")
config_step.add_argument("--config-home", required=True, help="the XDG_CONFIG_HOME to write reiterate-shop/config.toml into")
config_step.add_argument("--shop", required=True, help="the reiterate-shop binary (for the printed line)")
config_step.add_argument("--proxy", required=True, help="HOST:PORT of the TUI's app proxy (for the printed line)")
post_step = steps.add_parser("post", help="the app's purchases, through the TUI's proxy")
post_step.add_argument("url", help="the stand-in's base URL")
post_step.add_argument("--proxy", required=True, help="HOST:PORT of the TUI's app proxy")
post_step.add_argument("--wait", type=float, default=10, help="seconds to wait for the proxy to accept connections (default 10)")
post_step.add_argument("--settle", type=float, default=6, help="seconds before the last balance read (default 6)")
args = parser.parse_args()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def toml_string(value):
    return json.dumps(str(value))  # a TOML basic string is a JSON string for these values


def own_config_path():
    """The developer's config file, as reiterate-shop finds it (a relative XDG_CONFIG_HOME is ignored)."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg.startswith("/") else Path(os.environ.get("HOME") or Path.home()) / ".config"
    return base / "reiterate-shop" / "config.toml"


def has_environment(text):
    """Whether the TOML text defines the environment ENV (parsed when Python has tomllib, else looked for)."""
    try:
        import tomllib
        return ENV in (tomllib.loads(text).get("environments") or {})
    except ImportError:
        pass
    except Exception:  # not valid TOML: the TUI will say where; look for the name in the text
        pass
    return any(ENV in line and ("environments" in line or line.lstrip().startswith(ENV)) for line in text.splitlines())


def write_config():
    url = args.url.rstrip("/")
    target = Path(args.config_home).resolve() / "reiterate-shop" / "config.toml"
    source = own_config_path()
    own = ""
    if source.is_file():
        own = source.read_text()
        if source.resolve() == target:
            # XDG_CONFIG_HOME is make run's own folder already (exported for `ledger`): its file is
            # the developer's part and a former make run's environment, which is written again.
            own = own.split(MARK.split("{url}")[0])[0].rstrip("\n")
        if has_environment(own):
            raise SystemExit(f"make run: your config {source} already has an environment `{ENV}`, the name make run gives its "
                             f"own; rename yours (make run writes {target}, never your file)")
    facts = json.loads((Path(args.appstore_dir) / "appstore.json").read_text())
    lines = [MARK.format(url=url), f"[environments.{ENV}]", f"base_url = {toml_string(url)}", 'tier = "local"',
             f"user = {toml_string(USER)}", "read_only = false", f"[environments.{ENV}.appstore]", f"url = {toml_string(url)}"]
    lines += [f"{key} = {toml_string(facts[key])}" for key in ("key_file", "key_id", "issuer_id", "bundle_id", "root_ca")]
    lines.append(f"transaction = {toml_string(FIRST_TRANSACTION)}  # the first purchase's id: the stand-in counts from it on every start")
    if own and not own.endswith("\n"):
        own += "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(own + ("\n" if own else "") + "\n".join(lines) + "\n")
    kept = f"your {source} and " if own else ""
    print(f"make run: {kept}the environment `{ENV}` in {target}; the app's 4 sandbox purchases for {USER} go through the "
          f"TUI's proxy {args.proxy} (1 never posted, 1 refunded; log: {target.parent.parent / 'purchases.log'}): press 6, "
          f"then r to read them again", flush=True)


def log(text):
    print(text, flush=True)


def wait_for_proxy():
    host, _, port = args.proxy.rpartition(":")
    deadline = time.monotonic() + args.wait
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                return
        except OSError as error:
            if time.monotonic() >= deadline:
                raise RuntimeError(f"the proxy {args.proxy} did not accept connections within {args.wait:g} s: {error}")
            time.sleep(0.1)


def balance():
    """The app's balance read, through the proxy."""
    url = args.url.rstrip("/") + "/api/v1/balance?user_id=" + urllib.parse.quote(USER)
    token = os.environ.get("PHONE_TOKEN") or os.environ.get("REITERATE_TOKEN") or "dev-token"
    proxies = {"http": f"http://{args.proxy}", "https": f"http://{args.proxy}"}
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.build_opener(urllib.request.ProxyHandler(proxies)).open(request, timeout=10) as response:
        log(f"balance: HTTP {response.status} {response.read().decode(errors='replace').strip()}")


def phone(mode, product, quantity):
    """One play of scripts/phone.py (the app, StoreKit's purchase included): the App Store's transaction id."""
    env = dict(os.environ)
    env.setdefault("PHONE_TOKEN", os.environ.get("REITERATE_TOKEN") or "dev-token")
    run = subprocess.run([sys.executable, str(HERE / "phone.py"), args.url, "--mode", mode, "--proxy", args.proxy,
                          "--bundle", product, "--quantity", str(quantity), "--user", USER],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    sys.stdout.write(run.stdout + run.stderr)
    sys.stdout.flush()
    for line in run.stdout.splitlines():
        record = json.loads(line)
        if record.get("op") == "appstore" and record.get("transaction_id"):
            return str(record["transaction_id"])
    raise RuntimeError(f"phone.py --mode {mode} --bundle {product} bought nothing (exit {run.returncode})")


def refund(transaction_id):
    """The App Store refunds it (a control request, directly: not the app's)."""
    request = urllib.request.Request(args.url.rstrip("/") + "/_stub/appstore/refunds", method="POST",
                                     data=json.dumps({"transaction_id": transaction_id, "reason": 0}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as response:
        log(f"refund {transaction_id}: HTTP {response.status}")


def post():
    wait_for_proxy()
    balance()
    ids = []
    for product, quantity, then in PURCHASES:
        ids.append(phone("buy-forget" if then == "forget" else "buy", product, quantity))
        if then == "refund":
            refund(ids[-1])
            balance()
    # The app reads the balance again a little later, as it does: the session's exchanges then go on past
    # the purchases by more than the ledger's grace (5 s) for a post still on its way, so that the one
    # never posted is judged "not credited" rather than "not seen".
    time.sleep(args.settle)
    balance()
    if ids[0] != FIRST_TRANSACTION:
        log(f"post: warning: the first purchase is {ids[0]}, not {FIRST_TRANSACTION} (the config's `transaction`)")
    log(f"post: done: {len(ids)} purchases ({', '.join(ids)})")


if __name__ == "__main__":
    try:
        if args.step == "port":
            print(free_port())
        elif args.step == "config":
            write_config()
        else:
            post()
    except SystemExit:
        raise
    except Exception as error:  # the stand-in or the proxy not answering, no appstore.json, phone.py failing
        print(f"make run: the sandbox purchases were not {'made' if args.step == 'post' else 'set up'}: {error}", file=sys.stderr)
        sys.exit(1)
