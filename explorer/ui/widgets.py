"""Small widgets the panels share: a warning banner, a group of "label: value" rows, and number
fields that apply what was typed without waiting for Enter.

A value the core could not read is shown as "n/a" with the core's reason on hover, so one
missing sensor never hides the rest of a device and the student can find out why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPalette, QResizeEvent, QShowEvent, QTextLayout, QTextOption
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QBoxLayout,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.ui.formatting import NA
from explorer.ui.guard import qt_guard

#: tooltip for a missing value whose probe gave no reason
NO_REASON = "No probe reported this value for this device."


def set_role(widget: QWidget, role: str) -> None:
    """Give a widget a stylesheet role (see theme.py) and make Qt re-read the style."""
    widget.setProperty("role", role)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


#: the widget property the layout test reads: this label may show its text cut short (its full
#: text is then on hover)
ELIDE_ALLOWED = "elideAllowed"
#: a scroll area whose content is wider than its view on purpose (a zoomed picture, a wide table):
#: the layout tests do not report it as content cut off sideways
SCROLL_ALLOWED = "scrollAllowed"
#: a scroll area that is a safety net, not a design: where it scrolls at all, the page it holds
#: did not fit (the layout tests report it)
MUST_FIT = "mustFit"


@runtime_checkable
class FitsWidth(Protocol):
    """A widget that arranges itself for a width it is told (its scroll area's, not its own)."""

    def fit_width(self, room: int) -> None: ...


class ElidedLine(QLabel):
    """One line of plain text that ends in "…" where the row is too short for it (Qt's QLabel cuts
    it mid-letter: the lesson bar's title at 200% read "Six blocks fo"). Its layout never grows for
    it: the text takes the room the row gives. The caller's tooltip holds the whole text."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setProperty(ELIDE_ALLOWED, True)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._shorter: tuple[str, ...] = ()

    def set_shorter(self, *texts: str) -> None:
        """Shorter ways to say the text, longest first: where the whole does not fit, the first
        of them that does is drawn whole rather than the whole cut short (a lesson's title
        gives way to its step's)."""
        self._shorter = tuple(t for t in texts if t)
        self.update()

    @qt_guard
    def setText(self, text: str) -> None:
        self._shorter = ()  # they were shorter ways to say the text before
        super().setText(text)

    def shown_text(self) -> str:
        """The text as drawn at the current width: whole, the first shorter way that fits, or
        the shortest cut with "…"."""
        fm, room = self.fontMetrics(), self.contentsRect().width()
        choices = (self.text(), *self._shorter)
        fitting = next((t for t in choices if fm.horizontalAdvance(t) <= room), None)
        return fitting or fm.elidedText(choices[-1], Qt.TextElideMode.ElideRight, room)

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().averageCharWidth() * 4, super().minimumSizeHint().height())

    @qt_guard
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setFont(self.font())
        painter.setPen(self.palette().color(self.foregroundRole()))
        align = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.contentsRect(), int(align), self.shown_text())


