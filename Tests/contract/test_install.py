"""`make test-install` (CI): what `make install PREFIX=…` put in INSTALL_PREFIX works on its own.

The installed binary runs without the Swift toolchain's libraries (no LD_LIBRARY_PATH, and `ldd` finds
nothing in the toolchain), `--version` names the commit it was built from, the man page opens with
`man -l`, and each completion script loads in its shell and completes a subcommand (bash always; zsh
and fish when installed: `.ci/deps install` installs them). Under plain `make test` (no
INSTALL_PREFIX) these tests are skipped: nothing was installed.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prefix():
    value = os.environ.get("INSTALL_PREFIX")
    if not value:
        pytest.skip("nothing installed: `make test-install` runs these against `make install PREFIX=…`")
    p = Path(value)
    assert (p / "bin" / "reiterate-shop").exists(), f"{p} holds no installed reiterate-shop"
    return p


def toolchain_lib_dirs():
    swift = shutil.which("swift")
    if not swift:
        return []
    usr = Path(os.path.realpath(swift)).parent.parent
    return [str(usr / "lib")]


def clean_env(home, **extra):
    """No LD_LIBRARY_PATH, no toolchain on PATH: what a jump host without Swift has."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", **extra}


def test_installed_binary_runs_print_balance_without_the_toolchain(prefix, stub, tmp_path):
    binary = prefix / "bin" / "reiterate-shop"
    needs = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    for folder in toolchain_lib_dirs():
        assert folder not in needs, f"the binary loads from the toolchain:\n{needs}"
    assert "libswift" not in needs and "libFoundation" not in needs and "libdispatch" not in needs, needs
    out = subprocess.run([str(binary), "print", "balance", "--base-url", stub.url, "--user", "qa-alice", "--cache-dir", str(tmp_path / "c")],
                         env=clean_env(tmp_path, REITERATE_TOKEN="dev-token"), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "1,250" in out.stdout, out.stdout


def test_version_names_the_commit_it_was_built_from(prefix, tmp_path):
    out = subprocess.run([str(prefix / "bin" / "reiterate-shop"), "--version"], env=clean_env(tmp_path), capture_output=True, text=True, check=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert out.stdout.startswith("reiterate-shop 0."), out.stdout
    assert f"commit {commit}" in out.stdout, out.stdout


def test_the_man_page_opens(prefix):
    if not shutil.which("man"):
        pytest.fail("man is not installed (.ci/deps install installs man-db)")
    out = subprocess.run(["man", "-l", str(prefix / "share" / "man" / "man1" / "reiterate-shop.1")],
                         env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "100"}, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "NAME" in out.stdout and "reiterate-shop" in out.stdout and "--theme" in out.stdout, out.stdout[:2000]
    assert "print" in out.stdout and "compare" in out.stdout  # its subcommands


def test_bash_completes_a_subcommand(prefix):
    script = prefix / "share" / "bash-completion" / "completions" / "reiterate-shop"
    out = subprocess.run(["bash", "--norc", "-c", f"""
        source {script} || exit 3
        spec=$(complete -p reiterate-shop) || exit 4
        fn=${{spec#*-F }}; fn=${{fn%% *}}
        COMP_WORDS=(reiterate-shop pri); COMP_CWORD=1; COMP_LINE="reiterate-shop pri"; COMP_POINT=${{#COMP_LINE}}
        "$fn" reiterate-shop pri reiterate-shop
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """], env={"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "HOME": "/tmp"}, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["print"], out.stdout


def test_zsh_loads_the_completion_function(prefix, tmp_path):
    if not shutil.which("zsh"):
        pytest.skip("zsh is not installed")
    folder = prefix / "share" / "zsh" / "site-functions"
    out = subprocess.run(["zsh", "-f", "-c", f"""
        fpath=({folder} $fpath)
        autoload -U compinit && compinit -u -d {tmp_path}/zcompdump
        print -r -- "$_comps[reiterate-shop]"
        autoload -U +X _reiterate-shop && print loaded
    """], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["_reiterate-shop", "loaded"], out.stdout + out.stderr


def test_fish_completes_a_subcommand(prefix, tmp_path):
    if not shutil.which("fish"):
        pytest.skip("fish is not installed")
    script = prefix / "share" / "fish" / "vendor_completions.d" / "reiterate-shop.fish"
    out = subprocess.run(["fish", "--no-config", "-c", f"source {script}; and complete -C 'reiterate-shop pri'"],
                         env={"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["print"], out.stdout
