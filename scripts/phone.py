#!/usr/bin/env python3
"""Plays the phone for `make demo-live`: spends cheer (now and then with a comment) and buys bundles
through the stand-in's API, as qa-alice, every few seconds; every tenth write the stand-in is asked to
break a rule (a debit with no entry, a spend recorded twice, a pack total that does not move), so the
Live tab shows findings too. Standard library only."""
import json
import random
import sys
import time
import urllib.request

url = sys.argv[1]
rng = random.Random()
packs = ["com.reiterate.pack.rain", "com.reiterate.pack.cafe-flore", "com.reiterate.pack.tokyo-night"]
comments = [None, "great pack", "for the walk home", "again!", "ありがとう"]
faults = [("no_entry", "/api/v1/spend_cheer"), ("double_entry", "/api/v1/spend_cheer"), ("stuck_total", "/api/v1/spend_cheer")]


def post(path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status
    except Exception:  # a 402 when the balance runs low, or the stand-in stopping: the phone goes on
        return None


time.sleep(4)  # the TUI's first rounds
for n in range(1, 10_000):
    if n % 10 == 0:
        kind, path = rng.choice(faults)
        post("/_stub/faults", {"kind": kind, "path": path, "count": 1})
    if rng.random() < 0.75:
        body = {"user_id": "qa-alice", "product": rng.choice(packs), "amount": rng.randrange(1, 25)}
        comment = rng.choice(comments)
        if comment:
            body["comment"] = comment
        post("/api/v1/spend_cheer?user_id=qa-alice", body)
    else:
        post("/api/v2/purchase_cheer?user_id=qa-alice", {"user_id": "qa-alice", "identifier": f"com.reiterate.cheer.{rng.choice([50, 100, 200])}",
                                                         "transaction_id": rng.randrange(1, 2**63)})
    time.sleep(rng.uniform(2, 6))
