"""Issue 37, item 4: the real `reiterate-shop` SIGKILLed while it writes its cache, 200 times.

`print balance` against a stand-in whose balance changes before every run (a spend of 1 through its
API), one cache folder kept across all the runs, each run killed at another moment: half spread over
the whole run, half from the moment the cache folder starts to change (the write under way). After
each kill: every cache file parses as a whole cache entry (the write is a temporary file renamed over
the entry: ShopCache's AtomicFile), it holds the balance from before the run or this run's (never an
older one), and no file in the folder holds the token. A temporary file left by a kill mid-write is
allowed because the cache sweeps them (AtomicFile.removeLeftovers, at a process's first write, once
they are 10 min old): checked at the end. Then the next start, with the stand-in gone, prints the last
balance with its age.

The cache entry is 150 bytes, written in one write(2) in well under a millisecond: a kill would
almost never land inside it. A small LD_PRELOAD library (below, compiled here with the C compiler the
Swift toolchain brings) makes the disk slow for the cache folder only: each write(2) to a file under it
waits 1.5 ms and writes at most 16 bytes (a short write, which POSIX allows and the cache's loop
handles), so a write takes about 15 ms and the kills land inside it. Everything else is the binary as
shipped."""
import json
import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from conftest import SHOP_BIN, TOKEN, shop, shop_env, wait_until

RAIN = "com.reiterate.pack.rain"
KILLS = 200
TEMPORARY = (".reiterate-cache-", ".tmp")  # AtomicFile.temporaryPrefix, and the suffix it sweeps

