"""The main window: the three areas as tabs, menus and a status bar.

The window is on screen before torch and numba load: device discovery (which imports them)
starts in a background thread once the window has painted, and the Devices panel fills in
when it returns. The Launch visualizer and Benchmarks panels are imported and built the first
time they are shown, so their start-up cost is never paid by a teacher who only wants Devices.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import cast

from PySide6.QtCore import QEvent, QMargins, QObject, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStatusBar,
    QStyle,
    QStyleOption,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.discovery import Discovery
from explorer.errors import UserError
from explorer.prefs import Prefs
from explorer.ui.about import AboutDialog
from explorer.ui.context import AppContext
from explorer.ui.devices_panel import DevicesPanel
from explorer.ui.guard import qt_guard
from explorer.ui.lessons.player import LessonPlayer
from explorer.ui.menus import add_quiz_items, build_menus
from explorer.ui.pages import PAGE_KEYS, PAGES, PageSpec
from explorer.ui.panel import ExportFormat, Panel, UnavailablePanel, export_format
from explorer.ui.shortcuts import ShortcutsDialog
from explorer.ui.theme import (
    PRESENTATION_DEFAULT,
    TEXT_SCALE_MAX,
    TEXT_SCALE_MIN,
    TEXT_SCALE_STEP,
    apply_theme,
    clamp_text_scale,
    current_theme,
    fitting_text_scale,
    set_text_scale,
    text_scale_pct,
)
from explorer.ui.widgets import MUST_FIT, Banner, FittingTabs
from explorer.ui.workers import run_in_daemon_thread
from explorer.words import count

WINDOW_TITLE = "Device Explorer"


#: what builds a page: its class, called with the window's AppContext
PanelClass = Callable[[AppContext], Panel]


def _default_discover(on_update: Callable[[Discovery], None]) -> Discovery:
    """Everything, progressively: ``on_update`` gets the CPU, NVML's GPUs and the catalog first."""
    from explorer.devices.discover import discover

    return discover(include_catalog=True, on_update=on_update)


def load_panel_class(spec: PageSpec) -> tuple[PanelClass | None, str]:
    """The panel class for a page, or ``None`` and the reason it is not in this build."""
    reasons = []
    for module_name, class_name in spec.sources:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                reasons.append(f"{module_name} is missing")
                continue
            return None, f"{module_name} could not be imported: {exc}"
        except ImportError as exc:
            return None, f"{module_name} could not be imported: {exc}"
        cls = vars(module).get(class_name)
        if isinstance(cls, type) and issubclass(cls, Panel):
            # every page's constructor takes the AppContext; Python can check the class, not that
            return cast(PanelClass, cls), ""
        if cls is None:
            reasons.append(f"{module_name} has no {class_name}")
        else:
            reasons.append(f"{module_name}.{class_name} is not a Panel")
    return None, "; ".join(reasons)


