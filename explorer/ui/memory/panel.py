"""The Memory page: coalescing, shared-memory banks and warp divergence, as three tabs.

Each tab is a form (pattern presets and the numbers behind them), a picture and the words from
``explorer.memory.texts``; every change recomputes the exact model (microseconds) and redraws.
The page computes nothing itself. Predict (the button beside the tabs) covers each of the three
pictures' answers until the student commits a prediction (``explorer.quiz.page_predict``).
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import Gpu
from explorer.errors import UserError
from explorer.lessons.model import BRANCH_KINDS, MEMORY_MAX_ELEMENTS, MEMORY_VIEWS, MemoryState, PanelState
from explorer.memory import texts
from explorer.memory.banks import SOURCE, SharedAccess, bank_conflicts
from explorer.memory.coalescing import ELEMENT_SIZES, GlobalAccess, coalesce, stride_sweep
from explorer.memory.divergence import EQUAL_COST_NOTE, ITS_NOTE, Branch, divergence
from explorer.memory.presets import (
    BRANCH_PRESETS,
    GLOBAL_PATTERNS,
    P_DECIMALS,
    SHARED_PATTERNS,
    BranchPreset,
    Pattern,
)
from explorer.quiz.page_predict import PagePredict, banks_params, coalescing_params, divergence_params
from explorer.ui.context import AppContext
from explorer.ui.memory.canvas import (
    BankCanvas,
    CoalescingCanvas,
    DivergenceCanvas,
    ResultCanvas,
    idle_colour,
    wasted_colour,
)
from explorer.ui.memory.kernel_tab import TRACE_WAIT_S, KernelTab
from explorer.ui.memory.layout import Columns, ErrorLine, fit_axis_titles, headline, legend, spin
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


def _narrow(box: QComboBox) -> None:
    """A menu that takes the column's width rather than its longest entry's: the column is sized
    to the page, and the popup still shows the entries in full."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(8)
    box.view().setTextElideMode(Qt.TextElideMode.ElideNone)


#: where the Memory page's predictions are kept in the answers file (its "lesson" column)
PREDICT_PAGE = "memory page"


