"""Issue 38, the stand-in's App Store side: its files, Apple's token rules, the App Store Server API's
three reads in Apple's shapes (checked by a third-party verifier: Python's `cryptography`), paging by 20,
refunds, `purchase_cheer` verifying with it (`--appstore-verify`), and each App Store fault."""
import base64
import datetime
import json
import os
import stat
import time
import uuid

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from conftest import Stub

KEY_ID = "STUBKEY001"
ISSUER = "57246542-96fe-1a63-e053-0824d011072a"
BUNDLE = "com.reiterate.app"
PURCHASE = "/api/v2/purchase_cheer"
LEAF_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
INTERMEDIATE_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")


# ---------------------------------------------------------------------------------------------------
# One stand-in for the module, with --appstore-dir and --appstore-verify, reset before each test.

@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("appstore") / "made-here"  # missing: the stand-in creates it
    stub = Stub("--appstore-dir", str(folder), "--appstore-verify")
    stub.folder = folder
    stub.key = serialization.load_pem_private_key((folder / f"AuthKey_{KEY_ID}.p8").read_bytes(), password=None)
    stub.root_pem = (folder / "root.pem").read_bytes()
    yield stub
    stub.stop()


@pytest.fixture
def apple(shared):
    shared.reset()
    yield shared
    shared.reset()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def token(key, header=None, claims=None):
    """An App Store Server API token as Apple's documentation makes it: ES256, raw r‖s. `header` and
    `claims` change fields (None removes one)."""
    now = int(time.time())
    head = {"alg": "ES256", "kid": KEY_ID, "typ": "JWT", **(header or {})}
    body = {"iss": ISSUER, "iat": now, "exp": now + 300, "aud": "appstoreconnect-v1", "bid": BUNDLE, **(claims or {})}
    head = {k: v for k, v in head.items() if v is not None}
    body = {k: v for k, v in body.items() if v is not None}
    signing_input = b64url(json.dumps(head).encode()) + "." + b64url(json.dumps(body).encode())
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def api(stub, path, bearer=None, **kw):
    """A call to the App Store Server API with a good token (or `bearer`)."""
    return stub.get(path, token=bearer if bearer is not None else token(stub.key), **kw)


def buy(stub, product="com.reiterate.cheer.200", **fields):
    r = stub.http.post(stub.url + "/_stub/appstore/purchases", json={"product_id": product, **fields}, timeout=5)
    assert r.status_code == 201, r.text
    return r.json()["transaction_id"]


def refund(stub, transaction_id, reason=0):
    return stub.http.post(stub.url + "/_stub/appstore/refunds", json={"transaction_id": transaction_id, "reason": reason}, timeout=5)


def post(stub, transaction_id, identifier="com.reiterate.cheer.200", user=None):
    params = {"user_id": user} if user else None
    return stub.post(PURCHASE, params=params, json={"identifier": identifier, "transaction_id": int(transaction_id)})


def balance(stub, user="qa-alice"):
    return stub.get("/api/v1/balance", params={"user_id": user}).json()["balance"]


def verify(jws, root_pem):
    """What a client must check of a signed transaction, done by `cryptography`: ES256, three
    certificates, each signed by the next, the last equal to the trusted root, Apple's two extensions,
    each valid now, and the signature over `header.payload` by the leaf's key. Answers the payload;
    raises (AssertionError, InvalidSignature) at the first check that fails."""
    head, body, signature = jws.split(".")
    header = json.loads(unb64url(head))
    assert header["alg"] == "ES256", header
    assert len(header["x5c"]) == 3, header
    leaf, intermediate, root = (x509.load_der_x509_certificate(base64.b64decode(c, validate=True)) for c in header["x5c"])
    trusted = x509.load_pem_x509_certificate(root_pem)
    assert root.public_bytes(serialization.Encoding.DER) == trusted.public_bytes(serialization.Encoding.DER), "the chain does not end at root.pem"
    leaf.verify_directly_issued_by(intermediate)
    intermediate.verify_directly_issued_by(trusted)
    trusted.verify_directly_issued_by(trusted)
    assert intermediate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert intermediate.extensions.get_extension_for_oid(INTERMEDIATE_OID).value.value == b"\x05\x00"
    assert leaf.extensions.get_extension_for_oid(LEAF_OID).value.value == b"\x05\x00"
    now = datetime.datetime.now(datetime.timezone.utc)
    for certificate in (leaf, intermediate, trusted):
        assert certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc
    raw = unb64url(signature)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    leaf.public_key().verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    return json.loads(unb64url(body))


