"""The visualizer's centre: the launch summary, the wave bar, the SMs (or A and B side by side in
compare mode, with their table), the legend, and the zoom of the SM picture.

A view of the ``LaunchSession``: it draws the sides' animations at the session's moment and marks
the session's pinned thread; the pointer's moves and clicks over the SMs go back to the session
(``hover``, ``click``), which the inspector reads. The zoom is this view's own state.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QLabel, QScrollArea, QStyle, QVBoxLayout, QWidget

from explorer.launch.dispatch import sm_view_placement
from explorer.launch.schedule import SCHEDULER_NOTE
from explorer.launch.session import LaunchSession
from explorer.launch.texts import html
from explorer.lessons.files import ZOOMS
from explorer.ui.guard import qt_guard
from explorer.ui.theme import current_theme, px
from explorer.ui.visualizer.compare_view import CompareView
from explorer.ui.visualizer.scene import SmGrid
from explorer.ui.visualizer.wavebar import Legend, WaveBar
from explorer.ui.widgets import SCROLL_ALLOWED, FoldingCaption, ShortScroll

#: the least height of the SM picture at 100% text (it grows with the text): the words around it
#: give way first. 74 keeps two rows of SM tiles whole at 200% and lets the page fit a 1280x800
#: screen with a side column open
SM_LEAST_HEIGHT = 74
#: what the SMs say when the launch cannot run (the form's message says why)
CANNOT_RUN = "This launch cannot run: the message beside the launch fields says why."


class SmView(QWidget):
    """Summary, wave bar, SMs (one launch, or A and B), legend; zoomed with Ctrl+wheel or Ctrl+Up/Down."""

    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.zoom_index = 0  # into ZOOMS
        self._zoom_pending = False  # a zoom to apply once the view has its size
        self.summary_label = QLabel("")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.wave_bar = WaveBar()
        self.grid = SmGrid()
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(self.grid)
        self.scroll_area.setFrameShape(QScrollArea.Shape.NoFrame)
        # zoomed in, the picture is larger than the view both ways, by design: it scrolls
        self.scroll_area.setProperty(SCROLL_ALLOWED, True)
        self.grid.installEventFilter(self)
        self.legend = Legend()
        # one line where the page is short (its whole text and the model's reasons on hover)
        note = FoldingCaption(sm_view_placement())  # the Timeline's name for the same placement
        note.setToolTip(SCHEDULER_NOTE)
        note.setProperty("role", "caption")
        note.setProperty("textSize", "tiny")
        self.scheduler_note = note
        self.wave_bar.setToolTip(SCHEDULER_NOTE)
        # on a short screen at a large text size the words above and below the SMs give way (two
        # lines of the summary, a row of the legend, and they scroll) before the SMs become a strip
        self.summary_box = ShortScroll(
            self.summary_label, lambda: 2 * self.summary_label.fontMetrics().lineSpacing()
        )
        below = QWidget()  # the legend and the note under it, giving way together
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.setSpacing(2)
        below_layout.addWidget(self.legend)
        below_layout.addWidget(note)
        self.legend_box = ShortScroll(below, self.legend.row_h)
        # compare mode: A and B side by side, the table under them (hidden until Compare)
        self.compare_box = CompareView()
        self.pane_a, self.pane_b = self.compare_box.pane_a, self.compare_box.pane_b
        self.compare_box.hide()
        cl = QVBoxLayout(self)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.addWidget(self.summary_box)
        cl.addWidget(self.wave_bar)
        cl.addWidget(self.scroll_area, 1)
        cl.addWidget(self.compare_box, 1)
        cl.addWidget(self.legend_box)

        self.grid.hovered.connect(lambda hit: session.hover(0, hit))
        self.grid.clicked.connect(lambda hit: session.click(0, hit))
        for i, pane in enumerate((self.pane_a, self.pane_b)):
            pane.chosen.connect(lambda i=i: self._choose_side(i))
            pane.grid.hovered.connect(lambda hit, i=i: session.hover(i, hit))
            pane.grid.clicked.connect(lambda hit, i=i: session.click(i, hit))
        session.events.launch.connect(self._show_launch)
        session.events.moment.connect(self._show_moment)
        session.events.selection.connect(self._show_selection)
        self._show_launch()

    def _choose_side(self, index: int) -> None:
        self.session.select_side(index)
        self._show_selected()  # the button pressed again on the side already edited stays down

    # --- the session, drawn ---------------------------------------------------------------------
    def _show_launch(self) -> None:
        """New plans (or compare mode turned on or off): hand each picture its side's animation."""
        s = self.session
        self.scroll_area.setVisible(not s.compare)
        # a launch that cannot run has no waves: the bar would be an empty band over the message
        self.wave_bar.setVisible(not s.compare and s.sides[0].animation is not None)
        self.compare_box.setVisible(s.compare)
        if s.compare:
            self.grid.set_animation(None)
            for pane, side in zip((self.pane_a, self.pane_b), s.sides, strict=True):
                pane.show_side(side.compared, side.animation)
            if s.comparison is not None:
                self.compare_box.set_comparison(s.comparison)
        else:
            for pane in (self.pane_a, self.pane_b):
                pane.grid.set_animation(None)
            a = s.sides[0].animation
            if a is None:
                self.grid.empty_text = CANNOT_RUN
                self.wave_bar.set_frame(None)
            plan = s.sides[0].plan
            self.wave_bar.reserve(
                s.phase_texts(),
                blocks=plan.total_blocks if plan is not None else None,
                waves=plan.waves if plan is not None else None,
            )
            self.grid.set_animation(a)
        self._show_selected()
        self._show_selection()  # the pinned thread stays marked when only the edited side changed
        self.write_summary()

    def _show_moment(self) -> None:
        s = self.session
        if s.compare:
            self.pane_a.show_moment(s.animation(0))
            self.pane_b.show_moment(s.animation(1))
            return
        a = s.animation(0)
        if a is not None:
            self.wave_bar.set_frame(a.frame(), s.tail_words())
            self.grid.update()

    def _show_selection(self) -> None:
        """The pinned thread marked on its side's SMs, and on no other."""
        selection = self.session.selection
        for grid in (self.grid, self.pane_a.grid, self.pane_b.grid):
            grid.selected = (
                selection.thread if selection is not None and grid is self.grid_for(selection.side) else None
            )
            grid.update()

    def _show_selected(self) -> None:
        """The edited side's pane framed in the theme's accent."""
        s = self.session
        self.pane_a.set_selected(s.compare and s.edited == 0)
        self.pane_b.set_selected(s.compare and s.edited == 1)

    def grid_for(self, side: int) -> SmGrid:
        """The picture of side ``side``'s SMs (0: A, the only one outside compare mode; 1: B)."""
        if not self.session.compare:
            return self.grid
        return self.pane_b.grid if side == 1 else self.pane_a.grid

    def write_summary(self) -> None:
        """The core's words (the CLI prints the same) with the theme's warning colour; every
        side's readings on hover."""
        self.summary_label.setText(html(self.session.summary(), current_theme().error))
        self.summary_label.setToolTip(self.session.readings_text())

    # --- zoom -----------------------------------------------------------------------------------
    def zoom(self, direction: int) -> None:
        """Zoom the SM picture (Ctrl+wheel, Ctrl+Up/Down): bigger tiles show warps, then lanes."""
        self.zoom_index = max(0, min(len(ZOOMS) - 1, self.zoom_index + direction))
        z = ZOOMS[self.zoom_index]
        vp = self.scroll_area.viewport().size()
        if z == 1.0:
            self.grid.setMinimumSize(160, 120)
        else:
            self.grid.setMinimumSize(int(vp.width() * z), int(vp.height() * z))

    def set_zoom_index(self, index: object) -> None:
        """A remembered or a lesson's zoom (an index into ZOOMS; anything else is ignored),
        applied once the view has its size."""
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(ZOOMS):
            return
        self.zoom_index = index
        self._zoom_pending = True
        if self.isVisible():
            QTimer.singleShot(0, self._apply_pending_zoom)

    def _apply_pending_zoom(self) -> None:
        if self._zoom_pending:
            self._zoom_pending = False
            self.zoom(0)

    def reveal_selected(self) -> None:
        """Zoomed in, the pinned thread's block may be off screen: centre the view on it, the
        whole block where it fits (a lesson points at its idle lanes, which may lie some warps
        from the selected thread), else on the selected lane (after the zoom has resized the
        picture)."""
        s, anim = self.session.selection, self.session.animation(0)
        if anim is None or s is None or self.session.compare:
            return
        self._apply_pending_zoom()
        # the scroll area resizes the picture to its new minimum on a later layout pass: now
        self.grid.resize(self.grid.minimumSize().expandedTo(self.scroll_area.viewport().size()))
        place = anim.plan.placement(s.block)
        if anim.block_at(place.sm, place.slot) != s.block:
            return  # its block is not on an SM at the moment shown
        lay = self.grid.layout_now()
        if lay is None:
            return
        view = self._view_size()
        x, y = lay.slot_origin(place.sm, place.slot)
        if lay.tile_w <= view.width() and lay.tile_h <= view.height():
            cx, cy = x + lay.tile_w / 2, y + lay.tile_h / 2
        else:
            lane = self.grid.slot_center(place.sm, place.slot, s.warp, s.lane)
            cx, cy = lane.x(), lane.y()
        # the bars' ranges as they will be once the bars are in (the area sets them on a later
        # pass, and would clamp a value set now to the ranges it has without them)
        for bar, size, shown, centre in (
            (self.scroll_area.horizontalScrollBar(), self.grid.width(), view.width(), cx),
            (self.scroll_area.verticalScrollBar(), self.grid.height(), view.height(), cy),
        ):
            bar.setRange(0, max(0, size - shown))
            bar.setValue(int(centre - shown / 2))

    def _view_size(self) -> QSize:
        """The part of the picture the scroll area shows once its scroll bars are in (they come
        in on a later layout pass when the zoom makes the picture larger than the view)."""
        area = self.scroll_area
        view = area.maximumViewportSize()
        extent = area.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, area)
        wide, tall = self.grid.width() > view.width(), self.grid.height() > view.height()
        return QSize(view.width() - (extent if tall else 0), view.height() - (extent if wide else 0))

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.grid and event.type() == QEvent.Type.Wheel:
            wheel: QWheelEvent = event  # type: ignore[assignment]
            if wheel.modifiers() & Qt.KeyboardModifier.ControlModifier:
                self.zoom(1 if wheel.angleDelta().y() > 0 else -1)
                return True
        return super().eventFilter(obj, event)

    @qt_guard
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._zoom_pending:
            QTimer.singleShot(0, self._apply_pending_zoom)

    # --- text size and theme ------------------------------------------------------------------
    def apply_text_scale(self) -> None:
        for painted in (self.wave_bar, self.legend, self.grid, self.pane_a, self.pane_b):
            painted.apply_text_scale()
        self.scroll_area.setMinimumHeight(px(SM_LEAST_HEIGHT))  # the SMs are never a strip
        for box in (self.summary_box, self.legend_box):
            box.updateGeometry()

    def apply_theme(self) -> None:
        """The summary carries theme colours in its rich text; the painted parts take the theme's
        canvas when they are next drawn."""
        self.write_summary()
        self._show_selected()
        for grid in (self.grid, self.pane_a.grid, self.pane_b.grid):
            grid.invalidate()
        self.wave_bar.update()
        self.legend.update()
