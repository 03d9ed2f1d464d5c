"""Latency hiding, watched cycle by cycle: each warp's state, each scheduler's pick, and the curve.

A standalone view of plain core records (``explorer.launch.latency``): a ``LatencyRun`` (one SM's
schedulers simulated cycle by cycle), its ``UtilizationCurve`` (utilization against resident
warps, simulated and in closed form), optionally the ``LatencyPreset`` whose latency it uses (its
source is shown) and, from a GPU, a ``BandwidthSweep`` (``explorer.launch_runs.measured``) drawn over
Little's-law prediction. It computes nothing about the model; it draws what the records hold:

* left, a strip chart scrolling through the cycles: per scheduler, a row with the warp it issued
  (dark for a load, blue for arithmetic) and a row per warp slot, coloured issuing, stalled on
  memory, eligible (ready, not picked) or idle (no warp resident in the slot);
* right, issue-slot utilization against warps per SM: the closed form U(N) as a line, the
  simulated points on it, N* marked, and this run's warps, the points up to it drawn solid as the
  utilization "builds up" with each warp added.

Text is sized with ``theme.px``; ``render_image`` draws it offscreen for screenshots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QWidget

from explorer.launch.latency import (
    ELIGIBLE,
    ISSUING,
    STALLED,
    LatencyPreset,
    LatencyRun,
    UtilizationCurve,
)
from explorer.launch.time_views import chart_window
from explorer.launch_runs.measured import BandwidthSweep
from explorer.ui.guard import qt_guard

# the y axis of the sweep; the plots' least height, in lines of their axis text: the schedulers
# each labelled, a few labelled ticks, the graph's labels off its curve (at 150% with a lesson
# open the curve was 30 px tall with "16 warps" and "N* = 120" written over it); where the page
# cannot give it, the view scrolls in its own area
from explorer.ui.plot_text import MIN_PLOT_LINES
from explorer.ui.visualizer import palette
from explorer.ui.visualizer.playing_view import PlayingView, clauses_that_fit, paint_axis
from explorer.ui.visualizer.sweep_graph import nice_ticks
from explorer.words import percent

ISSUE_ALU = palette.RUNNING
ISSUE_LOAD = QColor("#1e3a8a")  # the running blue, darkest: a load leaves
WAITING = palette.QUEUED  # amber: stalled on memory (waiting, as a queued block waits)
READY = QColor("#bfdbfe")  # the running blue, palest: could issue, was not picked
#: the thinnest row of the warp-state chart, in pixels, before the empty warp slots are left out
MIN_ROW_PX = 3.0
#: shares written at their widest (">99.9%", two-digit "88.8%"): the figures are laid out for these
WIDEST_SHARES = (0.9999, 0.888)
#: colour codes of the chart's raster (index into the view's table)
_NONE, _IDLE, _STALLED, _ELIGIBLE, _ALU, _LOAD = range(6)


@dataclass(frozen=True)
class _Frame:
    """The view's rows at one size (``LatencyView._frame``)."""

    facts: str
    facts_h: float
    top: float  # the chart and graph's row
    bottom: float
    legend_h: float
    source_h: float
    elided: bool  # the source on one line, cut with "…"


