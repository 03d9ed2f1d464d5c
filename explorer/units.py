"""Sizes in bytes as text, one rule for the CLI, the window and the files a run writes.

Binary units, as drivers and nvidia-smi report memory (4 GiB, 48 KiB, 1.5 MiB), with trailing
zeros dropped so 80 GiB never reads "80.0 GiB" in one place and "80 GiB" in another. Qt-free: the
CLI and the benchmark worker use it where no Qt is installed.
"""

from __future__ import annotations

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


def number_text(value: float | None, unit: str = "") -> str:
    """A rate or count: 1,234 GFLOP/s above 100, three significant figures below."""
    if value is None:
        return ""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}".strip()
