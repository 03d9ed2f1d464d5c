"""The tiled-matmul count model against the kernel run thread by thread, over thousands of random
sizes and tiles (ragged ones included); the closed forms a course quotes; the bank model's word on
the two shared reads against a count of words per bank; and the stepper's counters, which must end
at the model's totals."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.devices.limits import limits_for_cc
from explorer.errors import UserError
from explorer.memory.tiling import (
    BlockLimits,
    MatmulShape,
    block_counts,
    check_launch,
    naive_counts,
    tile_cost,
    tile_reads,
    tiled_counts,
    tiling_model,
)
from explorer.memory.tiling_steps import BlockTicks

# --- the reference: the book's kernel executed one thread at a time, sharing no code with the model --


def run_tiled(m, n, k, t, a, b):
    """Every block, every phase, every thread, as the guarded kernel's lines run; counts every
    access per block. Returns C and {(bx, by): Counter}."""
    gx, gy = -(-n // t), -(-m // t)
    c = [[None] * n for _ in range(m)]
    per_block = {}
    for by in range(gy):
        for bx in range(gx):
            loads = stores = shared_loads = shared_stores = barriers = flops = executed = 0
            sums = [[0] * t for _ in range(t)]
            for ph in range(-(-k // t)):
                a_s = [[None] * t for _ in range(t)]
                b_s = [[None] * t for _ in range(t)]
                for ty in range(t):  # every thread: load its two elements (or store a zero)
                    for tx in range(t):
                        row, col = by * t + ty, bx * t + tx
                        if row < m and ph * t + tx < k:
                            a_s[ty][tx] = a[row][ph * t + tx]
                            loads += 1
                        else:
                            a_s[ty][tx] = 0
                        if ph * t + ty < k and col < n:
                            b_s[ty][tx] = b[ph * t + ty][col]
                            loads += 1
                        else:
                            b_s[ty][tx] = 0
                        shared_stores += 2
                barriers += 1  # __syncthreads(): every tile element is in place
                for ty in range(t):
                    row = by * t + ty
                    for tx in range(t):
                        inside = row < m and bx * t + tx < n
                        total = sums[ty][tx]
                        for kk in range(t):
                            total += a_s[ty][kk] * b_s[kk][tx]
                            shared_loads += 2
                            executed += 2
                            if inside and ph * t + kk < k:
                                flops += 2
                        sums[ty][tx] = total
                barriers += 1
            for ty in range(t):
                for tx in range(t):
                    row, col = by * t + ty, bx * t + tx
                    if row < m and col < n:
                        c[row][col] = sums[ty][tx]
                        stores += 1
            per_block[(bx, by)] = Counter(
                global_loads=loads,
                global_stores=stores,
                shared_loads=shared_loads,
                shared_stores=shared_stores,
                barriers=barriers,
                flops=flops,
                executed_flops=executed,
            )
    return c, per_block


def run_naive(m, n, k, a, b, side=16):
    count = Counter()
    c = [[None] * n for _ in range(m)]
    for by in range(-(-m // side)):
        for bx in range(-(-n // side)):
            for ty in range(side):
                for tx in range(side):
                    row, col = by * side + ty, bx * side + tx
                    if row < m and col < n:
                        total = 0
                        for kk in range(k):
                            total += a[row][kk] * b[kk][col]
                            count["global_loads"] += 2
                            count["flops"] += 2
                        c[row][col] = total
                        count["global_stores"] += 1
    return c, count


def matmul(a, b):
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in zip(*b, strict=True)] for row in a]


def matrices(m, n, k, seed):
    import random

    rng = random.Random(seed)
    a = [[rng.randint(-3, 3) for _ in range(k)] for _ in range(m)]
    b = [[rng.randint(-3, 3) for _ in range(n)] for _ in range(k)]
    return a, b


SIZES = st.integers(1, 33)
TILES = st.one_of(st.integers(1, 9), st.sampled_from([12, 16, 17, 24, 31, 32]))


@settings(max_examples=2000, deadline=None)
@given(SIZES, SIZES, SIZES, TILES, st.integers(0, 2**16))
def test_counts_equal_the_kernel_run_thread_by_thread(m, n, k, t, seed):
    a, b = matrices(m, n, k, seed)
    c, per_block = run_tiled(m, n, k, t, a, b)
    assert c == matmul(a, b)  # the reference is the book's kernel: zeros padded in, right answer out
    shape = MatmulShape(m, n, k, t)
    total = sum(per_block.values(), Counter())
    counts = tiled_counts(shape)
    for key in ("global_loads", "global_stores", "shared_loads", "shared_stores", "flops", "executed_flops"):
        assert getattr(counts, key) == total[key], key
    assert counts.barriers == total["barriers"]
    assert {count["barriers"] for count in per_block.values()} == {counts.barriers_per_block}
    for (bx, by), count in per_block.items():
        mine = block_counts(shape, bx, by)
        assert (mine.global_loads, mine.global_stores, mine.flops) == (
            count["global_loads"],
            count["global_stores"],
            count["flops"],
        )
    assert counts.global_bytes == 4 * (total["global_loads"] + total["global_stores"])
    assert counts.shared_bytes_per_block == 2 * t * t * 4


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 30), st.integers(0, 2**16))
def test_naive_counts_equal_the_naive_kernel_run_thread_by_thread(m, n, k, seed):
    a, b = matrices(m, n, k, seed)
    c, count = run_naive(m, n, k, a, b)
    assert c == matmul(a, b)
    counts = naive_counts(MatmulShape(m, n, k, 8))
    assert (counts.global_loads, counts.global_stores, counts.flops) == (
        count["global_loads"],
        count["global_stores"],
        count["flops"],
    )
    assert counts.shared_loads == counts.shared_stores == counts.barriers_per_block == 0


def test_the_issue_s_worked_example():
    model = tiling_model(MatmulShape(64, 64, 64, 8))
    assert model.tiled.global_loads == 65_536
    assert model.tiled.shared_loads == 524_288
    assert model.tiled.barriers_per_block == 16
    assert model.naive.global_loads == 524_288
    assert model.load_ratio == 8


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 64), st.integers(1, 64), st.integers(1, 64), st.integers(1, 32))
def test_divisible_sizes_follow_the_closed_forms(mt, nt, kt, t):
    m, n, k = mt * t, nt * t, kt * t
    s = MatmulShape(m, n, k, t)
    assert s.divisible
    counts = tiled_counts(s)
    assert counts.global_loads * t == 2 * m * n * k
    assert counts.shared_loads == 2 * m * n * k  # padded grid = exact grid: each product's two reads
    assert counts.executed_flops == counts.flops == 2 * m * n * k
    assert Fraction(counts.flops, counts.global_bytes) == Fraction(k * t, 2 * (2 * k + t))
    assert counts.intensity_flop_per_byte == pytest.approx(k * t / (2 * (2 * k + t)), rel=1e-12)
    naive = naive_counts(s)
    assert Fraction(naive.flops, naive.global_bytes) == Fraction(k, 2 * (2 * k + 1))


# --- the shared reads: the bank model against words counted per bank ---------------------------


def ref_reads(t):
    """For As[ty][k] and Bs[k][tx]: (worst degree, wavefronts summed, widest broadcast) over every
    warp and k, counting the distinct 4-byte words each of the 32 banks is asked for."""
    out = []
    for index in (lambda tx, ty, k: ty * t + k, lambda tx, ty, k: k * t + tx):
        worst = total = widest = 0
        for first in range(0, t * t, 32):
            lanes = [(i % t, i // t) for i in range(first, min(first + 32, t * t))]
            for k in range(t):
                words = [index(tx, ty, k) for tx, ty in lanes]  # float32: one word per element
                per_bank = {}
                for word in words:
                    per_bank.setdefault(word % 32, set()).add(word)
                degree = max(len(v) for v in per_bank.values())
                worst, total = max(worst, degree), total + degree
                widest = max(widest, max(Counter(words).values()))
        out.append((worst, total, widest))
    return out


@pytest.mark.parametrize("t", range(1, 33))
def test_shared_reads_match_words_counted_per_bank(t):
    reads = tile_reads(t)
    assert [(r.worst_degree, r.wavefronts, r.most_lanes_per_word) for r in reads] == ref_reads(t)
    a_read, b_read = reads
    assert a_read.expression == "As[ty][k]" and b_read.expression == "Bs[k][tx]"
    # what a course says: As[ty][k] is a broadcast along a row, Bs[k][tx] spreads a warp over the banks
    assert a_read.conflict_free and b_read.conflict_free
    assert a_read.most_lanes_per_word == min(t, 32)
    if t == 32:
        assert len(set(b_read.example.lanes[i].bank for i in range(32))) == 32


# --- the launch a device accepts ----------------------------------------------------------------


def test_a_tile_over_the_block_limit_is_one_line_naming_the_limit():
    with pytest.raises(UserError) as err:
        check_launch(
            MatmulShape(64, 64, 64, 33), BlockLimits.of(limits_for_cc((7, 5)), "NVIDIA GeForce GTX 1650")
        )
    assert str(err.value) == (
        "a 33 x 33 tile needs a block of 1089 threads; NVIDIA GeForce GTX 1650 allows at most 1024 per "
        "block (T at most 32)"
    )
    check_launch(MatmulShape(64, 64, 64, 32), BlockLimits.any_gpu())


def test_shared_memory_over_the_device_s_is_refused_naming_it():
    small = BlockLimits("a GPU with 4 KiB of shared memory per block", 1024, 4096, (2**31 - 1, 65535, 65535))
    with pytest.raises(UserError, match=r"2 x 32 x 32 x 4 = 8192 bytes .* at most 4096 bytes of static"):
        check_launch(MatmulShape(64, 64, 64, 32), small)
    check_launch(MatmulShape(64, 64, 64, 16), small)  # 2 KiB fits
    both = BlockLimits.any_gpu()
    problems = str(pytest.raises(UserError, check_launch, MatmulShape(8, 8, 8, 111), both).value)
    assert "12321 threads" in problems and "98568 bytes" in problems and "49152" in problems


def test_a_grid_over_the_device_s_is_refused():
    with pytest.raises(UserError, match=r"grid y is 65536 blocks \(M / T rounded up\); .* at most 65535"):
        check_launch(MatmulShape(65536 * 2, 2, 2, 2), BlockLimits.any_gpu())


def test_tile_costs_come_from_the_occupancy_code():
    from explorer.launch.occupancy import occupancy

    limits = limits_for_cc((8, 6))
    for t in (2, 8, 16, 32):
        cost = tile_cost(t, limits, 32)
        assert cost.shared_bytes_per_block == 8 * t * t
        assert cost.occupancy == occupancy(limits, t * t, 32, 8 * t * t)


@pytest.mark.parametrize("value", [0, -1, 2**24 + 1])
def test_sizes_outside_the_model_are_one_line(value):
    with pytest.raises(UserError, match=r"^M is -?\d+; it must be 1 to 16,777,216$"):
        MatmulShape(value, 4, 4, 2)


# --- the stepper's counters end at the model's totals ----------------------------------------------


@settings(max_examples=300, deadline=None)
@given(SIZES, SIZES, SIZES, st.integers(2, 32), st.data())
def test_the_stepper_ends_at_the_model_s_totals(m, n, k, t, data):
    s = MatmulShape(m, n, k, t)
    gx, gy = s.grid
    bx, by = data.draw(st.integers(0, gx - 1)), data.draw(st.integers(0, gy - 1))
    timeline = BlockTicks(s, bx, by)
    end = len(timeline)
    grid, block = timeline.grid_counters(end), timeline.block_counters(end)
    totals, mine = tiled_counts(s), block_counts(s, bx, by)
    for name in ("global_loads", "global_stores", "shared_loads", "shared_stores", "flops"):
        assert getattr(grid, name) == getattr(totals, name), name
        assert getattr(block, name) == getattr(mine, name), name
    assert grid.barriers == totals.barriers and block.barriers == totals.barriers_per_block
    # the counters only grow, and the last state shows every in-range sum whole and stored
    values = [timeline.grid_counters(i) for i in range(0, end + 1, max(1, end // 7))]
    assert all(a.global_loads <= b.global_loads for a, b in zip(values, values[1:], strict=False))
    last = timeline.state(end)
    for ty in range(t):
        for tx in range(t):
            inside = timeline.in_range(tx, ty)
            assert last.terms[ty][tx] == (k if inside else 0)
            assert last.stored[ty][tx] == inside