class _PatternTab(Columns):
    """A form, the picture, the headline and details; ``refresh`` recomputes and redraws. In
    Predict mode the headline, picture and details wait for the student's answer."""

    #: the questions Predict mode asks about the picture (``explorer.quiz.topics``), the first first
    TOPIC = ""
    CONCEPTS: tuple[str, ...] = ()

    def __init__(
        self, patterns: tuple[Pattern, ...], canvas: ResultCanvas[Any], allow_stride_zero: bool
    ) -> None:
        super().__init__()
        self.patterns = patterns
        self.canvas = canvas
        self.preset = NarrowCombo()
        self.preset.addItems([p.name for p in patterns])
        _narrow(self.preset)
        self.elem = QComboBox()
        self.elem.addItems([f"{n} bytes" for n in ELEMENT_SIZES])
        self.stride = spin(
            0 if allow_stride_zero else 1, MEMORY_MAX_ELEMENTS, 1, "elements between neighbouring lanes"
        )
        self.offset = spin(0, MEMORY_MAX_ELEMENTS, 0, "elements before lane 0's")
        self.active = spin(1, 32, 32, "lanes taking part (from lane 0)")
        self.form = QFormLayout()
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.form.setVerticalSpacing(
            3
        )  # the fields' own frames part them: the plot under them needs the room
        # the preset beside its label (it narrows, its whole name on hover): a row of its own for
        # the label cost the efficiency plot under the form its room at 200% on 1280x800
        self.form.addRow("Pattern", self.preset)
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

        self.preset.currentIndexChanged.connect(self._apply_preset)
        for box in (self.stride, self.offset, self.active):
            box.valueChanged.connect(self._edited)
        self.elem.currentIndexChanged.connect(self._edited)
        self._applying = False
        self._apply_preset(0)

    def elem_bytes(self) -> int:
        return ELEMENT_SIZES[self.elem.currentIndex()]

    def _apply_preset(self, index: int) -> None:
        if not 0 <= index < len(self.patterns):  # "Custom": the numbers stay as they are
            self.refresh()
            return
        p = self.patterns[index]
        self._applying = True
        self.elem.setCurrentIndex(ELEMENT_SIZES.index(p.elem_bytes))
        self.stride.setValue(p.stride)
        self.offset.setValue(p.offset)
        self.active.setValue(p.active)
        self._applying = False
        self.refresh()

    def _edited(self) -> None:
        self.stop_revealing()  # the teacher's own change: the columns stay where they are
        if self._applying:
            return
        self._name_preset()
        self.refresh()

    def numbers(self) -> tuple[int, int, int, int]:
        """The fields as typed (a lesson step's ``elem``, ``stride``, ``offset``, ``active``)."""
        return (self.elem_bytes(), self.stride.value(), self.offset.value(), self.active.value())

    def modelled_numbers(self) -> tuple[int, int, int, int]:
        """The access the picture shows: the fields, and on the banks tab the padding."""
        return self.numbers()

    def _name_preset(self) -> None:
        """The preset's name must not describe numbers the user changed: the menu shows the
        preset the access shown is (the one shown if it still fits), or "Custom"; with padding
        on, "Column of tile[32][32]" gives way to the padded tile's own preset."""
        index = self.preset.currentIndex()
        now = self.modelled_numbers()
        if 0 <= index < len(self.patterns) and self.patterns[index].numbers == now:
            return
        _show_preset(self.preset, next((i for i, q in enumerate(self.patterns) if q.numbers == now), None))

    def pattern_name(self) -> str:
        """The preset whose numbers the fields hold ("" for none): the one shown, or with the
        banks' padding on, the unpadded preset a lesson step names beside ``pad``."""
        index = self.preset.currentIndex()
        raw = self.numbers()
        if 0 <= index < len(self.patterns) and self.patterns[index].numbers == raw:
            return self.patterns[index].name
        return next((q.name for q in self.patterns if q.numbers == raw), "")

    def show_numbers(self, pattern: str, numbers: tuple[int, int, int, int]) -> None:
        """Set every field at once (a lesson step) and redraw once; ``pattern`` names the preset
        when it is one with these numbers (two presets can share numbers: the named one shows)."""
        elem, stride, offset, active = numbers
        widgets = (self.preset, self.elem, self.stride, self.offset, self.active)
        for w in widgets:
            w.blockSignals(True)
        self.elem.setCurrentIndex(ELEMENT_SIZES.index(elem))
        self.stride.setValue(stride)
        self.offset.setValue(offset)
        self.active.setValue(active)
        named = next(
            (i for i, q in enumerate(self.patterns) if q.name == pattern and q.numbers == numbers), -1
        )
        if named >= 0:
            self.preset.setCurrentIndex(named)
        for w in widgets:
            w.blockSignals(False)
        self._name_preset()  # the padded tile's own name where the banks' padding is on

    def refresh(self) -> None:
        try:
            self.compute()
            self.error.setText("")
        except UserError as exc:
            self.error.setText(str(exc))
            self.predict.show(None, str(exc))
            return
        if "result" in vars(self):  # (not while the form is still being built)
            self.predict.show(self.predict_params())
        self._cover(self.predict.hidden)

    def compute(self) -> None:
        raise NotImplementedError

    def predict_params(self) -> dict[str, Any]:
        """The picture shown, as its Predict question's parameters."""
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

    def __init__(self) -> None:
        super().__init__(GLOBAL_PATTERNS, CoalescingCanvas(), allow_stride_zero=True)
        self.warp = spin(0, 31, 0, "which warp of the block: its lanes are threads 32w .. 32w+31")
        self.form.addRow("Warp of the block", self.warp)
        self.warp.valueChanged.connect(self.refresh)
        theme = current_theme()
        self.legend = legend(
            (
                (theme.accent, "bytes a lane asked for"),
                (wasted_colour(theme).name(), "fetched, not used (wasted bandwidth)"),
            )
        )
        self.right.insertWidget(self.right.indexOf(self.details), self.legend)
        self.sweep = plot_widget()
        axis_title(self.sweep, "bottom", "stride (elements)")
        axis_title(self.sweep, "left", "efficiency (%)")
        self.apply_text_scale()
        self.sweep.setYRange(0, 105)
        self.sweep.setMouseEnabled(False, False)
        self.sweep.hideButtons()
        # its axes say what it is (a caption over it cost the plot its room at 200% on 1280x800)
        self.left_layout.setSpacing(2)
        self.sweep.setToolTip("Efficiency vs stride, for the element size chosen above")
        self.left_layout.addWidget(self.sweep)
        self.left_layout.addStretch(1)
        self.refresh()

    def graph(self) -> QWidget | None:
        return getattr(self, "sweep", None)

    def predict_params(self) -> dict[str, Any]:
        return coalescing_params(*self.numbers(), warp=self.warp.value())

    def apply_text_scale(self) -> None:
        """The efficiency plot's ticks and titles follow the text size; so does its height."""
        restyle(self.sweep)
        # as tall as its data area's least lines need, no taller: the form above it and the plot
        # fit the column together on a short screen
        self.sweep.setFixedHeight(fit_axis_titles(self.sweep, "100"))
        if hasattr(self, "result"):
            self._draw_sweep()

    def compute(self) -> None:
        if not hasattr(self, "sweep"):
            return
        c = coalesce(
            GlobalAccess(
                elem_bytes=self.elem_bytes(),
                stride=self.stride.value(),
                offset=self.offset.value(),
                active_lanes=self.active.value(),
                warp=self.warp.value(),
            )
        )
        self.result = c
        self.canvas.set_result(c)
        self.headline.setText(texts.coalescing_headline(c))
        self.details.setText("\n".join(texts.coalescing_lines(c)))
        self._draw_sweep()

    def _draw_sweep(self) -> None:
        theme = current_theme()
        sweep = stride_sweep(self.elem_bytes())
        self.sweep.clear()
        self.sweep.setBackground(theme.plot_background)
        xs = [p.stride for p in sweep]
        for axis in ("left", "bottom"):
            self.sweep.getAxis(axis).setTextPen(theme.plot_foreground)
            self.sweep.getAxis(axis).setPen(theme.plot_foreground)
        self.sweep.plot(xs, [p.efficiency * 100 for p in sweep], pen=pg.mkPen(theme.accent, width=line_px(2)))
        s = self.stride.value()
        if 1 <= s <= xs[-1]:  # (a stride of 0, every lane on one element, is off the curve)
            here = sweep[s - 1]
            self.sweep.plot(
                [s], [here.efficiency * 100], pen=None, symbol="o", symbolBrush=theme.error, symbolSize=px(10)
            )


