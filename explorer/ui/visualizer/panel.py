"""The Launch visualizer page: thin views over one ``LaunchSession`` (``explorer.launch.session``).

The session owns what the page shows (devices, the launch or A and B, the clock, the pinned
thread) and emits events; each part of the page is a view that reads it and calls its methods:

    left    PlaybackBox (buttons), EditingNote, LaunchControls (the form), Inspector
    centre  tabs: SmView (summary, wave bar, the SMs or A and B with their table, legend),
            TimelinePage (the launch in time) and LatencyPage (latency hiding), views of the
            ``TimeViews`` model beside the session (``explorer.launch.time_views``)
    right   tabs: OccupancyView, RealRunView

This module lays them out, gives the session its devices, binds the keys, and answers the main
window (``Panel``): settings and lesson steps go through ``explorer.lessons.visualizer``. A new
view of the same launch (a timeline of blocks per SM, say) is one more widget built with the
session and added to the right-hand tabs; it needs nothing from the other views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from explorer.devices.model import CudaGpu
from explorer.errors import UserError
from explorer.launch.animation import DISPATCH, RUN
from explorer.launch.presets import PRESETS
from explorer.launch.session import DeviceChoice, LaunchSession
from explorer.launch.time_views import VIEW_SHORT_TITLES, VIEW_TITLES, VIEWS, TimeViews
from explorer.lessons.files import ZOOMS
from explorer.lessons.model import SIDE_TABS, PanelState, VisualizerState
from explorer.lessons.time_steps import (
    apply_time_views,
    record_time_views,
    restore_time_views,
    saved_time_views,
)
from explorer.lessons.visualizer import apply_step, restore_state, saved_state, step_state
from explorer.ui.context import AppContext
from explorer.ui.guard import qt_guard
from explorer.ui.panel import Panel
from explorer.ui.sidepanel import SidePanel, fit_side_panels
from explorer.ui.theme import Theme, px, text_scale_pct
from explorer.ui.visualizer.controls import LaunchControls
from explorer.ui.visualizer.inspector import Inspector
from explorer.ui.visualizer.latency_page import LatencyPage
from explorer.ui.visualizer.occupancy_view import OccupancyView
from explorer.ui.visualizer.playback import EditingNote, FrameClock, PlaybackBox
from explorer.ui.visualizer.realrun_view import RealRunView
from explorer.ui.visualizer.sm_view import SmView
from explorer.ui.visualizer.timeline_page import TimelinePage
from explorer.ui.widgets import SCROLL_ALLOWED, FittingTabs, size_by_shown_tab
from explorer.words import on_host

# widths at 100% text (they grow with it): controls need the room for digits, the graphs do not;
# the SM picture keeps at least CENTRE_MIN, and a side column folds away when it cannot
LEFT_WIDTH = 350
RIGHT_WIDTH = 290
CENTRE_MIN = 360
CENTRE_MIN_COMPARE = 560  # two SM pictures side by side, and the table under them
#: the most of the page's width a side column takes (at 200% text on a 1280-px screen the launch
#: controls took 700 px, and the SMs, the summary and the wave bar were squeezed under them)
COLUMN_SHARE = 0.4
#: on a projector the picture is what the class reads: a column folds before the SMs get less
#: than this share of the page's width
PRESENTING_CENTRE_SHARE = 0.5


@dataclass(frozen=True)
class ViewTab:
    """A view's tab title in the middle, and its word where the titles do not fit."""

    title: str
    short: str


def device_choices(context: AppContext) -> list[DeviceChoice]:
    """The GPUs a launch may use: this machine's, then each reachable remote's (keyed
    ``HOST-ID/cuda:N`` and named "... ON host": its key there may equal one here, and a real run
    with it goes to that machine), then the catalog's."""
    gpus = context.gpus
    remote = []
    for found in context.remotes.devices():
        gpu = found.device
        if not isinstance(gpu, CudaGpu) or gpu.index is None:
            continue
        record = dataclasses.replace(
            gpu, key=f"{found.host.ident}/{gpu.key}", name=on_host(gpu.name, found.host.remote.host)
        )
        remote.append(DeviceChoice(record, found.host.remote, gpu.index))
    return [
        *(DeviceChoice(d) for d in gpus if d.kind == "cuda"),
        *remote,
        *(DeviceChoice(d) for d in gpus if d.kind != "cuda"),
    ]


