"""Where the launch animation is: a clock in units of waves, and what that means for each block.

Qt-free on purpose (napari's model/view split): the scene widget only draws what this model says,
and tests drive it without a window. It holds *time* and nothing the launch core can derive: which
SM and slot a block lands in always comes from the plan (``wave_fill``, ``idle_blocks_in_wave``);
this model only remembers the current wave's few blocks with idle lanes, asked once per wave.

The clock ``t`` runs from 0 to ``plan.waves``. Inside wave ``k`` (``k <= t < k + 1``) the blocks of
that wave are first dispatched one by one from the queue to their SMs, then run, then retire:

    fraction of the wave:  0 ........ DISPATCH ........ DISPATCH + RUN ........ 1
                           blocks land               warps run              blocks retire
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.words import count

if TYPE_CHECKING:  # pragma: no cover
    from explorer.launch.plan_records import ThreadInfo, WaveFill, WaveIdle
    from explorer.launch.schedule import LaunchPlan

DISPATCH = 0.3  # share of a wave spent placing blocks on SMs
RUN = 0.55  # share spent running them; the rest is retiring

SPEEDS_WAVES_PER_S = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DEFAULT_SPEED_INDEX = 2
CLOCK_EPS = 1e-9  # clock positions closer than this are the same moment


@dataclass(frozen=True)
class Frame:
    """Everything one drawing needs to know about the moment shown."""

    t: float
    wave: int  # 0-based current wave; == waves when the launch has finished
    waves: int
    phase: str  # "dispatch", "run", "retire", "finished"
    first_block: int  # linear index of the current wave's first block
    blocks_in_wave: int
    dispatched: int  # blocks of the current wave already on an SM
    run_progress: float  # 0..1 while the current wave runs
    queued: int  # blocks not yet on an SM
    running: int  # blocks on an SM now
    done: int  # blocks retired
    total_blocks: int

    @property
    def label(self) -> str:
        """The "wave k of n" text a class reads off the screen."""
        if self.phase == "finished":
            return (
                f"finished: all {self.waves:,} waves done" if self.waves != 1 else "finished: its 1 wave done"
            )
        return f"wave {self.wave + 1:,} of {self.waves:,}"

    @property
    def phase_words(self) -> str:
        return phase_sentence(self.phase, self.dispatched, self.blocks_in_wave, self.running)


#: the phases of a wave as the wave bar names them, and the end
PHASES = ("dispatch", "run", "retire", "finished")


def phase_sentence(phase: str, placed: int, in_wave: int, running: int) -> str:
    """What happens now, in the wave bar's words."""
    return {
        "dispatch": f"blocks landing on SMs: {placed:,} of {in_wave:,}",
        "run": f"{count(running, 'block')} running",
        "retire": f"{count(running, 'block')} finishing",
        "finished": "every block has run",
    }[phase]