class LatencyView(PlayingView):
    """The warp-state chart and the utilization curve of one ``LatencyRun`` (``set_model``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run: LatencyRun | None = None
        self.curve: UtilizationCurve | None = None
        self.preset: LatencyPreset | None = None
        self.sweep: BandwidthSweep | None = None
        self.sweep_unavailable = ""  # one line: why there is no measured sweep (no GPU, say)
        self.cycle = 0  # the window shows cycles [cycle - window, cycle)
        self._codes: np.ndarray | None = None
        #: the plots the last paint drew: (what, rectangle, line height of their axis text)
        self._areas: list[tuple[str, QRectF, float]] = []

    # ------------------------------------------------------------------ records in

    def set_model(
        self, run: LatencyRun, curve: UtilizationCurve | None = None, preset: LatencyPreset | None = None
    ) -> None:
        self.run, self.curve, self.preset = run, curve, preset
        self._codes = None
        self.cycle = self.window_cycles
        self.updateGeometry()  # its figures and legend may take another number of lines
        self.update()

    def set_sweep(self, sweep: BandwidthSweep | None, unavailable: str = "") -> None:
        """A measured bandwidth sweep for the right panel, or one line saying why there is none."""
        self.sweep, self.sweep_unavailable = sweep, unavailable
        self.update()

    @property
    def window_cycles(self) -> int:
        """Cycles on screen (``time_views.chart_window``: two loop periods, 40 to 600)."""
        return chart_window(self.run) if self.run is not None else 1

    def set_cycle(self, cycle: int) -> None:
        """Show the ``window_cycles`` cycles before ``cycle`` (the cycle clock's position)."""
        if self.run is None:
            return
        cycle = int(min(max(self.window_cycles, cycle), self.run.recorded_cycles))
        if cycle != self.cycle:
            self.cycle = cycle
            self.update()

    # ------------------------------------------------------------------ what to paint

    def chart_codes(self) -> np.ndarray:
        """int8 [rows, recorded cycles]: per scheduler its pick row, then its warp slots' rows."""
        if self._codes is not None:
            return self._codes
        assert self.run is not None
        run, c = self.run, self.run.config
        states = run.states()
        picks = run.picks()
        n = run.recorded_cycles
        rows = []
        for s in range(c.schedulers):
            load = run.schedulers[s].loads[:n]
            pick_row = np.where(picks[:, s] < 0, _NONE, np.where(load, _LOAD, _ALU))
            rows.append(pick_row)
            for w in range(s, c.slots, c.schedulers):
                st = states[:, w]
                is_load = (picks[:, s] == w) & load
                code = np.select(
                    [st == ISSUING, st == STALLED, st == ELIGIBLE],
                    [np.where(is_load, _LOAD, _ALU), _STALLED, _ELIGIBLE],
                    _IDLE,
                )
                rows.append(code)
        self._codes = np.array(rows, dtype=np.int8)
        return self._codes

    def row_labels(self) -> list[str]:
        assert self.run is not None
        c = self.run.config
        out = []
        for s in range(c.schedulers):
            out.append(f"sched {s}")
            out += [f"w{w}" for w in range(s, c.slots, c.schedulers)]
        return out

    def rows_shown(self, height: float) -> list[int]:
        """The chart's rows drawn in ``height`` pixels: all of them, or, where a row would be under
        MIN_ROW_PX (64 warp slots at a large text size), the schedulers' picks and the resident
        warps only: the empty slots' grey rows would squeeze the warps to a hairline each."""
        labels = self.row_labels()
        every = list(range(len(labels)))
        if height / len(labels) >= MIN_ROW_PX:
            return every
        codes = self.chart_codes()
        return [i for i in every if labels[i].startswith("sched") or bool((codes[i] != _IDLE).any())]

    def least_height(self, width: int) -> int:
        """The title, one line of figures (the first, whole), the chart and the graph with plots
        MIN_PLOT_LINES tall, the legend and the source's one elided line: what the view keeps
        when it has dropped all it can (at 200% a fixed 200 px drew the curve over the title)."""
        if self.run is None:
            return 200
        f_ = self.fonts()
        th, bh, sh = (QFontMetrics(f).height() for f in (f_.title, f_.body, f_.small))
        pad = 6.0
        _kept, first = self._widest_facts_fit(width - 2 * pad, 1, f_.body)
        legend_h = self._legend_rows(width - 2 * pad, f_.small) * (sh + 6)
        source_h = sh if self.preset is not None else 0
        chart = _chart_least(QFontMetrics(f_.small))
        return math.ceil(pad + th + 2 + max(first, float(bh)) + pad + chart + legend_h + source_h + pad)

    # ------------------------------------------------------------------ painting

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(1000, 560)

    def figure_areas(self) -> list[tuple[str, QRectF, float]]:
        """The scheduler chart's and the graph's plots as last painted, with the line height of
        their axis text: how much room each really had (the render test holds them to it)."""
        return list(self._areas)

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        self._areas = []
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        c = palette.canvas()
        p.fillRect(self.rect(), c.ground)
        f_ = self.fonts()
        title_f, body_f, small_f = f_.title, f_.body, f_.small
        if self.run is None:
            p.setFont(body_f)
            p.setPen(c.muted)
            p.drawText(QRectF(self.rect()).adjusted(12, 12, -12, -12), 0, "No latency model to show yet.")
            p.end()
            return
        cfg = self.run.config
        w, h, pad = float(self.width()), float(self.height()), 6.0
        th, bh, sh = (QFontMetrics(f).height() for f in (title_f, body_f, small_f))
        p.setFont(title_f)
        p.setPen(c.text)
        title = (
            f"Simulated: {cfg.warps} warps on {cfg.schedulers} "
            f"scheduler{'s' if cfg.schedulers != 1 else ''} ({cfg.policy})"
        )
        _elided(p, QRectF(pad, pad, w - 2 * pad, th), title)
        p.setFont(body_f)
        wrap = int(Qt.TextFlag.TextWordWrap)
        frame = self._frame(w, h)
        facts, facts_h, top, bottom = frame.facts, frame.facts_h, frame.top, frame.bottom
        legend_h, source_h, elided = frame.legend_h, frame.source_h, frame.elided
        facts_box = QRectF(pad, pad + th + 2, w - 2 * pad, facts_h)
        p.setPen(c.muted)
        p.drawText(facts_box, wrap, facts)
        source = self.preset.source if self.preset is not None else ""
        chart = QRectF(pad, top, (w - 3 * pad) * 0.6, bottom - top)
        graph = QRectF(chart.right() + pad, top, w - chart.right() - 2 * pad, bottom - top)
        self._paint_chart(p, chart, small_f)
        if self.sweep is not None or self.sweep_unavailable:
            self._paint_sweep(p, graph, small_f)
        else:
            self._paint_curve(p, graph, small_f)
        self._paint_legend(p, QRectF(pad, bottom + 3, w - 2 * pad, legend_h), small_f)
        if source and source_h > 0:
            p.setFont(small_f)
            p.setPen(c.muted)
            where = QRectF(pad, bottom + legend_h + 3, w - 2 * pad, source_h)
            if elided:  # on one line: wrapped, a pixel of rounding put its tail on a second, cut off
                line = p.fontMetrics().elidedText(
                    "source: " + source, Qt.TextElideMode.ElideRight, int(where.width())
                )
                p.drawText(where, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop), line)
            else:
                p.drawText(where, int(Qt.TextFlag.TextWordWrap), "source: " + source)
        p.end()

    def _frame(self, w: float, h: float) -> _Frame:
        """Where the view's parts go at ``w`` x ``h``: the figures over the chart, then the chart
        and graph's row, then the legend and the source at the bottom."""
        f_ = self.fonts()
        th, bh, sh = (QFontMetrics(f).height() for f in (f_.title, f_.body, f_.small))
        pad = 6.0
        legend_h = self._legend_rows(w - 2 * pad, f_.small) * (sh + 6)
        # three lines of figures, or fewer where more would leave the plots under MIN_PLOT_LINES
        chart_least = _chart_least(QFontMetrics(f_.small))
        lines = 3
        while lines > 1 and h - (pad + th + 2 + lines * bh + pad) - legend_h - pad < chart_least + sh:
            lines -= 1
        facts, facts_h = self.facts_that_fit(w - 2 * pad, lines, f_.body)
        top = pad + th + 2 + facts_h + pad
        # the legend and the source at the bottom; where they would leave the chart fewer than
        # their least height, the source shrinks to one elided line (whole on the
        # preset box's tooltip): a published figure is never shown without where it comes from
        source = self.preset.source if self.preset is not None else ""
        source_h, elided = 0.0, False
        if source:
            fm = QFontMetrics(f_.small)
            box = fm.boundingRect(
                QRectF(0, 0, w - 2 * pad, 4 * sh).toRect(), int(Qt.TextFlag.TextWordWrap), "source: " + source
            )
            for lines in (2, 1):
                source_h = min(lines * sh, float(box.height()))
                if h - pad - source_h - legend_h - top >= chart_least:
                    break
            elided = source_h < box.height()
        bottom = h - pad - source_h - legend_h
        return _Frame(facts, facts_h, top, bottom, legend_h, source_h, elided)

    def legend_bottom(self) -> int:
        """The bottom, in the view's pixels, of the legend under the chart and the graph."""
        if self.run is None:
            return self.height()
        frame = self._frame(float(self.width()), float(self.height()))
        return math.ceil(frame.bottom + 3 + frame.legend_h)

    def height_to_fit(self, room: int) -> int:
        """The height at which the chart and the graph's row with the legend under it fill
        ``room`` exactly, for an area ``room`` tall that cannot show the whole view: scrolled to
        the row's top, the legend ends at the fold, whole (it was sliced through its words at
        150% on 1024x768). Where the row and the legend cannot both fit, the row alone fills the
        room and the legend waits whole below the fold. 0 where the view fits the room, or the
        row cannot either (its plots would be under their least height): the least height rules."""
        width = max(self.width(), 320)
        least = self.least_height(width)
        if self.run is None or least <= room:
            return 0
        for with_legend in (True, False):
            height = least
            for _ in range(4):  # more height, more lines of figures over the row: rounds settle it
                frame = self._frame(float(width), float(height))
                end = frame.bottom + (3 + frame.legend_h if with_legend else 0)
                want = math.ceil(frame.top + room + height - end)
                if want <= height:
                    break
                height = want
            if height > least:
                return height
        return 0

    def plots_span(self) -> tuple[int, int]:
        """The top and bottom, in the view's pixels, of the row of the chart and the graph with
        their axes: what a scrolling page keeps in view (before a run, the whole view)."""
        if self.run is None:
            return 0, self.height()
        frame = self._frame(float(self.width()), float(self.height()))
        return math.floor(frame.top), math.ceil(frame.bottom)

    def facts(self, so_far: float | None = None) -> list[str]:
        """The figures over the chart, most wanted first, each a clause that reads whole on its
        own. ``so_far`` is the issue-slot share up to the cycle shown (the view's, when None)."""
        assert self.run is not None
        run, cfg = self.run, self.run.config
        if so_far is None:
            so_far = run.issued_by(self.cycle) / (self.cycle * cfg.schedulers) if self.cycle else 0.0
        return [
            f"issue slots used: {percent(run.utilization)} in the steady state ({percent(so_far)} so far)",
            f"model U(N) = {percent(run.model_utilization)}",
            f"warps needed N* = {run.warps_needed_per_scheduler} per scheduler ({run.warps_needed} per SM)",
            f"each warp issues {self._waited}, waits L = {cfg.mem_latency} cycles for its result, "
            f"and has K = {cfg.alu} independent instructions to issue meanwhile",
        ]

    def facts_that_fit(self, width: float, lines: int, font: QFont) -> tuple[str, float]:
        """The leading clauses of ``facts`` that fit in ``lines`` wrapped lines of ``width``, and
        the height they take (``clauses_that_fit``), judged with the widest shares so far, so
        neither the text nor the chart under it jumps while the cycles play ("100%" is narrower
        than the "50.1%" it was judged for: the figures wrapped over the chart at 200%)."""
        kept, height = self._widest_facts_fit(width, lines, font)
        return "; ".join(self.facts()[:kept]), height

    def _widest_facts_fit(self, width: float, lines: int, font: QFont) -> tuple[int, float]:
        """``clauses_that_fit`` for the widest ways a share is written: the fewest clauses kept
        and the most height they take."""
        fits = [clauses_that_fit(self.facts(share), width, lines, font) for share in WIDEST_SHARES]
        return min(k for k, _h in fits), max(h for _k, h in fits)

    def _colours(self) -> list[QColor]:
        c = palette.canvas()
        return [c.sm_face, c.empty_slot, WAITING, READY, ISSUE_ALU, ISSUE_LOAD]

    def _paint_chart(self, p: QPainter, rect: QRectF, font: QFont) -> None:
        assert self.run is not None
        c = palette.canvas()
        p.setFont(font)
        fm = QFontMetrics(font)
        label_w = fm.horizontalAdvance("sched 9") + 6
        axis_h = 2 * fm.height() + 4
        plot = QRectF(rect.left() + label_w, rect.top(), rect.width() - label_w, rect.height() - axis_h)
        self._areas.append(("scheduler chart", plot, float(fm.lineSpacing())))
        if plot.width() < 10 or plot.height() < 10:
            return
        keep = self.rows_shown(plot.height())
        codes = self.chart_codes()[keep]
        labels = [self.row_labels()[i] for i in keep]
        lo, hi = self.cycle - self.window_cycles, self.cycle
        window = codes[:, lo:hi]
        table = np.array(
            [0xFF000000 | (q.red() << 16) | (q.green() << 8) | q.blue() for q in self._colours()], np.uint32
        )
        pixels = np.ascontiguousarray(table[window])
        image = QImage(
            pixels.data, window.shape[1], window.shape[0], 4 * window.shape[1], QImage.Format.Format_RGB32
        )
        p.drawImage(plot, image.copy())
        rows = len(labels)
        row_h = plot.height() / rows
        p.setPen(QPen(c.sm_border, 1))
        for i, label in enumerate(labels):  # a line between schedulers
            if label.startswith("sched"):
                y = plot.top() + i * row_h
                p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        for i, (top, bottom), label in _row_label_boxes(labels, plot, row_h, fm.height()):
            p.setPen(c.text if label.startswith("sched") else c.muted)
            p.drawText(
                QRectF(rect.left(), top, label_w - 4, bottom - top),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                labels[i],
            )
        paint_axis(
            p,
            (plot.left(), plot.right()),
            plot.bottom(),
            font,
            (lo, hi),
            "cycle",
            widest="000000",
            max_ticks=6,
        )

    def _graph_frame(
        self, p: QPainter, rect: QRectF, font: QFont, y_labels: list[tuple[float, str]], widest: str
    ) -> tuple[QRectF, bool]:
        """The plot's rectangle in ``rect``, its grid and y labels drawn, and whether the x axis
        has room for its label line under the numbers (a short graph leaves it out: its title
        names the x axis too)."""
        fm = QFontMetrics(font)
        gap = _y_label_gap(fm)
        left_w = fm.horizontalAdvance(widest) + gap + 4
        # the top y label is centred on the plot's top: half a line more keeps it off the title
        top = rect.top() + 1.5 * fm.height() + 4
        under = 2 * fm.height() + 6  # the x axis's numbers and its label
        labelled = rect.bottom() - under - top >= 3 * fm.height()
        if not labelled:
            under = fm.height() + 6
        plot = QRectF(rect.left() + left_w, top, rect.width() - left_w - 8, rect.bottom() - under - top)
        self._areas.append(("graph", QRectF(plot), float(fm.lineSpacing())))
        c = palette.canvas()
        p.fillRect(plot, c.sm_face)
        last_y = math.inf
        for frac, text in y_labels:
            y = plot.bottom() - frac * plot.height()
            p.setPen(QPen(c.grid_line, 1))
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            if last_y - y < fm.height() and frac < 1:
                continue  # a label would sit on the one below: the top one is always drawn
            last_y = y
            p.setPen(c.muted)
            p.drawText(
                QRectF(rect.left(), y - fm.height() / 2, left_w - gap, fm.height()),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                text,
            )
        return plot, labelled

    def _x_axis(self, p: QPainter, plot: QRectF, font: QFont, x_max: int, label: str) -> None:
        paint_axis(p, (plot.left(), plot.right()), plot.bottom(), font, (0, x_max), label, centre_label=True)

    def _paint_curve(self, p: QPainter, rect: QRectF, font: QFont) -> None:
        assert self.run is not None
        run, cfg = self.run, self.run.config
        c = palette.canvas()
        p.setFont(font)
        fm = QFontMetrics(font)
        _graph_title(p, rect, "issue slots used vs warps per SM")
        plot, labelled = self._graph_frame(
            p, rect, font, [(f, f"{int(100 * f)}%") for f in (0, 0.25, 0.5, 0.75, 1.0)], "100%"
        )
        if plot.width() < 10 or plot.height() < 10:
            return
        points = self.curve.points if self.curve is not None else ()
        x_max = max([cfg.slots, cfg.warps] + [pt.warps for pt in points])

        def at(warps: float, u: float) -> QPointF:
            return QPointF(plot.left() + warps / x_max * plot.width(), plot.bottom() - u * plot.height())

        if points:
            p.setPen(QPen(c.muted, 2))
            p.drawPolyline(QPolygonF([at(0, 0)] + [at(pt.warps, pt.model) for pt in points]))
            r = max(2.0, min(5.0, plot.width() / x_max / 3))
            for pt in points:
                built = pt.warps <= cfg.warps
                colour = QColor(palette.RUNNING)
                if not built:
                    colour.setAlpha(70)
                p.setPen(QPen(colour.darker(130), 1))
                p.setBrush(colour)
                p.drawEllipse(at(pt.warps, pt.simulated), r, r)
            p.setBrush(Qt.BrushStyle.NoBrush)
        # N*, where the model reaches 100%: its label low in the plot (the rising line and the
        # note are not there), off the curve, the dashed line and this run's point ("N* = 120 >
        # 64" was written over the curve's end where the graph was narrow)
        need = run.warps_needed
        p.setPen(QPen(palette.IDLE_LANE.darker(120), 1.5, Qt.PenStyle.DashLine))
        label = f"N* = {need}"
        line = [at(0, 0)] + [at(pt.warps, pt.model) for pt in points]
        cur = at(cfg.warps, run.utilization)
        dot = QRectF(cur.x() - 8, cur.y() - 8, 16, 16)
        dashed: list[QPointF] = []
        if need <= x_max:
            x = at(need, 0).x()
            p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            dashed = [QPointF(x, plot.top()), QPointF(x, plot.bottom())]
        else:
            for longer in (f", past the SM's {x_max} warps", f" > {x_max}", ""):
                if fm.horizontalAdvance(label + longer) <= plot.width() - 4:
                    break
            label += longer
            x = None
        lw = fm.horizontalAdvance(label) + 4
        need_box = _need_place(x, QSizeF(lw, fm.height()), plot, [*_samples(line), *_samples(dashed)], dot)
        p.drawText(need_box, Qt.AlignmentFlag.AlignLeft, label)
        # this run
        p.setPen(QPen(palette.SELECTION.darker(150), 1.5))
        p.setBrush(palette.SELECTION)
        p.drawEllipse(cur, 6, 6)
        p.setBrush(Qt.BrushStyle.NoBrush)
        note = f"{cfg.warps} warps" + (
            f" of {cfg.slots} ({percent(cfg.warps / cfg.slots)} occupancy)" if cfg.warp_slots else ""
        )
        if fm.horizontalAdvance(note) + 6 > plot.width():
            note = f"{cfg.warps} warps"  # a narrow graph: the occupancy is in the caption
        nw = fm.horizontalAdvance(note) + 6
        note_box = _label_place(cur, QSizeF(nw, fm.height()), plot, line, need_box, dashed)
        if note_box is not None:  # no free place: N* is the label that matters
            p.setPen(palette.SELECTION.darker(170))
            p.drawText(note_box, Qt.AlignmentFlag.AlignHCenter, note)
        self._x_axis(p, plot, font, x_max, "resident warps per SM" if labelled else "")

    def _paint_sweep(self, p: QPainter, rect: QRectF, font: QFont) -> None:
        c = palette.canvas()
        p.setFont(font)
        fm = QFontMetrics(font)
        _graph_title(p, rect, "measured GB/s vs warps per SM")
        s = self.sweep
        if s is None:
            p.setPen(c.muted)
            p.drawText(
                rect.adjusted(4, fm.height() + 8, -4, 0),
                int(Qt.TextFlag.TextWordWrap),
                self.sweep_unavailable,
            )
            return
        x_max = max(pt.warps_per_sm for pt in s.points)
        top_gbps = max([pt.gbps for pt in s.points] + [s.predicted_gbps(x_max)]) * 1.1
        ticks = nice_ticks(0, top_gbps, 4)
        plot, labelled = self._graph_frame(p, rect, font, [(t / top_gbps, f"{t:g}") for t in ticks], "00000")

        def at(warps: float, gbps: float) -> QPointF:
            return QPointF(
                plot.left() + warps / x_max * plot.width(), plot.bottom() - gbps / top_gbps * plot.height()
            )

        steps = [x_max * i / 64 for i in range(65)]
        p.setPen(QPen(c.muted, 2))
        p.drawPolyline(QPolygonF([at(x, s.predicted_gbps(x)) for x in steps]))
        p.setPen(QPen(palette.RUNNING.darker(130), 1))
        p.setBrush(palette.RUNNING)
        for pt in s.points:
            p.drawEllipse(at(pt.warps_per_sm, pt.gbps), 4, 4)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(c.muted)
        p.drawText(
            QRectF(plot.left() + 4, plot.top() + 2, plot.width() - 8, fm.height()),
            Qt.AlignmentFlag.AlignLeft,
            fm.elidedText(
                f"line: Little's law, {s.latency_ns:.0f} ns per load",
                Qt.TextElideMode.ElideRight,
                int(plot.width() - 8),
            ),
        )
        self._x_axis(p, plot, font, x_max, "resident warps per SM" if labelled else "")

    @property
    def _waited(self) -> str:
        """What each warp issues and then waits for: a load, or (an arithmetic latency) an instruction."""
        return self.preset.waited if self.preset is not None else "a load"

    def _legend(self) -> tuple[tuple[QColor, str], ...]:
        return (
            (ISSUE_ALU, "issuing arithmetic"),
            (ISSUE_LOAD, f"issuing {self._waited}"),
            (
                WAITING,
                "stalled on memory"
                if self.preset is None or self.preset.memory
                else "waiting for its result",
            ),
            (READY, "eligible, not picked"),
            (palette.canvas().empty_slot, "idle warp slot"),
        )

    def _legend_items(self, width: float, font: QFont) -> list[tuple[float, int, QColor, str]]:
        """(x, row, colour, words) for each entry, wrapped to ``width``."""
        fm = QFontMetrics(font)
        box = fm.height() - 4
        x, row, out = 0.0, 0, []
        for colour, words in self._legend():
            item_w = box + 4 + fm.horizontalAdvance(words) + 14
            if x > 0 and x + item_w - 14 > width:
                x, row = 0.0, row + 1
            out.append((x, row, colour, words))
            x += item_w
        return out

    def _legend_rows(self, width: float, font: QFont) -> int:
        return max(r for _x, r, _c, _w in self._legend_items(width, font)) + 1

    def _paint_legend(self, p: QPainter, rect: QRectF, font: QFont) -> None:
        c = palette.canvas()
        p.setFont(font)
        fm = QFontMetrics(font)
        box = fm.height() - 4
        row_h = fm.height() + 6
        for x, row, colour, words in self._legend_items(rect.width(), font):
            y = rect.top() + row * row_h
            p.setPen(QPen(c.sm_border, 1))
            p.setBrush(colour)
            p.drawRect(QRectF(rect.left() + x, y + (row_h - box) / 2, box, box))
            p.setPen(c.text)
            p.drawText(
                QRectF(rect.left() + x + box + 4, y, rect.width() - x - box - 4, row_h),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                words,
            )
        p.setBrush(Qt.BrushStyle.NoBrush)


