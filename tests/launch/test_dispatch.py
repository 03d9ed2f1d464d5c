"""Dispatch in time: the compiled event loop against a plain slot-by-slot reference, equal blocks
against the wave picture, varied blocks within the bounds, and the timeline's figures against a
unit-by-unit count."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.devices.catalog import load_catalog
from explorer.inputs import InputError
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.dispatch import (
    MAX_BLOCKS,
    dispatch_blocks,
    simulate_dispatch,
)
from explorer.launch.durations import (
    block_durations,
    mandelbrot_row_work,
    parse_duration_numbers,
    parse_durations,
)
from explorer.launch.schedule import plan_launch
from explorer.launch.timeline import Timeline

CATALOG = {d.name: d for d in load_catalog()}
GPUS = [
    CATALOG[n]
    for n in (
        "NVIDIA GeForce GTX 1650 Laptop GPU",
        "NVIDIA Tesla V100 SXM2",
        "NVIDIA A100 SXM4 40GB",
        "NVIDIA H100 SXM5 80GB",
        "NVIDIA GeForce RTX 3050 Laptop GPU",
        "NVIDIA GeForce RTX 5090",
    )
]


def reference_dispatch(durations, sm_count, slots_per_sm, policy):
    """The plain version: every slot's free time in a list; at each moment fill the free slots one
    block at a time by the policy's rule, then move to the next moment a slot frees."""
    free_at = [[0.0] * slots_per_sm for _ in range(sm_count)]
    out = []
    t, i, last = 0.0, 0, sm_count - 1
    n = len(durations)
    while i < n:
        while i < n:
            free = [sum(1 for x in free_at[s] if x <= t) for s in range(sm_count)]
            if not any(free):
                break
            if policy == "free":
                s = max(range(sm_count), key=lambda q: (free[q], -q))
            else:
                s = next(q % sm_count for q in range(last + 1, last + 1 + sm_count) if free[q % sm_count])
            k = next(k for k in range(slots_per_sm) if free_at[s][k] <= t)
            free_at[s][k] = t + durations[i]
            out.append((t, s, k))
            last, i = s, i + 1
        if i < n:
            t = min(x for row in free_at for x in row if x > t)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sm_count=st.integers(1, 6),
    slots=st.integers(1, 4),
    durations=st.lists(st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.0, 1.25, 7.0]), min_size=1, max_size=60),
    policy=st.sampled_from(["free", "round-robin"]),
)
def test_event_loop_matches_the_slot_by_slot_reference(sm_count, slots, durations, policy):
    """Few distinct durations make many blocks end at the same moment, where the policies differ."""
    raw = np.array(durations)
    start, sm, slot = dispatch_blocks(raw, sm_count, slots, policy)
    assert [
        (float(a), int(b), int(c)) for a, b, c in zip(start, sm, slot, strict=True)
    ] == reference_dispatch(durations, sm_count, slots, policy)


@settings(max_examples=100, deadline=None)
@given(
    sm_count=st.integers(1, 5),
    slots=st.integers(1, 3),
    durations=st.lists(st.floats(0.01, 10.0, allow_nan=False), min_size=2, max_size=40),
    policy=st.sampled_from(["free", "round-robin"]),
)
def test_event_loop_matches_the_reference_with_continuous_durations(sm_count, slots, durations, policy):
    raw = np.array(durations)
    start, sm, slot = dispatch_blocks(raw, sm_count, slots, policy)
    assert [
        (float(a), int(b), int(c)) for a, b, c in zip(start, sm, slot, strict=True)
    ] == reference_dispatch(durations, sm_count, slots, policy)


def test_the_policies_differ_in_placement_only():
    """Blocks ending together free slots on several SMs: free and round-robin place the next
    blocks differently, but start them at the same moments (both are work-conserving)."""
    raw = np.array([2.0, 1.0, 1.0, 2.0, 1.0, 1.0] * 20)
    a = dispatch_blocks(raw, 3, 2, "free")
    b = dispatch_blocks(raw, 3, 2, "round-robin")
    assert np.array_equal(a[0], b[0])
    assert not np.array_equal(a[1], b[1])


