"""The launch visualizer's state, Qt-free: what a teacher has set up and where the animation is.

A ``LaunchSession`` is to the visualizer what napari's ``ViewerModel`` is to its window: it owns
everything the page shows and emits an event when it changes; the Qt widgets under
``explorer/ui/visualizer`` are views that read it and call its methods, never each other.

What it owns:

- the **devices** a launch may run on (``DeviceChoice``: the record, and for another machine's GPU
  where a real run goes);
- the **sides**: one launch, or two in compare mode (A and B). Each side is set up as a
  ``LaunchSetup`` (device, ``LaunchConfig``, the lesson preset it came from) and planned by the core
  into a ``LaunchSide`` (plan or the reason there is none, limits, ``Animation``); in compare mode
  the ``Comparison`` of the two and which side the launch form edits;
- the **clock**: both sides' animations on one ``LockStep``, playing or not, and the speed; a view
  that shows more time than the waves (dispatch in time) lets it run on (``set_clock_end``);
- the **selection**: the thread pinned in the inspector and what the pointer is over.

Events (``session.events``, each an ``explorer.events.Event`` whose callbacks take no argument):
``devices`` (the device list changed), ``launch`` (a side was set up or planned again, compare mode
or the edited side changed), ``moment`` (the clock moved, started, stopped or changed speed) and
``selection`` (the pinned thread or the pointer's target changed).

Adding a view: take the session in the constructor, connect to the events the view draws and read
the session there (``session.edited_side.plan`` is the launch the form shows, with its occupancy;
``session.sides`` every side; ``session.moment`` the clock in waves). Nothing here imports Qt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from explorer.devices.limits import ArchLimits, limits_for_device
from explorer.devices.model import Gpu
from explorer.devices.names import best_match
from explorer.errors import UserError
from explorer.events import Event
from explorer.launch.animation import (
    DEFAULT_SPEED_INDEX,
    PHASES,
    SPEEDS_WAVES_PER_S,
    Animation,
    phase_sentence,
)
from explorer.launch.compare import SIDES, Comparison, Side, compare_sides, side
from explorer.launch.config import LaunchConfig, notes
from explorer.launch.lockstep import LockStep
from explorer.launch.plan_records import ThreadInfo
from explorer.launch.presets import PRESETS, Preset
from explorer.launch.schedule import LaunchPlan
from explorer.launch.texts import (
    WARNING,
    Phrase,
    Text,
    cannot_launch,
    launch_summary,
    plain,
    readings,
    tail_text,
)

if TYPE_CHECKING:  # pragma: no cover
    from explorer.remote.target import Remote

#: the problem of a side when there is no device at all to plan it on
NO_DEVICES = "device discovery found neither a GPU nor a catalog entry"
#: where the first launch starts on a machine without an NVIDIA GPU: the lessons' laptop GPU
LESSON_DEVICE = "1650"


@dataclass(frozen=True)
class DeviceChoice:
    """One device a launch may be planned on: its record, and for a GPU of another machine (its
    record keyed ``HOST-ID/cuda:N`` and named with the host) the machine and its CUDA index there,
    where "Run it for real" sends the kernel."""

    device: Gpu
    remote: Remote | None = None
    remote_index: int | None = None

    @property
    def key(self) -> str:
        return self.device.key


@dataclass(frozen=True)
class TypedSize:
    """A problem size typed in the form that does not parse: kept to show again, with the reason."""

    text: str
    problem: str


@dataclass(frozen=True)
class LaunchSetup:
    """One side as a teacher set it up: the device (by key), the launch, and the lesson preset it
    still is (None once edited away from it). ``bad_size`` holds a typed problem size the core
    refused: the side then cannot run, and its launch keeps every other field."""

    device_key: str
    config: LaunchConfig
    preset: Preset | None = None
    bad_size: TypedSize | None = None


@dataclass(frozen=True)
class Hit:
    """What the pointer is over in a side's SM picture: an SM, maybe a slot in it, maybe a warp and
    lane of the block there (``sm`` -1: over nothing)."""

    sm: int
    slot: int | None = None
    warp: int | None = None
    lane: int | None = None


@dataclass(frozen=True)
class Pointer:
    """The pointer over side ``side``'s SMs (0: A, the only side outside compare mode; 1: B)."""

    side: int
    hit: Hit


