"""Dispatch of whole launches: counts, idle threads, round-robin placement, waves, thread lookup."""

from __future__ import annotations

import pytest

from explorer.devices.model import CatalogGpu
from explorer.launch.config import Dim3, LaunchValidationError, parse_launch
from explorer.launch.schedule import SCHEDULER_NOTE, blocks_for, plan_launch

GTX1650 = CatalogGpu(name="NVIDIA GeForce GTX 1650", compute_capability=(7, 5), sm_count=16)
A100 = CatalogGpu(name="NVIDIA A100", compute_capability=(8, 0), sm_count=108)


def plan(grid, block, n=None, device=GTX1650, smem="0", regs="32"):
    return plan_launch(parse_launch(grid, block, smem, regs, n), device)


def test_numba_lesson_n_5466():
    """The lesson's N = 5466 with 1024-thread blocks: ceil(5466/1024) = 6 blocks, 6144 - 5466 = 678 idle."""
    assert blocks_for(5466, 1024) == 6
    p = plan("6", "1024", n="5466")
    assert (p.total_blocks, p.total_threads, p.idle_threads) == (6, 6144, 678)
    assert p.warps_per_block == 32 and p.total_warps == 192 and p.last_warp_active_lanes == 32
    # element 5465 is the last busy thread: block 5, thread 5465 - 5120 = 345
    assert not p.thread(5, 345).idle and p.thread(5, 346).idle
    assert p.block_busy_threads(5) == 346 and p.block_busy_threads(4) == 1024
    # warp 10 of block 5 holds threads 320..351: 26 of them are inside n
    assert p.warp_active_lanes(5, 10) == 32 and p.warp_busy_lanes(5, 10) == 26
    assert p.warp_busy_lanes(5, 11) == 0 and p.warp_busy_lanes(4, 31) == 32


def test_numba_lesson_vector_add_100000():
    assert blocks_for(100_000, 1024) == 98
    p = plan("98", "1024", n="100000")
    assert p.total_blocks == 98 and p.idle_threads == 98 * 1024 - 100_000
    # 1024-thread blocks fill Turing's 32 warp slots: one block per SM, 16 at a time
    assert p.resident_blocks_per_sm == 1 and p.concurrent_blocks == 16
    assert p.waves == 7 and p.last_wave_blocks == 2 and p.last_wave_fill == pytest.approx(2 / 16)


def test_partial_last_warp():
    p = plan("10", "100")
    assert p.warps_per_block == 4 and p.last_warp_active_lanes == 4
    assert p.warp_active_lanes(0, 3) == 4 and p.warp_active_lanes(0, 0) == 32


def test_round_robin_placement_and_waves():
    p = plan("200", "256")  # Turing: 4 resident blocks x 16 SMs = 64 at a time
    assert p.resident_blocks_per_sm == 4 and p.concurrent_blocks == 64
    assert p.waves == 4 and p.last_wave_blocks == 200 - 3 * 64
    first = [p.placement(b) for b in range(18)]
    assert [b.sm for b in first] == list(range(16)) + [0, 1]
    assert [b.slot for b in first] == [0] * 16 + [1, 1]
    assert all(b.wave == 0 for b in first)
    b = p.placement(64 + 17)
    assert (b.wave, b.sm, b.slot) == (1, 1, 1)
    assert p.blocks_in_wave(0) == range(0, 64)
    assert p.blocks_in_wave(3) == range(192, 200)
    assert p.blocks_in_wave(4) == range(0)
    assert list(p.blocks_on_sm_in_wave(2, 0)) == [2, 18, 34, 50]
    assert list(p.blocks_on_sm_in_wave(9, 3)) == []  # last wave: 8 blocks on SMs 0..7


def test_block_and_thread_indices_x_fastest():
    p = plan("4,3,2", "8,4,2")
    assert p.block_index(0) == Dim3(0, 0, 0)
    assert p.block_index(5) == Dim3(1, 1, 0)
    assert p.block_index(13) == Dim3(1, 0, 1)
    assert p.block_linear(Dim3(3, 2, 1)) == 23
    for b in range(p.total_blocks):
        assert p.block_linear(p.block_index(b)) == b
    t = p.thread(13, 37)
    assert t.thread_idx == Dim3(5, 0, 1)
    assert t.global_linear == 13 * 64 + 37 and (t.warp, t.lane) == (1, 5)
    assert p.thread_at_global(t.global_linear) == t


def test_formula_text_1d_and_2d():
    assert plan("6", "1024").thread(3, 17).formula() == (
        "blockIdx.x * blockDim.x + threadIdx.x = 3 * 1024 + 17 = 3089"
    )
    text = plan("4,3", "16,16").thread(7, 37).formula()
    assert text == (
        "(blockIdx.x + blockIdx.y * gridDim.x) * (blockDim.x * blockDim.y) + "
        "(threadIdx.x + threadIdx.y * blockDim.x) = (3 + 1 * 4) * 256 + (5 + 2 * 16) = 7 * 256 + 37 = 1829"
    )
    assert "blockIdx.z * gridDim.x * gridDim.y" in plan("2,2,2", "32").thread(7, 0).formula()