class BankTab(_PatternTab):
    TOPIC, CONCEPTS = "banks", ("conflict",)

    def __init__(self) -> None:
        super().__init__(SHARED_PATTERNS, BankCanvas(), allow_stride_zero=True)
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
        self.pad.toggled.connect(self._edited)
        self.form.addRow(self.pad)
        source = QLabel(f"Rule: {SOURCE}. Banks are numbered across the top.")
        source.setWordWrap(True)
        source.setProperty("role", "muted")
        self.left_layout.addWidget(source)
        self.left_layout.addStretch(1)
        self.refresh()

    def modelled_numbers(self) -> tuple[int, int, int, int]:
        elem, stride, offset, active = self.numbers()
        return (elem, stride + (1 if self.pad.isChecked() else 0), offset, active)

    def predict_params(self) -> dict[str, Any]:
        return banks_params(*self.modelled_numbers())

    def _apply_preset(self, index: int) -> None:
        """A preset is the whole access: choosing one takes the padding off."""
        if hasattr(self, "pad") and 0 <= index < len(self.patterns):
            self.pad.blockSignals(True)
            self.pad.setChecked(False)
            self.pad.blockSignals(False)
        super()._apply_preset(index)

    def compute(self) -> None:
        if not hasattr(self, "pad"):
            return
        b = bank_conflicts(
            SharedAccess(
                elem_bytes=self.elem_bytes(),
                stride=self.stride.value() + (1 if self.pad.isChecked() else 0),
                offset=self.offset.value(),
                active_lanes=self.active.value(),
            )
        )
        self.result = b
        self.canvas.set_result(b)
        self.headline.setText(texts.bank_headline(b))
        self.details.setText("\n".join(texts.bank_lines(b)))