class JoiningRows(QWidget):
    """Rows of controls on one line where the width holds them all, else one under another.

    A time view's two rows of settings took two lines of a page at 200% that the chart needed
    (at 1280x800 the page then did not fit under a lesson's narration), while one line of the
    page's width held them both. The least width asked for is the widest row's, so a narrow
    page stacks them again rather than grow."""

    def __init__(self, *rows: QHBoxLayout, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._box = QBoxLayout(QBoxLayout.Direction.TopToBottom, self)
        self._box.setContentsMargins(0, 0, 0, 0)
        self._holders: list[QWidget] = []
        for i, row in enumerate(rows):
            holder = QWidget()
            row.setContentsMargins(0, 0, 0, 0)
            holder.setLayout(row)
            self._box.addWidget(holder, 1 if i == 0 else 0)
            self._holders.append(holder)

    def joined(self) -> bool:
        return self._box.direction() == QBoxLayout.Direction.LeftToRight

    def _joined_width(self) -> int:
        spacing = max(self._box.spacing(), 0) * (len(self._holders) - 1)
        return sum(h.sizeHint().width() for h in self._holders) + spacing

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        least = self._box.minimumSize()
        return QSize(max((h.minimumSizeHint().width() for h in self._holders), default=0), least.height())

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        join = self.width() >= self._joined_width()
        if join != self.joined():
            self._box.setDirection(
                QBoxLayout.Direction.LeftToRight if join else QBoxLayout.Direction.TopToBottom
            )
            self.updateGeometry()


class FoldingCaption(QLabel):
    """A plain-text caption that wraps over as many lines as the layout gives it and no more: the
    last line that fits ends in "…" and the whole text is on hover.

    A wrapped QLabel asks its layout for every line it needs at its width, as a minimum: at 200%
    text the Benchmarks page's three-line "% of peak" caption alone made the window taller than a
    1280x800 projector. This caption asks for one line as its minimum and all its lines as its
    preferred height, so on a short screen it gives way (the table and the plot keep their room)
    and on a tall one it reads in full.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setProperty(ELIDE_ALLOWED, True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._lines_wanted = 0
        self._note = ""  # a tooltip of the caller's own, kept under the whole text when that is cut
        self.setText(text)

    @qt_guard
    def setToolTip(self, text: str) -> None:
        """The caller's tooltip; while the caption is cut short its whole text comes first."""
        self._note = text
        self._show_hover()

    def _show_hover(self) -> None:
        parts = [self.text()] if self.is_cut() else []
        super().setToolTip("\n\n".join([*parts, self._note] if self._note else parts))

    @qt_guard
    def setText(self, text: str) -> None:
        super().setText(text)
        self._lines_wanted = -1  # the hint changes with the text
        self._follow_width()

    def wrapped(self, width: int) -> list[str]:
        """The text broken into the lines it takes at ``width`` pixels (words kept whole)."""
        text = self.text()
        if not text:
            return []
        layout = QTextLayout(text, self.font())
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        layout.setTextOption(option)
        spans = []
        layout.beginLayout()
        while True:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(max(1, width))
            spans.append((line.textStart(), line.textLength()))
        layout.endLayout()
        return [text[start : start + length].rstrip() for start, length in spans]

    def shown_lines(self) -> list[str]:
        """What is drawn at the current size: the lines that fit, the last one elided if the text
        goes on past it."""
        room = self.contentsRect()
        lines = self.wrapped(room.width())
        fit = max(1, room.height() // max(1, self.fontMetrics().lineSpacing()))
        if len(lines) <= fit:
            return lines
        rest = " ".join(lines[fit - 1 :])
        last = self.fontMetrics().elidedText(rest, Qt.TextElideMode.ElideRight, room.width())
        return [*lines[: fit - 1], last]

    def is_cut(self) -> bool:
        """Whether part of the text is left off at the current size (then it is on hover)."""
        return len(self.wrapped(self.contentsRect().width())) > len(self.shown_lines()) or any(
            line.endswith("…") for line in self.shown_lines()
        )

    def _margins(self) -> QSize:
        m = self.contentsMargins()
        return QSize(m.left() + m.right(), m.top() + m.bottom())

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        fm = self.fontMetrics()
        return QSize(fm.averageCharWidth() * 12, fm.lineSpacing()) + self._margins()

    @qt_guard
    def sizeHint(self) -> QSize:
        fm = self.fontMetrics()
        width = min(fm.horizontalAdvance(self.text()), fm.averageCharWidth() * 60)
        lines = len(self.wrapped(self.contentsRect().width() if self.width() > 1 else width))
        return QSize(width, max(1, lines) * fm.lineSpacing()) + self._margins()

    def _follow_width(self) -> None:
        """Ask the layout again when the lines the text takes change with the width, and keep
        the tooltip saying the whole text whenever some is left off."""
        wanted = len(self.wrapped(self.contentsRect().width()))
        if wanted != self._lines_wanted:
            self._lines_wanted = wanted
            self.updateGeometry()
        self._show_hover()

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._follow_width()

    @qt_guard
    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() in (event.Type.FontChange, event.Type.StyleChange):
            self._lines_wanted = -1
            self._follow_width()

    @qt_guard
    def paintEvent(self, event) -> None:
        lines = self.shown_lines()
        if not lines:
            return
        room = self.contentsRect()
        step = self.fontMetrics().lineSpacing()
        top = room.top() + max(0, (room.height() - step * len(lines)) // 2)  # centred in its row
        painter = QPainter(self)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        for i, line in enumerate(lines):
            rect = QRect(room.left(), top + i * step, room.width(), step)
            self.style().drawItemText(
                painter, rect, flags, self.palette(), self.isEnabled(), line, self.foregroundRole()
            )
        painter.end()


#: the folded banner's button, and the same button while the details show
SHOW_DETAILS = "Details ▾"
HIDE_DETAILS = "Hide details ▴"


class Banner(QFrame):
    """A framed notice in the warm banner colour: a bold title and a paragraph.

    A banner that stays up while the user works (the Devices page's "Why no GPU is listed")
    folds to one line: ``make_foldable`` puts the title, a short summary and a "Details" button
    on one row and hides the paragraph until asked, so at a projector's text size it does not
    take half the page.
    """

    def __init__(self, title: str = "", body: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        layout = self.column = QVBoxLayout(self)  # the title row, then the paragraph
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(4)
        self.title_label = QLabel(title)
        self.title_label.setObjectName("bannerTitle")  # bold, a notch larger: the theme's stylesheet
        self.body_label = QLabel(body)
        self.body_label.setWordWrap(True)
        self.body_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.title_label)
        layout.addWidget(self.body_label)

    def set_text(self, title: str, body: str) -> None:
        self.title_label.setText(title)
        self.body_label.setText(body)

    def make_foldable(self, summary: str = "") -> None:
        """One row: title, ``summary`` (wraps if it must) and a Details button; the paragraph
        shows only while the button is down."""
        column = self.column
        column.removeWidget(self.title_label)
        self.summary_label = QLabel(summary)
        self.summary_label.setWordWrap(True)
        self.details_button = QToolButton()
        self.details_button.setText(SHOW_DETAILS)
        self.details_button.setCheckable(True)
        self.details_button.setToolTip("Show or hide the probes' own explanation")
        self.details_button.toggled.connect(self.show_details)
        row = QHBoxLayout()
        row.setSpacing(12)
        row.addWidget(self.title_label, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.summary_label, 1, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignTop)
        column.insertLayout(0, row)
        self.body_label.hide()

    def show_details(self, shown: bool) -> None:
        """Unfold (``True``) or fold the paragraph of a foldable banner."""
        self.body_label.setVisible(shown)
        if self.details_button.isChecked() != shown:
            self.details_button.setChecked(shown)
        self.details_button.setText(HIDE_DETAILS if shown else SHOW_DETAILS)


class FieldGroup(QGroupBox):
    """A titled group of rows; ``add`` shows "n/a" plus the reason when the value is missing."""

    def __init__(self, title: str, parent: QWidget | None = None, *, plain: bool = False) -> None:
        super().__init__(title, parent)
        if plain:  # rows only, no frame: for a group nested in another
            self.setObjectName("plainGroup")
        self.form = QFormLayout(self)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setHorizontalSpacing(18)
        self.form.setVerticalSpacing(6)
        self.values: dict[str, QLabel] = {}

    # Values go under their names where the two columns do not fit side by side: at 200% text the
    # CPU's "FP32 sgemm (measured)" beside "3.69 GHz, all cores busy" was wider than the details
    # pane beside the device list, which then scrolled sideways with values cut off. (Qt's own
    # WrapLongRows left some rows side by side 2 to 11 px short of their value's width.)
    def _columns(self) -> tuple[int, int]:
        """The widest name and the widest value (each at its minimum), in pixels."""
        names = values = 0
        for row in range(self.form.rowCount()):
            for role in (QFormLayout.ItemRole.LabelRole, QFormLayout.ItemRole.FieldRole):
                item = self.form.itemAt(row, role)
                widget = item.widget() if item is not None else None
                if widget is None or widget.isHidden():
                    continue
                width = widget.minimumSizeHint().width()
                if role == QFormLayout.ItemRole.LabelRole:
                    names = max(names, width)
                else:
                    values = max(values, width)
        return names, values

    def _frame(self) -> int:
        """The group's own margins and the form's, across."""
        m, f = self.contentsMargins(), self.form.contentsMargins()
        return m.left() + m.right() + f.left() + f.right()

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        """As narrow as the values under their names: the group chooses the rows' shape itself."""
        hint = super().minimumSizeHint()
        names, values = self._columns()
        return QSize(max(names, values) + self._frame(), hint.height())

    def side_by_side_width(self) -> int:
        """The width the group needs for every value beside its name."""
        names, values = self._columns()
        return names + self.form.horizontalSpacing() + values + self._frame()

    def _fit_rows(self) -> None:
        side_by_side = self.side_by_side_width() <= self.width()
        policy = (
            QFormLayout.RowWrapPolicy.DontWrapRows if side_by_side else QFormLayout.RowWrapPolicy.WrapAllRows
        )
        if self.form.rowWrapPolicy() != policy:
            self.form.setRowWrapPolicy(policy)

    @qt_guard
    def resizeEvent(self, event) -> None:
        self._fit_rows()
        super().resizeEvent(event)

    def add(
        self, label: str, value: str | None, reason: str | None = None, *, key: str | None = None
    ) -> QLabel:
        """Add one row. ``value`` is already formatted; ``None`` or "n/a" means the core has no value."""
        name = QLabel(label)
        shown = QLabel()
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_value(shown, value, reason)
        self.form.addRow(name, shown)
        self.values[key or label] = shown
        return shown

    def clear(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.values.clear()


#: values longer than this wrap; shorter ones stay on one line so columns stay readable
WRAP_AFTER_CHARS = 24


def set_value(label: QLabel, value: str | None, reason: str | None = None) -> None:
    label.setWordWrap(value is not None and len(value) > WRAP_AFTER_CHARS)
    if value is None or value == NA:
        label.setText(NA)
        label.setToolTip(reason or NO_REASON)
        set_role(label, "na")
    else:
        label.setText(value)
        label.setToolTip(reason or "")
        set_role(label, "")


class ShortScroll(QScrollArea):
    """``content`` at its full height where the layout can give it, else at least ``least()``
    pixels of it, and it scrolls up and down (never sideways): a paragraph or a legend that would
    otherwise make a page taller than a projector's screen, or be cut off, on a short one."""

    def __init__(self, content: QWidget, least: Callable[[], int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._least = least
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(content)
        self.viewport().setAutoFillBackground(False)
        content.setAutoFillBackground(False)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        # new text changes the content's height; a scroll area does not pass that on by itself
        content.installEventFilter(self)

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.widget() and event.type() in (QEvent.Type.LayoutRequest, QEvent.Type.Resize):
            self.updateGeometry()
        return super().eventFilter(obj, event)

    @qt_guard
    def showEvent(self, event: QShowEvent) -> None:
        """Text set while the page was hidden (a tab not shown) asked no one for room: a label
        does not post its layout request to a hidden parent, so the area kept the height of
        the old text (one line of lesson 1's summary, its other two cut off). Ask again."""
        super().showEvent(event)
        self.updateGeometry()

    def content_height(self) -> int:
        """The height the content needs at the width it is shown at."""
        content = self.widget()
        if content is None:  # set in __init__; a scroll area without content needs no height
            return 0
        width = max(self.viewport().width(), 1)
        if content.hasHeightForWidth():
            return content.heightForWidth(width)
        return max(content.minimumHeight(), content.sizeHint().height())

    @qt_guard
    def sizeHint(self) -> QSize:
        content = self.widget()
        return QSize(content.sizeHint().width() if content is not None else 0, self.content_height())

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        bar = self.verticalScrollBar().sizeHint().width()
        return QSize(bar * 3, min(self.content_height(), self._least()))


class NarrowCombo(QComboBox):
    """A menu as narrow as its column, whatever its entries' length (a device's full name, a
    pattern's code): where the chosen entry is wider than the box it ends in "…", and the whole of
    it is on hover (before the caller's own tooltip). Qt's own box cuts it off mid-letter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(8)
        self.view().setTextElideMode(Qt.TextElideMode.ElideNone)  # the open menu shows them whole
        self.setProperty(ELIDE_ALLOWED, True)
        self._note = ""
        self.currentTextChanged.connect(lambda _t: self._show_hover())

    def _field(self) -> QRect:
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        return self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField, self
        )

    def shown_text(self) -> str:
        """The chosen entry as drawn: whole, or cut with "…" to the box's width."""
        return self.fontMetrics().elidedText(
            self.currentText(), Qt.TextElideMode.ElideRight, self._field().width() - 2
        )

    @qt_guard
    def setToolTip(self, text: str) -> None:
        self._note = text
        self._show_hover()

    @qt_guard
    def toolTip(self) -> str:
        """The hover text now: the whole entry while it is cut short, then the caller's tooltip
        (the entry may have been chosen with signals blocked, so it is worked out when asked)."""
        cut = self.shown_text() != self.currentText()
        parts = [self.currentText()] if cut else []
        return "\n\n".join([*parts, self._note] if self._note else parts)

    def _show_hover(self) -> None:
        super().setToolTip(self.toolTip())

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._show_hover()

    @qt_guard
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            self._show_hover()
        return super().event(event)

    @qt_guard
    def paintEvent(self, event) -> None:
        painter = QStylePainter(self)
        painter.setPen(self.palette().color(QPalette.ColorRole.Text))
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        opt.currentText = self.shown_text()
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)


class TabTitle(Protocol):
    """A tab's full title and the short word it gives way to ("" where it has none)."""

    @property
    def title(self) -> str: ...

    @property
    def short(self) -> str: ...


def fitting_titles(specs: Sequence[TabTitle], widths: Callable[[list[str]], int], room: int) -> list[str]:
    """The tab titles to show in ``room`` pixels: the full ones where they fit, else the longest
    full title gives way to its short form, then the next longest, until the row fits (or every
    tab is short). ``widths`` says how many pixels a row of titles needs."""
    titles = [spec.title for spec in specs]
    by_length = sorted((i for i, spec in enumerate(specs) if spec.short), key=lambda i: -len(specs[i].title))
    for i in by_length:
        if widths(titles) <= room:
            break
        titles[i] = specs[i].short
    return titles


class FittingTabs(QTabWidget):
    """Tabs all in view at any text size, never behind scroll arrows: when the full titles are
    wider than the widget, the longest give way to their short words (``fitting_titles``). The
    tabs are added by the owner in ``specs``' order; a tooltip may keep the full title."""

    def __init__(self, specs: Sequence[TabTitle]) -> None:
        super().__init__()
        self.specs = tuple(specs)
        # the selected tab's title is bold, so wider: the row is measured again for each tab
        self.currentChanged.connect(lambda _i: self.fit_titles())

    def fit_titles(self, *, lay_out: bool = True) -> None:
        """Choose full or short titles for the width the tabs have now; where they changed, the
        bar is laid out again at once (``lay_out``): a bar left to a posted request kept the
        scroll offset of the short titles, "Timeline in time" out of view, until the next pass."""
        bar = self.tabBar()
        if bar.count() != len(self.specs):
            return
        before = [bar.tabText(i) for i in range(bar.count())]

        def widths(titles: list[str]) -> int:
            for i, title in enumerate(titles):
                if bar.tabText(i) != title:
                    bar.setTabText(i, title)
            return sum(bar.tabSizeHint(i).width() for i in range(bar.count()))

        titles = fitting_titles(self.specs, widths, self.width())
        widths(titles)
        if lay_out and titles != before:
            QApplication.sendEvent(self, QEvent(QEvent.Type.LayoutRequest))

    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        self.fit_titles(lay_out=False)  # before Qt lays the bar out for the new width
        super().resizeEvent(event)

    @qt_guard
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self.fit_titles()


def size_by_shown_tab(tabs: QTabWidget) -> None:
    """Only the tab shown sizes ``tabs`` from now on: the hidden ones' size policies are
    Ignored (and given back when shown). A tab widget's least size is otherwise the largest of
    all its pages': a hidden page's wrapped text, or the roofline's least height with a lesson
    showing the measurements, made the page taller than a projector's window."""
    own: dict[int, QSizePolicy] = {}

    def follow(index: int) -> None:
        for i in range(tabs.count()):
            page = tabs.widget(i)
            if page is None:
                continue
            own.setdefault(id(page), page.sizePolicy())
            if i == index:
                page.setSizePolicy(own[id(page)])
            else:
                page.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)

    tabs.currentChanged.connect(follow)
    follow(tabs.currentIndex())


# --- number fields --------------------------------------------------------------------------------

Box = TypeVar("Box", bound=QAbstractSpinBox)


class _ClickAway(QObject):
    """While a number field holds typing not yet applied, a mouse press anywhere outside it applies
    it. Qt applies typing on Enter, on focus-out and on the arrow keys, but a click on a drawing (the
    SMs, a plot) takes no focus, so "98" typed into the grid stayed unapplied while the student
    looked at the unchanged picture. The filter sits on the application only while such typing is
    pending, never while the window just runs."""

    def __init__(self) -> None:
        super().__init__()
        self.box: QAbstractSpinBox | None = None

    def watch(self, box: QAbstractSpinBox) -> None:
        app = QApplication.instance()
        if app is None:
            return
        if self.box is None:
            app.installEventFilter(self)
        self.box = box

    def stop(self, box: QAbstractSpinBox | None = None) -> None:
        if self.box is None or (box is not None and box is not self.box):
            return
        self.box = None
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.MouseButtonPress or self.box is None:
            return False
        box = self.box
        try:
            inside = isinstance(obj, QWidget) and (obj is box or box.isAncestorOf(obj))
        except RuntimeError:  # the field's window closed with typing pending
            self.stop()
            return False
        if isinstance(obj, QWidget) and not inside:
            self.stop()
            box.interpretText()  # emits valueChanged when the number changed, as Enter does
        return False


_click_away: _ClickAway | None = None


def number_field(box: Box) -> Box:
    """``box`` applies a typed number when the student is done with it: Enter, leaving the field
    (Tab, a click on another field or on a drawing), the arrow keys, PageUp/PageDown and the wheel.
    Not on each key typed ("1" of "1024" would redraw a one-block grid first). Returns ``box``."""
    global _click_away
    if _click_away is None:
        _click_away = _ClickAway()
    watcher = _click_away
    box.setKeyboardTracking(False)
    box.setProperty("numberField", True)  # tests find any field made without this
    line = box.lineEdit()
    if line is not None:
        line.textEdited.connect(lambda _text: watcher.watch(box))
    box.editingFinished.connect(lambda: watcher.stop(box))
    return box


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