def info(stub, transaction_id):
    r = api(stub, f"/inApps/v1/transactions/{transaction_id}")
    assert r.status_code == 200, r.text
    return r.json()["signedTransactionInfo"]


# ---------------------------------------------------------------------------------------------------
# The files

def test_the_files_are_written_with_the_key_private_and_only_in_its_file(apple):
    folder = apple.folder
    assert sorted(p.name for p in folder.iterdir()) == ["AuthKey_STUBKEY001.p8", "appstore.json", "root.pem"]
    key_file = folder / "AuthKey_STUBKEY001.p8"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    key_text = key_file.read_text()
    assert key_text.startswith("-----BEGIN PRIVATE KEY-----\n")
    assert isinstance(apple.key, ec.EllipticCurvePrivateKey) and apple.key.curve.name == "secp256r1"
    settings = json.loads((folder / "appstore.json").read_text())
    assert settings == {"key_id": KEY_ID, "issuer_id": ISSUER, "bundle_id": BUNDLE, "environment": "Sandbox",
                        "key_file": str(key_file), "root_ca": str(folder / "root.pem")}
    assert os.path.isabs(settings["key_file"]) and os.path.isabs(settings["root_ca"])
    root = x509.load_pem_x509_certificate(apple.root_pem)
    assert root.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == "Reiterate Stub Root CA - G3"
    assert root.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert root.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    # The key's text (its base64 lines) is in no other file, nor in the request log.
    secret_lines = [line for line in key_text.splitlines() if line and not line.startswith("-----")]
    assert secret_lines
    info(apple, buy(apple))
    for other in [p for p in folder.iterdir() if p != key_file]:
        text = other.read_text()
        assert "PRIVATE KEY" not in text and not any(line in text for line in secret_lines), other
    assert not any(line in apple.log() for line in secret_lines)


# ---------------------------------------------------------------------------------------------------
# Tokens, as Apple checks them

def test_a_token_made_from_the_p8_is_taken(apple):
    good = token(apple.key)
    r = api(apple, f"/inApps/v1/transactions/{buy(apple)}", bearer=good)
    assert r.status_code == 200 and list(r.json()) == ["signedTransactionInfo"]
    assert r.headers["Content-Type"] == "application/json"
    # No typ is fine too.
    assert api(apple, f"/inApps/v1/transactions/{buy(apple)}", bearer=token(apple.key, header={"typ": None})).status_code == 200
    assert good not in apple.log()


def broken_tokens(key):
    now = int(time.time())
    return {
        "kid": (token(key, header={"kid": "OTHERKEY01"}), "kid"),
        "no-kid": (token(key, header={"kid": None}), "kid"),
        "iss": (token(key, claims={"iss": "00000000-0000-0000-0000-000000000000"}), "iss"),
        "aud": (token(key, claims={"aud": "appstoreconnect-v2"}), "aud"),
        "bid": (token(key, claims={"bid": "com.other.app"}), "bid is not com.reiterate.app"),
        "expired": (token(key, claims={"iat": now - 400, "exp": now - 100}), "expired"),
        "too-long": (token(key, claims={"iat": now, "exp": now + 3601}), "3600"),
        "iat-ahead": (token(key, claims={"iat": now + 120, "exp": now + 400}), "iat"),
        "alg": (token(key, header={"alg": "HS256"}), "alg"),
        "typ": (token(key, header={"typ": "JOSE"}), "typ"),
        "other-key": (token(ec.generate_private_key(ec.SECP256R1()), {}), "signature"),
        "signature-cut": (token(key).rsplit(".", 1)[0] + "." + b64url(b"\x01" * 63), "signature"),
        "not-a-jws": ("not.a.jws", "compact JWS"),
    }


