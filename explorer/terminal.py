"""Text to a terminal: one that may not speak UTF-8, and one that must never obey what it prints.

The app's output uses a few characters beyond ASCII ("µs", "≈", "…", "×"). Under
``PYTHONIOENCODING=ascii``, an old locale or a pipe into a Latin-1 tool, printing one of them
raised UnicodeEncodeError, a traceback in place of the result. Decided: keep UTF-8 where the
terminal has it, and where it does not, write each such character's ASCII spelling ("us",
"~", "...", "x"); a character with none (and a file name's undecodable byte) becomes a
backslash escape, so nothing is lost silently and nothing raises.

And nothing the CLI prints can drive the terminal: ``guarded_streams`` makes stdout and stderr
write any control character (an ESC that would start a sequence, a ``\r`` that would overwrite
the line) as its visible escape. Text from a remote or a file is cleaned where it enters
(``explorer.cleantext``); this is the last guard, for whatever path was missed. The app's own
output holds no control character but the newline and the tab, which pass.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from explorer.cleantext import visible_controls

ERRORS = "device-explorer-ascii"

#: the characters our own output uses, spelled in ASCII the way a person would type them
ASCII_SPELLINGS = {
    "µ": "u",
    "μ": "u",
    "≈": "~",
    "…": "...",
    "×": "x",
    "—": "-",
    "–": "-",
    "−": "-",
    "²": "^2",
    "³": "^3",
    "°": " deg",
    "≥": ">=",
    "≤": "<=",
    "→": "->",
    "←": "<-",
    "±": "+/-",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "·": ".",
    "•": "*",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
}


def _spell(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    text = "".join(
        ASCII_SPELLINGS.get(ch) or ch.encode("ascii", "backslashreplace").decode("ascii") for ch in bad
    )
    return text, exc.end


codecs.register_error(ERRORS, _spell)


def tolerant_streams() -> None:
    """Make stdout and stderr write what they cannot encode in ASCII spellings instead of raising."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors != ERRORS:
            try:
                stream.reconfigure(errors=ERRORS)
            except (ValueError, OSError):  # closed or detached: nothing will be written there anyway
                pass


class ControlGuard:
    """A text stream that writes control characters as their escapes (``\\x1b``), and is the
    stream it wraps in every other respect (``flush``, ``isatty``, ``fileno``, ``encoding``)."""

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        self.wrapped.write(visible_controls(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


@contextlib.contextmanager
def guarded_streams() -> Iterator[None]:
    """Inside the ``with``, ``sys.stdout`` and ``sys.stderr`` are ``ControlGuard``s; each is put
    back afterwards unless something else replaced it meanwhile (a closed pipe's devnull)."""
    saved = {name: getattr(sys, name) for name in ("stdout", "stderr")}
    guards = {}
    for name, stream in saved.items():
        if stream is not None and not isinstance(stream, ControlGuard):
            guards[name] = ControlGuard(stream)
            setattr(sys, name, guards[name])
    try:
        yield
    finally:
        for name, guard in guards.items():
            if getattr(sys, name) is guard:
                setattr(sys, name, saved[name])
