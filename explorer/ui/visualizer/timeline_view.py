"""The launch in time: a per-SM Gantt chart of a dispatch, with the old wave lines drawn over it.

A standalone view of a plain core record: ``DispatchResult`` (``explorer.launch.dispatch``, a
simulation) or ``MeasuredDispatch`` (``explorer.launch_runs.measured``, blocks timed on a GPU). It
computes nothing about the launch; it draws what the record holds:

* one row per block slot of each SM (or one per SM, or a few SMs per row, when the slots would be
  thinner than two pixels), blocks as bars in two shades so back-to-back blocks stay apart;
* the wave picture's lines at every whole wave (equal blocks end exactly on them; uneven ones
  blur across them), the tail shaded from the last block's start to the end, and the lower and
  upper bounds marked on the time axis;
* at the moment shown (``set_time``: the visualizer's clock, in mean blocks), only what has
  started by the cursor, and how many blocks wait, run and are done.

A million blocks never become a million rectangles: the chart is rasterised once per size into
an image (numpy, a few passes over the blocks), and a frame paints that image clipped at the
cursor plus a few lines, well inside 60 frames per second (``benchmarks/dispatch_speed.py``).
Text is sized with ``theme.px`` so it grows with the window's text size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from explorer.launch.dispatch import DispatchResult
from explorer.launch.timeline import Timeline
from explorer.launch_runs.measured import MeasuredDispatch
from explorer.ui.guard import qt_guard
from explorer.ui.visualizer import palette
from explorer.ui.visualizer.playing_view import PlayingView, clauses_that_fit, paint_axis
from explorer.words import percent

SHADE_A = palette.RUNNING
SHADE_B = QColor("#60a5fa")  # the running blue, lighter: the next block on the same slot
#: the fewest lines of small text the chart keeps before the figures over it give up lines
MIN_PLOT_LINES = 4
TAIL = QColor(palette.IDLE_LANE.red(), palette.IDLE_LANE.green(), palette.IDLE_LANE.blue(), 46)


@dataclass(frozen=True)
class Shown:
    """What the view draws, taken from a record: the timeline and the marks around it."""

    timeline: Timeline
    title: str
    facts: tuple[str, ...]  # the figures under the title, most wanted first, each whole on its own
    wave_length: float  # one uniform block, in the timeline's unit (the wave lines' spacing)
    waves: int
    lower_bound: float | None
    upper_bound: float | None
    simulated_makespan: float | None  # a measurement: where the simulation ends
    axis_scale: float  # timeline unit -> axis unit
    axis_unit: str

    @classmethod
    def of_dispatch(cls, r: DispatchResult) -> Shown:
        f, p = r.figures, r.plan
        return cls(
            timeline=r.timeline,
            title=f"Simulated: {p.total_blocks:,} blocks on {p.device_name}",
            facts=(
                f"makespan {f.makespan:.2f} (the wave picture: {p.waves})",
                f"bounds {r.lower_bound:.2f} to {r.upper_bound:.2f}",
                f"tail from {f.tail_start:.2f}, SMs idle {f.tail_idle_sm_time:.2f} in it",
                r.durations.describe,
            ),
            wave_length=1.0,
            waves=p.waves,
            lower_bound=r.lower_bound,
            upper_bound=r.upper_bound,
            simulated_makespan=None,
            axis_scale=1.0,
            axis_unit="time in mean blocks",
        )

    @classmethod
    def of_measured(cls, m: MeasuredDispatch) -> Shown:
        f = m.timeline.figures
        return cls(
            timeline=m.timeline,
            title=f"Measured: {m.plan.total_blocks:,} blocks on {m.device_name}",
            facts=(
                f"makespan {f.makespan / 1e6:.3f} ms = {m.makespan_blocks:.2f} blocks",
                f"simulated {m.simulated.figures.makespan:g} ({m.ratio:.3f} x)",
                f"slots empty while blocks waited {percent(f.queued_idle_share, decimals=2)}",
                f"each spins {m.spin_ns / 1000:g} us",
            ),
            wave_length=m.mean_block_ns,
            waves=m.plan.waves,
            lower_bound=None,
            upper_bound=None,
            simulated_makespan=m.simulated.figures.makespan * m.mean_block_ns,
            axis_scale=1e-6,
            axis_unit="time in ms",
        )


@dataclass(frozen=True)
class TimelineLayout:
    """Where things go for one size and text scale (painting and the layout tests read it)."""

    title: QRectF
    facts: QRectF
    facts_text: str  # the leading figures that fit, each whole
    counts: QRectF
    plot: QRectF
    axis: QRectF
    label_w: float
    rows: int  # logical rows of the raster
    sms_per_row: float  # 1/slots when each slot has its row; >1 when several SMs share one
    slot_rows: bool


class TimelineView(PlayingView):
    """Per-SM Gantt chart of a DispatchResult or a MeasuredDispatch (``set_dispatch`` / ``set_measured``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shown: Shown | None = None
        self.unavailable = ""  # one line saying why there is nothing to show (no GPU, say)
        self.time = 0.0
        self._raster: QImage | None = None
        self._raster_key: tuple[int, int, int] | None = None

    # ------------------------------------------------------------------ records in

    def set_dispatch(self, result: DispatchResult) -> None:
        self._show(Shown.of_dispatch(result))

    def set_measured(self, measured: MeasuredDispatch) -> None:
        self._show(Shown.of_measured(measured))

    def set_unavailable(self, reason: str) -> None:
        """Nothing to draw, and one line saying why (e.g. no GPU for a measured run)."""
        self.shown, self.unavailable, self._raster = None, reason, None
        self.updateGeometry()
        self.update()

    def _show(self, shown: Shown) -> None:
        self.shown, self.unavailable = shown, ""
        self._raster, self._raster_key = None, None
        self.time = self.makespan
        self.updateGeometry()  # another record: its figures may wrap to another height
        self.update()

    @property
    def makespan(self) -> float:
        return self.shown.timeline.figures.makespan if self.shown is not None else 0.0

    @property
    def span(self) -> float:
        """The time axis's length: the makespan, or the upper bound when that is later (so the
        makespan is seen between its bounds)."""
        if self.shown is None:
            return 1.0
        return max(self.makespan, self.shown.upper_bound or 0.0, self.shown.simulated_makespan or 0.0, 1e-12)

    # ------------------------------------------------------------------ playing

    def set_time(self, t: float) -> None:
        """Show the moment ``t`` (the timeline's unit); past the end, the whole launch."""
        t = min(max(0.0, t), self.makespan)
        if t != self.time:
            self.time = t
            self.update()

    def apply_text_scale(self) -> None:
        self._raster = None
        super().apply_text_scale()

    # ------------------------------------------------------------------ layout

    def layout_now(self, width: int | None = None, height: int | None = None) -> TimelineLayout:
        w = float(self.width() if width is None else width)
        h = float(self.height() if height is None else height)
        f_ = self.fonts()
        title_f, body_f, small_f = f_.title, f_.body, f_.small
        th, bh, sh = (QFontMetrics(f).height() for f in (title_f, body_f, small_f))
        pad = 6.0
        body_fm = QFontMetrics(body_f)
        blocks, slots = (self.shown.timeline.blocks, self.shown.timeline.slots) if self.shown else (0, 0)
        counts_w = min(
            body_fm.horizontalAdvance(_counts_text(blocks, min(slots, blocks), blocks)) + 4, w - 2 * pad
        )
        title_w = QFontMetrics(title_f).horizontalAdvance(self.shown.title if self.shown is not None else "")
        clauses = self.shown.facts if self.shown is not None else ()
        first_w = body_fm.horizontalAdvance(clauses[0]) if clauses else 0
        facts_w = w - 2 * pad
        if title_w + counts_w + 3 * pad <= w:  # both on one line
            title = QRectF(pad, pad, w - 3 * pad - counts_w, th)
            counts = QRectF(w - pad - counts_w, pad, counts_w, th)
            below = title.bottom()
        elif first_w + counts_w + 3 * pad <= w:  # large text: the counts beside the figures
            title = QRectF(pad, pad, w - 2 * pad, th)
            counts = QRectF(w - pad - counts_w, title.bottom() + 2, counts_w, bh)
            below, facts_w = title.bottom(), w - 3 * pad - counts_w
        else:  # a narrow view: the counts on a line of their own, neither cut
            title = QRectF(pad, pad, w - 2 * pad, th)
            counts = QRectF(w - pad - counts_w, title.bottom(), counts_w, bh)
            below = counts.bottom()
        label_w = QFontMetrics(small_f).horizontalAdvance("SM 999") + pad
        wave_label_h = sh + 2
        axis_h = 2 * sh + pad
        # the figures wrap to as many as three lines, fewer where the chart would keep under
        # MIN_PLOT_LINES (large text, or the measured view sharing the page), dropping whole ones
        lines = 3
        while (
            lines > 1 and h - (below + 2 + lines * bh + 2 * pad + wave_label_h + axis_h) < MIN_PLOT_LINES * sh
        ):
            lines -= 1
        kept, facts_h = clauses_that_fit(clauses, facts_w, lines, body_f)
        facts = QRectF(pad, below + 2, facts_w, max(facts_h, float(bh)))
        top = facts.bottom() + pad + wave_label_h
        if self._axis_lines() > 2 and h - top - axis_h - pad - sh >= MIN_PLOT_LINES * sh:
            axis_h += sh  # a line of its own for the bounds, where the chart can spare it
        plot = QRectF(label_w + pad, top, max(10.0, w - label_w - 2 * pad), max(10.0, h - top - axis_h - pad))
        axis = QRectF(plot.left(), plot.bottom() + 2, plot.width(), axis_h)
        sm_count, slots = (
            (self.shown.timeline.sm_count, self.shown.timeline.slots_per_sm) if self.shown else (1, 1)
        )
        plot_h = int(plot.height())
        if plot_h >= 2 * sm_count * slots:
            rows, per_row, slot_rows = sm_count * slots, 1.0 / slots, True
        elif plot_h >= sm_count:
            rows, per_row, slot_rows = sm_count, 1.0, False
        else:
            rows, per_row, slot_rows = max(1, plot_h), sm_count / max(1, plot_h), False
        facts_text = "; ".join(clauses[:kept])
        return TimelineLayout(title, facts, facts_text, counts, plot, axis, label_w, rows, per_row, slot_rows)

    def least_height(self, width: int) -> int:
        """The header (title and counts), one line of figures (the first, whole, however many
        lines it wraps to), the wave labels, MIN_PLOT_LINES of chart and the axis: at 200% a
        fixed 200 px left the 16 SMs one row and cut the axis's label."""
        if self.shown is None:
            return 200
        f_ = self.fonts()
        bh, sh = QFontMetrics(f_.body).height(), QFontMetrics(f_.small).height()
        pad = 6.0
        facts = self.layout_now(width, 1 << 20).facts  # the header, as laid out at this width
        below = facts.top()
        _kept, first = clauses_that_fit(self.shown.facts, facts.width(), 1, f_.body)
        chart = (sh + 2) + MIN_PLOT_LINES * sh + (2 * sh + pad)  # wave labels, the plot, the axis
        return math.ceil(below + max(first, float(bh)) + pad + chart + pad)

    # ------------------------------------------------------------------ raster

    def _raster_for(self, lay: TimelineLayout) -> QImage:
        width = max(1, int(lay.plot.width() * self.makespan / self.span))
        key = (width, lay.rows, int(lay.slot_rows))
        if self._raster is None or self._raster_key != key:
            assert self.shown is not None
            self._raster = rasterise(self.shown.timeline, width, lay.rows, lay.slot_rows)
            self._raster_key = key
        return self._raster

    # ------------------------------------------------------------------ painting

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(900, 520)

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        c = palette.canvas()
        p.fillRect(self.rect(), c.ground)
        f_ = self.fonts()
        title_f, body_f, small_f = f_.title, f_.body, f_.small
        if self.shown is None:
            p.setFont(body_f)
            p.setPen(c.muted)
            text = self.unavailable or "No launch to show yet."
            p.drawText(QRectF(self.rect()).adjusted(12, 12, -12, -12), int(Qt.TextFlag.TextWordWrap), text)
            p.end()
            return
        s, lay = self.shown, self.layout_now()
        t = s.timeline
        span = self.span
        plot = lay.plot

        def x_of(time: float) -> float:
            return plot.left() + time / span * plot.width()

        # header
        p.setFont(title_f)
        p.setPen(c.text)
        _elided(p, lay.title, s.title)
        p.setFont(body_f)
        p.setPen(c.muted)
        p.drawText(lay.facts, int(Qt.TextFlag.TextWordWrap), lay.facts_text)
        waiting, running, done = t.counts_at(self.time if self.time < t.figures.makespan else math.inf)
        p.setPen(c.text)
        _elided(p, lay.counts, _counts_text(waiting, running, done), right=True)
        # the chart, revealed up to the cursor
        # the plot's ground past the cursor (not yet happened) and past the end (nothing runs)
        p.fillRect(plot, c.sm_face)
        p.setPen(QPen(c.grid_line, 1))
        p.drawRect(plot)
        raster = self._raster_for(lay)
        cursor_x = x_of(self.time)
        chart = QRectF(plot.left(), plot.top(), x_of(t.figures.makespan) - plot.left(), plot.height())
        shown_part = QRectF(plot.left(), plot.top(), max(0.0, cursor_x - plot.left()), plot.height())
        p.save()
        p.setClipRect(shown_part)
        p.drawImage(chart, raster)  # empty slots in the raster's own grey
        # the tail, once the cursor has reached it
        f = t.figures
        tail = QRectF(x_of(f.tail_start), plot.top(), x_of(f.makespan) - x_of(f.tail_start), plot.height())
        p.fillRect(tail, TAIL)
        p.restore()
        self._paint_sm_lines(p, lay, small_f)
        self._paint_waves(p, lay, small_f, x_of)
        if self.time >= f.tail_start:
            self._paint_tail_label(p, tail, small_f)
        if s.simulated_makespan is not None:
            p.setPen(QPen(palette.SELECTION.darker(140), 2, Qt.PenStyle.DashDotLine))
            xs = x_of(s.simulated_makespan)
            p.drawLine(QPointF(xs, plot.top()), QPointF(xs, plot.bottom()))
        # the cursor while playing
        if self.time < t.figures.makespan:
            p.setPen(QPen(palette.SELECTION, 2))
            p.drawLine(QPointF(cursor_x, plot.top()), QPointF(cursor_x, plot.bottom()))
        self._paint_axis(p, lay, small_f, x_of)
        p.end()

    def _paint_tail_label(self, p: QPainter, tail: QRectF, font: QFont) -> None:
        """ "tail" in a box at the top of the tail band, or just left of it when the band is narrow."""
        c = palette.canvas()
        p.setFont(font)
        fm = QFontMetrics(font)
        w, h = fm.horizontalAdvance("tail") + 8, fm.height() + 2
        x = tail.left() + (tail.width() - w) / 2 if tail.width() >= w + 4 else tail.left() - w - 2
        box = QRectF(max(x, self.layout_now().plot.left()), tail.top() + 3, w, h)
        p.fillRect(box, c.sm_face)
        p.setPen(QPen(palette.IDLE_LANE.darker(130), 1))
        p.drawRect(box)
        p.drawText(box, Qt.AlignmentFlag.AlignCenter, "tail")

    def _paint_sm_lines(self, p: QPainter, lay: TimelineLayout, font: QFont) -> None:
        """SM labels at the left (as many as fit) and, with a row per slot, a line between SMs."""
        assert self.shown is not None
        c = palette.canvas()
        t, plot = self.shown.timeline, lay.plot
        p.setFont(font)
        fm = QFontMetrics(font)
        sm_h = plot.height() / t.sm_count
        every = max(1, math.ceil(fm.height() / max(sm_h, 1e-9)))
        every = next(n for n in (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 256) if n >= every)
        if lay.slot_rows and t.slots_per_sm > 1 and sm_h >= 4:
            p.setPen(QPen(c.sm_face, 1))
            for sm in range(1, t.sm_count):
                y = plot.top() + sm * sm_h
                p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        p.setPen(c.muted)
        for sm in range(0, t.sm_count, every):
            y = plot.top() + (sm + 0.5) * sm_h
            if y + fm.height() / 2 > plot.bottom() + 2:
                break  # it would hang over the axis's numbers ("SM 128" on "0" at 250%)
            p.drawText(
                QRectF(0, y - fm.height() / 2, lay.label_w, fm.height()),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                f"SM {sm}",
            )

    def _paint_waves(self, p: QPainter, lay: TimelineLayout, font: QFont, x_of) -> None:
        """The wave picture's lines: at every whole wave while they are 6 px apart, else at round steps."""
        assert self.shown is not None
        s, plot = self.shown, lay.plot
        if s.waves < 1 or s.wave_length <= 0:
            return
        spacing = plot.width() * s.wave_length / self.span
        step = next(n for n in _round_steps() if spacing * n >= 12)
        c = palette.canvas()
        p.setPen(QPen(c.text, 1, Qt.PenStyle.DashLine))
        for k in range(step, s.waves + 1, step):
            x = x_of(k * s.wave_length)
            if x > plot.right() + 0.5:
                break
            p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        p.setFont(font)
        fm = QFontMetrics(font)
        label_w = fm.horizontalAdvance("wave 9999") + 6
        every = next(n for n in _round_steps() if n % step == 0 and spacing * n >= label_w)
        p.setPen(c.muted)
        for k in range(every, s.waves + 1, every):
            x = x_of(k * s.wave_length)
            if x > plot.right() + 0.5:
                break
            p.drawText(
                QRectF(x - label_w, plot.top() - fm.height() - 2, label_w - 2, fm.height()),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignBottom,
                f"wave {k}",
            )

    def _axis_lines(self) -> int:
        """The axis's lines of small text: its numbers, its unit and the makespan, and a line for
        the bounds where the model has them and the chart can spare it (on the makespan's line,
        the upper bound's tick at the axis's right end was left without a label); without it
        they share the makespan's line, by shorter names where need be."""
        has_bounds = self.shown is not None and (
            self.shown.lower_bound is not None or self.shown.upper_bound is not None
        )
        return 3 if has_bounds else 2

    def _paint_axis(self, p: QPainter, lay: TimelineLayout, font: QFont, x_of) -> None:
        assert self.shown is not None
        s, axis = self.shown, lay.axis
        c = palette.canvas()
        p.setFont(font)
        fm = QFontMetrics(font)
        makespan = s.timeline.figures.makespan
        hi = self.span * s.axis_scale
        paint_axis(
            p, (axis.left(), axis.right()), axis.top(), font, (0.0, hi), s.axis_unit, widest="00000.00"
        )
        # the makespan on the unit's line, then the bounds on the line under it, each under its
        # own tick: both with their whole names where they fit apart, else both shorter
        unit = QRectF(axis.left(), axis.top() + fm.height() + 3, fm.horizontalAdvance(s.axis_unit) + 8, 1)
        lines: list[list[tuple[float, tuple[str, ...]]]] = [[(makespan, ("makespan",))], []]
        if s.lower_bound is not None:
            lines[1].append((s.lower_bound, ("lower bound", "lower")))
        if s.upper_bound is not None:
            lines[1].append((s.upper_bound, ("upper bound", "upper")))
        if axis.height() < 3 * fm.height():  # no line of their own: on the makespan's
            lines = [lines[0] + lines[1], []]
        for value, _names in lines[0] + lines[1]:
            x = x_of(value)
            p.setPen(QPen(c.text, 2))
            p.drawLine(QPointF(x, axis.top() - 6), QPointF(x, axis.top()))
        p.setPen(c.text)
        for n, marks in enumerate(lines):
            y = axis.top() + (1 + n) * fm.height() + 3
            if not marks or y + fm.height() > axis.bottom() + 1:
                continue  # no line for them (the facts line has them)
            taken = [unit] if n == 0 else []
            for variant in range(max(len(names) for _v, names in marks)):
                boxes = [
                    _mark_box(fm, x_of(v), names[min(variant, len(names) - 1)], axis, y) for v, names in marks
                ]
                placed = [b for b in boxes if b is not None]
                if len(placed) == len(boxes) and _apart(placed + taken):
                    break
            for box in boxes:  # the last variant tried: each that fits apart from those drawn
                if box is not None and _apart([box[0], *taken]):
                    p.drawText(box[0], Qt.AlignmentFlag.AlignHCenter, box[1])
                    taken.append(box[0])


def _mark_box(fm: QFontMetrics, x: float, label: str, axis: QRectF, y: float) -> tuple[QRectF, str] | None:
    """Where a mark's label goes under its tick at ``x`` (inside the axis's span), or None where it
    would have to sit away from its tick."""
    w = fm.horizontalAdvance(label) + 4
    left = min(max(x - w / 2, axis.left()), axis.right() - w)
    if x - left > w or left - x > 0:
        return None
    return QRectF(left, y, w, fm.height()), label


def _apart(boxes: list) -> bool:  # QRectF or (QRectF, label)
    """Whether labels on one line keep 6 px apart."""
    rects = [b[0] if isinstance(b, tuple) else b for b in boxes]
    return all(
        a.right() + 6 <= b.left() or b.right() + 6 <= a.left()
        for i, a in enumerate(rects)
        for b in rects[i + 1 :]
    )


def _counts_text(waiting: int, running: int, done: int) -> str:
    return f"waiting {waiting:,} · running {running:,} · done {done:,}"


def _round_steps():
    """1, 2, 5, 10, 20, 50, ...: the spacings of lines and labels that people count easily."""
    scale = 1
    while True:
        for m in (1, 2, 5):
            yield m * scale
        scale *= 10


def _elided(p: QPainter, rect: QRectF, text: str, right: bool = False) -> None:
    fm = p.fontMetrics()
    shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width()))
    align = Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft
    p.drawText(rect, align | Qt.AlignmentFlag.AlignVCenter, shown)


