#!/usr/bin/env python3
"""Plays the phone: the shop's app writing as a user (spends and purchases), directly or through the
app's proxy (--proxy HOST:PORT, HTTPS checked against the proxy's CA with --proxy-ca; the stand-in's
own CA is --server-ca). Standard library only.

Modes (--mode):
  demo             (the default; `make demo-live`, `make demo-app`) random spends and purchases every
                   few seconds; every tenth write the stand-in is asked (directly) to break a rule (a
                   debit with no entry, a spend recorded twice, a pack total that does not move), and
                   with --proxy every fifteenth write the app misbehaves (an amount as a string, or a
                   purchase on the old /api/v1 path). Quiet unless --print: it runs beside the TUI.
  clean            random spends (with and without a comment) and purchases of bundles 50/100/200,
                   each with a fresh transaction id: no faults, no misbehaviour.
  double-tap       one spend sent twice: with --overlap the second while the first is still out
                   (two threads), else 0.3 s after the first's answer.
  lost-retry-same  one purchase; if no answer came (the connection refused, closed or reset without
  lost-retry-new   an answer, or timed out: what the proxy's lose_answer does), wait --retry-after
  lost-give-up     and retry it with the same transaction id, with a new one, or give up.
  spend            one spend (--product, --amount, --comment).
  purchase         one purchase (--bundle, --transaction-id).
  buy              a real App Store purchase, then its post: bought first at the stand-in's App Store
                   side (`POST /_stub/appstore/purchases`, sent directly: StoreKit's traffic to Apple
                   never goes through the proxy) as StoreKit's sandbox makes one (--bundle,
                   --quantity, --customer), then posted to purchase_cheer (through --proxy when given)
                   with the App Store's transaction id. For a stand-in run with --appstore-verify.
  buy-forget       bought the same way, then never posted: the app finished the transaction before
                   posting it (the App Store has it; the backend never hears of it; the ledger's
                   "not credited", the app's fault).

--appstore: demo and clean buy each of their purchases at the App Store first, as `buy` does
(`make demo-live`: the stand-in of `make run` verifies every purchase, and refuses made-up ids).

Each request attempt is one JSON line on stdout: at, mode, op ("spend" or "purchase"), attempt (1 or
2), status (null: no answer), error (short text or null), product/amount/comment or
identifier/transaction_id, balance (from the answer, or null) and request_id (X-Request-Id, or null);
in the lost modes also then ("retry-same", "retry-new", "give-up", or null when it was answered).
A purchase at the App Store is a line of its own before it: op "appstore", status (201), identifier,
quantity, customer, transaction_id (the App Store's, a number as the post sends it), request_id, and
then ("post", or "forget" in buy-forget).
It exits 0 whatever the shop answered (1 when the App Store refused the purchase: nothing to post)."""
import argparse
import datetime
import http.client
import json
import os
import random
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

