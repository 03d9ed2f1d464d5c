"""Measured numbers as text, for the CLI's lines and the panel's table, plot axes and status alike.

Readable units and no invented precision: three significant figures for a time, whole numbers
for large rates. One module, so a time reads the same in a terminal and in the window.
"""

from __future__ import annotations

from explorer.units import number_text

__all__ = ["eta_text", "first_sentences", "number_text", "seconds_text"]


def seconds_text(value_s: float | None, missing: str = "") -> str:
    """A duration in the unit a student reads at a glance (ns, µs, ms, s)."""
    if value_s is None:
        return missing
    magnitude = abs(value_s)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if magnitude >= scale or unit == "ns":
            return f"{value_s / scale:.3g} {unit}"
    return f"{value_s:.3g} s"


def eta_text(eta_s: float | None) -> str:
    """Time left as minutes and seconds; unknown until the first point has been timed."""
    if eta_s is None:
        return "time left: estimating…"
    total = int(round(eta_s))
    if total >= 60:
        return f"time left: about {total // 60} min {total % 60:02d} s"
    return f"time left: about {total} s"


def first_sentences(text: str, limit: int = 2) -> str:
    """The start of a long explanation (a tooltip holds all of it), marked as cut where it is."""
    parts = [p for p in text.replace("\n", " ").split(". ") if p]
    short = ". ".join(parts[:limit])
    return short if len(parts) <= limit else short + ". (Hover for more.)"
