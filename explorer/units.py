"""Numbers as text, one rule for the CLI, the window and the files a run writes: sizes in bytes,
counts with their noun, percentages.

Binary units, as drivers and nvidia-smi report memory (4 GiB, 48 KiB, 1.5 MiB), with trailing
zeros dropped so 80 GiB never reads "80.0 GiB" in one place and "80 GiB" in another. Qt-free: the
CLI and the benchmark worker use it where no Qt is installed.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

_BINARY: tuple[tuple[str, float], ...] = (
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
)


def trimmed(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals and thousands separators, trailing zeros dropped (1.50 -> 1.5)."""
    text = f"{x:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _in_units(x: float, units: tuple[tuple[str, float], ...], digits: int) -> str | None:
    """``x`` in the largest of ``units`` (largest first) it reaches; None below the smallest."""
    for unit, size in units:
        if abs(x) >= size:
            return f"{trimmed(x / size, digits)} {unit}"
    return None


def binary_bytes(n: int | float | None, digits: int = 1, missing: str = "n/a") -> str:
    """``n`` bytes in the largest binary unit it reaches: 4 GiB, 48 KiB, 1.5 MiB, 512 B."""
    if n is None:
        return missing
    return _in_units(n, _BINARY, digits) or f"{int(n)} B"


_DECIMAL_RATES: tuple[tuple[str, float], ...] = (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3))


def byte_rate(bytes_per_s: float | None, missing: str = "n/a") -> str:
    """A transfer rate in decimal units, as bandwidths are quoted (PCIe gen5 x16: 63 GB/s):
    ``48.2 GB/s``, ``2 MB/s``, ``0 B/s``."""
    if bytes_per_s is None:
        return missing
    return _in_units(bytes_per_s, _DECIMAL_RATES, 1) or f"{bytes_per_s:.0f} B/s"


def share_pct(value: float | None, missing: str = "n/a") -> str:
    """A percentage that may be tiny: two significant digits below 10 % (one warp on one SM of
    132 is ``0.76 %``, never a rounded ``1 %``), whole numbers above; halves rounded up."""
    if value is None:
        return missing
    if 0 < abs(value) < 10:
        exact = Decimal(repr(float(value)))
        digits = 1 - exact.adjusted()  # two significant digits: 0.756 -> 2 decimals, 6.25 -> 1
        text = format(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return f"{text} %"
    return f"{half_up(value, 0)} %"


def number_text(value: float | None, unit: str = "") -> str:
    """A rate or count: 1,234 GFLOP/s above 100, three significant figures below."""
    if value is None:
        return ""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}".strip()


def count(n: int, word: str, plural: str | None = None) -> str:
    """ "1 block", "98 blocks", "1,024 threads", "1 line": thousands separated, the noun agreeing."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def half_up(x: float, digits: int) -> str:
    """``x`` rounded to ``digits`` decimals the way a person rounds the number as written: halves
    up, 6.25 -> "6.3" (Python's own formatting rounds the binary value to even and printed 6.2)."""
    exact = Decimal(repr(float(x)))
    return format(exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP), "f")


def percent_text(fraction: float, digits: int = 1, trim: bool = True) -> str:
    """A share as a percentage with ``digits`` decimals, halves rounded up: 0.0625 -> "6.3%",
    0.125 -> "12.5%"; trailing zeros dropped (0.5 -> "50%") unless ``trim`` is False (a column
    of figures: 0.09 -> "9.0%")."""
    return pct_text(100.0 * fraction, digits, trim)


def pct_text(value: float, digits: int = 1, trim: bool = True) -> str:
    """``percent_text`` of a value already in percent (NVML's utilization, 14.5 -> "15%" with
    no decimals)."""
    text = half_up(value, digits)
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.lstrip("-").strip("0.") == "":
        text = text.lstrip("-")  # a negative share rounded to zero reads "0", not "-0"
    return text + "%"