class VisualizerPanel(Panel):
    """``VisualizerPanel(context, parent)``: the main window's "Launch visualizer" tab."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.session = LaunchSession()
        self.time_views = TimeViews(self.session)

        # left: playback, which side the form edits, the form, the inspector
        self.playback = PlaybackBox(self.session)
        self.editing_note = EditingNote(self.session)
        self.controls = LaunchControls(self.session)
        self.inspector = Inspector(self.session)
        column = QWidget()
        ll = QVBoxLayout(column)
        ll.setContentsMargins(0, 0, 0, 0)
        # playback first: the Play button stays put whatever the lesson caption below it wraps to
        ll.addWidget(self.playback)
        ll.addWidget(self.editing_note)
        ll.addWidget(self.controls)
        ll.addWidget(self.inspector, 1)
        # the column scrolls (a 3D thread's formulas run long; at 200% on a 1280x800 projector the
        # fields and the inspector are taller than the page) rather than squeeze its fields into
        # each other, and sideways where the window gives it less than its width
        left = QScrollArea()
        left.setWidgetResizable(True)
        left.setFrameShape(QScrollArea.Shape.NoFrame)
        left.setWidget(column)
        left.setProperty(SCROLL_ALLOWED, True)
        self.left_scroll = left
        self.left_side = SidePanel("Launch controls", left, "left")

        # centre: the SMs; right: occupancy and the real run
        self.sm_view = SmView(self.session)
        self.occupancy_view = OccupancyView(self.session)
        self.realrun_view = RealRunView(self.session)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.occupancy_view, "Occupancy")
        # short titles: both tabs stay in view in a narrow column at a large text size
        self.tabs.addTab(self.realrun_view, "Real run")
        self.tabs.setTabToolTip(0, "Occupancy of the block: the numbers, the limiter, the three graphs")
        self.tabs.setTabToolTip(
            1, "Run it for real: the kernel with exactly this launch, and who wrote each element"
        )
        self.right_side = SidePanel("Occupancy and real run", self.tabs, "right")
        # the centre: the SMs in waves, the launch in time, latency hiding (one model: TimeViews)
        self.timeline_page = TimelinePage(self.time_views, self._why_no_gpu)
        self.latency_page = LatencyPage(self.time_views, self._why_no_gpu)
        # its titles give way to one word where the centre is narrow (a column opened by hand at
        # 150% on 1024x768 scrolled "Latency hiding" out of the bar)
        self.centre = FittingTabs([ViewTab(VIEW_TITLES[v], VIEW_SHORT_TITLES[v]) for v in VIEWS])
        for i, (view, page) in enumerate(
            zip(VIEWS, (self.sm_view, self.timeline_page, self.latency_page), strict=True)
        ):
            self.centre.addTab(page, VIEW_TITLES[view])
            self.centre.setTabToolTip(i, VIEW_TITLES[view])
        self.centre.currentChanged.connect(self._centre_changed)
        size_by_shown_tab(self.centre)  # a hidden page's text, at a stale width, sizes nothing
        self.time_views.events.view.connect(
            lambda: self.centre.setCurrentIndex(VIEWS.index(self.time_views.view))
        )
        self._centre_changed(0)

        self._columns = QHBoxLayout(self)
        self._columns.setContentsMargins(6, 6, 6, 6)
        self._columns.addWidget(self.left_side)
        self._columns.addWidget(self.centre, 1)
        self._columns.addWidget(self.right_side)
        self._last_opened: SidePanel | None = None
        for side in (self.left_side, self.right_side):
            side.toggled_by_user.connect(lambda opened, s=side: self._side_toggled(s, opened))

        self.frame_clock = FrameClock(self.session, self)
        self._compare_shown = False
        self.session.events.launch.connect(self._follow_compare)
        self.controls.field_left.connect(self.sm_view.grid.setFocus)
        context.discovery_changed.connect(lambda _d: self._load_devices())
        # a GPU's ceilings measured again bring its latency ladder: "L measured on this GPU" reads it
        context.roofs_measured.connect(lambda _r: self.time_views.reload_measured_latency())
        # a launch run for real on this machine's GPU: the Devices page shows GPM beside its prediction
        self.realrun_view.occupancy_run.connect(context.predict_occupancy)
        context.remotes.changed.connect(self._load_devices)
        self._shortcuts = []
        for keys, _words, action in KEYS:
            sc = QShortcut(QKeySequence(keys), self)
            # Space and the arrows answer whenever this tab is shown (a hidden tab's shortcuts are
            # off), wherever the focus is: a text field that is being edited keeps its own keys
            # (Qt lets it override them) and gives them back on Enter or Escape. The Ctrl keys
            # stay with the SM view, so the window may use them elsewhere.
            sc.setContext(
                Qt.ShortcutContext.WidgetWithChildrenShortcut
                if keys.startswith("Ctrl+")
                else Qt.ShortcutContext.WindowShortcut
            )
            sc.activated.connect(lambda act=action: act(self))
            self._shortcuts.append(sc)

        self.apply_text_scale(text_scale_pct())  # the window calls it again on every change
        self._load_devices()

    @property
    def shortcuts(self) -> list[QShortcut]:
        """The page's key bindings, one per entry of ``KEYS``."""
        return list(self._shortcuts)

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(1280, 800)

    def _load_devices(self) -> None:
        self.session.set_devices(device_choices(self.context))

    def _centre_changed(self, index: int) -> None:
        """The view chosen is the model's."""
        self.time_views.set_view(VIEWS[index])

    def _why_no_gpu(self) -> str:
        """Discovery's reason there is no usable GPU here, for the measured parts ("" if there is one)."""
        discovery = self.context.discovery
        return (discovery.why_no_gpu() if discovery is not None else None) or ""

    def toggle_play(self) -> None:
        """Space: play or pause what is shown (the latency chart's cycles, else the launch's clock)."""
        if self.time_views.view == "latency":
            self.time_views.cycles.toggle_play()
        else:
            self.session.toggle_play()

    # --- room: side columns and text size -----------------------------------------------------
    def apply_text_scale(self, percent: int) -> None:
        """Columns, buttons and painted text grow with the text; then fold what no longer fits."""
        self.left_side.set_body_width(px(LEFT_WIDTH))
        self.right_side.set_body_width(px(RIGHT_WIDTH))
        self.playback.apply_text_scale()
        self.sm_view.apply_text_scale()
        self.occupancy_view.apply_text_scale()
        self.realrun_view.apply_text_scale()
        self.timeline_page.apply_text_scale()
        self.latency_page.apply_text_scale()
        self.fit_side_panels()

    def figure_wants(self) -> int:
        """Height the view shown would take beyond the page's least to draw its figures whole
        (the latency chart and graph, which scroll in their own area where the page is short;
        compare mode's SMs and table, which scroll in theirs)."""
        if self.time_views.view == "latency":
            return self.latency_page.figure_wants()
        compare = self.sm_view.compare_box
        return compare.wants() if self.session.compare and compare.isVisibleTo(self) else 0

    def set_presenting(self, on: bool) -> None:
        """A projector is a new screen: the columns opened on the laptop are the page's to fold
        again (F11 at 150% on 1024x768 kept the launch controls open over half the page)."""
        super().set_presenting(on)
        for side in (self.left_side, self.right_side):
            side.choice = None
        self._last_opened = None
        self.fit_side_panels()

    def _side_toggled(self, side: SidePanel, opened: bool) -> None:
        if opened:
            self._last_opened = side
        self.fit_side_panels()

    def _follow_compare(self) -> None:
        """Compare mode needs a wider centre: fold a side column when it is turned on."""
        if self.session.compare != self._compare_shown:
            self._compare_shown = self.session.compare
            self.fit_side_panels()

    def fit_side_panels(self) -> None:
        """Fold a side column when the SM picture would get less than ``CENTRE_MIN``, or in
        presentation mode less than half the page: the right one (occupancy) before the left
        (the launch fields) unless the user chose otherwise."""
        if not self.isVisible():
            return  # a size before the page is shown is no size at all; resizeEvent comes then
        margins = self._columns.contentsMargins()
        room = self.width() - margins.left() - margins.right() - 2 * self._columns.spacing()
        # at a large text size on a small screen a column at its full width would leave the SMs a
        # sliver: it takes at most its share of the page (and scrolls sideways for the rest)
        # (the launch controls' column scrolls up and down: its bar's width comes on top)
        bar = self.left_scroll.verticalScrollBar().sizeHint().width()
        for side, width in ((self.left_side, px(LEFT_WIDTH) + bar), (self.right_side, px(RIGHT_WIDTH))):
            side.set_body_width(min(width, max(int(room * COLUMN_SHARE), width * 4 // 5)))
        centre = px(CENTRE_MIN_COMPARE if self.session.compare else CENTRE_MIN)
        if self.presenting:
            centre = max(centre, int(room * PRESENTING_CENTRE_SHARE))
        fit_side_panels((self.right_side, self.left_side), room, centre, self._last_opened)

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_side_panels()

    @qt_guard
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.fit_side_panels()

    # --- remembered between runs, and lesson steps ----------------------------------------------
    def remembered(self) -> dict[str, str | int]:
        """The device, the launch, the speed and the zoom; in compare mode, whether A and
        B are compared, B's device and launch (``b_*``) and the side being edited."""
        return {
            **saved_state(self.session),
            "zoom": self.sm_view.zoom_index,
            **saved_time_views(self.time_views),
        }

    def restore(self, saved: dict[str, str | int]) -> None:
        """Each part that parses is taken; a launch that does not is skipped whole."""
        restore_state(self.session, saved)
        self.sm_view.set_zoom_index(saved.get("zoom"))
        restore_time_views(self.time_views, saved)

    def lesson_state(self) -> VisualizerState | None:
        """The launch, the moment shown, the speed, zoom, selected thread, the side tab when its
        column is open (a step replays it open), and the view in the middle with its settings."""
        side_tab = SIDE_TABS[max(self.tabs.currentIndex(), 0)] if self.right_side.is_open() else None
        state = step_state(self.session, ZOOMS[self.sm_view.zoom_index], side_tab)
        if state is not None:
            record_time_views(self.time_views, state)
        return state

    def show_lesson_state(self, state: PanelState) -> str:
        """The whole state the step describes, whatever the page showed or the settings held, and
        in view what its words point at: the side tab it names (its column opened), the
        inspector's column for a selected thread or a launch that cannot run (its message is
        there), and a zoom placed on the selected thread's block."""
        if not isinstance(state, VisualizerState):
            return ""
        # the devices discovery has found by now: a step applied before this page heard of them
        # named a device the session did not know yet, and their arrival then reset the clock
        self._load_devices()
        note = apply_step(self.session, state, self.context.gpus)
        apply_time_views(self.time_views, state)
        self.sm_view.set_zoom_index(ZOOMS.index(state.zoom) if state.zoom in ZOOMS else 0)
        wanted: list[SidePanel] = []
        if state.thread or self.session.animation(0) is None:
            wanted.append(self.left_side)
        if state.side_tab is not None:
            self.tabs.setCurrentIndex(SIDE_TABS.index(state.side_tab))
            wanted.append(self.right_side)  # named by the step: kept open before the other
        self.open_columns(wanted)
        if state.thread:  # the column scrolls on a short screen: its inspector is what is meant
            QTimer.singleShot(0, lambda: self.left_scroll.ensureWidgetVisible(self.inspector, 0, 0))
        if self.session.selection is not None:
            # zoomed in, the selected thread's SM may be off screen: bring it into view once the
            # zoom has resized the picture (the zoom is applied on the next turn of the loop)
            QTimer.singleShot(0, self.sm_view.reveal_selected)
        return note

    def open_columns(self, sides: list[SidePanel]) -> None:
        """The columns a step needs open, as if the teacher had clicked their handles (the last
        one wins the room where both do not fit); the others are the page's to fold or open, as
        if nobody had touched them (a step sets the whole state it describes)."""
        self._last_opened = None
        for side in (self.left_side, self.right_side):
            side.choice = True if side in sides else None
        for side in sides:
            self._last_opened = side
        self.fit_side_panels()

    # --- main window hooks ----------------------------------------------------------------------
    def toggle_predict(self) -> str:
        """The Latency or Timeline tab's Predict where that tab is shown; else the occupancy
        column's, brought into view as if its handle had been clicked."""
        for page, name in ((self.latency_page, "Latency"), (self.timeline_page, "Timeline")):
            if self.centre.currentWidget() is page:
                page.predict_button.toggle()
                return (
                    f"Predict on: the {name} tab asks for your prediction first"
                    if page.predict_button.isChecked()
                    else f"Predict off: the {name} tab shows its picture at once"
                )
        self.right_side.choice = True
        self._last_opened = self.right_side
        self.fit_side_panels()
        self.tabs.setCurrentWidget(self.occupancy_view)
        button = self.occupancy_view.predict_button
        button.toggle()
        return (
            "Predict on: the occupancy asks for your prediction first"
            if button.isChecked()
            else "Predict off: the occupancy shows at once"
        )

    def prepare_screenshot(self) -> None:
        """Mid-animation on the N = 100000 lesson: GTX 1650, 98 blocks, the middle of wave 2."""
        s = self.session
        s.set_compare(False)
        s.select_device("1650")
        s.apply_preset(PRESETS[0])
        a = s.animation(0)
        if a is None:
            return
        s.show_moment(1 + DISPATCH + RUN * 0.4)
        s.select_thread(a.plan.blocks_in_wave(1).start + 1, 0, 17)

    #: ``device-explorer screenshot --panel visualizer --view compare`` (or timeline, latency)
    SCREENSHOT_VIEWS = ("compare", "timeline", "latency")

    def show_screenshot_view(self, view: str) -> None:
        """``compare``: the same lesson launch on a GTX 1650 (A) and an H100 (B), in wave 1;
        ``timeline``: that launch in time with jittered blocks, mid-way; ``latency``: its SM hiding
        an L1 load's latency with 9 instructions per load."""
        if view not in self.SCREENSHOT_VIEWS:
            raise UserError(
                f"the visualizer has no view {view!r}; its views: {', '.join(self.SCREENSHOT_VIEWS)}"
            )
        if view == "timeline":
            self.time_views.set_view("timeline")
            self.time_views.set_durations("jitter:0.2")
            self.time_views.show_time(4.5)
            return
        if view == "latency":
            self.time_views.set_view("latency")
            self.time_views.cycles.seek(300)
            return
        s = self.session
        s.set_compare(True)
        s.select_side(1)
        s.select_device("h100")
        s.show_moment(DISPATCH + RUN * 0.4)

    def apply_theme(self, _theme: Theme) -> None:
        """Texts carry theme colours in their rich text: write them again; the painted parts take
        the theme's canvas (``palette.canvas``) when they are next drawn."""
        self.sm_view.apply_theme()
        self.occupancy_view.apply_theme()
        self.inspector.refresh()
        for painted in (*self.occupancy_view.plots.values(), self.realrun_view.strip):
            painted.update()

    def shutdown(self) -> None:
        """Stop the clock and any real run (its child process is killed)."""
        self.frame_clock.stop()
        self.session.pause()
        self.realrun_view.shutdown()
        self.timeline_page.shutdown()
        self.latency_page.shutdown()


#: the page's keys: (key sequence, what it does, the action); an empty description marks an alias
#: (= for +, as on keyboards where + needs Shift). Help > Keyboard shortcuts lists the rest.
KEYS: tuple[tuple[str, str, Callable[[VisualizerPanel], object]], ...] = (
    ("Space", "play / pause the animation", lambda p: p.toggle_play()),
    ("Right", "next wave", lambda p: p.session.step_wave(1)),
    ("Left", "previous wave", lambda p: p.session.step_wave(-1)),
    ("Shift+Right", "next block", lambda p: p.session.step_block(1)),
    ("Shift+Left", "previous block", lambda p: p.session.step_block(-1)),
    ("+", "faster", lambda p: p.session.change_speed(1)),
    ("=", "", lambda p: p.session.change_speed(1)),
    ("-", "slower", lambda p: p.session.change_speed(-1)),
    ("Home", "restart from the first wave", lambda p: p.session.restart()),
    # (Ctrl+= / Ctrl+- are the window's text size)
    ("Ctrl+Up", "zoom in on the SMs", lambda p: p.sm_view.zoom(1)),
    ("Ctrl+Down", "zoom out", lambda p: p.sm_view.zoom(-1)),
)
