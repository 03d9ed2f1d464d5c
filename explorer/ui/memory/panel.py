"""The Memory page: coalescing, shared-memory banks and warp divergence, as three tabs.

Each tab is a form (pattern presets and the numbers behind them), a picture and its words: a
view of one part of the page's Qt-free ``MemorySession`` (``explorer.memory.session``). A field's
edit goes to the model, which recomputes the exact model (microseconds) and announces the new
result; the tab then shows it, fields included. The page computes nothing itself. Predict (the button beside the tabs) covers each of the three
pictures' answers until the student commits a prediction (``explorer.quiz.page_predict``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import Gpu
from explorer.errors import UserError
from explorer.lessons.model import MEMORY_VIEWS, MemoryState, PanelState
from explorer.memory.banks import SOURCE
from explorer.memory.coalescing import ELEMENT_SIZES, SECTOR_BYTES
from explorer.memory.divergence import EQUAL_COST_NOTE, ITS_NOTE, MAX_BLOCK_THREADS, MAX_K, Divergence
from explorer.memory.presets import P_DECIMALS
from explorer.memory.session import (
    BRANCH_KINDS,
    MAX_ELEMENTS,
    MAX_SEED,
    BankModel,
    BranchInputs,
    CoalescingModel,
    DivergenceModel,
    MemorySession,
)
from explorer.quiz.page_predict import PagePredict, follow_memory
from explorer.ui.context import AppContext
from explorer.ui.memory.canvas import (
    BankCanvas,
    CoalescingCanvas,
    DivergenceCanvas,
    ResultCanvas,
    dram_only_colour,
    idle_colour,
    wasted_colour,
)
from explorer.ui.memory.kernel_tab import TRACE_WAIT_S, KernelTab
from explorer.ui.memory.layout import Columns, ErrorLine, fit_axis_titles, headline, legend, legend_text, spin
from explorer.ui.memory.tiling_tab import TilingTab
from explorer.ui.panel import Panel
from explorer.ui.plot_text import axis_title, restyle
from explorer.ui.plot_widget import plot_widget
from explorer.ui.predict_box import PredictBox, cover_label, predict_button
from explorer.ui.theme import Theme, current_theme, line_px, px
from explorer.ui.widgets import NarrowCombo, number_field


def _show_preset(menu: QComboBox, index: int | None) -> None:
    """Show preset ``index`` in ``menu`` without applying it (the fields already hold its
    numbers), or "Custom" (added the first time) when ``None``: no preset these numbers are."""
    menu.blockSignals(True)
    if index is None:
        if menu.findText("Custom") < 0:
            menu.addItem("Custom")
        index = menu.findText("Custom")
    menu.setCurrentIndex(index)
    menu.blockSignals(False)


#: a parenthesis at most this long is kept on one line when the details wrap
_BOUND_ASIDE = 32


def wrapping_lines(lines: Sequence[str]) -> str:
    """A tab's detail lines as a word-wrapped label shows them well. The core pads its
    "name: value" lines for a terminal's fixed-width columns; in the page's proportional font
    the padding aligns nothing, so it is one space here. A short parenthesis is bound into one
    word: at 200% on 1280x800 "sectors per request (32 B): 32 (fewest possible: 4)" broke after
    "possible:", and at the column's fold it read as a line cut at the right edge."""

    def bind(match: re.Match[str]) -> str:
        aside = match.group(0)
        return aside.replace(" ", "\u00a0") if len(aside) <= _BOUND_ASIDE else aside

    return "\n".join(re.sub(r"\([^()]*\)", bind, re.sub(r"(?<=\S)  +", " ", line)) for line in lines)