def _random_launch(data):
    device = data.draw(st.sampled_from(GPUS))
    threads = data.draw(st.sampled_from([32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024]))
    regs = data.draw(st.sampled_from([16, 32, 40, 64, 96, 128, 255]))
    smem = data.draw(st.sampled_from([0, 1024, 8192, 16384, 32768, 48 * 1024]))
    blocks = data.draw(st.integers(1, 20_000))
    config = LaunchConfig(Dim3(blocks), Dim3(threads), smem, regs)
    try:
        return plan_launch(config, device)
    except InputError:  # a launch this device refuses (too many registers or too much shared memory)
        return None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_uniform_makespan_is_the_wave_count(data):
    plan = _random_launch(data)
    if plan is None:
        return
    for policy in ("free", "round-robin"):
        result = simulate_dispatch(plan, parse_durations("uniform"), policy)
        f = result.figures
        assert f.makespan == math.ceil(plan.total_blocks / plan.concurrent_blocks) == plan.waves
        assert f.idle_slot_time_while_queued == 0
        # and every block sits where the wave picture puts it
        for b in {0, plan.total_blocks // 2, plan.total_blocks - 1}:
            place = plan.placement(b)
            t = result.timeline
            assert (int(t.sm[b]), int(t.slot[b]), float(t.start[b])) == (place.sm, place.slot, place.wave)


def test_the_event_loop_agrees_with_the_closed_form_for_equal_blocks():
    """Equal blocks never reach the loop (closed form); run it anyway and compare."""
    from explorer.launch.dispatch import equal_blocks
    from explorer.launch.dispatch_loop import run_dispatch

    for sm_count, slots, blocks in ((16, 1, 98), (132, 8, 5000), (5, 3, 7)):
        for rr in (False, True):
            loop = run_dispatch(np.full(blocks, 2.0), sm_count, slots, rr)
            closed = equal_blocks(blocks, sm_count, slots, 2.0)
            for a, b in zip(loop, closed, strict=True):
                assert np.array_equal(a, b)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    kind=st.sampled_from(
        ["jitter:0.3", "jitter:90%", "heavy:1.2", "heavy:3", "rows:1,5,1", "rows:mandelbrot"]
    ),
    seed=st.integers(0, 2**32),
)
def test_varied_makespan_lies_within_the_bounds(data, kind, seed):
    plan = _random_launch(data)
    if plan is None:
        return
    result = simulate_dispatch(
        plan, parse_durations(kind), data.draw(st.sampled_from(["free", "round-robin"])), seed
    )
    f = result.figures
    eps = 1e-9 * max(1.0, result.upper_bound)
    assert result.lower_bound - eps <= f.makespan <= result.upper_bound + eps
    if kind.startswith("rows"):  # in units of the mean block (random kinds: of the expected mean)
        assert f.total_work == pytest.approx(plan.total_blocks)
    assert f.idle_slot_time_while_queued <= eps * plan.concurrent_blocks


def test_seed_makes_runs_reproducible_and_different():
    plan = plan_launch(LaunchConfig(Dim3(5000), Dim3(256)), CATALOG["NVIDIA A100 SXM4 40GB"])
    spec = parse_durations("heavy:1.5")
    a, b, c = (simulate_dispatch(plan, spec, "free", s) for s in (1, 1, 2))
    assert np.array_equal(a.timeline.start, b.timeline.start)
    assert a.figures.makespan != c.figures.makespan


# ----------------------------------------------------------------------------- figures


def reference_figures(timeline: Timeline):
    """Integer times only: walk unit by unit and count who is busy."""
    makespan = int(round(timeline.end.max()))
    tail_start = int(round(timeline.start.max()))
    busy = np.zeros((timeline.sm_count, makespan), dtype=int)
    for s, a, b in zip(timeline.sm, timeline.start, timeline.end, strict=True):
        busy[s, int(round(a)) : int(round(b))] += 1
    sm_busy = (busy > 0).sum(axis=1)
    tail_idle = int((busy[:, tail_start:] == 0).sum())
    tail_slot_idle = int((timeline.slots_per_sm - busy[:, tail_start:]).sum())
    queued_idle = int((timeline.slots_per_sm - busy[:, :tail_start]).sum())
    return sm_busy, tail_idle, tail_slot_idle, queued_idle, makespan, tail_start


@settings(max_examples=200, deadline=None)
@given(
    sm_count=st.integers(1, 6),
    slots=st.integers(1, 3),
    durations=st.lists(st.integers(1, 6), min_size=1, max_size=50),
    policy=st.sampled_from(["free", "round-robin"]),
)
def test_figures_match_a_unit_by_unit_count(sm_count, slots, durations, policy):
    raw = np.array(durations, float)
    start, sm, slot = dispatch_blocks(raw, sm_count, slots, policy)
    t = Timeline(sm_count, slots, sm, slot, start, start + raw)
    f = t.figures
    sm_busy, tail_idle, tail_slot_idle, queued_idle, makespan, tail_start = reference_figures(t)
    assert list(f.sm_busy) == list(sm_busy)
    assert (f.tail_idle_sm_time, f.tail_idle_slot_time, f.idle_slot_time_while_queued) == (
        tail_idle,
        tail_slot_idle,
        queued_idle,
    )
    assert (f.makespan, f.tail_start) == (makespan, tail_start)
    assert f.sm_work == tuple(float(x) for x in np.bincount(sm, weights=raw, minlength=sm_count))