@dataclass(frozen=True)
class Selection:
    """The thread pinned in the inspector: lane ``lane`` of warp ``warp`` of block ``block``
    (linear numbers) of side ``side``'s launch."""

    side: int
    block: int
    warp: int
    lane: int

    @property
    def thread(self) -> tuple[int, int, int]:
        return (self.block, self.warp, self.lane)


@dataclass(frozen=True)
class LaunchSide:
    """A side planned: its setup, the device it found, the plan or why there is none, the
    device's limits and the side's animation (None when it cannot run)."""

    label: str  # "A" or "B"
    setup: LaunchSetup
    choice: DeviceChoice | None
    plan: LaunchPlan | None
    problem: str = ""
    limits: ArchLimits | None = None
    animation: Animation | None = None

    @property
    def device(self) -> Gpu | None:
        return self.choice.device if self.choice is not None else None

    @property
    def compared(self) -> Side:
        """The side as ``explorer.launch.compare`` sets two side by side."""
        name = self.device.name if self.device is not None else self.setup.device_key
        config = self.setup.config if self.setup.bad_size is None else None
        return Side(self.label, name, config, self.plan, self.problem)

    @property
    def notes(self) -> list[str]:
        """What is allowed but worth telling (shared memory that needs the opt-in)."""
        if self.plan is None or self.limits is None:
            return []
        return notes(self.plan.config, self.limits)


# --- what the inspector shows: one of these, or None for the hint ----------------------------
@dataclass(frozen=True)
class EmptySlot:
    """The pointer is on an SM (or one of its slots) that holds no block at the moment shown."""

    sm: int
    slot: int | None
    wave_label: str


@dataclass(frozen=True)
class NoThread:
    """A lane past the last thread of a partial warp."""

    block_text: str
    warp: int
    lane: int


@dataclass(frozen=True)
class ThreadShown:
    """A thread: the core's record of it, whether it is pinned, and where its block is now."""

    info: ThreadInfo
    pinned: bool
    now: str


Inspection = EmptySlot | NoThread | ThreadShown | None


class SessionEvents:
    """The session's events; see the module's docstring for when each is emitted."""

    def __init__(self) -> None:
        self.devices = Event("devices")
        self.launch = Event("launch")
        self.moment = Event("moment")
        self.selection = Event("selection")


