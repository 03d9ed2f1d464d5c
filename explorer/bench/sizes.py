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
    """A long default list as its ends ("64 … 8192 (8 sizes)"), short enough for one line."""
    if len(sizes) <= 4:
        return sizes_text(sizes, binary)
    return f"{sizes_text(sizes[:1], binary)} … {sizes_text(sizes[-1:], binary)} ({len(sizes)} sizes)"
