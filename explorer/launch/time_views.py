"""The visualizer's views of a launch in time, beside its SMs: which one is shown and what it shows.

``TimeViews`` is a Qt-free model beside the ``LaunchSession`` (napari's model/view split): it
reads the session's edited side (``edited_side.plan`` carries the occupancy) and the session's
clock, and owns

* ``view``: the picture in the centre of the page: ``"sms"`` (the wave picture), ``"timeline"``
  (dispatch in time, ``explorer.launch.dispatch``) or ``"latency"`` (latency hiding,
  ``explorer.launch.latency``);
* the **timeline**: how block durations are chosen (``DispatchSettings``: the ``--durations`` text,
  the placement policy, the seed) and the ``DispatchResult`` of the edited launch. Its moment is
  the session's clock itself: one wave of the clock is one mean block of the timeline, so with
  equal blocks wave k of the picture is the span [k, k + 1) of the timeline, block for block, and
  uneven blocks, which may end after the last wave, make the clock run on to the makespan while
  the timeline is shown (``LaunchSession.set_clock_end``);
* the **latency** view: the published latency used (``LatencySettings``: a preset with its source,
  K arithmetic instructions per load, the policy), the ``LatencyRun`` for the resident warps the
  edited launch's occupancy leaves, so more registers or shared memory per block visibly hide
  less; the utilization curve; and the chart's own clock in cycles (``cycles``);
* what was **measured** on a GPU for them, kept only while it belongs to what is shown.

Events (``events``, callbacks take no argument): ``view``, ``dispatch`` (settings, result or
problem changed), ``latency`` (likewise), ``measured``; ``cycles.events.moment`` when the cycle
clock moves. A result is computed only for the view shown, so a launch edited while the SMs are
shown costs no simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from explorer.events import Event
from explorer.inputs import InputError, parse_whole, shown
from explorer.launch.dispatch import DispatchResult, parse_policy, simulate_dispatch
from explorer.launch.durations import DurationSpec, parse_durations
from explorer.launch.latency import (
    MAX_ALU,
    MEASURED_PRESET_KEY,
    LatencyPreset,
    LatencyRun,
    UtilizationCurve,
    config_for_launch,
    find_preset,
    preset_from_ladder,
    simulate_latency,
    utilization_curve,
)
from explorer.launch.latency import POLICIES as LATENCY_POLICIES
from explorer.launch.measurable import measurable, not_measurable
from explorer.launch.occupancy import RESOURCE_NAMES
from explorer.launch.session import DeviceChoice, LaunchSession
from explorer.words import count

if TYPE_CHECKING:  # pragma: no cover
    from explorer.launch.config import LaunchConfig
    from explorer.launch_runs.measured import BandwidthSweep, MeasuredDispatch

View = Literal["sms", "timeline", "latency"]
VIEWS: tuple[View, ...] = ("sms", "timeline", "latency")
VIEW_TITLES = {"sms": "SMs in waves", "timeline": "Timeline in time", "latency": "Latency hiding"}
#: ... and the one word each gives way to where the titles do not fit (large text, narrow page)
VIEW_SHORT_TITLES = {"sms": "SMs", "timeline": "Timeline", "latency": "Latency"}
#: seeds the window and lessons take (a spin box's range; the CLI takes larger ones)
MAX_SEED = 2**31 - 1
#: the latency chart scrolls by its own width in this many seconds while it plays
WINDOW_SECONDS = 4.0
#: the words the window uses for a measured run (the CLI says "--measure")
MEASURE_WORDS = "A measurement"


@dataclass(frozen=True)
class DispatchSettings:
    """How the timeline chooses block durations, as typed: ``durations`` in ``--durations`` form,
    the placement ``policy`` and the ``seed`` of ``jitter`` and ``heavy``."""

    durations: str = "uniform"
    policy: str = "free"
    seed: int = 0

    @property
    def uses_seed(self) -> bool:
        """Only random durations depend on the seed."""
        return self.durations.strip().lower().split(":")[0] in ("jitter", "heavy")


@dataclass(frozen=True)
class LatencySettings:
    """The latency view's loop: a published latency (``preset``, its key), ``alu`` = K independent
    arithmetic instructions after each load, and the warp schedulers' ``policy``."""

    preset: str = "v100-l1"
    alu: int = 9
    policy: str = "gto"

    @property
    def latency_preset(self) -> LatencyPreset:
        return find_preset(self.preset)


