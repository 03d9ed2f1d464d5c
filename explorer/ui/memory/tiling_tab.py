"""The Memory page's Tiled matmul tab: one block of PMPP's tiled kernel, step by step.

The state lives in a Qt-free ``TilingSession`` (``explorer.memory.tiling_session``); this tab only
turns the controls into calls on it and redraws what it announces: the stepper picture, the
counters (this block's and the grid's, ending at the count model's totals), the roofline point of
the chosen T on the chosen GPU and the shared memory and occupancy each T costs there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import Device, Gpu
from explorer.devices.names import short_device_name
from explorer.errors import UserError
from explorer.lessons.model import MemoryState
from explorer.memory import tiling_texts as texts
from explorer.memory.tiling import SOURCE, MatmulShape
from explorer.memory.tiling_session import TILE_MAX, TILE_MIN, TilingSession
from explorer.memory.tiling_steps import MAX_STEPPER_DIM
from explorer.quiz.page_predict import PagePredict, tiling_params
from explorer.roofs.model import Roof
from explorer.ui.guard import qt_guard
from explorer.ui.memory.layout import Columns, ErrorLine, fit_axis_titles, headline, legend, spin
from explorer.ui.memory.tiling_canvas import TilingCanvas, cell_colour, waiting_colour
from explorer.ui.plot_text import LABEL_SHARE, axis_title, plot_title, restyle
from explorer.ui.plot_widget import plot_widget
from explorer.ui.predict_box import PredictBox, cover_label
from explorer.ui.theme import current_theme, figure_font, line_px, px

#: milliseconds between steps while playing
PLAY_EVERY_MS = 350


def _decades(lo: float, hi: float) -> list[tuple[float, str]]:
    """Tick marks at the powers of ten from ``lo`` to ``hi``, at their log10 (a log-mode axis's
    coordinate), labelled as plain numbers: 0.1, 1, 10, 1,000."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [(float(e), f"{10.0**e:,.0f}" if e >= 0 else f"{10.0**e:g}") for e in range(first, last + 1)]


def _short_name(g: Gpu) -> str:
    """A GPU as the narrow form column names it: no vendor, "(catalog)" for a spec sheet; the
    whole name is the item's tooltip."""
    name = short_device_name(g.name)
    return f"{name} (catalog)" if not g.present else name


def _row(*widgets: QWidget, stretches: tuple[int, ...] = (1, 0)) -> QWidget:
    """``widgets`` side by side, as one widget."""
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for w, stretch in zip(widgets, stretches, strict=True):
        layout.addWidget(w, stretch)
    return row


#: where the Tiled matmul tab's predictions are kept in the answers file (its "lesson" column)
PREDICT_PAGE = "tiled matmul page"