def _narrow(box: QComboBox) -> None:
    """A menu that takes the column's width rather than its longest entry's: the column is sized
    to the page, and the popup still shows the entries in full."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(8)
    box.view().setTextElideMode(Qt.TextElideMode.ElideNone)


#: where the Memory page's predictions are kept in the answers file (its "lesson" column)
PREDICT_PAGE = "memory page"


class _PatternTab(Columns):
    """A form, the picture, the headline and details: a view of one pattern model of the
    ``MemorySession``. The fields write each edit to the model; the model's event redraws. In
    Predict mode the headline, picture and details wait for the student's answer."""

    #: the questions Predict mode asks about the picture (``explorer.quiz.topics``), the first first
    TOPIC = ""
    CONCEPTS: tuple[str, ...] = ()

    def __init__(self, model: CoalescingModel | BankModel, canvas: ResultCanvas[Any]) -> None:
        super().__init__()
        self.model = model
        self.patterns = model.patterns
        self.canvas = canvas
        self.preset = NarrowCombo()
        self.preset.addItems([p.name for p in self.patterns])
        _narrow(self.preset)
        self.elem = QComboBox()
        self.elem.addItems([f"{n} bytes" for n in ELEMENT_SIZES])
        self.stride = spin(0, MAX_ELEMENTS, 1, "elements between neighbouring lanes")
        self.offset = spin(0, MAX_ELEMENTS, 0, "elements before lane 0's")
        self.active = spin(1, 32, 32, "lanes taking part (from lane 0)")
        self.form = QFormLayout()
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.form.setVerticalSpacing(
            3
        )  # the fields' own frames part them: the plot under them needs the room
        # the preset beside its own short label, across the whole column rather than in the
        # field column the long labels under it leave (at 200% on 1280x800 that column cut
        # "Stride 32: a[32*i]" to "Stride 32: a[3..."); a row of its own for the label cost the
        # efficiency plot under the form its room. It still narrows, its whole name on hover.
        pattern_label = QLabel("&Pattern")
        pattern_label.setBuddy(self.preset)
        pattern_row = QHBoxLayout()
        pattern_row.setContentsMargins(0, 0, 0, 0)
        pattern_row.setSpacing(max(self.form.horizontalSpacing(), px(8)))
        pattern_row.addWidget(pattern_label)
        pattern_row.addWidget(self.preset, 1)
        self.form.addRow(pattern_row)
        self.form.addRow("Element size", self.elem)
        self.form.addRow("Stride (elements)", self.stride)
        self.form.addRow("Offset (elements)", self.offset)
        self.form.addRow("Active lanes", self.active)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        headline(self.headline)
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.error = ErrorLine()

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(self.form)
        left_layout.addWidget(self.error)
        self.left_layout = left_layout
        self.predict = PagePredict(self.TOPIC, self.CONCEPTS[0], PREDICT_PAGE, concepts=self.CONCEPTS)
        self.cover = cover_label()
        right = QVBoxLayout()
        right.addWidget(self.headline)
        right.addWidget(canvas, 1)
        right.addWidget(self.cover, 1)
        self.right = right
        right.addWidget(self.details)
        self.predict_box = PredictBox(self.predict, self._cover)
        right.insertWidget(0, self.predict_box)
        self._build_columns(left, right)

        self.preset.currentIndexChanged.connect(self._preset_chosen)
        self.elem.currentIndexChanged.connect(
            lambda i: self._edit(lambda: model.set_elem_bytes(ELEMENT_SIZES[i]))
        )
        self.stride.valueChanged.connect(lambda v: self._edit(lambda: model.set_stride(v)))
        self.offset.valueChanged.connect(lambda v: self._edit(lambda: model.set_offset(v)))
        self.active.valueChanged.connect(lambda v: self._edit(lambda: model.set_active_lanes(v)))

    def _built(self) -> None:
        """The subclass's widgets are in place: follow the model from now on, and show it."""
        self.model.changed.connect(self.refresh)
        follow_memory(self.predict, self.model)
        self.refresh()

    # --- fields -> model ---------------------------------------------------------------------------
    def _edit(self, change: Callable[[], None]) -> None:
        """The teacher's own change: hand it to the model (the columns stay where they are); a
        value the model refuses is its one line under the form."""
        self.stop_revealing()
        try:
            change()
        except UserError as exc:
            self.error.setText(str(exc))
            return
        self.error.setText("")

    def _preset_chosen(self, index: int) -> None:
        if 0 <= index < len(self.patterns):  # (not "Custom": the numbers stay as they are)
            self._edit(lambda: self.model.choose_preset(index))

    # --- model -> view -------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Show the model's result: the fields (as the model holds them), picture and words."""
        r = self.model.result
        i = r.inputs
        widgets = (self.preset, self.elem, self.stride, self.offset, self.active, *self._extra_fields())
        for w in widgets:
            w.blockSignals(True)
        self.elem.setCurrentIndex(ELEMENT_SIZES.index(i.elem_bytes))
        self.stride.setValue(i.stride)
        self.offset.setValue(i.offset)
        self.active.setValue(i.active_lanes)
        self._show_extra_fields()
        _show_preset(self.preset, r.preset)
        for w in widgets:
            w.blockSignals(False)
        self._draw()
        self._cover(self.predict.hidden)

    @property
    def result(self) -> Any:
        """The core's record the picture shows."""
        return self.canvas.result

    def _extra_fields(self) -> tuple[QWidget, ...]:
        return ()

    def _show_extra_fields(self) -> None:
        """A subclass puts its own fields' values (the warp, the padding) in place."""

    def _draw(self) -> None:
        raise NotImplementedError

    def _cover(self, hidden: bool) -> None:
        """While the answer is hidden: the headline, picture, legend, details and graph give it
        away, so a box asking for the prediction stands in the picture's place."""
        for w in (self.headline, self.canvas, self.details, getattr(self, "legend", None), self.graph()):
            if w is not None:
                w.setVisible(not hidden)
        self.cover.setVisible(hidden)


