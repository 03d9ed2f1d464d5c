"""Sizes in bytes as text, one rule for the CLI, the window and the files a run writes (shares
and plurals are explorer.words').

Binary units, as drivers and nvidia-smi report memory (4 GiB, 48 KiB, 1.5 MiB), with trailing
zeros dropped so 80 GiB never reads "80.0 GiB" in one place and "80 GiB" in another. Qt-free: the
CLI and the benchmark worker use it where no Qt is installed.
"""

from __future__ import annotations

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


def number_text(value: float | None, unit: str = "") -> str:
    """A rate or count: 1,234 GFLOP/s above 100, three significant figures below."""
    if value is None:
        return ""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}".strip()
