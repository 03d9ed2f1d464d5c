"""Dispatch in time: blocks start the moment a slot frees, not in lock-step waves.

The wave picture (``explorer.launch.schedule``) is the textbook one: fill every SM, wait for the
whole wave, fill again. The CUDA programming guide describes what GPUs do instead: blocks go to
SMs "with available execution capacity", and "as thread blocks terminate, new blocks are launched
on the vacated multiprocessors". This module simulates exactly that:

* every SM has as many block *slots* as occupancy allows (``LaunchPlan.resident_blocks_per_sm``);
* blocks wait in launch order (x fastest) and the first waiting one starts the moment a slot frees;
* when several slots free at the same moment, the placement ``policy`` says which SM gets the next
  block: ``free``, the SM with the most free slots (what Gilman et al., SIGMETRICS 2020, measured on
  real GPUs), or ``round-robin``, the next SM after the last one that got a block (GPGPU-Sim's
  order); inside an SM, a block takes its lowest-numbered free slot.

Both policies start a block whenever any slot is free, so with one kernel (every slot alike) they
give the same start and end times, and so the same makespan: the policy changes only *which* SM
runs each block, and with it each SM's busy time. With equal durations the launch is the wave
picture exactly: makespan = ``waves`` of the closed form, and each block sits where
``LaunchPlan.placement`` puts it.

Figures, in units of the mean block (so ``uniform`` blocks take 1): the makespan; its lower bound
max(total work / slots, longest block), since no schedule beats perfect sharing or the longest
block; the list-scheduling upper bound total work / slots + longest block (Graham 1969: when the
last block starts, every slot has been busy since the beginning); and the tail, from the last
block's start to the end, when SMs fall idle one by one.

The loop over blocks is compiled by numba (``explorer.launch.dispatch_loop``) for durations that
differ; equal durations take the closed form. A million blocks take tens of milliseconds
(``benchmarks/dispatch_speed.py`` prints the time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.inputs import InputError, shown
from explorer.jitcache import CompileNotice, first_compile
from explorer.launch.durations import DurationSpec, block_durations
from explorer.launch.schedule import LaunchPlan
from explorer.launch.timeline import Timeline, TimelineFigures
from explorer.words import count, percent

POLICIES = ("free", "round-robin")
POLICY_WORDS = {
    "free": "the SM with the most free slots gets the next block (as measured on real GPUs)",
    "round-robin": "the next SM in turn with a free slot gets the next block (GPGPU-Sim's order)",
}
#: the placement the SM view draws: with blocks all as long as each other, "free" hands the blocks
#: out one per SM in turn (the lowest-numbered of equally free SMs first) until each SM is full,
#: and all end together: the waves. So the SM view names its placement as the Timeline does.
SM_VIEW_POLICY = "free"


def placement_words(policy: str) -> str:
    """How blocks go to SMs, in the one wording the Timeline, the SM view and the CLI share."""
    return f"placement {policy}: {POLICY_WORDS[policy]}"


def sm_view_placement() -> str:
    """The SM view's caption: its placement, named as the Timeline names it."""
    return (
        f"Which SM gets which block: placement {SM_VIEW_POLICY} with blocks of equal length, so one per "
        "SM in turn, wave after wave (hover for why)."
    )


#: the most blocks simulated: the timeline keeps four numbers per block (about 50 MB at this size)
MAX_BLOCKS = 1 << 21
#: the event loop's first compile, as its notice says it (measured: 10.2 s of CPU on a 2-core machine)
COMPILE_WHAT = "the dispatch loop"
COMPILE_ABOUT_S = 10.0
MODEL_NOTE = (
    "each SM holds as many blocks as occupancy allows, and the first waiting block starts "
    "the moment any slot frees. Placement changes which SM runs a block, not when it starts, so "
    "both policies give the same makespan."
)


def parse_policy(text: object) -> str:
    policy = str(text if text is not None else "").strip().lower()
    if policy not in POLICIES:
        raise InputError(f"--policy {shown(text)} is not one of {', '.join(POLICIES)}")
    return policy


