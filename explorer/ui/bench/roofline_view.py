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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, Signal
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
from explorer.bench.results import roof_share_words
from explorer.bench.roofline import plot_range, segments
from explorer.roofs.model import Roof
from explorer.roofs.placement import level_text
from explorer.roofs.texts import ceiling_line
from explorer.ui.bench.levels import level_colour
from explorer.ui.bench.plot import (
    CPU_COLOURS,
    CPU_COLOURS_DARK,
    GPU_COLOURS,
    INVALID_LEGEND,
    INVALID_SYMBOL,
    SYMBOLS,
    LogAxis,
    point_marker,
    style_legend,
    style_plot,
    style_titles,
)
from explorer.ui.guard import qt_guard
from explorer.ui.plot_text import (
    fit_legend_columns,
    hold_plot_lines,
    keep_plot_lines,
    legend_size,
    plot_title,
    restyle,
)
from explorer.ui.plot_widget import plot_widget
from explorer.ui.theme import Theme, current_theme, line_px, px
from explorer.ui.widgets import FoldingCaption
from explorer.words import count, on_host

#: how a recorded point's variant is named in the legend, beside this machine's
RECORDED_MARK = "(recorded)"

_CATALOG_COLOURS = ("#CC79A7", "#E69F00")  # purple first: no CPU or GPU point is drawn in it
_NO_CATALOG = "Add a catalog GPU's roof…"


class _ChoiceBox(QComboBox):
    """Asks for the width of the choice it shows ("Add a catalog GPU's roof…" was cut at 14
    characters beside the caption), yet needs no more than 9 characters where a row is short;
    the list it opens shows every name in full."""

    @qt_guard
    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        text = QSize(self.fontMetrics().horizontalAdvance(self.currentText()), hint.height())
        full = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, opt, text, self)
        return QSize(max(hint.width(), full.width()), hint.height())


def _roof_colour(roof: Roof, index: int) -> str:
    if roof.device == "cpu":
        return (CPU_COLOURS_DARK if current_theme().name == "dark" else CPU_COLOURS)[0]
    if roof.device.startswith(("catalog:", "recorded:")):  # a spec sheet's, a lesson recording's
        return _CATALOG_COLOURS[index % len(_CATALOG_COLOURS)]
    return GPU_COLOURS[index % len(GPU_COLOURS)]