def rasterise(timeline: Timeline, width: int, rows: int, slot_rows: bool) -> QImage:
    """The whole chart as a ``width`` x ``rows`` image: each pixel the share of its row's slot-time
    that blocks fill, in two shades alternating block by block. Exact coverage (a block a tenth of
    a pixel wide adds a tenth), computed with bincount over the blocks: no loop per block."""
    t = timeline
    makespan = max(t.figures.makespan, 1e-12)
    if slot_rows:
        row = t.sm.astype(np.int64) * t.slots_per_sm + t.slot
        per_row = 1.0
    else:
        row = (t.sm.astype(np.int64) * rows) // t.sm_count
        per_row = t.slots_per_sm * t.sm_count / rows
    x0 = np.clip(t.start / makespan * width, 0, width)
    x1 = np.clip(t.end / makespan * width, 0, width)
    two = slot_rows and t.blocks > 0 and float(np.mean(x1 - x0)) >= 3.0
    # two shades only where a block is wide enough to be seen as one (3 px on average)
    if two:
        shade = _shades(t)
        covers = [_coverage(row[shade == k], x0[shade == k], x1[shade == k], rows, width) for k in (0, 1)]
    else:
        covers = [_coverage(row, x0, x1, rows, width)]
    covers = [np.clip(cv / per_row, 0.0, 1.0).astype(np.float32) for cv in covers]
    ground = _rgb(palette.canvas().empty_slot)
    shades = (_rgb(SHADE_A), _rgb(SHADE_B))
    pixels = np.empty((rows, width, 4), np.uint8)
    pixels[..., 3] = 255
    for channel, at in ((0, 2), (1, 1), (2, 0)):  # QImage RGB32 is 0xffRRGGBB: B, G, R, A in memory
        value = np.full((rows, width), float(ground[channel]), np.float32)
        for cover, colour in zip(covers, shades, strict=False):
            value += (colour[channel] - ground[channel]) * cover
        pixels[..., at] = np.clip(value, 0, 255)
    image = QImage(pixels.data, width, rows, 4 * width, QImage.Format.Format_RGB32)
    return image.copy()  # own the pixels: the numpy buffer goes away


