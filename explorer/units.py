"""Numbers as text, one rule for the CLI, the window and the files a run writes: sizes in bytes,
counts with their noun, percentages.

Binary units, as drivers and nvidia-smi report memory (4 GiB, 48 KiB, 1.5 MiB), with trailing
zeros dropped so 80 GiB never reads "80.0 GiB" in one place and "80 GiB" in another. Qt-free: the
CLI and the benchmark worker use it where no Qt is installed.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

_BINARY = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def trimmed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals and thousands separators, trailing zeros dropped (1.50 -> 1.5)."""
    text = f"{x:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def binary_bytes(n: int | float | None, digits: int = 1, missing: str = "n/a") -> str:
    """``n`` bytes in the largest binary unit it reaches: 4 GiB, 48 KiB, 1.5 MiB, 512 B."""
    if n is None:
        return missing
    for unit, size in _BINARY:
        if abs(n) >= size:
            return f"{trimmed(n / size, digits)} {unit}"
    return f"{int(n)} B"


def count(n: int, word: str, plural: str | None = None) -> str:
    """ "1 block", "98 blocks", "1,024 threads", "1 line": thousands separated, the noun agreeing."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def half_up(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` decimals the way a person rounds the number as written: halves
    up, 6.25 -> "6.3" (Python's own formatting rounds the binary value to even and printed 6.2)."""
    exact = Decimal(repr(float(x)))
    return str(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def percent_text(fraction: float, digits: int = 1) -> str:
    """A share as a percentage with at most ``digits`` decimals, halves rounded up and trailing
    zeros dropped: 0.0625 -> "6.3%", 0.125 -> "12.5%", 0.5 -> "50%"."""
    text = half_up(100.0 * fraction, digits)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("0" if text == "-0" else text) + "%"