MODES = ["demo", "clean", "double-tap", "lost-retry-same", "lost-retry-new", "lost-give-up", "spend", "purchase", "buy", "buy-forget"]
SPEND_PATH = "/api/v1/spend_cheer"
PURCHASE_PATH = "/api/v2/purchase_cheer"
APPSTORE_PURCHASES = "/_stub/appstore/purchases"
PACKS = ["com.reiterate.pack.rain", "com.reiterate.pack.cafe-flore", "com.reiterate.pack.tokyo-night"]
COMMENTS = [None, "great pack", "for the walk home", "again!", "ありがとう"]
BUNDLES = ["com.reiterate.cheer.50", "com.reiterate.cheer.100", "com.reiterate.cheer.200"]
DEMO_FAULTS = ["no_entry", "double_entry", "stuck_total"]

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("url", help="the shop's base URL (the stand-in's)")
parser.add_argument("--mode", choices=MODES, default="demo")
parser.add_argument("--proxy", help="HOST:PORT of the app's proxy")
parser.add_argument("--proxy-ca", help="the proxy's CA (PEM): what the app trusts")
parser.add_argument("--server-ca", help="the stand-in's own CA (PEM), for its fault requests")
parser.add_argument("--user", default="qa-alice", help="whose writes (user_id in the query and the body; default qa-alice)")
parser.add_argument("--token", default=os.environ.get("PHONE_TOKEN", "dev-token"), help="access token (default $PHONE_TOKEN or dev-token)")
parser.add_argument("--count", type=int, help="writes (plays, in the one-write modes) before exiting; default: forever for demo and clean, else 1")
parser.add_argument("--for", dest="duration", type=float, metavar="SECONDS", help="stop starting writes after this many seconds")
parser.add_argument("--start-delay", type=float, help="seconds to wait first (default 4 for demo, else 0)")
parser.add_argument("--interval", type=float, help="seconds between writes (default: random 2 to 6)")
parser.add_argument("--timeout", type=float, default=5, help="seconds to wait for an answer (default 5)")
parser.add_argument("--product", help="the pack of a spend (default: random)")
parser.add_argument("--amount", type=int, help="the amount of a spend (default: random 1 to 24)")
parser.add_argument("--comment", help="the comment of a spend (default: random, sometimes none)")
parser.add_argument("--bundle", help="the bundle of a purchase (default com.reiterate.cheer.200; random in clean)")
parser.add_argument("--transaction-id", type=int, help="the transaction id of a purchase (default: a fresh random one)")
parser.add_argument("--quantity", type=int, default=1, help="buy modes: the App Store purchase's quantity (1 to 10; default 1)")
parser.add_argument("--customer", default="sandbox-1", help="buy modes: the App Store's customer, the sandbox tester (default sandbox-1)")
parser.add_argument("--appstore", action="store_true", help="demo, clean: buy each purchase at the App Store first, then post it")
parser.add_argument("--overlap", action="store_true", help="double-tap: the second tap while the first is still out")
parser.add_argument("--retry-after", type=float, default=1, help="lost modes: seconds before the retry (default 1)")
parser.add_argument("--print", dest="print_demo", action="store_true", help="demo: print its lines too")
args = parser.parse_args()

url = args.url.rstrip("/")
rng = random.Random()
print_lock = threading.Lock()


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


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def no_answer(error):
    """Short words for a request that got no answer."""
    reason = getattr(error, "reason", error)
    if isinstance(reason, (http.client.RemoteDisconnected, http.client.BadStatusLine, ssl.SSLEOFError)):
        return "no answer: connection closed"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return "no answer: certificate not trusted"
    if isinstance(reason, ConnectionRefusedError):
        return "no answer: connection refused"
    if isinstance(reason, ConnectionResetError):
        return "no answer: connection reset"
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return "no answer: timed out"
    return "no answer: " + (str(reason).splitlines() or ["unknown"])[0][:80]


def send(via, path, body, raw=None, query=True):
    """POSTs (as the app: `?user_id=` unless not `query`); answers (status or None, error or None,
    answer JSON or None, request id or None)."""
    data = raw.encode() if raw is not None else json.dumps(body).encode()
    target = f"{url}{path}?user_id={urllib.parse.quote(args.user)}" if query else url + path
    request = urllib.request.Request(target, data=data, method="POST",
                                     headers={"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"})
    try:
        response = via.open(request, timeout=args.timeout)
    except urllib.error.HTTPError as error:
        response = error
    except Exception as error:  # refused, reset, closed, timed out: the app heard nothing
        return None, no_answer(error), None, None
    with response:
        status, request_id = response.status, response.headers.get("X-Request-Id")
        try:
            answer = json.loads(response.read() or b"null")
        except Exception:  # a cut or non-JSON body
            return status, "unreadable answer", None, request_id
    error = None
    if not 200 <= status < 300:
        error = answer.get("code") if isinstance(answer, dict) and isinstance(answer.get("code"), str) else f"HTTP {status}"
    return status, error, answer, request_id


