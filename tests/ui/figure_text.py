"""The text the window's figures really paint, measured while they paint: the render test's eyes
for drawn text.

A label's text is checked by ``layout_check``; a figure paints its own (the SM numbers, the lane
and bank numbers, the wave bar, the graphs, pyqtgraph's titles and legends), so this records every
``QPainter.drawText`` and ``drawStaticText`` call made while a figure is grabbed: the pixel size of
the painter's font then, the words, and where they land in the figure. pyqtgraph draws its titles,
axis titles, legend entries and line labels as ``QGraphicsTextItem``s (painted inside Qt, not
through Python): those are read from the items' documents, fragment by fragment, and their
places from the scene. So what is checked is what the painters used, not what a rule promises.

pyqtgraph's tick labels go into each axis's cached picture in the axis's own coordinates: they
are taken from the axis's own draw specs (``AxisItem.drawPicture``) as it paints, and placed
through the axis into the figure, so a tick number under a line label or a legend is seen too.

``figure_problems(window)``: every painted text smaller than ``FIGURE_TEXT_MIN_SHARE`` of the
label text, drawn outside its figure (a label inside a plot's data area: outside that area), or
over another text of the same figure.

``room_problems(window)``: each figure squashed: a plot (pyqtgraph's data area, or a painted
view's plot as the view reports it from its last paint, ``figure_areas``) shorter than
``MIN_PLOT_LINES`` lines of its axis font, or a figure cut off by the page around it where
nothing scrolls to the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF, QPainter, QStaticText, QTextOption
from PySide6.QtWidgets import QGraphicsTextItem, QWidget

from explorer.ui.theme import BASE_FONT_PT, FIGURE_TEXT_MIN_SHARE, label_px, pt
from explorer.ui.visualizer.scene import SmGrid

#: a pixel of rounding either way is not a problem
SLACK = 1.0
#: the least height of a plot, in lines of its axis font: enough for a few labelled ticks and a
#: label inside the plot off its line (a latency curve 30 px tall had "16 warps" written over it)
MIN_PLOT_LINES = 8


@dataclass(frozen=True)
class Painted:
    """One text a figure drew: its words, font size in pixels, and rectangle in the figure."""

    figure: str
    text: str
    px: float
    rect: QRectF
    #: a QGraphicsTextItem's rectangle: its line spacing above and below the glyphs is not text
    loose: bool = False
    #: a label of a plot's data (a line's, a point's): the data area it must stay inside
    within: QRectF | None = None


_log: list[Painted] | None = None
_figure = ""
#: tick labels as the axes drew them: (axis, rect in the axis's coordinates, text, font pixels)
_ticks: list[tuple[pg.AxisItem, QRectF, str, float]] | None = None


def _text_rect(p: QPainter, args: tuple) -> tuple[str, QRectF] | None:
    """The words and the rectangle (in the painter's device) of one drawText call."""
    fm = QFontMetricsF(p.font())
    text: str | None = None
    rect: QRectF | None = None
    if len(args) == 2 and isinstance(args[1], str) and isinstance(args[0], (QPoint, QPointF)):
        pt, text = QPointF(args[0]), args[1]
        rect = QRectF(pt.x(), pt.y() - fm.ascent(), fm.horizontalAdvance(text), fm.height())
    elif len(args) == 3 and isinstance(args[2], str) and not isinstance(args[0], (QRect, QRectF)):
        x, y, text = float(args[0]), float(args[1]), args[2]
        rect = QRectF(x, y - fm.ascent(), fm.horizontalAdvance(text), fm.height())
    elif len(args) >= 2 and isinstance(args[0], (QRect, QRectF)):
        box = QRectF(args[0])
        if isinstance(args[1], str):  # (rect, text[, option])
            text = args[1]
            option = args[2] if len(args) > 2 and isinstance(args[2], QTextOption) else QTextOption()
            flags = int(option.alignment().value)
            if option.wrapMode() != QTextOption.WrapMode.NoWrap:
                flags |= int(Qt.TextFlag.TextWordWrap.value)
        else:  # (rect, flags, text)
            flags = int(args[1]) if not hasattr(args[1], "value") else int(args[1].value)
            text = args[2]
        rect = fm.boundingRect(box, flags, text)
    elif len(args) == 6 and isinstance(args[5], str):
        box = QRectF(*(float(a) for a in args[:4]))
        flags = int(args[4]) if not hasattr(args[4], "value") else int(args[4].value)
        text = args[5]
        rect = fm.boundingRect(box, flags, text)
    if text is None or rect is None or not text.strip():
        return None
    return text, p.transform().mapRect(rect)


_original_draw_text = QPainter.drawText
_original_draw_static = QPainter.drawStaticText
_original_draw_picture = pg.AxisItem.drawPicture


def _axis_draw_picture(self: pg.AxisItem, p: QPainter, axis_spec, tick_specs, text_specs):
    if _ticks is not None:
        px = float(QFontInfo(p.font()).pixelSize())
        _ticks.extend((self, QRectF(rect), text, px) for rect, _flags, text in text_specs if text.strip())
    return _original_draw_picture(self, p, axis_spec, tick_specs, text_specs)


def _draw_text(self: QPainter, *args):
    if _log is not None:
        found = _text_rect(self, args)
        if found is not None:
            _log.append(Painted(_figure, found[0], QFontInfo(self.font()).pixelSize(), found[1]))
    return _original_draw_text(self, *args)


def _draw_static(self: QPainter, *args):
    if _log is not None and len(args) == 2 and isinstance(args[1], QStaticText):
        st: QStaticText = args[1]
        at = QPointF(args[0])
        rect = self.transform().mapRect(QRectF(at, st.size()))
        _log.append(Painted(_figure, st.text(), QFontInfo(self.font()).pixelSize(), rect))
    return _original_draw_static(self, *args)


@contextmanager
def recording(figure: str) -> Iterator[list[Painted]]:
    """Record what is painted (with the painters' own fonts) until the block ends."""
    global _log, _figure, _ticks
    QPainter.drawText = _draw_text  # type: ignore[method-assign]
    QPainter.drawStaticText = _draw_static  # type: ignore[method-assign]
    pg.AxisItem.drawPicture = _axis_draw_picture  # type: ignore[method-assign]
    found: list[Painted] = []
    _log, _figure, _ticks = found, figure, []
    try:
        yield found
    finally:
        _log, _ticks = None, None
        QPainter.drawText = _original_draw_text  # type: ignore[method-assign]
        QPainter.drawStaticText = _original_draw_static  # type: ignore[method-assign]
        pg.AxisItem.drawPicture = _original_draw_picture  # type: ignore[method-assign]


def _name(w: QWidget) -> str:
    """The figure's class and its parents', and which one of its kind it is (two side handles or
    three graphs share the rest)."""
    parts, widget = [], w
    while widget is not None and len(parts) < 3:
        parts.append(widget.objectName() or type(widget).__name__)
        widget = widget.parentWidget()
    return "/".join(reversed(parts)) + f"#{id(w) % 100_000}"


def painted_figures(window: QWidget) -> list[QWidget]:
    """The visible widgets of ``window`` that paint their own text: the app's painters (a
    ``paintEvent`` of its own in ``explorer.ui``) and pyqtgraph's plots."""
    out = []
    for w in window.findChildren(QWidget):
        if not w.isVisibleTo(window) or w.width() <= 1 or w.height() <= 1:
            continue
        if isinstance(w, pg.PlotWidget):
            out.append(w)
            continue
        paints = next((c for c in type(w).__mro__ if "paintEvent" in vars(c)), None)
        if paints is not None and paints.__module__.startswith("explorer.ui"):
            out.append(w)
    return out


def _document_px(item: QGraphicsTextItem) -> float:
    """The smallest pixel size among the fragments of a text item's document."""
    doc = item.document()
    points_to_px = label_px() / pt(BASE_FONT_PT)  # the screen's dots per point
    sizes = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.text().strip():
                fmt = frag.charFormat()
                font: QFont = fmt.font()
                if font.pixelSize() > 0:
                    sizes.append(float(font.pixelSize()))
                elif fmt.fontPointSize() > 0:
                    sizes.append(fmt.fontPointSize() * points_to_px)
                else:
                    sizes.append(float(QFontInfo(doc.defaultFont()).pixelSize()))
            it += 1
        block = block.next()
    return min(sizes, default=float(QFontInfo(doc.defaultFont()).pixelSize()))


def measure(window: QWidget) -> list[Painted]:
    """Every text the visible figures of ``window`` paint now, as they paint it."""
    found: list[Painted] = []
    for fig in painted_figures(window):
        name = _name(fig)
        if isinstance(fig, SmGrid):
            fig.invalidate()  # the SM picture caches its labelled background
        if isinstance(fig, pg.PlotWidget):
            for axis in fig.getPlotItem().axes.values():
                axis["item"].picture = None  # tick labels are drawn into a cached picture
        with recording(name) as log:
            fig.grab()
            ticks = list(_ticks or [])
        if isinstance(fig, pg.PlotWidget):
            # tick texts went into the axes' pictures in the axes' own coordinates: their size
            # counts as painted, their place as the axis puts it in the figure
            found += [Painted(p.figure, p.text, p.px, QRectF()) for p in log]
            view = fig
            for axis, rect, text, px in ticks:
                placed = QRectF(view.mapFromScene(axis.mapRectToScene(rect)).boundingRect())
                found.append(Painted(name, text, px, placed))
            data = fig.getPlotItem().getViewBox()
            for item in fig.scene().items():
                if isinstance(item, QGraphicsTextItem) and item.isVisible() and item.toPlainText().strip():
                    margin = item.document().documentMargin()
                    inner = item.boundingRect().adjusted(margin, margin, -margin, -margin)
                    rect = QRectF(view.mapFromScene(item.mapRectToScene(inner)).boundingRect())
                    within = None  # a label of the data (a line's, a point's): inside the data area
                    if data.isAncestorOf(item) and not _in_legend(item):
                        within = QRectF(view.mapFromScene(data.sceneBoundingRect()).boundingRect())
                    found.append(
                        Painted(name, item.toPlainText(), _document_px(item), rect, loose=True, within=within)
                    )
        else:
            found += log
    return found


def _in_legend(item: QGraphicsTextItem) -> bool:
    """Whether the text is a legend's (anchored in the data area's corner, over no data)."""
    parent = item.parentItem()
    while parent is not None:
        if isinstance(parent, pg.LegendItem):
            return True
        parent = parent.parentItem()
    return False


def figure_problems(window: QWidget, painted: list[Painted] | None = None) -> list[str]:
    """Painted texts smaller than the scale asks, outside their figure, or over one another."""
    painted = measure(window) if painted is None else painted
    least = FIGURE_TEXT_MIN_SHARE * label_px()
    problems = []
    by_figure: dict[str, list[Painted]] = {}
    bounds = {_name(f): QRectF(f.rect()) for f in painted_figures(window)}
    for p in painted:
        if p.px + 0.5 < least:
            problems.append(
                f"{p.figure}: {p.text[:40]!r} drawn at {p.px:g} px; the text scale asks {least:.1f} or more"
            )
        if not p.rect.isEmpty():
            by_figure.setdefault(p.figure, []).append(p)
            inside = bounds.get(p.figure)
            slack = max(SLACK, 0.3 * p.px) if p.loose else SLACK
            if inside is not None and not inside.adjusted(-slack, -slack, slack, slack).contains(p.rect):
                problems.append(
                    f"{p.figure}: {p.text[:40]!r} runs out of its figure ({_rect(p.rect)} in {_rect(inside)})"
                )
            elif p.within is not None and not p.within.adjusted(-slack, -slack, slack, slack).contains(
                p.rect
            ):
                problems.append(
                    f"{p.figure}: {p.text[:40]!r} runs out of its plot ({_rect(p.rect)} in {_rect(p.within)})"
                )
    for name, texts in by_figure.items():
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                if a.text == b.text and a.rect == b.rect:
                    continue  # the same words painted twice in one place (a cached layer and the frame)
                overlap = a.rect.intersected(b.rect)
                if overlap.width() > 2 and overlap.height() > 2:
                    problems.append(f"{name}: {a.text[:30]!r} and {b.text[:30]!r} are drawn over each other")
    return problems


def _rect(r: QRectF) -> str:
    return f"{r.width():.0f}x{r.height():.0f}+{r.x():.0f}+{r.y():.0f}"


def figure_areas(fig: QWidget) -> list[tuple[str, QRectF, float]]:
    """The plots of one figure: (what, rectangle in the figure, its axis font's line height).
    pyqtgraph's: the data area and the tick font; a painted view's: what it reports from its
    last paint (``figure_areas()``: the view knows which of its rectangles are plots)."""
    if isinstance(fig, pg.PlotWidget):
        item = fig.getPlotItem()
        data = item.getViewBox()
        if not data.isVisible():
            return []
        axis = item.getAxis("left") if item.getAxis("left").isVisible() else item.getAxis("bottom")
        font = axis.style.get("tickFont") or axis.font()
        rect = QRectF(fig.mapFromScene(data.sceneBoundingRect()).boundingRect())
        return [("plot", rect, QFontMetricsF(font).lineSpacing())]
    areas = getattr(fig, "figure_areas", None)
    return list(areas()) if callable(areas) else []


def room_problems(window: QWidget) -> list[str]:
    """Each visible figure squashed (a plot under ``MIN_PLOT_LINES`` lines of its axis font), or
    cut off by the page around it where nothing scrolls to the rest. Run after ``measure`` (or a
    paint): a painted view reports the plots it last drew."""
    problems = []
    for fig in painted_figures(window):
        name = _name(fig)
        for what, rect, line in figure_areas(fig):
            if rect.height() + SLACK < MIN_PLOT_LINES * line:
                problems.append(
                    f"{name}: its {what} is {rect.height():.0f} px tall, under {MIN_PLOT_LINES} lines "
                    f"of its axis text ({MIN_PLOT_LINES * line:.0f} px)"
                )
        cut = _cut_off(fig, window)
        if cut:
            problems.append(f"{name}: {cut}")
    return problems


def _cut_off(fig: QWidget, window: QWidget) -> str:
    """How a figure is cut off by a widget around it that does not scroll to the rest ("" if it
    shows whole or its scroll area scrolls that way)."""
    from PySide6.QtWidgets import QAbstractScrollArea

    child: QWidget = fig
    parent = fig.parentWidget()
    while parent is not None and child is not window:
        area = parent.parentWidget()
        rect = QRect(child.mapTo(parent, QPoint(0, 0)), child.size())
        visible = rect.intersected(parent.rect())
        short, narrow = visible.height() < rect.height() - 1, visible.width() < rect.width() - 1
        if isinstance(area, QAbstractScrollArea) and parent is area.viewport():
            short = short and area.verticalScrollBar().maximum() <= 0
            narrow = narrow and area.horizontalScrollBar().maximum() <= 0
        if short or narrow:
            return (
                f"cut off by {type(parent).__name__} ({visible.width()}x{visible.height()} of "
                f"{rect.width()}x{rect.height()} px shown) with nothing to scroll to the rest"
            )
        child, parent = parent, parent.parentWidget()
    return ""