def _y_label_gap(fm: QFontMetrics) -> float:
    """Between a graph's y labels and its plot: the x axis's first number is centred on the
    plot's left edge, so the bottom y label ("0%") keeps clear of its half width (at 150% they
    were drawn over each other)."""
    return fm.horizontalAdvance("0") / 2 + 4


def _chart_least(fm: QFontMetrics) -> float:
    """The least height of the chart's and the graph's row: the graph's title and half a line
    for its top y label, a plot MIN_PLOT_LINES lines tall, and the x axis's numbers and label
    (``_graph_frame``; the chart needs less around its plot: the axis only)."""
    return MIN_PLOT_LINES * fm.lineSpacing() + 3.5 * fm.height() + 12


def _row_label_boxes(
    labels: list[str], plot: QRectF, row_h: float, line_h: float
) -> list[tuple[int, tuple[float, float], str]]:
    """Where the chart's row labels go: (row, (top, bottom), label) for those drawn. The
    schedulers' first, each at its first row (moved up to stay inside the plot), skipped where it
    would sit on the one above; then a warp's label, centred on its row, where its row is about a
    line tall and it touches no label already placed (at 100% "w1" was drawn on "sched 1")."""
    placed: list[tuple[int, tuple[float, float], str]] = []
    free_from = -math.inf
    for i, label in enumerate(labels):
        if label.startswith("sched"):
            top = min(plot.top() + i * row_h, plot.bottom() - line_h)
            if top >= free_from - 0.5 and top >= plot.top() - 0.5:
                placed.append((i, (top, top + line_h), label))
                free_from = top + line_h
    if row_h < line_h * 0.9:
        return placed
    taken = [box for _i, box, _l in placed]
    for i, label in enumerate(labels):
        if label.startswith("sched"):
            continue
        centre = plot.top() + (i + 0.5) * row_h
        box = (centre - line_h / 2, centre + line_h / 2)
        if box[0] < plot.top() - 0.5 or box[1] > plot.bottom() + 0.5:
            continue
        if all(box[1] <= t[0] + 0.5 or box[0] >= t[1] - 0.5 for t in taken):
            placed.append((i, box, label))
            taken.append(box)
    return placed


