"""What the timeline and latency-hiding views share: a painted widget that shows one moment of its
record (the clock that plays it is a core model's: the session's for the timeline, the cycle clock
of ``explorer.launch.time_views`` for the latency chart, moved by the visualizer's frame clock at
60 frames per second), sizes its text with the window's text size, and renders offscreen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.ui.guard import qt_guard
from explorer.ui.theme import figure_font
from explorer.ui.visualizer import palette
from explorer.ui.visualizer.sweep_graph import nice_ticks


@dataclass(frozen=True)
class ViewFonts:
    """Three sizes at the window's text size: headings, sentences, labels on the figure."""

    title: QFont
    body: QFont
    small: QFont


class PlayingView(QWidget):
    """A QPainter view of one moment of a played record, with ``fonts`` and ``render_image``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._least = 0  # the least height last asked for (``least_height`` at the width shown)

    # ------------------------------------------------------------------ text and pictures

    def fonts(self) -> ViewFonts:
        """The title, the body and the small text (axes, SM names): the theme's figure rule, so
        they follow the window's text size up and down and none is drawn below the readable least
        (the small text was 11 px at 100%, under the 0.85 x label text the figures keep to)."""
        return ViewFonts(
            figure_font(1.1, bold=True, base=self.font()),
            figure_font(1.0, base=self.font()),
            figure_font(0.85, base=self.font()),
        )

    def apply_text_scale(self) -> None:
        self.updateGeometry()
        self.update()

    def least_height(self, width: int) -> int:
        """The least height at ``width`` that still draws the view whole, with what it can drop
        dropped (a view says what that is); a fixed 200 px squeezed a chart to nothing at 200%."""
        return 200

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        return QSize(320, self.least_height(max(self.width(), 320)))

    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        """A new width may wrap the figures over another line: the page asks for it again."""
        super().resizeEvent(event)
        least = self.least_height(max(self.width(), 320))
        if least != self._least:
            self._least = least
            self.updateGeometry()

    def render_image(self, width: int, height: int) -> QImage:
        """The view at ``width`` x ``height`` into an image, offscreen (screenshots and tests)."""
        self.resize(width, height)
        image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(palette.canvas().ground)
        self.render(image)
        return image


def clauses_that_fit(clauses: Sequence[str], width: float, lines: int, font: QFont) -> tuple[int, float]:
    """How many of the leading ``clauses`` (joined with "; ") fit in ``lines`` wrapped lines of
    ``width``, and the height they take: a short view drops whole figures, never half a sentence;
    the first is always kept (wrapped in full, however many lines it takes)."""
    fm = QFontMetrics(font)
    wrap = int(Qt.TextFlag.TextWordWrap)
    room = QRectF(0, 0, width, 40 * fm.lineSpacing()).toRect()
    most = fm.boundingRect(room, wrap, "\n".join("x" * max(1, lines))).height()  # as Qt stacks lines
    kept, height = 0, 0.0
    for n in range(1, len(clauses) + 1):
        taken = float(fm.boundingRect(room, wrap, "; ".join(clauses[:n])).height())
        if n > 1 and taken > most:
            break
        kept, height = n, taken
    return kept, height


def paint_axis(
    p: QPainter,
    span: tuple[float, float],
    top: float,
    font: QFont,
    values: tuple[float, float],
    label: str,
    *,
    widest: str = "0000",
    centre_label: bool = False,
    max_ticks: int = 8,
) -> None:
    """A horizontal axis under a figure: ticks at round ``values`` (lo, hi) spread over the pixel
    ``span`` (left, right) at ``top``, their numbers under them, and ``label`` (where one is given) on the line below."""
    fm = QFontMetrics(font)
    p.setFont(font)
    p.setPen(palette.canvas().muted)
    (left, right), (lo, hi) = span, values
    width = right - left
    tick_w = fm.horizontalAdvance(widest) + 6
    for v in nice_ticks(lo, hi, max(2, min(max_ticks, int(width // tick_w)))):
        x = left + (v - lo) / max(hi - lo, 1e-12) * width
        p.drawLine(QPointF(x, top), QPointF(x, top + 3))
        text = f"{v:g}"
        text_w = fm.horizontalAdvance(text) + 2
        # centred on its tick, but never past the axis's right end (the view's edge cut "0.014")
        p.drawText(
            QRectF(min(x - text_w / 2, right - text_w), top + 3, text_w, fm.height()),
            Qt.AlignmentFlag.AlignHCenter,
            text,
        )
    if not label:
        return  # the figure names its axis elsewhere
    align = Qt.AlignmentFlag.AlignHCenter if centre_label else Qt.AlignmentFlag.AlignLeft
    label = fm.elidedText(label, Qt.TextElideMode.ElideRight, int(width))  # a narrow figure cuts it visibly
    p.drawText(QRectF(left, top + fm.height() + 3, width, fm.height()), align, label)