class _PaintWatcher(QObject):
    """Calls back once, on the first paint of the watched widget."""

    def __init__(self, target: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(target)
        self._callback: Callable[[], None] | None = callback
        target.installEventFilter(self)

    @qt_guard
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self._callback is not None:
            callback, self._callback = self._callback, None
            QTimer.singleShot(0, callback)
        return False


class PageTabs(FittingTabs):
    """The window's page tabs, all in view at any text size a projector needs: a polished app
    does not hide its "Devices" tab behind scroll arrows ("Memory and divergence" gives way to
    "Memory"); the tooltip keeps the full title and the page's key."""


class PageArea(QScrollArea):
    """Where a page sits: as large as the window gives it, and scrolling up and down only where
    the window is shorter than the page's least height (a page never grows the window past the
    screen, and its fields never squeeze into each other). A page not shown asks for no room: the
    tabs' least size is the shown page's, not the largest of the four."""

    #: the page's least height changed (a view's text wrapped anew, a step chose another view):
    #: the lesson pane under the pages sizes itself by it
    least_changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._least_height = -1
        # sized by hand (``fit_page``): a resizable area would also hold the page to the height
        # its word-wrapped labels ask for at its width, and scroll where the page had room
        self.setWidgetResizable(False)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setProperty(MUST_FIT, True)
        self.set_current(False)

    def set_page(self, page: QWidget) -> None:
        self.setWidget(page)
        page.installEventFilter(self)
        self.fit_page()

    def fit_page(self) -> None:
        """The page as large as the view, and never smaller than its least size."""
        page = self.widget()
        if page is None:
            return
        least = page.minimumSizeHint().expandedTo(page.minimumSize())
        if least.height() != self._least_height:
            self._least_height = least.height()
            self.least_changed.emit()
        view = self.maximumViewportSize()
        size = view.expandedTo(least)
        if size.height() > view.height():  # a vertical bar takes width from the view
            size.setWidth(max(least.width(), view.width() - self.verticalScrollBar().sizeHint().width()))
        if page.size() != size:
            page.resize(size)

    @qt_guard
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.fit_page()
        return super().eventFilter(watched, event)

    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_page()

    def set_current(self, shown: bool) -> None:
        policy = QSizePolicy.Policy.Preferred if shown else QSizePolicy.Policy.Ignored
        self.setSizePolicy(policy, policy)

    def page_scrolls(self) -> bool:
        """Whether the page is taller than the room it has (it then scrolls)."""
        return self.verticalScrollBar().maximum() > 0

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        page = self.widget()
        if page is None:
            return QSize(0, 0)
        least = page.minimumSizeHint().expandedTo(page.minimumSize())
        # the width a page needs it gets (pages fold their columns to fit); its height it asks
        # for, but the window's screen may say no: the page then scrolls
        return QSize(least.width(), min(least.height(), 240))

    @qt_guard
    def sizeHint(self) -> QSize:
        page = self.widget()
        return page.sizeHint() if page is not None else QSize(0, 0)


class NoticeBar(QWidget):
    """The one place the window says what the user must not miss (a damaged file moved aside):
    a banner above the pages, one paragraph per notice, until Dismiss. Hidden while empty."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.notices: list[str] = []
        self.banner = Banner()
        self.banner.body_label.setTextFormat(Qt.TextFormat.PlainText)  # paths are not markup
        self.banner.body_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.clicked.connect(self.dismiss)
        # Dismiss on the title's line, so the banner costs the pages no extra row
        column = self.banner.column
        column.removeWidget(self.banner.title_label)
        title_row = QHBoxLayout()
        title_row.addWidget(self.banner.title_label, 1)
        title_row.addWidget(self.dismiss_button)
        column.insertLayout(0, title_row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 4)
        layout.addWidget(self.banner)
        self.hide()

    def add(self, text: str) -> None:
        if not text or text in self.notices:
            return
        self.notices.append(text)
        title = (
            "A saved file could not be used" if len(self.notices) == 1 else "Saved files could not be used"
        )
        self.banner.set_text(title, "\n\n".join(self.notices))
        self.show()

    def dismiss(self) -> None:
        self.notices.clear()
        self.hide()


class TextSizeControl(QWidget):
    """The status bar's text-size control: smaller, the size now, larger (the same as the
    View > Text size keys), so a teacher at a projector finds it without the menu."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(2)
        self.smaller = _tool_button("A−", "Smaller text (Ctrl+-)")
        self.larger = _tool_button("A+", "Larger text (Ctrl+=)")
        self.value = QLabel()
        self.value.setToolTip("Text size (Ctrl+0: back to 100%)")
        self.value.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.smaller.clicked.connect(lambda: window.change_text_scale(-1))
        self.larger.clicked.connect(lambda: window.change_text_scale(1))
        for w in (self.smaller, self.value, self.larger):
            layout.addWidget(w)
        self.show_scale(text_scale_pct())

    def show_scale(self, percent: int) -> None:
        self.value.setText(f"Text {percent}%")
        self.value.setMinimumWidth(self.value.fontMetrics().horizontalAdvance(f"Text {TEXT_SCALE_MAX}%") + 4)
        self.smaller.setEnabled(percent > TEXT_SCALE_MIN)
        self.larger.setEnabled(percent < TEXT_SCALE_MAX)


