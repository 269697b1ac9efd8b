#!/usr/bin/env python3
"""Benchmark: CPU the client burns while one request waits on a slow server.

Target (issue 3): under 5% of one core while waiting. Runs `reiterate-shop print balance` against the
stand-in with an injected 3 s latency, and again with none; the CPU difference over the wall-time
difference is the cost of waiting alone (start-up and decoding cancel out). Exits 1 if over target.
Usage: BIN_DIR=.build/release python3 Tests/bench/cpu_while_waiting.py
"""
import json
import os
import resource
import select
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

BIN = Path(os.environ.get("BIN_DIR", ".build/release"))
LATENCY_MS = int(os.environ.get("LATENCY_MS", "3000"))
RUNS = int(os.environ.get("RUNS", "5"))
TARGET_PERCENT = 5.0
CACHE_HOME = __import__("tempfile").mkdtemp(prefix="bench-cache-")


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(url, latency_ms):
    if latency_ms:
        body = json.dumps({"kind": "latency", "ms": latency_ms, "path": "/api/v1/balance", "count": 1}).encode()
        urllib.request.urlopen(urllib.request.Request(url + "/_stub/faults", data=body, method="POST"), timeout=5).read()
    env = dict(os.environ, REITERATE_TOKEN="dev-token", XDG_CACHE_HOME=CACHE_HOME)  # never the user's own cache
    cpu0, t0 = child_cpu(), time.monotonic()
    r = subprocess.run([str(BIN / "reiterate-shop"), "print", "balance", "--base-url", url, "--timeout", "30"],
                       capture_output=True, text=True, env=env, timeout=60)
    wall, cpu = time.monotonic() - t0, child_cpu() - cpu0
    if r.returncode != 0 or not r.stdout.startswith("1,250 cheer"):
        sys.exit(f"client failed: {r.returncode} {r.stderr.strip()}")
    return wall, cpu


def main():
    stub = subprocess.Popen([str(BIN / "reiterate-stub"), "--port", "0", "--quiet"], stdout=subprocess.PIPE, text=True)
    try:
        if not select.select([stub.stdout], [], [], 30)[0]:
            sys.exit("stand-in did not start")
        url = stub.stdout.readline().split()[-1]
        measure(url, 0)  # warm caches
        fast = [measure(url, 0) for _ in range(RUNS)]
        slow = [measure(url, LATENCY_MS) for _ in range(RUNS)]
    finally:
        stub.terminate()
        stub.wait(5)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    fast_wall, fast_cpu = med([w for w, _ in fast]), med([c for _, c in fast])
    slow_wall, slow_cpu = med([w for w, _ in slow]), med([c for _, c in slow])
    waiting = max(0.0, slow_cpu - fast_cpu) / max(1e-9, slow_wall - fast_wall) * 100
    print(f"binaries: {BIN}; {RUNS} runs each, medians")
    print(f"no latency : wall {fast_wall * 1000:7.1f} ms, CPU {fast_cpu * 1000:6.1f} ms")
    print(f"{LATENCY_MS} ms wait: wall {slow_wall * 1000:7.1f} ms, CPU {slow_cpu * 1000:6.1f} ms")
    print(f"CPU while waiting: {waiting:.2f}% of one core (target < {TARGET_PERCENT}%); "
          f"whole process during the slow call: {slow_cpu / slow_wall * 100:.2f}%")
    sys.exit(0 if waiting < TARGET_PERCENT else 1)


if __name__ == "__main__":
    main()