@pytest.mark.parametrize("case", list(broken_tokens(ec.generate_private_key(ec.SECP256R1()))))
def test_each_broken_rule_is_a_401_with_an_empty_body(apple, case):
    tx = buy(apple)
    bad, words = broken_tokens(apple.key)[case]
    r = api(apple, f"/inApps/v1/transactions/{tx}", bearer=bad)
    assert r.status_code == 401 and r.content == b"", (case, r.status_code, r.text)
    line = apple.wait_for_log(f"/inApps/v1/transactions/{tx} 401").splitlines()[-1]
    assert words in line, line
    assert bad not in apple.log() and all(part not in apple.log() for part in bad.split(".") if len(part) > 20)
    assert api(apple, f"/inApps/v1/transactions/{tx}").status_code == 200  # the good one still is


def test_no_token_or_the_shops_token_is_a_401(apple):
    tx = buy(apple)
    assert apple.get(f"/inApps/v1/transactions/{tx}", token=None).status_code == 401
    r = apple.get(f"/inApps/v1/transactions/{tx}")  # the shop's dev-token
    assert r.status_code == 401 and r.content == b""


# ---------------------------------------------------------------------------------------------------
# Signed transactions, checked by a third-party verifier

def test_a_signed_transaction_verifies_with_cryptography_and_says_what_was_bought(apple):
    tx = buy(apple, "com.reiterate.cheer.500", quantity=3, user="qa-empty")
    before = int(time.time() * 1000)
    payload = verify(info(apple, tx), apple.root_pem)
    assert payload["transactionId"] == payload["originalTransactionId"] == tx and len(tx) == 16
    assert payload["bundleId"] == BUNDLE and payload["environment"] == "Sandbox"
    assert payload["productId"] == "com.reiterate.cheer.500" and payload["quantity"] == 3 and payload["type"] == "Consumable"
    assert payload["inAppOwnershipType"] == "PURCHASED" and payload["transactionReason"] == "PURCHASE"
    assert payload["storefront"] == "USA" and payload["storefrontId"] == "143441" and payload["currency"] == "USD"
    assert payload["price"] == 4950 and isinstance(payload["price"], int)
    assert payload["appAccountToken"] == str(uuid.uuid5(uuid.NAMESPACE_URL, "reiterate:user:qa-empty"))
    assert isinstance(payload["purchaseDate"], int) and payload["originalPurchaseDate"] == payload["purchaseDate"]
    assert payload["purchaseDate"] <= before <= payload["signedDate"] <= int(time.time() * 1000)
    assert "revocationDate" not in payload and "revocationReason" not in payload


def test_the_verifier_refuses_a_broken_chain_and_a_broken_signature(apple):
    tx = buy(apple)
    apple.fault(kind="broken_chain", count=1)
    broken = info(apple, tx)
    with pytest.raises(AssertionError, match="does not end at root.pem"):
        verify(broken, apple.root_pem)
    # The unrelated chain is whole (its leaf signed the record): only its root is wrong.
    header = json.loads(unb64url(broken.split(".")[0]))
    own_root = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][2])).public_bytes(serialization.Encoding.PEM)
    assert own_root != apple.root_pem and verify(broken, own_root)["transactionId"] == tx
    assert "fault=broken_chain" in apple.wait_for_log("fault=broken_chain")
    apple.fault(kind="broken_signature", count=1)
    with pytest.raises(InvalidSignature):
        verify(info(apple, tx), apple.root_pem)
    assert verify(info(apple, tx), apple.root_pem)["transactionId"] == tx  # the counts are spent


@pytest.mark.parametrize("kind,field,value", [("wrong_bundle", "bundleId", "com.other.app"), ("wrong_environment", "environment", "Production")])
def test_wrong_bundle_and_environment_are_signed_as_such(apple, kind, field, value):
    tx = buy(apple)
    fault = apple.fault(kind=kind, count=1)
    assert fault["path"] == "/inApps/*"
    assert verify(info(apple, tx), apple.root_pem)[field] == value
    assert verify(info(apple, tx), apple.root_pem)[field] != value