def check_dispatch(policy: object, seed: object) -> tuple[str, int]:
    """The policy and seed checked as the window and a lesson take them (one InputError line)."""
    return parse_policy(policy), parse_whole(seed, "seed", minimum=0, maximum=MAX_SEED)


def check_latency(
    preset: object, alu: object, policy: object, measured: LatencyPreset | None = None
) -> LatencySettings:
    """A latency view's settings checked (one InputError line naming the field and its limits).
    ``measured``: the preset of the shown GPU's own stored latency, where there is one (its key is
    taken only then)."""
    text = str(preset) if preset is not None else ""
    if text.strip().lower() == MEASURED_PRESET_KEY and measured is not None:
        key = MEASURED_PRESET_KEY
    else:
        key = find_preset(text).key
    k = parse_whole(alu, "alu (K, arithmetic instructions per load)", minimum=0, maximum=MAX_ALU)
    chosen = str(policy if policy is not None else "").strip().lower()
    if chosen not in LATENCY_POLICIES:
        raise InputError(f"policy {shown(policy)} is not one of {', '.join(LATENCY_POLICIES)}")
    return LatencySettings(key, k, chosen)


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to its first ". "), for a line that must stay one line."""
    head, sep, _rest = text.strip().partition(". ")
    return head + "." if sep else head


def chart_window(run: LatencyRun) -> int:
    """Cycles the latency chart shows at once: two loop periods (a warp's whole round and the
    next), 40 to 600, never more than were recorded."""
    return int(min(run.recorded_cycles, max(40, min(600, 2 * run.config.period))))


class CycleClock:
    """The latency chart's clock: it shows the ``window`` cycles before ``cycle``, and plays by
    scrolling one window every ``WINDOW_SECONDS``. It answers what the visualizer's frame clock
    asks of a playing model: ``events.moment``, ``playing`` and ``advance(dt_s)``."""

    def __init__(self) -> None:
        self.events = _MomentEvents()
        self.cycle = 0
        self.window = 1
        self.end = 1
        self.playing = False

    def load(self, window: int, end: int) -> None:
        """A new run: ``end`` cycles recorded, shown ``window`` at a time, from the first window."""
        self.window, self.end = max(1, window), max(1, end)
        self.playing = False
        self.cycle = self.window
        self.events.moment.emit()

    def seek(self, cycle: int) -> None:
        """Pause with the chart ending at ``cycle`` (held to the first window and the last cycle)."""
        self.playing = False
        self.cycle = min(max(self.window, int(cycle)), self.end)
        self.events.moment.emit()

    def play(self) -> None:
        if self.cycle >= self.end:
            self.cycle = self.window
        self.playing = True
        self.events.moment.emit()

    def pause(self) -> None:
        self.playing = False
        self.events.moment.emit()

    def toggle_play(self) -> None:
        self.pause() if self.playing else self.play()

    def advance(self, dt_s: float) -> bool:
        """Scroll by wall time ``dt_s``; False (and stop) at the last recorded cycle."""
        if not self.playing:
            return False
        step = max(1, round(dt_s * self.window / WINDOW_SECONDS))
        self.cycle = min(self.cycle + step, self.end)
        if self.cycle >= self.end:
            self.playing = False
        self.events.moment.emit()
        return self.playing


class _MomentEvents:
    def __init__(self) -> None:
        self.moment = Event("moment")


class TimeViewEvents:
    """The model's events; see the module's docstring."""

    def __init__(self) -> None:
        self.view = Event("view")
        self.dispatch = Event("dispatch")
        self.latency = Event("latency")
        self.measured = Event("measured")


LaunchKey = tuple[str, "LaunchConfig"]


class TimeViews:
    """The timeline and latency views' model, beside ``session`` (no Qt)."""

    def __init__(self, session: LaunchSession) -> None:
        self.session = session
        self.events = TimeViewEvents()
        self.view: View = "sms"
        self.dispatch_settings = DispatchSettings()
        self._spec: DurationSpec = parse_durations("uniform")
        #: durations typed that did not parse: (text, why); the settings in force stay the last good ones
        self.durations_refused: tuple[str, str] | None = None
        self.dispatch: DispatchResult | None = None
        self.dispatch_problem = ""  # why there is no timeline (the launch cannot run, a file's count)
        self._dispatch_key: tuple[object, ...] | None = None
        self.latency_settings = LatencySettings()
        self.latency: LatencyRun | None = None
        self.curve: UtilizationCurve | None = None
        self.latency_problem = ""
        self._latency_key: tuple[object, ...] | None = None
        #: "L measured on this GPU": the preset made from the edited device's stored latency
        #: ladder, or None and why not (for the view to say)
        self.measured_preset: LatencyPreset | None = None
        self.measured_preset_why = "no GPU is chosen"
        self._measured_preset_for: str | None = None
        self.cycles = CycleClock()
        self.measured: MeasuredDispatch | None = None
        self._measured_for: LaunchKey | None = None
        self.sweep: BandwidthSweep | None = None
        self._sweep_for = ""
        session.events.launch.connect(self._launch_changed)
        self._follow_measured_latency()

    # --- which view ------------------------------------------------------------------------
    def set_view(self, view: str) -> None:
        """Show ``view`` (one of ``VIEWS``); ValueError for another name."""
        if view not in VIEWS:
            raise ValueError(f"view {view!r} is not one of {', '.join(VIEWS)}")
        if view == self.view:
            return
        if self.view == "latency":
            self.cycles.pause()
        self.view = view
        self._refresh()
        self.events.view.emit()

    def load(self, view: str, dispatch: DispatchSettings, latency: LatencySettings) -> None:
        """Take a whole saved state at once (a lesson step, the settings file), simulating only
        what the view shown needs, once. InputError (one line) when a setting does not parse, and
        then nothing has changed; ValueError for a view that is not one of ``VIEWS``."""
        if view not in VIEWS:
            raise ValueError(f"view {view!r} is not one of {', '.join(VIEWS)}")
        spec = parse_durations(dispatch.durations)
        policy, seed = check_dispatch(dispatch.policy, dispatch.seed)
        checked = check_latency(latency.preset, latency.alu, latency.policy, self.measured_preset)
        self._spec, self.durations_refused = spec, None
        self.dispatch_settings = DispatchSettings(dispatch.durations.strip(), policy, seed)
        self.latency_settings = checked
        self._dispatch_key = self._latency_key = None
        changed = view != self.view
        self.cycles.pause()
        self.view = view
        self._refresh_dispatch(force=True)
        self._refresh_latency(force=True)
        if changed:
            self.events.view.emit()

    # --- the timeline -------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """The moment the timeline shows, in mean blocks: the session's clock (in waves)."""
        return self.session.moment

    def set_durations(self, text: str) -> bool:
        """Durations as typed (``uniform``, ``jitter:0.2``, ``file:PATH``, ...). Text that does not
        parse is kept with the reason (``durations_refused``) and changes nothing else; False then."""
        try:
            spec = parse_durations(text)
        except InputError as exc:
            self.durations_refused = (text, str(exc))
            self.events.dispatch.emit()
            return False
        self.durations_refused = None
        self._spec = spec
        self.dispatch_settings = DispatchSettings(text.strip(), *self._policy_seed())
        self._refresh_dispatch(force=True)
        return True

    def _policy_seed(self) -> tuple[str, int]:
        return self.dispatch_settings.policy, self.dispatch_settings.seed

    def set_policy(self, policy: str) -> None:
        chosen, _ = check_dispatch(policy, 0)
        self._settle(DispatchSettings(self.dispatch_settings.durations, chosen, self.dispatch_settings.seed))

    def set_seed(self, seed: int) -> None:
        _, chosen = check_dispatch("free", seed)
        self._settle(
            DispatchSettings(self.dispatch_settings.durations, self.dispatch_settings.policy, chosen)
        )

    def _settle(self, settings: DispatchSettings) -> None:
        if settings != self.dispatch_settings:
            self.dispatch_settings = settings
            self._refresh_dispatch(force=True)

    @property
    def durations(self) -> DurationSpec:
        """The durations in force (the last text that parsed)."""
        return self._spec

    def show_time(self, t: float | None) -> None:
        """Pause the clock at ``t`` mean blocks (None: the launch's end, the whole timeline)."""
        end = self.session.clock_end
        self.session.show_moment(end if t is None else min(max(0.0, t), end))

    # --- the latency view ---------------------------------------------------------------------
    def set_latency(self, settings: LatencySettings) -> None:
        """Take a preset, K and a policy (checked: InputError, and nothing changes, when one is bad)."""
        checked = check_latency(settings.preset, settings.alu, settings.policy, self.measured_preset)
        if checked != self.latency_settings:
            self.latency_settings = checked
            self._refresh_latency(force=True)

    @property
    def preset(self) -> LatencyPreset:
        if self.latency_settings.preset == MEASURED_PRESET_KEY and self.measured_preset is not None:
            return self.measured_preset
        return self.latency_settings.latency_preset

    def use_measured_latency(self) -> None:
        """Set L to the edited GPU's stored DRAM latency ("L measured on this GPU"); InputError
        saying why when there is none (``measured_preset_why``)."""
        if self.measured_preset is None:
            raise InputError(f"no latency measured on this GPU: {self.measured_preset_why}")
        self.set_latency(
            LatencySettings(MEASURED_PRESET_KEY, self.latency_settings.alu, self.latency_settings.policy)
        )

    def reload_measured_latency(self) -> None:
        """Read the edited GPU's stored ladder again (its ceilings were just measured)."""
        self._measured_preset_for, self._latency_key = None, None
        self._follow_measured_latency()
        self._refresh_latency(force=True)

    def _follow_measured_latency(self) -> None:
        """The edited device's stored latency ladder, read when the device changes; a chosen
        measured preset that no longer exists falls back to the default preset."""
        choice = self.session.edited_side.choice
        key = choice.key if choice is not None else ""
        if key == self._measured_preset_for:
            return
        self._measured_preset_for = key
        self.measured_preset, self.measured_preset_why = measured_latency(choice)
        if self.latency_settings.preset == MEASURED_PRESET_KEY and self.measured_preset is None:
            s = self.latency_settings
            self.latency_settings = LatencySettings(LatencySettings().preset, s.alu, s.policy)

    # --- measured on a GPU --------------------------------------------------------------------
    def launch_key(self) -> LaunchKey | None:
        """What a measured timeline belongs to: the edited side's device and launch."""
        side = self.session.edited_side
        if side.plan is None or side.choice is None:
            return None
        return (side.choice.key, side.plan.config)

    def measure_problem(self, why_no_gpu: str = "") -> str:
        """One line saying why the shown device cannot be measured here ("" when it can); of
        discovery's reason there is no usable GPU (``why_no_gpu``) only its first sentence."""
        why_no_gpu = first_sentence(why_no_gpu)
        choice: DeviceChoice | None = self.session.edited_side.choice
        if choice is None:
            return f"{MEASURE_WORDS} needs a launch that can run: {self.session.edited_side.problem}"
        if choice.remote is not None:
            return (
                f"{MEASURE_WORDS} runs on a GPU in this machine; {choice.device.name} is another machine's "
                "(measure there with its own Device Explorer)"
            )
        if not measurable(choice.device):
            return not_measurable(choice.device, why_no_gpu, MEASURE_WORDS)
        return ""

    def take_measured(self, key: LaunchKey | None, measured: MeasuredDispatch) -> bool:
        """A measured timeline made for ``key``: kept when that is still the launch shown."""
        if key is None or key != self.launch_key():
            return False
        self.measured, self._measured_for = measured, key
        self._set_clock_end()
        self.events.measured.emit()
        return True

    def take_sweep(self, device_key: str, sweep: BandwidthSweep) -> bool:
        """A bandwidth sweep measured on ``device_key``: kept while that device is shown."""
        choice = self.session.edited_side.choice
        if choice is None or choice.key != device_key:
            return False
        self.sweep, self._sweep_for = sweep, device_key
        self.events.measured.emit()
        return True

    # --- following the session ----------------------------------------------------------------
    def _launch_changed(self) -> None:
        self._follow_measured_latency()
        dropped = False
        if self.measured is not None and self._measured_for != self.launch_key():
            self.measured, self._measured_for, dropped = None, None, True
        choice = self.session.edited_side.choice
        if self.sweep is not None and (choice is None or choice.key != self._sweep_for):
            self.sweep, self._sweep_for, dropped = None, "", True
        self._refresh()
        if dropped:
            self.events.measured.emit()

    def _refresh(self) -> None:
        self._refresh_dispatch()
        self._refresh_latency()

    def _refresh_dispatch(self, force: bool = False) -> None:
        """Simulate the edited launch while the timeline is shown (computed once per launch and
        settings), and let the clock run to its makespan; shown elsewhere, give the clock back."""
        if self.view != "timeline":
            self.session.set_clock_end(0.0)
            if force:
                self._dispatch_key = None
                self.events.dispatch.emit()
            return
        side = self.session.edited_side
        s = self.dispatch_settings
        launch = (
            (side.choice.key, side.plan.config) if side.plan is not None and side.choice else side.problem
        )
        key = (launch, id(self._spec), s.policy, s.seed)
        if key != self._dispatch_key:
            self._dispatch_key = key
            self.dispatch, self.dispatch_problem = None, ""
            if side.plan is None:
                self.dispatch_problem = f"the launch cannot run: {side.problem}"
            else:
                try:
                    self.dispatch = simulate_dispatch(side.plan, self._spec, s.policy, s.seed)
                except InputError as exc:
                    self.dispatch_problem = str(exc)
        self._set_clock_end()
        self.events.dispatch.emit()

    def _set_clock_end(self) -> None:
        """While the timeline is shown, the clock runs to the end of the simulated launch, or of
        the measured one (in mean measured blocks) when that ends later."""
        ends = [0.0]
        if self.view == "timeline" and self.dispatch is not None:
            ends.append(self.dispatch.figures.makespan)
        if self.view == "timeline" and self.measured is not None:
            ends.append(self.measured.makespan_blocks)
        self.session.set_clock_end(max(ends))

    def _refresh_latency(self, force: bool = False) -> None:
        """Simulate the SM the edited launch fills while the latency view is shown."""
        if self.view != "latency":
            if force:
                self._latency_key = None
                self.events.latency.emit()
            return
        side = self.session.edited_side
        s = self.latency_settings
        occupancy = side.plan.occupancy if side.plan is not None else None
        key = (occupancy, side.limits, s, self.preset)
        if key == self._latency_key:
            return
        self._latency_key = key
        self.latency, self.curve, self.latency_problem = None, None, ""
        if side.plan is None or side.limits is None:
            self.latency_problem = f"the launch cannot run: {side.problem}"
        else:
            preset = self.preset
            try:
                config = config_for_launch(
                    side.plan.occupancy, side.limits, preset.mem_latency, s.alu, s.policy
                )
                self.latency = simulate_latency(config)
                self.curve = utilization_curve(
                    preset.mem_latency, s.alu, config.schedulers, s.policy, config.slots
                )
            except InputError as exc:
                self.latency, self.latency_problem = None, str(exc)
        if self.latency is not None:
            self.cycles.load(chart_window(self.latency), self.latency.recorded_cycles)
        self.events.latency.emit()

    # --- words for the views ------------------------------------------------------------------
    def latency_caption(self) -> str:
        """Where the resident warps come from: the launch's occupancy and what limits it (the
        device is the launch form's)."""
        side = self.session.edited_side
        run = self.latency
        if run is None or side.plan is None:
            return ""
        occ = side.plan.occupancy
        per = run.config.warps / run.config.schedulers
        per_text = f"{per:g}" if per == math.floor(per) else f"{per:.2f}"
        return (
            f"{count(occ.active_blocks_per_sm, 'block')} of {count(side.plan.warps_per_block, 'warp')} per SM "
            f"(limited by {' and '.join(RESOURCE_NAMES[r] for r in occ.limiters)}) = {run.config.warps} of {run.config.slots} warp slots, "
            f"{per_text} per scheduler"
        )


def measured_latency(choice: DeviceChoice | None) -> tuple[LatencyPreset | None, str]:
    """The preset "L measured on this GPU" for ``choice`` (its stored ladder's DRAM level), or None
    and one line saying why there is none."""
    if choice is None:
        return None, "no GPU is chosen"
    device = choice.device
    if choice.remote is not None:
        return None, f"{device.name} is another machine's GPU; its ladder is stored there"
    if device.kind != "cuda":
        return (
            None,
            f"{device.name} is a {device.kind} device, not a GPU of this machine: nothing is measured",
        )
    from explorer.devices.roofs import stored

    status, measured = stored(device)
    if status == "other machine":
        return None, f"the ladder stored for {device.key} is from another machine or driver; measure again"
    if measured is None or measured.latency is None:
        return None, (
            f"no latency ladder is stored for {device.name}: it is measured with the GPU's ceilings "
            "(Benchmarks page, Roofline tab, Measure again)"
        )
    preset = preset_from_ladder(measured.latency)
    if preset is None:
        return None, f"the ladder stored for {device.name} has too few rungs to tell its DRAM level"
    return preset, ""
