"""Occupancy of the chosen block: the numbers, the limiting resource in words, and the three graphs.

A view of the ``LaunchSession``'s edited side (the launch the form shows). Every figure and every
sentence comes from the core (``explorer.launch.occupancy`` for the values and
sweeps, ``explorer.launch.texts`` for the words the CLI prints too); this view only shows them and
marks where the current configuration sits. The graphs are painted by ``sweep_graph.SweepGraph``,
not pyqtgraph: see that module for why. Predict (the button at its top) covers the numbers, words
and graphs until the student commits a prediction of the occupancy (``explorer.quiz.page_predict``).
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from explorer.devices.limits import ArchLimits
from explorer.errors import UserError
from explorer.launch.schedule import LaunchPlan
from explorer.launch.session import LaunchSession
from explorer.launch.sweep import Sweep, sweep_block_size, sweep_registers, sweep_shared_memory
from explorer.launch.texts import (
    CANNOT_LAUNCH_ON_GRAPHS,
    THEORETICAL_NOTE,
    gpu_fill,
    html,
    occupancy_headline,
)
from explorer.quiz.page_predict import PagePredict, occupancy_params
from explorer.ui.predict_box import PredictBox, cover_label, predict_button
from explorer.ui.theme import current_theme
from explorer.ui.visualizer.sweep_graph import SweepGraph

GRAPHS = (
    ("threads_per_block", "Occupancy vs block size", "threads per block"),
    ("regs_per_thread", "Occupancy vs registers", "registers per thread"),
    ("smem_per_block_bytes", "Occupancy vs shared memory", "shared memory per block (bytes)"),
)


def _breakable(text: str) -> str:
    """Let a long CUDA identifier (cudaFuncAttributeMaxDynamicSharedMemorySize) wrap between its
    words, with zero-width spaces, instead of pushing the narrow column wider than the window."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "\u200b", text)


def _label(text_size: str | None = None) -> QLabel:
    label = QLabel("")
    label.setWordWrap(True)
    # the column's width is the tab's, whatever the words: they wrap, the scroll area scrolls
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if text_size is not None:  # "small": the theme's stylesheet sizes it with the window's text
        label.setProperty("textSize", text_size)
    return label


