#!/usr/bin/env python3
"""Writes the commit a release was built from into a linked binary (`make release`).

The binary holds a 96-byte field that starts with the marker "reiterate-build-stamp:" (Sources/BuildStamp);
the text after the marker, up to a NUL, is what `reiterate-shop --version` names. Patching after the link
means a new commit costs no rebuild. Usage: stamp-build.py BINARY TEXT
"""
import sys

MARKER = b"reiterate-build-stamp:"
FIELD = 96


def main() -> int:
    path, text = sys.argv[1], sys.argv[2].encode()
    room = FIELD - len(MARKER) - 1
    if len(text) > room:
        print(f"stamp-build: '{sys.argv[2]}' is longer than {room} bytes", file=sys.stderr)
        return 1
    data = bytearray(open(path, "rb").read())
    at = data.find(MARKER)
    if at < 0 or data.find(MARKER, at + 1) >= 0:
        print(f"stamp-build: {path} has {'no' if at < 0 else 'more than one'} stamp field", file=sys.stderr)
        return 1
    start = at + len(MARKER)
    data[start:start + room + 1] = text + bytes(room + 1 - len(text))
    with open(path, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
