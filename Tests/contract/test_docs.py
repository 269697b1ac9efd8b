"""Issue 36, item 7: docs/architecture.md is held to the code. Every source file it names exists (a path
as written, a bare file name somewhere under Sources/ or Tests/, a path inside a named target's folder);
every target of Package.swift is in its Layout; its table of long files is exactly the files over 300
lines, each with its count; "Adding an endpoint" and "Adding a write" list at most 4 places."""
import re
from pathlib import Path

from conftest import ROOT

DOC = ROOT / "docs" / "architecture.md"
SOURCE_SUFFIXES = (".swift", ".py", ".h", ".c", ".sh")


def doc():
    return DOC.read_text()


def files_named(text):
    """Every `code span` that names a file of ours (by its suffix)."""
    names = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in re.findall(r"[\w./+-]+", span):
            if word.endswith(SOURCE_SUFFIXES) and not word.startswith(("http", "-")):
                names.add(word)
    return names


def exists(name):
    if (ROOT / name).exists():
        return True
    if "/" in name:
        if (ROOT / name).exists():
            return True
        # A path relative to a target's folder (`App/Keymap.swift`, `ShopViewModels/Watch/Watch.swift`).
        return any(p.as_posix().endswith("/" + name) for p in (ROOT / "Sources").rglob(Path(name).name)) or \
            any(p.as_posix().endswith("/" + name) for p in (ROOT / "Tests").rglob(Path(name).name))
    return any((ROOT / "Sources").rglob(name)) or any((ROOT / "Tests").rglob(name))


def test_every_source_file_the_page_names_exists():
    names = files_named(doc())
    assert len(names) > 40, sorted(names)  # the page names the code it describes
    missing = sorted(n for n in names if not exists(n))
    assert missing == [], missing


def test_every_target_is_in_the_layout():
    package = (ROOT / "Package.swift").read_text()
    targets = set(re.findall(r'\.(?:target|executableTarget|systemLibrary)\(\s*name:\s*"([^"]+)"', package))
    # Test-side executables live in Tests/ and are named there by their folder.
    targets -= {"tui-bench", "cache-write-probe", "fuzz-json", "fuzz-text", "fuzz-config", "fuzz-proxy", "FuzzReplay"}
    layout = doc().split("## Layout", 1)[1]
    rows = set(re.findall(r"^\| ([\w-]+) \| `Sources/", layout, re.M))
    assert targets, package[:200]
    assert rows == targets, (sorted(targets - rows), sorted(rows - targets))
    for target in targets:
        assert (ROOT / "Sources" / target).is_dir(), target


def test_the_table_of_long_files_is_the_files_over_300_lines():
    table = doc().split("### Files over 300 lines", 1)[1]
    listed = {name: int(n) for name, n in re.findall(r"^\| `([^`]+\.swift)` \| (\d+) \|", table, re.M)}
    actual = {}
    for path in (ROOT / "Sources").rglob("*.swift"):
        lines = len(path.read_text().splitlines())
        if lines > 300:
            actual[path.relative_to(ROOT / "Sources").as_posix()] = lines
    assert listed == actual, {"listed, not so": {k: v for k, v in listed.items() if actual.get(k) != v},
                              "over 300, not listed or another count": {k: v for k, v in actual.items() if listed.get(k) != v}}


def test_adding_an_endpoint_or_a_write_takes_at_most_four_places():
    text = doc()
    for section in ("## Adding an endpoint", "## Adding a write"):
        body = text.split(section, 1)[1].split("\n## ", 1)[0]
        steps = re.findall(r"^\d+\. ", body, re.M)
        assert 1 <= len(steps) <= 4, (section, len(steps))


def package_dependencies():
    """Each target of Package.swift (not a test target) and the targets of ours it depends on."""
    package = (ROOT / "Package.swift").read_text()
    found = {}
    starts = list(re.finditer(r'\.(target|executableTarget|systemLibrary|testTarget)\(\s*name:\s*"([^"]+)"', package))
    for k, m in enumerate(starts):
        if m.group(1) == "testTarget":
            continue
        chunk = package[m.end():starts[k + 1].start() if k + 1 < len(starts) else len(package)]
        deps = re.search(r"dependencies:\s*\[(.*?)\]\s*,?\s*(?:path|swiftSettings|resources|exclude|linkerSettings|pkgConfig|\))", chunk, re.S)
        names = re.findall(r'(?:^|[\[,])\s*"([^"]+)"', deps.group(1), re.M) if deps else []
        found[m.group(2)] = set(names)
    return found


def test_the_layer_picture_is_package_swifts_dependencies():
    """Issue 44, item 7: each line of the picture is a target and every target of ours it depends on."""
    picture = doc().split("## The layers", 1)[1].split("```", 2)[1]
    drawn = {}
    for line in picture.strip().splitlines():
        if line.startswith("leaves:"):
            for name in line.split(":", 1)[1].split(","):
                drawn[name.strip()] = set()
            continue
        name, deps = line.split(" ──> ", 1)
        assert name.strip() not in drawn, name
        drawn[name.strip()] = {d.strip() for d in deps.split(",")}
    actual = {name: deps for name, deps in package_dependencies().items()
              if (ROOT / "Sources" / name).is_dir()}  # test-side executables live in Tests/
    assert drawn == actual, {name: (sorted(drawn.get(name, [])), sorted(actual.get(name, [])))
                             for name in set(drawn) | set(actual) if drawn.get(name) != actual.get(name)}


def test_one_settled_read_rule_says_when_to_read_again():
    """Issue 44, item 2: the pauses between reads of one value are written once (`ReadSeries.pauses`, which
    `ReadRule` and the view models' series use); no other file has its own schedule of reads."""
    schedule = re.compile(r"\[\s*0?\.5\s*,\s*1(\.0)?\s*\]|\[\s*500\s*,\s*1000\s*\]|milliseconds\(500\)\s*,\s*\.milliseconds\(1000\)")
    own = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "Sources").rglob("*.swift") if p.name != "SettledReads.swift"
           for n, line in enumerate(p.read_text().splitlines(), 1) if schedule.search(line)]
    assert own == [], own
    rule = (ROOT / "Sources" / "ShopModel" / "SettledReads.swift").read_text()
    assert "struct ReadRule" in rule and "func reads(" in rule and schedule.search(rule)


def test_the_view_models_build_no_url_and_no_balance_is_read_from_raw_json_outside_the_watchdog():
    """Issue 44, items 4 and 7: the view models send typed requests, never a URL; a balance is read by the
    operation's endpoint type (`OperationID.answeredBalance`), never as `["balance"]` of raw JSON, but by
    the contract watchdog (ShopAPI/Contract/)."""
    urls = [str(p) for p in (ROOT / "Sources" / "ShopViewModels").rglob("*.swift") if "URL(string" in p.read_text()]
    assert urls == [], urls
    raw = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "Sources").rglob("*.swift") if "ShopAPI/Contract/" not in p.as_posix()
           for n, line in enumerate(p.read_text().splitlines(), 1) if '["balance"]' in line]
    assert raw == [], raw


def test_the_executable_parses_arguments_and_prints_in_at_most_2500_lines():
    """Issue 44, item 5: the shop's logic lives in the libraries; the executable stays at most 2,500 lines."""
    lines = sum(len(p.read_text().splitlines()) for p in (ROOT / "Sources" / "reiterate-shop").glob("*.swift"))
    assert lines <= 2500, lines
