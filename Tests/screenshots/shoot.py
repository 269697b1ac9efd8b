#!/usr/bin/env python3
"""`make screenshots`: the real reiterate-shop in tmux against the real stand-in, captured with colours
(`capture-pane -e`) and rendered to PNG with Pillow — no hand-made images.

Usage: python3 Tests/screenshots/shoot.py OUT_DIR   (SHOP_BIN / STUB_BIN override the binaries)
"""
import contextlib
import ctypes
import locale
import json
import os
import re
import select
import socket
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parents[2]
SHOP = os.environ.get("SHOP_BIN", str(ROOT / ".build/debug/reiterate-shop"))
STUB = os.environ.get("STUB_BIN", str(ROOT / ".build/debug/reiterate-stub"))
SOCKET = f"reiterate-shots-{os.getpid()}"
WIDTH, HEIGHT = 120, 32

locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
_libc = ctypes.CDLL("libc.so.6")
_libc.wcwidth.argtypes = [ctypes.c_wchar]

FONT_DIRS = ["/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/truetype/wqy", "/usr/share/fonts/truetype/ancient-scripts",
             "/usr/share/fonts/truetype/tlwg", "/usr/share/fonts/opentype/tlwg"]
FONT_FILES = ["DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", "wqy-microhei.ttc", "Symbola_hint.ttf", "Symbola.ttf", "TlwgMono.ttf", "TlwgMono.otf"]

PALETTE = {  # xterm-ish colours on a dark background
    0: (40, 42, 46), 1: (220, 80, 80), 2: (110, 200, 110), 3: (230, 190, 80), 4: (100, 150, 230),
    5: (190, 120, 220), 6: (90, 200, 210), 7: (200, 200, 200),
}
BG, FG = (24, 26, 30), (215, 218, 222)
LIGHT_BG, LIGHT_FG = (255, 255, 255), (30, 30, 30)


