"""Numbers and names as words, one rule each for the CLI, the window, the lessons and the files.

Why one module: a share written "12.5%" by one page and "12 %" by another, from helpers on
different scales (one took 0..1, another 0..100), let the same value read two ways and let a
caller pass the wrong scale unnoticed. So a share is always a *fraction* (0..1) here, and the
callers whose readings arrive in percent (NVML's utilization) divide by 100 where they read them.
The same for plurals ("1 block", "98 blocks") and for a device or roof named on a remote
machine ("NVIDIA H100 ON gpu-lab"). Base module: imports nothing from the app, Qt-free.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal


def percent(
    fraction: float | None,
    *,
    decimals: int = 1,
    fine: bool = False,
    spaced: bool = False,
    missing: str = "n/a",
) -> str:
    """A share (0..1) as a percentage: 0.125 -> "12.5%", 0.0625 -> "6.3%", 0.0039 -> "0.4%", 1.0 -> "100%".

    At most ``decimals`` decimals, trailing zeros dropped (one rule everywhere, tables included:
    "9%", never "9.0%" beside "9%"); halves round up, on the share as written (0.0625 is 6.25 %,
    shown "6.3%", where Python's own formatting rounds the binary value to even and printed
    "6.2%"). A share too small to show that way shows two significant digits instead (never
    "0%"), and one short of the whole never reads "100%" (">99.9%"). ``fine`` shows two
    significant digits all the way below 10 %, for the readings where a tiny share is the lesson
    (one warp on one SM of 132 is "0.76 %", not "1 %"). ``spaced`` writes "12 %", as the readings
    tables do; ``None`` (not measured) is ``missing``."""
    if fraction is None or not math.isfinite(fraction):
        return missing
    value = Decimal(repr(float(fraction))).scaleb(2)  # exact: the share as written, times 100
    sign = " %" if spaced else "%"
    text = _trimmed(_half_up(value, decimals))
    if value != 0 and (Decimal(text) == 0 or (fine and abs(value) < 10)):
        text = _two_significant(value)
    elif Decimal(text) == 100 and value < 100:
        return f">{100 - 10**-decimals:.{decimals}f}{sign}"
    return text + sign


def _half_up(value: Decimal, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, a tie going away from zero, as a person rounds."""
    return format(value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), "f")


def _two_significant(value: Decimal) -> str:
    """0.7575 -> "0.76", 6.25 -> "6.3", 1e-7 -> "0.0000001": never a rounded zero, never 1e-07."""
    return _trimmed(_half_up(value, max(0, 1 - value.adjusted())))


def _trimmed(text: str) -> str:
    """ "12.50" -> "12.5", "50.0" -> "50"; "-0" -> "0"."""
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def from_percent(value_pct: float | None) -> float | None:
    """A reading given in percent (NVML's utilization, GPM's SM activity: 0..100) as the share
    ``percent`` takes; ``None`` stays ``None`` (not read)."""
    return None if value_pct is None else value_pct / 100


def count(n: int, word: str, plural: str | None = None) -> str:
    """ "1 block", "98 blocks", "1,024 threads": thousands separated, the noun agreeing
    (``plural`` for a noun that does not take an s: "1 process", "2 processes")."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def on_host(what: str, host: str | None) -> str:
    """A device, roof or run named where it is: "NVIDIA H100 ON gpu-lab"; ``what`` alone for
    this machine (``host`` empty or ``None``). The capitals set the host apart from the name,
    which may hold an "on" of its own."""
    return f"{what} ON {host}" if host else what


__all__ = ["count", "from_percent", "on_host", "percent"]
