"""What the timeline and latency-hiding views share: a painted widget that plays through its record
at 60 frames per second, sizes its text with the window's text size, and renders offscreen.

A subclass says where playing starts (``_start``: from where, or None when there is nothing to
play) and what a moment of it shows (``_advance``: the seconds played so far); the clock, the
timer and the offscreen picture are here once.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QElapsedTimer, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.ui.theme import figure_font
from explorer.ui.visualizer import palette
from explorer.ui.visualizer.sweep_graph import _nice_ticks

FRAME_MS = 16  # 60 frames per second


@dataclass(frozen=True)
class ViewFonts:
    """Three sizes at the window's text size: headings, sentences, labels on the figure."""

    title: QFont
    body: QFont
    small: QFont


class PlayingView(QWidget):
    """A QPainter view with a play clock (``play`` / ``pause`` / ``playing``) and ``render_image``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._on_frame)
        self._clock = QElapsedTimer()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 200)

    # ------------------------------------------------------------------ for subclasses

    def _start(self) -> bool:
        """Get ready to play (rewind when at the end); False when there is nothing to play."""
        raise NotImplementedError

    def _advance(self, seconds: float) -> bool:
        """Show the moment ``seconds`` after play started; False once the end is reached."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the clock

    def play(self) -> None:
        if not self._start():
            return
        self._clock.start()
        self._timer.start()

    def pause(self) -> None:
        self._timer.stop()

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def _on_frame(self) -> None:
        if not self._advance(self._clock.elapsed() / 1000.0):
            self.pause()

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

    def render_image(self, width: int, height: int) -> QImage:
        """The view at ``width`` x ``height`` into an image, offscreen (screenshots and tests)."""
        self.resize(width, height)
        image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(palette.canvas().ground)
        self.render(image)
        return image


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
    ``span`` (left, right) at ``top``, their numbers under them, and ``label`` on the line below."""
    fm = QFontMetrics(font)
    p.setFont(font)
    p.setPen(palette.canvas().muted)
    (left, right), (lo, hi) = span, values
    width = right - left
    tick_w = fm.horizontalAdvance(widest) + 6
    for v in _nice_ticks(lo, hi, max(2, min(max_ticks, int(width // tick_w)))):
        x = left + (v - lo) / max(hi - lo, 1e-12) * width
        p.drawLine(QPointF(x, top), QPointF(x, top + 3))
        p.drawText(
            QRectF(x - tick_w / 2, top + 3, tick_w, fm.height()), Qt.AlignmentFlag.AlignHCenter, f"{v:g}"
        )
    align = Qt.AlignmentFlag.AlignHCenter if centre_label else Qt.AlignmentFlag.AlignLeft
    p.drawText(QRectF(left, top + fm.height() + 3, width, fm.height()), align, label)
