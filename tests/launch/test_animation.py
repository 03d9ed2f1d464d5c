"""The animation model: which blocks are queued, running and done at each moment (no Qt)."""

from __future__ import annotations

import pytest

from explorer.devices.catalog import catalog_device
from explorer.launch.animation import DISPATCH, RUN, Animation
from explorer.launch.config import parse_launch
from explorer.launch.schedule import plan_launch


def _plan(device: str, grid: str, block: str, n=None):
    return plan_launch(parse_launch(grid, block, 0, 32, n), catalog_device(device))


def test_clock_walks_the_98_block_lesson_wave_by_wave():
    plan = _plan("gtx-1650-laptop", "98", "1024", 100000)
    anim = Animation(plan)
    f = anim.frame()
    assert (f.wave, f.waves, f.queued, f.running, f.done) == (0, 7, 98, 0, 0)
    assert f.label == "wave 1 of 7"
    anim.seek(DISPATCH + RUN / 2)  # wave 1 running: 16 SMs x 1 block
    f = anim.frame()
    assert (f.phase, f.running, f.queued, f.done) == ("run", 16, 82, 0)
    anim.step_wave()  # from wave 1 running, a wave step lands on wave 2 with all 16 blocks placed
    f = anim.frame()
    assert (f.wave, f.done, f.running, f.queued, f.dispatched) == (1, 16, 16, 66, 16)
    anim.seek(6 + DISPATCH + RUN / 2)  # the tail wave: 98 - 6 * 16 = 2 blocks
    f = anim.frame()
    assert (f.label, f.running, f.queued, f.done) == ("wave 7 of 7", 2, 0, 96)
    anim.seek(7)
    assert anim.frame().phase == "finished" and anim.frame().done == 98


def test_wave_steps_land_on_each_wave_fully_dispatched_and_back():
    """Stepping a lesson wave by wave shows every wave full, never an empty start."""
    plan = _plan("gtx-1650-laptop", "98", "1024", 100000)  # 7 waves of 16 blocks, the last of 2
    anim = Animation(plan)
    seen = []
    for _ in range(7):
        anim.step_wave()
        f = anim.frame()
        seen.append((f.wave, f.dispatched, f.blocks_in_wave, f.running))
        assert f.phase == "run" and f.run_progress == pytest.approx(0.0, abs=1e-9)
        assert len(anim.resident()) == f.blocks_in_wave
    assert seen == [(k, 16, 16, 16) for k in range(6)] + [(6, 2, 2, 2)]
    anim.step_wave()
    assert anim.frame().phase == "finished"
    anim.step_wave()  # past the end it stays finished
    assert anim.frame().phase == "finished"
    back = []
    for _ in range(7):
        anim.step_wave(-1)
        f = anim.frame()
        back.append((f.label, f.dispatched == f.blocks_in_wave))
    assert back == [(f"wave {k} of 7", True) for k in range(7, 0, -1)]
    anim.step_wave(-1)
    assert anim.t == 0.0 and anim.frame().dispatched == 0


def test_wave_steps_are_exact_on_a_huge_wave_late_in_a_long_launch():
    """Float rounding at wave 12345 + 0.3 must not read as one block short of full."""
    plan = _plan("h100-sxm5", str(2**31 - 1), "256")
    anim = Animation(plan)
    anim.seek(12345.5)
    anim.step_wave()
    f = anim.frame()
    assert f.wave == 12346 and f.dispatched == f.blocks_in_wave == 132 * 8
    for _ in range(3):
        anim.step_block()
        f = anim.frame()
    assert f.wave == 12347 and f.dispatched == 3


def test_step_block_dispatches_one_block_at_a_time_onto_the_plans_sm():
    plan = _plan("gtx-1650-laptop", "98", "1024", 100000)
    anim = Animation(plan)
    for expected in range(1, 17):
        anim.step_block()
        f = anim.frame()
        assert f.dispatched == expected
        block, sm, slot, _busy = anim.resident()[-1]
        p = plan.placement(block)
        assert (block, sm, slot) == (expected - 1, p.sm, p.slot)
    f = anim.frame()
    assert f.phase == "run" and f.dispatched == 16  # the 16th block landed: wave 1 full
    anim.step_block()  # the next block placed is wave 2's first
    f = anim.frame()
    assert (f.wave, f.dispatched) == (1, 1) and anim.resident()[-1][0] == 16
    anim.step_block(-1)  # one back: wave 1, full again
    f = anim.frame()
    assert (f.wave, f.dispatched) == (0, 16)
    anim.step_block(-1)
    assert anim.frame().dispatched == 15
    for _ in range(15):
        anim.step_block(-1)
    assert anim.t == 0.0 and anim.frame().dispatched == 0
    anim.seek(7)
    anim.step_block(-1)  # from "finished", back to the tail wave with its 2 blocks placed
    f = anim.frame()
    assert (f.wave, f.dispatched, f.phase) == (6, 2, "run")


def test_play_advances_and_stops_at_the_end():
    plan = _plan("gtx-1650-laptop", "6", "1024", 5466)
    anim = Animation(plan)
    assert not anim.advance(1.0)  # paused: nothing moves
    anim.playing = True
    anim.advance(0.5)
    assert anim.t == 0.5 * anim.speed_waves_per_s
    while anim.advance(1.0):
        pass
    assert anim.finished and not anim.playing


def test_idle_lanes_are_reported_for_the_block_straddling_n():
    plan = _plan("gtx-1650-laptop", "6", "1024", 5466)
    anim = Animation(plan)
    anim.seek(DISPATCH + RUN / 2)
    busy = {block: b for block, _sm, _slot, b in anim.resident()}
    assert all(busy[b] is None for b in range(5))  # blocks 0..4 fully busy
    # block 5 holds elements 5120..6143: 346 busy threads = 10 full warps + 26 lanes, then idle
    assert busy[5][:10] == (32,) * 10 and busy[5][10] == 26 and sum(busy[5]) == 346


def test_huge_grid_keeps_only_one_wave_resident():
    plan = _plan("h100-sxm5", str(2**31 - 1), "256")
    anim = Animation(plan)
    anim.seek(12345 + DISPATCH + RUN / 2)
    resident = anim.resident()
    assert len(resident) == plan.concurrent_blocks == 132 * 8
    f = anim.frame()
    assert f.done == 12345 * plan.concurrent_blocks
    assert f.queued == plan.total_blocks - f.done - f.running
    assert anim.block_at(0, 0) == f.first_block


def test_thread_at_maps_lane_to_the_core_thread_and_partial_lanes_to_none():
    plan = _plan("gtx-1650-laptop", "2", "48")  # 2 warps per block, the last one with 16 lanes
    anim = Animation(plan)
    info = anim.thread_at(1, 1, 5)
    assert (info.block_linear, info.thread_linear, info.global_linear) == (1, 37, 85)
    assert anim.thread_at(1, 1, 20) is None


def test_a_single_block_reads_as_one_block():
    plan = _plan("gtx-1650-laptop", "1", "33")
    anim = Animation(plan)
    anim.step_wave()
    assert anim.frame().phase_words == "1 block running"