def report(op, attempt, at, fields, result, **extra):
    """One attempt's JSON line (`at`: when it was sent)."""
    status, error, answer, request_id = result
    balance = answer.get("balance") if isinstance(answer, dict) else None
    line = {"at": at, "mode": args.mode, "op": op, "attempt": attempt, "status": status, "error": error, **fields,
            "balance": balance if isinstance(balance, int) and not isinstance(balance, bool) else None, "request_id": request_id, **extra}
    if args.mode == "demo" and not args.print_demo:
        return
    with print_lock:
        print(json.dumps(line, ensure_ascii=False), flush=True)


def spend_fields(product=None, amount=None, comment=None, random_comment=True):
    product = product or args.product or rng.choice(PACKS)
    amount = amount if amount is not None else args.amount if args.amount is not None else rng.randrange(1, 25)
    if comment is None:
        comment = args.comment if args.comment is not None else rng.choice(COMMENTS) if random_comment else None
    return {"product": product, "amount": amount, "comment": comment}


def spend(via, fields, attempt=1):
    body = {"user_id": args.user, "product": fields["product"], "amount": fields["amount"]}
    if fields["comment"]:
        body["comment"] = fields["comment"]
    at = now_iso()
    report("spend", attempt, at, fields, send(via, SPEND_PATH, body))


def purchase(via, identifier, transaction_id, attempt=1, path=PURCHASE_PATH, **extra):
    """Answers whether an answer came."""
    at = now_iso()
    result = send(via, path, {"user_id": args.user, "identifier": identifier, "transaction_id": transaction_id})
    report("purchase", attempt, at, {"identifier": identifier, "transaction_id": transaction_id}, result, **extra)
    return result[0] is not None


def fresh_id():
    return rng.randrange(1, 2**63)


class NotBought(Exception):
    """The App Store side refused the purchase (or did not answer): there is nothing to post."""


def appstore_buy(direct, identifier, then, quantity=1):
    """A purchase at the stand-in's App Store side, as StoreKit's sandbox makes one (for `args.user`,
    whose appAccountToken it carries): the App Store has it, the shop has heard nothing. Sent directly,
    never through the proxy. Answers the App Store's transaction id as the app posts it (a number)."""
    at = now_iso()
    status, error, answer, request_id = send(direct, APPSTORE_PURCHASES, {"product_id": identifier, "quantity": quantity,
                                                                       "customer": args.customer, "user": args.user}, query=False)
    bought = status == 201 and isinstance(answer, dict) and str(answer.get("transaction_id", "")).isdigit()
    transaction_id = int(answer["transaction_id"]) if bought else None
    report("appstore", 1, at, {"identifier": identifier, "quantity": quantity, "customer": args.customer,
                               "transaction_id": transaction_id}, (status, error, None, request_id), then=then if bought else None)
    if not bought:
        raise NotBought(f"the App Store side refused the purchase of {identifier}: {error or status} (is the stand-in's App Store side on?)")
    return transaction_id


def buy(app, direct, identifier, quantity=1, forget=False):
    """The buy modes: bought at the App Store, then posted through `app`, or (`forget`) never posted."""
    transaction_id = appstore_buy(direct, identifier, "forget" if forget else "post", quantity)
    if not forget:
        purchase(app, identifier, transaction_id)


def demo_write(n, app, direct):
    """The demo's n-th write (the phone as `make demo-live` and `make demo-app` play it)."""
    if n % 10 == 0:
        # The stand-in breaking a rule, asked of it directly: not an app write, so not reported.
        send(direct, "/_stub/faults", {"kind": rng.choice(DEMO_FAULTS), "path": SPEND_PATH, "count": 1}, query=False)
    if args.proxy and n % 15 == 0:
        # The app's own bug, for the proxy to blame on it.
        if rng.random() < 0.5:
            fields = spend_fields()
            raw = json.dumps({"user_id": args.user, "product": fields["product"], "amount": str(fields["amount"])})
            at = now_iso()
            report("spend", 1, at, fields, send(app, SPEND_PATH, None, raw=raw))
        else:
            purchase(app, "com.reiterate.cheer.50", fresh_id(), path="/api/v1/purchase_cheer")
    else:
        clean_write(app, direct)


