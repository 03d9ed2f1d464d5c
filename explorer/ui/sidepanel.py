"""Side columns that fold away so the main view (the SM picture, the benchmark plot) gets the room
on a projector at 1024x768 or with large text.

Each column has a narrow handle along its inner edge, with its name written up the side and an
arrow: a click folds the column to that handle, another click opens it again. The columns also
fold by themselves when the window cannot give the SM picture its minimum width beside them (the
one the user did not just open goes first), so the window never grows past the screen because
the columns' minimum widths add up.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QAbstractButton, QHBoxLayout, QSizePolicy, QWidget

from explorer.ui.guard import qt_guard


class SideHandle(QAbstractButton):
    """The fold/unfold handle: an arrow and the column's name, painted up the side.

    It has no ``text()`` of its own (the name is painted turned on its side, so a text-width
    check would not apply); the name is its accessible name and tooltip.
    """

    def __init__(self, title: str, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.side = side  # "left" or "right": which edge of the window its column is on
        self.open = True
        self.setAccessibleName(title)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Expanding)
        self._tip()

    def _tip(self) -> None:
        self.setToolTip(f"{'Hide' if self.open else 'Show'} {self.title.lower()}")

    def set_open(self, open_: bool) -> None:
        self.open = open_
        self._tip()
        self.update()

    @qt_guard
    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        return QSize(fm.height() + 8, fm.horizontalAdvance(self.title) + 3 * fm.height())

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        return QSize(self.sizeHint().width(), self.fontMetrics().height() * 2)

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        pal = self.palette()
        hover = self.underMouse()
        p.fillRect(
            self.rect(), pal.color(QPalette.ColorRole.Highlight if hover else QPalette.ColorRole.Button)
        )
        p.setPen(QPen(pal.color(QPalette.ColorRole.Mid), 1))
        p.drawRect(self.rect().adjusted(0, 0, -1, -1))
        text = pal.color(QPalette.ColorRole.HighlightedText if hover else QPalette.ColorRole.ButtonText)
        p.setPen(text)
        fm = self.fontMetrics()
        w = self.width()
        # the arrow points where the column goes: away when open, back in when folded
        points_left = (self.side == "left") == self.open
        arrow = "◀" if points_left else "▶"
        p.drawText(QRectF(0, 4, w, fm.height() + 4), Qt.AlignmentFlag.AlignCenter, arrow)
        p.save()
        top = fm.height() * 2 + 8
        p.translate(w / 2 - (fm.ascent() - fm.descent()) / 2, top)  # glyphs face right
        p.rotate(90)
        # a handle shorter than its name shows what fits, ending in "…" (the name is on hover)
        room = max(0, self.height() - top - 4)
        p.drawText(0, 0, fm.elidedText(self.title, Qt.TextElideMode.ElideRight, room))
        p.restore()
        p.end()


class SidePanel(QWidget):
    """A column (``body``) beside its fold handle. Its minimum width is the handle's alone, so the
    window's minimum never includes an open column: ``fit_side_panels`` folds what does not fit."""

    #: the user clicked the handle (``True``: now open)
    toggled_by_user = Signal(bool)

    def __init__(self, title: str, body: QWidget, side: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.body = body
        self.handle = SideHandle(title, side)
        self.body_width = 300
        #: the user's last choice (open or folded); ``None`` while the window decides
        self.choice: bool | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        widgets = (body, self.handle) if side == "left" else (self.handle, body)
        for w in widgets:
            lay.addWidget(w)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        self.handle.clicked.connect(self._clicked)

    def _clicked(self) -> None:
        self.choice = not self.is_open()
        self.set_open(self.choice)
        self.toggled_by_user.emit(self.choice)

    def is_open(self) -> bool:
        return self.handle.open

    def set_open(self, open_: bool) -> None:
        if open_ == self.is_open() and self.body.isHidden() != open_:
            return
        self.handle.set_open(open_)
        self.body.setVisible(open_)
        self.updateGeometry()

    def set_body_width(self, width: int) -> None:
        """The column's width when the window has the room; where it has less (a column the
        teacher opened on a small screen) the body gets what is left, and scrolls."""
        self.body_width = width
        self.body.setMaximumWidth(width)
        self.body.setMinimumWidth(0)
        self.updateGeometry()

    def width_when(self, open_: bool) -> int:
        """The width this column takes open or folded."""
        handle = self.handle.sizeHint().width()
        layout = self.layout()
        spacing = layout.spacing() if layout is not None else 0
        return handle + (self.body_width + spacing if open_ else 0)

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(self.width_when(self.is_open()), super().sizeHint().height())

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        return QSize(self.handle.sizeHint().width(), self.handle.minimumSizeHint().height())


def fit_side_panels(
    sides: tuple[SidePanel, ...], room: int, centre_min: int, last_opened: SidePanel | None
) -> None:
    """Open each column the user has not folded, then fold until the main view gets at least
    ``centre_min`` of ``room`` pixels: first a column nobody chose (in ``sides``' order), then one
    the user opened earlier. The column the user opened last stays open: the main view then gets
    less than ``centre_min`` (never less than its own minimum) until the window grows."""
    wanted = {s: s.choice is not False for s in sides}

    def fits() -> bool:
        return sum(s.width_when(wanted[s]) for s in sides) + centre_min <= room

    order = [s for s in sides if s.choice is None]
    order += [s for s in sides if s not in order and s is not last_opened]
    for side in order:
        if fits():
            break
        wanted[side] = False
    for side in sides:
        side.set_open(wanted[side])