class CoalescingTab(_PatternTab):
    TOPIC, CONCEPTS = "coalescing", ("sectors", "efficiency")
    canvas: CoalescingCanvas

    def __init__(self, model: CoalescingModel) -> None:
        super().__init__(model, CoalescingCanvas())
        self.coalescing = model
        self.warp = spin(0, 31, 0, "which warp of the block: its lanes are threads 32w .. 32w+31")
        self.form.addRow("Warp of the block", self.warp)
        self.warp.valueChanged.connect(lambda v: self._edit(lambda: model.set_warp(v)))
        self.legend = legend(self._key(0))  # the paler sectors' row once a picture has them
        self.right.insertWidget(self.right.indexOf(self.details), self.legend)
        self.sweep = plot_widget()
        axis_title(self.sweep, "bottom", "stride (elements)")
        axis_title(self.sweep, "left", "efficiency (%)")
        self.sweep.setYRange(0, 105)
        self.sweep.setMouseEnabled(False, False)
        self.sweep.hideButtons()
        # its axes say what it is (a caption over it cost the plot its room at 200% on 1280x800)
        self.left_layout.setSpacing(2)
        self.sweep.setToolTip("Efficiency vs stride, for the element size chosen above")
        self.left_layout.addWidget(self.sweep)
        self.left_layout.addStretch(1)
        self._fit_sweep()
        self._built()

    def graph(self) -> QWidget | None:
        return getattr(self, "sweep", None)

    def _extra_fields(self) -> tuple[QWidget, ...]:
        return (self.warp,)

    @staticmethod
    def _key(dram_bytes: int) -> tuple[tuple[str, str], ...]:
        """The picture's key; the paler sectors' row only where the picture has some, a DRAM
        granule of ``dram_bytes`` being more than a sector (0: none)."""
        theme = current_theme()
        items = (
            (theme.accent, "bytes a lane asked for"),
            (wasted_colour(theme).name(), "fetched, not used (wasted bandwidth)"),
        )
        if dram_bytes <= SECTOR_BYTES:
            return items
        return (
            *items,
            (dram_only_colour(theme).name(), f"moved by DRAM only ({dram_bytes}\u2011byte granules)"),
        )

    def _show_extra_fields(self) -> None:
        self.warp.setValue(self.coalescing.result.warp)

    def apply_text_scale(self) -> None:
        """The efficiency plot's ticks and titles follow the text size; so does its height."""
        self._fit_sweep()
        self._draw_sweep()

    def _fit_sweep(self) -> None:
        restyle(self.sweep)
        # as tall as its data area's least lines need, no taller: the form above it and the plot
        # fit the column together on a short screen
        self.sweep.setFixedHeight(fit_axis_titles(self.sweep, "100"))

    def _draw(self) -> None:
        r = self.coalescing.result
        self.canvas.set_result(r.coalescing)
        self.headline.setText(r.headline)
        paler = bool(self.canvas.dram_only_sectors())
        self.legend.setText(legend_text(self._key(r.coalescing.dram.bytes if paler else 0)))
        self.details.setText(wrapping_lines(r.lines))
        self._draw_sweep()

    def _draw_sweep(self) -> None:
        theme = current_theme()
        r = self.coalescing.result
        self.sweep.clear()
        self.sweep.setBackground(theme.plot_background)
        for axis in ("left", "bottom"):
            self.sweep.getAxis(axis).setTextPen(theme.plot_foreground)
            self.sweep.getAxis(axis).setPen(theme.plot_foreground)
        self.sweep.plot(
            [p.stride for p in r.sweep],
            [p.efficiency * 100 for p in r.sweep],
            pen=pg.mkPen(theme.accent, width=line_px(2)),
        )
        here = r.sweep_point
        if here is not None:  # (a stride of 0, every lane on one element, is off the curve)
            self.sweep.plot(
                [here.stride],
                [here.efficiency * 100],
                pen=None,
                symbol="o",
                symbolBrush=theme.error,
                symbolSize=px(10),
            )