class StatusBar(QStatusBar):
    """A status bar whose message ends in "…" where it does not fit beside the text-size control,
    the whole message on hover. Qt's own cuts it off mid-word: at 200% text on a 1280x800
    projector "Found the CPU, no NVIDIA GPU, and 17 catalog GPUs (spec sheet" ended there."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.messageChanged.connect(self._hover)

    def message_rect(self) -> QRect:
        """Where the message is drawn: from the left edge to the first permanent widget."""
        right = self.width()
        for child in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if child.isVisible() and child.x() > 0:
                right = min(right, child.x())
        return QRect(6, 0, max(0, right - 12), self.height())

    def shown_message(self) -> str:
        """The message as drawn: whole, or cut with "…" to the room it has."""
        return self.fontMetrics().elidedText(
            self.currentMessage(), Qt.TextElideMode.ElideRight, self.message_rect().width()
        )

    def _hover(self, message: str) -> None:
        self.setToolTip(message if message and self.shown_message() != message else "")

    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._hover(self.currentMessage())

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.currentMessage():
            super().paintEvent(event)
            return
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter, self)
        painter.setPen(self.palette().windowText().color())
        flags = Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextSingleLine
        painter.drawText(self.message_rect(), int(flags), self.shown_message())
        painter.end()


class MainWindow(QMainWindow):
    """Owns the ``AppContext``; panels receive it and react to its signals."""

    def __init__(
        self,
        context: AppContext | None = None,
        *,
        discover_fn: Callable[[Callable[[Discovery], None]], Discovery] | None = None,
        discover_on_show: bool = True,
        panel: str | None = None,
        devices_panel_options: dict | None = None,
    ) -> None:
        super().__init__()
        #: the window's frame (title bar, borders) is known only once a window manager has framed
        #: it: ``fit_screen`` asks for a fit then (the app's own window; a screenshot is any size)
        self._fit_frame_pending = False
        self.setWindowTitle(WINDOW_TITLE)
        self.context = context or AppContext(parent=self)
        self._discover_fn = discover_fn or _default_discover
        self._discovering = False
        self._discover_on_show = discover_on_show and self.context.discovery is None
        self.panels: dict[str, Panel] = {}
        self._saved_pages: dict[str, dict[str, str | int]] = {}  # from the settings file
        self._containers: dict[str, PageArea] = {}
        #: text size in percent for the user's own screen and for presentation mode (the last one
        #: chosen there); presentation mode's per screen size ("1024x768"), as the teacher chose it
        self._text_scales = {False: text_scale_pct(), True: PRESENTATION_DEFAULT}
        self._presentation_scales: dict[str, int] = {}
        self.presenting = False
        self._was_maximized = False
        #: the size the window was given (by the user, the settings file or ``screenshot``), as
        #: opposed to the size a page's minimum forced on it for a moment
        self._wanted_size = QSize(1280, 800)

        # Tabs, not a sidebar: the panels need every pixel of width a 1280x800 projector gives.
        self.tabs = PageTabs(PAGES)
        self.tabs.setObjectName("areas")
        self.tabs.setDocumentMode(True)
        self.notice_bar = NoticeBar()
        central = QWidget()
        central_layout = QVBoxLayout(central)
        central_layout.setContentsMargins(0, 0, 0, 0)
        central_layout.setSpacing(0)
        central_layout.addWidget(self.notice_bar)
        central_layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        for text in self.context.notices:
            self.notice_bar.add(text)
        self.context.notice_added.connect(self.notice_bar.add)
        for number, spec in enumerate(PAGES, start=1):
            container = PageArea()
            container.setObjectName(f"page_{spec.key}")
            self._containers[spec.key] = container
            index = self.tabs.addTab(container, spec.title)
            self.tabs.setTabToolTip(index, f"{spec.title} (Ctrl+{number})")

        # The Devices page is the landing page, so it is built now; the others on first show.
        self.devices_panel = DevicesPanel(self.context, **(devices_panel_options or {}))
        self.devices_panel.refresh_requested.connect(self.refresh_devices)
        self._install_panel("devices", self.devices_panel)

        actions = build_menus(self)
        self.export_action, self.dark_action = actions.export, actions.dark
        self.presentation_action, self.refresh_action = actions.presentation, actions.refresh
        self._page_actions, self._help_menu = actions.pages, actions.help_menu
        self.lessons = LessonPlayer(self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.lessons)
        lessons_menu = self.lessons.build_menu(self.menuBar(), self._help_menu.menuAction())
        add_quiz_items(self, lessons_menu)
        # View > Lesson narration (N): fold the lesson's words, so the figure takes the height
        actions.view_menu.insertAction(actions.lesson_place, self.lessons.narration_action)
        actions.view_menu.insertAction(actions.lesson_place, self.lessons.ask_action)
        self.lessons.apply_text_scale(text_scale_pct(), False)
        for container in self._containers.values():
            container.least_changed.connect(self.lessons.page_least_changed)
        self.setStatusBar(StatusBar(self))
        self.text_size_control = TextSizeControl(self)
        self.statusBar().addPermanentWidget(self.text_size_control)
        self.context.status_message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.context.discovery_changed.connect(self._on_discovery)
        self.tabs.currentChanged.connect(self._on_page_selected)
        self.show_panel(panel or "devices")
        if self.context.discovery is None:
            self.statusBar().showMessage("Looking for devices…")
        else:
            self._on_discovery(self.context.discovery)
        if self._discover_on_show:
            _PaintWatcher(self, self.start_discovery)
        self.resize(1280, 800)

    # ----- the screen: the first window fits the one it opens on, title bar included
    def fit_screen(self) -> None:
        """The window opens fitted to its screen: now as far as its frame is known, and again
        once the window manager has framed it (the title bar's height comes then)."""
        self.resize(self.fitting_size(self.size()))
        self._fit_frame_pending = True

    def fitting_size(self, wanted: QSize) -> QSize:
        """``wanted`` shrunk to what the screen's free area holds with the window's frame around
        it (the title bar and borders, as far as the window manager has said them)."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return wanted
        room = screen.availableGeometry()
        frame = self._frame_margins()
        return QSize(
            max(1, min(wanted.width(), room.width() - frame.left() - frame.right())),
            max(1, min(wanted.height(), room.height() - frame.top() - frame.bottom())),
        )

    def _frame_margins(self) -> QMargins:
        handle = self.windowHandle()
        return handle.frameMargins() if handle is not None else QMargins()

    def fit_to_screen(self) -> None:
        """Shrink the window until it, frame included, fits its screen's free area, and move it
        inside that area (a saved size, or the default 1280x800 on a 1280x800 screen under a
        20 px title bar, put the status bar and its text-size control off the screen)."""
        if self.isMaximized() or self.isFullScreen():
            return
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        size = self.fitting_size(self.size())
        if size != self.size():
            self.resize(size)
        room, frame = screen.availableGeometry(), self.frameGeometry()
        width = size.width() + frame.width() - self.width()
        height = size.height() + frame.height() - self.height()
        x = min(max(frame.x(), room.x()), room.x() + room.width() - width)
        y = min(max(frame.y(), room.y()), room.y() + room.height() - height)
        if (x, y) != (frame.x(), frame.y()):
            self.move(x, y)

    # ----- size: the one asked for, not a passing minimum
    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        """Remember the size the window was given. A size larger than that and no larger than the
        minimum was forced: at first show at 200% text the visualizer's side columns are still
        open, its minimum height is 821 px, and the window grew to it on a 1280x800 projector;
        a moment later the columns fold and the minimum is 582 px again, but the window stayed
        taller than the screen."""
        super().resizeEvent(event)
        size, wanted = event.size(), self._wanted_size
        forced_w = size.width() > wanted.width() and size.width() <= self.minimumWidth()
        forced_h = size.height() > wanted.height() and size.height() <= self.minimumHeight()
        self._wanted_size = QSize(
            wanted.width() if forced_w else size.width(), wanted.height() if forced_h else size.height()
        )

    @qt_guard
    def event(self, event: QEvent) -> bool:
        """Once the layouts have settled, go back to the size asked for where the minimum allows;
        once the window manager has framed the first window, fit it to the screen."""
        handled = super().event(event)
        if (
            self._fit_frame_pending
            and event.type() in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Expose)
            and self.isVisible()
        ):
            frame = self._frame_margins()
            if frame.top() or frame.left() or frame.bottom():  # framed: its size is known now
                self._fit_frame_pending = False
                QTimer.singleShot(0, self.fit_to_screen)
        if event.type() == QEvent.Type.LayoutRequest and not self.isMaximized() and not self.isFullScreen():
            back = self._wanted_size.expandedTo(self.minimumSize())
            if back != self.size() and self.isVisible():
                self.resize(back)
        return handled

    # ----- pages
    def _install_panel(self, key: str, widget: Panel) -> None:
        self.panels[key] = widget
        if key in self._saved_pages:  # a page opened after the settings were read
            widget.restore(self._saved_pages[key])
        widget.set_presenting(self.presenting)
        widget.apply_text_scale(text_scale_pct())
        widget.exports_changed.connect(self._update_export_action)
        self._containers[key].set_page(widget)

    def _ensure_panel(self, key: str) -> Panel:
        if key in self.panels:
            return self.panels[key]
        spec = next(p for p in PAGES if p.key == key)
        cls, reason = load_panel_class(spec)
        widget: Panel
        if cls is None:
            widget = UnavailablePanel(f"{spec.title} is not available in this build.", reason)
        else:
            try:
                widget = cls(self.context)
            except Exception as exc:  # a broken panel must not take the window down
                traceback.print_exc(file=sys.stderr)
                widget = UnavailablePanel(
                    f"{spec.title} could not be opened.", f"{type(exc).__name__}: {exc}"
                )
        self._install_panel(key, widget)
        return widget

    def show_panel(self, key: str) -> Panel:
        """Select a page by its CLI name ("devices", "visualizer", "benchmarks") and return its panel."""
        if key not in PAGE_KEYS:
            raise UserError(f"unknown panel {key!r}; choose one of {', '.join(PAGE_KEYS)}")
        index = PAGE_KEYS.index(key)
        if self.tabs.currentIndex() != index:
            self.tabs.setCurrentIndex(index)  # -> _on_page_selected
        else:
            self._on_page_selected(index)
        return self.panels[key]

    def central_least_height(self) -> int:
        """The height the pages' area needs for the page shown to fit without scrolling (the
        tabs, a notice, and the page's own least height): what the lesson pane leaves it."""
        container = self._containers[self.current_panel_key()]
        page = container.widget()
        central = self.centralWidget()
        assert central is not None  # set in __init__, before any page is shown
        least = central.minimumSizeHint().height()
        if page is not None:
            need = page.minimumSizeHint().expandedTo(page.minimumSize()).height()
            least += max(0, need - container.minimumSizeHint().height())
        return least

    def central_wanted_height(self) -> int:
        """``central_least_height`` and the height the page's figures would take beyond it to
        show whole (a view whose figure scrolls in its own area on a short screen says so with
        ``figure_wants``): the lesson pane's words take more than their least lines only past it."""
        wants = getattr(self.current_panel(), "figure_wants", None)
        return self.central_least_height() + (int(wants()) if callable(wants) else 0)

    def current_panel_key(self) -> str:
        return PAGE_KEYS[max(self.tabs.currentIndex(), 0)]

    def current_panel(self) -> Panel:
        return self._ensure_panel(self.current_panel_key())

    def _on_page_selected(self, index: int) -> None:
        if index < 0:
            return
        key = PAGE_KEYS[index]
        for other, container in self._containers.items():
            container.set_current(other == key)
        self._ensure_panel(key)
        self._page_actions[key].setChecked(True)
        self._update_export_action()

    def _update_export_action(self) -> None:
        key = self.current_panel_key()
        panel = self.panels.get(key)
        self.export_action.setEnabled(panel is not None and bool(panel.export_formats()))

    # ----- menus
    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme = apply_theme(app, name)
            for panel in self.panels.values():
                panel.apply_theme(theme)
            self.tabs.fit_titles()
        self.dark_action.blockSignals(True)
        self.dark_action.setChecked(current_theme().name == "dark")
        self.dark_action.blockSignals(False)

    def show_notice(self, text: str) -> None:
        """Say something the user must read once (kept in the context, shown in the banner)."""
        self.context.add_notice(text)

    # ----- text size and presentation mode
    def apply_text_scale(self, percent: int) -> int:
        """The whole window's text size in percent (100 to 250), for the mode the window is in
        (own screen or presentation); every page reflows. Returns the size now in use."""
        app = QApplication.instance()
        percent = clamp_text_scale(percent)
        if isinstance(app, QApplication):
            percent = set_text_scale(app, percent)
        self._text_scales[self.presenting] = percent
        if self.presenting:
            self._presentation_scales[self.screen_key()] = percent
        self.text_size_control.show_scale(percent)
        for panel in self.panels.values():
            panel.apply_text_scale(percent)
        self.lessons.apply_text_scale(percent, self.presenting)
        self.tabs.fit_titles()
        return percent

    def change_text_scale(self, direction: int) -> int:
        """One step (25 %) larger (``direction`` > 0) or smaller."""
        return self.apply_text_scale(text_scale_pct() + TEXT_SCALE_STEP * (1 if direction > 0 else -1))

    def text_scale(self, presenting: bool | None = None) -> int:
        """The text size in percent for one mode (default: the mode the window is in)."""
        return self._text_scales[self.presenting if presenting is None else presenting]

    def screen_key(self) -> str:
        """The size of the screen the window is on, "1920x1080": what a text size is kept for."""
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return ""
        size = screen.geometry().size()
        return f"{size.width()}x{size.height()}"

    def presentation_text_scale(self) -> int:
        """Presentation mode's text size on this screen: the one chosen on a screen of this size
        before, else the last one chosen where this screen holds it, else the default (150%)
        where it holds that, else the largest it holds. A projector's 250% never comes to a
        1024x768 screen, where it would leave the pages a strip."""
        key = self.screen_key()
        if key in self._presentation_scales:
            return self._presentation_scales[key]
        screen = self.screen() or QApplication.primaryScreen()
        holds = TEXT_SCALE_MAX
        if screen is not None:
            size = screen.geometry().size()
            holds = fitting_text_scale(size.width(), size.height())
        return min(self._text_scales[True], holds)

    def set_presentation(self, on: bool) -> None:
        """Presentation mode: full screen, no menu bar, and the text size for this screen
        (remembered per screen size, apart from the laptop's); leaving it puts the window back as
        it was."""
        if on == self.presenting:
            return
        self.presenting = on
        self.presentation_action.blockSignals(True)
        self.presentation_action.setChecked(on)
        self.presentation_action.blockSignals(False)
        self.menuBar().setVisible(not on)
        for panel in self.panels.values():
            panel.set_presenting(on)
        if on:
            self._was_maximized = self.isMaximized()
            self.showFullScreen()
        elif self._was_maximized:
            self.showMaximized()
        else:
            self.showNormal()
        self.apply_text_scale(self.presentation_text_scale() if on else self._text_scales[False])
        if on:
            self.statusBar().showMessage(
                "Presentation mode: Esc or F11 leaves it; Ctrl+= / Ctrl+- text size.", 8000
            )

    @qt_guard
    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Esc reaches the window only when no field used it (a field leaves editing first)
        if event.key() == Qt.Key.Key_Escape and self.presenting:
            self.set_presentation(False)
            return
        super().keyPressEvent(event)

    def apply_prefs(self, prefs: Prefs) -> None:
        """Theme, panel, size and text sizes as the user left them; a size saved on a bigger
        screen (the projector) is shrunk to fit this one."""
        self._text_scales[True] = clamp_text_scale(prefs.presentation_text_scale)
        self._presentation_scales = dict(prefs.presentation_text_scales)
        # a size chosen on a larger screen is not carried to one that cannot hold it
        screen = self.screen() or QApplication.primaryScreen()
        scale = prefs.text_scale
        if screen is not None:
            room = screen.availableGeometry().size()
            scale = min(scale, fitting_text_scale(room.width(), room.height()))
        self.apply_text_scale(scale)
        self.set_theme(prefs.theme)
        self._saved_pages = dict(prefs.pages)
        for key, page in self.panels.items():  # pages already open; the others restore on opening
            if key in self._saved_pages:
                page.restore(self._saved_pages[key])
        self.show_panel(prefs.panel)
        self.resize(self.fitting_size(QSize(prefs.width, prefs.height)))

    def current_prefs(self) -> Prefs:
        return Prefs(
            theme=current_theme().name,
            panel=self.current_panel_key(),
            width=self.normalGeometry().width() if self.presenting else self.width(),
            height=self.normalGeometry().height() if self.presenting else self.height(),
            # a page not opened this run keeps what it saved last time
            pages={**self._saved_pages, **{k: v for k, p in self.panels.items() if (v := p.remembered())}},
            text_scale=self._text_scales[False],
            presentation_text_scale=self._text_scales[True],
            presentation_text_scales=dict(self._presentation_scales),
        )

    def shortcuts_dialog(self) -> ShortcutsDialog:
        return ShortcutsDialog(self.menuBar(), self)

    def show_shortcuts(self) -> None:
        self.shortcuts_dialog().exec()

    def toggle_predict(self) -> None:
        """View > Predict on this page (Ctrl+Shift+P)."""
        self.statusBar().showMessage(self.current_panel().toggle_predict(), 8000)

    def about_dialog(self) -> AboutDialog:
        return AboutDialog(self.context.discovery, self)

    def show_about(self) -> None:
        self.about_dialog().exec()

    # ----- export
    def export_current(self) -> None:
        """File > Export: a save dialog offering every format the current page can write."""
        panel = self.current_panel()
        formats = panel.export_formats()
        if not formats:
            return
        filters = [f.name_filter for f in formats]
        path_text, chosen = QFileDialog.getSaveFileName(self, "Export", str(Path.home()), ";;".join(filters))
        if not path_text:
            return
        fmt = export_format(
            Path(path_text), formats, formats[filters.index(chosen)] if chosen in filters else formats[0]
        )
        self.export_to(panel, fmt.with_suffix(Path(path_text)), fmt)

    def export_to(self, panel: Panel, path: Path, fmt: ExportFormat) -> Path | None:
        """Write ``panel``'s export and say where in the status bar; a failure is a message box."""
        try:
            written = panel.export(path, fmt)
        except (UserError, OSError) as exc:
            QMessageBox.warning(self, "Export failed", str(exc))
            return None
        self.statusBar().showMessage(f"Exported to {written}", 8000)
        return written

    # ----- devices
    def start_discovery(self) -> None:
        """Look for devices in the background; the Devices panel fills in when it returns."""
        if self._discovering:
            return
        self._discovering = True
        self.refresh_action.setEnabled(False)
        self.devices_panel.set_busy(True)
        self.statusBar().showMessage("Looking for devices…")
        # A daemon thread, never joined: quitting never waits on a probe stuck in a hung driver.
        run_in_daemon_thread(
            self._discover_fn,
            self._discovery_done,
            self._discovery_failed,
            on_progress=self._discovery_progress,
            parent=self,
            name="device-discovery",
        )

    def refresh_devices(self) -> None:
        self.start_discovery()

    def _discovery_progress(self, discovery: Discovery) -> None:
        """The CPU, NVML's GPUs and the catalog, while torch and numba are still being asked."""
        self.context.set_discovery(discovery)

    def _discovery_done(self, discovery: Discovery) -> None:
        self._discovering = False
        self.refresh_action.setEnabled(True)
        self.devices_panel.set_busy(False)
        self.context.set_discovery(discovery)

    def _discovery_failed(self, exc: BaseException) -> None:
        # discover() never raises by contract; if it still does, say so and keep the window.
        self._discovering = False
        self.refresh_action.setEnabled(True)
        self.devices_panel.set_busy(False)
        self.devices_panel.show_error(f"Device discovery failed: {type(exc).__name__}: {exc}")
        self.statusBar().showMessage("Device discovery failed; see the Devices panel.")

    def _on_discovery(self, discovery: Discovery) -> None:
        gpus, sheets = len(discovery.present_gpus), len(discovery.catalog)
        gpu_text = "no NVIDIA GPU" if gpus == 0 else f"{count(gpus, 'NVIDIA GPU')}"
        hidden = len(discovery.hidden_gpus)
        if hidden:
            gpu_text += f" ({hidden} more hidden by CUDA_VISIBLE_DEVICES)" if gpus else ""
            gpu_text = gpu_text if gpus else f"{count(hidden, 'NVIDIA GPU')} hidden by CUDA_VISIBLE_DEVICES"
        catalog_text = f"{count(sheets, 'catalog GPU')} (spec sheets)"
        found = (
            f"the CPU, {gpu_text}, and {catalog_text}" if discovery.cpu else f"{gpu_text} and {catalog_text}"
        )
        waiting = f"; still asking {' and '.join(discovery.pending)}…" if discovery.pending else "."
        self.statusBar().showMessage(f"Found {found}{waiting}")

    # ----- screenshots and shutdown
    def prepare_screenshot(self) -> None:
        self.current_panel().prepare_screenshot()

    @qt_guard
    def closeEvent(self, event: QCloseEvent) -> None:
        for panel in self.panels.values():
            try:
                panel.shutdown()
            except Exception:
                traceback.print_exc(file=sys.stderr)
        super().closeEvent(event)


def _tool_button(text: str, tip: str) -> QToolButton:
    """A flat button of the text-size row (Qt's keyword properties, spelled so type checks see them)."""
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    return button