class OccupancyView(QWidget):
    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        # the words grow with the launch (an opt-in note, a long explanation): the column scrolls
        # rather than squeeze a wrapped label and cut its last lines off
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        self.scroll_area.setWidget(body)
        outer.addWidget(self.scroll_area)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(4, 4, 4, 4)
        self.predict = PagePredict(
            "occupancy", "occupancy", "launch visualizer page", concepts=("occupancy", "limiter")
        )
        self.predict_button = predict_button(
            "Predict, then reveal: the occupancy of the block asks for your prediction first and "
            "shows its numbers, words and graphs once you commit it"
        )
        self.predict_button.toggled.connect(self.predict.set_on)
        lay.addWidget(self.predict_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.numbers = _label()
        self.numbers.setToolTip(THEORETICAL_NOTE)
        lay.addWidget(self.numbers)
        self.fill = _label("small")  # how much of the whole GPU the launch fills, beside the per-SM figure
        self.fill.setToolTip(THEORETICAL_NOTE)
        lay.addWidget(self.fill)
        self.notes = _label()  # allowed but notable: shared memory that needs the opt-in
        self.notes.setProperty("role", "warning")
        self.notes.hide()
        lay.addWidget(self.notes)
        self.explain = _label("small")
        lay.addWidget(self.explain)
        self.plots: dict[str, SweepGraph] = {}
        for key, title, xlabel in GRAPHS:
            graph = SweepGraph(title, xlabel)
            self.plots[key] = graph
            lay.addWidget(graph, 1)
        self.graph_note = _label()
        self.graph_note.setText(CANNOT_LAUNCH_ON_GRAPHS)
        self.graph_note.setProperty("role", "caption")
        lay.addWidget(self.graph_note)
        self.cover = cover_label(
            "Predict first: the occupancy's numbers, words and graphs show once you commit your answer."
        )
        lay.addWidget(self.cover, 1)
        self.sweeps: dict[str, Sweep] = {}
        self._plan: LaunchPlan | None = None
        self.predict_box = PredictBox(self.predict, self._cover, show_rule=False)  # explain says it
        lay.insertWidget(1, self.predict_box)
        self._shown: tuple[LaunchPlan | None, ArchLimits | None, str] | None = None
        session.events.launch.connect(self._show_session)
        self._show_session()

    def _show_session(self) -> None:
        """The edited side's occupancy, or why it has none; the sweeps only when the launch
        changed (another side selected with the same launch costs nothing)."""
        side = self.session.edited_side
        shown = (side.plan, side.limits, side.problem)
        if shown == self._shown:
            return
        self._shown = shown
        if side.plan is not None and side.limits is not None:
            self.update_for(side.plan, side.limits, side.notes)
            c = side.plan.config
            try:
                self.predict.show(
                    occupancy_params(side.limits, c.block.count, c.regs_per_thread, c.shared_mem_bytes)
                )
            except UserError as exc:  # a GPU whose own limits the question cannot name: shown, with why
                self.predict.show(None, str(exc))
        else:
            self.show_invalid(side.problem)
            self.predict.show(None, "this launch cannot run, so it has no occupancy")
        self._cover(self.predict.hidden)

    def _cover(self, hidden: bool) -> None:
        """While the answer is hidden the numbers, words and graphs give it away: a box asking
        for the prediction stands in their place."""
        valid = self._plan is not None
        for label in (self.numbers, self.fill, self.explain):
            label.setVisible(not hidden)
        self.notes.setVisible(not hidden and valid and bool(self.notes.text()))
        for w in (*self.plots.values(), self.graph_note):
            w.setVisible(not hidden and valid)
        self.cover.setVisible(hidden)

    def apply_text_scale(self) -> None:
        for graph in self.plots.values():
            graph.apply_text_scale()

    def update_for(self, plan: LaunchPlan, limits: ArchLimits, notes: list[str]) -> None:
        """Update the text and the graphs for one launch (a few tens of ms on Hopper).

        ``notes`` are the core's advisories about the block (``explorer.launch.config.notes``),
        such as the shared-memory opt-in that ``device-explorer occupancy`` prints.
        """
        self._plan = plan
        occ, c = plan.occupancy, plan.config
        self._write_texts()
        self.explain.setText(occ.explain())
        self.notes.setText(_breakable("\n".join(f"Note: {n}." for n in notes)))
        self.notes.setVisible(bool(notes))
        regs, smem = c.regs_per_thread, c.shared_mem_bytes
        self.sweeps = {
            "threads_per_block": sweep_block_size(limits, regs, smem, occ.threads_per_block),
            "regs_per_thread": sweep_registers(limits, occ.threads_per_block, smem, regs),
            "smem_per_block_bytes": sweep_shared_memory(limits, occ.threads_per_block, regs, smem),
        }
        for key, sweep in self.sweeps.items():
            self.plots[key].set_sweep(sweep)
            self.plots[key].show()
        self.graph_note.show()

    def _write_texts(self) -> None:
        if self._plan is None:
            return
        colour = current_theme().error
        self.numbers.setText(html(occupancy_headline(self._plan.occupancy), colour))
        self.fill.setText(html(gpu_fill(self._plan), colour))

    def show_invalid(self, message: str) -> None:
        """No occupancy for a launch that cannot run: say so rather than keep the last one's figures."""
        self._plan = None
        self.sweeps = {}
        self.numbers.setText("<b>No occupancy</b>: this launch cannot run.")
        self.fill.setText("")
        self.notes.hide()
        self.explain.setText(message)
        for graph in self.plots.values():
            graph.hide()
        self.graph_note.hide()

    def apply_theme(self) -> None:
        self._write_texts()