class BankTab(_PatternTab):
    TOPIC, CONCEPTS = "banks", ("conflict",)

    def __init__(self, model: BankModel) -> None:
        super().__init__(model, BankCanvas())
        self.banks = model
        theme = current_theme()
        self.legend = legend(
            (
                (theme.accent, "a word, no conflict (lane number; +n: lanes sharing it, a broadcast)"),
                (theme.error, "words stacked in one bank: served one after another"),
            )
        )
        self.right.insertWidget(self.right.indexOf(self.details), self.legend)
        self.pad = QCheckBox("Pad rows by one element")
        self.pad.setToolTip("Adds one element to the stride, as padding tile[32][32] to tile[32][33] does")
        self.pad.toggled.connect(lambda on: self._edit(lambda: model.set_pad(on)))
        self.form.addRow(self.pad)
        source = QLabel(f"Rule: {SOURCE}. Banks are numbered across the top.")
        source.setWordWrap(True)
        source.setProperty("role", "muted")
        self.left_layout.addWidget(source)
        self.left_layout.addStretch(1)
        self._built()

    def _extra_fields(self) -> tuple[QWidget, ...]:
        return (self.pad,)

    def _show_extra_fields(self) -> None:
        self.pad.setChecked(self.banks.result.pad)

    def _draw(self) -> None:
        r = self.banks.result
        self.canvas.set_result(r.conflicts)
        self.headline.setText(r.headline)
        self.details.setText(wrapping_lines(r.lines))


