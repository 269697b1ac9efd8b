"""Issue 45, item 9: `explore` beside schemathesis (PyPI, pinned in requirements.txt), against the stand-in under
each fault: everything schemathesis flags there, `explore` flags too (each of schemathesis's failures has the
explore or contract finding that names the same bug), and the shop's own dimensions besides. docs/checks.md
keeps the table this test holds."""
import re

import pytest

from conftest import shop
from test_staging import schemathesis_run

# What names the same bug on each side: a schemathesis failure → the kinds of finding `explore` gives for it
# (its own, or the contract watchdog's on its answers).
SAME_BUG = {
    "API accepts requests without authentication": {"ignored-auth"},
    "Content deserialization error": {"charset"},
    "Response violates schema": {"schema"},
    "Server error": {"server-error"},
    "API rejected schema-compliant request": {"legal-refused"},
}

# The faults of the comparison, and what each side must say of it: schemathesis flags it (True) or not, and
# the kind `explore` must give.
FAULTS = [
    ("clean", None, False, None),
    ("ignore_auth", {"kind": "ignore_auth", "path": "/api/v1/balance"}, True, "ignored-auth"),
    ("latin1_body", {"kind": "latin1_body"}, True, "charset"),
    ("missing_balance", {"kind": "missing_balance"}, True, "schema"),
    # Schemathesis's config takes a 400 as the shop's own refusal (an unknown product), so a legal per_page
    # refused 400 passes it; `explore` knows per_page's bounds.
    ("narrow_per_page", {"kind": "narrow_per_page"}, False, "legal-refused"),
    ("race_overspend", {"kind": "race_overspend"}, False, "concurrent-writes"),
    ("escape_markup", {"kind": "escape_markup"}, False, "text-changed"),
    ("future_date", {"kind": "future_date"}, False, "date-outside-clock"),
]


def explore_kinds(r) -> set:
    found = set(re.findall(r'"kind":"([a-z0-9-]+)"', r.stdout))
    found |= set(re.findall(r"^warning: .*?: \[([a-z0-9-]+)\]", r.stderr, re.M))
    return found


@pytest.mark.parametrize("name,fault,schemathesis_flags,kind", FAULTS, ids=[f[0] for f in FAULTS])
def test_explore_finds_whatever_schemathesis_finds_and_the_shops_own_bugs_besides(start_stub, tmp_path, name, fault, schemathesis_flags, kind):
    s = start_stub("--quiet")
    if fault:
        s.fault(**fault)
    st = schemathesis_run(s.url)
    failures = set(re.findall(r"^- ST\d+ (.+)$", st.stdout, re.M))
    assert (st.returncode != 0) == schemathesis_flags, st.stdout[-3000:]
    assert bool(failures) == schemathesis_flags and failures <= SAME_BUG.keys(), failures
    # The same stand-in, as it was (schemathesis wrote to it), under the same fault.
    s.reset()
    if fault:
        s.fault(**fault)
    r = shop("explore", "--yes", "--json", "--pace", "0", "--out", str(tmp_path / "out"), "--base-url", s.url, timeout=180)
    found = explore_kinds(r)
    if kind is None:
        assert r.returncode == 0 and not found, r.stdout[-2000:] + r.stderr[-2000:]
        return
    assert r.returncode == 65, r.stdout[-2000:] + r.stderr[-2000:]
    assert kind in found, found
    for failure in failures:
        assert SAME_BUG[failure] & found, (failure, found)
