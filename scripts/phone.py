#!/usr/bin/env python3
"""Plays the phone for `make demo-live` and `make demo-app`: spends cheer (now and then with a comment)
and buys bundles through the shop's API, as qa-alice, every few seconds; every tenth write the stand-in
is asked to break a rule (a debit with no entry, a spend recorded twice, a pack total that does not
move), so the Live tab shows findings too.

With --proxy HOST:PORT it plays the app going through the app's proxy (`make demo-app`): its requests
go through the proxy, HTTPS checked against the proxy's CA (--proxy-ca); the stand-in's faults are
asked of the stand-in directly (--server-ca: its own CA). Every fifteenth write the app misbehaves
(a spend with the amount as a string, or a purchase on the old /api/v1 path), so the Checks tab shows
findings blamed on the app beside those blamed on the server. Standard library only."""
import argparse
import json
import os
import random
import ssl
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("url")
parser.add_argument("--proxy", help="HOST:PORT of the app's proxy")
parser.add_argument("--proxy-ca", help="the proxy's CA (PEM): what the app trusts")
parser.add_argument("--server-ca", help="the stand-in's own CA (PEM), for its fault requests")
args = parser.parse_args()

url = args.url.rstrip("/")
rng = random.Random()
packs = ["com.reiterate.pack.rain", "com.reiterate.pack.cafe-flore", "com.reiterate.pack.tokyo-night"]
comments = [None, "great pack", "for the walk home", "again!", "ありがとう"]
faults = [("no_entry", "/api/v1/spend_cheer"), ("double_entry", "/api/v1/spend_cheer"), ("stuck_total", "/api/v1/spend_cheer")]


def opener(proxy, cafile):
    handlers = [urllib.request.ProxyHandler({"http": f"http://{proxy}", "https": f"http://{proxy}"} if proxy else {})]
    if url.startswith("https:"):
        handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cafile)))
    return urllib.request.build_opener(*handlers)


def wait_for(path):
    for _ in range(200):
        if path is None or os.path.exists(path):
            return
        time.sleep(0.1)


time.sleep(4)  # the TUI's first rounds (and, with --proxy, its CA made)
wait_for(args.proxy_ca)
app = opener(args.proxy, args.proxy_ca if args.proxy else args.server_ca)
direct = opener(None, args.server_ca)


def post(via, path, body, raw=None):
    data = raw.encode() if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method="POST",
                                     headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"})
    try:
        with via.open(request, timeout=5) as r:
            return r.status
    except Exception:  # a 402 when the balance runs low, a refusal, or the stand-in stopping: the phone goes on
        return None


for n in range(1, 10_000):
    if n % 10 == 0:
        kind, path = rng.choice(faults)
        post(direct, "/_stub/faults", {"kind": kind, "path": path, "count": 1})
    if args.proxy and n % 15 == 0:
        # The app's own bug, for the proxy to blame on it.
        if rng.random() < 0.5:
            post(app, "/api/v1/spend_cheer?user_id=qa-alice", None,
                 raw=json.dumps({"user_id": "qa-alice", "product": rng.choice(packs), "amount": str(rng.randrange(1, 25))}))
        else:
            post(app, "/api/v1/purchase_cheer?user_id=qa-alice", {"user_id": "qa-alice", "identifier": "com.reiterate.cheer.50",
                                                                   "transaction_id": rng.randrange(1, 2**63)})
    elif rng.random() < 0.75:
        body = {"user_id": "qa-alice", "product": rng.choice(packs), "amount": rng.randrange(1, 25)}
        comment = rng.choice(comments)
        if comment:
            body["comment"] = comment
        post(app, "/api/v1/spend_cheer?user_id=qa-alice", body)
    else:
        post(app, "/api/v2/purchase_cheer?user_id=qa-alice", {"user_id": "qa-alice", "identifier": f"com.reiterate.cheer.{rng.choice([50, 100, 200])}",
                                                             "transaction_id": rng.randrange(1, 2**63)})
    time.sleep(rng.uniform(2, 6))