def test_figures_of_a_timeline_with_gaps():
    """A measured timeline is not gap-free: an SM idle while blocks queued is counted."""
    # 2 SMs, 1 slot: SM 1 starts its first block late (at 2), SM 0 runs two blocks back to back
    t = Timeline(
        2,
        1,
        np.array([0, 1, 0], np.int32),
        np.zeros(3, np.int32),
        np.array([0.0, 2.0, 1.0]),
        np.array([1.0, 3.0, 3.0]),
    )
    f = t.figures
    assert f.tail_start == 2.0 and f.makespan == 3.0
    assert f.idle_slot_time_while_queued == 2.0  # SM 1 idle from 0 to 2
    assert f.sm_busy == (3.0, 1.0)
    assert t.counts_at(1.5) == (1, 1, 1)


# ----------------------------------------------------------------------------- durations


def test_durations_by_kind():
    grid = Dim3(40, 10)
    raw, unit = block_durations(parse_durations("jitter:0.25"), grid, seed=3)
    assert raw.min() >= 0.75 and raw.max() <= 1.25 and unit == 1.0
    raw, unit = block_durations(parse_durations("rows:1,3"), grid)
    # rows 0..4 weigh 1, rows 5..9 weigh 3: per block row, blockIdx.y = block // 40
    assert raw[:200].tolist() == [1.0] * 200 and raw[200:].tolist() == [3.0] * 200 and unit == 2.0
    raw, _ = block_durations(parse_durations("rows:1,2"), Dim3(4))  # one row: spread over blockIdx.x
    assert raw.tolist() == [1.0, 1.0, 2.0, 2.0]
    raw, _ = block_durations(parse_durations("heavy:2.5"), Dim3(200_000), seed=1)
    assert raw.min() >= (2.5 - 1) / 2.5 and raw.mean() == pytest.approx(1.0, rel=0.05)


def test_mandelbrot_rows_cost_most_through_the_set():
    work = mandelbrot_row_work(64)
    assert max(work[24:40]) > 10 * max(work[:4] + work[-4:])
    assert min(work) >= 1


def test_durations_file(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("# measured\n1, 2.5\n3e-1 4\n", encoding="ascii")
    spec = parse_durations(f"file:{path}")
    raw, unit = block_durations(spec, Dim3(4))
    assert raw.tolist() == [1.0, 2.5, 0.3, 4.0] and unit == pytest.approx(1.95)
    with pytest.raises(InputError, match="has 4 numbers; the grid has 5 blocks"):
        block_durations(spec, Dim3(5))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "holds no numbers"),
        (b"1 2 x 4", "entry 3 is 'x'"),
        (b"1 0", "entry 2 is 0; each must be above 0"),
        (b"1 1e999", "entry 2 is 1e999"),
        (b"1 -2", "entry 2 is '-2'"),
        ("1 \u0663".encode(), "entry 2"),
        (b"nan", "entry 1 is 'nan'"),
    ],
)
def test_bad_durations_files_are_one_line(data, message):
    with pytest.raises(InputError, match=message):
        parse_duration_numbers(data, "f")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("lol", "is not one of"),
        ("jitter", "needs a value"),
        ("jitter:1", "below 1"),
        ("jitter:-0.1", "decimal number"),
        ("heavy:1", "above 1"),
        ("heavy:1e400", "decimal number"),
        ("heavy:" + "9" * 5000, "decimal number"),
        ("rows:1,,0", "weight 2 of rows: is 0"),
        ("rows:" + ",".join(["1"] * 5000), "at most 4096"),
        ("file:/nonexistent/x", "cannot read"),
        ("file:/dev/null", "is not a file"),
        ("file:a\x00b", "cannot read"),
        ("uniform:2", "takes no value"),
    ],
)
def test_bad_durations_are_one_line(text, message):
    with pytest.raises(InputError, match=message):
        parse_durations(text)


def test_too_many_blocks_is_refused_before_any_work():
    plan = plan_launch(LaunchConfig(Dim3(MAX_BLOCKS + 1), Dim3(32)), CATALOG["NVIDIA H100 SXM5 80GB"])
    with pytest.raises(InputError, match=f"at most {MAX_BLOCKS:,}"):
        simulate_dispatch(plan, parse_durations("uniform"))
