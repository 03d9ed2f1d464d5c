"""The roofline: FLOP per byte against GFLOP/s on log axes, each device's roofs, and the run's points.

One slanted roof per memory level (L1, L2, L3, DRAM), each in its level's colour and labelled with
its value and how it was had, and the flat compute roofs; measured ceilings solid, theoretical and
spec-sheet ones dashed; DRAM's ridge point marked. Each point is drawn in the colour of the level
its data lives in ("fits in L2" in the legend and on hover), its symbol its variant's: a student
sees that a small vector add is fast because it runs under L1's roof, and a big one slow because
it runs under DRAM's. A catalog GPU's roof (from its spec sheet) can be added, so an H100's roof
shows on any laptop. The geometry is computed by ``explorer.bench.roofline`` and the levels by
``explorer.roofs``; this view only draws them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QVBoxLayout,
    QWidget,
)

from explorer.bench.fmt import number_text
from explorer.bench.roofline import plot_range, segments
from explorer.roofs.model import Roof
from explorer.roofs.placement import level_text
from explorer.roofs.texts import ceiling_line
from explorer.ui.bench.levels import level_colour
from explorer.ui.bench.plot import (
    _CPU_COLOURS,
    _CPU_COLOURS_DARK,
    _GPU_COLOURS,
    _SYMBOLS,
    LogAxis,
    _style_plot,
    style_legend,
    style_titles,
)
from explorer.ui.guard import qt_guard
from explorer.ui.plot_text import LABEL_SHARE, fit_legend_columns, legend_size, restyle
from explorer.ui.plot_widget import plot_widget
from explorer.ui.theme import Theme, current_theme, figure_font, line_px, px
from explorer.ui.widgets import FoldingCaption
from explorer.words import count, on_host, percent

_CATALOG_COLOURS = ("#CC79A7", "#E69F00")  # purple first: no CPU or GPU point is drawn in it
_NO_CATALOG = "Add a catalog GPU's roof…"


class _ChoiceBox(QComboBox):
    """Asks for the width of the choice it shows ("Add a catalog GPU's roof…" was cut at 14
    characters beside the caption), yet needs no more than 9 characters where a row is short;
    the list it opens shows every name in full."""

    @qt_guard
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        hint = super().sizeHint()
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        text = QSize(self.fontMetrics().horizontalAdvance(self.currentText()), hint.height())
        full = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, text, self)
        return QSize(max(hint.width(), full.width()), hint.height())


def _roof_colour(roof: Roof, index: int) -> str:
    if roof.device == "cpu":
        return (_CPU_COLOURS_DARK if current_theme().name == "dark" else _CPU_COLOURS)[0]
    if roof.device.startswith("catalog:"):
        return _CATALOG_COLOURS[index % len(_CATALOG_COLOURS)]
    return _GPU_COLOURS[index % len(_GPU_COLOURS)]


#: the least height, at 100% text, of the roofline's view (under its title, over its axis and
#: legend), and of the whole plot before it is laid out: below these its labels lie on each other
VIEW_MIN_HEIGHT = 70
PLOT_MIN_HEIGHT = 100


class RooflinePlot(QWidget):
    """Draws roofs and points handed to it; owns nothing the core could compute."""

    #: a catalog GPU was chosen (its key) or cleared ("")
    catalog_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._roofs: list[Roof] = []
        self._catalog_roof: Roof | None = None
        self._points: list[Any] = []
        self._drawn: list[Any] = []
        self._legend_items: list[Any] = []  # markers only the legend shows
        #: (label, its home position in view coordinates, a memory level's slant as (x0, x1) in log
        #: units, None for a flat compute roof)
        self._ceiling_labels: list[tuple[Any, Any, tuple[float, float] | None]] = []

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # the choice beside its caption, which wraps: one row less for the plot on a short projector
        # (1280x720 at 150%), and no wider than the measurements plot (the combo stays narrow)
        row = QHBoxLayout()
        self.catalog_combo = _ChoiceBox()
        self.catalog_combo.addItem(_NO_CATALOG, "")
        self.catalog_combo.setToolTip(
            "Draw a well-known GPU's roof from its spec sheet beside this machine's (not a measurement)"
        )
        # narrow however long a GPU's name: the panel must fit a 1024-px projector
        self.catalog_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.catalog_combo.setMinimumContentsLength(9)
        self.catalog_combo.currentTextChanged.connect(lambda _t: self.catalog_combo.updateGeometry())
        row.addWidget(self.catalog_combo)
        # wraps where there is room, else one line with the whole text on hover
        self.caption = FoldingCaption(_caption("here"))
        self.caption.setProperty("role", "caption")
        # the caption gives way first where the row is narrow (its text is on hover): the catalog
        # choice and "Measure again" beside it keep the roofline no wider than the plot beside it
        self.caption.setSizePolicy(QSizePolicy.Policy.Ignored, self.caption.sizePolicy().verticalPolicy())
        row.addWidget(self.caption, 1)
        self._tools = row  # the panel adds its "Measure again" here
        layout.addLayout(row)

        axes = {"left": LogAxis("left"), "bottom": LogAxis("bottom")}
        self.plot = plot_widget(axisItems=axes)
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        theme = current_theme()
        _style_plot(self.plot, theme)
        # the legend sits under the plot, in the plot's own layout (so the PNG export has it): inside
        # it would cover a roof's label or a point whatever corner it took
        self.legend = pg.LegendItem(
            colCount=3, labelTextSize=legend_size(), labelTextColor=theme.plot_foreground
        )
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1)
        self._style_legend(theme)
        self._labels(theme)
        layout.addWidget(self.plot, 1)
        self.plot.getPlotItem().vb.sigResized.connect(lambda _vb: self._spread_labels())
        self.plot.getPlotItem().vb.sigResized.connect(lambda _vb: self._fit_legend())
        # the plot's least height follows what takes room around the view: the legend's rows,
        # the axis's and the title's lines
        item = self.plot.getPlotItem()
        for part in (self.legend, item.getAxis("bottom"), item.titleLabel):
            part.geometryChanged.connect(self._keep_view_height)
        self.catalog_combo.currentIndexChanged.connect(
            lambda _i: self.catalog_chosen.emit(self.catalog_combo.currentData() or "")
        )

    # --- public -------------------------------------------------------------------------
    def add_tool(self, widget: QWidget) -> None:
        """A control of the panel's beside the catalog choice (the "Measure again" button)."""
        self._tools.addWidget(widget)

    def set_catalog_choices(self, choices: Sequence[tuple[str, str]]) -> None:
        """(key, name) of the catalog GPUs a roof can be added for."""
        current = self.catalog_combo.currentData()
        self.catalog_combo.blockSignals(True)
        self.catalog_combo.clear()
        self.catalog_combo.addItem(_NO_CATALOG, "")
        for key, name in choices:
            self.catalog_combo.addItem(f"{name} (spec sheet)", key)
        index = self.catalog_combo.findData(current)
        self.catalog_combo.setCurrentIndex(max(index, 0))
        self.catalog_combo.blockSignals(False)

    def choose_catalog(self, key: str) -> None:
        index = self.catalog_combo.findData(key)
        self.catalog_combo.setCurrentIndex(max(index, 0))

    def set_data(
        self, roofs: Sequence[Roof], points: Sequence[Any], catalog_roof: Roof | None = None
    ) -> None:
        self._roofs = list(roofs)
        self._points = list(points)
        self._catalog_roof = catalog_roof
        hosts = sorted({r.host for r in self._roofs if r.host})
        # a remote's roofs were measured there, not on this laptop: the legend says where
        where = f"on {hosts[0]}" if len(hosts) == 1 and all(r.host for r in self._roofs) else "here"
        if hosts and where == "here":
            where = "on the machine each names"
        self.caption.setText(_caption(where))
        self._redraw()

    @property
    def roofs(self) -> list[Roof]:
        return self._roofs + ([self._catalog_roof] if self._catalog_roof else [])

    def apply_text_scale(self) -> None:
        """Ticks, titles, the legend and the ceilings' labels at the text size now, up or down."""
        self._labels(current_theme())
        self._redraw()  # lines, markers and labels at the new size
        restyle(self.plot, (self.legend,))
        self._fit_legend()
        self._keep_view_height()
        self._spread_labels()

    def apply_theme(self, theme: Theme) -> None:
        _style_plot(self.plot, theme)
        self._style_legend(theme)
        self._labels(theme)
        self._redraw()

    def label_items(self) -> list[Any]:
        """Every ceiling and ridge label now drawn."""
        out = [i for i in self._drawn if isinstance(i, pg.TextItem)]
        return out + [i.label for i in self._drawn if isinstance(i, pg.InfiniteLine)]

    def line_labels(self) -> list[str]:
        """The text of every ceiling and ridge label now drawn (what a student reads)."""
        return [i.toPlainText() for i in self.label_items()]

    def placed_points(self) -> dict[str, list[tuple[float, float]]]:
        """(FLOP/byte, GFLOP/s) of each variant's points as plotted, by "workload: variant"."""
        out: dict[str, list[tuple[float, float]]] = {}
        for item in self._scatters():
            xs, ys = item.getData()
            out.setdefault(item.opts["variant"], []).extend(
                (10**x, 10**y) for x, y in zip(xs, ys, strict=True)
            )
        return out

    def point_colours(self) -> dict[str, str]:
        """Each drawn point's level, by "variant size_label" (what a student reads off a marker)."""
        return {label: item.opts["level"] for item in self._scatters() for label in item.opts["labels"]}

    def legend_texts(self) -> list[str]:
        return [label.text for _, label in self.legend.items]

    def _scatters(self) -> list[Any]:
        return [i for i in self._drawn if isinstance(i, pg.PlotDataItem) and "variant" in i.opts]

    # --- drawing ------------------------------------------------------------------------
    def _style_legend(self, theme: Theme) -> None:
        style_legend(self.legend, theme)

    def _fit_legend(self) -> None:
        fit_legend_columns(self.legend, self.plot.getPlotItem().vb.width())

    def _keep_view_height(self) -> None:
        """The plot's least height: ``VIEW_MIN_HEIGHT`` for the view itself, on top of what its
        title, axes and legend take now (they grow with the text; a fixed least for the whole
        plot left the view 103 px of the 140 it needs at 200% on 1280x800). The plot's own
        layout adds them up: the least it can lay out with the view that tall, frame included."""
        item = self.plot.getPlotItem()
        item.vb.setMinimumHeight(px(VIEW_MIN_HEIGHT))
        scene_least = item.effectiveSizeHint(Qt.SizeHint.MinimumSize).height()
        frame = 2 * self.plot.frameWidth()
        least = max(px(PLOT_MIN_HEIGHT), math.ceil(scene_least + frame))
        if least != self.plot.minimumHeight():
            self.plot.setMinimumHeight(least)

    def _labels(self, theme: Theme) -> None:
        style_titles(self.plot, theme, "GFLOP/s", "arithmetic intensity (FLOP per byte moved)", "Roofline")

    def _clear(self) -> None:
        for item in self._drawn:
            self.plot.removeItem(item)
        self._drawn.clear()
        self._ceiling_labels.clear()
        self.legend.clear()
        self._legend_items.clear()

    def _redraw(self) -> None:
        self._clear()
        theme = current_theme()
        self.legend.opts["labelTextSize"] = legend_size()  # the figure text size, for the rows added now
        roofs = self.roofs
        placed = [
            p
            for p in self._points
            if p.error is None and p.intensity_flop_per_byte and p.gflops and p.intensity_flop_per_byte > 0
        ]
        x_lo, x_hi = plot_range(roofs, [p.intensity_flop_per_byte for p in placed])
        ys: list[float] = [p.gflops for p in placed]
        for index, roof in enumerate(roofs):
            colour = _roof_colour(
                roof,
                sum(
                    r.device.startswith("catalog:") == roof.device.startswith("catalog:")
                    for r in roofs[:index]
                ),
            )
            catalog = roof.device.startswith("catalog:")
            for seg in segments(roof, x_lo, x_hi):
                c = seg.ceiling
                measured = c.kind == "measured"
                style = Qt.PenStyle.SolidLine if measured else Qt.PenStyle.DashLine
                # a memory level's roof in its level's colour; compute roofs (and a spec sheet's) in
                # the device's own
                line_colour = (
                    level_colour(c.level) if c.quantity == "memory" and c.level and not catalog else colour
                )
                line = pg.PlotDataItem(
                    [seg.x0, seg.x1],
                    [seg.y0, seg.y1],
                    pen=pg.mkPen(line_colour, width=line_px(2.5 if measured else 2), style=style),
                )
                line.setToolTip(f"{roof.title}: {ceiling_line(c)}")
                self._add(line)
                ys += [seg.y0, seg.y1]
                self._add_label(seg, roof, line_colour, theme)
            ridge = roof.ridge_flop_per_byte
            top = roof.compute_roof()  # the ridge is on the roof shares are taken against
            if ridge and top:
                dot = pg.PlotDataItem(
                    [ridge],
                    [top.value],
                    pen=None,
                    symbol="d",
                    symbolSize=px(12),
                    symbolBrush=colour,
                    symbolPen=colour,
                )
                dot.setToolTip(f"ridge point of {roof.title}: {ridge:.3g} FLOP/byte")
                self._add(dot)
                right_half = math.log10(ridge) > (math.log10(x_lo) + math.log10(x_hi)) / 2
                side = (1, 1) if right_half else (0, 1)
                # a dotted drop line: left of it the device is memory-bound, right of it compute-bound;
                # its label low in the plot, one row per roof so two ridges never share a line of text
                drop = pg.InfiniteLine(
                    pos=math.log10(ridge),
                    angle=90,
                    pen=pg.mkPen(colour, width=line_px(1), style=Qt.PenStyle.DotLine),
                    label=f"ridge {ridge:.3g} FLOP/B",
                    labelOpts={
                        "position": 0.04 + 0.12 * index,
                        "color": colour,
                        "fill": theme.plot_background,
                        # beside the line on the side with more room, so it never runs off the plot
                        "anchors": [side, side],
                    },
                )
                drop.label.setFont(figure_font(LABEL_SHARE))
                drop.setToolTip(f"ridge point of {roof.title}: {ridge:.3g} FLOP/byte")
                self._add(drop)
        self._add_points(placed, theme)
        self.plot.setXRange(math.log10(x_lo), math.log10(x_hi), padding=0)
        if ys:
            lo, hi = min(y for y in ys if y > 0), max(ys)
            # room above the top roof for its label, below the lowest line for the ridge labels
            self.plot.setYRange(math.log10(lo) - 0.4, math.log10(hi) + 1.0, padding=0)
        self._fit_legend()
        self._spread_labels()
        hidden = [p for p in self._points if p.error is None and not (p.intensity_flop_per_byte and p.gflops)]
        self.caption.setToolTip(
            f"{count(len(hidden), 'point')} with no arithmetic (copies): a roofline has no place for them; the "
            "Bandwidth tab shows them against each memory level's roof"
            if hidden
            else "Colour: the memory level a point's data lives in, and that level's roof. Hover a line "
            "for how it was measured."
        )

    def _spread_labels(self) -> None:
        """Labels of close ceilings (a measured sgemm just under the peak, two devices' roofs at the
        same height) would print over each other or over the measured points: each label tries its
        home spot, then one label-height below, above, two below... and takes the first spot clear
        of the ridges' labels, the labels already placed and every point; where none is clear (a
        short plot at 200% text), the spot that covers least. Redone whenever the plot changes size."""
        vb = self.plot.getPlotItem().vb
        vb.updateMatrix()  # the range just set, not the one last painted
        placed: list[Any] = []
        for line in self._drawn:  # the ridges' labels stay where they are: the others step round them
            if isinstance(line, pg.InfiniteLine):
                line.label.updatePosition()
                placed.append(line.label.mapRectToScene(line.label.boundingRect()))
        points = self._point_boxes(vb)
        inside = vb.mapRectToScene(vb.boundingRect())
        # the levels' labels from the lowest slant up: each slides along its own line (up and to
        # the right) until it is clear, so it stays on the line it names whatever the text size
        ordered = sorted(self._ceiling_labels, key=lambda entry: (entry[2] is not None, entry[1].y()))
        for item, home, slant in ordered:
            item.setPos(home)
            box = item.mapRectToScene(item.boundingRect())
            step = abs(vb.mapSceneToView(box.topLeft()).y() - vb.mapSceneToView(box.bottomLeft()).y()) + 0.01
            spots = _slant_spots(home, slant) if slant else _stacked_spots(home, step)
            best: tuple[float, Any] | None = None  # (covered area, spot)
            for spot in spots:
                item.setPos(spot)
                box = item.mapRectToScene(item.boundingRect())
                if not inside.contains(box):
                    continue
                covered = sum(_area(box.intersected(other)) for other in (*placed, *points))
                if best is None or covered < best[0]:
                    best = (covered, spot)
                if covered == 0:
                    break
            item.setPos(best[1] if best else home)
            placed.append(item.mapRectToScene(item.boundingRect()))

    def _point_boxes(self, vb: Any) -> list[Any]:
        """Each measured point's marker, in scene pixels: a label never sits on one."""
        boxes = []
        half = px(7)  # the 11 px marker and its 1 px edge, with a pixel to spare (at 100% text)
        for item in self._scatters():  # the measured points
            xs, ys = item.getData()
            for x, y in zip(xs if xs is not None else [], ys if ys is not None else [], strict=True):
                at = vb.mapViewToScene(QPointF(float(x), float(y)))
                boxes.append(QRectF(at.x() - half, at.y() - half, 2 * half, 2 * half))
        return boxes

    def _add(self, item: Any) -> None:
        self.plot.addItem(item)
        self._drawn.append(item)

    def _add_label(self, seg: Any, roof: Roof, colour: str, theme: Theme) -> None:
        c = seg.ceiling
        who = "CPU" if roof.device == "cpu" else roof.name.removesuffix(" (catalog)").removeprefix("NVIDIA ")
        who = on_host(who, roof.host)  # a remote machine's roof: "CPU ON gpu-lab sgemm (measured): ..."
        # the device named where several roofs share the plot ("CPU L2: 225 GB/s"); a level's roof
        # says how it was had only where it is not the usual measured one (solid is measured:
        # the caption says so), so four levels' labels fit a projector's short plot at 200% text
        text = f"{who} {c.short_label}" if len(self.roofs) > 1 or roof.host else c.short_label
        # a see-through fill: the text stays readable and a roof passing behind it stays visible
        backdrop = pg.mkColor(theme.plot_background)
        backdrop.setAlpha(150)
        item = pg.TextItem(text, color=colour, fill=pg.mkBrush(backdrop))
        item.setFont(figure_font(LABEL_SHARE))
        if c.quantity == "compute":  # at the flat line's right end: the roof above it, measured below
            item.setAnchor((1.0, 0.0 if c.kind == "measured" else 1.0))
            item.setPos(math.log10(seg.x1) - 0.02, math.log10(seg.y1))
        else:  # at the left end of the slanted line, above it
            item.setAnchor((0.0, 1.0))
            item.setPos(math.log10(seg.x0) + 0.05, math.log10(seg.y0 * 10**0.05))
        item.setZValue(10)  # over the grid, the ridges' drop lines and the other roofs
        self._add(item)
        slant = (math.log10(seg.x0), math.log10(seg.x1)) if c.quantity == "memory" else None
        self._ceiling_labels.append((item, item.pos(), slant))

    def _add_points(self, placed: Sequence[Any], theme: Theme) -> None:
        """Each variant's points, grouped by the level their data lives in: the colour is the level's,
        the symbol the variant's; hollow where other programs disturbed the point. The legend names
        the levels ("fits in L2") and then the variants."""
        variants: dict[tuple[str, str], int] = {}
        groups: dict[tuple[str, str, str, bool], list[Any]] = {}
        for p in placed:
            variants.setdefault((p.workload, p.variant), len(variants))
            groups.setdefault((p.workload, p.variant, p.memory_level, p.noisy), []).append(p)
        levels_seen: dict[str, str] = {}
        for (workload, variant, level, noisy), pts in groups.items():
            colour = level_colour(level)
            symbol = _SYMBOLS[variants[(workload, variant)] % len(_SYMBOLS)]
            scatter = pg.PlotDataItem(
                [p.intensity_flop_per_byte for p in pts],
                [p.gflops for p in pts],
                pen=None,
                symbol=symbol,
                symbolSize=px(11),
                symbolBrush=None if noisy else colour,
                symbolPen=pg.mkPen(
                    colour if noisy else theme.plot_background, width=line_px(2 if noisy else 1)
                ),
            )
            scatter.opts["variant"] = f"{workload}: {variant}"
            scatter.opts["level"] = level
            scatter.opts["labels"] = [f"{variant} {p.size_label}" for p in pts]
            scatter.setToolTip("\n".join(_point_words(p) for p in pts))
            scatter.setZValue(20)  # a measured point is never hidden behind a label
            self._add(scatter)
            words = level_text(level, "") or "level not known"
            levels_seen.setdefault(words, colour)
        for words, colour in levels_seen.items():
            self._legend_entry(words, "o", colour, theme)
        for (_, variant), index in variants.items():
            self._legend_entry(variant, _SYMBOLS[index % len(_SYMBOLS)], theme.plot_foreground, theme)

    def _legend_entry(self, text: str, symbol: str, colour: str, theme: Theme) -> None:
        """A legend row drawing nothing in the plot (its marker and its words only)."""
        # a scatter item: the legend draws its own brush (an empty PlotDataItem's symbol brush
        # is never handed to its scatter, and the legend showed pyqtgraph's default grey-blue)
        item = pg.ScatterPlotItem(
            symbol=symbol, size=10, brush=pg.mkBrush(colour), pen=pg.mkPen(theme.plot_background)
        )
        self.legend.addItem(item, text)
        self._legend_items.append(item)