def xterm(n):
    """A 256-colour index as xterm draws it: the 16 basic ones from PALETTE (bright ones brighter),
    then the 6×6×6 cube and the grey ramp."""
    if n < 16:
        base = PALETTE[n % 8]
        return base if n < 8 else tuple(min(255, c + 40) for c in base)
    if n < 232:
        levels = [0, 95, 135, 175, 215, 255]
        n -= 16
        return (levels[n // 36], levels[n // 6 % 6], levels[n % 6])
    v = 8 + 10 * (n - 232)
    return (v, v, v)


def tmux(*args, check=True):
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=check, timeout=20)


_FONTS = {}


def fonts(size):
    if size in _FONTS:
        return _FONTS[size]
    found = {}
    for name in FONT_FILES:
        for d in FONT_DIRS:
            p = Path(d) / name
            if p.exists():
                found[name] = ImageFont.truetype(str(p), size)
                break
    regular = found.get("DejaVuSansMono.ttf")
    if regular is None:
        sys.exit("DejaVu Sans Mono is missing (apt-get install fonts-dejavu-core)")
    fallbacks = [found[n] for n in ("wqy-microhei.ttc", "Symbola_hint.ttf", "Symbola.ttf", "TlwgMono.ttf", "TlwgMono.otf") if n in found]
    _FONTS[size] = (regular, found.get("DejaVuSansMono-Bold.ttf", regular), fallbacks)
    return _FONTS[size]


_NOTDEF = {}


def has_glyph(font, ch):
    """Whether `font` draws `ch` itself (not its .notdef box)."""
    if ch.isspace():
        return True
    key = id(font)
    if key not in _NOTDEF:
        m = font.getmask("\U0010FFFD")
        _NOTDEF[key] = (m.size, bytes(m))
    try:
        m = font.getmask(ch)
    except Exception:
        return False
    return (m.size, bytes(m)) != _NOTDEF[key]


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def parse(ansi):
    """capture-pane -e text → rows of (char, fg, bg, bold, reverse)."""
    rows = []
    fg = bg = None
    bold = rev = dim = False
    for line in ansi.rstrip("\n").split("\n"):
        cells = []
        pos = 0
        for m in SGR.finditer(line + "\x1b[m"):
            for ch in line[pos:m.start()]:
                cells.append((ch, fg, bg, bold, rev, dim))
            pos = m.end()
            codes = [int(c) if c else 0 for c in m.group(1).split(";")] if m.group(1) else [0]
            i = 0
            while i < len(codes):
                c = codes[i]
                if c == 0: fg = bg = None; bold = rev = dim = False
                elif c == 1: bold = True
                elif c == 2: dim = True
                elif c == 7: rev = True
                elif c == 22: bold = dim = False
                elif c == 27: rev = False
                elif 30 <= c <= 37: fg = PALETTE[c - 30]
                elif c == 39: fg = None
                elif 40 <= c <= 47: bg = PALETTE[c - 40]
                elif c == 49: bg = None
                elif 90 <= c <= 97: fg = PALETTE[c - 90]
                elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                    color = xterm(codes[i + 2])
                    if c == 38: fg = color
                    else: bg = color
                    i += 2
                i += 1
        rows.append(cells)
    return rows


def render(ansi, out_path, title, light=False, width=WIDTH):
    """The captured screen as a PNG, `width` columns wide; `light` draws it on a white terminal (default colours dark text)."""
    bg_default, fg_default = (LIGHT_BG, LIGHT_FG) if light else (BG, FG)
    size = 16
    rows = parse(ansi)
    while rows and not any(c.strip() for c, *_ in rows[-1]):
        rows.pop()  # a command's output ends where it ends; the TUI fills its screen
    regular, bold_font, fallbacks = fonts(size)
    cw = int(regular.getlength("M"))
    ch = size + 6
    pad = 14
    bar = 30
    img = Image.new("RGB", (width * cw + 2 * pad, max(HEIGHT, len(rows)) * ch + 2 * pad + bar), bg_default)
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, img.width, bar], fill=(44, 47, 54))
    for i, color in enumerate([(237, 106, 94), (245, 191, 79), (98, 197, 84)]):
        d.ellipse([12 + i * 20, 10, 24 + i * 20, 22], fill=color)
    d.text((80, 7), title, font=regular, fill=(170, 175, 185))
    for y, cells in enumerate(rows):
        x = 0
        for char, fg, bg, bold, rev, dim in cells:
            w = max(0, _libc.wcwidth(char))
            if w == 0:
                # A combining mark: draw over the previous cell.
                if x > 0:
                    d.text((pad + (x - 1) * cw, bar + pad + y * ch), char, font=regular, fill=fg_default)
                continue
            fore, back = (fg or fg_default), bg
            if dim and fg is None: fore = (140, 145, 155)
            if rev: fore, back = (back or bg_default), (fg or fg_default)
            px, py = pad + x * cw, bar + pad + y * ch
            if back:
                d.rectangle([px, py, px + w * cw - 1, py + ch - 1], fill=back)
            font = bold_font if bold else regular
            if not has_glyph(font, char):
                font = next((f for f in fallbacks if has_glyph(f, char)), font)
            d.text((px, py + 2), char, font=font, fill=fore)
            x += w
    img.save(out_path, optimize=True)