#: the least height, at 100% text, of the whole plot before it is laid out (its view keeps
#: ``MIN_PLOT_LINES`` lines of its ticks, ``plot_text.keep_plot_lines``)
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
        #: the legend's rows naming a roof or a ridge (the words a student reads for each line)
        self._ceiling_rows: list[Any] = []
        #: a lesson's recorded points, the roofs they were judged against, and "recorded on ..."
        self._recorded: list[Any] = []
        self._recorded_roofs: list[Roof] = []
        self._recorded_mark = ""

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
        style_plot(self.plot, theme)
        # the legend sits under the plot, in the plot's own layout (so the PNG export has it): inside
        # it would cover a roof's label or a point whatever corner it took
        self.legend = pg.LegendItem(
            colCount=3, labelTextSize=legend_size(), labelTextColor=theme.plot_foreground
        )
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1)
        # rows close together: each row of the legend is a row less of the view on a projector
        self.legend.layout.setContentsMargins(4, 0, 4, 0)
        self.legend.layout.setVerticalSpacing(0)
        self._style_legend(theme)
        self._labels(theme)
        layout.addWidget(self.plot, 1)
        self.plot.getPlotItem().vb.sigResized.connect(lambda _vb: self._fit_legend())
        # the view keeps its least height whatever the legend's rows and the titles take
        hold_plot_lines(self.plot, (self.legend,), px(PLOT_MIN_HEIGHT))
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

    def set_recorded(self, points: Sequence[Any], roofs: Sequence[Roof], mark: str) -> None:
        """A lesson's recorded points (``mark``: "recorded on <device>, <date>") and the roofs they
        were judged against when recorded, drawn beside this machine's; no points: none."""
        self._recorded = list(points)
        self._recorded_roofs = list(roofs) if self._recorded else []
        self._recorded_mark = mark if self._recorded else ""
        self._redraw()

    @property
    def roofs(self) -> list[Roof]:
        """The roofs drawn: the run's, a lesson recording's, and any catalog GPU's."""
        return self._roofs + self._recorded_roofs + ([self._catalog_roof] if self._catalog_roof else [])

    def apply_text_scale(self) -> None:
        """Ticks, titles, the legend and the ceilings' labels at the text size now, up or down."""
        self._labels(current_theme())
        self._redraw()  # lines, markers and labels at the new size
        restyle(self.plot, (self.legend,))
        self._fit_legend()
        keep_plot_lines(self.plot, px(PLOT_MIN_HEIGHT))

    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.plot, theme)
        self._style_legend(theme)
        self._labels(theme)
        self._redraw()

    def label_items(self) -> list[Any]:
        """The legend's rows naming each ceiling and ridge now drawn (pyqtgraph ``LabelItem``s)."""
        return list(self._ceiling_rows)

    def line_labels(self) -> list[str]:
        """The words of every ceiling and ridge now drawn (what a student reads)."""
        return [row.text for row in self._ceiling_rows]

    def recorded_items(self) -> list[Any]:
        """The plot items drawing a lesson's recorded points."""
        return [i for i in self._scatters() if i.opts.get("recorded")]

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

    def _labels(self, theme: Theme) -> None:
        # no title on screen: the tab says "Roofline", and its row is a row less of the view on
        # a projector with the roofs' legend under it (a picture of it has one: ``titled``)
        style_titles(self.plot, theme, "GFLOP/s", "arithmetic intensity (FLOP per byte moved)", "")

    @contextmanager
    def titled(self) -> Iterator[None]:
        """The plot titled "Roofline" while a picture of it is taken (a PNG export), then not."""
        plot_title(self.plot, "Roofline", current_theme().plot_foreground)
        try:
            yield
        finally:
            plot_title(self.plot, "", current_theme().plot_foreground)

    def _clear(self) -> None:
        for item in self._drawn:
            self.plot.removeItem(item)
        self._drawn.clear()
        self._ceiling_rows.clear()
        self.legend.clear()
        self._legend_items.clear()

    def _redraw(self) -> None:
        self._clear()
        theme = current_theme()
        self.legend.opts["labelTextSize"] = legend_size()  # the figure text size, for the rows added now
        roofs = self.roofs
        placed = [p for p in self._points if _on_roofline(p)]
        recorded = [p for p in self._recorded if _on_roofline(p)]
        x_lo, x_hi = plot_range(roofs, [p.intensity_flop_per_byte for p in (*placed, *recorded)])
        ys: list[float] = [p.gflops for p in (*placed, *recorded)]
        point_levels = {p.memory_level for p in (*placed, *recorded)}
        named = len(roofs) > 1
        lined_levels: set[str] = set()
        busy: set[str] = set()  # the roofs (their devices) with a ceiling measured while busy
        quiet: set[str] = set()  # ... and measured on a quiet machine
        drops: list[tuple[float, float, str, str]] = []  # each ridge's drop line: x, top, colour, roof
        for index, roof in enumerate(roofs):
            own = roof.device.startswith(("catalog:", "recorded:"))
            colour = _roof_colour(
                roof,
                sum(r.device.startswith(("catalog:", "recorded:")) == own for r in roofs[:index]),
            )
            who = _who(roof) if named or roof.host else ""
            # the legend lists the roof's ceilings as a student reads a roofline: the flat compute
            # roofs (highest first), then the slanted levels from the cores outwards
            order = sorted(
                segments(roof, x_lo, x_hi),
                key=lambda seg: (seg.ceiling.quantity == "memory", -seg.ceiling.value),
            )
            for seg in order:
                c = seg.ceiling
                measured = c.kind == "measured"
                style = Qt.PenStyle.SolidLine if measured else Qt.PenStyle.DashLine
                # a memory level's roof in its level's colour; compute roofs (and a spec sheet's or a
                # recording's) in the device's own
                by_level = c.quantity == "memory" and bool(c.level) and not own
                line_colour = level_colour(c.level) if by_level else colour
                pen = pg.mkPen(line_colour, width=line_px(2.5 if measured else 2), style=style)
                line = pg.PlotDataItem([seg.x0, seg.x1], [seg.y0, seg.y1], pen=pen)
                line.setToolTip(f"{roof.title}: {_ceiling_hover(c)}")
                self._add(line)
                ys += [seg.y0, seg.y1]
                # the level's points share its colour: the entry shows the line and a point
                dot = by_level and c.level in point_levels
                if dot:
                    lined_levels.add(c.level)
                if measured:
                    (busy if c.disturbed else quiet).add(who or _who(roof))
                self._legend_entry(
                    f"{who} {_ceiling_words(c)}".strip(),
                    pen=pen,
                    symbol="o" if dot else None,
                    colour=line_colour,
                    theme=theme,
                    ceiling=True,
                )
            ridge = roof.ridge_flop_per_byte
            top = roof.compute_roof()  # the ridge is on the roof shares are taken against
            if ridge and top:
                dot_item = pg.PlotDataItem(
                    [ridge],
                    [top.value],
                    pen=None,
                    symbol="d",
                    symbolSize=px(12),
                    symbolBrush=colour,
                    symbolPen=colour,
                )
                dot_item.setToolTip(f"ridge point of {roof.title}: {ridge:.3g} FLOP/byte")
                self._add(dot_item)
                # a dotted drop line: left of it the device is memory-bound, right of it
                # compute-bound; its words once, in the legend (a label in the plot lay on the
                # points and the other roofs' labels on a short projector plot)
                drops.append((ridge, top.value, colour, roof.title))
                self._legend_entry(
                    f"{who} ridge {ridge:.3g} FLOP/B".strip(),
                    symbol="d",
                    colour=colour,
                    theme=theme,
                    ceiling=True,
                )
        if busy or quiet:  # how a solid roof was had, said once rather than in every row
            self._legend_entry(
                _measured_words(busy, quiet),
                pen=pg.mkPen(theme.plot_foreground, width=line_px(2.5)),
                colour=theme.plot_foreground,
                theme=theme,
            )
        self._add_points(placed, recorded, lined_levels, theme)
        self.plot.setXRange(math.log10(x_lo), math.log10(x_hi), padding=0)
        y_lo = min((y for y in ys if y > 0), default=1.0) / 10**0.2
        if ys:
            # a little room above the top roof and below the lowest line: no words sit in the plot
            self.plot.setYRange(math.log10(y_lo), math.log10(max(ys)) + 0.3, padding=0)
        for ridge, top_value, colour, title in drops:  # from the ridge point down to the axis
            drop = pg.PlotDataItem(
                [ridge, ridge],
                [y_lo, top_value],
                pen=pg.mkPen(colour, width=line_px(1), style=Qt.PenStyle.DotLine),
            )
            drop.setToolTip(f"ridge point of {title}: {ridge:.3g} FLOP/byte")
            self._add(drop)
        self._fit_legend()
        hidden = [p for p in self._points if p.error is None and not (p.intensity_flop_per_byte and p.gflops)]
        self.caption.setToolTip(
            f"{count(len(hidden), 'point')} with no arithmetic (copies): a roofline has no place for them; the "
            "Bandwidth tab shows them against each memory level's roof"
            if hidden
            else "Colour: the memory level a point's data lives in, and that level's roof. Hover a line "
            "for how it was measured."
        )

    def _add(self, item: Any) -> None:
        self.plot.addItem(item)
        self._drawn.append(item)

    def _add_points(
        self, placed: Sequence[Any], recorded: Sequence[Any], lined_levels: set[str], theme: Theme
    ) -> None:
        """Each variant's points, grouped by the level their data lives in: the colour is the level's,
        the symbol the variant's; hollow where other programs disturbed the point. A lesson's
        recorded points are drawn the same way beside them, their variants named "recorded" in
        the legend. The legend names the levels no roof's entry names ("fits in L2"), then the
        variants."""
        variants: dict[tuple[str, str], int] = {}
        groups: dict[tuple[str, str, str, bool, bool], list[Any]] = {}
        for p in placed:
            variants.setdefault((p.workload, p.variant), len(variants))
            groups.setdefault((p.workload, p.variant, p.memory_level, p.noisy, p.invalid), []).append(p)
        for p in recorded:
            name = f"{p.variant} {RECORDED_MARK}"
            variants.setdefault((p.workload, name), len(variants))
            groups.setdefault((p.workload, name, p.memory_level, p.noisy, p.invalid), []).append(p)
        levels_seen: dict[str, str] = {}
        for (workload, variant, level, noisy, invalid), pts in groups.items():
            colour = level_colour(level)
            symbol = SYMBOLS[variants[(workload, variant)] % len(SYMBOLS)]
            scatter = pg.PlotDataItem(  # an invalid group crossed, hollow, named in the legend
                [p.intensity_flop_per_byte for p in pts],
                [p.gflops for p in pts],
                pen=None,
                **point_marker(symbol, colour, noisy=noisy, invalid=invalid, theme=theme),
            )
            scatter.opts["variant"] = f"{workload}: {variant}"
            scatter.opts["level"] = level
            scatter.opts["labels"] = [f"{variant} {p.size_label}" for p in pts]
            scatter.opts["recorded"] = variant.endswith(RECORDED_MARK)
            where = f"{self._recorded_mark}: " if scatter.opts["recorded"] and self._recorded_mark else ""
            scatter.setToolTip("\n".join(where + _point_words(p) for p in pts))
            scatter.setZValue(20)  # a measured point is never hidden behind a line
            self._add(scatter)
            if level not in lined_levels:
                words = level_text(level, "") or "level not known"
                levels_seen.setdefault(words, colour)
        for words, colour in levels_seen.items():
            self._legend_entry(words, symbol="o", colour=colour, theme=theme)
        for (_, variant), index in variants.items():
            symbol = SYMBOLS[index % len(SYMBOLS)]
            self._legend_entry(variant, symbol=symbol, colour=theme.plot_foreground, theme=theme)
        if any(key[4] for key in groups):
            self._legend_entry(
                INVALID_LEGEND, symbol=INVALID_SYMBOL, colour=theme.plot_foreground, theme=theme
            )

    def _legend_entry(
        self,
        text: str,
        *,
        colour: str,
        theme: Theme,
        pen: Any = None,
        symbol: str | None = None,
        ceiling: bool = False,
    ) -> None:
        """A legend row drawing nothing in the plot: a roof's line (``pen``) and or a marker
        (``symbol``) in ``colour``, and its words. ``ceiling``: a roof's or a ridge's row (what
        ``line_labels`` reads)."""
        if pen is None:
            # a scatter item: the legend draws its own brush (an empty PlotDataItem's symbol brush
            # is never handed to its scatter, and the legend showed pyqtgraph's default grey-blue)
            item: Any = pg.ScatterPlotItem(
                symbol=symbol, size=px(10), brush=pg.mkBrush(colour), pen=pg.mkPen(theme.plot_background)
            )
        else:
            item = pg.PlotDataItem([], [], pen=pen, symbol=symbol)
            # the legend draws a line's marker from its scatter's own options, which an empty
            # item never fills in from its symbol options
            item.scatter.setBrush(pg.mkBrush(colour))
            item.scatter.setPen(pg.mkPen(theme.plot_background))
            item.scatter.setSize(px(9))
        self.legend.addItem(item, text)
        self._legend_items.append(item)
        if ceiling:
            self._ceiling_rows.append(self.legend.items[-1][1])