class Animation:
    """The animation's clock and the current wave's placements, for one ``LaunchPlan``."""

    def __init__(self, plan: LaunchPlan) -> None:
        self.plan = plan
        self.t = 0.0
        self.playing = False
        self.speed_index = DEFAULT_SPEED_INDEX
        self._idle_wave = -1
        self._idle: WaveIdle | None = None

    # --- the clock -----------------------------------------------------------------------
    @property
    def waves(self) -> int:
        return self.plan.waves

    @property
    def speed_waves_per_s(self) -> float:
        return SPEEDS_WAVES_PER_S[self.speed_index]

    @property
    def finished(self) -> bool:
        return self.t >= self.waves

    def set_plan(self, plan: LaunchPlan, keep_wave: bool = False) -> None:
        """Show another launch; restart unless asked to keep the wave (clamped to the new plan)."""
        wave = math.floor(self.t) if keep_wave else 0
        self.plan = plan
        self._idle_wave = -1
        self._idle = None
        self.t = float(min(wave, max(plan.waves - 1, 0))) if keep_wave else 0.0

    def restart(self) -> None:
        self.t = 0.0

    def faster(self) -> None:
        self.speed_index = min(self.speed_index + 1, len(SPEEDS_WAVES_PER_S) - 1)

    def slower(self) -> None:
        self.speed_index = max(self.speed_index - 1, 0)

    def advance(self, dt_s: float) -> bool:
        """Move the clock by wall time ``dt_s`` at the current speed; False (and stop) at the end."""
        if not self.playing:
            return False
        self.t = min(self.t + dt_s * self.speed_waves_per_s, float(self.waves))
        if self.finished:
            self.playing = False
        return not self.finished

    def seek(self, t: float) -> None:
        self.t = min(max(t, 0.0), float(self.waves))

    def seek_wave(self, wave: int, blocks_placed: int | None = None) -> None:
        """A lesson step's position: ``wave`` 0 is the start, K (1-based) is wave K with every block
        placed (or only ``blocks_placed`` of them), past the last wave is the end."""
        if wave <= 0:
            self.seek(0.0)
        elif wave > self.waves:
            self.seek(float(self.waves))
        elif blocks_placed is None:
            self.seek(self._full(wave - 1))
        else:
            self.seek(self._placed(wave - 1, blocks_placed) if blocks_placed > 0 else float(wave - 1))

    def position(self) -> tuple[int, int | None]:
        """The (wave, blocks_placed) ``seek_wave`` takes for the moment shown (blocks_placed None:
        the whole wave is placed)."""
        f = self.frame()
        if f.phase == "finished":
            return self.waves + 1, None
        if self.t <= 0:
            return 0, None
        return f.wave + 1, (f.dispatched if f.phase == "dispatch" else None)

    def _full(self, wave: int) -> float:
        """The moment wave ``wave`` has every block on an SM and starts running."""
        return wave + DISPATCH

    def _placed(self, wave: int, blocks: int) -> float:
        """The moment the ``blocks``-th block of ``wave`` lands (``blocks`` >= 1)."""
        n = max(len(self.plan.blocks_in_wave(wave)), 1)
        return wave + DISPATCH * min(blocks, n) / n

    def step_wave(self, direction: int = 1) -> None:
        """Land on the next wave fully dispatched (every block on its SM), or back on the previous one.

        Stepping a lesson wave by wave must show each wave full: from the start, the first step
        lands on wave 1 with all its blocks placed; from the last full wave, on "finished".
        """
        k = math.floor(self.t + CLOCK_EPS)
        if direction > 0:
            target = self._full(k) if self.t < self._full(k) - CLOCK_EPS else self._full(k + 1)
            self.seek(target if target < self.waves else float(self.waves))
        else:
            if self.finished:
                self.seek(self._full(self.waves - 1))
                return
            target = self._full(k) if self.t > self._full(k) + CLOCK_EPS else self._full(k - 1)
            self.seek(target if target >= DISPATCH else 0.0)

    def step_block(self, direction: int = 1) -> None:
        """Land on the next block placed (the next wave's first once this one is full), or one back."""
        f = self.frame()
        if direction > 0:
            if f.phase == "finished":
                return
            if f.dispatched < f.blocks_in_wave:
                self.seek(self._placed(f.wave, f.dispatched + 1))
            elif f.wave + 1 < self.waves:
                self.seek(self._placed(f.wave + 1, 1))
            else:
                self.seek(float(self.waves))
            return
        if f.phase == "finished":
            self.seek(self._full(self.waves - 1))
        elif f.dispatched > 1:
            self.seek(self._placed(f.wave, f.dispatched - 1))
        elif f.wave > 0:
            self.seek(self._full(f.wave - 1))  # one block back from the first: the previous wave, full
        else:
            self.seek(0.0)

    # --- what the clock means ------------------------------------------------------------------
    def frame(self) -> Frame:
        plan = self.plan
        total = plan.total_blocks
        if self.finished:
            return Frame(self.t, self.waves, self.waves, "finished", total, 0, 0, 1.0, 0, 0, total, total)
        # a step lands on k + DISPATCH * i / n, which floating point may put a hair below: the
        # tolerance keeps "block i landed" from reading as i - 1
        k = min(math.floor(self.t + CLOCK_EPS), self.waves - 1)
        frac = self.t - k
        wave_blocks = plan.blocks_in_wave(k)
        first, count = wave_blocks.start, len(wave_blocks)
        if frac < DISPATCH - CLOCK_EPS:
            phase = "dispatch"
            dispatched = min(count, math.floor(frac / DISPATCH * count + 1e-6))
            progress = 0.0
        elif frac < DISPATCH + RUN:
            phase, dispatched = "run", count
            progress = (frac - DISPATCH) / RUN
        else:
            phase, dispatched, progress = "retire", count, 1.0
        queued = total - first - dispatched
        return Frame(
            self.t, k, self.waves, phase, first, count, dispatched, progress, queued, dispatched, first, total
        )

    def _current_wave(self) -> int:
        return min(math.floor(self.t + CLOCK_EPS), self.waves - 1)

    def fill(self) -> WaveFill | None:
        """The core's account of which slots hold a block now; None once the launch has finished."""
        f = self.frame()
        if f.phase == "finished":
            return None
        return self.plan.wave_fill(f.wave, f.dispatched)

    def idle_blocks(self) -> WaveIdle:
        """The current wave's blocks with idle lanes, asked of the core once per wave."""
        k = self._current_wave()
        if k != self._idle_wave or self._idle is None:
            self._idle = self.plan.idle_blocks_in_wave(k)
            self._idle_wave = k
        return self._idle

    def resident(self) -> list[tuple[int, int, int, tuple[int, ...] | None]]:
        """(block_linear, sm, slot, busy) of the blocks on an SM now, in dispatch order.

        ``busy`` is None when every thread of the block is within N, else the busy lanes per warp.
        One tuple per block: for tests and small grids; the picture uses ``fill`` instead.
        """
        fill = self.fill()
        if fill is None:
            return []
        idle = self.idle_blocks()
        out = []
        for i in range(fill.dispatched):
            b = fill.first_block + i
            sm, slot = fill.position(b)  # type: ignore[misc]
            out.append((b, sm, slot, idle.busy_lanes_of(b)))
        return out

    def block_now(self, block: int) -> str:
        """Where ``block`` is at the moment shown, in words for the inspector (it changes as the
        clock moves, so a pinned thread's text never describes a moment that has passed)."""
        f = self.frame()
        place = self.plan.placement(block)
        if f.phase == "finished" or block < f.first_block:
            return f"its block has finished ({f.label})"
        if block < f.first_block + f.dispatched:
            doing = {"dispatch": "landed on", "run": "running on", "retire": "finishing on"}[f.phase]
            return f"its block is {doing} SM {place.sm} ({f.label})"
        return f"its block waits in the queue for wave {place.wave + 1} ({f.label})"

    def block_at(self, sm: int, slot: int) -> int | None:
        """The block on SM ``sm`` in slot ``slot`` now, or None where the slot is empty."""
        fill = self.fill()
        return None if fill is None else fill.block_at(sm, slot)

    def thread_at(self, block: int, warp: int, lane: int) -> ThreadInfo | None:
        """The thread in lane ``lane`` of warp ``warp`` of ``block``; None for a lane with no thread."""
        plan = self.plan
        if not 0 <= lane < plan.warp_active_lanes(block, warp):
            return None
        return plan.thread(block, warp * plan.warp_size + lane)
