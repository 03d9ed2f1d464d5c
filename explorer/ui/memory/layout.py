"""The Memory page's tab layout, shared by its tabs: the form on the left, the picture on the right.

The form column scrolls up and down at large text sizes and never takes more than ``LEFT_SHARE``
of the tab, so the picture keeps most of a projector's width.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSpinBox, QVBoxLayout, QWidget

from explorer.ui.guard import qt_guard
from explorer.ui.theme import px


def spin(lo: int, hi: int, value: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    box.setToolTip(tip)
    box.setKeyboardTracking(False)
    return box


def legend(items: tuple[tuple[str, str], ...]) -> QLabel:
    label = QLabel("   ".join(f"<span style='color:{c}'>&#9632;</span> {t}" for c, t in items))
    label.setWordWrap(True)
    return label


#: the form column's width at 100% text; it grows with the text but never takes more than
#: LEFT_SHARE of the tab, so the picture keeps most of a projector's width
LEFT_WIDTH = 360
LEFT_SHARE = 0.42


def scrolling(inner: QWidget) -> QScrollArea:
    """``inner`` in a frameless area that scrolls up and down (never sideways): at a large text
    size a column taller than the page scrolls instead of being cut off."""
    area = QScrollArea()
    area.setWidget(inner)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    # the tab's own background shows through, as it did before the column could scroll
    area.viewport().setAutoFillBackground(False)
    inner.setAutoFillBackground(False)
    return area


class Columns(QWidget):
    """A tab of the page: the form on the left, the picture and its words on the right."""

    def _build_columns(self, left: QWidget, right: QVBoxLayout) -> None:
        right_widget = QWidget()
        right_widget.setLayout(right)
        right.setContentsMargins(0, 0, 0, 0)
        self.left_area = scrolling(left)
        row = QHBoxLayout(self)
        row.addWidget(self.left_area)
        row.addWidget(scrolling(right_widget), 1)
        self._fit_left()

    def _fit_left(self) -> None:
        room = int(self.width() * LEFT_SHARE) if self.width() > 0 else px(LEFT_WIDTH)
        self.left_area.setFixedWidth(min(px(LEFT_WIDTH), max(room, px(200))))

    @qt_guard
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_left()