def _on_roofline(p: Any) -> bool:
    """A point with arithmetic and a rate: a copy has no place on a roofline."""
    return bool(p.error is None and p.intensity_flop_per_byte and p.gflops and p.intensity_flop_per_byte > 0)


def _who(roof: Roof) -> str:
    """A roof's device in a legend row shared with other roofs: "CPU", "H100 SXM5 80GB",
    "CPU ON gpu-lab", "H100 80GB HBM3 (recorded)"."""
    name = "CPU" if roof.device == "cpu" else roof.name.removesuffix(" (catalog)")
    return on_host(name.removeprefix("NVIDIA "), roof.host)  # a recording's keeps "(recorded)"


def _ceiling_words(c: Any) -> str:
    """A roof's row in the legend: "L2: 64.4 GB/s", "sgemm: 29 GFLOP/s" for a measured one (the
    solid line and the legend's "solid: measured ..." row say how it was had), "FP32 peak
    (theoretical): 472 GFLOP/s", "DRAM (spec sheet): 3,350 GB/s" for the others."""
    if c.kind != "measured":
        return c.short_label
    return f"{c.level if c.quantity == 'memory' and c.level else c.name}: {number_text(c.value, c.unit)}"


def _measured_words(busy: set[str], quiet: set[str]) -> str:
    """The legend's one row on the solid roofs: "solid: measured while busy", "solid: measured
    (CPU while busy)" where only some roofs were measured while other programs were busy."""
    if not busy:
        return "solid: measured"
    if not quiet:
        return "solid: measured while busy"
    return f"solid: measured ({', '.join(sorted(busy))} while busy)"


def _ceiling_hover(c: Any) -> str:
    """A roof line's hover text: the ceiling in full, and where a theoretical peak rests on a
    clock measured while the machine was busy, that."""
    text = ceiling_line(c)
    if c.disturbed and c.kind != "measured":
        text += " (the clock it is built on was measured while other programs were busy)"
    return text


def _caption(where: str) -> str:
    return f"colour: memory level · solid: measured {where}; dashed: theoretical or spec sheet"


def _point_words(p: Any) -> str:
    """A point's hover line: "N=1,000: fits in L1 · 0.0833 FLOP/B, 2.04 GFLOP/s · 5% of its L1 roof"."""
    where = level_text(p.memory_level, p.roof_level)
    text = f"{p.size_label}: {where + ' · ' if where else ''}{p.intensity_flop_per_byte:.3g} FLOP/B, "
    text += number_text(p.gflops, "GFLOP/s")
    if p.roof_share is not None:
        text += f" · {roof_share_words(p)}"
    if p.roof_note:
        text += f" ({p.roof_note})"
    if p.invalid:
        text += f" · INVALID: {p.invalid_reason}"
    if p.noisy:
        text += " · disturbed by other programs"
    return text