def test_unknown_invalid_and_other_bundle_ids(apple):
    other = buy(apple, bundle_id="com.other.app")
    for path in ("/inApps/v1/transactions/", "/inApps/v2/history/", "/inApps/v2/refund/lookup/"):
        for tx in ("2000000000009999", other):
            r = api(apple, path + tx)
            assert r.status_code == 404 and r.json() == {"errorCode": 4040010, "errorMessage": "Transaction id not found."}, (path, r.text)
            assert r.headers["Content-Type"] == "application/json"
    for bad in ("12ab", "123456789012345678901"):
        r = api(apple, "/inApps/v1/transactions/" + bad)
        assert r.status_code == 400 and r.json() == {"errorCode": 4000006, "errorMessage": "Invalid transaction id."}


# ---------------------------------------------------------------------------------------------------
# History and refund lookup: Apple's paging

def history(stub, tx, kind="history"):
    path = "/inApps/v2/history/" if kind == "history" else "/inApps/v2/refund/lookup/"
    pages, revision = [], None
    while True:
        r = api(stub, path + tx, params={"revision": revision} if revision else None)
        assert r.status_code == 200, r.text
        pages.append(r.json())
        revision = r.json()["revision"]
        if not r.json()["hasMore"]:
            return pages


def test_45_purchases_come_in_pages_of_20_20_5_oldest_first(apple):
    ids = [buy(apple, ["com.reiterate.cheer.50", "com.reiterate.cheer.200"][i % 2], quantity=1 + i % 3) for i in range(45)]
    assert ids == [str(2000000000000001 + i) for i in range(45)]
    buy(apple, customer="sandbox-2")                       # another customer's
    buy(apple, bundle_id="com.other.app")                  # another app's
    assert refund(apple, ids[3], reason=1).status_code == 200
    pages = history(apple, ids[7])
    assert [len(p["signedTransactions"]) for p in pages] == [20, 20, 5]
    assert [p["hasMore"] for p in pages] == [True, True, False]
    for p in pages:
        assert set(p) == {"revision", "hasMore", "bundleId", "appAppleId", "environment", "signedTransactions"}
        assert p["bundleId"] == BUNDLE and p["appAppleId"] == 1234567890 and p["environment"] == "Sandbox"
        assert isinstance(p["revision"], str) and p["revision"]
    payloads = [verify(jws, apple.root_pem) for p in pages for jws in p["signedTransactions"]]
    assert [t["transactionId"] for t in payloads] == ids
    dates = [t["purchaseDate"] for t in payloads]
    assert dates == sorted(dates)
    assert payloads[3]["revocationReason"] == 1 and payloads[3]["revocationDate"] >= payloads[3]["purchaseDate"]
    assert all("revocationDate" not in t for i, t in enumerate(payloads) if i != 3)
    # The last page's revision asks for what came since: nothing yet, then a new purchase.
    last = pages[-1]["revision"]
    r = api(apple, f"/inApps/v2/history/{ids[0]}", params={"revision": last})
    assert r.json()["signedTransactions"] == [] and r.json()["hasMore"] is False
    newer = buy(apple)
    r = api(apple, f"/inApps/v2/history/{ids[0]}", params={"revision": last})
    assert [verify(j, apple.root_pem)["transactionId"] for j in r.json()["signedTransactions"]] == [newer]


def test_a_revision_it_did_not_issue_is_a_400(apple):
    tx, other = buy(apple), buy(apple, customer="sandbox-2")
    for revision in ("made-up", "hist-1"):
        r = api(apple, f"/inApps/v2/history/{tx}", params={"revision": revision})
        assert r.status_code == 400 and r.json() == {"errorCode": 4000005, "errorMessage": "Invalid revision."}
    issued = api(apple, f"/inApps/v2/history/{tx}").json()["revision"]
    assert api(apple, f"/inApps/v2/history/{tx}", params={"revision": issued}).status_code == 200
    assert api(apple, f"/inApps/v2/history/{other}", params={"revision": issued}).status_code == 400  # another customer's
    assert api(apple, f"/inApps/v2/refund/lookup/{tx}", params={"revision": issued}).status_code == 400  # another list's


def test_refund_lookup_lists_the_revoked_ones_with_the_same_paging(apple):
    ids = [buy(apple) for _ in range(25)]
    assert history(apple, ids[0], "refunds")[0]["signedTransactions"] == []
    for tx in ids[:22]:
        assert refund(apple, tx).status_code == 200
    pages = history(apple, ids[24], "refunds")
    assert [len(p["signedTransactions"]) for p in pages] == [20, 2]
    assert all(set(p) == {"signedTransactions", "revision", "hasMore"} for p in pages)
    payloads = [verify(j, apple.root_pem) for p in pages for j in p["signedTransactions"]]
    assert [t["transactionId"] for t in payloads] == ids[:22]
    assert all(t["revocationReason"] == 0 and t["revocationDate"] >= t["purchaseDate"] for t in payloads)