class DivergenceTab(Columns):
    """A view of the ``MemorySession``'s divergence model: the fields write to it, its event redraws."""

    def __init__(self, model: DivergenceModel) -> None:
        super().__init__()
        self.model = model
        self.preset = NarrowCombo()
        self.preset.addItems([b.name for b in model.presets])
        _narrow(self.preset)
        self.block = spin(1, MAX_BLOCK_THREADS, 256, "threads per block (1D)")
        self.kind = QComboBox()
        self.kind.addItems(
            ["threadIdx.x % K == 0", "threadIdx.x < K", "(threadIdx.x / 32) % K == 0", "random"]
        )
        self.k = spin(0, MAX_K, 2, "K in the condition")
        self.p = number_field(QDoubleSpinBox())
        self.p.setRange(0.0, 1.0)
        self.p.setDecimals(P_DECIMALS)
        self.p.setSingleStep(0.05)
        self.p.setValue(0.5)
        self.seed = spin(0, MAX_SEED, 0, "seed of the random data")
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow(QLabel("Branch"))
        form.addRow(self.preset)
        form.addRow("Threads per block", self.block)
        form.addRow("Condition", self.kind)
        form.addRow("K", self.k)
        form.addRow("Probability p", self.p)
        form.addRow("Seed", self.seed)
        self.error = ErrorLine()
        note = QLabel(f"{EQUAL_COST_NOTE}\n\n{ITS_NOTE}")
        note.setWordWrap(True)
        note.setProperty("role", "muted")
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(form)
        lv.addWidget(self.error)
        lv.addWidget(note)
        lv.addStretch(1)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        headline(self.headline)
        self.canvas = DivergenceCanvas()
        theme = current_theme()
        self.legend = legend(
            (
                (theme.accent, "takes the branch"),
                (theme.present, "runs the other path"),
                (idle_colour(theme).name(), "no thread"),
            )
        )
        self.predict = PagePredict("divergence", "simt_efficiency", PREDICT_PAGE)
        self.cover = cover_label()
        self.predict_box = PredictBox(self.predict, self._cover)
        right = QVBoxLayout()
        right.addWidget(self.predict_box)
        right.addWidget(self.headline)
        right.addWidget(self.canvas, 1)
        right.addWidget(self.cover, 1)
        right.addWidget(self.legend)
        self._build_columns(left, right)
        self.preset.currentIndexChanged.connect(self._preset_chosen)
        self.block.valueChanged.connect(lambda v: self._edit(lambda: model.set_block(v)))
        self.seed.valueChanged.connect(lambda v: self._edit(lambda: model.set_seed(v)))
        self.k.valueChanged.connect(lambda v: self._edit(lambda: model.set_k(v)))
        # the field holds P_DECIMALS decimals; its float is rounded to them before the model sees it
        self.p.valueChanged.connect(lambda v: self._edit(lambda: model.set_p(round(v, P_DECIMALS))))
        self.kind.currentIndexChanged.connect(lambda i: self._edit(lambda: model.set_kind(BRANCH_KINDS[i])))
        model.changed.connect(self.refresh)
        follow_memory(self.predict, model)
        self.refresh()

    def _preset_chosen(self, index: int) -> None:
        if 0 <= index < len(self.model.presets):  # (not "Custom": the condition stays as it is)
            self._edit(lambda: self.model.choose_preset(index))

    def _edit(self, change: Callable[[], None]) -> None:
        """Hand the teacher's change to the model; a value it refuses is one line under the form,
        else the line is the model's own (a condition the branch refuses), or none."""
        self.stop_revealing()
        try:
            change()
        except UserError as exc:
            self.error.setText(str(exc))
            return
        self.error.setText(self.model.result.problem)

    def refresh(self) -> None:
        """Show the model's result: the fields as it holds them, the picture, or why there is none
        (the last picture stays beside that line)."""
        r = self.model.result
        i = r.inputs
        widgets = (self.preset, self.block, self.kind, self.k, self.p, self.seed)
        for w in widgets:
            w.blockSignals(True)
        self.block.setValue(i.block)
        self.kind.setCurrentIndex(BRANCH_KINDS.index(i.kind))
        self.k.setValue(i.k)
        self.p.setValue(i.p)
        self.seed.setValue(i.seed)
        _show_preset(self.preset, r.preset)
        for w in widgets:
            w.blockSignals(False)
        self.k.setEnabled(i.kind != "random")
        self.p.setEnabled(i.kind == "random")
        self.seed.setEnabled(i.kind == "random")
        self.error.setText(r.problem)
        if r.divergence is not None:
            self.canvas.set_result(r.divergence)
            self.headline.setText(r.headline)
        self._cover(self.predict.hidden)

    @property
    def result(self) -> Divergence | None:
        """The picture shown (the model's last good answer)."""
        return self.canvas.result

    def _cover(self, hidden: bool) -> None:
        """While the answer is hidden the headline, picture and legend wait for the prediction."""
        for w in (self.headline, self.canvas, self.legend):
            w.setVisible(not hidden)
        self.cover.setVisible(hidden)


