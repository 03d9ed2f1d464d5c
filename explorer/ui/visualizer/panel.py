"""The Launch visualizer panel: controls, the animated SMs, the inspector, occupancy and the real run.

It wires the pieces and holds no launch arithmetic: every number shown comes from the core's
``LaunchPlan`` / ``Occupancy`` / sweeps, and the animation's clock from ``animation.Animation``.
An invalid configuration shows the core's one-line message and leaves the last valid picture up.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut, QWheelEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import Gpu
from explorer.errors import UserError
from explorer.launch.animation import (
    DEFAULT_SPEED_INDEX,
    DISPATCH,
    RUN,
    SPEEDS_WAVES_PER_S,
    Animation,
)
from explorer.launch.compare import Comparison, Side, compare_sides, side_from_text
from explorer.launch.config import notes, parse_launch, parse_thread_ref
from explorer.launch.limits import limits_for_device
from explorer.launch.lockstep import LockStep
from explorer.launch.presets import PRESETS
from explorer.launch.schedule import SCHEDULER_NOTE, LaunchPlan, plan_launch
from explorer.launch.texts import (
    WARNING,
    Phrase,
    Text,
    cannot_launch,
    html,
    launch_summary,
    plain,
    readings,
    tail_text,
)
from explorer.lessons.files import thread_ref_text
from explorer.lessons.model import SIDE_TABS, PanelState, VisualizerState
from explorer.lessons.resolve import visualizer_device
from explorer.ui.context import AppContext
from explorer.ui.guard import qt_guard
from explorer.ui.panel import Panel
from explorer.ui.sidepanel import SidePanel, fit_side_panels
from explorer.ui.theme import Theme, current_theme, px, text_scale_pct
from explorer.ui.visualizer.compare_view import CompareView, SideSetup
from explorer.ui.visualizer.controls import LaunchControls
from explorer.ui.visualizer.inspector import Inspector
from explorer.ui.visualizer.occupancy_view import OccupancyView
from explorer.ui.visualizer.realrun_view import RealRunView
from explorer.ui.visualizer.scene import Hit, SmGrid
from explorer.ui.visualizer.wavebar import Legend, WaveBar

FRAME_INTERVAL_MS = 16
# widths at 100% text (they grow with it): controls need the room for digits, the graphs do not;
# the SM picture keeps at least CENTRE_MIN, and a side column folds away when it cannot
LEFT_WIDTH = 350
RIGHT_WIDTH = 290
CENTRE_MIN = 360
CENTRE_MIN_COMPARE = 560  # two SM pictures side by side, and the table under them
ZOOMS = (1.0, 1.5, 2.0, 3.0)


#: the panel's keys: (key sequence, what it does, method, arguments); an empty description marks an
#: alias (= for +, as on keyboards where + needs Shift). Help > Keyboard shortcuts lists the rest.
KEYS: tuple[tuple[str, str, str, tuple[int, ...]], ...] = (
    ("Space", "play / pause the animation", "toggle_play", ()),
    ("Right", "next wave", "step_wave", (1,)),
    ("Left", "previous wave", "step_wave", (-1,)),
    ("Shift+Right", "next block", "step_block", (1,)),
    ("Shift+Left", "previous block", "step_block", (-1,)),
    ("+", "faster", "change_speed", (1,)),
    ("=", "", "change_speed", (1,)),
    ("-", "slower", "change_speed", (-1,)),
    ("Home", "restart from the first wave", "restart", ()),
    # (Ctrl+= / Ctrl+- are the window's text size)
    ("Ctrl+Up", "zoom in on the SMs", "zoom", (1,)),
    ("Ctrl+Down", "zoom out", "zoom", (-1,)),
)


class VisualizerPanel(Panel):
    """``VisualizerPanel(context, parent)``: the main window's "Launch visualizer" tab."""

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.plan: LaunchPlan | None = None
        self.anim: Animation | None = None
        self._pinned: tuple[int, int, int] | None = None
        self._hover: Hit | None = None  # what the pointer is over: asked again as the animation moves
        self._zoom_index = 0
        self._speed_index = DEFAULT_SPEED_INDEX  # kept while no launch is valid (no animation)
        self._wanted_device = ""  # a remembered device key not (yet) among the devices found
        self._zoom_pending = False
        self._real_run_for: tuple[str, object] | None = None  # (device key, launch) of the real run
        #: a remote GPU's key in the device list -> (its Remote, its CUDA index there)
        self._remote_gpus: dict[str, tuple[Any, int]] = {}
        self._summary_text: Text = ()
        # compare mode (issue 15.4): the form edits one side; the other side's setup waits here
        self.compare_on = False
        self.selected_side = 0  # 0: A, 1: B
        self._setups: list[SideSetup] = []
        self.plan_b: LaunchPlan | None = None
        self.anim_b: Animation | None = None
        self.comparison: Comparison | None = None
        self._lock: LockStep | None = None
        self._loading_side = False  # the form is being filled from a side: one recompute after
        self._hover_side = 0  # which side's SMs the pointer is over (compare mode)
        self._pinned_side = 0  # which side's SMs hold the pinned thread

        # left: controls, playback, inspector
        self.controls = LaunchControls()
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Play / pause (Space)")
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Back to the first wave (Home)")
        self.back_wave_button = QPushButton("< Wave")
        self.back_wave_button.setToolTip("Previous wave (Left)")
        self.wave_button = QPushButton("Wave >")
        self.wave_button.setToolTip("Next wave (Right)")
        self.back_block_button = QPushButton("< Block")
        self.back_block_button.setToolTip("One block back (Shift+Left)")
        self.block_button = QPushButton("Block >")
        self.block_button.setToolTip("Dispatch one more block (Shift+Right)")
        self.slower_button = QPushButton("-")
        self.slower_button.setToolTip("Slower (-)")
        self.faster_button = QPushButton("+")
        self.faster_button.setToolTip("Faster (+)")
        self.speed_label = QLabel("")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setCheckable(True)
        self.compare_button.setToolTip(
            "Split the SMs into launch A and launch B (B starts as a copy of A), on one clock; "
            "the launch controls edit the side whose A or B button is down"
        )
        playback = QGroupBox("Animation")
        pl = QVBoxLayout(playback)
        row1 = QHBoxLayout()
        for b in (self.play_button, self.restart_button, self.compare_button):
            row1.addWidget(b)
        row2 = QHBoxLayout()
        for b in (self.back_wave_button, self.back_block_button, self.block_button, self.wave_button):
            row2.addWidget(b)
        row3 = QHBoxLayout()
        row3.addWidget(QLabel("Speed"))
        row3.addWidget(self.slower_button)
        row3.addWidget(self.speed_label, 1, Qt.AlignmentFlag.AlignCenter)
        row3.addWidget(self.faster_button)
        for r in (row1, row2, row3):
            pl.addLayout(r)
        self.inspector = Inspector()
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        # playback first: the Play button stays put whatever the lesson caption below it wraps to
        ll.addWidget(playback)
        self.editing_label = QLabel("")
        self.editing_label.setWordWrap(True)
        self.editing_label.hide()
        ll.addWidget(self.editing_label)
        ll.addWidget(self.controls)
        # a 3D thread's formula runs long: the inspector scrolls rather than cut it off at 800 px
        inspector_scroll = QScrollArea()
        inspector_scroll.setWidgetResizable(True)
        inspector_scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        inspector_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inspector_scroll.setWidget(self.inspector)
        ll.addWidget(inspector_scroll, 1)
        self.left_side = SidePanel("Launch controls", left, "left")

        # centre: summary, wave bar, SMs, legend
        self.summary_label = QLabel("")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.wave_bar = WaveBar()
        self.grid = SmGrid()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.grid)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.grid.installEventFilter(self)
        self.legend = Legend()
        note = QLabel("Which SM gets which block: a simple round-robin model (hover for why).")
        note.setToolTip(SCHEDULER_NOTE)
        note.setProperty("role", "caption")
        note.setProperty("textSize", "tiny")
        note.setWordWrap(True)
        self.wave_bar.setToolTip(SCHEDULER_NOTE)
        centre = QWidget()
        cl = QVBoxLayout(centre)
        cl.setContentsMargins(0, 0, 0, 0)
        # compare mode: A and B side by side, the table under them (hidden until Compare)
        self.compare_box = CompareView()
        self.pane_a, self.pane_b = self.compare_box.pane_a, self.compare_box.pane_b
        self.compare_table = self.compare_box.table
        self.compare_box.hide()
        cl.addWidget(self.summary_label)
        cl.addWidget(self.wave_bar)
        cl.addWidget(self.scroll, 1)
        cl.addWidget(self.compare_box, 1)
        cl.addWidget(self.legend)
        cl.addWidget(note)

        # right: occupancy and the real run
        self.occupancy_view = OccupancyView()
        self.realrun_view = RealRunView()
        self.tabs = QTabWidget()
        self.tabs.addTab(self.occupancy_view, "Occupancy")
        self.tabs.addTab(self.realrun_view, "Run it for real")
        self.right_side = SidePanel("Occupancy and real run", self.tabs, "right")

        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.left_side)
        lay.addWidget(centre, 1)
        lay.addWidget(self.right_side)
        self._last_opened: SidePanel | None = None
        for side in (self.left_side, self.right_side):
            side.toggled_by_user.connect(lambda opened, s=side: self._side_toggled(s, opened))

        # animation clock
        self.timer = QTimer(self)
        self.timer.setInterval(FRAME_INTERVAL_MS)
        self.timer.timeout.connect(self._tick)
        self._elapsed = QElapsedTimer()

        # wiring
        self.controls.changed.connect(self.recompute)
        self.controls.field_left.connect(self.grid.setFocus)
        # a device the user picks wins over a remembered one that discovery has not found yet
        self.controls.device_combo.activated.connect(lambda _i: setattr(self, "_wanted_device", ""))
        self.play_button.clicked.connect(self.toggle_play)
        self.restart_button.clicked.connect(self.restart)
        self.wave_button.clicked.connect(lambda: self.step_wave(1))
        self.back_wave_button.clicked.connect(lambda: self.step_wave(-1))
        self.block_button.clicked.connect(lambda: self.step_block(1))
        self.back_block_button.clicked.connect(lambda: self.step_block(-1))
        self.faster_button.clicked.connect(lambda: self.change_speed(1))
        self.slower_button.clicked.connect(lambda: self.change_speed(-1))
        self.grid.hovered.connect(self._hovered)
        self.grid.clicked.connect(lambda hit: self._inspect(hit, pin=True))
        self.compare_button.toggled.connect(self.set_compare)
        for i, pane in enumerate((self.pane_a, self.pane_b)):
            pane.chosen.connect(lambda i=i: self.select_side(i))
            pane.grid.hovered.connect(lambda hit, i=i: self._hovered(hit, i))
            pane.grid.clicked.connect(lambda hit, i=i: self._inspect(hit, pin=True, side=i))
        self.realrun_view.button.clicked.connect(self.run_for_real)
        context.discovery_changed.connect(lambda _d: self._load_devices())
        context.remotes.changed.connect(self._load_devices)
        self._shortcuts = []
        for keys, _words, method, args in KEYS:
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
            sc.activated.connect(lambda m=method, a=args: getattr(self, m)(*a))
            self._shortcuts.append(sc)

        self.apply_text_scale(text_scale_pct())  # the window calls it again on every change
        self._load_devices()

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(1280, 800)

    # --- room: side columns and text size -----------------------------------------------------
    def apply_text_scale(self, percent: int) -> None:
        """Columns, buttons and painted text grow with the text; then fold what no longer fits."""
        self.left_side.set_body_width(px(LEFT_WIDTH))
        self.right_side.set_body_width(px(RIGHT_WIDTH))
        for b in (self.slower_button, self.faster_button):
            b.setFixedWidth(px(44))
        for painted in (self.wave_bar, self.legend, self.grid, self.pane_a, self.pane_b):
            painted.apply_text_scale()
        self.occupancy_view.apply_text_scale()
        self.realrun_view.apply_text_scale()
        self.fit_side_panels()

    def _side_toggled(self, side: SidePanel, opened: bool) -> None:
        if opened:
            self._last_opened = side
        self.fit_side_panels()

    def fit_side_panels(self) -> None:
        """Fold a side column when the SM picture would get less than ``CENTRE_MIN``: the right
        one (occupancy) before the left (the launch fields) unless the user chose otherwise."""
        if not self.isVisible():
            return  # a size before the page is shown is no size at all; resizeEvent comes then
        margins = self.layout().contentsMargins()
        room = self.width() - margins.left() - margins.right() - 2 * self.layout().spacing()
        centre = CENTRE_MIN_COMPARE if self.compare_on else CENTRE_MIN
        fit_side_panels((self.right_side, self.left_side), room, px(centre), self._last_opened)

    @qt_guard
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.fit_side_panels()

    # --- devices and configuration --------------------------------------------------------------
    def _load_devices(self) -> None:
        first_time = self.controls.device() is None
        gpus = self.context.gpus
        # a remote machine's GPUs after this machine's and before the catalog's, named with the host
        local = [d for d in gpus if d.kind == "cuda"]
        self.controls.set_devices(local + self._remote_gpu_records() + [d for d in gpus if d.kind != "cuda"])
        if self._wanted_device and self.controls.select_device_key(self._wanted_device):
            self._wanted_device = ""  # the remembered GPU has been found (discovery may come late)
        if first_time and not any(d.kind == "cuda" for d in self.context.gpus):
            # no GPU here: start on the lessons' laptop GPU when the catalog has it
            self.controls.select_device("1650")
        present = [d for d in self.context.gpus if d.kind == "cuda"]
        self.realrun_view.set_backend(not present, present[0].name if present else None)
        if first_time:
            self.controls.apply_preset(PRESETS[0])

    def _remote_gpu_records(self) -> list[Any]:
        """Each usable GPU of a reachable remote as a record keyed ``HOST-ID/cuda:N`` and named
        "... ON gpu-lab" (its key there may equal one here); ``_remote_gpus`` maps the key back."""
        import dataclasses

        self._remote_gpus = {}
        records = []
        for found in self.context.remotes.devices():
            gpu = found.device
            if gpu.kind != "cuda" or getattr(gpu, "index", None) is None:
                continue
            key = f"{found.host.ident}/{gpu.key}"
            self._remote_gpus[key] = (found.host.remote, gpu.index)
            records.append(dataclasses.replace(gpu, key=key, name=f"{gpu.name} ON {found.host.remote.host}"))
        return records

    def recompute(self) -> None:
        """Plan the launch the controls describe; one that cannot run shows why and nothing else."""
        if self._loading_side:
            return  # the form is being filled from a side; the caller recomputes once it is
        if self.compare_on:
            self._recompute_compare()
            return
        device = self.controls.device()
        if device is None:
            self._show_invalid("device discovery found neither a GPU nor a catalog entry")
            return
        try:
            config = parse_launch(*self.controls.texts())
            limits = limits_for_device(device)
            plan = plan_launch(config, device, limits)
        except UserError as exc:
            self._show_invalid(str(exc))
            return
        self.controls.show_error(None)
        if (device.key, config) != self._real_run_for:  # not a re-plan of the same launch
            self._forget_real_run()
        self.plan = plan
        if self.anim is None:
            self.anim = Animation(plan)
            self.anim.speed_index = self._speed_index
        else:
            self.anim.set_plan(plan)
        self._pinned = None
        self._hover = None
        self.grid.selected = None
        self.grid.set_animation(self.anim)
        self.inspector.show_hint()
        self.occupancy_view.update_for(plan, limits, notes(config, limits))
        self._summary_text = launch_summary(plan)
        self._write_summary()
        self._set_playable(True)
        self._refresh()

    def _show_invalid(self, message: str) -> None:
        """Issue 14.3: an invalid launch animates nothing and the summary says why, never the last one."""
        self.pause()
        self._forget_real_run()
        self.controls.show_error(message)
        self.plan = None
        self.anim = None
        self._pinned = None
        self._hover = None
        self.grid.selected = None
        self.grid.empty_text = "This launch cannot run: the message beside the launch fields says why."
        self.grid.set_animation(None)
        self.wave_bar.set_frame(None)
        self.inspector.show_hint()
        self.occupancy_view.show_invalid(message)
        self._summary_text = cannot_launch(message)
        self._write_summary()
        self._set_playable(False)

    def _set_playable(self, playable: bool) -> None:
        for button in (
            self.play_button,
            self.restart_button,
            self.back_wave_button,
            self.wave_button,
            self.back_block_button,
            self.block_button,
            self.realrun_view.button,
        ):
            button.setEnabled(playable)

    def _write_summary(self) -> None:
        """The core's words (the CLI prints the same) with the theme's warning colour."""
        self.summary_label.setText(html(self._summary_text, current_theme().error))
        plans = [("A", self.plan), ("B", self.plan_b)] if self.compare_on else [("", self.plan)]
        parts = [
            (f"{label}: {plan.device_name}\n" if label else "")
            + "\n".join(plain(line) for line in readings(plan))
            for label, plan in plans
            if plan is not None
        ]
        self.summary_label.setToolTip("\n\n".join(parts))

    # --- compare two launches (issue 15.4) ------------------------------------------------------
    def set_compare(self, on: bool) -> None:
        """Split the SMs into A and B. B starts as a copy of A at the same moment; turning compare
        off goes back to A alone, in the form too."""
        on = bool(on)
        if on == self.compare_on:
            self.compare_button.setChecked(on)
            return
        if on:
            a = self._setup_from_controls()
            self._setups = [a, a]
            self.selected_side = 0
            self.compare_on = True
        else:
            if self.selected_side != 0:
                self._load_setup(self._setups[0])
            self.compare_on = False
            self.selected_side = 0
            self._lock = None
            self.plan_b = self.anim_b = self.comparison = None
            self.pane_a.grid.set_animation(None)
            self.pane_b.grid.set_animation(None)
        self._pin(0, None)
        self._hover = None
        self.compare_button.setChecked(on)
        for widget in (self.wave_bar, self.scroll):
            widget.setVisible(not on)
        self.compare_box.setVisible(on)
        self._show_selected()
        self.fit_side_panels()
        self.recompute()

    def select_side(self, index: int) -> None:
        """Let the launch form edit side ``index`` (0: A, 1: B): what it held goes back to its side."""
        if not self.compare_on or index not in (0, 1) or index == self.selected_side:
            self._show_selected()
            return
        self._setups[self.selected_side] = self._setup_from_controls()
        self.selected_side = index
        self._load_setup(self._setups[index])
        self._show_selected()
        self.recompute()

    def _show_selected(self) -> None:
        self.pane_a.set_selected(self.compare_on and self.selected_side == 0)
        self.pane_b.set_selected(self.compare_on and self.selected_side == 1)
        self.editing_label.setVisible(self.compare_on)
        if self.compare_on:
            other = "AB"[1 - self.selected_side]
            self.editing_label.setText(
                f"<b>The fields below edit launch {'AB'[self.selected_side]}.</b> "
                f"Press {other} above its SMs to edit {other}."
            )

    def _setup_from_controls(self) -> SideSetup:
        device = self.controls.device()
        key = self._wanted_device or (device.key if device is not None else "")
        preset = self.controls.preset
        return SideSetup(key, *self.controls.texts(), preset.short_name if preset is not None else "")

    def _load_setup(self, setup: SideSetup) -> None:
        """Fill the form with a side's setup; the caller recomputes once, after."""
        self._loading_side = True
        try:
            if not self.controls.select_device_key(setup.device_key):
                self.controls.select_device(setup.device_key)
            try:
                launch = parse_launch(*setup.texts[:4])
            except UserError:
                pass  # a side's setup came from the form, so it parsed; a damaged saved one is skipped
            else:
                self.controls.set_launch(launch, setup.n, setup.preset)
        finally:
            self._loading_side = False

    def _plan_setup(self, label: str, setup: SideSetup) -> Side:
        return side_from_text(label, self._find_device(setup.device_key), setup.texts, setup.device_key)

    def _recompute_compare(self) -> None:
        """Plan both sides with the core, keep the moment shown, and fill the panes and the table."""
        self._setups[self.selected_side] = self._setup_from_controls()
        sides = [self._plan_setup(label, setup) for label, setup in zip("AB", self._setups, strict=True)]
        comparison = compare_sides(sides[0], sides[1])
        old = self._lock if self._lock is not None else self.anim  # just turned on: A's moment
        t, playing = (old.t, old.playing) if old is not None else (0.0, False)
        anims: list[Animation | None] = []
        for s in sides:
            anim = None
            if s.plan is not None:
                anim = Animation(s.plan)
                anim.speed_index = self._speed_index
            anims.append(anim)
        self.anim, self.anim_b = anims
        self.plan, self.plan_b = sides[0].plan, sides[1].plan
        self.comparison = comparison
        present = [a for a in anims if a is not None]
        self._lock = LockStep(present) if present else None
        if self._lock is not None:
            self._lock.seek(t)  # the same moment as before the edit, on both sides
            self._lock.playing = playing
        else:
            self.pause()
        self._pin(0, None)
        self._hover = None
        self.pane_a.show_side(sides[0], self.anim)
        self.pane_b.show_side(sides[1], self.anim_b)
        self.compare_box.set_comparison(comparison)
        edited = sides[self.selected_side]
        self.controls.show_error(edited.problem or None)
        device = self.controls.device()
        if edited.plan is not None and device is not None:
            limits = limits_for_device(device)
            self.occupancy_view.update_for(edited.plan, limits, notes(edited.plan.config, limits))
        else:
            self.occupancy_view.show_invalid(edited.problem)
        if device is None or (device.key, edited.config) != self._real_run_for:
            self._forget_real_run()
        self.inspector.show_hint()
        both_run = all(s.plan is not None for s in sides)
        self._summary_text = (Phrase(comparison.verdict(), "" if both_run else WARNING),)
        self._write_summary()
        self._set_playable(self._lock is not None)
        self.realrun_view.button.setEnabled(edited.plan is not None)
        self._refresh()

    # --- animation -----------------------------------------------------------------------
    def _tail_text(self) -> str:
        if self.anim is None or self.plan is None:
            return ""
        f = self.anim.frame()
        if f.phase != "finished" and f.wave == self.plan.waves - 1:
            return tail_text(self.plan)
        return ""

    def _clock(self) -> Animation | LockStep | None:
        """What the buttons and keys move: the one animation, or in compare mode both on one clock."""
        return self._lock if self.compare_on else self.anim

    def _refresh(self) -> None:
        clock = self._clock()
        if clock is None:
            return
        if self.compare_on:
            self.pane_a.show_moment(self.anim)
            self.pane_b.show_moment(self.anim_b)
        elif self.anim is not None:
            self.wave_bar.set_frame(self.anim.frame(), self._tail_text())
            self.grid.update()
        self._update_inspector()
        self.play_button.setText("Pause" if clock.playing else "Play")
        self.speed_label.setText(f"{clock.speed_waves_per_s:g} waves/s")

    def _tick(self) -> None:
        clock = self._clock()
        if clock is None:
            self.timer.stop()
            return
        dt_s = self._elapsed.restart() / 1000.0
        if not clock.advance(dt_s):
            self.timer.stop()
        self._refresh()

    def play(self) -> None:
        clock = self._clock()
        if clock is None:
            return
        if clock.finished:
            clock.restart()
        clock.playing = True
        self._elapsed.start()
        self.timer.start()
        self._refresh()

    def pause(self) -> None:
        clock = self._clock()
        if clock is not None:
            clock.playing = False
        self.timer.stop()
        self._refresh()

    def toggle_play(self) -> None:
        clock = self._clock()
        if clock is not None and clock.playing:
            self.pause()
        else:
            self.play()

    def restart(self) -> None:
        clock = self._clock()
        if clock is not None:
            clock.restart()
        self._refresh()

    def step_wave(self, direction: int) -> None:
        clock = self._clock()
        if clock is not None:
            self.pause()
            clock.step_wave(direction)
            self._refresh()

    def step_block(self, direction: int) -> None:
        """One block on the launch being edited (in compare mode the other side keeps the moment)."""
        clock = self._clock()
        if clock is None:
            return
        self.pause()
        if isinstance(clock, LockStep):
            clock.step_block(direction, self._anim_for(self.selected_side))
        else:
            clock.step_block(direction)
        self._refresh()

    def change_speed(self, direction: int) -> None:
        clock = self._clock()
        if clock is not None:
            clock.faster() if direction > 0 else clock.slower()
            self._speed_index = clock.speed_index
            self._refresh()

    def zoom(self, direction: int) -> None:
        """Zoom the SM picture (Ctrl+wheel, Ctrl++/-): bigger tiles show warps, then lanes."""
        self._zoom_index = max(0, min(len(ZOOMS) - 1, self._zoom_index + direction))
        z = ZOOMS[self._zoom_index]
        vp = self.scroll.viewport().size()
        if z == 1.0:
            self.grid.setMinimumSize(160, 120)
        else:
            self.grid.setMinimumSize(int(vp.width() * z), int(vp.height() * z))

    @qt_guard
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if obj is self.grid and event.type() == QEvent.Type.Wheel:
            wheel: QWheelEvent = event  # type: ignore[assignment]
            if wheel.modifiers() & Qt.KeyboardModifier.ControlModifier:
                self.zoom(1 if wheel.angleDelta().y() > 0 else -1)
                return True
        return super().eventFilter(obj, event)

    # --- inspector ---------------------------------------------------------------------------
    def _anim_for(self, side: int) -> Animation | None:
        """Side 0 (A, and the only one outside compare mode) or side 1 (B)'s animation."""
        return self.anim_b if side == 1 and self.compare_on else self.anim

    def _grid_for(self, side: int) -> SmGrid:
        if not self.compare_on:
            return self.grid
        return self.pane_b.grid if side == 1 else self.pane_a.grid

    def _hovered(self, hit: Hit | None, side: int = 0) -> None:
        self._hover = hit if hit is not None and hit.sm >= 0 else None
        self._hover_side = side
        self._inspect(hit, pin=False, side=side)

    def _update_inspector(self) -> None:
        """Issue 14.9: say again what is under the pointer, or about the pinned thread, for the
        moment now shown; a slot that was empty in wave 1 is not still "empty" in wave 3."""
        if self._hover is not None:
            self._inspect(self._hover, pin=False, side=self._hover_side)
        elif self._pinned is not None:
            self._show_thread(*self._pinned, pinned=True, side=self._pinned_side)

    def _inspect(self, hit: Hit | None, pin: bool, side: int = 0) -> None:
        anim = self._anim_for(side)
        if anim is None:
            return
        if hit is None or hit.sm < 0:
            if self._pinned is not None:
                self._show_thread(*self._pinned, pinned=True, side=self._pinned_side)
            else:
                self.inspector.show_hint()
            return
        block = anim.block_at(hit.sm, hit.slot) if hit.slot is not None else None
        if block is None or hit.warp is None or hit.lane is None:
            if pin or self._pinned is None:
                self.inspector.show_slot(hit.sm, hit.slot, anim.frame().label)
            return
        if pin:
            self._pin(side, (block, hit.warp, hit.lane))
        self._show_thread(block, hit.warp, hit.lane, pinned=pin, side=side)

    def _pin(self, side: int, thread: tuple[int, int, int] | None) -> None:
        """Mark one thread on one side's SMs (and none on the other's)."""
        self._pinned, self._pinned_side = thread, side
        for grid in (self.grid, self.pane_a.grid, self.pane_b.grid):
            grid.selected = thread if grid is self._grid_for(side) else None
            grid.update()

    def _show_thread(self, block: int, warp: int, lane: int, pinned: bool, side: int = 0) -> None:
        anim = self._anim_for(side)
        if anim is None:
            self.inspector.show_hint()
            return
        info = anim.thread_at(block, warp, lane)
        if info is None:
            idx = anim.plan.block_index(block)
            self.inspector.show_no_thread(f"blockIdx {idx}", warp, lane)
        else:
            self.inspector.show_thread(info, pinned, anim.block_now(block))

    def select_thread(self, block: int, warp: int, lane: int, side: int = 0) -> None:
        """Pin the inspector on one thread, as a click on it would (``side`` 1: B's, in compare mode)."""
        self._pin(side, (block, warp, lane))
        self._show_thread(block, warp, lane, pinned=True, side=side)

    # --- real run -----------------------------------------------------------------------------
    def _forget_real_run(self) -> None:
        """A run or a strip belongs to the launch it was made for: a changed form ends the one
        under way and clears the last one's picture, so no old N is ever reported as the new one."""
        self._real_run_for = None
        if self.realrun_view.running:
            self.realrun_view.cancel("The launch changed, so its run was stopped: run it again.")
        elif self.realrun_view.strip.result is not None:
            self.realrun_view.strip.set_result(None)
            self.realrun_view.status.setText("The launch changed since the last run: run it again.")

    def run_for_real(self) -> None:
        """The button starts a run, or stops the one under way."""
        if self.realrun_view.running:
            self.realrun_view.cancel("Stopped: the run was ended before it finished.")
            return
        plan = self.edited_plan
        if plan is None:
            return
        c = plan.config
        device = self.controls.device()
        self._real_run_for = (device.key if device is not None else "", c)
        remote, index = (
            self._remote_gpus.get(device.key, (None, None)) if device is not None else (None, None)
        )
        # a remote machine's GPU: the run goes to its agent over ssh
        self.realrun_view.start(c, remote, index)

    @property
    def edited_plan(self) -> LaunchPlan | None:
        """The plan of the launch the form holds: A's, or in compare mode the selected side's."""
        return self.plan_b if self.compare_on and self.selected_side == 1 else self.plan

    # --- remembered between runs -----------------------------------------------------------------
    def remembered(self) -> dict[str, str | int]:
        """Issue 14.12: the device, the launch (as typed), the speed and the zoom; issue 15.4:
        whether A and B are compared, B's device and launch (``b_*``) and the side being edited."""
        a = self._setups[0] if self.compare_on and self.selected_side == 1 else self._setup_from_controls()
        return {
            "device": a.device_key,
            "grid": a.grid,
            "block": a.block,
            "smem": a.smem,
            "regs": a.regs,
            "n": a.n,
            "preset": a.preset,
            **self._remembered_compare(),
            "speed": self._speed_index,
            "zoom": self._zoom_index,
        }

    def restore(self, saved: dict[str, str | int]) -> None:
        """Each part that parses is taken (through the core's parsers, as if typed); a launch that
        does not parse is skipped whole, leaving the lesson preset."""
        self.set_compare(False)  # A's fields first: the form must not be editing B
        device = saved.get("device")
        if isinstance(device, str) and device and not self.controls.select_device_key(device):
            self._wanted_device = device  # e.g. the GPU, before discovery has found it
        try:
            launch = parse_launch(*(str(saved.get(k, "")) for k in ("grid", "block", "smem", "regs")))
            n = str(saved.get("n", ""))
            parse_launch("1", "1", 0, 32, n)  # the problem size must parse too
        except UserError:
            pass
        else:
            self.controls.set_launch(launch, n, str(saved.get("preset", "")))
        speed = saved.get("speed")
        if isinstance(speed, int) and 0 <= speed < len(SPEEDS_WAVES_PER_S):
            self._speed_index = speed
            if self.anim is not None:
                self.anim.speed_index = speed
        zoom = saved.get("zoom")
        if isinstance(zoom, int) and 0 <= zoom < len(ZOOMS):
            self._zoom_index = zoom
            self._zoom_pending = True  # applied once the SM view has its size (showEvent)
            if self.isVisible():
                QTimer.singleShot(0, self._apply_pending_zoom)
        self._restore_compare(saved)
        self._refresh()

    def _remembered_compare(self) -> dict[str, str | int]:
        if not self.compare_on:
            return {"compare": 0}
        b = self._setup_from_controls() if self.selected_side == 1 else self._setups[1]
        return {
            "compare": 1,
            "side": "AB"[self.selected_side],
            "b_device": b.device_key,
            "b_grid": b.grid,
            "b_block": b.block,
            "b_smem": b.smem,
            "b_regs": b.regs,
            "b_n": b.n,
            "b_preset": b.preset,
        }

    def _restore_compare(self, saved: dict[str, str | int]) -> None:
        """B from ``b_*``: each key missing takes A's value (B is a copy of A but for what is
        named, as with ``launch --compare``); a B launch that does not parse is skipped whole."""
        if saved.get("compare") != 1:
            return
        a = self._setup_from_controls()
        b_texts = [
            str(saved.get(f"b_{k}", v))
            for k, v in zip(("grid", "block", "smem", "regs", "n"), a.texts, strict=True)
        ]
        try:
            parse_launch(*b_texts)
        except UserError:
            b_texts = list(a.texts)
        b_device = saved.get("b_device")
        b_preset = saved.get("b_preset")
        b = SideSetup(
            self._device_key(b_device) if isinstance(b_device, str) and b_device else a.device_key,
            *b_texts,
            b_preset if isinstance(b_preset, str) else "",
        )
        self.set_compare(True)
        self._setups[1] = b
        if saved.get("side") == "B":
            self.select_side(1)
        else:
            self.recompute()

    def _device_key(self, text: str) -> str:
        """A device key from a saved key or a name's part ("h100"), as the form's device box picks."""
        found = self._find_device(text)
        return found.key if found is not None else text

    def _find_device(self, text: str) -> Gpu | None:
        """The GPU with this key, else the first whose key or name holds ``text`` (a lesson's "h100")."""
        gpus = self.context.gpus
        if not text:
            return None
        exact = next((d for d in gpus if d.key == text), None)
        if exact is not None:
            return exact
        q = text.lower()
        return next((d for d in gpus if q in d.key.lower() or q in d.name.lower()), None)

    def show_moment(self, t: float) -> None:
        """Put the animation (both sides, in compare mode) at clock time ``t`` waves, paused."""
        clock = self._clock()
        if clock is not None:
            self.pause()
            clock.seek(t)
            self._refresh()

    def moment(self) -> float:
        """The clock time shown, in waves (0 with nothing to animate)."""
        clock = self._clock()
        return clock.t if clock is not None else 0.0

    # --- lesson steps ----------------------------------------------------------------------------
    #: what ``remembered`` holds that a lesson step has fields of its own for; any other key (a
    #: newer feature's state) travels in the step's ``extra`` and comes back through ``restore``
    _LESSON_KEYS = frozenset({"device", "grid", "block", "smem", "regs", "n", "preset", "speed", "zoom"})

    def lesson_state(self) -> VisualizerState | None:
        """The launch, the moment shown, the speed, zoom, selected thread and side tab."""
        saved = self.remembered()  # launch A's fields, whichever side the form is editing
        device = self._find_device(str(saved["device"]))
        if device is None:
            return None
        state = VisualizerState(
            device=device.name,
            device_kind="present" if device.present else "catalog",
            grid=str(saved["grid"]),
            block=str(saved["block"]),
            smem=str(saved["smem"]),
            regs=str(saved["regs"]),
            n=str(saved["n"]),
            speed=SPEEDS_WAVES_PER_S[self._speed_index],
            zoom=ZOOMS[self._zoom_index],
            side_tab=SIDE_TABS[max(self.tabs.currentIndex(), 0)],
            extra={k: v for k, v in saved.items() if k not in self._LESSON_KEYS},
        )
        if self.anim is not None:
            state.wave, state.blocks_placed = self.anim.position()
            state.clock = self.moment()  # in compare mode the one clock both sides show
            if self._pinned is not None and self._pinned_side == 0:  # a thread of launch A
                info = self.anim.thread_at(*self._pinned)
                if info is not None:
                    state.thread = thread_ref_text(info.block_idx, info.thread_idx)
        return state

    def show_lesson_state(self, state: PanelState) -> str:
        if not isinstance(state, VisualizerState):
            return ""
        resolved = visualizer_device(state, self.context.gpus)
        if resolved.problem:
            raise UserError(resolved.problem)
        speed = min(range(len(SPEEDS_WAVES_PER_S)), key=lambda i: abs(SPEEDS_WAVES_PER_S[i] - state.speed))
        saved: dict[str, str | int] = {
            k: v for k, v in state.extra.items() if isinstance(v, (str, int)) and not isinstance(v, bool)
        }
        saved.update(
            device=resolved.key,
            grid=state.grid,
            block=state.block,
            smem=state.smem,
            regs=state.regs,
            n=state.n,
            preset="",
            speed=speed,
            zoom=ZOOMS.index(state.zoom) if state.zoom in ZOOMS else 0,
        )
        self.pause()
        self.restore(saved)
        self.tabs.setCurrentIndex(SIDE_TABS.index(state.side_tab))
        if self.anim is not None:  # a launch that cannot run shows why, and has no moment
            if state.clock is None:
                self.anim.seek_wave(state.wave, state.blocks_placed)  # A's wave, as the one clock's time
            self.show_moment(self.anim.t if state.clock is None else state.clock)
            if state.thread:
                plan = self.anim.plan
                try:
                    block_idx, thread_idx = parse_thread_ref(state.thread, "thread")
                    block = plan.block_linear(block_idx)
                    warp, lane = divmod(plan.thread_linear(thread_idx), plan.warp_size)
                except UserError as exc:
                    raise UserError(f"thread {state.thread}: {exc}") from None
                self.select_thread(block, warp, lane)
                # zoomed in, the selected thread's SM may be off screen: bring it into view once
                # the zoom has resized the picture (the zoom is applied on the next turn of the loop)
                QTimer.singleShot(0, self._reveal_selected)
            self._refresh()
        return resolved.note

    def _reveal_selected(self) -> None:
        if self.anim is None or self._pinned is None or self.compare_on:
            return
        self._apply_pending_zoom()
        # the scroll area resizes the picture to its new minimum on a later layout pass: now
        self.grid.resize(self.grid.minimumSize().expandedTo(self.scroll.viewport().size()))
        place = self.anim.plan.placement(self._pinned[0])
        if self.anim.block_at(place.sm, place.slot) != self._pinned[0]:
            return  # its block is not on an SM at the moment shown
        centre = self.grid.slot_center(place.sm, place.slot, self._pinned[1], self._pinned[2])
        self.scroll.ensureVisible(centre.x(), centre.y(), px(120), px(120))

    def _apply_pending_zoom(self) -> None:
        if self._zoom_pending:
            self._zoom_pending = False
            self.zoom(0)

    @qt_guard
    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.fit_side_panels()
        if self._zoom_pending:
            QTimer.singleShot(0, self._apply_pending_zoom)

    # --- main window hooks ----------------------------------------------------------------------
    def prepare_screenshot(self) -> None:
        """Mid-animation on the N = 100000 lesson: GTX 1650, 98 blocks, the middle of wave 2."""
        self.set_compare(False)
        self.controls.select_device("1650")
        self.controls.apply_preset(PRESETS[0])
        if self.anim is None:
            return
        self.pause()
        self.anim.seek(1 + DISPATCH + RUN * 0.4)
        self.select_thread(self.anim.plan.blocks_in_wave(1).start + 1, 0, 17)
        self._refresh()

    #: ``device-explorer screenshot --panel visualizer --view compare``
    SCREENSHOT_VIEWS = ("compare",)

    def show_screenshot_view(self, view: str) -> None:
        """``compare``: the same lesson launch on a GTX 1650 (A) and an H100 (B), in wave 1."""
        if view not in self.SCREENSHOT_VIEWS:
            raise UserError(
                f"the visualizer has no view {view!r}; its views: {', '.join(self.SCREENSHOT_VIEWS)}"
            )
        self.set_compare(True)
        self.select_side(1)
        self.controls.select_device("h100")
        self.show_moment(DISPATCH + RUN * 0.4)

    def apply_theme(self, _theme: Theme) -> None:
        """The labels carry theme colours in their rich text: write them again; the painted parts
        take the theme's canvas (``palette.canvas``) when they are next drawn."""
        self._write_summary()
        self.occupancy_view.apply_theme()
        if self._pinned is not None:
            self.select_thread(*self._pinned, side=self._pinned_side)
        self._show_selected()  # the selected side's frame in the theme's accent
        # the SM picture, wave bar, legend and graphs are painted on the theme's canvas
        for grid in (self.grid, self.pane_a.grid, self.pane_b.grid):
            grid.invalidate()
        for painted in (
            self.wave_bar,
            self.legend,
            *self.occupancy_view.plots.values(),
            self.realrun_view.strip,
        ):
            painted.update()

    def shutdown(self) -> None:
        """Stop the clock and any real run (its child process is killed)."""
        self.timer.stop()
        for anim in (self.anim, self.anim_b):
            if anim is not None:
                anim.playing = False
        self.realrun_view.shutdown()