def _caption(where: str) -> str:
    return f"colour: memory level · solid: measured {where}; dashed: theoretical or spec sheet"


def _point_words(p: Any) -> str:
    """A point's hover line: "N=1,000: fits in L1 · 0.0833 FLOP/B, 2.04 GFLOP/s · 5% of its L1 roof"."""
    where = level_text(p.memory_level, p.roof_level)
    text = f"{p.size_label}: {where + ' · ' if where else ''}{p.intensity_flop_per_byte:.3g} FLOP/B, "
    text += number_text(p.gflops, "GFLOP/s")
    if p.roof_share is not None:
        roof = "the compute roof" if p.roof_level == "compute" else f"its {p.roof_level} roof"
        text += f" · {percent(p.roof_share, decimals=0)} of {roof}"
    if p.roof_note:
        text += f" ({p.roof_note})"
    if p.noisy:
        text += " · disturbed by other programs"
    return text


def _stacked_spots(home: Any, step: float) -> list[Any]:
    """A flat roof's label: its home, then one label-height below, above, two below..."""
    return [QPointF(home.x(), home.y() + k * step) for k in (0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6)]


def _slant_spots(home: Any, slant: tuple[float, float]) -> list[Any]:
    """A slanted roof's label: just above its own line, from the line's left end along it (a
    slant rises one decade per decade, so does the label), then a little higher."""
    x0, x1 = slant
    out = []
    for lift in (0.0, 0.15, 0.3):
        for share in (0.0, 0.12, 0.24, 0.36, 0.48, 0.6):
            dx = share * (x1 - x0)
            out.append(QPointF(home.x() + dx, home.y() + dx + lift))
    return out


def _area(rect: Any) -> float:
    """The area of a rectangle (an empty intersection is 0)."""
    return max(0.0, rect.width()) * max(0.0, rect.height())
