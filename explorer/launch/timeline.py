"""Which SM ran each block of a launch, and when: one record for a simulation and a measurement.

The dispatch model (``explorer.launch.dispatch``) and the measured run on a GPU
(``explorer.launch_runs.measured``, which reads each block's ``%smid`` and ``%globaltimer``) both end in
a ``Timeline``, so the figures a student compares (makespan, the tail, SMs idle while blocks were
still waiting) are computed by the same code for both, and the view draws either.

Times start at 0 (the first block's start); their unit is named (``"mean block"`` for a
simulation, ``"ns"`` for a measurement).

Qt-free; numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TimelineFigures:
    """What a timeline says about its launch, in the timeline's unit.

    The *tail* starts when the last block starts: from then on no block waits, and every slot
    that frees stays empty until the launch ends. ``tail_idle_sm_time`` adds up, over the SMs, the
    time in the tail an SM had no block at all; ``idle_slot_time_while_queued`` is slot-time left
    empty while blocks were still waiting (0 for a dispatcher that starts a block the moment a
    slot frees; on real hardware, launch jitter).
    """

    blocks: int
    makespan: float
    total_work: float
    longest_block: float
    tail_start: float
    tail_length: float
    tail_idle_sm_time: float
    tail_idle_slot_time: float
    idle_slot_time_while_queued: float
    sm_busy: tuple[float, ...]  # per SM: time it held at least one block
    sm_work: tuple[float, ...]  # per SM: the sum of its blocks' durations
    sms_used: int

    queued_capacity: float = 0.0  # slots x makespan: all the slot-time the launch had

    @property
    def queued_idle_share(self) -> float:
        """idle_slot_time_while_queued as a share of all the launch's slot-time (0 when none).

        Of the whole launch, not of the time before the tail: on the H100, a launch that fits in
        one wave starts its blocks over about 300 ns of a 200 us run, and that stagger, taken over
        its own 300 ns, read as 55% of the slots left empty."""
        if self.queued_capacity <= 0:
            return 0.0
        return self.idle_slot_time_while_queued / self.queued_capacity

    def to_dict(self) -> dict[str, Any]:
        return {
            "blocks": self.blocks,
            "makespan": self.makespan,
            "total_work": self.total_work,
            "longest_block": self.longest_block,
            "tail_start": self.tail_start,
            "tail_length": self.tail_length,
            "tail_idle_sm_time": self.tail_idle_sm_time,
            "tail_idle_slot_time": self.tail_idle_slot_time,
            "idle_slot_time_while_queued": self.idle_slot_time_while_queued,
            "sm_busy": list(self.sm_busy),
            "sm_work": list(self.sm_work),
            "sms_used": self.sms_used,
        }


@dataclass(frozen=True, eq=False)
class Timeline:
    """Per block, in launch order: its SM, its slot on that SM, its start and end.

    ``slot`` is which of the SM's ``slots_per_sm`` resident-block places it held (rows of the
    Gantt chart); a measurement that cannot know it gets it assigned (``assign_slots``).
    """

    sm_count: int
    slots_per_sm: int
    sm: np.ndarray  # int32
    slot: np.ndarray  # int32
    start: np.ndarray  # float64, the first start is 0
    end: np.ndarray  # float64
    unit: str = "mean block"

    @property
    def blocks(self) -> int:
        return int(self.start.shape[0])

    @property
    def slots(self) -> int:
        return self.sm_count * self.slots_per_sm

    @cached_property
    def starts_sorted(self) -> np.ndarray:
        return self.start if _is_sorted(self.start) else np.sort(self.start)

    @cached_property
    def ends_sorted(self) -> np.ndarray:
        return np.sort(self.end)

    def counts_at(self, t: float) -> tuple[int, int, int]:
        """(waiting, running, finished) blocks at time ``t``: what the view's counters show."""
        started = int(np.searchsorted(self.starts_sorted, t, side="right"))
        done = int(np.searchsorted(self.ends_sorted, t, side="right"))
        return self.blocks - started, started - done, done

    @cached_property
    def figures(self) -> TimelineFigures:
        if self.blocks == 0:
            zeros = (0.0,) * self.sm_count
            return TimelineFigures(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, zeros, zeros, 0)
        start, end = self.start, self.end
        makespan = float(end.max())
        tail_start = float(start.max())
        durations = end - start
        busy = _union_per_sm(self.sm, start, end, self.sm_count, self._by_sm())
        # only the blocks still running when the tail starts are in it (at most a few per slot)
        late = np.flatnonzero(end > tail_start)
        late_sm = self.sm[late]
        busy_tail = _union_per_sm(
            late_sm,
            np.maximum(start[late], tail_start),
            end[late],
            self.sm_count,
            np.lexsort((start[late], late_sm)),
        )
        tail_length = makespan - tail_start
        before = np.minimum(end, tail_start) - np.minimum(start, tail_start)
        queued_capacity = self.slots * makespan
        work = float(durations.sum())
        return TimelineFigures(
            blocks=self.blocks,
            makespan=makespan,
            total_work=work,
            longest_block=float(durations.max()),
            tail_start=tail_start,
            tail_length=tail_length,
            # max(0, ...): the sums are of floats, and an exact 0 must not print as -0.00
            tail_idle_sm_time=max(0.0, float(self.sm_count * tail_length - busy_tail.sum())),
            tail_idle_slot_time=max(0.0, float(self.slots * tail_length - (work - before.sum()))),
            idle_slot_time_while_queued=self._idle_slot_time_while_queued(tail_start),
            sm_busy=tuple(float(b) for b in busy),
            sm_work=tuple(float(w) for w in np.bincount(self.sm, weights=durations, minlength=self.sm_count)),
            sms_used=int(np.count_nonzero(np.bincount(self.sm, minlength=self.sm_count))),
            queued_capacity=queued_capacity,
        )

    def _idle_slot_time_while_queued(self, tail_start: float) -> float:
        """The integral, up to the tail, of min(blocks waiting, slots empty): slot-time a waiting
        block could have used. Slots beyond the blocks there are to start are not counted."""
        times = np.unique(np.concatenate((self.starts_sorted, self.ends_sorted, [0.0, tail_start])))
        times = times[times <= tail_start]
        if times.size < 2:
            return 0.0
        at = times[:-1]
        started = np.searchsorted(self.starts_sorted, at, side="right")
        done = np.searchsorted(self.ends_sorted, at, side="right")
        waiting = self.blocks - started
        empty = np.maximum(self.slots - (started - done), 0)
        return max(0.0, float(np.sum(np.minimum(waiting, empty) * np.diff(times))))

    def _by_sm(self) -> np.ndarray:
        """Block order sorted by SM, then by start (a stable sort keeps start order when it was)."""
        if _is_sorted(self.start):
            # numpy sorts 16-bit integers by radix: ten times faster than the 32-bit merge sort
            key = self.sm.astype(np.int16) if self.sm_count <= np.iinfo(np.int16).max else self.sm
            return np.argsort(key, kind="stable")
        return np.lexsort((self.start, self.sm))

    def sm_running(self, sm: int) -> np.ndarray:
        """Indices of the blocks that ran on ``sm``, in start order (for the inspector and tests)."""
        idx = np.flatnonzero(self.sm == sm)
        return idx[np.argsort(self.start[idx], kind="stable")]


def _is_sorted(values: np.ndarray) -> bool:
    return bool(values.shape[0] < 2 or np.all(values[1:] >= values[:-1]))


def _union_per_sm(
    sm: np.ndarray, start: np.ndarray, end: np.ndarray, sm_count: int, order: np.ndarray
) -> np.ndarray:
    """Per SM, the length of the union of its blocks' [start, end) intervals.

    Sorted by SM then start, each block adds what reaches past the furthest end before it on the
    same SM. Shifting each SM's times by (its number x more than the whole span) keeps one running
    maximum from leaking into the next SM's blocks, so the whole pass is three numpy calls."""
    if order.shape[0] == 0:
        return np.zeros(sm_count)
    s, e, g = start[order], end[order], sm[order].astype(np.int64)
    span = float(e.max() - min(0.0, float(s.min()))) + 1.0
    shift = g * (2.0 * span)
    s2, e2 = s + shift, e + shift
    reach = np.maximum.accumulate(e2)
    before = np.empty_like(reach)
    before[0] = -np.inf
    before[1:] = reach[:-1]
    added = np.clip(e2 - np.maximum(s2, before), 0.0, None)
    return np.bincount(g, weights=added, minlength=sm_count)
