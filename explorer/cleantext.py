"""Text from outside the app (a remote agent, a file someone else made) cleaned before a terminal,
a file or the window sees it.

Why: a terminal obeys what it is sent. A hostile agent on a lab server once set the terminal's
title, cleared the screen and printed a fake "all points ok" through a device name and a point's
text; a lesson title can do the same to ``device-explorer lessons``. Escape sequences (CSI, OSC
and the other ESC forms, in their 7- and 8-bit spellings) are removed whole, so no half
sequence is left to be read; the remaining control characters (C0, DEL, C1) and the
bidirectional overrides that make text read differently from what it holds are removed too, and a
lone surrogate (which JSON can spell but no UTF-8 text can hold) becomes U+FFFD.
Single-line text (a name, a point's label) also loses its line breaks, so a value can never add a
line of its own to what the CLI prints.

``visible_controls`` is the last guard for the terminal itself (``explorer.terminal``): whatever
still carries a control character when it is printed shows it as an escape (``\\x1b``) instead
of obeying it. Import-light and Qt-free: the CLI and the agent protocol use it.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any


class _LazyPattern:
    """A regular expression compiled when first used: these character classes take milliseconds
    to compile, and most text (plain ASCII) never needs them."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def sub(self, repl: Any, text: str) -> str:
        return self.compiled.sub(repl, text)


#: ESC sequences whole: CSI (ESC [ ... final), the string ones (OSC ESC ], DCS ESC P, SOS ESC X,
#: PM ESC ^, APC ESC _) up to their terminator (BEL, ESC \\ or ST) or the end of the text, and the
#: short ESC forms; then the same in their 8-bit C1 spellings
_SEQUENCES = _LazyPattern(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)"
    r"|\x1b[ -/]*[0-~]?",
    re.DOTALL,
)
#: control characters other than tab and newline, and the bidirectional controls (Trojan Source)
_CONTROLS = _LazyPattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = _LazyPattern("[\t\n\u2028\u2029]")
#: a lone surrogate (JSON can spell one, "\ud800"; no UTF-8 text, terminal or Qt string can hold it)
_SURROGATES = _LazyPattern("[\ud800-\udfff]")
#: a quick test: text without any of these needs no cleaning
_SUSPECT = _LazyPattern(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


#: tab and newline deleted, so that plain ASCII text left over is printable exactly when it holds
#: no control character (``str.isprintable``: no regular expression needed for most text)
_TAB_NEWLINE = str.maketrans("", "", "\t\n")


def _plain_ascii(text: str) -> bool:
    """ASCII text whose only control characters are tabs and newlines (most of what is printed)."""
    return text.isascii() and text.translate(_TAB_NEWLINE).isprintable()


def is_clean(text: str) -> bool:
    """Whether ``text`` holds nothing ``clean_text`` would take out (one quick search)."""
    if text.isascii() and text.isprintable():
        return True
    return _SUSPECT.search(text) is None


def clean_text(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` without escape sequences and control characters; line breaks and tabs become a
    space unless ``keep_newlines`` (narration, where they shape the paragraphs). ``\\r`` never
    survives: it would let a value overwrite the start of the line it is printed on."""
    if is_clean(text):
        return text
    text = _SEQUENCES.sub("", text)
    if keep_newlines:
        text = text.replace("\r\n", "\n").replace("\u2028", "\n").replace("\u2029", "\n")
    else:
        text = _LINE_BREAKS.sub(" ", text)
    return _SURROGATES.sub("\ufffd", _CONTROLS.sub("", text))


def clean_json(value: Any) -> Any:
    """A parsed JSON value with every string in it (keys too) cleaned as single-line text.

    Walked with a stack, not recursion: JSON nested as deeply as the parser allows must not end
    in a RecursionError here."""
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]  # (container, key, value to clean)
    while stack:
        parent, key, item = stack.pop()
        if isinstance(item, dict):
            copy: Any = {}
            for k, v in item.items():
                k2 = clean_text(k) if isinstance(k, str) else k
                copy[k2] = v
                if isinstance(v, str):
                    copy[k2] = clean_text(v)
                elif isinstance(v, (dict, list)):
                    stack.append((copy, k2, v))
        else:
            copy = list(item)
            for i, v in enumerate(copy):
                if isinstance(v, str):
                    copy[i] = clean_text(v)
                elif isinstance(v, (dict, list)):
                    stack.append((copy, i, v))
        parent[key] = copy
    return root[0]


_VISIBLE = _LazyPattern(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def visible_controls(text: str) -> str:
    """``text`` with each control character (other than tab and newline) written as its escape
    (``\\x1b``, ``\\r``, ``\\u202e``), so a terminal shows it instead of obeying it."""
    if _plain_ascii(text) or not _VISIBLE.search(text):
        return text
    return _VISIBLE.sub(lambda m: repr(m.group())[1:-1], text)


__all__ = ["clean_json", "clean_text", "is_clean", "visible_controls"]