def test_extreme_grid_answers_in_closed_form():
    """2^63 blocks: a loop over them would never return; the speed is benchmarks/launch_speed.py's."""
    p = plan("2147483647,65535,65535", "1024", device=A100)
    last = p.total_blocks - 1
    t = p.thread(last, 1023)
    place = p.placement(last)
    assert p.total_blocks == (2**31 - 1) * 65535 * 65535
    assert t.global_linear == p.total_threads - 1
    assert t.block_idx == Dim3(2**31 - 2, 65534, 65534)
    assert place.wave == p.waves - 1 and t.sm == place.sm
    assert p.waves == -(-p.total_blocks // (108 * 2))


def test_out_of_range_lookups_are_validation_errors():
    p = plan("6", "1024")
    with pytest.raises(LaunchValidationError, match="block 6 is outside the grid"):
        p.placement(6)
    with pytest.raises(LaunchValidationError, match="thread 1024 is outside the block"):
        p.thread(0, 1024)


def test_invalid_launch_refused_before_planning():
    with pytest.raises(LaunchValidationError, match="block has 2048 threads; NVIDIA GeForce GTX 1650"):
        plan("1", "2048")
    nosm = CatalogGpu(name="Mystery", compute_capability=(8, 6))
    with pytest.raises(LaunchValidationError, match="does not report its number of SMs"):
        plan("1", "32", device=nosm)


def test_too_small_grid_is_reported():
    p = plan("4", "1024", n="5466")
    assert p.idle_threads == 0 and p.uncovered_elements == 5466 - 4096
    assert any("never touched" in note for note in p.notes)


def test_to_dict_keys():
    d = plan("98", "1024", n="100000").to_dict()
    for key in (
        "total_blocks",
        "total_threads",
        "warps_per_block",
        "idle_threads",
        "resident_blocks_per_sm",
        "waves",
        "last_wave_blocks",
        "last_wave_fill",
        "concurrent_blocks",
        "last_warp_active_lanes",
    ):
        assert key in d
    assert d["config"]["n"] == 100000 and d["occupancy"]["limiter"] == "warps"


def test_scheduler_note_says_it_is_a_model():
    assert "round-robin" in SCHEDULER_NOTE and "not" in SCHEDULER_NOTE and "publish" in SCHEDULER_NOTE


def test_wave_fill_agrees_with_placement_block_by_block():
    """The two-number description of a wave's slots names exactly the blocks placement() puts there."""
    p = plan("50", "256", n="12000")  # 16 SMs x 4 resident = 64 per wave; one wave of 50
    assert p.concurrent_blocks == 64
    for dispatched in (0, 1, 15, 16, 17, 49, 50):
        fill = p.wave_fill(0, dispatched)
        taken = {
            (fill.block_at(sm, s), sm, s)
            for sm in range(16)
            for s in range(4)
            if fill.block_at(sm, s) is not None
        }
        expected = {(b, p.placement(b).sm, p.placement(b).slot) for b in range(dispatched)}
        assert taken == expected
        assert fill.busy_sms == min(dispatched, 16)
        for b in range(dispatched):
            assert fill.position(b) == (p.placement(b).sm, p.placement(b).slot)
        gained = {(sm, s) for sm, a, z in fill.gained_since(dispatched // 3) for s in range(a, z)}
        assert gained == {
            (p.placement(b).sm, p.placement(b).slot) for b in range(dispatched // 3, dispatched)
        }


def test_idle_blocks_in_wave_lists_only_blocks_with_idle_lanes():
    # N = 12000 with 256-thread blocks: block 46 holds 11776..12031 (224 busy), 47..49 are all idle
    p = plan("50", "256", n="12000")
    idle = p.idle_blocks_in_wave(0)
    blocks = idle.blocks()
    assert [b for b, _busy in blocks] == [46, 47, 48, 49]
    assert sum(blocks[0][1]) == 224 and blocks[0][1][6] == 32 and blocks[0][1][7] == 0
    assert blocks[1][1] == (0,) * 8 and len(idle.runs) == 2  # one partial block, one run of idle ones
    assert idle.busy_lanes_of(45) is None and p.block_busy_lanes(45) is None
    for b, busy in blocks:
        assert p.block_busy_lanes(b) == busy
    assert plan("50", "256").idle_blocks_in_wave(0).runs == ()
    # the second wave of a grid far past N is one run of idle blocks, however large
    run = plan("100000", "256", n="1000").idle_blocks_in_wave(1).runs
    assert len(run) == 1 and run[0].stop - run[0].start == 64


def test_wave_spans_cover_each_landed_block_once():
    p = plan("200", "256")
    fill = p.wave_fill(1, 40)
    for start, stop in ((0, 40), (3, 20), (17, 18), (0, 64)):
        slots = [(sm, s) for sm, a, z in fill.spans(start, stop) for s in range(a, z)]
        expected = [(p.placement(64 + i).sm, p.placement(64 + i).slot) for i in range(start, min(stop, 40))]
        assert sorted(slots) == sorted(expected)


def test_huge_grid_wave_fill_is_closed_form():
    p = plan("2147483647,65535,65535", "1024")
    fill = p.wave_fill(p.waves - 1)
    idle = p.idle_blocks_in_wave(p.waves - 1)
    assert fill.dispatched == p.last_wave_blocks and idle.runs == ()
