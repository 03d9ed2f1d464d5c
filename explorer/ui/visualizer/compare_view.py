"""The visualizer's compare mode: launch A beside launch B, and the table that reads them together.

Views only: each side's plan, the table's cells and ratios (``compare_sides``) and the moment shown
(one ``LockStep``) are the ``LaunchSession``'s; the visualizer's SM view hands them to these widgets.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QTextDocumentFragment
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.names import short_device_name
from explorer.launch.animation import Animation
from explorer.launch.compare import Comparison, Side
from explorer.ui.guard import qt_guard
from explorer.ui.theme import current_theme, px
from explorer.ui.visualizer.scene import SmGrid


class SidePane(QFrame):
    """One side: a button that selects it for editing, what it is, the moment shown, and its SMs."""

    chosen = Signal()

    def __init__(self, label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        self.setObjectName("comparePane")
        self.button = QPushButton(label)
        self.button.setCheckable(True)
        self.button.setToolTip(f"Edit launch {label} with the launch controls")
        self.button.clicked.connect(self.chosen.emit)
        self.button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.title = QLabel("")
        self.title.setWordWrap(True)
        # Qt does not pass a wrapped label's height-for-width up through the pane's layouts: at
        # 200% on a 1280x800 screen the title's two lines got 61 of the 68 px they need
        self.title.installEventFilter(self)
        self._device = ""
        self.grid = SmGrid()
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(self.grid)
        self.scroll_area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.installEventFilter(self)
        self._grid_min_height = self.grid.minimumHeight()
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.button, 0, Qt.AlignmentFlag.AlignTop)
        head.addWidget(self.title, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(2)
        lay.addLayout(head)
        lay.addWidget(self.scroll_area, 1)
        self.selected = False
        self.set_selected(False)
        self.apply_text_scale()

    def apply_text_scale(self) -> None:
        """The A/B button as wide as its letter needs, at any text size."""
        self.button.setFixedWidth(self.button.fontMetrics().horizontalAdvance("M") * 2 + px(16))
        self.grid.apply_text_scale()

    def set_selected(self, selected: bool) -> None:
        """The side the launch form edits wears the theme's accent around it."""
        self.selected = selected
        self.button.setChecked(selected)
        colour = current_theme().accent if selected else current_theme().border
        width = 2 if selected else 1
        self.setStyleSheet(f"QFrame#comparePane {{ border: {width}px solid {colour}; border-radius: 6px; }}")

    def show_side(self, side: Side, anim: Animation | None) -> None:
        """Name the side's device; its SMs show ``anim`` (None: it cannot run, and the SMs say why)."""
        self._device = f"<b>{escape(short_device_name(side.device_name))}</b>"
        self.title.setToolTip(side.device_name)
        self.grid.empty_text = f"Launch {self.label} cannot run: {side.problem}" if side.plan is None else ""
        self.grid.selected = None
        self.grid.set_animation(anim)
        self.fit_grid()
        self.show_moment(anim)

    def fit_grid(self) -> None:
        """Give the SMs the height their picture needs at this width: on a small screen at a large
        text size two panes and the table leave an H100's 132 SMs too little, and the pane then
        scrolls rather than draw them as a strip nobody can read."""
        width, height = self.scroll_area.width(), self.scroll_area.height()
        need = self.grid.height_for_width(width)
        if need > height:  # it will scroll: the scroll bar takes its width from the picture
            need = self.grid.height_for_width(width - self.scroll_area.verticalScrollBar().sizeHint().width())
        self.grid.setMinimumHeight(need if need > height else self._grid_min_height)

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.scroll_area and event.type() == QEvent.Type.Resize:
            self.fit_grid()
        elif obj is self.title and event.type() == QEvent.Type.Resize:
            self._fit_title()
        return super().eventFilter(obj, event)

    def show_moment(self, anim: Animation | None) -> None:
        """The device and the wave now shown on this side, in the wave bar's words."""
        if anim is None:
            self.title.setText(f"{self._device}: cannot run")
        else:
            f = anim.frame()
            self.title.setText(f"{self._device}: {escape(f.label)}, {escape(f.phase_words)}")
        self._fit_title()
        self.grid.update()

    def _fit_title(self) -> None:
        """The title as tall as its wrapped lines need at its width. Measured on its words in
        the bold font (the device's name is bold): QLabel's own height-for-width of rich text
        asked for six lines where two were drawn, and under F11 at 1024x768 the H100's SMs were
        left a strip 70 px tall."""
        width = max(self.title.width(), 1)
        font = QFont(self.title.font())
        font.setBold(True)
        words = QTextDocumentFragment.fromHtml(self.title.text()).toPlainText()
        box = QFontMetrics(font).boundingRect(
            QRect(0, 0, width, 100_000), int(Qt.TextFlag.TextWordWrap), words
        )
        need = box.height() + 2 * self.title.margin() + 2
        if need != self.title.minimumHeight():
            self.title.setMinimumHeight(need)
            self.title.setMaximumHeight(need)


