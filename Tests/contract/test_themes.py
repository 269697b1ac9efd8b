"""Themes end to end: the real TUI in tmux picks its palette as a user would see it.

tmux answers OSC 11 with the pane's background when one is set (`window-style bg=…`), and answers
the device-attributes request always: so `auto` is checked against a terminal that says "white",
one that says nothing, a COLORFGBG hint, and the explicit choices. The palette shows in the colour
codes tmux keeps (`capture-pane -e`): column titles and other muted text are grey 241 on light
palettes and grey 245 on the dark one.
"""
import re

import pytest

from conftest import TUI, tmux  # noqa: F401

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colours(t):
    """Every foreground colour on screen: 256-colour indices as ints, basic ones as 'b<N>'."""
    found = set()
    for m in SGR.finditer(tmux("capture-pane", "-e", "-p", "-t", t.name).stdout):
        codes = [int(c) for c in m.group(1).split(";") if c]
        i = 0
        while i < len(codes):
            if codes[i] == 38 and i + 2 < len(codes) and codes[i + 1] == 5:
                found.add(codes[i + 2]); i += 3; continue
            if 30 <= codes[i] <= 37:
                found.add(f"b{codes[i] - 30}")
            if 90 <= codes[i] <= 97:
                found.add(f"b{codes[i] - 90 + 8}")
            i += 1
    return found


@pytest.fixture(scope="module", autouse=True)
def themes_server():
    """A session of this module's own keeps the private tmux server up (test_tui's kills the server
    at the end of its module; this one only ends its own session, which ends the server if it is the last)."""
    tmux("new-session", "-d", "-s", "keepalive-themes", "-x", "80", "-y", "24", "sleep 3600")
    yield
    tmux("kill-session", "-t", "keepalive-themes", check=False)


@pytest.fixture
def white_background():
    tmux("set-option", "-gw", "window-style", "bg=#ffffff,fg=#000000")
    yield
    tmux("set-option", "-gwu", "window-style")


def open_shop(stub, tmp_path, name, env=None, args=()):
    t = TUI(name, stub.url, tmp_path / name, env=env, args=("--user", "qa-alice", *args))
    t.wait_for("Balance 1,250 cheer")
    t.wait_for("46 of 46 packs")
    return t


def test_auto_on_a_white_terminal_is_the_light_palette_and_its_answer_is_no_keys(stub, tmp_path, white_background):
    t = open_shop(stub, tmp_path, "light")
    try:
        c = colours(t)
        assert 241 in c and 245 not in c, c   # light muted grey, not the dark one
        assert "b3" not in c, c                 # no basic yellow on white
        screen = t.screen()
        # The answer ("]11;rgb:ffff/…" then "[?1;2c") read as keys would have opened the buy form (b),
        # moved the tab (1) or refreshed (r): nothing of it happened.
        assert "Buy cheer" not in screen and "1 Shop" in screen
        assert "rgb" not in screen and "11;" not in screen
    finally:
        t.close()


def test_auto_without_an_answer_is_dark_and_colorfgbg_is_the_hint_after_it(stub, tmp_path):
    t = open_shop(stub, tmp_path, "dark")
    try:
        c = colours(t)
        assert 245 in c and 241 not in c, c
    finally:
        t.close()
    hinted = open_shop(stub, tmp_path, "hint", env={"COLORFGBG": "0;15"})
    try:
        assert 241 in colours(hinted)
    finally:
        hinted.close()


def test_explicit_themes_and_the_config_and_no_color(stub, tmp_path, white_background):
    # --theme beats the terminal's white: dark palette, colour-blind safe (sky blue 75 for LOCAL).
    t = open_shop(stub, tmp_path, "cb", args=("--theme", "dark-colorblind"))
    try:
        c = colours(t)
        assert 75 in c and 246 in c and "b2" not in c, c
    finally:
        t.close()
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('theme = "light-colorblind"\n')
    t = open_shop(stub, tmp_path, "conf", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    try:
        c = colours(t)
        assert 25 in c and 241 in c and 28 not in c, c   # blue for LOCAL, not the light palette's green
    finally:
        t.close()
    t = open_shop(stub, tmp_path, "nocolor", env={"NO_COLOR": "1"}, args=("--theme", "light"))
    try:
        assert colours(t) == set()
        assert "LOCAL" in t.screen()
    finally:
        t.close()