def _shades(t: Timeline) -> np.ndarray:
    """0, 1, 0, 1 ... along each slot: the k-th block a slot runs gets shade k mod 2, so blocks that
    follow each other on one slot stay apart. (With one row per SM or more, one shade: the
    colour then says how many of the row's slots are busy.)"""
    slot_id = t.sm.astype(np.int64) * t.slots_per_sm + t.slot
    if t.sm_count * t.slots_per_sm <= np.iinfo(np.int16).max and bool(np.all(t.start[1:] >= t.start[:-1])):
        order = np.argsort(slot_id.astype(np.int16), kind="stable")  # radix sort; start order kept
    else:
        order = np.lexsort((t.start, slot_id))
    ordered = slot_id[order]
    first = np.searchsorted(ordered, ordered)
    shade = np.empty(t.blocks, dtype=np.int64)
    shade[order] = (np.arange(t.blocks) - first) % 2
    return shade


def _coverage(row: np.ndarray, x0: np.ndarray, x1: np.ndarray, rows: int, width: int) -> np.ndarray:
    """Per (row, pixel column): how much of the column's width the intervals [x0, x1) cover.

    Each interval adds its part of its first column and of its last, and 1 to every column between
    (a +1 / -1 pair summed along the row): four bincounts, whatever the number of intervals."""
    size = rows * (width + 1)
    i0 = np.floor(x0).astype(np.int64)
    i1 = np.minimum(np.floor(x1).astype(np.int64), width)
    base = row * (width + 1)
    longer = (i1 > i0).astype(np.float64)  # spans more than its first column
    first = np.minimum(x1, i0 + 1) - x0
    out = np.bincount(base + i0, weights=first, minlength=size)
    out += np.bincount(base + i1, weights=(x1 - i1) * longer, minlength=size)
    steps = np.bincount(base + i0 + 1, weights=longer, minlength=size + 1)[:size]
    steps -= np.bincount(base + i1, weights=longer, minlength=size)
    whole = np.cumsum(steps.reshape(rows, width + 1), axis=1)
    return (out.reshape(rows, width + 1) + whole)[:, :width]


def _rgb(colour: QColor) -> tuple[int, int, int]:
    return colour.red(), colour.green(), colour.blue()