last_spends = []


def clean_write(app, direct):
    if rng.random() < 0.75:
        # A person does not cheer the very same way again within seconds (that is the double-tap mode):
        # none of the last five spends is repeated.
        fields = spend_fields()
        for _ in range(20):  # bounded: fixed --product/--amount/--comment make every one alike
            if fields not in last_spends:
                break
            fields = spend_fields()
        last_spends.append(fields)
        del last_spends[:-5]
        spend(app, fields)
    elif args.appstore:
        try:
            buy(app, direct, args.bundle or rng.choice(BUNDLES))
        except NotBought:
            pass  # its "appstore" line says so; the demo plays on
    else:
        purchase(app, args.bundle or rng.choice(BUNDLES), fresh_id())


def double_tap(app):
    fields = spend_fields()
    if not args.overlap:
        spend(app, fields)
        time.sleep(0.3)
        spend(app, fields, attempt=2)
        return
    first = threading.Thread(target=spend, args=(app, fields, 1))
    second = threading.Thread(target=spend, args=(app, fields, 2))
    first.start()
    time.sleep(0.01)  # on the wire first, the second going before its answer
    second.start()
    first.join()
    second.join()


def lost_purchase(app):
    identifier = args.bundle or BUNDLES[2]
    transaction_id = args.transaction_id if args.transaction_id is not None else fresh_id()
    then = args.mode.removeprefix("lost-")
    at = now_iso()
    result = send(app, PURCHASE_PATH, {"user_id": args.user, "identifier": identifier, "transaction_id": transaction_id})
    answered = result[0] is not None
    report("purchase", 1, at, {"identifier": identifier, "transaction_id": transaction_id}, result, then=None if answered else then)
    if answered or then == "give-up":
        return
    time.sleep(args.retry_after)
    retry_id = transaction_id if then == "retry-same" else fresh_id()
    purchase(app, identifier, retry_id, attempt=2, then=None)


def play(app, direct, n):
    if args.mode == "demo":
        demo_write(n, app, direct)
    elif args.mode == "clean":
        clean_write(app, direct)
    elif args.mode == "double-tap":
        double_tap(app)
    elif args.mode.startswith("lost-"):
        lost_purchase(app)
    elif args.mode == "spend":
        spend(app, spend_fields(random_comment=False))
    elif args.mode in ("buy", "buy-forget"):
        buy(app, direct, args.bundle or BUNDLES[2], args.quantity, forget=args.mode == "buy-forget")
    else:
        purchase(app, args.bundle or BUNDLES[2], args.transaction_id if args.transaction_id is not None else fresh_id())


def main():
    endless = args.mode in ("demo", "clean")
    count = args.count if args.count is not None else (None if endless else 1)
    delay = args.start_delay if args.start_delay is not None else (4 if args.mode == "demo" else 0)
    time.sleep(delay)  # the demo: the TUI's first rounds (and, with --proxy, its CA made)
    if args.proxy:
        wait_for(args.proxy_ca)
    app = opener(args.proxy, args.proxy_ca if args.proxy else args.server_ca)
    direct = opener(None, args.server_ca)
    started = time.monotonic()
    n = 0
    while count is None or n < count:
        if args.duration is not None and time.monotonic() - started >= args.duration:
            break
        n += 1
        play(app, direct, n)
        if count is not None and n >= count:
            break
        gap = args.interval if args.interval is not None else rng.uniform(2, 6)
        if args.duration is not None:
            gap = max(0, min(gap, started + args.duration - time.monotonic()))
        time.sleep(gap)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    except NotBought as error:
        print(f"phone.py: {error}", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