class LaunchSession:
    """The visualizer's model: devices, sides, compare mode, clock and selection (no Qt)."""

    def __init__(self, devices: Sequence[DeviceChoice] = ()) -> None:
        self.events = SessionEvents()
        self.devices: tuple[DeviceChoice, ...] = ()
        #: a device key side A should take as soon as it is among the devices (a remembered GPU
        #: that discovery has not found yet); a device chosen for A meanwhile drops it
        self.wanted_key = ""
        self._setups: list[LaunchSetup] = [LaunchSetup("", PRESETS[0].config, PRESETS[0])]
        self.edited = 0  # the side the launch form edits: 0 (A) or, in compare mode, 1 (B)
        self.speed_index = DEFAULT_SPEED_INDEX  # kept while no launch can run (no clock)
        self.sides: tuple[LaunchSide, ...] = ()
        self.comparison: Comparison | None = None
        self.clock: LockStep | None = None
        self._clock_end = 0.0  # a view's end for the clock past the last wave (0: none)
        self.selection: Selection | None = None
        self.pointer: Pointer | None = None
        self._replan(keep_moment=False)
        if devices:
            self.set_devices(devices)

    # --- state read by the views ------------------------------------------------------------
    @property
    def compare(self) -> bool:
        """Whether two launches (A and B) are shown side by side."""
        return len(self._setups) == 2

    @property
    def setups(self) -> tuple[LaunchSetup, ...]:
        return tuple(self._setups)

    @property
    def edited_setup(self) -> LaunchSetup:
        return self._setups[self.edited]

    @property
    def edited_side(self) -> LaunchSide:
        """The side the launch form shows: its occupancy and its real run are the ones shown."""
        return self.sides[self.edited]

    def animation(self, side: int = 0) -> Animation | None:
        """Side ``side``'s animation (None when it cannot run, or there is no such side)."""
        return self.sides[side].animation if 0 <= side < len(self.sides) else None

    @property
    def playing(self) -> bool:
        return self.clock is not None and self.clock.playing

    @property
    def moment(self) -> float:
        """The clock's time in waves (0 with nothing to animate)."""
        return self.clock.t if self.clock is not None else 0.0

    @property
    def speed_waves_per_s(self) -> float:
        return SPEEDS_WAVES_PER_S[self.speed_index]

    @property
    def clock_end(self) -> float:
        """Where the clock stops, in waves: the longest side's last wave or a view's later end."""
        return self.clock.end if self.clock is not None else 0.0

    def find_device(self, key: str) -> DeviceChoice | None:
        """The device with exactly this key, else the one ``key`` names by the CLI's rules
        (``explorer.devices.names``: a lesson's "h100"); None when it names none or several."""
        exact = next((c for c in self.devices if c.key == key), None)
        if exact is not None or not key:
            return exact
        found = best_match(key, [c.device for c in self.devices])
        if len(found) != 1:
            return None
        return next(c for c in self.devices if c.device is found[0])

    # --- devices ------------------------------------------------------------------------------
    def set_devices(self, choices: Sequence[DeviceChoice]) -> None:
        """The devices found changed (discovery, a remote's listing). A remembered device that is
        now here is taken for A; the form's side keeps its device while it is still here, else
        takes the default one (the lessons' GTX 1650 where this machine has no GPU)."""
        before = [s.choice for s in self.sides]
        self.devices = tuple(choices)
        keys = {c.key for c in self.devices}
        if self.wanted_key in keys:
            self._setups[0] = replace(self._setups[0], device_key=self.wanted_key)
            self.wanted_key = ""
        edited = self._setups[self.edited]
        if edited.device_key not in keys:
            self._setups[self.edited] = replace(edited, device_key=self._default_key())
        self.events.devices.emit()
        after = [self.find_device(s.device_key) for s in self._setups]
        if after != before:
            self._replan(keep_moment=self.compare)

    def _default_key(self) -> str:
        if not self.devices:
            return ""
        if not any(c.device.kind == "cuda" and c.remote is None for c in self.devices):
            found = best_match(LESSON_DEVICE, [c.device for c in self.devices])
            if len(found) == 1:
                return found[0].key
        return self.devices[0].key

    def select_device(self, query: str) -> bool:
        """Put the device ``query`` names (the CLI's rules) on the edited side; False, and nothing
        changed, when it names none or several."""
        found = best_match(query, [c.device for c in self.devices])
        if len(found) != 1:
            return False
        self.edit(replace(self.edited_setup, device_key=found[0].key))
        return True

    # --- the sides ------------------------------------------------------------------------------
    def edit(self, setup: LaunchSetup) -> None:
        """Set up the edited side (the launch form hands its launch over here). A launch that
        changed starts again from the first wave, except in compare mode, where both sides keep
        the moment they show."""
        if setup == self.edited_setup:
            return
        if self.edited == 0 and setup.device_key != self._setups[0].device_key:
            self.wanted_key = ""  # a device picked for A wins over a remembered one not yet found
        self._setups[self.edited] = setup
        self._replan(keep_moment=self.compare)

    def apply_preset(self, preset: Preset) -> None:
        """The edited side takes a lesson preset's launch (on the device it has)."""
        self.edit(LaunchSetup(self.edited_setup.device_key, preset.config, preset))

    def set_compare(self, on: bool) -> None:
        """Split into A and B: B starts as a copy of A, at the same moment. Off: A alone again,
        from the first wave."""
        if on == self.compare:
            return
        a = self._setups[0]
        self._setups = [a, a] if on else [a]
        self.edited = 0
        self._replan(keep_moment=on)

    def select_side(self, index: int) -> None:
        """Let the launch form edit side ``index`` (0: A, 1: B) in compare mode."""
        if not self.compare or index not in (0, 1) or index == self.edited:
            return
        self.edited = index
        self.events.launch.emit()

    def load(self, setups: Sequence[LaunchSetup], edited: int = 0, wanted_key: str = "") -> None:
        """Put the session in a saved state at once (the settings file, a lesson step): one side,
        or A and B with the side the form edits; the clock paused at the start."""
        if not 1 <= len(setups) <= 2:
            raise ValueError(f"a session has 1 or 2 sides, not {len(setups)}")
        self._setups = list(setups)
        self.edited = edited if 0 <= edited < len(setups) else 0
        self.wanted_key = wanted_key
        if self.clock is not None:
            self.clock.playing = False
        self._replan(keep_moment=False)

    def _plan_side(self, index: int) -> LaunchSide:
        """Plan one side with the core; a device or a launch that cannot run is a side with the
        reason (the page shows it), never an error."""
        setup = self._setups[index]
        label = SIDES[index]
        choice = self.find_device(setup.device_key)
        if choice is None:
            problem = (
                f"the device {setup.device_key!r} is not among the devices found here"
                if self.devices and setup.device_key
                else NO_DEVICES
            )
            return LaunchSide(label, setup, None, None, problem)
        if setup.bad_size is not None:
            return LaunchSide(label, setup, choice, None, setup.bad_size.problem)
        try:
            limits = limits_for_device(choice.device)
        except UserError as exc:
            return LaunchSide(label, setup, choice, None, str(exc))
        planned = side(label, choice.device, setup.config, limits)
        if planned.plan is None:
            return LaunchSide(label, setup, choice, None, planned.problem, limits)
        animation = Animation(planned.plan)
        animation.speed_index = self.speed_index
        return LaunchSide(label, setup, choice, planned.plan, "", limits, animation)

    def _replan(self, keep_moment: bool) -> None:
        """Plan every side again, put the new animations on one clock (at the moment shown
        before, or the start) and drop the selection: it named threads of the old launch."""
        old = self.clock
        t = old.t if old is not None and keep_moment else 0.0
        playing = old.playing if old is not None else False
        self.sides = tuple(self._plan_side(i) for i in range(len(self._setups)))
        animations = [s.animation for s in self.sides if s.animation is not None]
        self.clock = LockStep(animations, self._clock_end) if animations else None
        if self.clock is not None:
            self.clock.speed_index = self.speed_index
            self.clock.seek(t)
            self.clock.playing = playing and not self.clock.finished
        a = self.sides[0].compared
        self.comparison = compare_sides(a, self.sides[1].compared) if self.compare else None
        self.selection = None
        self.pointer = None
        self.events.launch.emit()
        self.events.selection.emit()
        self.events.moment.emit()

    # --- the clock ------------------------------------------------------------------------------
    def play(self) -> None:
        """Start the clock (from the first wave when it had finished)."""
        if self.clock is None:
            return
        if self.clock.finished:
            self.clock.restart()
        self.clock.playing = True
        self.events.moment.emit()

    def pause(self) -> None:
        if self.clock is not None:
            self.clock.playing = False
        self.events.moment.emit()

    def toggle_play(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def restart(self) -> None:
        """Back to the first wave (playing on if it was)."""
        if self.clock is not None:
            self.clock.restart()
        self.events.moment.emit()

    def advance(self, dt_s: float) -> bool:
        """Move a playing clock by ``dt_s`` seconds of wall time at the speed chosen; False once
        it has stopped (paused, or the launch has finished)."""
        if self.clock is None:
            return False
        going = self.clock.advance(dt_s)
        self.events.moment.emit()
        return going

    def step_wave(self, direction: int) -> None:
        """Pause on the next wave with every block placed (``direction`` -1: the previous one)."""
        if self.clock is None:
            return
        self.clock.playing = False
        self.clock.step_wave(direction)
        self.events.moment.emit()

    def step_block(self, direction: int) -> None:
        """Pause with one more block placed (or one fewer), on the side being edited: in compare
        mode the other side keeps the moment."""
        if self.clock is None:
            return
        self.clock.playing = False
        self.clock.step_block(direction, self.edited_side.animation)
        self.events.moment.emit()

    def change_speed(self, direction: int) -> None:
        """One speed faster (``direction`` > 0) or slower."""
        if self.clock is None:
            return
        if direction > 0:
            self.clock.faster()
        else:
            self.clock.slower()
        self.speed_index = self.clock.speed_index
        self.events.moment.emit()

    def set_clock_end(self, end: float) -> None:
        """Let the clock run on to ``end`` waves, past the last wave (0: stop at the last wave).

        A view of the launch in time asks for its makespan: one wave of the clock is one mean
        block there, and uneven blocks may end after the wave picture's last wave. A moment past
        the new end is pulled back to it."""
        end = max(0.0, end)
        if end == self._clock_end:
            return
        self._clock_end = end
        if self.clock is not None:
            self.clock.set_end(end)
            if self.clock.finished:
                self.clock.playing = False
        self.events.moment.emit()

    def set_speed(self, index: int) -> None:
        """The speed by its index in ``SPEEDS_WAVES_PER_S`` (a remembered one); out of range is ignored."""
        if not 0 <= index < len(SPEEDS_WAVES_PER_S):
            return
        self.speed_index = index
        if self.clock is not None:
            self.clock.speed_index = index
        self.events.moment.emit()

    def show_moment(self, t: float) -> None:
        """Pause both sides at clock time ``t`` waves."""
        if self.clock is None:
            return
        self.clock.playing = False
        self.clock.seek(t)
        self.events.moment.emit()

    def seek_wave(self, wave: int, blocks_placed: int | None = None) -> None:
        """Pause at a lesson step's position of launch A: ``wave`` 0 is the start, K is wave K with
        every block placed (or ``blocks_placed`` of them), past the last wave is the end."""
        a = self.animation(0)
        if a is None:
            return
        a.seek_wave(wave, blocks_placed)
        self.show_moment(a.t)

    # --- selection ------------------------------------------------------------------------------
    def hover(self, side: int, hit: Hit | None) -> None:
        """The pointer moved over side ``side``'s SMs (``hit`` None or ``sm`` -1: it left them)."""
        pointer = Pointer(side, hit) if hit is not None and hit.sm >= 0 else None
        if pointer != self.pointer:
            self.pointer = pointer
            self.events.selection.emit()

    def click(self, side: int, hit: Hit) -> None:
        """Pin the thread under a click; a click where no thread is at the moment pins nothing."""
        anim = self.animation(side)
        if anim is None or hit.slot is None or hit.warp is None or hit.lane is None:
            return
        block = anim.block_at(hit.sm, hit.slot)
        if block is not None:
            self.select_thread(block, hit.warp, hit.lane, side)

    def select_thread(self, block: int, warp: int, lane: int, side: int = 0) -> None:
        """Pin the inspector on one thread, as a click on it would."""
        self.selection = Selection(side, block, warp, lane)
        self.events.selection.emit()

    def inspection(self) -> Inspection:
        """What the inspector shows at the moment shown: the thread under the pointer; else, over
        an empty slot, that slot, unless a thread is pinned; else the pinned thread; else None (the
        hint). Asked again as the clock moves, so a slot that was empty in wave 1 is not still
        "empty" in wave 3, and a pinned thread's "now" follows its block."""
        if self.pointer is not None:
            side, hit = self.pointer.side, self.pointer.hit
            anim = self.animation(side)
            if anim is not None:
                block = anim.block_at(hit.sm, hit.slot) if hit.slot is not None else None
                if block is not None and hit.warp is not None and hit.lane is not None:
                    return self._thread(side, block, hit.warp, hit.lane, pinned=False)
                if self.selection is None:
                    return EmptySlot(hit.sm, hit.slot, anim.frame().label)
        s = self.selection
        return self._thread(s.side, s.block, s.warp, s.lane, pinned=True) if s is not None else None

    def _thread(self, side: int, block: int, warp: int, lane: int, pinned: bool) -> Inspection:
        anim = self.animation(side)
        if anim is None:
            return None
        info = anim.thread_at(block, warp, lane)
        if info is None:
            return NoThread(f"blockIdx {anim.plan.block_index(block)}", warp, lane)
        return ThreadShown(info, pinned, anim.block_now(block))

    # --- words made once, for every view --------------------------------------------------------
    def summary(self) -> Text:
        """The line over the SMs: A's launch (or why it cannot run), or in compare mode the verdict."""
        if self.comparison is not None:
            both_run = all(s.plan is not None for s in self.sides)
            return (Phrase(self.comparison.verdict(), "" if both_run else WARNING),)
        a = self.sides[0]
        return launch_summary(a.plan) if a.plan is not None else cannot_launch(a.problem)

    def readings_text(self) -> str:
        """Every side's readings as plain lines (the summary's hover text), each side named in
        compare mode."""
        parts = []
        for s in self.sides:
            if s.plan is None:
                continue
            head = f"{s.label}: {s.plan.device_name}\n" if self.compare else ""
            parts.append(head + "\n".join(plain(line) for line in readings(s.plan)))
        return "\n\n".join(parts)

    def phase_texts(self) -> list[str]:
        """Every line A's wave bar may say during its animation, each at its longest (blocks
        landing, running, finishing, finished, the tail wave): the bar is as tall as the widest
        of them needs, so the SMs below it never move while it plays."""
        a = self.sides[0]
        if a.plan is None:
            return []
        n = a.plan.concurrent_blocks
        return [*(phase_sentence(p, n, n, n) for p in PHASES), tail_text(a.plan)]

    def tail_words(self) -> str:
        """A's tail-wave sentence while its last wave is shown (outside compare mode), else ""."""
        a = self.sides[0]
        if self.compare or a.animation is None or a.plan is None:
            return ""
        f = a.animation.frame()
        return tail_text(a.plan) if f.phase != "finished" and f.wave == a.plan.waves - 1 else ""