class DivergenceTab(Columns):
    def __init__(self) -> None:
        super().__init__()
        self.preset = NarrowCombo()
        self.preset.addItems([b.name for b in BRANCH_PRESETS])
        _narrow(self.preset)
        self.block = spin(1, 1024, 256, "threads per block (1D)")
        self.kind = QComboBox()
        self.kind.addItems(
            ["threadIdx.x % K == 0", "threadIdx.x < K", "(threadIdx.x / 32) % K == 0", "random"]
        )
        self.k = spin(0, 1 << 20, 2, "K in the condition")
        self.p = number_field(QDoubleSpinBox())
        self.p.setRange(0.0, 1.0)
        self.p.setDecimals(P_DECIMALS)
        self.p.setSingleStep(0.05)
        self.p.setValue(0.5)
        self.seed = spin(0, 1 << 30, 0, "seed of the random data")
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
        self.preset.currentIndexChanged.connect(self._apply_preset)
        for w in (self.block, self.seed):
            w.valueChanged.connect(self.refresh)
        self.k.valueChanged.connect(self._edited)
        self.p.valueChanged.connect(self._edited)
        self.kind.currentIndexChanged.connect(self._edited)
        self._apply_preset(0)

    def branch_kind(self) -> str:
        return BRANCH_KINDS[self.kind.currentIndex()]

    def _apply_preset(self, index: int) -> None:
        if not 0 <= index < len(BRANCH_PRESETS):  # "Custom": the condition stays as it is
            self.refresh()
            return
        b = BRANCH_PRESETS[index]
        for w in (self.kind, self.k, self.p):
            w.blockSignals(True)
        self.kind.setCurrentIndex(BRANCH_KINDS.index(b.kind))
        if b.kind == "random":
            self.p.setValue(b.p)
        else:
            self.k.setValue(b.k)
        for w in (self.kind, self.k, self.p):
            w.blockSignals(False)
        self.refresh()

    def _fits(self, b: BranchPreset) -> bool:
        kind = self.branch_kind()
        return b.kind == kind and (b.p == self.p.value() if kind == "random" else b.k == self.k.value())

    def _edited(self) -> None:
        """As the pattern tabs do: the menu names the preset the condition is, or "Custom"."""
        index = self.preset.currentIndex()
        if not (0 <= index < len(BRANCH_PRESETS) and self._fits(BRANCH_PRESETS[index])):
            _show_preset(self.preset, next((i for i, b in enumerate(BRANCH_PRESETS) if self._fits(b)), None))
        self.refresh()

    def preset_name(self) -> str:
        index = self.preset.currentIndex()
        return BRANCH_PRESETS[index].name if 0 <= index < len(BRANCH_PRESETS) else ""

    def show_branch(self, state: MemoryState) -> None:
        """Set every field from a lesson step and redraw once."""
        widgets = (self.preset, self.block, self.kind, self.k, self.p, self.seed)
        for w in widgets:
            w.blockSignals(True)
        self.block.setValue(state.block)
        self.kind.setCurrentIndex(BRANCH_KINDS.index(state.branch))
        self.k.setValue(state.k)
        self.p.setValue(state.p)
        self.seed.setValue(state.seed)
        names = [b.name for b in BRANCH_PRESETS]
        if state.pattern in names and self._fits(BRANCH_PRESETS[names.index(state.pattern)]):
            self.preset.setCurrentIndex(names.index(state.pattern))
            for w in widgets:
                w.blockSignals(False)
            self.refresh()
            return
        for w in widgets:
            w.blockSignals(False)
        self._edited()

    def refresh(self) -> None:
        kind = self.branch_kind()
        self.k.setEnabled(kind != "random")
        self.p.setEnabled(kind == "random")
        self.seed.setEnabled(kind == "random")
        try:
            branch = Branch(kind, k=self.k.value(), p=self.p.value(), seed=self.seed.value())
            d = divergence(self.block.value(), branch)
        except UserError as exc:
            self.error.setText(str(exc))
            self.predict.show(None, str(exc))
            return
        self.error.setText("")
        self.result = d
        self.canvas.set_result(d)
        self.headline.setText(texts.divergence_headline(d))
        try:
            self.predict.show(divergence_params(self.block.value(), kind, self.k.value()))
        except UserError as exc:  # a random branch: the picture shows, and the strip says why
            self.predict.show(None, str(exc))
        self._cover(self.predict.hidden)

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
        self.coalescing = CoalescingTab()
        self.banks = BankTab()
        self.divergence = DivergenceTab()
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
        if view == "divergence":
            d = self.divergence
            state.pattern = d.preset_name()
            state.block = d.block.value()
            state.branch = d.branch_kind()  # type: ignore[assignment]  # one of BRANCH_KINDS
            state.k = d.k.value()
            state.p = round(d.p.value(), P_DECIMALS)
            state.seed = d.seed.value()
            return state
        tab = self.coalescing if view == "coalescing" else self.banks
        state.pattern = tab.pattern_name()
        state.elem, state.stride, state.offset, state.active = tab.numbers()
        if view == "coalescing":
            state.warp = self.coalescing.warp.value()
        else:
            state.pad = self.banks.pad.isChecked()
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
            self.divergence.show_branch(state)
        else:
            numbers = (state.elem, state.stride, state.offset, state.active)
            if state.view == "coalescing":
                tab: _PatternTab = self.coalescing
                self.coalescing.warp.blockSignals(True)
                self.coalescing.warp.setValue(state.warp)
                self.coalescing.warp.blockSignals(False)
            else:
                tab = self.banks
                self.banks.pad.blockSignals(True)
                self.banks.pad.setChecked(state.pad)
                self.banks.pad.blockSignals(False)
            tab.show_numbers(state.pattern, numbers)
            tab.refresh()
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
        self.coalescing.preset.setCurrentIndex(2)
