"""Roofs in words, made once for the CLI, the Devices page and the roofline alike."""

from __future__ import annotations

import time

from explorer.roofs.model import Ceiling, Roof


def when_text(measured_at: float, now: float | None = None) -> str:
    """ "measured 3 days ago (2026-11-20 14:02 UTC)" """
    age = max(0.0, (time.time() if now is None else now) - measured_at)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(measured_at))
    if age < 120:
        ago = "just now"
    elif age < 7200:
        ago = f"{age / 60:.0f} minutes ago"
    elif age < 2 * 86400:
        ago = f"{age / 3600:.0f} hours ago"
    else:
        ago = f"{age / 86400:.0f} days ago"
    return f"measured {ago} ({when})"


def ceiling_line(c: Ceiling) -> str:
    """ "L2 (measured): 412 GB/s over working sets 80 KiB to 1.6 MiB. Basis: ..." """
    text = c.label
    if c.range_text:
        text += f" over {c.range_text}"
    return f"{text}. {c.basis}" if c.basis else text


def roof_lines(roof: Roof) -> list[str]:
    """The roof as the CLI and the Devices page list it: where it comes from, then each ceiling
    (compute first, then the memory levels nearest the cores first), then the ridge point."""
    lines = [roof.note] if roof.note else []
    compute = [c for c in roof.ceilings if c.quantity == "compute"]
    memory = sorted(
        (c for c in roof.ceilings if c.quantity == "memory"),
        key=lambda c: ("L1", "L2", "L3", "DRAM", "").index(c.level),
    )
    lines += [ceiling_line(c) for c in (*compute, *memory)]
    if roof.ridge_flop_per_byte:
        lines.append(f"ridge point (DRAM): {roof.ridge_flop_per_byte:.3g} FLOP/byte")
    return lines
