"""Occupancy of the chosen block: the numbers, the limiting resource in words, and the three graphs.

Every figure comes from ``explorer.launch.occupancy`` (the occupancy value and the sweeps); this
view only plots them and marks where the current configuration sits. The graphs are painted by
``sweep_graph.SweepGraph``, not pyqtgraph: see that module for why.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.launch.limits import ArchLimits
from explorer.launch.occupancy import Occupancy, Sweep, sweep_block_size, sweep_registers, sweep_shared_memory
from explorer.ui.visualizer.sweep_graph import SweepGraph

GRAPHS = (
    ("threads_per_block", "Occupancy vs block size", "threads per block"),
    ("regs_per_thread", "Occupancy vs registers", "registers per thread"),
    ("smem_per_block_bytes", "Occupancy vs shared memory", "shared memory per block (bytes)"),
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
        self.explain.setStyleSheet("font-size: 13px;")
        lay.addWidget(self.explain)
        self.plots: dict[str, SweepGraph] = {}
        for key, title, xlabel in GRAPHS:
            graph = SweepGraph(title, xlabel)
            self.plots[key] = graph
            lay.addWidget(graph, 1)
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
            self.plots[key].set_sweep(sweep)