SLOW_DISK = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* write(2) to a file under $SLOW_WRITES_UNDER: wait 1.5 ms, then write at most 16 bytes. */
ssize_t write(int fd, const void *buf, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *dir = getenv("SLOW_WRITES_UNDER");
    if (dir && *dir && count > 16) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        size_t len = strlen(dir);
        if (n > 0 && (target[n] = 0, strncmp(target, dir, len) == 0) && target[len] == '/') {
            usleep(1500);
            count = 16;
        }
    }
    return real(fd, buf, count);
}
"""


@pytest.fixture(scope="module")
def slow_disk(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
    assert compiler, "no C compiler (cc, clang or gcc) for the slow-disk library"
    d = tmp_path_factory.mktemp("slowdisk")
    (d / "slow.c").write_text(SLOW_DISK)
    r = subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(d / "slow.so"), str(d / "slow.c"), "-ldl"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d / "slow.so"


def folder_state(cache):
    """Each file's name, size and modification time: what changes when a write begins (a file renamed
    away between the listing and its stat shows as None)."""
    state = {}
    for entry in os.scandir(cache) if cache.exists() else ():
        try:
            st = entry.stat()
            state[entry.name] = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            state[entry.name] = None
    return state


def is_temporary(name):
    return name.startswith(TEMPORARY[0]) and name.endswith(TEMPORARY[1])


def check_folder(cache, url, allowed, what):
    """Every file whole or a sweepable temporary one, none with the token; the balance cached (or
    None), which must be one of `allowed`."""
    cached = None
    for entry in os.scandir(cache):
        try:
            data = open(entry.path, "rb").read()
        except FileNotFoundError:  # a temporary file renamed away by a run still going (the last one)
            continue
        assert TOKEN.encode() not in data and b"Bearer" not in data, f"{what}: a token in {entry.name}: {data!r}"
        if is_temporary(entry.name):
            continue
        assert entry.name.startswith("balance-qa-alice-") and entry.name.endswith(".json"), f"{what}: unexpected file {entry.name}"
        try:
            doc = json.loads(data)
        except ValueError:
            raise AssertionError(f"{what}: torn cache file {entry.name}: {data!r}") from None
        assert doc["format"] == 1 and doc["kind"] == "balance" and doc["key"] == {"base_url": url, "user": "qa-alice"}, (what, doc)
        assert isinstance(doc["fetched_at"], float) and isinstance(doc["value"]["balance"], int), (what, doc)
        cached = doc["value"]["balance"]
    assert cached in allowed, f"{what}: the cache holds {cached}, expected one of {allowed}"
    return cached


@pytest.mark.timeout(240)
def test_the_real_binary_killed_while_it_writes_its_cache_200_times(start_stub, slow_disk, tmp_path):
    s = start_stub("--quiet")
    cache = tmp_path / "cache"
    env = shop_env(env={"LD_PRELOAD": str(slow_disk), "SLOW_WRITES_UNDER": str(cache)})
    argv = [str(SHOP_BIN), "print", "balance", "--base-url", s.url, "--cache-dir", str(cache)]
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)

    def spend():
        r = s.post("/api/v1/spend_cheer?user_id=qa-alice", json={"user_id": "qa-alice", "product": RAIN, "amount": 1})
        assert r.status_code == 200, r.text
        return r.json()["balance"]

    def whole_run():
        """One run to its end: how long it took (the runs' length, measured again as the machine's load changes)."""
        t0 = time.monotonic()
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return time.monotonic() - t0, r

    balance = spend()
    length, first = whole_run()
    assert first.stdout == f"{balance:,} cheer  (qa-alice)\n", first.stdout
    cached = check_folder(cache, s.url, {balance}, "the first run")
    lengths = [length]

    kills = mid_write = attempts = 0
    missed = {"spread": 0, "from the write": 0}
    while kills < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, f"only {kills} of {attempts} runs were still running at their kill moment (seed {seed})"
        if attempts % 25 == 0:
            lengths = (lengths + [whole_run()[0]])[-5:]
            cached = check_folder(cache, s.url, {balance}, "a whole run")
        previous, balance = cached, spend()
        before = folder_state(cache)
        what = f"kill {kills + 1} (seed {seed})"
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        if kills % 2 == 0:
            # Spread over the run: stratified over [0, 0.9 × the runs' length] (measured from before the
            # fork, which Popen has done by now), so every moment gets its share.
            at = 0.9 * sorted(lengths)[len(lengths) // 2] * ((kills // 2 + rng.random()) / (KILLS // 2))
            time.sleep(max(0.0, at - (time.monotonic() - t0)))  # a deliberate delay: the kill's moment
        else:
            # From the moment the folder changes (the write has begun), 0–15 ms later (the write takes 15 ms).
            deadline = t0 + 30
            while folder_state(cache) == before and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.0005)  # the gap between two looks at the folder (a poll)
            time.sleep(rng.random() * 0.015)  # a deliberate delay: the kill's moment inside the write
        proc.send_signal(signal.SIGKILL)
        if proc.wait(10) != -signal.SIGKILL:  # it ended first: no kill, try again
            missed["spread" if kills % 2 == 0 else "from the write"] += 1
            assert proc.returncode == 0, f"{what}: exit status {proc.returncode}"
            cached = check_folder(cache, s.url, {balance}, what + " (ended before it: its write is whole)")
            continue
        kills += 1
        if any(is_temporary(name) for name in set(folder_state(cache)) - set(before)):
            mid_write += 1
        cached = check_folder(cache, s.url, {previous, balance}, what)
    print(f"{kills} kills in {attempts} runs ({missed} ended first), {mid_write} inside a cache write (seed {seed})")
    # The kills did land inside the write: a temporary file left behind is one cut short.
    assert mid_write >= KILLS // 10, f"only {mid_write} of {KILLS} kills landed inside a cache write (seed {seed})"

    # The last kill once the cache holds the last balance: the next start must show that one.
    balance = spend()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: check_folder(cache, s.url, {cached, balance}, "the last run"), lambda b: b == balance or proc.poll() is not None,
               timeout=30, what="the last run cached its balance")
    proc.kill()
    proc.wait(10)
    assert check_folder(cache, s.url, {balance}, "the last run") == balance
    s.stop()
    offline = shop("print", "balance", "--base-url", s.url, "--cache-dir", cache)
    assert offline.returncode == 75, offline.stdout + offline.stderr
    assert offline.stdout.startswith(f"{balance:,} cheer  (qa-alice) · cached "), offline.stdout
    assert offline.stdout.endswith(" · offline: connection refused\n"), offline.stdout
    assert balance == 1250 - 2 - attempts, (balance, attempts)  # the last of the spends: no older value

    # What kills left behind is swept: the next process's first write removes temporary files once
    # they are 10 min old (younger ones may be another process's write under way).
    leftovers = [e.path for e in os.scandir(cache) if is_temporary(e.name)]
    assert len(leftovers) >= mid_write, (leftovers, mid_write)
    old = time.time() - 11 * 60
    for path in leftovers:
        os.utime(path, (old, old))
    again = start_stub("--quiet")
    r = shop("print", "balance", "--base-url", again.url, "--cache-dir", cache)
    assert r.returncode == 0, r.stderr
    assert not [e.name for e in os.scandir(cache) if is_temporary(e.name)], os.listdir(cache)
