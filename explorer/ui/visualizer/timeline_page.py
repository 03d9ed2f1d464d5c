"""The visualizer's "Timeline in time" tab: the launch dispatched as slots free, on the session's clock.

A view of ``TimeViews`` (``explorer.launch.time_views``) and the ``LaunchSession`` beside it: the
controls hand the model what the teacher chose (durations as ``dispatch --durations`` takes them,
the placement policy, the seed), the ``TimelineView`` draws the model's ``DispatchResult`` at the
session's moment (one wave of the clock is one mean block, so the wave picture's Play, wave steps
and speed move it too), and the measured row runs the same launch as spin blocks on this
machine's GPU and draws that timeline under the simulated one; without a GPU it says why in one
line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.errors import UserError
from explorer.jitcache import CompileNotice
from explorer.launch.dispatch import POLICIES, POLICY_WORDS, warm_up
from explorer.launch.durations import DURATION_FORMS
from explorer.launch.time_views import MAX_SEED, TimeViews
from explorer.quiz.page_predict import PagePredict, dispatch_params
from explorer.ui.guard import qt_guard
from explorer.ui.predict_box import PredictBox, cover_label, predict_button
from explorer.ui.visualizer.measure_row import MeasureRow
from explorer.ui.visualizer.timeline_view import TimelineView
from explorer.ui.widgets import JoiningRows, number_field
from explorer.ui.workers import run_in_daemon_thread

log = logging.getLogger(__name__)

#: the durations offered in the menu (any other text in the same forms may be typed)
DURATION_EXAMPLES = ("uniform", "jitter:0.2", "heavy:1.5", "rows:1,1,1,8", "rows:8,1,1,1", "rows:mandelbrot")
DURATIONS_TIP = (
    "How long each block runs, in units of the mean block: " + DURATION_FORMS + ". Type one and press "
    "Enter, or choose an example."
)
#: where the Timeline's predictions are kept in the answers file (its "lesson" column)
PREDICT_PAGE = "timeline page"
MEASURE_TIP = (
    "Run this grid and block on this machine's GPU as blocks that each spin a fixed time, recording "
    "every block's SM and start and end, and draw that timeline under the simulated one"
)


class TimelinePage(QWidget):
    """Controls, the simulated timeline and the measured one, for ``model``'s edited launch.
    ``why_no_gpu`` gives discovery's reason there is no usable GPU here ("" when there is one)."""

    def __init__(
        self, model: TimeViews, why_no_gpu: Callable[[], str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.session = model.session
        self._why_no_gpu = why_no_gpu
        self._warmed = False
        self.durations_box = QComboBox()
        self.durations_box.setEditable(True)
        self.durations_box.addItems(DURATION_EXAMPLES)
        self.durations_box.setToolTip(DURATIONS_TIP)
        self.durations_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.durations_box.setMinimumContentsLength(12)
        self.durations_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.file_button = QPushButton("File...")
        self.file_button.setToolTip("Read one duration per block from a text file (file:PATH)")
        self.policy_box = QComboBox()
        for i, policy in enumerate(POLICIES):
            self.policy_box.addItem(policy)
            self.policy_box.setItemData(i, POLICY_WORDS[policy], Qt.ItemDataRole.ToolTipRole)
        self.policy_box.setToolTip("Which SM gets the next block when several slots free at once")
        self.seed_spin = number_field(QSpinBox())
        self.seed_spin.setRange(0, MAX_SEED)
        self.seed_spin.setToolTip(
            "The seed of random durations (jitter, heavy): the same seed, the same launch"
        )
        self.refused = QLabel("")  # the core's one line for durations that do not parse
        self.refused.setWordWrap(True)
        self.refused.setProperty("role", "error")
        self.refused.hide()
        # numba's first compile of the dispatch loop, said while it runs (hidden from a warm cache)
        self.compiling = QLabel("")
        self.compiling.setWordWrap(True)
        self.compiling.hide()
        self._compile_text = ""
        self._compile_clock = QElapsedTimer()
        self._compile_ticker = QTimer(self)
        self._compile_ticker.setInterval(1000)
        self._compile_ticker.timeout.connect(self._tick_compiling)

        row1 = QHBoxLayout()
        row1.addWidget(QLabel("Durations"))
        row1.addWidget(self.durations_box, 1)
        row1.addWidget(self.file_button)
        row2 = QHBoxLayout()
        row2.addWidget(QLabel("Placement"))
        row2.addWidget(self.policy_box)
        row2.addSpacing(12)
        row2.addWidget(QLabel("Seed"))
        row2.addWidget(self.seed_spin)
        row2.addStretch(1)
        self.view = TimelineView()
        self.measured_view = TimelineView()
        self.measured_view.hide()
        self.measure = MeasureRow("Measure on this GPU", MEASURE_TIP)
        # Predict: the simulated timeline gives the launch's time away; it waits for the answer
        self.predict = PagePredict("dispatch", "makespan", PREDICT_PAGE)
        self.predict_button = predict_button(
            "Predict, then reveal: how long the launch takes (in mean blocks) asks for your prediction "
            "first and shows the timeline once you commit it"
        )
        self.predict_button.toggled.connect(self.predict.set_on)
        row1.addWidget(self.predict_button)  # the durations box gives it room: row 2 has none
        self.cover = cover_label()
        self.predict_box = PredictBox(self.predict, self._cover)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.settings_rows = JoiningRows(row1, row2)
        lay.addWidget(self.settings_rows)
        lay.addWidget(self.refused)
        lay.addWidget(self.compiling)
        lay.addWidget(self.predict_box)
        lay.addWidget(self.cover, 1)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.measured_view, 1)
        lay.addWidget(self.measure)

        line = self.durations_box.lineEdit()
        assert line is not None  # the box is editable
        line.editingFinished.connect(self._typed)
        self.durations_box.activated.connect(lambda _i: self._typed())
        self.file_button.clicked.connect(self._choose_file)
        self.policy_box.activated.connect(lambda i: model.set_policy(POLICIES[i]))
        self.seed_spin.setKeyboardTracking(False)
        self.seed_spin.valueChanged.connect(model.set_seed)
        self.measure.on_click = self._measure
        model.events.dispatch.connect(self._show_dispatch)
        model.events.measured.connect(self._show_measured)
        self.session.events.moment.connect(self._show_moment)
        self.session.events.launch.connect(self._follow_launch)
        self.session.events.devices.connect(self._follow_launch)
        self._show_dispatch()
        self._follow_launch()

    # --- the teacher chooses ------------------------------------------------------------------
    def _typed(self) -> None:
        text = self.durations_box.currentText().strip()
        refused = self.model.durations_refused
        if text != self.model.dispatch_settings.durations or (refused is not None and text != refused[0]):
            self.model.set_durations(text)

    def _choose_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Block durations: one number per block", "", "Text files (*.txt *.csv);;All files (*)"
        )
        if path:
            self.model.set_durations(f"file:{path}")

    # --- the model, shown ----------------------------------------------------------------------
    def _show_dispatch(self) -> None:
        m = self.model
        s = m.dispatch_settings
        refused = m.durations_refused
        if refused is None and self.durations_box.currentText() != s.durations:
            self.durations_box.setEditText(s.durations)
        self.refused.setVisible(refused is not None)
        self.refused.setText(refused[1] if refused is not None else "")
        self.policy_box.setCurrentIndex(POLICIES.index(s.policy))
        self.seed_spin.blockSignals(True)
        self.seed_spin.setValue(s.seed)
        self.seed_spin.blockSignals(False)
        self.seed_spin.setEnabled(s.uses_seed)
        if m.dispatch is not None:
            self.view.set_dispatch(m.dispatch)
        elif m.dispatch_problem:
            self.view.set_unavailable(m.dispatch_problem)
        self._show_moment()
        self._ask()

    def _ask(self) -> None:
        """The launch shown, as its Predict question's parameters (one line where none fits)."""
        side = self.session.edited_side
        plan, choice = side.plan, side.choice
        if self.model.dispatch is None or plan is None or choice is None:
            self.predict.show(None, self.model.dispatch_problem or "no timeline to predict")
        else:
            c = plan.config
            try:
                params = dispatch_params(
                    choice.key,
                    (c.grid.x, c.grid.y, c.grid.z),
                    c.block.x * c.block.y * c.block.z,
                    c.regs_per_thread,
                    c.shared_mem_bytes,
                    self.model.dispatch_settings.durations,
                )
            except UserError as exc:
                self.predict.show(None, str(exc))
            else:
                self.predict.show(params)
        self._cover(self.predict.hidden)

    def _cover(self, hidden: bool) -> None:
        """While the answer is hidden the simulated timeline waits; a box asking stands there."""
        self.view.setVisible(not hidden)
        self.cover.setVisible(hidden)

    def _show_moment(self) -> None:
        self.view.set_time(self.model.time)
        if self.measured_view.shown is not None and self.model.measured is not None:
            # the measured launch on the same clock: one mean measured block per wave
            self.measured_view.set_time(self.model.time * self.model.measured.mean_block_ns)

    def _show_measured(self) -> None:
        measured = self.model.measured
        if measured is None:
            self.measured_view.hide()
            return
        self.measured_view.set_measured(measured)
        self.measured_view.show()
        self.measure.set_ready("; ".join(measured.summary_lines()[2:4]))
        self._show_moment()

    def _follow_launch(self) -> None:
        """A measurement belongs to its launch: a changed launch stops the one under way."""
        ready = (
            None
            if self.model.measured is not None
            else "Runs this grid and block as spin blocks on the GPU and draws what it did."
        )
        self.measure.follow(
            self.model.launch_key(), self.model.measure_problem(self._why_no_gpu()), self._why_no_gpu(), ready
        )

    def _measure(self) -> None:
        from explorer.errors import UserError
        from explorer.launch_runs.measured import check_measurable, measure_dispatch_here

        side = self.session.edited_side
        device, plan = side.device, side.plan
        if device is None or plan is None:
            return
        key = self.model.launch_key()
        try:
            check_measurable(plan)
        except UserError as exc:  # one line: too many blocks, too much shared memory
            self.measure.set_unavailable(str(exc))
            return
        self.measure.start(
            f"Measuring {plan.total_blocks:,} blocks on {device.name}",
            lambda on_process: measure_dispatch_here(plan, device, on_process=on_process),
            lambda result: self.model.take_measured(key, result),
            key,
        )

    # --- the window -----------------------------------------------------------------------------
    @qt_guard
    def showEvent(self, event) -> None:
        """Shown the first time: numba gets the event loop ready in the background meanwhile."""
        super().showEvent(event)
        if not self._warmed:
            self._warmed = True

            # a failed warm-up costs only the wait it meant to save: the first uneven launch compiles
            # only the notice crosses threads (one queued signal): the seconds are counted here
            def warm(progress: Callable[[CompileNotice], None]) -> None:
                warm_up(say=lambda notice: progress(notice) if notice.kind == "start" else None)

            run_in_daemon_thread(
                warm,
                lambda _none: None,
                lambda exc: log.warning("the dispatch warm-up failed: %s", exc),
                on_progress=self._show_compiling,
                on_finished=self._compiled,
                parent=self,
                name="dispatch warm-up",
            )

    def _show_compiling(self, notice: CompileNotice) -> None:
        """numba's first compile of the dispatch loop: its notice, then the seconds so far."""
        if not self._compile_text:
            self._compile_text = notice.text
            self._compile_clock.start()
            self._compile_ticker.start()
        self._tick_compiling()
        self.compiling.show()

    def _tick_compiling(self) -> None:
        seconds = self._compile_clock.elapsed() // 1000
        self.compiling.setText(
            f"{self._compile_text} ({seconds} s so far)" if seconds else self._compile_text
        )

    def _compiled(self) -> None:
        self._compile_ticker.stop()
        self.compiling.hide()

    def apply_text_scale(self) -> None:
        for view in (self.view, self.measured_view):
            view.apply_text_scale()

    def shutdown(self) -> None:
        self.measure.shutdown()