class CompareTable(QWidget):
    """The comparison's rows as a grid of labels (cells from the core). Standing (a row per
    quantity: name, A, B, B/A) where the view is narrow; lying (a column per quantity, rows A, B
    and B/A) where it is wide enough, which takes a third of the height on a projector."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(12)
        self._grid.setVerticalSpacing(1)
        self.cells: dict[tuple[str, str], QLabel] = {}  # (row key, column) -> label, for tests
        self.heads = {col: self._label(f"<b>{col}</b>", bold=False) for col in ("A", "B", "B/A")}
        self._keys: list[str] = []
        self.horizontal = False
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def _label(self, text: str, bold: bool = False) -> QLabel:
        label = QLabel(text, self)  # the table's from the start: freed with it even if never placed
        label.hide()  # shown once _place puts it in the grid, never loose at the corner
        if bold:
            label.setText(f"<b>{text}</b>")
        return label

    def set_comparison(self, comparison: Comparison) -> None:
        for row in comparison.rows:
            texts = {"label": row.label, "a": row.a_text, "b": row.b_text, "ratio": row.ratio.text}
            for col, text in texts.items():
                cell = self.cells.get((row.key, col))
                if cell is None:
                    cell = QLabel(self)
                    cell.hide()  # shown once placed
                    if col == "ratio":
                        cell.setProperty("role", "caption")
                    self.cells[row.key, col] = cell
                cell.setText(text)
        keys = [r.key for r in comparison.rows]
        if keys != self._keys:
            self._keys = keys
            self._place()

    def needed_width(self, horizontal: bool) -> int:
        """Pixels the table needs lying (``horizontal``) or standing, from its texts' widths."""
        gap = self._grid.horizontalSpacing()

        def w(label: QLabel, longest_word: bool = False) -> int:
            fm = label.fontMetrics()
            words = label.text().split() if longest_word else [label.text()]
            return max((fm.horizontalAdvance(word) for word in words), default=0) + 2

        if horizontal:  # a quantity's name wraps over its column: its longest word sets the width
            first = max(w(h) for h in self.heads.values())
            cols = [
                max(w(self.cells[k, "label"], True), *(w(self.cells[k, c]) for c in ("a", "b", "ratio")))
                for k in self._keys
            ]
            return first + sum(cols) + gap * len(cols)
        cols = [
            max((w(self.cells[k, c]) for k in self._keys), default=0) for c in ("label", "a", "b", "ratio")
        ]
        return sum(cols) + gap * 3

    def set_horizontal(self, horizontal: bool) -> None:
        if horizontal != self.horizontal:
            self.horizontal = horizontal
            self._place()

    def _place(self) -> None:
        """Put every label in its row and column for the orientation (a label moves, never doubles)."""
        for i in reversed(range(self._grid.count())):
            self._grid.takeAt(i)
        for c in range(self._grid.columnCount()):
            self._grid.setColumnStretch(c, 0)
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        columns = ("a", "b", "ratio")
        if self.horizontal:
            for j, head in enumerate(("A", "B", "B/A"), start=1):
                self._grid.addWidget(self.heads[head], j, 0, left)
            for i, key in enumerate(self._keys, start=1):
                name = self.cells[key, "label"]
                name.setWordWrap(True)
                name.setAlignment(right | Qt.AlignmentFlag.AlignBottom)
                self._grid.addWidget(name, 0, i)
                for j, col in enumerate(columns, start=1):
                    self._grid.addWidget(self.cells[key, col], j, i, right)
            self._grid.setColumnStretch(len(self._keys) + 1, 1)
        else:
            for j, head in enumerate(("A", "B", "B/A"), start=1):
                self._grid.addWidget(self.heads[head], 0, j, right)
            for i, key in enumerate(self._keys, start=1):
                name = self.cells[key, "label"]
                name.setWordWrap(False)
                name.setAlignment(left)
                self._grid.addWidget(name, i, 0, left)
                for j, col in enumerate(columns, start=1):
                    self._grid.addWidget(self.cells[key, col], i, j, right)
            self._grid.setColumnStretch(4, 1)  # the numbers stay beside their names, not at the far edge
        for i in range(self._grid.count()):
            item = self._grid.itemAt(i)
            placed = item.widget() if item is not None else None
            if placed is not None:
                placed.show()
        self.updateGeometry()


