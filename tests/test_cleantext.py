"""Text from a remote or someone else's file is data: escape sequences are
removed whole, control characters and bidirectional overrides go, a single-line value cannot add
a line of its own, and what the CLI prints never drives the terminal."""

from __future__ import annotations

import contextlib
import io
import re

from hypothesis import given
from hypothesis import strategies as st

from explorer import cli
from explorer.cleantext import clean_json, clean_text, visible_controls
from explorer.terminal import ControlGuard, guarded_streams

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def test_escape_sequences_are_removed_whole():
    assert clean_text("\x1b]0;pwned\x07GPU\x1b[2J\x1b[H") == "GPU"
    assert clean_text("a\x1b[38;2;255;0;0mred\x1b[0m") == "ared"
    assert clean_text("\x9b31mX\x9d8;;http://x\x9cY") == "XY"  # the 8-bit spellings too
    assert clean_text("\x1bPq#0;2;0;0;0\x1b\\after") == "after"  # a DCS string
    assert clean_text("\x1b]0;never ended") == ""  # an unterminated string takes the rest
    assert clean_text("bidi \u202eevil\u202c") == "bidi evil"


def test_a_single_line_value_cannot_add_a_line_but_narration_keeps_its_paragraphs():
    assert clean_text("n=16\nall points ok\r") == "n=16 all points ok"
    assert clean_text("one\r\ntwo\n\nthree\x1b[2J", keep_newlines=True) == "one\ntwo\n\nthree"


def test_json_is_cleaned_everywhere_even_nested_deeper_than_recursion_goes():
    deep: list = ["\x1b[2Jx"]
    for _ in range(100_000):
        deep = [deep]
    cleaned = clean_json({"k\x1b[1m": deep, "n": 1, "f": None})
    inner = cleaned["k"]
    for _ in range(100_000):
        inner = inner[0]
    assert inner == ["x"] and cleaned["n"] == 1 and cleaned["f"] is None


#: any text at all, lone surrogates included (JSON can spell them: "\ud800")
ANY_TEXT = st.text(st.characters(blacklist_categories=()))


@given(ANY_TEXT)
def test_cleaned_text_holds_no_control_character_and_is_stable(text):
    once = clean_text(text)
    assert not CONTROL.search(once.replace("\t", ""))
    once.encode("utf-8")  # no lone surrogate either: every terminal, log and Qt string can hold it
    assert clean_text(once) == once
    kept = clean_text(text, keep_newlines=True)
    assert not CONTROL.search(kept.replace("\n", "").replace("\t", ""))


@given(ANY_TEXT)
def test_visible_controls_show_every_control_character(text):
    shown = visible_controls(text)
    assert not CONTROL.search(shown.replace("\n", "").replace("\t", ""))


def test_the_cli_s_streams_show_control_characters_instead_of_obeying_them():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), guarded_streams():
        import sys

        assert isinstance(sys.stdout, ControlGuard)
        print("title\x1b]0;pwned\x07 and \r overwrite")
    assert out.getvalue() == "title\\x1b]0;pwned\\x07 and \\r overwrite\n"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli.main(["occupancy", "--cc", "\x1b[2J7.5", "--threads", "32"]) == 2
    assert "\x1b" not in err.getvalue() and "\\x1b[2J" in err.getvalue()
