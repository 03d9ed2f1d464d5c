"""The pointer chase and its latency ladder: the chain is one cycle through every slot, the
footprints climb from 4 KiB to 4 x the L2, and the one chase kernel (global and shared memory)
lands where the host's walk does (simulator)."""

from __future__ import annotations

import random
import textwrap

import pytest

from explorer.bench import chase
from explorer.launch_runs.chase import LINE_STRIDE, chain, slots_for, walk
from tests.simulator import run_on_simulator


def _cycle_length(nxt, stride: int) -> int:
    seen, j = 0, 0
    while True:
        j = int(nxt[j])
        seen += 1
        if j == 0:
            return seen


def test_every_chain_is_one_cycle_through_all_its_slots():
    rng = random.Random(5)
    for slots in [1, 2, 3, *(rng.randint(1, 3000) for _ in range(2000))]:
        stride = rng.choice((1, 2, LINE_STRIDE))
        nxt = chain(slots, seed=slots, stride=stride)
        assert len(nxt) == slots * stride
        targets = sorted(nxt[::stride].tolist())
        assert targets == [k * stride for k in range(slots)]  # each slot pointed at once, slots only
        assert _cycle_length(nxt, stride) == slots  # one cycle: a lap visits each slot once
        assert walk(nxt, slots) == 0


def test_chains_differ_by_seed_and_repeat_with_it():
    assert chain(1000, seed=1).tolist() == chain(1000, seed=1).tolist()
    assert chain(1000, seed=1).tolist() != chain(1000, seed=2).tolist()
    assert slots_for(4096) == 32 and slots_for(4096, stride=1) == 1024 and slots_for(1) == 1


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
        chain(0)
    with pytest.raises(ValueError, match="stride is 0"):
        chain(4, stride=0)
    with pytest.raises(ValueError, match="int32 indices"):
        chain(2**27, stride=32)


SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.numbacuda import cuda
    from explorer.launch_runs import measured_kernels as mk
    from explorer.launch_runs.chase import chain, walk
    from explorer.bench.chase import measure_ladder

    out = []
    for slots, steps, warm in ((1, 5, 0), (2, 3, 1), (97, 50, 97), (32, 700, 5), (513, 513, 0)):
        nxt = chain(slots, seed=slots)
        got = cuda.to_device(np.full(3, -1, np.int64))
        mk.chase[1, 1](cuda.to_device(nxt), warm, steps, got)
        host = got.copy_to_host()
        out.append([int(host[2]), walk(nxt, warm + steps), int(host[0]) > 0, int(host[1]) > 0])
    nxt = chain(mk.SHARED_SLOTS, seed=3, stride=1)
    got = cuda.to_device(np.full(3, -1, np.int64))
    mk.chase_shared[1, 1](cuda.to_device(nxt), 77, got)
    shared = [int(got.copy_to_host()[2]), walk(nxt, mk.SHARED_SLOTS + 77)]
    ladder = measure_ladder("sim", 2048, steps=40, warm_steps=64)
    print("RESULT" + json.dumps({"global": out, "shared": shared, "ladder": ladder.to_dict()}))
    """
)


@pytest.mark.slow
def test_the_chase_kernels_land_where_the_host_walk_does_on_the_simulator():
    from explorer.roofs.latency import LatencyLadder

    got = run_on_simulator(SCRIPT)
    assert len(got["global"]) == 5
    assert all(end == want and cycles and ns for end, want, cycles, ns in got["global"]), got["global"]
    assert got["global"][-1][1] == 0  # a whole lap of 513 slots comes back to the start
    assert got["shared"][0] == got["shared"][1]
    ladder = LatencyLadder.from_dict(got["ladder"])  # what the store would keep, checked
    assert [r.footprint_bytes for r in ladder.rungs] == chase.footprints(2048)
    assert ladder.backend == "simulator" and ladder.steps == 40 and ladder.shared_cycles
    assert all(r.cycles > 0 and r.ns > 0 for r in ladder.rungs)
    assert "clock64" in ladder.method
