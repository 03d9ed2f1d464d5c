"""The Benchmarks panel: choose a workload, run it on the CPU and present GPUs, watch points arrive.

The engine (``explorer.bench``) measures; the page's state (the shown workload, the run under way,
its results, the bar, the error line, the lesson's recording) is a Qt-free ``BenchSession``
(``explorer.bench.session``), and this panel only shows it. The session decides whether a run may
start; the panel then streams it from a worker process through a background thread
(``explorer.ui.bench.stream``) and hands every point, count and wait back to the session, so the
window stays responsive, Stop takes effect at once, and a crashed worker becomes a red row.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.bench import export
from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, Progress, Waiting
from explorer.bench.session import BenchSession, Recording
from explorer.errors import UserError
from explorer.inputs import parse_sizes
from explorer.lessons.model import BenchState, PanelState, Recorded
from explorer.ui.bench.bandwidth_view import BandwidthPlot
from explorer.ui.bench.controls import BenchControls
from explorer.ui.bench.export import export_png
from explorer.ui.bench.latency_view import LatencyView
from explorer.ui.bench.plot import BenchPlot
from explorer.ui.bench.results_area import ResultsArea
from explorer.ui.bench.roof_views import RoofViews
from explorer.ui.bench.roofline_view import RooflinePlot
from explorer.ui.bench.stream import RunStream
from explorer.ui.bench.table import ResultsTable
from explorer.ui.context import AppContext
from explorer.ui.guard import qt_guard
from explorer.ui.panel import ExportFormat, Panel
from explorer.ui.sidepanel import SidePanel, fit_side_panels
from explorer.ui.theme import Theme, px, text_scale_pct
from explorer.ui.widgets import SCROLL_ALLOWED, size_by_shown_tab
from explorer.words import on_host

if TYPE_CHECKING:
    from explorer.bench.run_results import RunResults

log = logging.getLogger(__name__)

#: sizes measured for the screenshot: small enough to take seconds on a laptop CPU
SCREENSHOT_SIZES = (64, 128, 256, 512, 1024, 2048)
#: the screenshot is taken once this share of the run's points has arrived, the rest still to come
SCREENSHOT_SHARE = 2 / 3
#: the settings column's width, and the least the plot keeps beside it, at 100% text (both grow with
#: it): the results table's eleven columns need about 760 px to show in full, so at 1024x768 the
#: settings fold to their handle rather than cut the table off
LEFT_WIDTH = 360
PLOT_MIN = 760
#: how long the screenshot waits for that share before showing the run as far as it got
SCREENSHOT_WAIT_S = 240.0


class BenchPanel(Panel):
    #: emitted when a run ends (finished, stopped or failed), after the last point is shown
    run_finished = Signal()

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._stream: RunStream | None = None
        self._plot_pending = False
        #: the page's state: what is shown, the run under way, its results, bar and error line
        self.session = BenchSession(tell=context.add_notice)

        self.controls = BenchControls(context)
        self.plot = BenchPlot()
        self.roofline = RooflinePlot()
        self.bandwidth = BandwidthPlot()
        self.plot_tabs = QTabWidget()
        self.plot_tabs.addTab(self.plot, "Measurements")
        self.plot_tabs.addTab(self.roofline, "Roofline")
        self.plot_tabs.addTab(self.bandwidth, "Bandwidth")
        self.latency = LatencyView()
        self.plot_tabs.addTab(self.latency, "Latency")
        size_by_shown_tab(self.plot_tabs)  # the roofline's least height counts where it is shown
        self.roofs = RoofViews(
            context, self.session, self.roofline, self.bandwidth, self, latency=self.latency
        )
        self.table = ResultsTable(self.results)
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("no run yet")
        self.progress_bar.setValue(0)
        self.status_label = QLabel()
        self.message_label = QLabel(wordWrap=True)
        self.message_label.setProperty("role", "error")
        self.message_label.hide()
        #: while the run waits (another run's turn on the GPU, its Slurm job in the queue): the
        #: engine's whole sentence under the bar, whose few words it stands for
        self.wait_label = QLabel(wordWrap=True)
        self.wait_label.setProperty("role", "caption")
        self.wait_label.setObjectName("waiting")
        self.wait_label.hide()
        #: shown after a run that left points without a result (a dropped connection, Stop):
        #: measures only those, keeping the finished points
        self.resume_button = QPushButton("Resume")
        self.resume_button.hide()

        # the settings keep the width their fields need: where the window gives the column less
        # (opened by hand at 200% on a 1280x800 projector) it scrolls sideways too, rather than
        # cut the Sizes field, the Defaults button and the spin boxes' arrows off
        left = QScrollArea()
        left.setWidgetResizable(True)
        left.setWidget(self.controls)
        left.setFrameShape(QScrollArea.Shape.NoFrame)
        left.setProperty(SCROLL_ALLOWED, True)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.controls.start_button)
        top.addWidget(self.controls.stop_button)
        top.addWidget(self.resume_button)
        top.addWidget(self.progress_bar, 1)
        top.addWidget(self.status_label)
        right_layout.addLayout(top)
        right_layout.addWidget(self.wait_label)
        right_layout.addWidget(self.message_label)
        self.splitter = ResultsArea(self.plot_tabs, self.table)
        self.peak_caption = self.splitter.peak_caption
        # the plots keep MIN_PLOT_LINES lines of their ticks: where the page is shorter (a lesson
        # open at 200% on a 1280x800 projector) the results scroll up and down, never squashed
        # (the plot was 75 px tall with its tick numbers written over each other); with the
        # settings opened by hand beside them, sideways too
        self.results_scroll = QScrollArea()
        self.results_scroll.setObjectName("benchResultsArea")
        self.results_scroll.setWidget(self.splitter)
        self.results_scroll.setWidgetResizable(True)
        self.results_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.results_scroll.setProperty(SCROLL_ALLOWED, True)
        right_layout.addWidget(self.results_scroll, 1)

        # the settings fold to a handle when the plot would get less than PLOT_MIN beside them
        self.settings_side = SidePanel("Benchmark settings", left, "left")
        self.settings_side.toggled_by_user.connect(lambda _open: self._fit_settings())
        layout = QHBoxLayout(self)
        layout.addWidget(self.settings_side)
        layout.addWidget(right, 1)

        self.controls.start_requested.connect(self.start)
        self.controls.stop_requested.connect(self.stop)
        self.resume_button.clicked.connect(self.resume)
        self.controls.workload_combo.currentIndexChanged.connect(lambda _i: self._workload_chosen())
        self.controls.sizes_edit.textChanged.connect(lambda _t: self._show_planned_sizes())
        context.discovery_changed.connect(lambda _d: self.roofs.devices_found())
        self.roofs.devices_found()
        writers = {"CSV": self.export_csv, "JSON": self.export_json, "PNG": self.export_png}
        self.splitter.export_clicked.connect(lambda name, f: self._export_via_dialog(name, f, writers[name]))
        events = self.session.events
        events.shown.connect(self._show_run)
        events.point.connect(self._point_added)
        events.run.connect(self._run_changed)
        events.progress.connect(self._show_progress)
        events.message.connect(self._show_error)
        events.recorded.connect(self._draw_recorded)
        events.resume.connect(self._show_resume)
        self._workload_chosen()
        self._restore_last()
        self.apply_text_scale(text_scale_pct())  # the window calls it again on every change

    # --- public API -------------------------------------------------------------------
    @property
    def results(self) -> RunResults:
        """The points of one run per workload, with their roofs (the session's)."""
        return self.session.results

    @property
    def points(self) -> list[BenchPoint]:
        """The shown workload's run."""
        return self.session.points

    @property
    def running(self) -> bool:
        return self.session.running

    @property
    def context(self) -> AppContext:
        return self._context

    @property
    def total_points(self) -> int:
        """The points of the run under way, as the engine counted them (0 before it says)."""
        return self.session.total_points

    def start(self) -> bool:
        """Start the run the controls describe; ``False`` (reason shown inline) when it cannot."""
        if self.running:
            return False
        plan = self.controls.build_plan()
        if plan is None:
            return False
        if not self.session.start(plan, measuring=self.roofs.measure.running):
            return False
        self._stream_run(plan)
        return True

    def resume(self) -> bool:
        """Measure the points the last run has no result for, keeping its finished ones; ``False``
        (reason shown inline) when there is no such run or nothing is left."""
        last = self.session.last_plan
        if self.running or last is None:
            return False
        if self.controls.workload.name != last.workload:
            try:  # the form shows the resumed run's workload again
                self.controls.set_workload(last.workload)
            except UserError:
                pass  # a workload the form does not offer (the hidden test ones): the run still is
        plan = self.session.resume(measuring=self.roofs.measure.running)
        if plan is None:
            return False
        self._stream_run(plan)
        return True

    def _stream_run(self, plan: BenchPlan) -> None:
        """Run the plan the session started: the stream's every word goes back to the session."""
        # each handler a method of this panel: the stream's signals come from its thread, and a
        # QObject's own method as the receiver is what queues them onto the UI thread
        stream = RunStream(plan, self)
        stream.point.connect(self.add_point)
        stream.progress.connect(self._on_progress)
        stream.failed.connect(self._on_failed)
        stream.waiting.connect(self.show_waiting)
        stream.roof.connect(lambda roof, workload=plan.workload: self.roofs.add_roof(roof, workload))
        stream.ended.connect(self._on_ended)
        self._stream = stream
        stream.start()

    def stop(self) -> None:
        if self.session.stop() and self._stream is not None:
            self._stream.cancel()

    def lesson_state(self) -> BenchState:
        """The form as a lesson step holds it (``explorer.ui.bench.lesson_form``)."""
        from explorer.ui.bench.lesson_form import form_state

        return form_state(self.controls)

    def show_lesson_state(self, state: PanelState) -> str:
        """Fill the form; the run is the teacher's to start (``explorer.ui.bench.lesson_form``)."""
        if not isinstance(state, BenchState):
            return ""
        if self.running:
            raise UserError("a benchmark is running: stop it before this step sets the form")
        from explorer.ui.bench.lesson_form import fill_form

        note = fill_form(self.controls, state, self._context.devices)
        self.show_recorded(state.recorded)
        return note

    def lesson_closed(self) -> None:
        self.show_recorded(None)

    def show_recorded(self, recorded: Recorded | None) -> None:
        """A lesson's recorded results (or ``None`` to take them away): their own dashed curves on
        the Measurements plot and their points under their own device's roofs on the roofline,
        beside any run made here, while their workload is shown."""
        self.session.set_recording(
            Recording(recorded.device, recorded.date, tuple(recorded.points))
            if recorded is not None
            else None
        )

    def _draw_recorded(self) -> None:
        from explorer.bench.compare import build_series
        from explorer.bench.judge import judged_roofs, recorded_device_name

        points = self.session.recorded_points()
        mark = self.session.recorded_mark()
        series = build_series(points)
        for s in series:  # named apart from any run here, its peak under the recorded device's name
            s.variant = f"{s.variant} (recorded)"
            s.device = f"{recorded_device_name(points, s.device).removeprefix('NVIDIA ')} (recorded)"
        self.plot.set_recorded(series, mark)
        self.roofline.set_recorded(points, judged_roofs(points), mark)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Cancel any run and wait for its thread, so closing the window leaves no worker behind,
        and keep the points it finished for the next start.

        The finished points and the run's end reach this panel as queued signals. After the close
        button the event loop goes on and delivers them; after Ctrl-C, SIGTERM or SIGHUP it does
        not (``explorer.ui.signals`` ends it at once), and the points were lost. So they are
        delivered here, and what the panel holds is saved whether the run's end arrived or not."""
        stream = self._stream
        if stream is not None:
            stream.cancel()
            stream.wait(timeout_s)
            QCoreApplication.sendPostedEvents(self, QEvent.Type.MetaCall)
            if self._stream is stream:  # the end is not in yet (the thread outlived the wait)
                self.session.save_last()
        self.roofs.shutdown()

    def apply_text_scale(self, percent: int) -> None:
        """The controls column and the plots' fonts grow with the text."""
        self.settings_side.set_body_width(px(LEFT_WIDTH))
        # as tall as the Start button beside it (26 px at 100% text grew to 52 at 200%)
        self.progress_bar.setMinimumHeight(self.controls.start_button.sizeHint().height())
        self.table.setMinimumHeight(self.table.least_height())  # it scrolls; the plot keeps its room
        # the peaks' basis in two lines at most (the whole of it on hover): the table's rows, not
        # the caption under them, take what the plot leaves (at 200% it showed one row)
        self.peak_caption.setMaximumHeight(2 * self.peak_caption.fontMetrics().lineSpacing() + 4)
        # each plot keeps a readable height itself (``plot_text.keep_plot_lines``); the table
        # scrolls first, then the results area as a whole
        self.plot.apply_text_scale()
        for view in (self.roofline, self.bandwidth):  # ticks, titles and legends follow the text size
            view.apply_text_scale()
        self._fit_settings()

    def set_presenting(self, on: bool) -> None:
        """A projector is a new screen: the settings the teacher opened are the page's to fold."""
        super().set_presenting(on)
        self.settings_side.choice = None
        self._fit_settings()

    def _fit_settings(self) -> None:
        """Fold the settings when the plot would get less than ``PLOT_MIN`` (on a projector, less
        than half the page), unless the teacher opened them."""
        if not self.isVisible():
            return  # a size before the page is shown is no size at all; resizeEvent comes then
        layout = self.layout()
        assert layout is not None  # set in __init__
        margins = layout.contentsMargins()
        room = self.width() - margins.left() - margins.right() - layout.spacing()
        side = self.settings_side
        least = max(px(PLOT_MIN), room // 2) if self.presenting else px(PLOT_MIN)
        fit_side_panels((side,), room, least, side if side.choice else None)

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_settings()

    @qt_guard
    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._fit_settings()

    def apply_theme(self, theme: Theme) -> None:
        self.plot.apply_theme(theme)
        self.roofline.apply_theme(theme)
        self.bandwidth.apply_theme(theme)
        self.table.viewport().update()  # error rows take their colours from the theme when painted

    EXPORTS = (
        ExportFormat("csv", "CSV table", ".csv"),
        ExportFormat("json", "JSON", ".json"),
        ExportFormat("png", "PNG picture of the plots", ".png"),
    )

    def export_formats(self) -> tuple[ExportFormat, ...]:
        """CSV, JSON and PNG once there is a point to write; nothing before the first one."""
        return self.EXPORTS if self.points else ()

    def export(self, path: Path, fmt: ExportFormat) -> Path:
        writers = {"csv": self.export_csv, "json": self.export_json, "png": self.export_png}
        return writers[fmt.key](path)

    def export_csv(self, path: str | Path) -> Path:
        return export.export_csv(self.points, path)

    def export_json(self, path: str | Path) -> Path:
        return export.export_json(self.points, path, self.results.roofs_of())

    def export_png(self, path: str | Path) -> Path:
        """The measurement plots and, below them, the roofline (laid out at the plot's size even
        while its tab is not the one shown)."""
        roof = self.roofline
        if roof.isHidden() or roof.width() <= 0:
            roof.resize(self.plot.main.size().width(), max(self.plot.main.size().height(), 360))
        with roof.titled():
            return export_png([*self.plot.exported_plots(), roof.plot], path)

    SCREENSHOT_VIEWS = ("roofline", "bandwidth")

    def show_screenshot_view(self, view: str) -> None:
        """The roofline or the bandwidth tab, showing the run ``prepare_screenshot`` left under way."""
        if view not in self.SCREENSHOT_VIEWS:
            super().show_screenshot_view(view)
        self.plot_tabs.setCurrentWidget(self.roofline if view == "roofline" else self.bandwidth)

    def prepare_screenshot(
        self,
        sizes: tuple[int, ...] = SCREENSHOT_SIZES,
        share: float = SCREENSHOT_SHARE,
        wait_s: float = SCREENSHOT_WAIT_S,
    ) -> None:
        """Leave the panel really mid-run (``explorer.ui.bench.screenshot``)."""
        from explorer.ui.bench.screenshot import leave_mid_run

        leave_mid_run(self, sizes, share, wait_s)
        self._refresh_plot()  # the last point drawn before the picture is taken

    # --- stream handlers (UI thread) ----------------------------------------------------
    def set_run(self, points: list[BenchPoint]) -> None:
        """Replace the shown workload's run with ``points`` (all of that workload) and show it."""
        self.session.set_run(points)

    def add_point(self, point: BenchPoint) -> None:
        """One point of the run under way (the stream's handler, on the UI thread)."""
        self.session.add_point(point)

    def _on_progress(self, progress: Progress) -> None:
        self.session.progress(progress)

    def _on_failed(self, text: str) -> None:
        self.session.fail(text)

    def show_waiting(self, wait: Waiting) -> None:
        """What the run waits for (another run's turn on the GPU, its Slurm job's state), as the
        engine said it: the session words the bar and the line under it."""
        self.session.wait(wait)

    def _point_added(self) -> None:
        # The table row now, the plot on the next turn of the event loop: two short steps
        # instead of one long one, and points arriving together are drawn once.
        self.table.results.point_added()
        if len(self.points) == 1:
            self.exports_changed.emit()
        if not self._plot_pending:
            self._plot_pending = True
            QTimer.singleShot(0, self._refresh_plot)

    def _refresh_plot(self) -> None:
        self._plot_pending = False
        self.plot.set_points(self.points)
        self.roofs.refresh()

    def _show_progress(self) -> None:
        """The bar, the time left beside it and the wait under it, as the session words them."""
        bar = self.session.bar
        self.progress_bar.setRange(0, bar.maximum)
        self.progress_bar.setValue(bar.value)
        self.progress_bar.setFormat(bar.text)
        self.progress_bar.setToolTip(bar.tooltip)
        self.status_label.setText(self.session.eta)
        wait = self.session.wait_text
        self.wait_label.setText(wait)
        self.wait_label.setVisible(bool(wait))

    def _on_ended(self) -> None:
        stream, self._stream = self._stream, None
        self.session.end()
        if stream is not None:
            stream.deleteLater()

    def _run_changed(self) -> None:
        """A run started, was asked to stop, or ended: the form locks or unlocks; an ended run is
        said in the status bar."""
        running = self.session.running
        self.controls.set_running(running)
        self.plot.set_running(running)
        self.roofs.set_running(running)
        if running:
            return
        self._context.say(self.session.summary())
        self.run_finished.emit()

    def _show_resume(self) -> None:
        """Resume is offered while the shown run is the last one started here and it left points."""
        offer = self.session.resume_offer
        self.resume_button.setVisible(offer.left > 0)
        self.resume_button.setText(offer.text or "Resume")
        self.resume_button.setToolTip(offer.tooltip)

    def resume_left(self) -> int:
        """How many points of the last run started here have no result (0: none, or no such run)."""
        return self.session.resume_left()

    def _workload_chosen(self) -> None:
        """The form chose a workload: its own run is shown (or nothing yet), never another's."""
        if not self.session.show(self.controls.workload.name):
            self._show_titles(self._host_shown())

    def _show_run(self) -> None:
        """The shown run changed as a whole (another workload, a new or restored run)."""
        self._show_titles(self._host_shown())
        self.table.results.reload()
        self.plot.set_points(self.points)
        self.exports_changed.emit()

    def _host_shown(self) -> str:
        """The machine the shown run measured on ("" for this one)."""
        plan = self.session.plan
        if plan is not None and plan.remote is not None and plan.workload == self.session.shown:
            return plan.remote.host
        return next((p.host for p in self.points if p.host), "")

    def _show_titles(self, host: str) -> None:
        """The plot's title names the workload and, for a run on a remote machine, the machine."""
        w = self.controls.workload
        self.plot.set_titles(on_host(w.title, host), w.size_name)
        self._show_planned_sizes()

    def _show_planned_sizes(self) -> None:
        """The sizes the form would measure, for an empty plot's axis: those typed, else the
        workload's defaults for the devices chosen."""
        c = self.controls
        try:
            sizes = parse_sizes(c.sizes_edit.text(), c.workload.size_name)
        except UserError:
            sizes = c.workload.default_sizes_for(c.selected_devices() or ["cpu"])
        self.plot.set_planned_sizes(list(sizes))

    # --- persistence and messages -----------------------------------------------------
    def _restore_last(self) -> None:
        workload = self.session.restore_last()
        if workload is None:
            return
        try:
            self.controls.set_workload(workload)
        except UserError:
            return  # a workload this version no longer has: its run is kept, not shown
        self.session.show_restored()

    def _show_message(self, text: str | None) -> None:
        self.session.show_error(text or "")

    def _show_error(self) -> None:
        text = self.session.message
        self.message_label.setText(text)
        self.message_label.setVisible(bool(text))

    def _export_via_dialog(self, what: str, filter_: str, write) -> None:
        suggested = f"{self.controls.workload.name}-results.{what.lower()}"
        path, _ = QFileDialog.getSaveFileName(self, f"Export results as {what}", suggested, filter_)
        if not path:
            return
        try:
            written = write(path)
        except (UserError, OSError) as exc:
            self._show_message(f"export failed: {exc}")
            return
        self._show_message(None)
        self._context.say(f"wrote {written}")
