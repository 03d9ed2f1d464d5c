"""Roofs in words, made once for the CLI, the Devices page and the roofline alike."""

from __future__ import annotations

import time

from explorer.roofs.model import PEAK_GAP_SAID_ABOVE, Ceiling, Roof
from explorer.units import number_text


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
    """ "L2 (measured): 412 GB/s over working sets 80 KiB to 1.6 MiB. Basis: ... Method: ..." """
    text = c.label
    if c.range_text:
        text += f" over {c.range_text}"
    text = f"{text}. {c.basis}" if c.basis else text
    return f"{text}. Method: {c.method.text}" if c.method is not None else text


def peak_gap_text(roof: Roof) -> str:
    """Where the measured FP32 ceiling and the theoretical peak differ by more than
    ``PEAK_GAP_SAID_ABOVE``, one sentence saying so and why it may be ("" where they agree, or
    either is missing)."""
    fma, peak = roof.fma(), roof.theoretical()
    if fma is None or peak is None or peak.value <= 0:
        return ""
    ratio = fma.value / peak.value
    if abs(ratio - 1.0) <= PEAK_GAP_SAID_ABOVE:
        return ""
    said = (
        f"The measured FP32 ceiling ({number_text(fma.value, 'GFLOP/s')}) is {ratio:.0%} of the "
        f"{peak.kind} peak ({number_text(peak.value, 'GFLOP/s')}); shares are taken against the measured one."
    )
    if ratio < 1.0:
        why = (
            " It may be lower because the cores are shared (in a VM two vCPUs can be one core's two "
            "hardware threads, sharing its FMA pipes, which no CPU flag shows), because of a power or "
            "thermal limit, or because wide vector code runs at a lower clock than the one the peak "
            "is built on (AVX clock offsets)"
        )
        if fma.disturbed:
            why += "; it was also measured while other programs were busy"
        if roof.device.startswith("cuda"):
            why = (
                " It may be lower because of a power or thermal limit (the peak assumes the boost "
                "clock on every SM), or other work on the GPU"
            )
        return said + why + "."
    return said + (
        " It is higher because the peak is built on a reported clock, lower than the one the cores "
        "ran at, or on fewer FMA pipes than this core has."
        if peak.estimate or peak.kind == "spec sheet"
        else " A loop cannot beat a true peak: the peak's FLOP per cycle assumes fewer FMA pipes than "
        "this core has."
    )


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
    gap = peak_gap_text(roof)
    if gap:
        lines.append(gap)
    if roof.ridge_flop_per_byte:
        lines.append(f"ridge point (DRAM): {roof.ridge_flop_per_byte:.3g} FLOP/byte")
    return lines