def test_rate_limit_on_the_app_store_says_retry_after_in_unix_milliseconds(apple):
    tx = buy(apple)
    apple.fault(kind="rate_limit", retry_after=30, path="/inApps/*", count=1)
    before = time.time() * 1000
    r = api(apple, f"/inApps/v1/transactions/{tx}")
    assert r.status_code == 429 and r.json() == {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}
    assert r.headers["Content-Type"] == "application/json"
    assert before + 30_000 - 1000 <= int(r.headers["Retry-After"]) <= time.time() * 1000 + 30_000
    apple.fault(kind="rate_limit", retry_after=30, count=1)  # the shop's paths keep seconds
    assert apple.get("/api/v1/balance", params={"user_id": "qa-alice"}).headers["Retry-After"] == "30"


# ---------------------------------------------------------------------------------------------------
# purchase_cheer verifying with the App Store

def test_a_verified_purchase_credits_the_app_stores_product_times_quantity_once(apple):
    tx = buy(apple, "com.reiterate.cheer.200", quantity=3)
    r = post(apple, tx)
    assert r.status_code == 200 and r.json() == {"balance": 1250 + 600}
    r = post(apple, tx)
    assert r.status_code == 409 and r.json()["code"] == "duplicate_transaction"
    assert balance(apple) == 1850


@pytest.mark.parametrize("case,code", [
    ("unknown", "unverified_transaction"), ("other-bundle", "unverified_transaction"), ("not-consumable", "unverified_transaction"),
    ("refunded", "refunded_transaction"), ("other-product", "product_mismatch"), ("other-user", "not_this_users_transaction"),
])
def test_what_the_app_store_does_not_back_is_refused_and_changes_nothing(apple, case, code):
    tx = {
        "unknown": lambda: "2000000000009999",
        "other-bundle": lambda: buy(apple, bundle_id="com.other.app"),
        "not-consumable": lambda: buy(apple, type="Non-Consumable"),
        "refunded": lambda: buy(apple),
        "other-product": lambda: buy(apple, "com.reiterate.cheer.50"),
        "other-user": lambda: buy(apple, user="qa-whale"),
    }[case]()
    if case == "refunded":
        assert refund(apple, tx).json() == {"refunded": tx, "user": None, "debited": 0}
    r = post(apple, tx)
    assert r.status_code == 400 and r.json()["code"] == code, r.text
    assert balance(apple) == 1250
    listed = apple.http.get(apple.url + "/_stub/appstore/transactions", timeout=5).json()["transactions"]
    assert all(t["credited"] == 0 and t["credited_user"] is None for t in listed)


def test_a_refund_takes_the_credited_cheer_back(apple):
    tx = buy(apple, "com.reiterate.cheer.500", quantity=2)
    assert post(apple, tx, "com.reiterate.cheer.500").json() == {"balance": 2250}
    assert refund(apple, tx).json() == {"refunded": tx, "user": "qa-alice", "debited": 1000}
    assert balance(apple) == 1250
    assert refund(apple, tx).json()["debited"] == 0  # once
    assert post(apple, tx, "com.reiterate.cheer.500").json()["code"] == "refunded_transaction"
    assert refund(apple, "2000000000009999").status_code == 404
    listed = apple.http.get(apple.url + "/_stub/appstore/transactions", timeout=5).json()["transactions"]
    assert listed[0]["credited"] == 1000 and listed[0]["taken_back"] == 1000 and listed[0]["revocation_date"]


def test_reset_forgets_the_purchases(apple):
    buy(apple)
    apple.reset()
    assert apple.http.get(apple.url + "/_stub/appstore/transactions", timeout=5).json() == {"transactions": []}
    assert buy(apple) == "2000000000000001"


