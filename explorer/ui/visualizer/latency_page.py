"""The visualizer's "Latency hiding" tab: the warps the launch leaves resident, hiding a latency.

A view of ``TimeViews`` (``explorer.launch.time_views``): the controls choose a published latency
(each preset's source is its tooltip and is printed under the chart), K independent arithmetic
instructions per load and the schedulers' policy; the ``LatencyView`` draws the model's run for
the resident warps per SM that the edited launch's occupancy gives (so more registers or shared
memory per block visibly hide less) and plays through its cycles on the model's cycle clock, moved
by a frame clock. The measured row sweeps warps per SM on this machine's GPU and draws the
bandwidth over Little's law; without a GPU it says why in one line.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from explorer.launch.latency import MAX_ALU, MEASURED_PRESET_KEY, POLICIES, POLICY_WORDS, PRESETS
from explorer.launch.time_views import LatencySettings, TimeViews
from explorer.quiz.page_predict import PagePredict
from explorer.ui.guard import qt_guard
from explorer.ui.predict_box import PredictBox, cover_label, predict_button
from explorer.ui.visualizer.latency_view import LatencyView
from explorer.ui.visualizer.measure_row import MeasureRow
from explorer.ui.visualizer.playback import FrameClock
from explorer.ui.widgets import FoldingCaption, JoiningRows, number_field

#: where the Latency tab's predictions are kept in the answers file (its "lesson" column)
PREDICT_PAGE = "latency page"
SWEEP_TIP = (
    "Measure one load's latency on this machine's GPU (a pointer chase), then the bandwidth of a "
    "streaming read with 1, 2, 4 ... warps per SM, and draw it over Little's law"
)


class LatencyPage(QWidget):
    """Controls, the latency chart and curve, and the measured sweep, for ``model``'s edited launch."""

    def __init__(
        self, model: TimeViews, why_no_gpu: Callable[[], str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.session = model.session
        self._why_no_gpu = why_no_gpu
        self.preset_box = QComboBox()
        for i, p in enumerate(PRESETS):
            self.preset_box.addItem(p.label)
            self.preset_box.setItemData(i, "source: " + p.source, Qt.ItemDataRole.ToolTipRole)
        self.preset_box.setMinimumContentsLength(14)
        self.preset_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.alu_spin = number_field(QSpinBox())
        self.alu_spin.setRange(0, MAX_ALU)
        self.alu_spin.setKeyboardTracking(False)
        self.alu_spin.setToolTip("K: independent arithmetic instructions each warp issues after its load")
        self.policy_box = QComboBox()
        for i, policy in enumerate(POLICIES):
            self.policy_box.addItem(policy)
            self.policy_box.setItemData(i, POLICY_WORDS[policy], Qt.ItemDataRole.ToolTipRole)
        self.policy_box.setToolTip("Which ready warp each scheduler issues from")
        self.play_button = QPushButton("Play cycles")
        self.play_button.setToolTip(
            "Scroll the chart through the simulated cycles (Space while this tab is shown)"
        )
        # where the warps come from: every line where the page has room, else as many as it has,
        # the whole on hover (wrapped in full, at 200% it pushed the chart into the row below)
        self.caption = FoldingCaption("")
        self.caption.setProperty("role", "caption")
        #: "L measured on this GPU": L from the edited GPU's stored latency ladder (its DRAM level)
        self.measured_button = QPushButton("L measured on this GPU")
        row1 = QHBoxLayout()
        row1.addWidget(QLabel("Latency"))
        row1.addWidget(self.preset_box, 1)
        row2 = QHBoxLayout()
        row2.addWidget(QLabel("K"))
        row2.addWidget(self.alu_spin)
        row2.addSpacing(12)
        row2.addWidget(QLabel("Policy"))
        row2.addWidget(self.policy_box)
        row2.addStretch(1)
        row2.addWidget(self.play_button)
        self.view = LatencyView()
        # the chart and the graph keep their least height (their plots MIN_PLOT_LINES lines of
        # their axis text): where the page is shorter (a lesson open at 150% on 1024x768, 250%
        # on 1920x1080) the view scrolls up and down in its own area, never squashed (the graph
        # was 30 px tall with its labels written over the curve), and the page still fits
        self.view_area = QScrollArea()
        self.view_area.setObjectName("latencyViewArea")
        self.view_area.setWidget(self.view)
        self.view_area.setWidgetResizable(True)
        self.view_area.setFrameShape(QFrame.Shape.NoFrame)
        self.view_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # scrolled, it keeps the plots and their axes in view (at its top, the figures over them
        # were shown and the graph's x axis was below the fold): looked at whenever the scroll
        # range changes, which a resize of the area or of the view does (a signal, not an event
        # filter on the children, which Qt may call while this page is being destroyed)
        self.view_area.verticalScrollBar().rangeChanged.connect(self._scroll_range_changed)
        self.measure = MeasureRow("Measure bandwidth", SWEEP_TIP)
        # Predict: the chart and the curve give U and N* away; they wait for the student's answer
        self.predict = PagePredict(
            "latency", "utilization", PREDICT_PAGE, concepts=("utilization", "warps_needed")
        )
        self.predict_button = predict_button(
            "Predict, then reveal: the share of issue slots used (or the warps needed) asks for your "
            "prediction first and shows the chart once you commit it"
        )
        self.predict_button.toggled.connect(self.predict.set_on)
        row2.addWidget(self.predict_button)
        self.cover = cover_label()
        self.predict_box = PredictBox(self.predict, self._cover)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.settings_rows = JoiningRows(row1, row2)
        lay.addWidget(self.settings_rows)
        lay.addWidget(self.caption)
        lay.addWidget(self.predict_box)
        lay.addWidget(self.view_area, 1)
        lay.addWidget(self.cover, 1)
        # beside the measured row: both are this GPU's own figures, not published ones
        measured_row = QHBoxLayout()
        measured_row.setContentsMargins(0, 0, 0, 0)
        measured_row.addWidget(self.measured_button)
        measured_row.addWidget(self.measure, 1)
        lay.addLayout(measured_row)

        self.frame_clock = FrameClock(model.cycles, self)
        self.preset_box.activated.connect(self._choose_index)
        self.measured_button.clicked.connect(self._use_measured)
        self.alu_spin.valueChanged.connect(lambda k: self._choose(alu=k))
        self.policy_box.activated.connect(lambda i: self._choose(policy=POLICIES[i]))
        self.play_button.clicked.connect(model.cycles.toggle_play)
        self.measure.on_click = self._measure
        model.events.latency.connect(self._show_latency)
        model.events.measured.connect(self._show_sweep)
        model.cycles.events.moment.connect(self._show_cycle)
        self.session.events.launch.connect(self._follow_launch)
        self.session.events.launch.connect(self._show_measured_choice)
        self.session.events.devices.connect(self._follow_launch)
        self._show_latency()
        self._follow_launch()

    def _choose_index(self, i: int) -> None:
        self._choose(preset=PRESETS[i].key if i < len(PRESETS) else MEASURED_PRESET_KEY)

    def _use_measured(self) -> None:
        if self.model.measured_preset is not None:
            self.model.use_measured_latency()

    def _choose(self, **change: object) -> None:
        s = self.model.latency_settings
        fields = {"preset": s.preset, "alu": s.alu, "policy": s.policy, **change}
        self.model.set_latency(LatencySettings(**fields))  # type: ignore[arg-type]

    # --- the model, shown ----------------------------------------------------------------------
    def _show_latency(self) -> None:
        m = self.model
        s = m.latency_settings
        self._show_measured_choice()
        keys = [p.key for p in PRESETS] + ([MEASURED_PRESET_KEY] if m.measured_preset is not None else [])
        self.preset_box.setCurrentIndex(keys.index(s.preset) if s.preset in keys else 0)
        self.preset_box.setToolTip("source: " + m.preset.source)
        self.alu_spin.blockSignals(True)
        self.alu_spin.setValue(s.alu)
        self.alu_spin.blockSignals(False)
        self.policy_box.setCurrentIndex(POLICIES.index(s.policy))
        self.play_button.setEnabled(m.latency is not None)
        if m.latency is not None:
            self.view.set_model(m.latency, m.curve, m.preset)
            QTimer.singleShot(0, self, self.keep_plots_in_view)  # its figures may take other lines
            self.caption.setText(m.latency_caption())
        else:
            self.caption.setText(m.latency_problem)
        self._show_sweep()
        self._show_cycle()
        self._ask()

    def _show_measured_choice(self) -> None:
        """The measured preset as the list's last item while the edited GPU has one; the button
        enabled then, else disabled with why on hover."""
        measured = self.model.measured_preset
        if self.preset_box.count() > len(PRESETS):
            self.preset_box.removeItem(len(PRESETS))
        if measured is not None:
            self.preset_box.addItem(measured.label)
            self.preset_box.setItemData(
                len(PRESETS), "source: " + measured.source, Qt.ItemDataRole.ToolTipRole
            )
        self.measured_button.setEnabled(measured is not None)
        self.measured_button.setToolTip(
            f"Set L to this GPU's own DRAM latency: {measured.source}"
            if measured is not None
            else f"Not available: {self.model.measured_preset_why}"
        )

    def _ask(self) -> None:
        """The run shown, as its Predict question's parameters: the closed form the question
        grades by is exact for GTO, so another policy's run is shown, with why it asks nothing."""
        m = self.model
        run = m.latency
        if run is None:
            self.predict.show(None, m.latency_problem or "no run to predict")
        elif run.config.policy != "gto":
            self.predict.show(
                None, "the question's closed form is exact for the gto policy: choose gto to predict"
            )
        else:
            c = run.config
            self.predict.show(
                {"warps": c.warps, "mem_latency": c.mem_latency, "alu": c.alu, "schedulers": c.schedulers}
            )
        self._cover(self.predict.hidden)

    @qt_guard
    def _scroll_range_changed(self, _lowest: int, _highest: int) -> None:
        QTimer.singleShot(0, self, self.keep_plots_in_view)  # once the area is laid out again

    def keep_plots_in_view(self) -> None:
        """Where the page is shorter than the view (a lesson open at 150% on 1024x768), scroll it
        to the chart and the graph with their axes and the legend, the figures over them above
        the fold (the title and the numbers say them again); the view is made as tall as puts the
        legend's end at the fold. A row taller than the view shows its axes."""
        bar = self.view_area.verticalScrollBar()
        room = self.view_area.viewport().height()
        fit = self.view.height_to_fit(room)
        if fit != self.view.minimumHeight():  # the row (and its legend) fill the area exactly
            self.view.setMinimumHeight(fit)
            # at once, not at the next layout pass: the scroll range follows now, so a picture
            # taken once the layouts stop moving never sees the view between the two heights
            least = self.view.minimumSizeHint().height()
            self.view.resize(self.view.width(), max(fit, least, room))
        if bar.maximum() <= 0:
            return
        top, bottom = self.view.plots_span()
        if self.view.legend_bottom() - top <= room:
            bottom = self.view.legend_bottom()  # the legend too, ending at the fold
        if bar.value() <= top and bar.value() + room >= bottom:
            return  # in view already: the teacher's own scrolling stays
        bar.setValue(top if bottom - top <= room else bottom - room)

    def _cover(self, hidden: bool) -> None:
        """While the answer is hidden the chart and the curve wait; a box asking stands there."""
        self.view_area.setVisible(not hidden)
        self.cover.setVisible(hidden)

    def _show_cycle(self) -> None:
        cycles = self.model.cycles
        self.view.set_cycle(cycles.cycle)
        self.play_button.setText("Pause cycles" if cycles.playing else "Play cycles")

    def _show_sweep(self) -> None:
        sweep = self.model.sweep
        self.view.set_sweep(sweep)
        if sweep is not None:
            self.measure.set_ready(sweep.summary_lines()[1])

    def _follow_launch(self) -> None:
        """A sweep belongs to its device: another device stops the one under way."""
        side = self.session.edited_side
        ready = (
            None
            if self.model.sweep is not None
            else "Sweeps warps per SM on the GPU and draws the bandwidth over Little's law."
        )
        self.measure.follow(
            side.choice.key if side.choice is not None else "",
            self.model.measure_problem(self._why_no_gpu()),
            self._why_no_gpu(),
            ready,
        )

    def _measure(self) -> None:
        from explorer.launch_runs.measured import measure_bandwidth_here

        side = self.session.edited_side
        device, limits = side.device, side.limits
        if device is None or side.choice is None:
            return
        key = side.choice.key
        most = limits.max_warps_per_sm if limits is not None else 64
        self.measure.start(
            f"Measuring bandwidth on {device.name}",
            lambda on_process: measure_bandwidth_here(most, device, on_process=on_process),
            lambda sweep: self.model.take_sweep(key, sweep),
            key,
        )

    # --- the window -----------------------------------------------------------------------------
    def apply_text_scale(self) -> None:
        self.view.apply_text_scale()
        # the area asks the page for the view's title and first lines at least: the rest scrolls
        self.view_area.setMinimumHeight(4 * QFontMetrics(self.view.fonts().body).lineSpacing())

    def figure_wants(self) -> int:
        """Height the view would take beyond what its area asks the page for, to show whole: the
        lesson pane leaves it this much before its narration takes more than its least lines."""
        return max(0, self.view.minimumSizeHint().height() - self.view_area.minimumHeight())

    def shutdown(self) -> None:
        self.frame_clock.stop()
        self.model.cycles.pause()
        self.measure.shutdown()
