"""Text to a terminal that may not speak UTF-8.

The app's output uses a few characters beyond ASCII ("µs", "≈", "…", "×"). Under
``PYTHONIOENCODING=ascii``, an old locale or a pipe into a Latin-1 tool, printing one of them
raised UnicodeEncodeError, a traceback in place of the result. Decided: keep UTF-8 where the
terminal has it, and where it does not, write each such character's ASCII spelling ("us",
"~", "...", "x"); a character with none (and a file name's undecodable byte) becomes a
backslash escape, so nothing is lost silently and nothing raises.
"""

from __future__ import annotations

import codecs
import io
import sys

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
