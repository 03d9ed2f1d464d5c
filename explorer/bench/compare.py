"""Arrange streamed points into plot series (Qt-free, so it is tested without a window).

The plot draws one line per variant ("cpu", "cuda:0", "cuda:0 pinned" ...). Error rows are kept
in the table but never drawn: a failed point has no time, and a zero would lie on a log axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Series:
    variant: str
    device: str
    unit: str
    sizes: list[int] = field(default_factory=list)
    size_labels: list[str] = field(default_factory=list)
    median_s: list[float] = field(default_factory=list)
    throughput: list[float | None] = field(default_factory=list)
    peak: float | None = None


def build_series(points: list[Any]) -> list[Series]:
    """One series per variant, sizes ascending; a re-measured size replaces the older point."""
    latest: dict[tuple[str, int], Any] = {}
    order: list[str] = []
    for p in points:
        if p.error is not None or p.median_s is None:
            continue
        if p.variant not in order:
            order.append(p.variant)
        latest[(p.variant, p.size)] = p
    series: list[Series] = []
    for variant in order:
        rows = sorted((p for (v, _), p in latest.items() if v == variant), key=lambda p: p.size)
        first = rows[0]
        s = Series(variant=variant, device=first.device, unit=first.throughput_unit)
        for p in rows:
            s.sizes.append(p.size)
            s.size_labels.append(tick_label(p.size, p.size_label))
            s.median_s.append(p.median_s)
            s.throughput.append(p.throughput)
            if p.peak is not None:
                s.peak = p.peak
        series.append(s)
    return series


def speedup_series(series: list[Series]) -> list[tuple[str, list[int], list[float]]]:
    """GPU over CPU: CPU median / GPU median at each size both measured (above 1, the GPU wins).

    The CPU reference is the first CPU variant measured (``speedup_reference``); each GPU
    variant gets its own curve.
    """
    cpu = speedup_reference(series)
    if cpu is None:
        return []
    cpu_by_size = dict(zip(cpu.sizes, cpu.median_s, strict=True))
    curves = []
    for s in series:
        if s.device == "cpu":
            continue
        sizes = [n for n in s.sizes if n in cpu_by_size]
        ratios = [cpu_by_size[n] / t for n, t in zip(s.sizes, s.median_s, strict=True) if n in cpu_by_size and t > 0]
        if sizes and len(ratios) == len(sizes):
            curves.append((s.variant, sizes, ratios))
    return curves


def speedup_reference(series: list[Series]) -> Series | None:
    return next((s for s in series if s.device == "cpu"), None)


def tick_label(size: int, size_label: str) -> str:
    """A short axis label: the engine's own for byte sizes ("4 KiB"), else 100, 10k, 30M."""
    if size_label.endswith("B"):
        return size_label
    if size < 10_000:
        return str(size)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size >= scale:
            return f"{size / scale:.3g}{suffix}"
    return str(size)