def test_without_appstore_verify_made_up_ids_are_credited_as_before(stub):
    r = stub.post(PURCHASE, json={"identifier": "com.reiterate.cheer.200", "transaction_id": 424242})
    assert r.status_code == 200 and r.json() == {"balance": 1450}


# ---------------------------------------------------------------------------------------------------
# The faults on purchase_cheer and refunds

def fault_hits(stub, kind):
    return [f for f in stub.http.get(stub.url + "/_stub/faults", timeout=5).json()["faults"] if f["kind"] == kind]


def test_unverified_credit_credits_any_id_by_the_posted_bundle_once(apple):
    apple.fault(kind="unverified_credit", count=1)
    r = post(apple, "2000000000009999", "com.reiterate.cheer.100")
    assert r.status_code == 200 and r.json() == {"balance": 1350}
    assert "fault=unverified_credit" in apple.log_lines(PURCHASE)[-1]
    assert post(apple, "2000000000009998", "com.reiterate.cheer.100").json()["code"] == "unverified_transaction"  # spent


def test_unverified_credit_is_not_spent_on_a_purchase_it_did_not_change(apple):
    apple.fault(kind="unverified_credit", count=1)
    assert post(apple, buy(apple)).json() == {"balance": 1450}  # what verifying credits too
    assert fault_hits(apple, "unverified_credit")[0]["remaining"] == 1


def test_trust_product_credits_the_posted_bundle_times_quantity(apple):
    apple.fault(kind="trust_product", count=1)
    tx = buy(apple, "com.reiterate.cheer.50", quantity=2)
    assert post(apple, tx, "com.reiterate.cheer.1000").json() == {"balance": 1250 + 2000}
    assert "fault=trust_product" in apple.log_lines(PURCHASE)[-1]
    assert post(apple, buy(apple, "com.reiterate.cheer.50"), "com.reiterate.cheer.1000").json()["code"] == "product_mismatch"


def test_ignore_quantity_credits_one_bundle(apple):
    apple.fault(kind="ignore_quantity", count=1)
    assert post(apple, buy(apple)).json() == {"balance": 1450}  # a quantity of 1: unchanged, not spent
    assert fault_hits(apple, "ignore_quantity")[0]["remaining"] == 1
    assert post(apple, buy(apple, quantity=4)).json() == {"balance": 1650}
    assert "fault=ignore_quantity" in apple.log_lines(PURCHASE)[-1]
    assert fault_hits(apple, "ignore_quantity") == []


def test_keep_refunded_keeps_the_cheer_and_credits_a_refunded_transaction(apple):
    tx = buy(apple, "com.reiterate.cheer.200")
    assert post(apple, tx).json() == {"balance": 1450}
    apple.fault(kind="keep_refunded", count=2)
    assert refund(apple, tx).json() == {"refunded": tx, "user": "qa-alice", "debited": 0}
    assert balance(apple) == 1450
    assert "fault=keep_refunded" in apple.log_lines("/_stub/appstore/refunds")[-1]
    refunded = buy(apple, "com.reiterate.cheer.100")
    refund(apple, refunded)  # nothing credited: nothing kept, the count stays
    assert fault_hits(apple, "keep_refunded")[0]["remaining"] == 1
    assert post(apple, refunded, "com.reiterate.cheer.100").json() == {"balance": 1550}
    assert fault_hits(apple, "keep_refunded") == []


def test_any_account_credits_another_users_transaction(apple):
    apple.fault(kind="any_account", count=1)
    tx = buy(apple, user="qa-whale")
    assert post(apple, tx).json() == {"balance": 1450}
    assert "fault=any_account" in apple.log_lines(PURCHASE)[-1]
    assert post(apple, buy(apple, user="qa-whale")).json()["code"] == "not_this_users_transaction"


def test_the_shops_purchase_faults_still_work_when_verifying(apple):
    apple.fault(kind="double_credit", path=PURCHASE, count=1)
    tx = buy(apple, quantity=2)
    assert post(apple, tx).json() == {"balance": 1250 + 800}
    assert refund(apple, tx).json()["debited"] == 800  # what was credited is what is taken back
    apple.fault(kind="replay_credit", path=PURCHASE, count=1)
    again = buy(apple)
    assert post(apple, again).json() == {"balance": 1450}
    assert post(apple, again).json() == {"balance": 1650}