class _TableScroll(QScrollArea):
    """The comparison table, scrolling up and down where the page is short: at 200% text its
    eleven standing rows need about 390 px, and with the two panes above them the visualizer
    asked for more height than a 1280x800 projector has (its rows were squeezed to 23 px of the
    34 their text needs). It asks for the whole table, and at least its heads and
    ``LEAST_ROWS`` rows."""

    LEAST_ROWS = 3

    def __init__(self, table: CompareTable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(table)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        # a new comparison or orientation changes the table's size; a scroll area does not pass
        # that on to the layout it sits in, so the panes kept the room and the table got none
        self.viewport().installEventFilter(self)
        table.installEventFilter(self)

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(obj, event)

    def _bar(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    @qt_guard
    def sizeHint(self) -> QSize:
        table = self.widget()
        if table is None:  # before the table is set: Qt's own hint
            return super().sizeHint()
        hint = table.sizeHint()
        return QSize(hint.width() + self._bar(), hint.height())

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        table = self.widget()
        if table is None:
            return super().minimumSizeHint()
        rows = 1 + self.LEAST_ROWS  # the heads' row, then the quantities
        row = table.fontMetrics().lineSpacing() + 2
        least = min(table.sizeHint().height(), rows * row)
        return QSize(table.minimumSizeHint().width() + self._bar(), least)


class CompareView(QWidget):
    """Both sides' panes, and the table under them, lying down wherever the width allows."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pane_a, self.pane_b = SidePane("A"), SidePane("B")
        self.table = CompareTable()
        self._layout = lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        panes = QHBoxLayout()
        panes.addWidget(self.pane_a, 1)
        panes.addWidget(self.pane_b, 1)
        lay.addLayout(panes, 1)
        self.table_scroll = _TableScroll(self.table)
        lay.addWidget(self.table_scroll)

    def set_comparison(self, comparison: Comparison) -> None:
        self.table.set_comparison(comparison)
        self.fit_table()

    def wants(self) -> int:
        """Height beyond its least that shows both sides' SMs whole and every row of the table
        (the waves row a lesson points at was below the fold under F11 at 1024x768): the lesson
        pane leaves the page this much before its words take more than their least lines."""
        panes = []
        for pane in (self.pane_a, self.pane_b):
            width = max(pane.scroll_area.width(), 1)
            grid = max(pane.grid.height_for_width(width), pane._grid_min_height)
            margins = pane.contentsMargins()  # (the frame's; its layout's 4 px and spacing below)
            panes.append(pane.title.minimumHeight() + grid + margins.top() + margins.bottom() + 4 + 4 + 2)
        whole = max(panes) + self._layout.spacing() + self.table_scroll.sizeHint().height()
        return max(0, whole - self.minimumSizeHint().height())

    def fit_table(self) -> None:
        self.table.set_horizontal(self.table.needed_width(True) <= self.width())
        self.show_waves_row()

    def show_waves_row(self) -> None:
        """Where the table scrolls, the waves row shows: what the comparison is about (the line
        over the panes says it in words, and a lesson points at it; under F11 at 1024x768 it was
        below the fold)."""
        cell = self.table.cells.get(("waves", "label"))
        if cell is not None and not self.table.horizontal:
            self.table_scroll.ensureWidgetVisible(cell, 0, 0)

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_table()
