"""Above the SMs: "wave k of n", the queue of waiting blocks and the count of finished ones; below: the legend.

The queue is drawn aggregated: a few block squares and the count, never one square per block of a
grid that may hold two billion of them.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QFont, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.ui.guard import qt_guard
from explorer.ui.visualizer import palette
from explorer.ui.visualizer.animation import Frame

MAX_QUEUE_SQUARES = 24


class WaveBar(QWidget):
    """Paints the wave label, the queue and the done pile for one animation frame."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.frame: Frame | None = None
        self.tail_text = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(64)

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(800, 64)

    def set_frame(self, frame: Frame | None, tail_text: str = "") -> None:
        self.frame = frame
        self.tail_text = tail_text
        self.update()

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        p.fillRect(self.rect(), palette.SM_BACKGROUND)
        f = self.frame
        if f is None:
            return
        big = QFont(self.font())
        big.setPixelSize(24)
        big.setBold(True)
        small = QFont(self.font())
        small.setPixelSize(15)
        w = self.width()
        # wave k of n
        p.setFont(big)
        p.setPen(palette.TEXT)
        left_w = min(300, int(w * 0.36))
        p.drawText(
            QRectF(8, 2, left_w, 34), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, f.label
        )
        p.setFont(small)
        p.setPen(palette.MUTED_TEXT if not self.tail_text else palette.IDLE_LANE.darker(130))
        p.drawText(
            QRectF(8, 36, w - 16, 24),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            self.tail_text or f.phase_words,
        )
        # queue: squares then the count
        x = left_w + 16
        p.setFont(small)
        p.setPen(palette.TEXT)
        queue_text = f"queue: {f.queued:,} block{'s' if f.queued != 1 else ''}"
        p.drawText(
            QRectF(x, 0, 240, 22), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, queue_text
        )
        sq = 14
        room = int((w - 200 - x - 70) // (sq + 3))
        shown = max(0, min(f.queued, MAX_QUEUE_SQUARES, room))
        p.setPen(QPen(palette.QUEUED.darker(140), 1))
        p.setBrush(palette.QUEUED)
        for i in range(shown):
            p.drawRect(QRectF(x + i * (sq + 3), 24, sq, sq))
        if f.queued > shown:
            p.setPen(palette.TEXT)
            p.drawText(
                QRectF(x + shown * (sq + 3) + 4, 20, 120, 22),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                f"+ {f.queued - shown:,} more",
            )
        # done
        p.setPen(palette.TEXT)
        p.setFont(small)
        done_rect = QRectF(w - 190, 0, 182, 22)
        p.drawText(
            done_rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"done: {f.done:,} blocks"
        )
        p.setPen(QPen(palette.DONE.darker(130), 1))
        p.setBrush(palette.DONE)
        for i in range(min(f.done, 8)):
            p.drawRect(QRectF(w - 8 - (i + 1) * (sq + 3), 24, sq, sq))
        p.end()


class Legend(QWidget):
    """Colour key, large enough to read from the back of a classroom; wraps onto a second row."""

    ROW_H = 26

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedHeight(2 * self.ROW_H)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(800, 2 * self.ROW_H)

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        font = QFont(self.font())
        font.setPixelSize(15)
        p.setFont(font)
        fm = p.fontMetrics()
        x, y = 6, 0
        for _name, colour, words in palette.LEGEND:
            item_w = 22 + fm.horizontalAdvance(words) + 18
            if x + item_w > self.width() and x > 6:
                x, y = 6, y + self.ROW_H
            p.setPen(QPen(palette.SM_BORDER, 1))
            p.setBrush(colour)
            p.drawRect(QRectF(x, y + 5, 16, 16))
            p.setPen(self.palette().color(QPalette.ColorRole.WindowText))  # on the window: the theme's text
            p.drawText(
                QRectF(x + 22, y, 400, self.ROW_H),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                words,
            )
            x += item_w
        p.end()