def _samples(line: list[QPointF]) -> list[QPointF]:
    """Points every 2 px along a polyline: what a label placed on the plot must not cover."""
    out = []
    for a, b in zip(line, line[1:], strict=False):
        steps = max(1, int(max(abs(b.x() - a.x()), abs(b.y() - a.y())) / 2))
        out += [a + (b - a) * (i / steps) for i in range(steps + 1)]
    return out


def _free_box(
    candidates: list[QRectF], plot: QRectF, samples: list[QPointF], avoid: list[QRectF]
) -> QRectF | None:
    """The first candidate inside the plot, off every ``avoid`` box and off every sample of the
    lines drawn; ``None`` where none is."""
    for box in candidates:
        if not plot.contains(box) or any(box.intersects(a) for a in avoid):
            continue
        grown = box.adjusted(-1, -1, 1, 1)
        if not any(grown.contains(s) for s in samples):
            return box
    return None


def _need_place(x: float | None, size: QSizeF, plot: QRectF, samples: list[QPointF], dot: QRectF) -> QRectF:
    """Where the N* label goes: low in the plot, just right of N*'s dashed line at ``x`` (or, N*
    past the axis's end, ``None``, at the plot's right), else left of it, else in the plot's
    upper corners (over a rising curve), each tried off the lines drawn (``samples``) and the
    run's point (``dot``). Where no place is free, the first (a label is never left out)."""
    w, h, gap = size.width(), size.height(), 4.0
    low = plot.bottom() - h - gap
    top = plot.top() + gap
    if x is not None:
        candidates = [QRectF(min(x + 3, plot.right() - w), low, w, h), QRectF(x - 3 - w, low, w, h)]
    else:
        candidates = [QRectF(plot.right() - gap - w, low, w, h)]
    candidates += [
        QRectF(plot.left() + gap, top, w, h),
        QRectF(plot.right() - gap - w, top, w, h),
        QRectF(plot.left() + gap, top + h, w, h),
    ]
    return _free_box(candidates, plot, samples, [dot]) or candidates[0]


