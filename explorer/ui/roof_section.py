"""The Devices page's "Roofline ceilings" section: a device's roofs as stored, and "Measure again".

One row per ceiling, compute first (the theoretical peak, then the measured FP32 ceiling of an
FMA loop beside it, and how far apart they are) and then the memory levels nearest the cores
first ("L2 (measured)": 225 GB/s over 88 KiB to 1.3 MiB), the whole basis and method on hover,
then when they were measured and whether the machine was quiet; where the measured FP32 ceiling
and the theoretical peak differ by more than a quarter, a sentence says so and why it may be. The figures are ``explorer.devices.roofs.record_roof``'s,
built once per device and kept in ``AppContext.roofs``: the same the CLI prints and the roofline
draws. A present device has the "Measure again" button (``explorer.ui.roof_measure``); a catalog
GPU's roofs are its spec sheet's.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.devices.model import Device
from explorer.roofs.model import PEAK_GAP_SAID_ABOVE, Ceiling, Roof
from explorer.roofs.texts import peak_gap_text
from explorer.ui.context import AppContext
from explorer.ui.widgets import FieldGroup, set_role
from explorer.units import number_text

TITLE = "Roofline ceilings"


def ceiling_rows(roof: Roof) -> list[tuple[str, str, str]]:
    """(name, value, hover) of each ceiling, compute first, then the levels from the cores out."""
    compute = [c for c in roof.ceilings if c.quantity == "compute"]
    memory = sorted(
        (c for c in roof.ceilings if c.quantity == "memory"),
        key=lambda c: ("L1", "L2", "L3", "DRAM", "").index(c.level),
    )
    return [_row(c) for c in (*compute, *memory)]


def _row(c: Ceiling) -> tuple[str, str, str]:
    value = number_text(c.value, c.unit)
    if c.range_text:
        value += f" over {c.range_text.removeprefix('working sets ')}"
    hover = f"{c.basis}. Method: {c.method.text}" if c.method is not None else c.basis
    return f"{c.name} ({c.kind_text})", value, hover


def peak_rows(roof: Roof) -> list[tuple[str, str, str]]:
    """(name, value, hover) of the measured FP32 ceiling against the theoretical peak: "78% of the
    theoretical peak", the shares' yardstick named; none where either is missing."""
    fma, peak = roof.fma(), roof.theoretical()
    if fma is None or peak is None or peak.value <= 0:
        return []
    gap = peak_gap_text(roof)
    hover = gap or (
        f"Within {PEAK_GAP_SAID_ABOVE:.0%} of each other; shares are taken against the measured FP32 ceiling, "
        f"{number_text(fma.value, fma.unit)}."
    )
    return [("Measured / theoretical FP32", f"{fma.value / peak.value:.0%} of the {peak.kind} peak", hover)]


class RoofSection(QWidget):
    """Shows ``device``'s roof as stored now; ``show_roof`` again after a new measurement."""

    def __init__(self, context: AppContext, device: Device, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.device = device
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.group = FieldGroup(TITLE)
        layout.addWidget(self.group)
        self.note = QLabel()
        self.note.setWordWrap(True)
        set_role(self.note, "caption")
        layout.addWidget(self.note)
        self.measure: Any = None
        present = device.kind == "cpu" or (device.kind == "cuda" and device.usable)
        if present:
            from explorer.ui.roof_measure import MeasureAgain

            self.measure = MeasureAgain(context, lambda: [device.key])
            layout.addWidget(self.measure)
        self.show_roof(context.roof_of(device))

    def show_roof(self, roof: Roof) -> None:
        self.roof = roof
        self.group.clear()
        for name, value, hover in ceiling_rows(roof):
            self.group.add(name, value, hover)
        if not roof.ceilings:
            self.group.add("Ceilings", None, "nothing is known about this device's peaks yet")
        for name, value, hover in peak_rows(roof):
            self.group.add(name, value, hover)
        ridge = roof.ridge_flop_per_byte
        if ridge:
            self.group.add(
                "Ridge point (DRAM)",
                f"{ridge:.3g} FLOP/byte",
                "compute roof (the measured FP32 ceiling where there is one) / DRAM bandwidth",
            )
        note = " ".join(t for t in (peak_gap_text(roof), roof.note) if t)
        self.note.setText(note)
        self.note.setVisible(bool(note))
