"""The roofline: FLOP per byte against GFLOP/s on log axes, each device's roofs, and the run's points.

A student sees why vector add and matvec sit under the slanted roof (they move bytes, and the
memory roof caps them) while big matmuls climb to the flat one. Measured ceilings are solid lines,
theoretical and spec-sheet ones dashed, each labelled with its value; the ridge point is marked.
A catalog GPU's roof (from its spec sheet) can be added, so an H100's roof shows on any laptop.
The geometry is computed by ``explorer.bench.roofline``; this view only draws it.
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
    QStyle,
    QStyleOptionComboBox,
    QVBoxLayout,
    QWidget,
)

from explorer.bench.fmt import number_text
from explorer.bench.roofline import Roof, plot_range, segments
from explorer.ui.bench.plot import (
    _CPU_COLOURS,
    _CPU_COLOURS_DARK,
    _GPU_COLOURS,
    _SYMBOLS,
    LogAxis,
    _style_plot,
)
from explorer.ui.guard import qt_guard
from explorer.ui.plot_text import LABEL_SHARE, axis_title, legend_size, plot_title, restyle
from explorer.ui.theme import Theme, current_theme, figure_font
from explorer.ui.widgets import FoldingCaption

_CATALOG_COLOURS = ("#CC79A7", "#E69F00")  # purple first: no CPU or GPU point is drawn in it
_NO_CATALOG = "Add a catalog GPU's roof…"


class _ChoiceBox(QComboBox):
    """Asks for the width of the choice it shows ("Add a catalog GPU's roof…" was cut at 14
    characters beside the caption), yet needs no more than 10 characters where a row is short;
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
        self._ceiling_labels: list[tuple[Any, Any]] = []  # (label, its home position in view coordinates)

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
        self.catalog_combo.setMinimumContentsLength(10)
        self.catalog_combo.currentTextChanged.connect(lambda _t: self.catalog_combo.updateGeometry())
        row.addWidget(self.catalog_combo)
        # wraps where there is room, else one line with the whole text on hover
        self.caption = FoldingCaption("solid: measured here; dashed: theoretical or spec sheet")
        self.caption.setProperty("role", "caption")
        row.addWidget(self.caption, 1)
        layout.addLayout(row)

        axes = {"left": LogAxis("left"), "bottom": LogAxis("bottom")}
        self.plot = pg.PlotWidget(axisItems=axes)
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
        self.catalog_combo.currentIndexChanged.connect(
            lambda _i: self.catalog_chosen.emit(self.catalog_combo.currentData() or "")
        )

    # --- public -------------------------------------------------------------------------
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
        self.caption.setText(f"solid: measured {where}; dashed: theoretical or spec sheet")
        self._redraw()

    @property
    def roofs(self) -> list[Roof]:
        return self._roofs + ([self._catalog_roof] if self._catalog_roof else [])

    def apply_text_scale(self) -> None:
        """Ticks, titles, the legend and the ceilings' labels at the text size now, up or down."""
        self._labels(current_theme())
        restyle(self.plot, (self.legend,))
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
        """(FLOP/byte, GFLOP/s) of each variant's points as plotted."""
        out: dict[str, list[tuple[float, float]]] = {}
        for item in self._drawn:
            if isinstance(item, pg.PlotDataItem) and item.name():
                xs, ys = item.getData()
                out[item.name()] = [(10**x, 10**y) for x, y in zip(xs, ys, strict=True)]
        return out

    # --- drawing ------------------------------------------------------------------------
    def _style_legend(self, theme: Theme) -> None:
        self.legend.setBrush(pg.mkBrush(theme.plot_background))
        self.legend.setPen(pg.mkPen(theme.border))
        self.legend.setLabelTextColor(theme.plot_foreground)

    def _labels(self, theme: Theme) -> None:
        axis_title(self.plot, "left", "GFLOP/s", theme.plot_foreground)
        axis_title(self.plot, "bottom", "arithmetic intensity (FLOP per byte moved)", theme.plot_foreground)
        plot_title(self.plot, "Roofline", theme.plot_foreground)

    def _clear(self) -> None:
        for item in self._drawn:
            self.plot.removeItem(item)
        self._drawn.clear()
        self._ceiling_labels.clear()
        self.legend.clear()

    def _redraw(self) -> None:
        self._clear()
        theme = current_theme()
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
            for seg in segments(roof, x_lo, x_hi):
                measured = seg.ceiling.kind == "measured"
                style = Qt.PenStyle.SolidLine if measured else Qt.PenStyle.DashLine
                line = pg.PlotDataItem(
                    [seg.x0, seg.x1],
                    [seg.y0, seg.y1],
                    pen=pg.mkPen(colour, width=2.5 if measured else 2, style=style),
                )
                line.setToolTip(f"{roof.title}: {seg.ceiling.label}. {seg.ceiling.basis}")
                self._add(line)
                ys += [seg.y0, seg.y1]
                self._add_label(seg, roof, colour, theme)
            ridge = roof.ridge_flop_per_byte
            top = roof.top("compute")
            if ridge and top:
                dot = pg.PlotDataItem(
                    [ridge],
                    [top.value],
                    pen=None,
                    symbol="d",
                    symbolSize=12,
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
                    pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DotLine),
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
        self._spread_labels()
        hidden = [p for p in self._points if p.error is None and not (p.intensity_flop_per_byte and p.gflops)]
        self.caption.setToolTip(
            f"{len(hidden)} point(s) do no arithmetic (copies): a roofline has no place for them"
            if hidden
            else ""
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
        for item, home in self._ceiling_labels:
            item.setPos(home)
            box = item.mapRectToScene(item.boundingRect())
            step = abs(vb.mapSceneToView(box.topLeft()).y() - vb.mapSceneToView(box.bottomLeft()).y()) + 0.01
            best: tuple[float, float] | None = None  # (covered area, k)
            for k in (0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6):
                item.setPos(home.x(), home.y() + k * step)
                box = item.mapRectToScene(item.boundingRect())
                if not inside.contains(box):
                    continue
                covered = sum(_area(box.intersected(other)) for other in (*placed, *points))
                if best is None or covered < best[0]:
                    best = (covered, k)
                if covered == 0:
                    break
            item.setPos(home.x(), home.y() + (best[1] if best else 0) * step)
            placed.append(item.mapRectToScene(item.boundingRect()))

    def _point_boxes(self, vb: Any) -> list[Any]:
        """Each measured point's marker, in scene pixels: a label never sits on one."""
        boxes = []
        half = 7  # the 11 px marker and its 1 px edge, with a pixel to spare
        for item in self._drawn:
            if isinstance(item, pg.PlotDataItem) and item.name():  # the measured points (named)
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
        if roof.host:  # a remote machine's roof: "CPU ON gpu-lab sgemm (measured): ..."
            who += f" ON {roof.host}"
        text = f"{who} {c.label}"
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
        self._ceiling_labels.append((item, item.pos()))

    def _add_points(self, placed: Sequence[Any], theme: Theme) -> None:
        by_variant: dict[tuple[str, str], list[Any]] = {}
        for p in placed:
            by_variant.setdefault((p.workload, p.variant), []).append(p)
        cpu_i = gpu_i = 0
        for index, ((_, variant), pts) in enumerate(by_variant.items()):
            if pts[0].device == "cpu":
                colour = (_CPU_COLOURS_DARK if theme.name == "dark" else _CPU_COLOURS)[cpu_i % 3]
                cpu_i += 1
            else:
                colour = _GPU_COLOURS[gpu_i % len(_GPU_COLOURS)]
                gpu_i += 1
            scatter = pg.PlotDataItem(
                [p.intensity_flop_per_byte for p in pts],
                [p.gflops for p in pts],
                pen=None,
                symbol=_SYMBOLS[index % len(_SYMBOLS)],
                symbolSize=11,
                symbolBrush=colour,
                symbolPen=pg.mkPen(theme.plot_background, width=1),
                name=f"{pts[0].workload}: {variant}",
            )
            scatter.setToolTip(
                "\n".join(
                    f"{p.size_label}: {p.intensity_flop_per_byte:.3g} FLOP/B, {number_text(p.gflops, 'GFLOP/s')}"
                    + (f", {p.bound}-bound" if p.bound else "")
                    for p in pts
                )
            )
            scatter.setZValue(20)  # a measured point is never hidden behind a label
            self._add(scatter)
            self.legend.addItem(scatter, scatter.name())


def _area(rect: Any) -> float:
    """The area of a rectangle (an empty intersection is 0)."""
    return max(0.0, rect.width()) * max(0.0, rect.height())
