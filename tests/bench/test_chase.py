"""The pointer-chase latency ladder: the chain is one cycle through every slot, the footprints
climb from 4 KiB to 4 x the L2, and the kernel lands where the host's walk does (simulator)."""

from __future__ import annotations

import random
import textwrap

import pytest

from explorer.bench import chase
from tests.simulator import run_on_simulator


def _cycle_length(nxt) -> int:
    seen, j = 0, 0
    while True:
        j = int(nxt[j])
        seen += 1
        if j == 0:
            return seen


def test_every_chain_is_one_cycle_through_all_its_slots():
    rng = random.Random(5)
    for slots in [1, 2, 3, *(rng.randint(1, 3000) for _ in range(2000))]:
        nxt = chase.chain(slots, seed=slots)
        assert sorted(nxt.tolist()) == list(range(slots))  # a permutation
        assert _cycle_length(nxt) == slots  # one cycle: a lap visits each slot once
        assert chase.walk(nxt, slots) == 0


def test_chains_differ_by_seed_and_repeat_with_it():
    assert chase.chain(1000, seed=1).tolist() == chase.chain(1000, seed=1).tolist()
    assert chase.chain(1000, seed=1).tolist() != chase.chain(1000, seed=2).tolist()


def test_footprints_climb_from_4_kib_to_four_times_the_l2():
    h100 = 50 * 1024 * 1024
    sizes = chase.footprints(h100)
    assert sizes[0] == 4096 and sizes[-1] == 4 * h100
    assert all(b == 2 * a for a, b in zip(sizes[:-2], sizes[1:-1], strict=True))
    assert sizes[-2] < 4 * h100 <= 2 * sizes[-2]
    assert chase.footprints(512) == [4096]  # an L2 smaller than the first rung: one rung
    for l2 in range(1, 5000, 7):
        got = chase.footprints(l2)
        assert got[-1] >= 4 * l2 and got == sorted(set(got))


def test_bad_sizes_are_one_line_naming_the_value():
    with pytest.raises(ValueError, match="the L2 size is 0 bytes"):
        chase.footprints(0)
    with pytest.raises(ValueError, match="the chain has 0 slots"):
        chase.chain(0)


SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.numbacuda import cuda
    from explorer.bench import chase, roof_kernels

    out = []
    for slots, steps in ((1, 5), (2, 3), (97, 50), (4096 // chase.SLOT_BYTES, 700), (513, 513)):
        nxt = chase.chain(slots, seed=slots)
        got = cuda.to_device(np.full(1, -1, np.int64))
        roof_kernels.chase[1, 1](cuda.to_device(nxt), steps, got)
        out.append([int(got.copy_to_host()[0]), chase.walk(nxt, steps)])
    print("RESULT" + json.dumps(out))
    """
)


@pytest.mark.slow
def test_the_chase_kernel_lands_where_the_host_walk_does_on_the_simulator():
    out = run_on_simulator(SCRIPT)
    assert len(out) == 5 and all(got == want for got, want in out), out
    assert out[-1][1] == 0  # a whole lap of 513 slots comes back to the start
