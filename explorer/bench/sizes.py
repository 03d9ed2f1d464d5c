"""Read and write problem sizes the way a user types them: 1024, 1e6, 4K / 4KiB (x1024), 1G.

One reader serves the CLI (``--sizes 64 128``) and the panel's sizes field ("64, 128, 256"), so a
size that one accepts the other accepts too, with the same one-line message when it does not.
"""

from __future__ import annotations

import re

from explorer.errors import UserError

_SUFFIXES = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(k|m|g)?(?:i?b)?\s*$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[,\s;]+")


def parse_size(text: str, size_name: str = "size") -> int:
    """A positive whole size: '1024', '1e6', '4K'/'4KiB'/'4KB' (x1024), '1G'. UserError otherwise."""
    m = _SIZE_RE.match(str(text))
    if not m:
        raise UserError(f"{size_name} must be a positive whole number (e.g. 1024, 1e6, 4K, 1G); got '{text}'")
    value = float(m.group(1)) * _SUFFIXES[(m.group(2) or "").lower()]
    if value <= 0 or value != int(value):
        raise UserError(f"{size_name} must be a positive whole number; got '{text}'")
    return int(value)


def parse_sizes(text: str, size_name: str = "size") -> list[int]:
    """Sizes separated by commas, spaces or semicolons, in the order typed, duplicates dropped.

    The first bad entry is the one the message names, so the user knows which to fix.
    """
    entries = [e for e in _SEPARATORS.split(str(text).strip()) if e]
    if not entries:
        raise UserError(
            f"no sizes given; type at least one {size_name}, a whole number above 0, e.g. 64, 128, 256"
        )
    return list(dict.fromkeys(parse_size(e, size_name) for e in entries))


def sizes_text(sizes: list[int] | tuple[int, ...], binary: bool = False) -> str:
    """Sizes as the user would type them; byte sizes as 4K, 16M, 1G (what ``parse_sizes`` reads)."""
    return ", ".join(_binary(n) if binary else str(n) for n in sizes)


def _binary(n: int) -> str:
    for suffix, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


def sizes_range_text(sizes: list[int] | tuple[int, ...], binary: bool = False) -> str:
    """A long default list as its ends ("64 … 8192 (8 sizes)"), short enough for one line."""
    if len(sizes) <= 4:
        return sizes_text(sizes, binary)
    return f"{sizes_text(sizes[:1], binary)} … {sizes_text(sizes[-1:], binary)} ({len(sizes)} sizes)"
