"""One App Store Server API token (ES256 JWT, raw r‖s) from a .p8, for the bench's `curl | jq` peer of
the `ledger` row. Run by .venv's Python (it needs `cryptography`); bench.py itself stays standard library.

Usage: appstore_token.py KEY_FILE KEY_ID ISSUER_ID BUNDLE_ID LIFETIME_SECONDS
Prints the token on stdout and nothing else; the caller keeps it out of every log.
"""
import base64
import json
import sys
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    key_file, key_id, issuer, bundle, lifetime = sys.argv[1:6]
    with open(key_file, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    now = int(time.time())
    head = {"alg": "ES256", "kid": key_id, "typ": "JWT"}
    body = {"iss": issuer, "iat": now, "exp": now + int(lifetime), "aud": "appstoreconnect-v1", "bid": bundle}
    signing_input = b64url(json.dumps(head).encode()) + "." + b64url(json.dumps(body).encode())
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    sys.stdout.write(signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big")))


if __name__ == "__main__":
    main()
