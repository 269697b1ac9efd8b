#!/usr/bin/env python3
"""`make run`'s sandbox purchases: a few App Store purchases on the stand-in (started with --appstore-dir
and --appstore-verify), some of them credited, and a config that points `reiterate-shop ledger` at it.

  python3 scripts/demo-purchases.py URL --appstore-dir DIR --config-home DIR --shop BIN

1. Writes CONFIG_HOME/reiterate-shop/config.toml with one environment, `demo`: the stand-in at URL as
   qa-alice, and its `[environments.demo.appstore]` table from DIR/appstore.json (url = the stand-in's,
   key_file, key_id, issuer_id, bundle_id, root_ca). The developer's own config is never touched: the
   ledger is pointed at this one by XDG_CONFIG_HOME.
2. Buys four consumables for qa-alice at the stand-in's App Store side (`POST /_stub/appstore/purchases`,
   as StoreKit's sandbox makes them): com.reiterate.cheer.200, com.reiterate.cheer.100 × 2,
   com.reiterate.cheer.500 and com.reiterate.cheer.50.
3. Credits three with the shop's `POST /api/v2/purchase_cheer` (`reiterate-shop buy --transaction-id TX
   --har FILE`: the backend's side the ledger reads), leaves com.reiterate.cheer.500 never posted, and
   refunds com.reiterate.cheer.50 (`POST /_stub/appstore/refunds`: the stand-in takes its cheer back),
   then reads the balance once more, so that the ledger sees the refund taken back.
4. Prints one line: the ledger command to try while the stand-in runs.

The HAR files go to CONFIG_HOME/har (emptied first: the stand-in's ids start again each run), the
tool's output to CONFIG_HOME/purchases.log. Standard library only; exit 1 with one line on a failure."""
import argparse
import json
import os
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

ENV = "demo"
USER = "qa-alice"
# (product, quantity, what happens to it): the ledger's verdicts, one of each that a correct shop gives.
PURCHASES = [("com.reiterate.cheer.200", 1, "post"), ("com.reiterate.cheer.100", 2, "post"),
             ("com.reiterate.cheer.500", 1, "forget"), ("com.reiterate.cheer.50", 1, "refund")]

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("url", help="the stand-in's base URL")
parser.add_argument("--appstore-dir", required=True, help="the stand-in's --appstore-dir (appstore.json, the key, root.pem)")
parser.add_argument("--config-home", required=True, help="the XDG_CONFIG_HOME to write reiterate-shop/config.toml into")
parser.add_argument("--shop", required=True, help="the reiterate-shop binary")
args = parser.parse_args()

url = args.url.rstrip("/")
home = Path(args.config_home).resolve()
hars = home / "har"
log = home / "purchases.log"


def control(path, body):
    """A control request to the stand-in (no proxy, no token): its JSON answer."""
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10) as response:
        return json.loads(response.read())


def toml_string(value):
    return json.dumps(str(value))  # a TOML basic string is a JSON string for these values


def write_config():
    facts = json.loads((Path(args.appstore_dir) / "appstore.json").read_text())
    lines = [f"# Written by `make run` for its stand-in at {url}; written again on every `make run`.",
             f"[environments.{ENV}]", f"base_url = {toml_string(url)}", 'tier = "local"', f"user = {toml_string(USER)}",
             f"[environments.{ENV}.appstore]", f"url = {toml_string(url)}"]
    lines += [f"{key} = {toml_string(facts[key])}" for key in ("key_file", "key_id", "issuer_id", "bundle_id", "root_ca")]
    folder = home / "reiterate-shop"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text("\n".join(lines) + "\n")


def shop(*command):
    """One run of reiterate-shop in the `demo` environment, its output appended to the log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REITERATE_")}
    env.update(XDG_CONFIG_HOME=str(home), REITERATE_TOKEN="dev-token")
    with open(log, "a") as out:
        out.write(f"$ reiterate-shop {shlex.join(command)}\n")
        out.flush()
        return subprocess.run([args.shop, *command, "--env", ENV, "--cache-dir", str(home / "cache")],
                              stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, timeout=60).returncode


def main():
    write_config()
    hars.mkdir(parents=True, exist_ok=True)
    for old in hars.glob("*.har"):
        old.unlink()
    log.write_text("")
    ids = []
    for n, (product, quantity, then) in enumerate(PURCHASES, 1):
        tx = control("/_stub/appstore/purchases", {"product_id": product, "quantity": quantity, "user": USER})["transaction_id"]
        ids.append(tx)
        if then != "forget":
            # Its verification may say ✗ for a quantity of 2 (buy expects the bundle as typed): the ledger judges it.
            shop("buy", "--bundle", product, "--transaction-id", tx, "--yes", "--har", str(hars / f"{n}-buy.har"))
        if then == "refund":
            control("/_stub/appstore/refunds", {"transaction_id": tx, "reason": 0})
            shop("print", "balance", "--har", str(hars / f"{n}-after-refund.har"))
    if not list(hars.glob("*.har")):
        raise RuntimeError(f"reiterate-shop wrote no HAR file (see {log})")
    # Absolute paths: the tool ignores a relative XDG_CONFIG_HOME, as the XDG spec says.
    print(f"make run: {len(ids)} sandbox purchases for {USER} (1 never posted, 1 refunded); try, while this runs: "
          f"XDG_CONFIG_HOME={home} {Path(args.shop).absolute()} ledger --env {ENV} --transaction {ids[0]} "
          f"--har {hars}/*.har", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # the stand-in not answering, no appstore.json, the binary missing
        print(f"make run: the sandbox purchases were not made: {error}", file=sys.stderr)
        sys.exit(1)