def _label_place(
    point: QPointF,
    size: QSizeF,
    plot: QRectF,
    line: list[QPointF],
    taken: QRectF,
    dashed: list[QPointF] | None = None,
) -> QRectF | None:
    """Where a point's label goes: beside the point, inside the plot, off the curve ``line``,
    the ``dashed`` N* line and the ``taken`` box (the N* label), trying above-left and above (a
    little higher each time), below-right, below and the plot's top-left corner in turn; ``None``
    where none is free (written over the curve, "16 warps" could not be read at 150%)."""
    w, h, gap = size.width(), size.height(), 6.0
    x, y = point.x(), point.y()
    left = max(plot.left() + 2, x - w - gap)  # above and to the left, as far as the plot lets it
    candidates = [QRectF(left, y - h - dy, w, h) for dy in (gap, gap + h / 2, gap + h)]
    candidates += [QRectF(x - w / 2, y - h - dy, w, h) for dy in (gap, gap + h / 2, gap + h)]
    candidates += [
        QRectF(x + gap, y + gap, w, h),
        QRectF(x - w / 2, y + gap, w, h),
        QRectF(plot.left() + gap, plot.top() + gap, w, h),
    ]
    dot = QRectF(x - gap, y - gap, 2 * gap, 2 * gap)  # the point's own marker
    return _free_box(candidates, plot, _samples(line) + _samples(dashed or []), [taken, dot])


def _graph_title(p: QPainter, rect: QRectF, text: str) -> None:
    """A graph's title, centred on the first line of its rectangle, in the painter's font."""
    p.setPen(palette.canvas().text)
    p.drawText(
        QRectF(rect.left(), rect.top(), rect.width(), p.fontMetrics().height()),
        Qt.AlignmentFlag.AlignHCenter,
        p.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width())),
    )


def _elided(p: QPainter, rect: QRectF, text: str) -> None:
    fm = p.fontMetrics()
    p.drawText(
        rect,
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
        fm.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width())),
    )
