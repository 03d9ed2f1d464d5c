"""Occupancy of the chosen block: the numbers, the limiting resource in words, and the three graphs.

Every figure comes from ``explorer.launch.occupancy`` (the occupancy value and the sweeps); this
view only plots them and marks where the current configuration sits.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.launch.limits import ArchLimits
from explorer.launch.occupancy import Occupancy, Sweep, sweep_block_size, sweep_registers, sweep_shared_memory

GRAPHS = (
    ("threads_per_block", "Occupancy vs threads per block", "threads per block"),
    ("regs_per_thread", "Occupancy vs registers per thread", "registers per thread"),
    ("smem_per_block_bytes", "Occupancy vs shared memory per block", "shared memory per block (bytes)"),
)


class OccupancyView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.numbers = QLabel("")
        self.numbers.setStyleSheet("font-size: 15px;")
        self.numbers.setWordWrap(True)
        lay.addWidget(self.numbers)
        self.explain = QLabel("")
        self.explain.setWordWrap(True)
        self.explain.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.explain.setStyleSheet("font-size: 13px; color: #1f2937;")
        lay.addWidget(self.explain)
        self.plots: dict[str, pg.PlotWidget] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._markers: dict[str, pg.ScatterPlotItem] = {}
        self._lines: dict[str, pg.InfiniteLine] = {}
        for key, title, xlabel in GRAPHS:
            pw = pg.PlotWidget(background="w")
            pw.setTitle(title, color="#111827", size="10pt")
            pw.setLabel("left", "occupancy %", color="#374151")
            pw.setLabel("bottom", xlabel, color="#374151")
            pw.setYRange(0, 105, padding=0)
            pw.showGrid(x=True, y=True, alpha=0.25)
            pw.setMouseEnabled(x=False, y=False)
            pw.hideButtons()
            pw.setMinimumHeight(120)
            curve = pw.plot([], [], pen=pg.mkPen("#2563eb", width=2), stepMode=None)
            line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#10b981", width=2, style=Qt.PenStyle.DashLine))
            marker = pg.ScatterPlotItem(size=12, brush=pg.mkBrush("#10b981"), pen=pg.mkPen("#065f46", width=1.5))
            pw.addItem(line)
            pw.addItem(marker)
            self.plots[key], self._curves[key], self._lines[key], self._markers[key] = pw, curve, line, marker
            lay.addWidget(pw, 1)
        self.sweeps: dict[str, Sweep] = {}

    def update_for(self, occ: Occupancy, limits: ArchLimits, regs: int, smem_bytes: int) -> None:
        """Update the text and the graphs for one block configuration (a few tens of ms on Hopper)."""
        self.numbers.setText(
            f"<b>{occ.active_blocks_per_sm}</b> active block{'s' if occ.active_blocks_per_sm != 1 else ''} per SM, "
            f"<b>{occ.active_warps_per_sm}</b> of {occ.max_warps_per_sm} warps: "
            f"<b>{occ.occupancy_pct:.0f}% occupancy</b>, limited by <b>{occ.limiter.replace('_', ' ')}</b>"
        )
        self.explain.setText(occ.explain())
        self.sweeps = {
            "threads_per_block": sweep_block_size(limits, regs, smem_bytes, occ.threads_per_block),
            "regs_per_thread": sweep_registers(limits, occ.threads_per_block, smem_bytes, regs),
            "smem_per_block_bytes": sweep_shared_memory(limits, occ.threads_per_block, regs, smem_bytes),
        }
        for key, sweep in self.sweeps.items():
            ys = [100.0 * v for v in sweep.occupancy]
            self._curves[key].setData(sweep.xs, ys)
            self._lines[key].setValue(sweep.current_x)
            self._markers[key].setData([sweep.current_x], [100.0 * sweep.current_occupancy])
            self.plots[key].setXRange(min(sweep.xs), max(max(sweep.xs), sweep.current_x), padding=0.02)
