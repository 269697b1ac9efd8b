#!/usr/bin/env python3
"""Benchmark: CPU the client burns while one request waits on a slow server.

Target (issue 3): under 5% of one core while waiting. Runs `reiterate-shop print balance` against the
stand-in with an injected 3 s latency, and again with none; the CPU difference over the wall-time
difference is the cost of waiting alone (start-up and decoding cancel out). The peer is `curl` on the
same URL, measured the same way in the same run. Exits 1 if over target.
Usage: BIN_DIR=.build/release python3 Tests/bench/cpu_while_waiting.py
(`make bench` runs this as one row of Tests/bench/bench.py.)
"""
import json
import os
import resource
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import APP_ENV, BIN, Stub, median  # noqa: E402

LATENCY_MS = int(os.environ.get("LATENCY_MS", "3000"))
RUNS = int(os.environ.get("RUNS", "5"))
TARGET_PERCENT = 5.0


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def inject_latency(url, ms):
    body = json.dumps({"kind": "latency", "ms": ms, "path": "/api/v1/balance", "count": 1}).encode()
    urllib.request.urlopen(urllib.request.Request(url + "/_stub/faults", data=body, method="POST"), timeout=5).read()


def timed(argv, check, env=None):
    """Wall time and CPU time (user + system) of one run of argv."""
    cpu0, t0 = child_cpu(), time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    wall, cpu = time.monotonic() - t0, child_cpu() - cpu0
    if r.returncode != 0 or not check(r.stdout):
        raise RuntimeError(f"{argv[0]} failed: {r.returncode} {r.stderr.strip()[:300]}")
    return wall, cpu


def app_balance(url):
    env = dict(os.environ, **APP_ENV)  # never the user's own cache or config
    return timed([str(BIN / "reiterate-shop"), "print", "balance", "--base-url", url, "--timeout", "30"],
                 lambda out: out.startswith("1,250 cheer"), env)


def curl_balance(url):
    return timed(["curl", "-s", "-f", "-H", "Authorization: Bearer dev-token",
                  url + "/api/v1/balance?user_id=qa-alice"], lambda out: '"balance"' in out)


def waiting_cost(url, run_once, runs=RUNS, latency_ms=LATENCY_MS):
    """Medians of `runs` runs without latency and with it; CPU while waiting in % of one core."""
    run_once(url)  # warm caches
    fast = [run_once(url) for _ in range(runs)]
    slow = []
    for _ in range(runs):
        inject_latency(url, latency_ms)
        slow.append(run_once(url))
    fast_wall, fast_cpu = median([w for w, _ in fast]), median([c for _, c in fast])
    slow_wall, slow_cpu = median([w for w, _ in slow]), median([c for _, c in slow])
    waiting = max(0.0, slow_cpu - fast_cpu) / max(1e-9, slow_wall - fast_wall) * 100
    return {"percent": waiting, "fast_wall": fast_wall, "fast_cpu": fast_cpu, "slow_wall": slow_wall,
            "slow_cpu": slow_cpu, "whole_percent": slow_cpu / slow_wall * 100, "runs": runs, "latency_ms": latency_ms}


def measure(runs=RUNS, latency_ms=LATENCY_MS):
    """The app and its peer (curl), against one stand-in."""
    with Stub() as stub:
        return {"app": waiting_cost(stub.url, app_balance, runs, latency_ms),
                "curl": waiting_cost(stub.url, curl_balance, runs, latency_ms)}


def main():
    result = measure()
    print(f"binaries: {BIN}; {RUNS} runs each, medians")
    for name, r in (("reiterate-shop print balance", result["app"]), ("curl (peer)", result["curl"])):
        print(f"{name}:")
        print(f"  no latency : wall {r['fast_wall'] * 1000:7.1f} ms, CPU {r['fast_cpu'] * 1000:6.1f} ms")
        print(f"  {LATENCY_MS} ms wait: wall {r['slow_wall'] * 1000:7.1f} ms, CPU {r['slow_cpu'] * 1000:6.1f} ms")
        print(f"  CPU while waiting: {r['percent']:.2f}% of one core; whole process during the slow call: "
              f"{r['whole_percent']:.2f}%")
    ok = result["app"]["percent"] < TARGET_PERCENT
    print(f"target < {TARGET_PERCENT}% for reiterate-shop: {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
