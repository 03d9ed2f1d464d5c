"""Read and write problem sizes the way a user types them: 1024, 1e6, 4K / 4KiB (x1024), 1G.

The reading is ``explorer.inputs`` (one reader for the CLI's ``--sizes 64 128``, the panel's sizes
field and every other number), so a size one accepts the others accept too, with the same one-line
message when they do not; this module adds the writing back (``sizes_text``) that reads the same.
"""

from __future__ import annotations

from explorer.inputs import parse_sizes, parse_whole

__all__ = ["parse_size", "parse_sizes", "sizes_range_text", "sizes_text"]


def parse_size(text: str, size_name: str = "size") -> int:
    """One positive whole size in the forms every field takes: '1024', '1e6', '4K'/'4KiB' (x1024), '1G'."""
    return parse_whole(text, size_name, minimum=1)


def sizes_text(sizes: list[int] | tuple[int, ...], binary: bool = False) -> str:
    """Sizes as the user would type them; byte sizes as 4K, 16M, 1G (what ``parse_sizes`` reads)."""
    return ", ".join(_binary(n) if binary else str(n) for n in sizes)


def _binary(n: int) -> str:
    for suffix, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{suffix}"
    return str(n)


def sizes_range_text(sizes: list[int] | tuple[int, ...], binary: bool = False) -> str:
    """Sizes to read, not to type (the hint beside the field): thousands separated ("1,000 …
    10,000,000 (5 sizes)"), a long list as its ends, short enough for one line; where a size has a
    separator the list is split by semicolons, so "1,000; 10,000" reads as two sizes."""
    shown = [_binary(n) if binary else f"{n:,}" for n in sizes]
    if len(shown) > 4:
        return f"{shown[0]} … {shown[-1]} ({len(shown)} sizes)"
    return ("; " if any("," in t for t in shown) else ", ").join(shown)