class TilingTab(Columns):
    def __init__(
        self, gpus: list[Gpu] | None = None, roof_of: Callable[[Device], Roof] | None = None
    ) -> None:
        super().__init__()
        # the window's roof book where there is one: this roofline is the Benchmarks page's roof
        self.session = TilingSession(roof_of=roof_of) if roof_of is not None else TilingSession()
        # --- the form -------------------------------------------------------------------------
        self.m = spin(1, MAX_STEPPER_DIM, 64, "M: rows of A and of C")
        self.n = spin(1, MAX_STEPPER_DIM, 64, "N: columns of B and of C")
        self.k = spin(1, MAX_STEPPER_DIM, 64, "K: columns of A, rows of B (the length of each dot product)")
        self.tile = QSlider(Qt.Orientation.Horizontal)
        self.tile.setRange(TILE_MIN, TILE_MAX)
        self.tile.setValue(8)
        self.tile.setPageStep(4)
        self.tile.setToolTip(
            "T: the tile side; a block is T x T threads and holds 2 T x T floats in shared memory"
        )
        self.tile_label = QLabel()
        self.bx = spin(0, 0, 0, "the block's column in the grid (blockIdx.x)")
        self.by = spin(0, 0, 0, "the block's row in the grid (blockIdx.y)")
        self.edge = QPushButton("Edge block")
        self.edge.setToolTip("the bottom-right block: the raggedest when T does not divide M or N")
        self.gpu = QComboBox()
        self.gpu.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.gpu.setMinimumContentsLength(8)
        self.gpu.setToolTip("the GPU whose limits, occupancy and roofline the costs are read on")
        self.regs = spin(1, 255, 32, "registers per thread, for the occupancy (the compiler decides them)")
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        form.addRow(QLabel("C = A (M x K) . B (K x N)"))
        form.addRow("M", self.m)
        form.addRow("N", self.n)
        form.addRow("K", self.k)
        # rows of two widgets are widgets of their own: a layout nested in a QFormLayout makes
        # its height-for-width come out short, and at large text the rows were squeezed
        form.addRow("Tile T", _row(self.tile, self.tile_label))
        form.addRow("Block x, y", _row(self.bx, self.by, stretches=(1, 1)))
        form.addRow(self.edge)
        form.addRow(QLabel("GPU"))
        form.addRow(self.gpu)  # a row of its own: GPU names are long
        form.addRow("Registers", self.regs)
        self.start = QPushButton("|<")
        self.back = QPushButton("<")
        self.forward = QPushButton(">")
        self.barrier = QPushButton("Next barrier")
        self.end = QPushButton(">|")
        self.play = QPushButton("Play")
        for button, tip in (
            (self.start, "back to the start"),
            (self.back, "one step back"),
            (self.forward, "one step: a warp loads, adds or stores, or a barrier opens"),
            (self.barrier, "run to the next __syncthreads() that opens"),
            (self.end, "to the end: the counters equal the model's totals"),
            (self.play, "step on by itself"),
        ):
            button.setToolTip(tip)
        # the stepper's buttons sit above its picture, as a player's do
        steps = QHBoxLayout()
        steps.setContentsMargins(0, 0, 0, 0)
        for b in (self.start, self.back, self.forward, self.end, self.play):
            steps.addWidget(b)
        steps.addStretch(1)
        self.position = QSlider(Qt.Orientation.Horizontal)
        self.position.setToolTip("the stepper's position in the block's steps")
        self.position_label = QLabel()
        self.error = ErrorLine()
        source = QLabel(f"Kernel: {SOURCE}.")
        source.setWordWrap(True)
        source.setProperty("role", "muted")
        # --- what each T costs: the roofline point and the occupancy ------------------------------
        self._roof_widest = "1,000"  # the left axis's widest number, once a roofline is drawn
        self.roofline = plot_widget()
        self.roofline.setLogMode(x=True, y=True)

        self.occupancy = plot_widget()
        for plot in (self.roofline, self.occupancy):
            plot.setMouseEnabled(False, False)
            plot.hideButtons()
            plot.showGrid(x=True, y=True, alpha=0.25)
        self.cost_line = QLabel()
        self.cost_line.setWordWrap(True)
        self.roof_line = QLabel()
        self.roof_line.setWordWrap(True)
        self.roof_line.setProperty("role", "muted")
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(form)
        lv.addWidget(self.error)
        lv.addWidget(self.roofline)
        lv.addWidget(self.roof_line)
        lv.addWidget(self.occupancy)
        lv.addWidget(self.cost_line)
        lv.addWidget(source)
        lv.addStretch(1)
        # --- the picture and its words --------------------------------------------------------------
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        headline(self.headline)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.canvas = TilingCanvas()
        theme = current_theme()
        self.legend = legend(
            (
                (cell_colour(theme, "loaded").name(), "loaded from A or B this phase"),
                (cell_colour(theme, "zero").name(), "zero (outside the matrix: no load)"),
                (cell_colour(theme, "stale").name(), "left from the last phase"),
                (waiting_colour(theme).name(), "warp waiting at a barrier"),
                (theme.present, "sum written to C"),
            )
        )
        self.counters = QLabel()
        self.counters.setTextFormat(Qt.TextFormat.RichText)
        # the table keeps its width; at a large text size it scrolls sideways, not the whole column
        self.counters_area = QScrollArea()
        self.counters_area.setWidget(self.counters)
        self.counters_area.setFrameShape(QFrame.Shape.NoFrame)
        self.counters_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.counters_area.setWidgetResizable(True)
        self.counters_area.setProperty("scrollAllowed", True)
        self.counters_area.viewport().setAutoFillBackground(False)
        self.counters.setAutoFillBackground(False)
        self.counters_note = QLabel()
        self.counters_note.setWordWrap(True)
        # Predict: the headline, the counters and the roofline give the launch's totals away
        self.predict = PagePredict(
            "tiling", "global_loads", PREDICT_PAGE, concepts=("global_loads", "intensity", "barriers")
        )
        self.cover = cover_label(
            "Predict first: the launch's totals, the grid's counters and the roofline show once you "
            "commit your answer. Step through a block to work it out."
        )
        self.predict_box = PredictBox(self.predict, self._cover)
        right = QVBoxLayout()
        right.addWidget(self.predict_box)
        right.addWidget(self.headline)
        right.addWidget(self.cover)
        right.addWidget(self.caption)
        right.addLayout(steps)
        right.addWidget(_row(self.barrier, self.position, self.position_label, stretches=(0, 1, 0)))
        right.addWidget(self.canvas, 1)
        right.addWidget(self.legend)
        right.addWidget(self.counters_area)
        right.addWidget(self.counters_note)
        self._build_columns(left, right)
        # --- wiring ---------------------------------------------------------------------------------
        self.timer = QTimer(self)
        self.timer.setInterval(PLAY_EVERY_MS)
        self.timer.timeout.connect(self._tick)
        for box in (self.m, self.n, self.k):
            box.valueChanged.connect(self._sizes_edited)
        self.tile.valueChanged.connect(self._tile_moved)
        self.bx.valueChanged.connect(self._block_edited)
        self.by.valueChanged.connect(self._block_edited)
        self.edge.clicked.connect(
            lambda: self._guarded(lambda: self.session.set_block(*self.session.last_block()))
        )
        self.gpu.currentIndexChanged.connect(self._gpu_chosen)
        self.regs.valueChanged.connect(lambda v: self._guarded(lambda: self.session.set_regs(v)))
        self.start.clicked.connect(self.session.to_start)
        self.back.clicked.connect(lambda: self.session.step(-1))
        self.forward.clicked.connect(lambda: self.session.step(1))
        self.barrier.clicked.connect(self.session.next_barrier)
        self.end.clicked.connect(self.session.to_end)
        self.play.clicked.connect(self._toggle_play)
        self.position.valueChanged.connect(self.session.seek)
        events = self.session.events
        events.shape.connect(lambda: self._changed(self._show_all))
        events.position.connect(lambda: self._changed(self._show_position))
        events.device.connect(lambda: self._changed(self._show_device))
        self.set_gpus(gpus or [])
        self._fit_sizes()
        self._show_all()

    # --- the GPUs the costs can be read on ------------------------------------------------------------
    def set_gpus(self, gpus: list[Gpu], choose: str = "") -> None:
        """Offer these GPUs (the session keeps the one chosen where it can, see ``offer``)."""
        self.session.offer(gpus, choose)

    def _show_gpus(self) -> None:
        """The menu: the session's GPUs, the chosen one current."""
        gpus = self.session.gpus
        self.gpu.blockSignals(True)
        self.gpu.clear()
        for i, g in enumerate(gpus):
            self.gpu.addItem(_short_name(g), g.key)
            self.gpu.setItemData(i, g.display_name, Qt.ItemDataRole.ToolTipRole)
        device = self.session.device
        keys = [g.key for g in gpus]
        if device is not None and device.key in keys:
            self.gpu.setCurrentIndex(keys.index(device.key))
        self.gpu.blockSignals(False)

    def _gpu_chosen(self, index: int) -> None:
        gpus = self.session.gpus
        if 0 <= index < len(gpus):
            self._guarded(lambda: self.session.set_device(gpus[index]))

    # --- controls -> session ----------------------------------------------------------------------------
    def _guarded(self, change) -> None:
        try:
            change()
            self.error.setText("")
        except UserError as exc:
            self.error.setText(str(exc))

    def _sizes_edited(self) -> None:
        self._guarded(lambda: self.session.set_sizes(self.m.value(), self.n.value(), self.k.value()))

    def _tile_moved(self, value: int) -> None:
        self._guarded(lambda: self.session.set_tile(value))

    def _block_edited(self) -> None:
        self._guarded(lambda: self.session.set_block(self.bx.value(), self.by.value()))

    def _toggle_play(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
        else:
            if self.session.finished:
                self.session.to_start()
            self.timer.start()
        self._show_play()

    @qt_guard
    def _tick(self) -> None:
        self.session.step(1)
        if self.session.finished:
            self.timer.stop()
            self._show_play()

    def _show_play(self) -> None:
        self.play.setText("Pause" if self.timer.isActive() else "Play")

    # --- session -> view ----------------------------------------------------------------------------------
    def _changed(self, show: Callable[[], None]) -> None:
        """The session announced a change: redraw the part of the tab that shows it."""
        self.stop_revealing()  # a change after the step (the teacher's): the columns stay put
        show()

    def _show_device(self) -> None:
        """The GPU menu, the registers and what each T costs on the GPU chosen."""
        self._show_gpus()
        self.regs.blockSignals(True)
        self.regs.setValue(self.session.regs)
        self.regs.blockSignals(False)
        self._show_costs()

    def _show_all(self) -> None:
        s = self.session.shape
        gx, gy = s.grid
        widgets = (self.m, self.n, self.k, self.tile, self.bx, self.by, self.position)
        for w in widgets:
            w.blockSignals(True)
        self.m.setValue(s.m)
        self.n.setValue(s.n)
        self.k.setValue(s.k)
        self.tile.setValue(s.tile)
        self.bx.setRange(0, gx - 1)
        self.by.setRange(0, gy - 1)
        self.bx.setValue(self.session.block[0])
        self.by.setValue(self.session.block[1])
        self.position.setRange(0, self.session.steps)
        for w in widgets:
            w.blockSignals(False)
        self.tile_label.setText(f"{s.tile} x {s.tile}")
        model = self.session.model
        self.headline.setText(texts.headline(model))
        self.headline.setToolTip(texts.summary(model))
        self._show_device()
        self._show_position()
        self.predict.show(tiling_params(s.m, s.n, s.k, s.tile))
        self._cover(self.predict.hidden)

    def _cover(self, hidden: bool) -> None:
        """While the answer is hidden the headline, the grid's counters and the roofline wait (the
        stepper and its block's picture stay: one block's steps are the way to work it out)."""
        for w in (self.headline, self.counters_area, self.counters_note, self.roofline, self.roof_line):
            w.setVisible(not hidden)
        self.cover.setVisible(hidden)

    def _show_position(self) -> None:
        session = self.session
        state = session.state
        self.position.blockSignals(True)
        self.position.setValue(state.position)
        self.position.blockSignals(False)
        self.position_label.setText(f"step {state.position} of {session.steps}")
        self.caption.setText(texts.step_caption(session.timeline, state))
        self.canvas.show_state(session.shape, session.block, state)
        self._show_counters()

    def _show_counters(self) -> None:
        session, theme = self.session, current_theme()
        state = session.state
        model = session.model
        block_total = session.timeline.block_counters(session.steps)
        finished = session.finished
        pad = "padding-left:12px"
        head = (
            "<tr><th></th>"
            f"<th align='right' style='{pad}'>this block</th>"
            f"<th align='right' style='{pad}'>all {session.shape.blocks} blocks</th>"
            f"<th align='right' style='{pad}'>model's total</th></tr>"
        )
        rows = []
        for label, attr in texts.COUNTER_ROWS:
            grid_total = model.tiled.barriers if attr == "barriers" else getattr(model.tiled, attr)
            now = texts.counter_value(state.grid, attr)
            colour = theme.present if finished and now == grid_total else theme.text
            cells = (
                f"{texts.grouped(texts.counter_value(state.block, attr))} of "
                f"{texts.grouped(texts.counter_value(block_total, attr))}",
                f"<span style='color:{colour}'>{texts.grouped(now)}</span>",
                texts.grouped(grid_total),
            )
            rows.append(
                f"<tr><td>{label}</td>"
                + "".join(f"<td align='right' style='{pad}'>{c}</td>" for c in cells)
                + "</tr>"
            )
        note = "All blocks are counted as if at the same step (edge blocks load less). " + (
            "The counters have reached the model's totals." if finished else ""
        )
        self.counters.setText(f"<table>{head}{''.join(rows)}</table>")
        self.counters_note.setText(note)

    def _show_costs(self) -> None:
        session, theme = self.session, current_theme()
        cost = session.cost
        self.cost_line.setText(
            texts.cost_line(cost)
            if cost is not None
            else "Choose a GPU to see the shared memory and occupancy each T costs."
        )
        self._draw_roofline()
        self._draw_occupancy()
        self.canvas.update()
        fg = theme.plot_foreground
        for plot in (self.roofline, self.occupancy):
            plot.setBackground(theme.plot_background)
            for name in ("left", "bottom"):
                plot.getAxis(name).setTextPen(fg)
                plot.getAxis(name).setPen(fg)
            restyle(plot)  # ticks, titles and labels at the figure size the text scale asks
        fit_axis_titles(self.roofline, self._roof_widest)
        fit_axis_titles(self.occupancy, "100")

    def _draw_roofline(self) -> None:
        session, theme = self.session, current_theme()
        plot = self.roofline
        plot.clear()
        roof, ceilings = session.roof, session.roof_ceilings()
        fg = theme.plot_foreground
        axis_title(plot, "bottom", "FLOP per byte (global)", fg)
        axis_title(plot, "left", "GFLOP/s", fg)
        if roof is None or ceilings is None:
            plot_title(plot, "No roofline", theme.muted)
            self.roof_line.setText(session.roof_missing + ".")
            return
        plot_title(plot, "Each T on the roofline", fg)  # short: the form column is narrow
        points = session.roof_points()
        peak, bandwidth = ceilings[0].value, ceilings[1].value
        ridge = peak / bandwidth
        xs = [pt_.intensity_flop_per_byte for pt_ in points]
        lo = min(min(xs), ridge) / 2
        hi = max(max(xs), ridge) * 4
        ys = [p.attainable_gflops or peak for p in points]
        # decades only, written out: pyqtgraph's own log ticks (2·10³, 3·10³ ...) crowd at large text
        plot.getAxis("bottom").setTicks([_decades(lo, hi)])
        left_ticks = _decades(min(ys) / 2, peak * 2)
        plot.getAxis("left").setTicks([left_ticks])
        self._roof_widest = max((text for _at, text in left_ticks), key=len)
        plot.plot(
            [lo, ridge, hi],
            [lo * bandwidth, peak, peak],
            pen=pg.mkPen(fg, width=line_px(2)),
        )
        tiled = [p for p in points if p.tile is not None]
        plot.plot(
            [p.intensity_flop_per_byte for p in tiled],
            [p.attainable_gflops for p in tiled],
            pen=None,
            symbol="o",
            symbolSize=px(5),
            symbolBrush=theme.muted,
            symbolPen=None,
        )
        naive = points[0]
        here = next(p for p in tiled if p.tile == session.shape.tile)
        for p, colour, name in ((naive, theme.error, "naive"), (here, theme.accent, f"T = {here.tile}")):
            plot.plot(
                [p.intensity_flop_per_byte],
                [p.attainable_gflops],
                pen=None,
                symbol="o",
                symbolSize=px(13),
                symbolBrush=colour,
                symbolPen=pg.mkPen(theme.plot_background, width=line_px(1)),
            )
            label = pg.TextItem(name, color=colour, anchor=(0, 1))
            label.setFont(figure_font(LABEL_SHARE))
            assert p.attainable_gflops is not None
            label.setPos(math.log10(p.intensity_flop_per_byte), math.log10(p.attainable_gflops))
            plot.addItem(label)
        self.roof_line.setText(texts.roof_line(here, roof, ceilings) + ".")

    def _draw_occupancy(self) -> None:
        session, theme = self.session, current_theme()
        plot = self.occupancy
        plot.clear()
        fg = theme.plot_foreground
        axis_title(plot, "bottom", "tile side T", fg)
        axis_title(plot, "left", "occupancy (%)", fg)
        costs = session.costs
        if not costs:
            plot_title(plot, "no GPU chosen", theme.muted)
            return
        plot_title(plot, "Occupancy of each T", fg)
        xs = [c.tile for c in costs]
        ys = [100.0 * c.occupancy.occupancy if c.occupancy is not None else 0.0 for c in costs]
        here = session.shape.tile
        brushes = [theme.accent if x == here else theme.muted for x in xs]
        plot.addItem(pg.BarGraphItem(x=xs, height=ys, width=0.7, brushes=brushes, pens=[None] * len(xs)))
        plot.setYRange(0, 105)
        plot.setXRange(TILE_MIN - 1, TILE_MAX + 1)

    # --- lesson steps and the page ----------------------------------------------------------------------
    def lesson_fields(self, state: MemoryState) -> None:
        """Write this tab's controls into ``state`` (a step saved from the window)."""
        s = self.session.shape
        state.rows, state.cols, state.inner, state.tile = s.m, s.n, s.k, s.tile
        state.block_x, state.block_y = self.session.block
        state.tick = self.session.position
        device = self.session.device
        if device is not None:
            state.gpu = device.name
        state.regs = self.session.regs

    def show_fields(self, state: MemoryState) -> str:
        """Put a lesson step's fields in place; returns a note ("" or why another GPU is shown)."""
        self.timer.stop()
        self._show_play()
        self.session.choose_gpu(state.gpu)
        self.session.set_regs(state.regs)
        self.session.set_shape(MatmulShape(state.rows, state.cols, state.inner, state.tile))
        self.session.set_block(state.block_x, state.block_y)
        self.session.seek(state.tick)
        self.error.setText("")
        return ""

    def _fit_sizes(self) -> None:
        """What is sized in pixels follows the text size."""
        for plot in (self.roofline, self.occupancy):
            plot.setMinimumHeight(px(170))
            plot.setMaximumHeight(px(240))
        self.canvas.apply_text_scale()  # its least height: its words at this size
        self.counters.adjustSize()
        bar = self.counters_area.horizontalScrollBar().sizeHint().height()
        self.counters_area.setMinimumHeight(self.counters.sizeHint().height() + bar)

    def apply_text_scale(self) -> None:
        self._fit_left()
        self._fit_sizes()
        self._show_all()

    def prepare_screenshot(self) -> None:
        """A picture that shows most at once: a ragged edge block (zeros in the tiles) in its last
        phase, some warps waiting at the first barrier while another loads."""
        self.session.set_shape(MatmulShape(40, 40, 40, 16))
        self.session.set_block(*self.session.last_block())
        ticks = self.session.timeline.ticks
        last_phase = self.session.shape.phases - 1
        self.session.seek(
            next(i for i, t in enumerate(ticks) if t.kind == "load" and t.phase == last_phase) + 4
        )

    def stop(self) -> None:
        self.timer.stop()
        self._show_play()
