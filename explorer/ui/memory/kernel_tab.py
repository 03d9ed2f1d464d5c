"""The Memory page's "Your kernel" tab: a student's numba script traced on the simulator, each
source line with its sectors, wavefronts and lanes, and the worst lines coloured.

A view of ``explorer.kernels.session.KernelSession``: the trace runs in a child process
(``explorer.kernels.run``) from a background thread, never in the window's process; the file is
watched and traced again when the student saves it in their own editor.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEventLoop, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.kernels.examples import example_path, examples_dir
from explorer.kernels.run import KernelReport, LineFigures, trace_script
from explorer.kernels.session import KernelSession
from explorer.memory.banks import BankConflicts
from explorer.memory.coalescing import Coalescing
from explorer.ui.guard import qt_guard
from explorer.ui.memory.canvas import BankCanvas, CoalescingCanvas
from explorer.ui.widgets import SCROLL_ALLOWED, scrolling
from explorer.ui.workers import run_in_daemon_thread

COLUMNS = (
    ("Line", "the script's line number"),
    ("Load req", "global load requests: warp-level executions of the line's loads"),
    ("Load sectors", "32-byte sectors those loads fetched / the fewest their bytes fit in"),
    ("Store sectors", "32-byte sectors the line's stores wrote / the fewest their bytes fit in"),
    ("Shared wavefronts", "shared-memory wavefronts / conflict-free; extra ones are bank conflicts"),
    ("Warps", "warp executions of the line"),
    ("Lanes", "mean active lanes per warp execution (32: none idle)"),
    ("Divergent", "warp executions whose lanes went different ways (a line with a branch)"),
    ("Source", ""),
)
POLL_MS = 1000
#: the longest a picture of the tab (a lesson step's screenshot or handout page) waits for its trace
TRACE_WAIT_S = 120.0
Tracer = Callable[[str], KernelReport]


def _ratio(got: int, ideal: int) -> str:
    return "" if not got else f"{got:,} / {ideal:,}"


def line_cells(ln: LineFigures) -> list[str]:
    return [
        str(ln.line),
        f"{ln.global_load_requests:,}" if ln.global_load_requests else "",
        _ratio(ln.global_load_sectors, ln.global_load_sectors_ideal),
        _ratio(ln.global_store_sectors, ln.global_store_sectors_ideal),
        _ratio(
            ln.shared_load_wavefronts + ln.shared_store_wavefronts,
            ln.shared_load_wavefronts_ideal + ln.shared_store_wavefronts_ideal,
        ),
        f"{ln.warp_executions:,}" if ln.warp_executions else "",
        "" if ln.active_lanes_mean is None else f"{ln.active_lanes_mean:.1f}",
        "" if ln.divergent_warps is None else f"{ln.divergent_warps:,}",
        ln.source,
    ]


class KernelTab(QWidget):
    """Open (or drop) a script, trace it, read its lines; it traces again when the file changes."""

    traced = Signal()  # a run ended (tests wait on it)

    def __init__(self, tracer: Tracer | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = KernelSession()
        self._line_to_pick = 0  # a lesson step's line, picked when its trace is in
        self._tracer: Tracer = tracer or (lambda path: trace_script(path))
        self.setAcceptDrops(True)
        self.open_button = QPushButton("Open script…")
        self.open_button.clicked.connect(self._choose)
        self.run_button = QPushButton("Run again")
        self.run_button.clicked.connect(self.run)
        self.launches = QComboBox()
        self.launches.currentIndexChanged.connect(self.session.set_launch)
        #: the GPU the launch's occupancy is read on (the panel's: a present one, else a catalog sheet)
        self.device_for_occupancy: Callable[[], Device | None] = lambda: None
        self.status = QLabel()
        self.status.setWordWrap(True)
        # its lines whole: the table and the picture under it scroll instead
        self.status.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([c for c, _tip in COLUMNS])
        for i, (_name, tip) in enumerate(COLUMNS):
            item = self.table.horizontalHeaderItem(i)
            if item is not None:
                item.setToolTip(tip)
        header = self.table.horizontalHeader()
        # every column shares the width (a long header is elided, its words on hover): the table
        # never scrolls sideways, at any text size
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.itemSelectionChanged.connect(self._picked)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.coalescing = CoalescingCanvas()
        self.banks = BankCanvas()
        self.pictures = QStackedWidget()
        self.pictures.addWidget(self.coalescing)
        self.pictures.addWidget(self.banks)
        self.pictures.setVisible(False)
        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.run_button)
        top.addWidget(self.launches, 1)
        # the picked line's words and picture scroll under the table where the page is short (a
        # lesson open at 200%): the table keeps its rows, the picture its size
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.addWidget(self.detail)
        below_layout.addWidget(self.pictures, 1)
        self.below = scrolling(below)
        self.below.setProperty(SCROLL_ALLOWED, True)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.below, 2)
        self.session.events.script.connect(self._show)
        self.session.events.selection.connect(self._show_detail)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._poll)
        self._timer.start(POLL_MS)
        self._show()

    # --- actions ---------------------------------------------------------------------------------
    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a numba script", "", "Python scripts (*.py)")
        if path:
            self.open(path)

    def open(self, path: str) -> None:
        try:
            self.session.open(path)
        except UserError as exc:
            self.session.fail(str(exc))
            return
        self.run()

    def show_example(self, name: str, line: int = 0) -> None:
        """A lesson step's shipped example, traced unless it is the one already shown (a step shown
        again, or the next step on the same script, does not run it twice), with source ``line``
        picked once it is traced (0: none): the line the narration points at, in view."""
        try:
            path = example_path(name)
        except UserError as exc:
            self.session.fail(str(exc))
            return
        self._line_to_pick = line
        if self.session.path == path and (self.session.report is not None or self.session.running):
            self._pick_line()
            return
        self.open(str(path))

    def _pick_line(self) -> None:
        """Select the row of the line a lesson step asked for, if the trace holds it."""
        line, self._line_to_pick = self._line_to_pick, 0
        launch = self.session.launch
        if not line or launch is None:
            return
        rows = [i for i, ln in enumerate(launch.lines) if ln.line == line]
        if rows:
            self.table.selectRow(rows[0])
            self._scroll_to_pick()
            QTimer.singleShot(0, self.table, self._scroll_to_pick)  # again once the picture is laid out

    def _scroll_to_pick(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.table.scrollTo(rows[0], QTableWidget.ScrollHint.PositionAtCenter)

    def wait_for_trace(self, timeout_s: float) -> None:
        """Return when the trace under way ends (at once when none runs), or after ``timeout_s``."""
        if not self.session.running:
            return
        loop = QEventLoop()
        self.traced.connect(loop.quit)
        QTimer.singleShot(int(timeout_s * 1000), loop, loop.quit)
        try:
            if self.session.running:
                loop.exec(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)  # a key waits too
        finally:
            self.traced.disconnect(loop.quit)

    def example_name(self) -> str:
        """The shipped example open here ("" for a script of the student's own, or none)."""
        path = self.session.path
        if path is None or path.parent.resolve() != examples_dir().resolve():
            return ""
        return path.name

    def run(self) -> None:
        try:
            script = self.session.start()
        except UserError as exc:
            self.status.setText(str(exc))
            return
        run_in_daemon_thread(
            lambda _progress: self._tracer(str(script)),
            self._done,
            self._failed,
            parent=self,
            name="kernel-trace",
        )

    def _done(self, report: object) -> None:
        if isinstance(report, KernelReport):
            self.session.finish(report)
            self._pick_line()
        self.traced.emit()

    def _failed(self, exc: BaseException) -> None:
        self.session.fail(
            str(exc) if isinstance(exc, UserError) else f"the trace failed: {type(exc).__name__}"
        )
        self.traced.emit()

    def _poll(self) -> None:
        if self.session.poll():
            self.run()

    def _picked(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        launch = self.session.launch
        if not rows or launch is None or rows[0].row() >= len(launch.lines):
            self.session.pick(None)
            return
        self.session.pick(launch.lines[rows[0].row()].line)

    # --- drag and drop ---------------------------------------------------------------------------
    @qt_guard
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if len(urls) == 1 and urls[0].toLocalFile().endswith(".py"):
            event.acceptProposedAction()

    @qt_guard
    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls:
            self.open(urls[0].toLocalFile())

    # --- showing the model -----------------------------------------------------------------------
    def _show(self) -> None:
        s = self.session
        occupancy = s.occupancy_line(self.device_for_occupancy())
        self.status.setText(s.summary() + (f"\n{occupancy}" if occupancy else ""))
        self.run_button.setEnabled(s.path is not None and not s.running)
        names = (
            [f"{i + 1}. {la.kernel} {la.grid} x {la.block}" for i, la in enumerate(s.report.launches)]
            if s.report
            else []
        )
        self.launches.blockSignals(True)
        self.launches.clear()
        self.launches.addItems(names)
        self.launches.setCurrentIndex(s.launch_index if names else -1)
        self.launches.setVisible(len(names) > 1)
        self.launches.blockSignals(False)
        launch = s.launch
        lines = launch.lines if launch is not None else ()
        self.table.setRowCount(len(lines))
        for row, ln in enumerate(lines):
            heat = s.heat(ln)
            for col, text in enumerate(line_cells(ln)):
                item = QTableWidgetItem(text)
                shade = {2: heat.sectors, 3: heat.sectors, 4: heat.wavefronts, 6: heat.idle_lanes}.get(
                    col, 0.0
                )
                if shade > 0:
                    item.setBackground(QColor(230, 80, 40, int(40 + 160 * shade)))
                self.table.setItem(row, col, item)
        self._show_detail()

    def _show_detail(self) -> None:
        s = self.session
        ln = s.line(s.picked) if s.picked is not None else None
        if ln is None:
            self.detail.setText("Pick a line to see its first warp's request.")
            self.pictures.setVisible(False)
            return
        self.detail.setText(detail_text(ln))
        request = s.first_request(ln)
        if isinstance(request, Coalescing):
            self.coalescing.set_result(request)
            self.pictures.setCurrentWidget(self.coalescing)
        elif isinstance(request, BankConflicts):
            self.banks.set_result(request)
            self.pictures.setCurrentWidget(self.banks)
        self.pictures.setVisible(request is not None)

    def shutdown(self) -> None:
        self._timer.stop()


def detail_text(ln: LineFigures) -> str:
    """What the picked line's first warp did, in words (the Memory page's rules, named)."""
    parts = [f"Line {ln.line}: {ln.source}"]
    first = ln.first_access
    if first is not None:
        lanes = first.get("lanes", [])
        addresses = first.get("addresses", [])
        shown = ", ".join(f"lane {la}: {ad:,}" for la, ad in list(zip(lanes, addresses, strict=False))[:8])
        more = "" if len(lanes) <= 8 else f", … ({len(lanes)} lanes)"
        parts.append(
            f"First request: block {first.get('block')}, warp {first.get('warp')}, {first.get('space')} "
            f"{first.get('kind')} of {first.get('elem_bytes')}-byte elements at byte offsets {shown}{more}."
        )
    if ln.first_lanes is not None:
        parts.append(f"First warp execution: {len(ln.first_lanes)} of 32 lanes active.")
    if ln.excess_sectors > 0:
        parts.append(
            f"{ln.excess_sectors:,} sectors more than the bytes need: the lanes' addresses are spread out."
        )
    if ln.excess_wavefronts > 0:
        parts.append(f"{ln.excess_wavefronts:,} extra wavefronts: lanes ask one bank for different words.")
    return " ".join(parts)
