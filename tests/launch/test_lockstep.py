"""Two animations on one clock (Qt-free): whatever the teacher presses, both show the same moment."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.devices.catalog import load_catalog
from explorer.launch.animation import DISPATCH, Animation
from explorer.launch.config import parse_launch
from explorer.launch.lockstep import LockStep
from explorer.launch.schedule import plan_launch

CATALOG = {d.key: d for d in load_catalog()}


def _anim(device_key: str, grid: str, block: str = "1024", regs: str = "32") -> Animation:
    return Animation(plan_launch(parse_launch(grid, block, "0", regs), CATALOG[device_key]))


MOVES = st.lists(
    st.sampled_from(["wave+", "wave-", "block+", "block-", "block+b", "block-b", "tick", "restart", "seek"]),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(moves=MOVES, grid_a=st.integers(1, 300), grid_b=st.integers(1, 300), dt=st.floats(0.01, 3.0))
def test_every_move_leaves_both_sides_at_the_same_moment(moves, grid_a, grid_b, dt):
    a = _anim("catalog:gtx-1650-laptop", str(grid_a))
    b = _anim("catalog:h100-sxm5", str(grid_b), "256")
    lock = LockStep([a, b])
    assert lock.lead is (a if a.waves >= b.waves else b)
    for move in moves:
        if move == "wave+":
            lock.step_wave(1)
        elif move == "wave-":
            lock.step_wave(-1)
        elif move == "block+":
            lock.step_block(1, a)
        elif move == "block-":
            lock.step_block(-1, a)
        elif move == "block+b":
            lock.step_block(1, b)
        elif move == "block-b":
            lock.step_block(-1, b)
        elif move == "tick":
            lock.playing = True
            going = lock.advance(dt)
            assert going == (not lock.finished) == a.playing == b.playing  # the end stops both
        elif move == "restart":
            lock.restart()
        else:
            lock.seek(dt)
        t = lock.t
        assert 0 <= t <= lock.waves
        for anim in (a, b):
            assert anim.t == pytest.approx(min(t, anim.waves))
            assert anim.playing == lock.playing


def test_a_wave_step_shows_each_side_full_until_it_has_finished():
    a = _anim("catalog:gtx-1650-laptop", "98")  # 7 waves of 16
    b = _anim("catalog:h100-sxm5", "98")  # 1 wave of 98 (2 per SM on 132 SMs)
    lock = LockStep([a, b])
    lock.step_wave(1)
    assert lock.t == pytest.approx(DISPATCH)
    fa, fb = a.frame(), b.frame()
    assert (fa.dispatched, fa.blocks_in_wave) == (16, 16) and (fb.dispatched, fb.blocks_in_wave) == (98, 98)
    lock.step_wave(1)
    assert a.frame().label == "wave 2 of 7" and b.frame().phase == "finished"


def test_a_block_step_follows_the_side_asked_and_the_other_keeps_the_moment():
    a = _anim("catalog:gtx-1650-laptop", "98")
    b = _anim("catalog:h100-sxm5", "98")
    lock = LockStep([a, b])
    lock.step_block(1, b)  # B's first block lands at DISPATCH / 98 of the wave
    assert b.frame().dispatched == 1 and a.t == b.t
    for _ in range(97):
        lock.step_block(1, b)
    assert b.frame().dispatched == 98 and a.frame().dispatched == 16 and a.t == b.t
    lock.step_block(1, b)  # B has no block left: its step ends its launch, A keeps going
    assert b.finished and not a.finished
    lock.step_block(1, b)  # now the longer launch places the next block
    assert a.frame().wave == 1 and a.frame().dispatched == 1


def test_one_animation_alone_is_driven_as_itself():
    a = _anim("catalog:gtx-1650-laptop", "98")
    lock = LockStep([a])
    lock.step_wave(1)
    lock.step_wave(1)
    assert a.frame().label == "wave 2 of 7" and lock.t == a.t
    with pytest.raises(ValueError):
        LockStep([])


def test_a_one_wave_launch_finished_says_so_in_the_singular():
    b = _anim("catalog:h100-sxm5", "98")
    b.seek(b.waves)
    assert b.frame().label == "finished: its 1 wave done"
    a = _anim("catalog:gtx-1650-laptop", "98")
    a.seek(a.waves)
    assert a.frame().label == "finished: all 7 waves done"