class MemoryPanel(Panel):
    """Coalescing, Bank conflicts and Divergence as tabs of one page."""

    def __init__(self, context: object, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.tabs = QTabWidget()
        #: the Coalescing, Bank conflicts and Divergence tabs' state; the tabs are its views
        self.session = MemorySession()
        self.coalescing = CoalescingTab(self.session.coalescing)
        self.banks = BankTab(self.session.banks)
        self.divergence = DivergenceTab(self.session.divergence)
        roof_of = context.roof_of if isinstance(context, AppContext) else None
        self.tiling = TilingTab(self._gpus(), roof_of)
        self.kernel = KernelTab()
        self.kernel.device_for_occupancy = lambda: self.tiling.session.device
        # short names, so the four fit the bar at 200% on a 1280x800 projector; the rest on hover
        for tab, name, tip in (
            (self.coalescing, "Coalescing", "Coalescing: one warp's load from global memory"),
            (self.banks, "Bank conflicts", "Bank conflicts: one warp's read of shared memory"),
            (self.divergence, "Divergence", "Warp divergence: the paths a block's warps take at a branch"),
            (
                self.tiling,
                "Tiled matmul",
                "Tiled matrix multiply: shared memory and __syncthreads, one block step by step",
            ),
            (
                self.kernel,
                "Your kernel",
                "Your kernel: a numba script of yours traced on the simulator, line by line",
            ),
        ):
            self.tabs.setTabToolTip(self.tabs.addTab(tab, name), tip)
        self.predict_button = predict_button(
            "Predict, then reveal: the Coalescing, Bank conflicts, Divergence and Tiled matmul pictures ask "
            "for your prediction first and show their numbers once you commit it"
        )
        self.predict_button.toggled.connect(self.set_predict)
        self.tabs.setCornerWidget(self.predict_button, Qt.Corner.TopRightCorner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.tabs)
        if isinstance(context, AppContext):
            context.discovery_changed.connect(lambda _d: self.tiling.set_gpus(self._gpus()))
            context.roofs_measured.connect(lambda _r: self.tiling.session.roofs_changed())

    def _gpus(self) -> list[Gpu]:
        """What the Tiled matmul tab can read its costs on: this machine's GPUs, then catalog sheets."""
        return self.context.gpus if isinstance(self.context, AppContext) else []

    def set_predict(self, on: bool) -> None:
        """Predict mode on the pattern, divergence and tiled matmul tabs: each asks about its
        picture first."""
        self.predict_button.setChecked(on)
        for tab in (self.coalescing, self.banks, self.divergence, self.tiling):
            tab.predict.set_on(on)

    def toggle_predict(self) -> str:
        on = not self.predict_button.isChecked()
        self.set_predict(on)
        if on and self.tabs.currentWidget() is self.kernel:
            self.tabs.setCurrentWidget(self.coalescing)  # your kernel asks nothing
        return (
            "Predict on: Coalescing, Bank conflicts, Divergence and Tiled matmul ask for your prediction first"
            if on
            else "Predict off: every picture shows its numbers at once"
        )

    def _views(self) -> tuple[CoalescingTab, BankTab, DivergenceTab, TilingTab, KernelTab]:
        """The tabs in ``MEMORY_VIEWS`` order."""
        return (self.coalescing, self.banks, self.divergence, self.tiling, self.kernel)

    # --- lesson steps ----------------------------------------------------------------------------
    def lesson_state(self) -> MemoryState | None:
        """The tab shown and its controls; the other tabs' fields keep their defaults."""
        current = self.tabs.currentWidget()
        if current not in self._views():
            return None
        view = MEMORY_VIEWS[self._views().index(current)]
        state = MemoryState(view=view)
        if view == "kernel":  # a shipped example only: a step never holds the student's own script
            example = self.kernel.example_name()
            if not example:
                return None
            state.example = example
            state.line = self.kernel.session.picked or 0
            return state
        if view == "tiling":
            self.tiling.lesson_fields(state)
            return state
        session = self.session
        if view == "divergence":
            d = session.divergence
            i = d.inputs
            state.pattern = d.preset_name
            state.block, state.k, state.p, state.seed = i.block, i.k, round(i.p, P_DECIMALS), i.seed
            state.branch = i.kind  # type: ignore[assignment]  # one of BRANCH_KINDS
            return state
        model: CoalescingModel | BankModel = session.coalescing if view == "coalescing" else session.banks
        state.pattern = model.pattern_name
        state.elem, state.stride, state.offset, state.active = model.inputs.numbers
        if view == "coalescing":
            state.warp = session.coalescing.warp
        else:
            state.pad = session.banks.pad
        return state

    def show_lesson_state(self, state: PanelState) -> str:
        if not isinstance(state, MemoryState):
            return ""
        note = ""
        if state.view == "kernel":
            self.kernel.show_example(state.example, state.line)
            self.tabs.setCurrentWidget(self.kernel)
            return ""
        if state.view == "tiling":
            note = self.tiling.show_fields(state)
        elif state.view == "divergence":
            self.session.divergence.load(
                state.pattern, BranchInputs(state.block, state.branch, state.k, state.p, state.seed)
            )
        else:
            numbers = (state.elem, state.stride, state.offset, state.active)
            if state.view == "coalescing":
                self.session.coalescing.load(state.pattern, numbers, state.warp)
            else:
                self.session.banks.load(state.pattern, numbers, state.pad)
        shown = (self.coalescing, self.banks, self.divergence, self.tiling)[MEMORY_VIEWS.index(state.view)]
        self.tabs.setCurrentWidget(shown)
        QTimer.singleShot(0, shown.reveal)  # once laid out
        return note

    SCREENSHOT_VIEWS = MEMORY_VIEWS

    def finish_pending(self) -> None:
        self.kernel.wait_for_trace(TRACE_WAIT_S)

    def show_screenshot_view(self, view: str) -> None:
        if view == "kernel":
            self.tabs.setCurrentWidget(self.kernel)
            return
        if view not in MEMORY_VIEWS:
            super().show_screenshot_view(view)
        if view == "tiling":
            self.tiling.prepare_screenshot()
        self.tabs.setCurrentIndex(MEMORY_VIEWS.index(view))

    def apply_text_scale(self, percent: int) -> None:
        for tab in self._views()[:3]:
            tab._fit_left()
            tab.canvas.apply_text_scale()
        self.coalescing.apply_text_scale()
        self.tiling.apply_text_scale()

    def apply_theme(self, theme: Theme) -> None:
        for tab in self._views()[:3]:
            tab.refresh()
            tab.update()
        self.tiling.apply_text_scale()

    def shutdown(self) -> None:
        self.tiling.stop()
        self.kernel.shutdown()

    def prepare_screenshot(self) -> None:
        """The course's first picture: a strided load wasting most of what it fetches."""
        self.tabs.setCurrentWidget(self.coalescing)
        self.session.coalescing.choose_preset(2)