class Scene:
    def __init__(self, url, cache_dir, name, user="qa-alice", command=None, extra="", args="", height=HEIGHT, width=WIDTH):
        self.name = name
        self.width = width
        state = shlex.quote(str(cache_dir.parent / "state"))
        env = f"REITERATE_TOKEN=dev-token TZ=UTC TERM=xterm-256color LANG=C.UTF-8 XDG_STATE_HOME={state} {extra}"
        cmd = command or f"env {env} {shlex.quote(SHOP)} --base-url {url} --user {user} --cache-dir {shlex.quote(str(cache_dir))} {args}"
        tmux("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), cmd)
        tmux("resize-window", "-t", name, "-x", str(width), "-y", str(height))

    def screen(self):
        """The pane's text; empty once the session has ended (the app quit)."""
        return tmux("capture-pane", "-p", "-t", self.name, check=False).stdout

    def wait(self, text, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.screen():
                return
            time.sleep(0.05)  # the gap between two looks (a poll)
        sys.exit(f"{self.name}: {text!r} never appeared\n" + self.screen())

    def still(self, quiet, limit=None):
        """Waits until the screen has not changed for `quiet` seconds: what the keys or the server set off
        has been drawn. A screen that keeps moving (an age ticking each second) ends the wait at `limit`
        (quiet + 3 s), and the shot shows it as it is then."""
        screen, since = self.screen(), time.monotonic()
        deadline = since + (limit if limit is not None else quiet + 3)
        while time.monotonic() - since < quiet and time.monotonic() < deadline:
            time.sleep(0.05)  # the gap between two looks (a poll)
            again = self.screen()
            if again != screen:
                screen, since = again, time.monotonic()

    def keys(self, *keys, settle=0.4):
        for k in keys:
            tmux("send-keys", "-t", self.name, k)
            time.sleep(0.05)  # a pace: keys typed one by one, as a tester types them
        self.still(settle)

    def spend(self, amount, comment):
        """`s` on the selected pack, the amount, the comment, Enter, then `y` to send it."""
        self.keys("s")
        self.keys(*amount, "Tab", *comment, settle=0.2)
        self.keys("Enter")
        self.keys("y", settle=1.0)

    def shoot(self, out_dir, file, title, light=False):
        ansi = tmux("capture-pane", "-e", "-p", "-N", "-t", self.name).stdout
        render(ansi, out_dir / file, title, light=light, width=self.width)
        print(f"wrote {out_dir / file}")

    def close(self):
        tmux("kill-session", "-t", self.name, check=False)


def post(url, path, body):
    """A POST to the stand-in's API as the phone makes it (or to its fault control)."""
    import urllib.request
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as r:
        return r.read()


def free_port():
    """A loopback port nothing listens on now (for the TUI's --proxy)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_stub(*args):
    proc = subprocess.Popen([STUB, "--port", "0", "--quiet", *args], stdout=subprocess.PIPE, text=True)
    if not select.select([proc.stdout], [], [], 30)[0]:
        sys.exit("reiterate-stub did not start")
    return proc, proc.stdout.readline().split()[-1]


@contextlib.contextmanager
def running_stub(*args):
    """A stand-in with `args` for the scenes inside the block; its URL."""
    proc, url = start_stub(*args)
    try:
        yield url
    finally:
        proc.terminate()


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "Screenshots")
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="shots-"))
    tmux("new-session", "-d", "-s", "keepalive", "sleep 600")
    stub, url = start_stub()
    try:
        s = Scene(url, work / "cache", "shop")
        s.wait("Balance 1,250 cheer")
        s.keys("j", "j")
        s.shoot(out, "shop.png", "reiterate-shop — Shop (qa-alice, local stand-in)")
        s.keys("2")
        s.wait("entry 1 of 230")
        s.keys("Enter")
        s.shoot(out, "history-comments.png", "reiterate-shop — History with comments")
        s.keys("3", "j")
        s.shoot(out, "requests.png", "reiterate-shop — Requests inspector")
        s.keys("?")
        s.shoot(out, "help.png", "reiterate-shop — Keys (?)")
        s.keys("Escape", "1", "s")
        s.keys(*"50", "Tab", *"Lovely", settle=0.2)
        s.keys("Enter")
        s.shoot(out, "spend-confirm.png", "reiterate-shop — Spend cheer: confirmation")
        s.keys("Escape", "q")
        s.close()
        # Switching users (u): the environment's users on Tab.
        config = work / "config" / "reiterate-shop"
        config.mkdir(parents=True)
        (config / "config.toml").write_text(f'default_environment = "staging-like"\n[environments.staging-like]\nbase_url = "{url}"\nusers = ["qa-alice", "qa-whale", "qa-bob"]\n')
        u = Scene(url, work / "cache-users", "users", extra=f"XDG_CONFIG_HOME={shlex.quote(str(work / 'config'))}")
        u.wait("Balance 1,250 cheer")
        u.keys("2", settle=0.6)
        u.keys("u", "Tab", settle=0.4)
        u.shoot(out, "users.png", "reiterate-shop — u: switch user (the environment's users on Tab, or any id)")
        u.keys("Escape", "q")
        u.close()
        # Offline: the stand-in goes away, `r` shows the cached balance marked with its age.
        o = Scene(url, work / "cache", "offline")
        o.wait("Balance 1,250 cheer")
        stub.terminate()
        stub.wait(5)
        o.keys("r", settle=1.5)
        o.wait("cached")
        o.shoot(out, "offline-cached.png", "reiterate-shop — offline: the cached balance")
        o.keys("q")
        o.close()
        # The Checks tab: a spend the stand-in debits one cheer too many for.
        shop2, shop2_url = start_stub("--fault", "wrong_debit,path=/api/v1/spend_cheer,count=1")
        try:
            c = Scene(shop2_url, work / "cache-checks", "checks")
            c.wait("Balance 1,250 cheer")
            c.wait("46 of 46 packs")
            c.spend("7", "for the screenshot")
            c.wait("spend-balance")
            c.keys("Enter", "4", "j", "k", settle=0.5)
            c.shoot(out, "checks.png", "reiterate-shop — Checks: every write verified (a wrong debit caught)")
            c.keys("q")
            c.close()
        finally:
            shop2.terminate()
        # Settled reads (issue 35): every read within 1 s of a write answers the state from before it. The
        # spend is judged on the reads that settle (✔), and the lag itself is one finding.
        lag, lag_url = start_stub("--fault", "stale_read,rate=1,ms=1000")
        try:
            g = Scene(lag_url, work / "cache-lag", "lag")
            g.wait("Balance 1,250 cheer")
            g.wait("46 of 46 packs")
            g.spend("7", "behind a lagging replica")
            g.wait("3 checks passed")
            g.keys("Enter", "4", "g", settle=0.5)
            g.wait("stale-read")
            g.shoot(out, "checks-stale-read.png", "reiterate-shop — Checks: a spend judged on settled reads; the lagging replica is one finding")
            g.keys("q")
            g.close()
        finally:
            lag.terminate()
        # The app's own traffic through the proxy (issue 29): the Requests tab marks each exchange FROM app
        # or tool; the app sends a spend with a bad body (a finding blamed on the app), and the stand-in
        # answers the app's history read with a malformed entry (a finding blamed on the server).
        app_stub, app_url = start_stub()
        try:
            proxy_port = free_port()
            a = Scene(app_url, work / "cache-app", "app", args=f"--proxy 127.0.0.1:{proxy_port}")
            a.wait("app proxy")
            a.wait("46 of 46 packs")
            app = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{proxy_port}"}))

            def app_send(method, path, body=None):
                data = json.dumps(body).encode() if body is not None else None
                request = urllib.request.Request(app_url + path, data=data, method=method,
                                                 headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"})
                try:
                    with app.open(request, timeout=5) as r:
                        r.read()
                except Exception:
                    pass

            app_send("GET", "/api/v1/balance?user_id=qa-alice")
            app_send("POST", "/api/v1/spend_cheer", {"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": 5, "comment": "from the phone"})
            post(app_url, "/_stub/faults", {"kind": "malformed_entry", "path": "/api/v1/cheer_history", "count": 1})
            app_send("GET", "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=20")
            app_send("POST", "/api/v1/spend_cheer", {"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": "3"})
            a.wait("The app's request failed")
            a.keys("3", settle=0.6)
            a.shoot(out, "requests-app.png", "reiterate-shop --proxy — Requests: the app's exchanges beside the tool's")
            a.keys("4", settle=0.6)
            a.shoot(out, "checks-app.png", "reiterate-shop --proxy — Checks: findings blamed on the app and on the server")
            a.keys("q")
            a.close()
        finally:
            app_stub.terminate()
        # A bug report: a spend the stand-in answers with a 500, R on the failure, then the file itself.
        broken, broken_url = start_stub("--fault", "status,status=500,path=/api/v1/spend_cheer,count=1")
        try:
            b = Scene(broken_url, work / "cache-report", "report")
            b.wait("Balance 1,250 cheer")
            b.wait("46 of 46 packs")
            b.keys("2", "]", settle=0.6)
            b.keys("1", "j")
            b.spend("25", "for the bug report")
            b.wait("HTTP 500")
            b.wait("1 check passed")  # the reads after the write have settled: the report holds its check
            b.keys("R", settle=0.6)
            b.wait("bug report written")
            b.shoot(out, "bug-report.png", "reiterate-shop — R: a bug report written for a failed spend")
            b.keys("Enter", "q")
            b.close()
            [report] = list((work / "state" / "reiterate-shop" / "reports").iterdir())
            v = Scene(broken_url, work / "cache-report", "report-file", command=f"env LANG=C.UTF-8 less -S {shlex.quote(str(report))}")
            v.wait("## Steps")
            v.shoot(out, "bug-report-file.png", "the bug report (Markdown): environment, steps, the failing exchange, curl")
            v.keys("q")
            v.close()
        finally:
            broken.terminate()
        # The Live tab: the phone cheers and buys (reconciled), then the stand-in debits with no entry (flagged).
        phone, phone_url = start_stub()
        try:
            lv = Scene(phone_url, work / "cache-live", "live", args="--watch")
            lv.wait("● watching 2 s")
            lv.wait("46 of 46 packs")
            lv.keys("5", settle=2.5)
            post(phone_url, "/api/v1/spend_cheer?user_id=qa-alice", {"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": 7, "comment": "great pack"})
            post(phone_url, "/api/v2/purchase_cheer?user_id=qa-alice", {"user_id": "qa-alice", "identifier": "com.reiterate.cheer.200", "transaction_id": 424242})
            lv.wait("a purchase of 200 cheer")
            lv.still(1.2, limit=6)
            post(phone_url, "/_stub/faults", {"kind": "no_entry", "path": "/api/v1/spend_cheer", "count": 1})
            post(phone_url, "/api/v1/spend_cheer?user_id=qa-alice", {"user_id": "qa-alice", "product": "com.reiterate.pack.rain", "amount": 3})
            lv.wait("[debit-without-entry]")
            lv.keys("j", settle=0.5)
            lv.shoot(out, "live.png", "reiterate-shop — Live (w): the app's changes reconciled, a debit with no entry flagged")
            lv.keys("q")
            lv.close()
        finally:
            phone.terminate()
        # Issue 30: the app's writes (phone.py through the TUI's proxy) paired with what the watch reads: a
        # spend, a cheer from another device, a double tap (the app's fault) and a purchase the stand-in
        # credits twice (the server's); the double tap's finding selected, its blame in the detail.
        paired, paired_url = start_stub()
        try:
            proxy_port = free_port()
            pw = Scene(paired_url, work / "cache-paired", "paired", args=f"--proxy 127.0.0.1:{proxy_port} --watch", width=180)
            pw.wait("● watching 2 s")
            pw.wait("46 of 46 packs")
            pw.keys("5", settle=2.5)

            def phone(mode, *args):
                subprocess.run([sys.executable, str(ROOT / "scripts" / "phone.py"), paired_url, "--proxy", f"127.0.0.1:{proxy_port}",
                                "--mode", mode, "--start-delay", "0", *args], capture_output=True, check=True, timeout=60)

            phone("spend", "--product", "com.reiterate.pack.rain", "--amount", "7", "--comment", "great pack")
            pw.wait("(app, rq-")
            post(paired_url, "/api/v1/spend_cheer?user_id=qa-alice", {"user_id": "qa-alice", "product": "com.reiterate.pack.cafe-flore", "amount": 5})
            pw.wait("(made elsewhere)")
            phone("double-tap", "--product", "com.reiterate.pack.tokyo-night", "--amount", "3", "--comment", "again")
            pw.wait("[double-submission]")
            pw.still(1.2, limit=6)
            post(paired_url, "/_stub/faults", {"kind": "double_credit", "path": "/api/v2/purchase_cheer", "count": 1})
            phone("purchase", "--bundle", "com.reiterate.cheer.100")
            pw.wait("[credit-mismatch]")
            pw.still(1.2, limit=6)
            rows = [r for r in tmux("capture-pane", "-p", "-t", "paired").stdout.split("\n") if re.match(r" \d\d:\d\d:\d\d ", r)]
            index = next(i for i, r in enumerate(rows) if "[double-submission]" in r)
            pw.keys("g", *["j"] * index, settle=0.5)
            pw.wait("blame: the app's fault")
            pw.shoot(out, "live-paired.png", "reiterate-shop --proxy --watch — Live: the app's writes paired with what the server recorded; one finding of each blame")
            pw.keys("q")
            pw.close()
        finally:
            paired.terminate()
        # Issue 38: the Purchases tab (6) with one verdict of each kind. The stand-in's App Store side
        # sells to the sandbox tester; "the app" posts through the TUI's proxy, the stand-in's faults
        # break each credit on purpose.
        store_dir = work / "appstore"
        shop_store, store_url = start_stub("--appstore-dir", str(store_dir), "--appstore-verify")
        try:
            facts = json.loads((store_dir / "appstore.json").read_text())

            def buy(product, quantity=1, customer="sandbox-1"):
                body = {"product_id": product, "quantity": quantity, "customer": customer, "user": "qa-alice"}
                return json.loads(post(store_url, "/_stub/appstore/purchases", body))["transaction_id"]

            def fault(kind, path="/api/v2/purchase_cheer"):
                post(store_url, "/_stub/faults", {"kind": kind, "path": path, "count": 1})

            home = work / "config-purchases"
            (home / "reiterate-shop").mkdir(parents=True)
            (home / "reiterate-shop" / "config.toml").write_text(f"""
[environments.sandbox]
base_url = "{store_url}"
user = "qa-alice"
tier = "staging"
read_only = false
[environments.sandbox.appstore]
url = "{store_url}"
key_file = "{facts['key_file']}"
key_id = "{facts['key_id']}"
issuer_id = "{facts['issuer_id']}"
bundle_id = "{facts['bundle_id']}"
root_ca = "{facts['root_ca']}"
""")
            proxy_port = free_port()
            state = shlex.quote(str(work / "state-purchases"))
            env = (f"REITERATE_TOKEN=dev-token TZ=UTC TERM=xterm-256color LANG=C.UTF-8 XDG_STATE_HOME={state} "
                   f"XDG_CONFIG_HOME={shlex.quote(str(home))}")
            command = (f"env {env} {shlex.quote(SHOP)} --env sandbox --cache-dir {shlex.quote(str(work / 'cache-purchases'))} "
                       f"--proxy 127.0.0.1:{proxy_port}")
            pu = Scene(store_url, work / "cache-purchases", "purchases", command=command, width=150, height=34)
            pu.wait("app proxy")
            pu.wait("Balance 1,250 cheer")
            # Bought once the session runs: its exchanges cover every purchase (the ledger's "never posted" rule).
            ids = {name: buy(product, quantity) for name, product, quantity in [
                ("credited", "com.reiterate.cheer.200", 1), ("forgotten", "com.reiterate.cheer.500", 1),
                ("quantity", "com.reiterate.cheer.100", 2), ("twice", "com.reiterate.cheer.50", 1),
                ("refunded", "com.reiterate.cheer.200", 1), ("failed", "com.reiterate.cheer.1000", 1)]}
            ids["other"] = buy("com.reiterate.cheer.100", customer="sandbox-2")
            app = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{proxy_port}"}))

            def app_send(method, path, body=None):
                data = json.dumps(body).encode() if body is not None else None
                request = urllib.request.Request(store_url + path, data=data, method=method,
                                                 headers={"Authorization": "Bearer dev-token", "Content-Type": "application/json"})
                try:
                    with app.open(request, timeout=5) as r:
                        r.read()
                except Exception:
                    pass  # a refusal is part of the scene

            def app_buys(name, product, transaction=None):
                app_send("GET", "/api/v1/balance?user_id=qa-alice")
                app_send("POST", "/api/v2/purchase_cheer?user_id=qa-alice",
                         {"identifier": product, "transaction_id": int(transaction or ids[name])})

            app_buys("credited", "com.reiterate.cheer.200")
            fault("ignore_quantity")
            app_buys("quantity", "com.reiterate.cheer.100")
            app_buys("twice", "com.reiterate.cheer.50")
            fault("replay_credit")
            app_buys("twice", "com.reiterate.cheer.50")
            app_buys("refunded", "com.reiterate.cheer.200")
            post(store_url, "/_stub/faults", {"kind": "keep_refunded", "path": "/api/v2/purchase_cheer"})
            post(store_url, "/_stub/appstore/refunds", {"transaction_id": ids["refunded"], "reason": 1})
            time.sleep(5.2)  # the ledger's grace period after the refund: a read before it judges nothing yet
            app_send("GET", "/api/v1/balance?user_id=qa-alice")
            fault("status")
            app_buys("failed", "com.reiterate.cheer.1000")
            fault("unverified_credit")
            app_buys("made-up", "com.reiterate.cheer.500", transaction="777000111")
            fault("any_account")
            app_buys("other", "com.reiterate.cheer.100")
            fault("wrong_bundle", path="/inApps/v1/transactions/*")
            time.sleep(5.2)  # the ledger's grace period after the last purchase: the exchanges must go on past it
            app_send("GET", "/api/v1/balance?user_id=qa-alice")
            pu.wait("18 app")
            pu.still(0.5)
            pu.keys("6")
            pu.wait("not verified", timeout=30)
            rows = [r for r in pu.screen().split("\n") if re.match(r" \d\d:\d\d:\d\d ", r)]
            index = next(i for i, r in enumerate(rows) if "credit mismatch" in r)
            pu.keys("g", *["j"] * index, settle=0.5)
            pu.still(1.0, limit=4)
            pu.shoot(out, "purchases.png", "reiterate-shop --proxy — Purchases (6): the App Store's record against the backend's credits; one verdict of each kind")
            pu.keys("q")
            pu.close()
        finally:
            shop_store.terminate()
        # The light theme: `auto` on a terminal whose background is white (tmux answers OSC 11 with the
        # pane's window-style), and its colour-blind-safe variant on the Checks tab.
        tmux("set-option", "-gw", "window-style", "bg=#ffffff,fg=#1e1e1e")
        lit, lit_url = start_stub("--fault", "wrong_debit,path=/api/v1/spend_cheer,count=1")
        try:
            li = Scene(lit_url, work / "cache-light", "light")
            li.wait("Balance 1,250 cheer")
            li.wait("46 of 46 packs")
            li.keys("2")
            li.wait("entry 1 of 230")
            li.keys("Enter")
            li.shoot(out, "light.png", "reiterate-shop — theme auto on a light terminal: History with comments", light=True)
            li.keys("q")
            li.close()
            lc = Scene(lit_url, work / "cache-light", "light-cb", args="--theme light-colorblind")
            lc.wait("46 of 46 packs")
            lc.spend("7", "light theme")
            lc.wait("spend-balance")
            lc.keys("Enter", "4", "j", "k", settle=0.5)
            lc.shoot(out, "light-colorblind.png", "reiterate-shop — --theme light-colorblind: Checks (✔ passed, ✗ failed)", light=True)
            lc.keys("q")
            lc.close()
        finally:
            lit.terminate()
            tmux("set-option", "-gwu", "window-style")
        # D: the Shop tab compared with another stand-in whose catalogue changed on purpose.
        one, one_url = start_stub()
        two, two_url = start_stub()
        try:
            packs = json.loads(urllib.request.urlopen(urllib.request.Request(f"{two_url}/api/v1/audio_packs", headers={"Authorization": "Bearer dev-token"})).read())["packs"]
            price = next(p for p in packs if p["identifier"] == "com.reiterate.pack.rain")["price_cents"]
            for method, path, body in (("PUT", "/_stub/packs/com.reiterate.pack.rain", {"price_cents": price + 50}),
                                       ("DELETE", f"/_stub/packs/{packs[-1]['identifier']}", None),
                                       ("PUT", "/_stub/packs/com.reiterate.pack.new", {"name": "Brand New Pack"})):
                req = urllib.request.Request(two_url + path, data=json.dumps(body).encode() if body else None, method=method,
                                             headers={"Content-Type": "application/json"})
                urllib.request.urlopen(req).read()
            cfg = work / "config-diff" / "reiterate-shop"
            cfg.mkdir(parents=True)
            (cfg / "config.toml").write_text(f'default_environment = "staging"\n[environments.staging]\nbase_url = "{one_url}"\n'
                                             f'[environments.next-build]\nbase_url = "{two_url}"\n')
            d = Scene(one_url, work / "cache-diff", "diff", extra=f"XDG_CONFIG_HOME={shlex.quote(str(work / 'config-diff'))}")
            d.wait("46 of 46 packs")
            d.keys("D", "Tab", settle=0.3)
            d.keys("Enter")
            d.wait("3 differences")
            d.keys("n", settle=0.4)
            d.shoot(out, "diff.png", "reiterate-shop — D: the Shop tab compared with another environment")
            d.keys("Escape", "q")
            d.close()
        finally:
            one.terminate()
            two.terminate()
        # Issue 27: a finding that recurs is one row (five refreshes of a page with an unreadable entry);
        # pages that disagree on the total (read again once, then told); `negative` against a lenient server.
        scenes = [
            ("grouped", ["malformed_entry,index=2,path=/api/v1/cheer_history"], ["2", "r", "r", "r", "r", "r", "4"], "×6",
             "checks-grouped.png", "reiterate-shop — Checks: a finding that recurs is one row (×6, first and last request id)"),
            ("drift", ["drifting_total,path=/api/v1/cheer_history"], ["2", "]", "G"], "History pages disagree",
             "history-pages-disagree.png", "reiterate-shop — History: pages that disagree, read again once, then told (no loop, nothing hidden)"),
        ]
        for name, faults, keys, shown, file, title in scenes:
            with running_stub(*[a for f in faults for a in ("--fault", f)]) as fault_url:
                sc = Scene(fault_url, work / f"cache-{name}", name)
                sc.wait("46 of 46 packs")
                for key in keys:
                    sc.keys(key, settle=0.7)
                sc.wait(shown)
                sc.shoot(out, file, title)
                sc.keys("q")
                sc.close()
        with running_stub("--fault", "accept_overspend") as lenient_url:
            env = f"REITERATE_TOKEN=dev-token TZ=UTC TERM=xterm-256color LANG=C.UTF-8 COLUMNS={WIDTH}"
            n = Scene(lenient_url, work / "cache-negative", "negative", height=44,
                      command=f"env {env} {shlex.quote(SHOP)} negative --base-url {lenient_url} --yes; echo \"exit status $?\"; sleep 600")
            n.wait("exit status", timeout=90)  # paced: at most 10 requests a second (about 20 s for the catalogue)
            n.shoot(out, "negative.png", "reiterate-shop negative --yes: writes the server must refuse (a server that takes an overspend)")
            n.close()
        # Issue 45: `explore` against a stand-in with a race and a server that escapes markup, from the CLI, and the
        # same campaign from the TUI (X, X), its findings on the Checks tab.
        with running_stub("--fault", "race_overspend", "--fault", "escape_markup") as racy_url:
            env = f"REITERATE_TOKEN=dev-token TZ=UTC TERM=xterm-256color LANG=C.UTF-8 COLUMNS={WIDTH} XDG_STATE_HOME={shlex.quote(str(work / 'state-explore'))}"
            x = Scene(racy_url, work / "cache-explore", "explore", height=44,
                      command=f"env {env} {shlex.quote(SHOP)} explore --base-url {racy_url} --yes --only concurrent,text,identity; echo \"exit status $?\"; sleep 600")
            x.wait("exit status", timeout=90)
            x.shoot(out, "explore.png", "reiterate-shop explore --yes: a race and escaped markup found, the race shrunk to its two writes")
            x.close()
        with running_stub("--fault", "race_overspend", "--fault", "escape_markup") as racy_url:
            t = Scene(racy_url, work / "cache-explore-tui", "explore-tui")
            t.wait("46 of 46 packs")
            t.keys("X", settle=0.4)
            t.keys("X")
            t.wait("Explore done", timeout=120)
            t.keys("4", settle=0.6)
            t.shoot(out, "checks-explore.png", "reiterate-shop — X: explore from the TUI, its findings on the Checks tab")
            t.keys("q")
            t.close()
        # Issue 46: a test session — opened from the CLI, a CLI buy, the TUI's own spend, `negative` against a server
        # that takes one overspend, a note — as the Session tab shows it (its own state folder).
        with running_stub("--fault", "accept_overspend,count=1") as session_url:
            folder = work / "session"
            env = dict(os.environ, REITERATE_TOKEN="dev-token", TZ="UTC", XDG_STATE_HOME=str(folder / "state"), XDG_CACHE_HOME=str(folder / "cli-cache"))

            def cli(*args):
                subprocess.run([SHOP, *args], env=env, capture_output=True, timeout=120)

            cli("session", "start", "--base-url", session_url, "--name", "refunds 1.4.3", "--build", "1.4.3 (42)", "--charter", "purchases after a refund")
            cli("buy", "--base-url", session_url, "--bundle", "com.reiterate.cheer.200", "--yes")
            se = Scene(session_url, folder / "cache", "session")
            se.wait("46 of 46 packs")
            se.spend("5", "Lovely")
            se.wait("checks passed", timeout=20)
            se.keys("Enter", settle=0.3)
            cli("negative", "--base-url", session_url, "--only", "overspend", "--yes", "--pace", "0")
            cli("session", "note", "the app showed the old balance until pulled to refresh")
            se.keys("7", settle=0.5)
            se.wait("the app showed the old balance", timeout=10)
            se.still(0.8)
            se.shoot(out, "session.png", "reiterate-shop — 7: the test session (every command's and the TUI's), as `session show` says it")
            se.keys("q")
            se.close()
        # The whole history of a 1,000,000-entry whale: the go-to prompt, then a find in progress.
        whale, whale_url = start_stub("--whale-history", "1000000")
        try:
            w = Scene(whale_url, work / "cache-whale", "whale", user="qa-whale")
            w.wait("Balance 1,000,000 cheer")
            w.keys("2")
            w.wait("entry 1 of 1,000,000")
            w.keys(":", *"2026-10-01", settle=0.3)
            w.shoot(out, "history-goto.png", "reiterate-shop — History: go to a date (:)")
            w.keys("Enter")
            w.wait("Went to 2026-10-01")
            w.keys("/", *"hutong", settle=0.2)
            w.keys("Enter", settle=1.0)
            w.wait("searching")
            w.shoot(out, "history-find.png", "reiterate-shop — History: a find in progress (/), matches highlighted")
            w.keys("Escape", "q")
            w.close()
        finally:
            whale.terminate()
    finally:
        if stub.poll() is None:
            stub.terminate()
        tmux("kill-server", check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
