"""The Memory page: coalescing, shared-memory banks and warp divergence, as three tabs.

Each tab is a form (pattern presets and the numbers behind them), a picture and the words from
``explorer.memory.texts``; every change recomputes the exact model (microseconds) and redraws.
The page computes nothing itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.errors import UserError
from explorer.memory import texts
from explorer.memory.banks import SOURCE, SharedAccess, bank_conflicts
from explorer.memory.coalescing import ELEMENT_SIZES, GlobalAccess, coalesce, stride_sweep
from explorer.memory.divergence import ITS_NOTE, Branch, divergence
from explorer.ui.memory.canvas import (
    BankCanvas,
    CoalescingCanvas,
    DivergenceCanvas,
    idle_colour,
    wasted_colour,
)
from explorer.ui.panel import Panel
from explorer.ui.theme import Theme, current_theme


@dataclass(frozen=True)
class Pattern:
    """A preset a course uses: its name and the numbers it sets."""

    name: str
    elem_bytes: int
    stride: int
    offset: int = 0
    active: int = 32


GLOBAL_PATTERNS = (
    Pattern("Unit stride: a[i]", 4, 1),
    Pattern("Stride 2: a[2*i]", 4, 2),
    Pattern("Stride 32: a[32*i]", 4, 32),
    Pattern("Misaligned start: a[i+1]", 4, 1, offset=1),
    Pattern("Matrix row: m[r][i], width 1000", 4, 1, offset=1000),
    Pattern("Matrix column: m[i][c], width 1000", 4, 1000),
    Pattern("Array of structs: p[i].x of {x,y,z}", 4, 3),
    Pattern("Struct of arrays: x[i]", 4, 1),
    Pattern("Half a warp: if (lane < 16)", 4, 1, active=16),
    Pattern("double, unit stride", 8, 1),
    Pattern("float4, unit stride", 16, 1),
)

SHARED_PATTERNS = (
    Pattern("Stride 1: s[i]", 4, 1),
    Pattern("Stride 2: s[2*i]", 4, 2),
    Pattern("Column of tile[32][32]", 4, 32),
    Pattern("Column of tile[32][33] (padded)", 4, 33),
    Pattern("Broadcast: all read s[0]", 4, 0),
    Pattern("double, stride 1", 8, 1),
    Pattern("double, stride 2", 8, 2),
    Pattern("float4, stride 1", 16, 1),
)


@dataclass(frozen=True)
class BranchPreset:
    name: str
    kind: str
    k: int = 0
    p: float = 0.0


BRANCH_PRESETS = (
    BranchPreset("Even threads (t % 2 == 0)", "mod", k=2),
    BranchPreset("First 100 threads (t < 100)", "lt", k=100),
    BranchPreset("Whole warps ((t / 32) % 2 == 0)", "warp", k=2),
    BranchPreset("Data: half the lanes at random", "random", p=0.5),
)


def _spin(lo: int, hi: int, value: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    box.setToolTip(tip)
    box.setKeyboardTracking(False)
    return box


def _legend(items: tuple[tuple[str, str], ...]) -> QLabel:
    label = QLabel("   ".join(f"<span style='color:{c}'>&#9632;</span> {t}" for c, t in items))
    label.setWordWrap(True)
    return label


class _PatternTab(QWidget):
    """A form, the picture, the headline and details; ``refresh`` recomputes and redraws."""

    def __init__(self, patterns: tuple[Pattern, ...], canvas: QWidget, allow_stride_zero: bool) -> None:
        super().__init__()
        self.patterns = patterns
        self.canvas = canvas
        self.preset = QComboBox()
        self.preset.addItems([p.name for p in patterns])
        self.preset.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.elem = QComboBox()
        self.elem.addItems([f"{n} bytes" for n in ELEMENT_SIZES])
        self.stride = _spin(0 if allow_stride_zero else 1, 4096, 1, "elements between neighbouring lanes")
        self.offset = _spin(0, 4096, 0, "elements before lane 0's")
        self.active = _spin(1, 32, 32, "lanes taking part (from lane 0)")
        self.form = QFormLayout()
        self.form.addRow("Pattern", self.preset)
        self.form.addRow("Element size", self.elem)
        self.form.addRow("Stride (elements)", self.stride)
        self.form.addRow("Offset (elements)", self.offset)
        self.form.addRow("Active lanes", self.active)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setProperty("role", "pageTitle")
        self.details = QLabel()
        self.details.setWordWrap(True)
        self.error = QLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(self.form)
        left_layout.addWidget(self.error)
        self.left_layout = left_layout
        left.setMaximumWidth(400)
        right = QVBoxLayout()
        right.addWidget(self.headline)
        right.addWidget(canvas, 1)
        self.right = right
        right.addWidget(self.details)
        row = QHBoxLayout(self)
        row.addWidget(left)
        row.addLayout(right, 1)

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
        if self._applying:
            return
        # the preset's name must not describe numbers the user changed
        index = self.preset.currentIndex()
        now = (self.elem_bytes(), self.stride.value(), self.offset.value(), self.active.value())
        p = self.patterns[index] if 0 <= index < len(self.patterns) else None
        if p is None or now != (p.elem_bytes, p.stride, p.offset, p.active):
            match = next(
                (
                    i
                    for i, q in enumerate(self.patterns)
                    if (q.elem_bytes, q.stride, q.offset, q.active) == now
                ),
                None,
            )
            self.preset.blockSignals(True)
            if match is None:
                if self.preset.findText("Custom") < 0:
                    self.preset.addItem("Custom")
                self.preset.setCurrentIndex(self.preset.findText("Custom"))
            else:
                self.preset.setCurrentIndex(match)
            self.preset.blockSignals(False)
        self.refresh()

    def refresh(self) -> None:
        try:
            self.compute()
            self.error.setText("")
        except UserError as exc:
            self.error.setText(str(exc))

    def compute(self) -> None:
        raise NotImplementedError


class CoalescingTab(_PatternTab):
    def __init__(self) -> None:
        super().__init__(GLOBAL_PATTERNS, CoalescingCanvas(), allow_stride_zero=False)
        self.warp = _spin(0, 31, 0, "which warp of the block: its lanes are threads 32w .. 32w+31")
        self.form.addRow("Warp of the block", self.warp)
        self.warp.valueChanged.connect(self.refresh)
        theme = current_theme()
        self.legend = _legend(
            (
                (theme.accent, "bytes a lane asked for"),
                (wasted_colour(theme).name(), "fetched, not used (wasted bandwidth)"),
            )
        )
        self.right.insertWidget(2, self.legend)
        self.sweep = pg.PlotWidget()
        self.sweep.setMinimumHeight(150)
        self.sweep.setMaximumHeight(220)
        self.sweep.setLabel("bottom", "stride (elements)")
        self.sweep.setLabel("left", "efficiency (%)")
        self.sweep.setYRange(0, 105)
        self.sweep.setMouseEnabled(False, False)
        self.sweep.hideButtons()
        caption = QLabel("Efficiency vs stride, this element size:")
        caption.setWordWrap(True)  # large text: two lines rather than cut
        self.left_layout.addWidget(caption)
        self.left_layout.addWidget(self.sweep)
        self.left_layout.addStretch(1)
        self.refresh()

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
        self.canvas.set_result(c)  # type: ignore[attr-defined]
        self.headline.setText(texts.coalescing_headline(c))
        self.details.setText("\n".join(texts.coalescing_lines(c)))
        self._draw_sweep()

    def _draw_sweep(self) -> None:
        theme = current_theme()
        sweep = stride_sweep(self.elem_bytes())
        self.sweep.clear()
        self.sweep.setBackground(theme.plot_background)
        xs = [p.stride for p in sweep]
        self.sweep.plot(xs, [p.efficiency * 100 for p in sweep], pen=pg.mkPen(theme.accent, width=2))
        s = self.stride.value()
        if s <= xs[-1]:
            here = sweep[s - 1]
            self.sweep.plot(
                [s], [here.efficiency * 100], pen=None, symbol="o", symbolBrush=theme.error, symbolSize=10
            )


class BankTab(_PatternTab):
    def __init__(self) -> None:
        super().__init__(SHARED_PATTERNS, BankCanvas(), allow_stride_zero=True)
        theme = current_theme()
        self.legend = _legend(
            (
                (theme.accent, "a word, no conflict (lane number; +n: lanes sharing it, a broadcast)"),
                (theme.error, "words stacked in one bank: served one after another"),
            )
        )
        self.right.insertWidget(2, self.legend)
        self.pad = QCheckBox("Pad each row by one element (tile[32][33])")
        self.pad.setToolTip("Adds one element to the stride, as padding a tile's rows does")
        self.pad.toggled.connect(self.refresh)
        self.form.addRow("", self.pad)
        source = QLabel(f"Rule: {SOURCE}. Banks are numbered across the top.")
        source.setWordWrap(True)
        source.setProperty("role", "muted")
        self.left_layout.addWidget(source)
        self.left_layout.addStretch(1)
        self.refresh()

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
        self.canvas.set_result(b)  # type: ignore[attr-defined]
        self.headline.setText(texts.bank_headline(b))
        self.details.setText("\n".join(texts.bank_lines(b)))


class DivergenceTab(QWidget):
    def __init__(self) -> None:
        super().__init__()
        self.preset = QComboBox()
        self.preset.addItems([b.name for b in BRANCH_PRESETS])
        self.preset.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.block = _spin(1, 1024, 256, "threads per block (1D)")
        self.kind = QComboBox()
        self.kind.addItems(
            ["threadIdx.x % K == 0", "threadIdx.x < K", "(threadIdx.x / 32) % K == 0", "random"]
        )
        self.k = _spin(0, 1 << 20, 2, "K in the condition")
        self.p = QDoubleSpinBox()
        self.p.setRange(0.0, 1.0)
        self.p.setSingleStep(0.05)
        self.p.setValue(0.5)
        self.seed = _spin(0, 1 << 30, 0, "seed of the random data")
        form = QFormLayout()
        form.addRow("Branch", self.preset)
        form.addRow("Threads per block", self.block)
        form.addRow("Condition", self.kind)
        form.addRow("K", self.k)
        form.addRow("Probability p", self.p)
        form.addRow("Seed", self.seed)
        self.error = QLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        note = QLabel(ITS_NOTE)
        note.setWordWrap(True)
        note.setProperty("role", "muted")
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(form)
        lv.addWidget(self.error)
        lv.addWidget(note)
        lv.addStretch(1)
        left.setMaximumWidth(400)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setProperty("role", "pageTitle")
        self.canvas = DivergenceCanvas()
        theme = current_theme()
        self.legend = _legend(
            (
                (theme.accent, "takes the branch"),
                (theme.present, "runs the other path"),
                (idle_colour(theme).name(), "no thread"),
            )
        )
        right = QVBoxLayout()
        right.addWidget(self.headline)
        right.addWidget(self.canvas, 1)
        right.addWidget(self.legend)
        row = QHBoxLayout(self)
        row.addWidget(left)
        row.addLayout(right, 1)
        self._kinds = ("mod", "lt", "warp", "random")
        self.preset.currentIndexChanged.connect(self._apply_preset)
        for w in (self.block, self.k, self.seed):
            w.valueChanged.connect(self.refresh)
        self.p.valueChanged.connect(self.refresh)
        self.kind.currentIndexChanged.connect(self.refresh)
        self._apply_preset(0)

    def _apply_preset(self, index: int) -> None:
        b = BRANCH_PRESETS[index]
        for w in (self.kind, self.k, self.p):
            w.blockSignals(True)
        self.kind.setCurrentIndex(self._kinds.index(b.kind))
        if b.kind == "random":
            self.p.setValue(b.p)
        else:
            self.k.setValue(b.k)
        for w in (self.kind, self.k, self.p):
            w.blockSignals(False)
        self.refresh()

    def refresh(self) -> None:
        kind = self._kinds[self.kind.currentIndex()]
        self.k.setEnabled(kind != "random")
        self.p.setEnabled(kind == "random")
        self.seed.setEnabled(kind == "random")
        try:
            branch = Branch(kind, k=self.k.value(), p=self.p.value(), seed=self.seed.value())
            d = divergence(self.block.value(), branch)
        except UserError as exc:
            self.error.setText(str(exc))
            return
        self.error.setText("")
        self.result = d
        self.canvas.set_result(d)
        self.headline.setText(texts.divergence_headline(d))


class MemoryPanel(Panel):
    """Coalescing, Bank conflicts and Divergence as tabs of one page."""

    def __init__(self, context: object, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.tabs = QTabWidget()
        self.coalescing = CoalescingTab()
        self.banks = BankTab()
        self.divergence = DivergenceTab()
        self.tabs.addTab(self.coalescing, "Coalescing (global memory)")
        self.tabs.addTab(self.banks, "Bank conflicts (shared memory)")
        self.tabs.addTab(self.divergence, "Warp divergence")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.tabs)

    def apply_theme(self, theme: Theme) -> None:
        for tab in (self.coalescing, self.banks, self.divergence):
            tab.refresh()
            tab.update()

    def prepare_screenshot(self) -> None:
        """The course's first picture: a strided load wasting most of what it fetches."""
        self.tabs.setCurrentWidget(self.coalescing)
        self.coalescing.preset.setCurrentIndex(2)
