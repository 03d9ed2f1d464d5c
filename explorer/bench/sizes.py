"""Read the sizes a user typed: whole positive numbers, with an optional K, M or G (x1024).

Each bad entry is named in the message, so the user sees which one to fix.
"""

from __future__ import annotations

import re

from explorer.errors import UserError

_SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_ENTRY = re.compile(r"^(\d+)\s*([kmg]?)(?:i?b)?$", re.IGNORECASE)


def parse_sizes(text: str) -> list[int]:
    """Sizes in the order typed, duplicates dropped; ``UserError`` naming the first bad entry."""
    entries = [e for e in re.split(r"[,\s;]+", text.strip()) if e]
    if not entries:
        raise UserError("no sizes given; type at least one whole number above 0, e.g. 64, 128, 256")
    sizes: list[int] = []
    for entry in entries:
        match = _ENTRY.match(entry)
        if match is None:
            if re.fullmatch(r"-\d+(\.\d*)?\s*[kmg]?", entry, re.IGNORECASE):
                raise UserError(f"size {entry!r} is negative; sizes must be whole numbers above 0")
            raise UserError(f"size {entry!r} is not a whole number; sizes must be whole numbers above 0")
        value = int(match.group(1)) * _SUFFIX[match.group(2).lower()]
        if value == 0:
            raise UserError(f"size {entry!r} is zero; sizes must be whole numbers above 0")
        if value not in sizes:
            sizes.append(value)
    return sizes


def sizes_text(sizes: list[int] | tuple[int, ...], binary: bool = False) -> str:
    """Sizes as the user would type them; byte sizes as 4K, 16M, 1G (what ``parse_sizes`` reads)."""
    return ", ".join(_binary(n) if binary else str(n) for n in sizes)


def _binary(n: int) -> str:
    for suffix, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


def sizes_range_text(sizes: list[int] | tuple[int, ...], binary: bool = False) -> str:
    """A long default list as its ends ("64 … 8192, 8 sizes"), short enough for one line."""
    if len(sizes) <= 4:
        return sizes_text(sizes, binary)
    return f"{sizes_text(sizes[:1], binary)} … {sizes_text(sizes[-1:], binary)} ({len(sizes)} sizes)"
