"""The Benchmarks panel: choose a workload, run it on the CPU and present GPUs, watch points arrive.

The engine (``explorer.bench``) measures; this panel only shows. A run streams from a worker
process through a background thread (``explorer.ui.bench.stream``), so the window stays
responsive, Stop takes effect at once, and a crashed worker becomes a red row, not a dialog.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.bench import export
from explorer.bench.fmt import eta_text
from explorer.bench.run_results import RunResults
from explorer.bench.sizes import sizes_text
from explorer.errors import UserError
from explorer.inputs import parse_sizes
from explorer.lessons.model import BenchState, PanelState
from explorer.lessons.resolve import bench_devices
from explorer.ui.bench.controls import DEFAULT_BUDGET_S, BenchControls
from explorer.ui.bench.export import export_png
from explorer.ui.bench.plot import BenchPlot
from explorer.ui.bench.roofline_view import RooflinePlot
from explorer.ui.bench.stream import RunStream
from explorer.ui.bench.table import PeakCaption, ResultsTable
from explorer.ui.guard import qt_guard
from explorer.ui.panel import ExportFormat, Panel
from explorer.ui.sidepanel import SidePanel, fit_side_panels
from explorer.ui.theme import Theme, px, text_scale_pct
from explorer.ui.widgets import SCROLL_ALLOWED

log = logging.getLogger(__name__)

#: sizes measured for the screenshot: small enough to take seconds on a laptop CPU
SCREENSHOT_SIZES = (64, 128, 256, 512, 1024, 2048)
#: the screenshot is taken once this share of the run's points has arrived, the rest still to come
SCREENSHOT_SHARE = 2 / 3
#: the settings column's width, and the least the plot keeps beside it, at 100% text (both grow with
#: it): the results table's eleven columns need about 760 px to show in full, so at 1024x768 the
#: settings fold to their handle rather than cut the table off
LEFT_WIDTH = 360
#: the least height of the measurements plot and of the roofline (axes, title and legend included),
#: at 100% text: below these their labels no longer fit (grown with the text size)
PLOT_MIN_HEIGHT = 90
ROOFLINE_MIN_HEIGHT = 100
PLOT_MIN = 760
#: how long the screenshot waits for that share before showing the run as far as it got
SCREENSHOT_WAIT_S = 240.0


class BenchPanel(Panel):
    #: emitted when a run ends (finished, stopped or failed), after the last point is shown
    run_finished = Signal()

    def __init__(self, context: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self._stream: RunStream | None = None
        self._total = 0
        #: remote devices' roofs as their machines sent them, by (host, device key)
        self._remote_roofs: dict[tuple[str, str], Any] = {}
        #: the plan of the last run started here: what Resume measures the rest of
        self._last_plan: Any = None
        self._plot_pending = False

        self.controls = BenchControls(context)
        self.plot = BenchPlot()
        self.roofline = RooflinePlot()
        self.plot_tabs = QTabWidget()
        self.plot_tabs.addTab(self.plot, "Measurements")
        self.plot_tabs.addTab(self.roofline, "Roofline")
        self._catalog_roof_key = ""
        #: the points of one run per workload; the table and the plots show the chosen workload's
        self.results = RunResults()
        self.table = ResultsTable(self.results)
        self.progress_bar = QProgressBar()
        self.progress_bar.setTextVisible(True)
        self.progress_bar.setFormat("no run yet")
        self.progress_bar.setValue(0)
        self.status_label = QLabel()
        self.message_label = QLabel(wordWrap=True)
        self.message_label.setProperty("role", "error")
        self.message_label.hide()
        #: shown after a run that left points without a result (a dropped connection, Stop):
        #: measures only those, keeping the finished points
        self.resume_button = QPushButton("Resume")
        self.resume_button.hide()
        self.csv_button = QPushButton("Export CSV…")
        self.json_button = QPushButton("Export JSON…")
        self.png_button = QPushButton("Export PNG…")

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
        right_layout.addWidget(self.message_label)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.plot_tabs)
        table_box = QWidget()  # the table and, once, the peaks its "% of peak" is against
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addWidget(self.table, 1)
        self.peak_caption = PeakCaption(self.table.results)
        # the caption and the export buttons share one row: at 200% text a row of its own for
        # the buttons was one of the things that made the page taller than a 1280x800 projector
        under = QHBoxLayout()
        under.addWidget(self.peak_caption, 1)
        for button in (self.csv_button, self.json_button, self.png_button):
            under.addWidget(button, 0, Qt.AlignmentFlag.AlignBottom)
        table_layout.addLayout(under)
        splitter.addWidget(table_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([460, 240])
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        right_layout.addWidget(splitter, 1)

        # the settings fold to a handle when the plot would get less than PLOT_MIN beside them
        self.settings_side = SidePanel("Benchmark settings", left, "left")
        self.settings_side.toggled_by_user.connect(lambda _open: self._fit_settings())
        layout = QHBoxLayout(self)
        layout.addWidget(self.settings_side)
        layout.addWidget(right, 1)

        self.controls.start_requested.connect(self.start)
        self.controls.stop_requested.connect(self.stop)
        self.resume_button.clicked.connect(self.resume)
        self.controls.workload_combo.currentIndexChanged.connect(lambda _i: self._workload_shown())
        self.controls.sizes_edit.textChanged.connect(lambda _t: self._show_planned_sizes())
        self.roofline.catalog_chosen.connect(self._choose_catalog_roof)
        context.discovery_changed.connect(lambda _d: self._devices_found())
        self._devices_found()
        self.csv_button.clicked.connect(
            lambda: self._export_via_dialog("CSV", "CSV files (*.csv)", self.export_csv)
        )
        self.json_button.clicked.connect(
            lambda: self._export_via_dialog("JSON", "JSON files (*.json)", self.export_json)
        )
        self.png_button.clicked.connect(
            lambda: self._export_via_dialog("PNG", "PNG images (*.png)", self.export_png)
        )
        self._workload_shown()
        self._restore_last()
        self.apply_text_scale(text_scale_pct())  # the window calls it again on every change

    # --- public API -------------------------------------------------------------------
    @property
    def points(self) -> list[Any]:
        """The shown workload's run."""
        return self.results.points

    @property
    def running(self) -> bool:
        return self._stream is not None

    def start(self) -> bool:
        """Start the run the controls describe; ``False`` (reason shown inline) when it cannot."""
        if self._stream is not None:
            return False
        plan = self.controls.build_plan()
        if plan is None:
            return False
        return self._start_plan(plan, [])

    def resume(self) -> bool:
        """Measure the points the last run has no result for, keeping its finished ones; ``False``
        (reason shown inline) when there is no such run or nothing is left."""
        if self._stream is not None or self._last_plan is None:
            return False
        from explorer.bench.resume import resume

        try:
            resumed = resume(self._last_plan, self.results.points_of(self._last_plan.workload))
        except UserError as exc:
            self._show_message(str(exc))
            self._update_resume()
            return False
        if self.controls.workload.name != self._last_plan.workload:
            try:  # the form shows the resumed run's workload again
                self.controls.set_workload(self._last_plan.workload)
            except UserError:
                pass  # a workload the form does not offer (the hidden test ones): the run still is
        return self._start_plan(resumed.plan, resumed.kept)

    def _start_plan(self, plan: Any, kept: list[Any]) -> bool:
        """Run ``plan``; ``kept`` are the points of the run it resumes (shown first, kept)."""
        self._show_message(None)
        self.results.start_run(plan.workload)
        if kept:
            self.results.set_run(plan.workload, kept)
        if not plan.skip:
            self._last_plan = plan
        self.resume_button.hide()
        self.table.results.reload()
        self.exports_changed.emit()
        self.plot.set_running(True)
        self.plot.set_points([])
        self._refresh_roofline()
        self._total = 0
        self.progress_bar.setRange(0, 0)  # busy until the first progress record gives the total
        self.progress_bar.setFormat(
            f"connecting to {plan.remote.host} and starting the worker there…"
            if plan.remote is not None
            else "starting the worker process…"
        )
        self._show_titles(plan.remote.host if plan.remote is not None else "")
        self.status_label.setText("")
        stream = RunStream(plan, self)
        stream.point.connect(self.add_point)
        stream.progress.connect(self._on_progress)
        stream.failed.connect(self._show_message)
        stream.waiting.connect(self.show_waiting)
        stream.roof.connect(self.add_remote_roof)
        stream.ended.connect(self._on_ended)
        self._stream = stream
        self.controls.set_running(True)
        stream.start()
        return True

    def stop(self) -> None:
        if self._stream is not None:
            self.progress_bar.setFormat("stopping…")
            self._stream.cancel()

    def lesson_state(self) -> BenchState:
        """The form as a lesson step holds it: workload, devices, sizes (none: the defaults),
        repeats (none: until the spread settles) and the time budget."""
        c = self.controls
        devices = tuple(c.selected_devices()) or ("cpu",)
        try:
            sizes: tuple[int, ...] | None = tuple(parse_sizes(c.sizes_edit.text(), c.workload.size_name))
        except UserError:
            sizes = None
        if sizes is not None and sorted(sizes) == c.workload.default_sizes_for(list(devices)):
            sizes = None
        return BenchState(
            workload=c.workload.name,
            devices=devices,
            sizes=sizes,
            repeats=c.repeats_spin.value() or None,
            budget_s=round(c.budget_spin.value(), 1),
        )

    def show_lesson_state(self, state: PanelState) -> str:
        """Fill the form; the run is the teacher's to start. Devices this machine lacks are left
        out and the note says so (the narration pane shows any recorded results beside it)."""
        if not isinstance(state, BenchState):
            return ""
        if self.running:
            raise UserError("a benchmark is running: stop it before this step sets the form")
        devices, note = bench_devices(state, self._context.devices)
        c = self.controls
        c.set_workload(state.workload)
        for key, box in c.device_boxes().items():
            if box.isEnabled():
                box.setChecked(key in devices)
        if state.sizes is None:
            c.reset_sizes_button.click()
        else:
            c.sizes_edit.setText(sizes_text(state.sizes, c.workload.size_format == "bytes"))
            c.sizes_edit.setCursorPosition(0)
        c.repeats_spin.setValue(state.repeats or 0)
        c.budget_spin.setValue(state.budget_s)
        return note

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Cancel any run and wait for its thread, so closing the window leaves no worker behind."""
        stream = self._stream
        if stream is not None:
            stream.cancel()
            stream.wait(timeout_s)

    def apply_text_scale(self, percent: int) -> None:
        """The controls column and the plots' fonts grow with the text."""
        self.settings_side.set_body_width(px(LEFT_WIDTH))
        # as tall as the Start button beside it (26 px at 100% text grew to 52 at 200%)
        self.progress_bar.setMinimumHeight(self.controls.start_button.sizeHint().height())
        self.table.setMinimumHeight(self.table.least_height())  # it scrolls; the plot keeps its room
        # the peaks' basis in two lines at most (the whole of it on hover): the table's rows, not
        # the caption under them, take what the plot leaves (at 200% it showed one row)
        self.peak_caption.setMaximumHeight(2 * self.peak_caption.fontMetrics().lineSpacing() + 4)
        # the plots keep a readable height on a short projector; the table scrolls instead (at
        # 1280x720 and 150% the roofline's view was 40 px tall and its labels lay on each other)
        self.plot.main.setMinimumHeight(px(PLOT_MIN_HEIGHT))
        self.roofline.plot.setMinimumHeight(px(ROOFLINE_MIN_HEIGHT))
        self.plot.apply_text_scale()
        self.roofline.apply_text_scale()
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
        margins = self.layout().contentsMargins()
        room = self.width() - margins.left() - margins.right() - self.layout().spacing()
        side = self.settings_side
        least = max(px(PLOT_MIN), room // 2) if self.presenting else px(PLOT_MIN)
        fit_side_panels((side,), room, least, side if side.choice else None)

    @qt_guard
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_settings()

    @qt_guard
    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._fit_settings()

    def apply_theme(self, theme: Theme) -> None:
        self.plot.apply_theme(theme)
        self.roofline.apply_theme(theme)
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
        return export.export_json(self.points, path)

    def export_png(self, path: str | Path) -> Path:
        """The measurement plots and, below them, the roofline (laid out at the plot's size even
        while its tab is not the one shown)."""
        roof = self.roofline
        if roof.isHidden() or roof.width() <= 0:
            roof.resize(self.plot.main.size().width(), max(self.plot.main.size().height(), 360))
        return export_png([*self.plot.exported_plots(), roof.plot], path)

    SCREENSHOT_VIEWS = ("roofline",)

    def show_screenshot_view(self, view: str) -> None:
        """The roofline tab, showing the run ``prepare_screenshot`` left under way."""
        if view not in self.SCREENSHOT_VIEWS:
            super().show_screenshot_view(view)
        self.plot_tabs.setCurrentWidget(self.roofline)

    def prepare_screenshot(
        self,
        sizes: tuple[int, ...] = SCREENSHOT_SIZES,
        share: float = SCREENSHOT_SHARE,
        wait_s: float = SCREENSHOT_WAIT_S,
    ) -> None:
        """Leave the panel really mid-run: start the matmul through the engine and return once
        ``share`` of its points have been measured, with the rest still running.

        On the CPU, and on the first present GPU where there is one (so the speedup curve shows).
        Everything on screen is then what a user would see at that moment: measured points, the
        bar part-filled, the engine's time-left estimate, Stop enabled because a run is behind it.
        Closing the window (``shutdown``) ends the run. Should the run end first (an error), the
        panel shows it ended, as it would for a user.
        """
        from PySide6.QtCore import QEventLoop

        self.controls.set_workload("matmul")
        gpus = [d.key for d in self._context.devices if d.kind == "cuda" and d.usable][:1]
        for key, box in self.controls.device_boxes().items():
            box.setChecked(key == "cpu" or key in gpus)
        self.controls.sizes_edit.setText(", ".join(str(n) for n in sizes))
        self.controls.sizes_edit.setCursorPosition(0)
        self.controls.repeats_spin.setValue(0)
        # the form's own default: the README's picture shows what a user sees (it showed 1.0 s)
        self.controls.budget_spin.setValue(DEFAULT_BUDGET_S)
        if not self.start():
            return
        loop = QEventLoop()

        def check() -> None:
            # the total is the engine's, from its first progress record
            if not self.running or (self._total and len(self.points) >= max(1, int(self._total * share))):
                loop.quit()

        poll = QTimer(self)
        poll.setInterval(100)
        poll.timeout.connect(check)
        deadline = QTimer(self)
        deadline.setSingleShot(True)
        deadline.timeout.connect(loop.quit)
        poll.start()
        deadline.start(int(wait_s * 1000))
        loop.exec()
        poll.stop()
        deadline.stop()
        poll.deleteLater()
        deadline.deleteLater()
        self._refresh_plot()  # the last point drawn before the picture is taken

    # --- stream handlers (UI thread) ----------------------------------------------------
    def set_run(self, points: list[Any]) -> None:
        """Replace the shown workload's run with ``points`` (all of that workload) and show it."""
        self.results.set_run(self.results.shown, points)
        self._workload_shown(force=True)

    def add_point(self, point: Any) -> None:
        """One point of the run under way (the stream's handler, on the UI thread)."""
        # The table row now, the plot on the next turn of the event loop: two short steps
        # instead of one long one, and points arriving together are drawn once.
        if not self.results.add(point):
            return  # a late point of a run whose workload is no longer shown: kept, not drawn
        self.table.results.point_added()
        if len(self.points) == 1:
            self.exports_changed.emit()
        if not self._plot_pending:
            self._plot_pending = True
            QTimer.singleShot(0, self._refresh_plot)

    def _refresh_plot(self) -> None:
        self._plot_pending = False
        self.plot.set_points(self.points)
        self._refresh_roofline()

    def add_remote_roof(self, roof: Any) -> None:
        """A remote device's roof, as its machine measured and sent it (``Roof.host`` names it)."""
        self._remote_roofs[(roof.host, roof.device)] = roof
        self._refresh_roofline()

    def _refresh_roofline(self) -> None:
        """Each device of the run under its roofs (read from the per-machine cache the worker
        fills; a remote's as that machine sent them), and the catalog GPU's spec-sheet roof when
        one is chosen."""
        from explorer.bench import peaks

        records = {d.key: d for d in self._context.devices}
        # this machine's roofs from its cache; a remote point's ceilings are that machine's
        local = [p for p in self.points if not p.host]
        devices = list(dict.fromkeys(p.device for p in local)) or (["cpu"] if not self.points else [])
        roofs = [peaks.record_roof(key, records.get(key)) for key in devices if key in records]
        remote = dict.fromkeys((p.host, p.device) for p in self.points if p.host)
        roofs += [self._remote_roofs[key] for key in remote if key in self._remote_roofs]
        catalog = None
        if self._catalog_roof_key:
            try:
                catalog = peaks.catalog_roof(self._catalog_roof_key)
            except KeyError:
                catalog = None
        self.roofline.set_data(roofs, self.points, catalog)

    def _devices_found(self) -> None:
        devices = self._context.devices
        self.roofline.set_catalog_choices([(d.key, d.name) for d in devices if d.kind == "catalog"])
        if devices:
            self._refresh_roofline()

    def _choose_catalog_roof(self, key: str) -> None:
        self._catalog_roof_key = key
        self._refresh_roofline()

    def show_waiting(self, line: str) -> None:
        """The engine's word that the run queues behind another run on the same GPU, shown on the
        progress bar until the next point or progress record replaces it."""
        self.progress_bar.setFormat(line)

    def _on_progress(self, progress: Any) -> None:
        self._total = progress.total
        self.progress_bar.setRange(0, max(progress.total, 1))
        self.progress_bar.setValue(progress.done)
        self.progress_bar.setFormat(f"{progress.done} / {progress.total} points")
        self.status_label.setText(eta_text(progress.eta_s))

    def _on_ended(self) -> None:
        stream, self._stream = self._stream, None
        self.controls.set_running(False)
        self.plot.set_running(False)
        done = len(self.points)
        if self.progress_bar.maximum() == 0:
            self.progress_bar.setRange(0, max(self._total, 1))
            self.progress_bar.setValue(min(done, max(self._total, 1)))
        if stream is not None and stream.cancelled:
            self.progress_bar.setFormat(f"stopped: {done} / {self._total or done} points")
        else:
            self.progress_bar.setFormat(f"done: {done} / {self._total or done} points")
        self.status_label.setText("")
        self._save_last()
        self._update_resume()
        errors = sum(1 for p in self.points if p.error)
        noisy = self.results.noisy_count()
        self._context.status_message.emit(
            f"Benchmark {'stopped' if stream is not None and stream.cancelled else 'finished'}: "
            f"{done} points"
            + (f", {errors} with errors (see the red rows)" if errors else "")
            + (f", {noisy} disturbed by other programs (tinted rows, hollow markers)" if noisy else "")
        )
        if stream is not None:
            stream.deleteLater()
        self.run_finished.emit()

    def resume_left(self) -> int:
        """How many points of the last run started here have no result (0: none, or no such run)."""
        plan = self._last_plan
        if plan is None or self.running:
            return 0
        from explorer.bench.resume import resume

        try:
            return resume(plan, self.results.points_of(plan.workload)).left
        except UserError:
            return 0

    def _update_resume(self) -> None:
        """Offer Resume while the shown run is the last one started here and it left points unmeasured."""
        plan = self._last_plan
        left = self.resume_left() if plan is not None and plan.workload == self.results.shown else 0
        self.resume_button.setVisible(left > 0)
        if left:
            where = f" on {plan.remote.host}" if plan.remote is not None else ""
            self.resume_button.setText(f"Resume ({left} left)")
            self.resume_button.setToolTip(
                f"Measure only the {left} point(s) of this run that have no result{where} "
                "(error rows, points not reached); the finished points are kept"
            )

    def _workload_shown(self, force: bool = False) -> None:
        """Show the chosen workload's own run (or nothing yet): never another workload's points."""
        shown = self.results.show(self.controls.workload.name)
        self._update_resume()
        self._show_titles(next((p.host for p in self.points if p.host), ""))
        if not shown and not force:
            return
        self.table.results.reload()
        self.plot.set_points(self.points)
        self._refresh_roofline()
        self.exports_changed.emit()
        if not self.running:
            done = len(self.points)
            self.progress_bar.setRange(0, max(done, 1))
            self.progress_bar.setValue(done)
            self.progress_bar.setFormat(
                f"{done} points from this workload's last run" if done else "no run of this workload yet"
            )

    def _show_titles(self, host: str) -> None:
        """The plot's title names the workload and, for a run on a remote machine, the machine."""
        w = self.controls.workload
        self.plot.set_titles(f"{w.title} ON {host}" if host else w.title, w.size_name)
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
    def _save_last(self) -> None:
        if not self.points:
            return
        try:
            from explorer.bench.results import save_last

            save_last(self.points)
        except OSError as exc:
            self._show_message(
                f"could not keep these results for next time in {exc.filename or 'the data folder'}: "
                f"{exc.strerror or exc}"
            )
        except ValueError as exc:  # a value JSON cannot hold (NaN): the old file stays
            self._show_message(f"could not keep these results for next time: {exc}")

    def _restore_last(self) -> None:
        from explorer.bench.results import load_last

        loaded = load_last()  # never raises: a damaged file is moved aside and named
        self._context.add_notice(loaded.notice)
        points = loaded.value
        if not points:
            return
        workload = points[0].workload
        points = [p for p in points if p.workload == workload]  # one run is one workload
        self.results.set_run(workload, points)
        try:
            self.controls.set_workload(workload)
        except UserError:
            return  # a workload this version no longer has: its run is kept, not shown
        self._workload_shown(force=True)
        self.progress_bar.setRange(0, len(points))
        self.progress_bar.setValue(len(points))
        measured = time.strftime("%d %b %H:%M", time.localtime(max(p.timestamp for p in points)))
        self.progress_bar.setFormat(f"last results: {len(points)} points, measured {measured}")

    def _show_message(self, text: str | None) -> None:
        self.message_label.setText(text or "")
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
        self._context.status_message.emit(f"wrote {written}")
