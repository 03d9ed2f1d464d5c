"""Turn the core's numbers into the short strings a student reads on screen.

Only unit scaling and wording live here: every value arrives computed by the core, and a
value the core could not read arrives as ``None`` and becomes ``NA`` (the caller adds the
reason as a tooltip).
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.units import binary_bytes, trimmed

NA = "n/a"


def quantity(n: int | float | None, unit: str = "") -> str:
    """ "1,024" or "384 bit" (a whole number grouped, else one decimal); "n/a" for an unknown one."""
    if n is None:
        return NA
    text = f"{int(n):,}" if float(n).is_integer() else f"{n:,.1f}"
    return f"{text} {unit}".strip()


def mhz(value: float | None) -> str:
    return NA if value is None else f"{value:,.0f} MHz"


def clocks(current: float | None, maximum: float | None, base: float | None = None) -> str | None:
    """ "1,590 MHz (max 1,785)"; ``None`` when no clock at all is known."""
    parts = []
    if current is not None:
        parts.append(mhz(current))
    if base is not None:
        parts.append(f"base {base:,.0f} MHz" if not parts else f"base {base:,.0f}")
    if maximum is not None:
        parts.append(f"max {maximum:,.0f} MHz" if not parts else f"max {maximum:,.0f}")
    if not parts:
        return None
    return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


def gflops(value: float | None) -> str:
    if value is None:
        return NA
    if value >= 1000:
        return f"{trimmed(value / 1000, 1)} TFLOP/s"
    return f"{trimmed(value, 1)} GFLOP/s"


def bandwidth(gb_per_s: float | None) -> str:
    return NA if gb_per_s is None else f"{trimmed(gb_per_s, 1)} GB/s"


def celsius(value: float | None) -> str:
    return NA if value is None else f"{value:.0f} °C"


def watts(value: float | None) -> str:
    return NA if value is None else f"{trimmed(value, 1)} W"


def dims(value: Sequence[int] | None) -> str:
    return NA if value is None else " × ".join(f"{v:,}" for v in value)


def used_of_total(used: int | None, total: int | None) -> str:
    if used is None:
        return NA
    if total is None:
        return binary_bytes(used)
    return f"{binary_bytes(used)} of {binary_bytes(total)}"


def text(value: object | None) -> str:
    if value is None or value == "":
        return NA
    return str(value)


def shorten_middle(value: str | None, keep: int = 26) -> str | None:
    """Long identifiers (UUIDs) keep their start and end, which is how people compare them."""
    if value is None or len(value) <= keep:
        return value
    head = keep // 2
    return f"{value[:head]}…{value[-(keep - head - 1) :]}"