@dataclass(frozen=True)
class DispatchResult:
    """A simulated launch: the plan it came from, how durations were chosen, and its timeline."""

    plan: LaunchPlan
    durations: DurationSpec
    policy: str
    seed: int
    timeline: Timeline
    unit_raw: float  # the mean block in the durations' own units (a file's numbers)

    @property
    def figures(self) -> TimelineFigures:
        return self.timeline.figures

    @property
    def slots(self) -> int:
        return self.plan.concurrent_blocks

    @property
    def waves(self) -> int:
        """The closed form's wave count: the makespan of equal blocks."""
        return self.plan.waves

    @property
    def lower_bound(self) -> float:
        f = self.figures
        return max(f.total_work / self.slots, f.longest_block)

    @property
    def upper_bound(self) -> float:
        f = self.figures
        return f.total_work / self.slots + f.longest_block

    @property
    def efficiency(self) -> float:
        """Total work / (slots x makespan): the share of the GPU's block slots kept busy."""
        f = self.figures
        return f.total_work / (self.slots * f.makespan) if f.makespan > 0 else 0.0

    def summary_lines(self) -> list[str]:
        """The figures in words: what the CLI prints and the view's caption shows."""
        f, p = self.figures, self.plan
        slot_word = "slot" if p.resident_blocks_per_sm == 1 else "slots"
        lines = [
            f"{p.total_blocks:,} blocks on {p.sm_count} SMs x {p.resident_blocks_per_sm} {slot_word} = "
            f"{self.slots:,} at once; durations: {self.durations.describe}",
            placement_words(self.policy),
            f"makespan {f.makespan:.3f} mean blocks (the wave picture: {count(p.waves, 'wave')})",
            f"bounds: lower max(work / slots, longest) = {self.lower_bound:.3f}; "
            f"upper work / slots + longest = {self.upper_bound:.3f}",
            f"total work {f.total_work:.3f}, longest block {f.longest_block:.3f}, "
            f"slots busy {percent(self.efficiency)} of the makespan",
            f"tail: the last block starts at {f.tail_start:.3f}, the launch ends at {f.makespan:.3f}; in the tail "
            f"SMs stood empty {f.tail_idle_sm_time:.3f} and block slots {f.tail_idle_slot_time:.3f} "
            "(mean blocks, summed over SMs and over slots)",
        ]
        lines.append(self.unit_words())
        return lines

    def unit_words(self) -> str:
        """What "mean block" means for these durations: for random kinds the distribution's mean (the
        nominal 1), which the blocks drawn only come close to."""
        kind = self.durations.kind
        if kind in ("jitter", "heavy"):
            drawn = self.figures.total_work / self.plan.total_blocks
            return (
                f"durations in units of the nominal mean block: 1, the mean of the {kind} distribution "
                f"(the {self.plan.total_blocks:,} blocks drawn average {drawn:.3f})"
            )
        if kind == "file":
            return f"durations in units of the mean block: the mean block is {self.unit_raw:g} in the file's units"
        if kind == "rows":
            return "durations in units of the mean block: the rows' weights averaged over the blocks"
        return "durations in units of the mean block: every block takes 1"

    def to_dict(self) -> dict[str, Any]:
        f, p = self.figures, self.plan
        return {
            "device": p.device_name,
            "config": p.config.to_dict(),
            "sm_count": p.sm_count,
            "blocks": p.total_blocks,
            "slots_per_sm": p.resident_blocks_per_sm,
            "slots": self.slots,
            "waves": p.waves,
            "durations": self.durations.to_dict(),
            "policy": self.policy,
            "seed": self.seed,
            "unit": "mean block",
            "unit_words": self.unit_words(),
            "mean_block_raw": self.unit_raw,
            "makespan": f.makespan,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "total_work": f.total_work,
            "longest_block": f.longest_block,
            "efficiency": self.efficiency,
            "tail_start": f.tail_start,
            "tail_length": f.tail_length,
            "tail_idle_sm_time": f.tail_idle_sm_time,
            "tail_idle_slot_time": f.tail_idle_slot_time,
            "idle_slot_time_while_queued": f.idle_slot_time_while_queued,
            "sm_busy": list(f.sm_busy),
            "sm_work": list(f.sm_work),
            "sms_used": f.sms_used,
            "model": MODEL_NOTE,
        }


def check_blocks(plan: LaunchPlan) -> None:
    if plan.total_blocks > MAX_BLOCKS:
        raise InputError(
            f"the grid has {plan.total_blocks:,} blocks; dispatch simulates at most {MAX_BLOCKS:,} "
            "(the timeline keeps a record per block)"
        )


def simulate_dispatch(
    plan: LaunchPlan, durations: DurationSpec, policy: str = "free", seed: int = 0
) -> DispatchResult:
    """Simulate ``plan`` with block durations chosen by ``durations``; InputError when too large."""
    policy = parse_policy(policy)
    check_blocks(plan)
    raw, unit = block_durations(durations, plan.config.grid, seed)
    start, sm, slot = dispatch_blocks(raw, plan.sm_count, plan.resident_blocks_per_sm, policy)
    timeline = Timeline(
        sm_count=plan.sm_count,
        slots_per_sm=plan.resident_blocks_per_sm,
        sm=sm,
        slot=slot,
        start=start / unit,
        end=(start + raw) / unit,
    )
    return DispatchResult(plan, durations, policy, seed, timeline, unit)


def dispatch_blocks(
    durations: np.ndarray,
    sm_count: int,
    slots_per_sm: int,
    policy: str = "free",
    *,
    say: Callable[[CompileNotice], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, sm, slot) per block for ``durations`` in launch order: the closed form when every
    block takes the same time, else the compiled event loop (its first compile is announced on
    stderr and to ``say``)."""
    durations = np.ascontiguousarray(durations, dtype=np.float64)
    if durations.shape[0] == 0:
        return np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32)
    if np.all(durations == durations[0]):
        return equal_blocks(durations.shape[0], sm_count, slots_per_sm, float(durations[0]))
    from explorer.launch.dispatch_loop import run_dispatch

    with first_compile(run_dispatch, COMPILE_WHAT, COMPILE_ABOUT_S, say=say):
        return run_dispatch(durations, sm_count, slots_per_sm, policy == "round-robin")


def equal_blocks(
    blocks: int, sm_count: int, slots_per_sm: int, duration: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equal blocks in closed form: every slot frees at once, so block i starts in wave
    i // slots, on SM i % sm_count, in slot (i % slots) // sm_count (both policies agree)."""
    i = np.arange(blocks, dtype=np.int64)
    slots = sm_count * slots_per_sm
    wave, r = np.divmod(i, slots)
    slot, sm = np.divmod(r, sm_count)
    return wave * duration, sm.astype(np.int32), slot.astype(np.int32)


def warm_up(say: Callable[[CompileNotice], None] | None = None) -> None:
    """Compile the event loop, or load it from numba's cache, before it is first needed: the window
    calls this in a background thread when the timeline is first shown (and shows what ``say``
    hears), so choosing uneven durations does not wait for numba (about 10 s on a first run, well
    under one from the cache); ``self-test`` calls it so that the first real use finds the cache."""
    dispatch_blocks(np.array([1.0, 2.0]), 1, 1, say=say)
