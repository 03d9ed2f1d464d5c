"""Slot-time left empty while blocks waited: the exact sweep against a brute-force count, and the
one-wave launch the H100 measured."""

from __future__ import annotations

import random

import numpy as np
import pytest

from explorer.launch.timeline import Timeline


def brute_idle(starts: list[int], ends: list[int], slots: int) -> float:
    """Unit by unit up to the last start: min(blocks waiting, slots empty) at each unit's middle."""
    tail = max(starts)
    total = 0.0
    for t in range(tail):
        mid = t + 0.5
        waiting = sum(1 for s in starts if s > mid)
        running = sum(1 for s, e in zip(starts, ends, strict=True) if s <= mid < e)
        total += min(waiting, max(slots - running, 0))
    return total


def test_the_sweep_equals_the_brute_force_count_over_thousands_of_random_timelines():
    rng = random.Random(29)
    for _ in range(3000):
        sms, per_sm = rng.randint(1, 4), rng.randint(1, 3)
        blocks = rng.randint(1, 14)
        starts = [rng.randint(0, 12) for _ in range(blocks)]
        starts[0] = 0
        ends = [s + rng.randint(1, 6) for s in starts]
        t = Timeline(
            sms,
            per_sm,
            np.array([rng.randrange(sms) for _ in range(blocks)], np.int32),
            np.zeros(blocks, np.int32),
            np.array(starts, np.float64),
            np.array(ends, np.float64),
        )
        expected = brute_idle(starts, ends, sms * per_sm)
        assert t.figures.idle_slot_time_while_queued == pytest.approx(expected), (starts, ends, sms, per_sm)


def test_a_one_wave_launch_with_launch_stagger_leaves_almost_no_slot_time_empty():
    """The H100's measured launch: 990 blocks of 200 us on 1,056 slots, started over 288 ns. Taken
    over the 288 ns before the last start, the stagger read as 55% of the slots empty."""
    blocks, slots_per_sm, sms = 990, 8, 132
    start = np.linspace(0.0, 288.0, blocks)
    t = Timeline(
        sms,
        slots_per_sm,
        (np.arange(blocks) % sms).astype(np.int32),
        (np.arange(blocks) // sms).astype(np.int32),
        start,
        start + 200_000.0,
    )
    f = t.figures
    assert f.queued_idle_share < 0.001
    # every waiting block had a free slot: the empty slot-time is the sum of the blocks' own waits
    assert f.idle_slot_time_while_queued == pytest.approx(float(np.sum(start)), rel=0.01)
