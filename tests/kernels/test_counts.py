"""The per-line counting of a traced kernel, on recorded lanes: the same addresses give the same
counts as the Memory page's models, and both agree with a brute force over bytes and banks."""

from __future__ import annotations

import random

from explorer.kernels.counts import END, LaneAccess, LineCounts, access_counts, execution_counts, request_cost
from explorer.memory.banks import SharedAccess, bank_conflicts
from explorer.memory.coalescing import GlobalAccess, coalesce


def _brute_sectors(addresses: list[int], size: int) -> tuple[int, int]:
    data = {a + i for a in addresses for i in range(size)}
    return len({b // 32 for b in data}), -(-len(data) // 32)


def _brute_wavefronts(lanes: list[int], addresses: list[int], size: int) -> tuple[int, int]:
    per = 32 // max(1, size // 4)
    phases: dict[int, dict[int, set[int]]] = {}
    for lane, a in zip(lanes, addresses, strict=True):
        for w in range(a // 4, a // 4 + max(1, size // 4)):
            phases.setdefault(lane // per, {}).setdefault(w % 32, set()).add(w)
    return sum(max(len(ws) for ws in banks.values()) for banks in phases.values()), len(phases)


def test_random_traced_requests_match_a_brute_force_over_bytes_and_banks():
    rng = random.Random(11)
    for case in range(4000):
        size = rng.choice((1, 2, 4, 8, 16))
        lanes = sorted(rng.sample(range(32), rng.randint(1, 32)))
        if case % 4 == 0:  # the smallest: one lane
            lanes = [rng.randrange(32)]
        span = rng.choice((1, 2, 8, 64, 4096))
        addresses = [rng.randrange(span) * size for _ in lanes]
        assert request_cost("global", lanes, addresses, size) == _brute_sectors(addresses, size)
        assert request_cost("shared", lanes, addresses, size) == _brute_wavefronts(lanes, addresses, size)


def test_a_traced_stride_pattern_counts_as_the_memory_pages_model_does():
    rng = random.Random(5)
    for _ in range(3000):
        elem = rng.choice((1, 2, 4, 8, 16))
        stride, offset, active = rng.randint(0, 40), rng.randint(0, 40), rng.randint(1, 32)
        lanes = list(range(active))
        addresses = [(offset + lane * stride) * elem for lane in lanes]
        c = coalesce(GlobalAccess(elem_bytes=elem, stride=stride, offset=offset, active_lanes=active))
        assert request_cost("global", lanes, addresses, elem) == (c.sectors_per_request, c.ideal_sectors)
        b = bank_conflicts(SharedAccess(elem_bytes=elem, stride=stride, offset=offset, active_lanes=active))
        assert request_cost("shared", lanes, addresses, elem) == (b.wavefronts, b.ideal_wavefronts)


def test_lanes_of_one_warp_making_the_same_access_are_one_request_each_time():
    accesses = [
        LaneAccess(
            block=0,
            warp=0,
            lane=lane,
            line=7,
            space="global",
            kind="load",
            array=0,
            occurrence=k,
            address=(lane * 2 + 64 * k) * 4,
            size=4,
        )  # fmt: skip
        for lane in range(32)
        for k in range(3)
    ]
    lines: dict[int, LineCounts] = {}
    access_counts(accesses, lines)
    c = lines[7]
    assert (c.global_load_requests, c.global_load_sectors, c.global_load_sectors_ideal) == (3, 24, 12)
    assert c.first_access is not None and c.first_access["lanes"] == list(range(32))


def test_warp_executions_active_lanes_and_divergence_from_the_lanes_paths():
    # lanes 0-15 take line 3 then 5; lanes 16-31 take line 4 then 5: line 2 (the if) diverges once
    paths = {(0, 0, lane): [1, 2, 3 if lane < 16 else 4, 5] for lane in range(32)}
    # a second warp where only lane 0 runs a loop of 3 trips on line 6
    paths.update({(0, 1, lane): [1] + ([6, 7, 6, 7, 6, 7, 6] if lane == 0 else []) for lane in range(32)})
    lines: dict[int, LineCounts] = {}
    execution_counts(paths, {2, 6}, lines)
    assert lines[2].divergent_warps == 1 and lines[2].warp_executions == 1
    assert lines[3].warp_executions == 1 and lines[3].active_lanes_mean == 16
    assert lines[1].warp_executions == 2 and lines[1].active_lanes_mean == 32
    assert lines[6].warp_executions == 4 and lines[6].active_lanes_mean == 1 and lines[6].divergent_warps == 0
    assert lines[5].divergent_warps is None  # not a line with a branch
    assert END == -1
