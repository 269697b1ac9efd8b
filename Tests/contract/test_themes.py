"""Themes end to end: the real TUI in tmux picks its palette as a user would see it.

tmux answers OSC 11 with the pane's background when one is set (`window-style bg=…`), and answers
the device-attributes request always: so `auto` is checked against a terminal that says "white",
one that says nothing, a COLORFGBG hint, and the explicit choices. The palette shows in the colour
codes tmux keeps (`capture-pane -e`): column titles and other muted text are grey 241 on light
palettes and grey 245 on the dark one.
"""
import re

import pytest

from conftest import TUI, tmux, wait_until

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


def themed(t, colour):
    """The colours of the frame once `colour` (the palette's own) is drawn and the frame is complete
    (a frame reaches tmux in several writes: what is checked as absent must not be still to come)."""
    wait_until(lambda: colours(t), lambda c: colour in c, timeout=10, what=f"colour {colour} on screen")
    t.settled(t.screen())
    c = colours(t)
    assert colour in c, c
    return c


def later_frame(t):
    """The History tab's frame, drawn after every key and terminal answer sent before the `2` that opens it."""
    t.keys("2")
    return t.wait_screen(lambda s: "entry 1 of 230" in s or "Buy cheer" in s, what="the History tab (or a form the 2 went into)")


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
        c = themed(t, 241)
        assert 245 not in c, c                  # light muted grey, not the dark one
        assert "b3" not in c, c                 # no basic yellow on white
        # The answer ("]11;rgb:ffff/…" then "[?1;2c") read as keys would have opened the buy form (b),
        # moved the tab (1) or refreshed (r): nothing of it happened, as a frame drawn after it shows.
        screen = t.screen()
        assert "46 of 46 packs" in screen.splitlines()[1] and "Buy cheer" not in screen, screen  # still the Shop tab
        screen = later_frame(t)
        assert "Buy cheer" not in screen and "entry 1 of 230" in screen, screen
        assert "rgb" not in screen and "11;" not in screen, screen
    finally:
        t.close()


def test_auto_without_an_answer_is_dark_and_colorfgbg_is_the_hint_after_it(stub, tmp_path):
    t = open_shop(stub, tmp_path, "dark")
    try:
        c = themed(t, 245)
        assert 241 not in c, c
    finally:
        t.close()
    hinted = open_shop(stub, tmp_path, "hint", env={"COLORFGBG": "0;15"})
    try:
        c = themed(hinted, 241)
        assert 245 not in c, c
    finally:
        hinted.close()


def test_explicit_themes_and_the_config_and_no_color(stub, tmp_path, white_background):
    # --theme beats the terminal's white: dark palette, colour-blind safe (sky blue 75 for LOCAL).
    t = open_shop(stub, tmp_path, "cb", args=("--theme", "dark-colorblind"))
    try:
        c = themed(t, 75)
        assert 246 in c and "b2" not in c, c
    finally:
        t.close()
    config = tmp_path / "config" / "reiterate-shop"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('theme = "light-colorblind"\n')
    t = open_shop(stub, tmp_path, "conf", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    try:
        c = themed(t, 25)
        assert 241 in c and 28 not in c, c   # blue for LOCAL, not the light palette's green
    finally:
        t.close()
    t = open_shop(stub, tmp_path, "nocolor", env={"NO_COLOR": "1"}, args=("--theme", "light"))
    try:
        # No colour on the first full frame, nor on one drawn after it (nothing comes later in colour).
        t.settled(t.screen())
        assert colours(t) == set() and "LOCAL" in t.screen()
        screen = later_frame(t)
        assert "entry 1 of 230" in screen and colours(t) == set(), screen
    finally:
        t.close()
