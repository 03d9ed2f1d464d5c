"""The grid a streaming kernel is launched with, and the strided copy's footprint: pure arithmetic,
checked against brute force over thousands of cases, the smallest included."""

from __future__ import annotations

import random

from explorer.bench.grid import THREADS_PER_SM_DEFAULT, UNROLL, resident_blocks
from explorer.bench.workload import (
    DRAM_FOOTPRINT_X_L2,
    FLOAT32_BYTES,
    MIB,
    STRIDED_COPY_ELEMENTS_GPU,
    strided_copy_elements,
)


def brute_blocks(n: int, threads: int, sms: int | None, per_sm_threads: int | None, per_thread: int) -> int:
    """The fewest blocks whose threads, ``per_thread`` elements each, cover ``n``; then no more than
    the SMs hold at once."""
    blocks = 1
    while blocks * threads * per_thread < n:
        blocks += 1
    if sms:
        held = sms * max(1, (per_sm_threads or THREADS_PER_SM_DEFAULT) // threads)
        blocks = min(blocks, held)
    return blocks


def test_resident_blocks_matches_brute_force():
    rng = random.Random(7)
    cases = [(1, 32, None, None, 1), (1, 1024, 1, 1024, 4), (4097, 1024, 132, 2048, UNROLL)]
    for _ in range(3000):
        cases.append(
            (
                rng.randint(1, 50_000),
                rng.choice([32, 64, 256, 1024]),
                rng.choice([None, 1, 2, 7, 132]),
                rng.choice([None, 1024, 1536, 2048]),
                rng.choice([1, 2, UNROLL]),
            )
        )
    for n, threads, sms, per_sm, per_thread in cases:
        got = resident_blocks(n, threads, sms, per_sm, per_thread)
        assert got == brute_blocks(n, threads, sms, per_sm, per_thread), (n, threads, sms, per_sm, per_thread)
        assert got >= 1


def test_a_big_stream_fills_every_sm_and_no_more():
    # 100M elements on an H200 (132 SMs, 2048 threads each) in blocks of 1024: two blocks per SM
    assert resident_blocks(100_000_000, 1024, 132, 2048) == 264
    # a block wider than an SM holds still gets one block per SM
    assert resident_blocks(100_000_000, 1024, 10, 768) == 10


def test_strided_copy_footprint_is_at_least_four_l2s_at_stride_one():
    rng = random.Random(11)
    l2s = [None, 0, 1, MIB, 32 * MIB, 50 * MIB, 60 * MIB, 126 * 1000 * 1000]
    l2s += [rng.randint(1, 512 * MIB) for _ in range(2000)]
    for l2 in l2s:
        n = strided_copy_elements(l2)
        assert n >= STRIDED_COPY_ELEMENTS_GPU
        if not l2:
            assert n == STRIDED_COPY_ELEMENTS_GPU
            continue
        footprint = 2 * FLOAT32_BYTES * n  # the source and the copy at stride 1
        assert footprint >= DRAM_FOOTPRINT_X_L2 * l2, l2
        if n > STRIDED_COPY_ELEMENTS_GPU:  # whole Mi elements, and no more of them than needed
            assert n % MIB == 0
            assert 2 * FLOAT32_BYTES * (n - MIB) < DRAM_FOOTPRINT_X_L2 * l2
    assert strided_copy_elements(60 * MIB) == 30 * MIB  # an H200's 60 MiB L2: 240 MiB at stride 1
    assert strided_copy_elements(32 * MIB) == STRIDED_COPY_ELEMENTS_GPU  # 16 Mi elements already suffice
    assert strided_copy_elements(100, base=100) == 100  # the simulator tests' base is kept
