"""The launch visualizer's session without a window: sides, compare mode, the one clock, the
selection, the devices, and the events every view relies on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.devices.catalog import load_catalog
from explorer.devices.model import CudaGpu, CudaLimits
from explorer.launch.animation import DISPATCH, RUN, SPEEDS_WAVES_PER_S
from explorer.launch.compare import compare
from explorer.launch.config import Dim3, LaunchConfig, parse_launch
from explorer.launch.presets import PRESETS
from explorer.launch.session import (
    NO_DEVICES,
    DeviceChoice,
    EmptySlot,
    Hit,
    LaunchSession,
    LaunchSetup,
    NoThread,
    Selection,
    ThreadShown,
    TypedSize,
)
from explorer.launch.texts import plain

CATALOG = load_catalog()
GTX = next(d for d in CATALOG if d.key == "catalog:gtx-1650-laptop")
H100 = next(d for d in CATALOG if d.key == "catalog:h100-sxm5")
LESSON = PRESETS[0].config  # 98 blocks of 1024 threads, N = 100000: 7 waves of 16 on the GTX 1650
EVENTS = ("devices", "launch", "moment", "selection")


def _session() -> LaunchSession:
    return LaunchSession([DeviceChoice(d) for d in CATALOG])


def _recorder(session: LaunchSession) -> list[str]:
    """The names of the events the session emits, in order."""
    seen: list[str] = []
    session.events.devices.connect(lambda: seen.append("devices"))
    session.events.launch.connect(lambda: seen.append("launch"))
    session.events.moment.connect(lambda: seen.append("moment"))
    session.events.selection.connect(lambda: seen.append("selection"))
    return seen


def _gpu(name: str = "NVIDIA GeForce RTX 3060", key: str = "cuda:0") -> CudaGpu:
    limits = CudaLimits(max_threads_per_block=1024, warp_size=32)
    return CudaGpu(name=name, key=key, index=0, compute_capability=(8, 6), sm_count=28, limits=limits)


# --- devices ------------------------------------------------------------------------------------
def test_without_a_gpu_it_starts_on_the_lessons_gtx_1650_with_the_first_preset():
    s = _session()
    a = s.sides[0]
    assert a.device == GTX and a.setup.preset is PRESETS[0] and a.plan is not None
    assert (a.plan.total_blocks, a.plan.waves) == (98, 7)
    assert s.clock is not None and not s.playing and s.moment == 0.0


def test_with_a_gpu_here_it_starts_on_that_gpu():
    gpu = _gpu()
    s = LaunchSession([DeviceChoice(gpu), *(DeviceChoice(d) for d in CATALOG)])
    assert s.sides[0].device == gpu and s.sides[0].plan.sm_count == 28


def test_no_devices_at_all_is_a_side_that_says_so():
    s = LaunchSession()
    assert s.sides[0].plan is None and s.sides[0].problem == NO_DEVICES and s.clock is None
    assert plain(s.summary()).startswith(f"This launch cannot run: {NO_DEVICES}.")


def test_a_remembered_device_is_taken_when_discovery_finds_it_unless_one_was_chosen():
    gpu = _gpu()
    s = _session()
    s.load([LaunchSetup(GTX.key, LESSON)], wanted_key=gpu.key)
    assert s.sides[0].device == GTX and s.wanted_key == gpu.key
    s.set_devices([DeviceChoice(gpu), *(DeviceChoice(d) for d in CATALOG)])
    assert s.sides[0].device == gpu and s.wanted_key == ""

    s = _session()
    s.load([LaunchSetup(GTX.key, LESSON)], wanted_key=gpu.key)
    assert s.select_device("h100")  # the teacher picks a device before discovery ends
    s.set_devices([DeviceChoice(gpu), *(DeviceChoice(d) for d in CATALOG)])
    assert s.sides[0].device == H100


def test_a_device_that_goes_away_leaves_the_form_on_the_default_one():
    gpu = _gpu(key="host-1/cuda:0")
    s = LaunchSession([*(DeviceChoice(d) for d in CATALOG), DeviceChoice(gpu)])
    s.edit(LaunchSetup(gpu.key, LESSON))
    assert s.sides[0].device == gpu
    s.set_devices([DeviceChoice(d) for d in CATALOG])  # the remote's listing is gone
    assert s.sides[0].device == GTX


def test_device_names_follow_the_cli_rules():
    s = _session()
    assert s.select_device("H100") and s.sides[0].device == H100
    assert not s.select_device("rtx") and s.sides[0].device == H100  # several: nothing changes
    assert not s.select_device("no such gpu")


# --- the clock ----------------------------------------------------------------------------------
def test_wave_steps_land_on_full_waves_and_block_steps_one_block_at_a_time():
    s = _session()
    frames = []
    for _ in range(3):
        s.step_wave(1)
        f = s.animation(0).frame()
        frames.append((f.label, f.dispatched, f.blocks_in_wave))
    assert frames == [("wave 1 of 7", 16, 16), ("wave 2 of 7", 16, 16), ("wave 3 of 7", 16, 16)]
    s.step_block(1)
    f = s.animation(0).frame()
    assert (f.label, f.dispatched) == ("wave 4 of 7", 1)
    s.step_block(-1)
    s.step_block(-1)
    f = s.animation(0).frame()
    assert (f.label, f.dispatched) == ("wave 3 of 7", 15)
    s.step_wave(-1)
    assert s.animation(0).frame().label == "wave 2 of 7"


def test_play_advance_and_the_end_stop_the_clock():
    s = _session()
    s.set_speed(len(SPEEDS_WAVES_PER_S) - 1)  # 8 waves a second
    s.play()
    assert s.playing
    assert s.advance(0.5) and s.moment == pytest.approx(4.0)
    assert not s.advance(10.0)  # past the end: finished, and stopped
    assert not s.playing and s.moment == 7.0
    s.play()  # a finished launch plays again from the start
    assert s.playing and s.moment == 0.0
    s.toggle_play()
    assert not s.playing and not s.advance(1.0) and s.moment == 0.0


def test_speed_is_kept_while_no_launch_can_run():
    s = _session()
    s.change_speed(1)
    assert s.speed_index == 3 and s.speed_waves_per_s == 1.0
    s.edit(LaunchSetup(GTX.key, LaunchConfig(Dim3(1), Dim3(2048))))  # too big a block
    assert s.clock is None
    s.change_speed(1)  # nothing to speed up
    s.set_speed(99)  # out of range: ignored
    assert s.speed_index == 3
    s.apply_preset(PRESETS[0])
    assert s.animation(0).speed_index == 3


def test_an_edit_starts_again_from_the_first_wave_and_drops_the_selection():
    s = _session()
    s.step_wave(1)
    s.step_wave(1)
    s.select_thread(17, 0, 3)
    s.edit(LaunchSetup(GTX.key, parse_launch("98", "512", 0, 32, 100000)))
    assert s.moment == 0.0 and s.selection is None and s.sides[0].plan.threads_per_block == 512


# --- compare ------------------------------------------------------------------------------------
def test_b_starts_as_a_copy_of_a_at_the_same_moment_and_the_form_edits_one_side():
    s = _session()
    s.step_wave(1)
    s.step_wave(1)
    t = s.moment
    s.set_compare(True)
    assert s.compare and s.edited == 0 and s.moment == t
    assert s.sides[0].plan == s.sides[1].plan and s.animation(1).t == t
    s.select_side(1)
    assert s.select_device("h100")
    assert s.moment == t  # an edit in compare mode keeps the moment on both sides
    assert (s.sides[0].device, s.sides[1].device) == (GTX, H100)
    assert s.comparison == compare(GTX, LESSON, H100, LESSON)
    assert plain(s.summary()) == "B needs 1 wave where A needs 7: 264 blocks at once against 16."
    tip = s.readings_text()
    assert tip.startswith(f"A: {GTX.name}\n") and f"\n\nB: {H100.name}\n" in tip
    s.set_compare(False)  # A alone again, from the first wave
    assert not s.compare and s.edited == 0 and s.sides[0].device == GTX and s.moment == 0.0


def test_a_side_that_cannot_run_says_why_and_the_other_still_plays():
    s = _session()
    s.set_compare(True)
    s.edit(LaunchSetup(GTX.key, LaunchConfig(Dim3(98), Dim3(1024), 100_000)))  # A: over its 64 KB
    a, b = s.sides
    assert a.plan is None and "shared memory" in a.problem and b.plan is not None
    assert s.comparison.row("waves").ratio.text == "A cannot run"
    assert s.clock is not None and s.animation(0) is None
    s.step_wave(1)
    assert s.animation(1).frame().dispatched == 16


def test_a_block_step_follows_the_side_being_edited():
    s = _session()
    s.set_compare(True)
    s.select_side(1)
    s.select_device("h100")  # B: 98 blocks land in one wave on 132 SMs
    s.step_block(1)
    s.step_block(1)
    assert s.animation(1).frame().dispatched == 2
    assert s.animation(0).t == s.animation(1).t  # A shows the same moment


MOVES = st.lists(
    st.sampled_from(["wave+", "wave-", "block+", "block-", "tick", "restart", "side", "edit"]), max_size=25
)


@settings(max_examples=60, deadline=None)
@given(moves=MOVES, grid_b=st.integers(1, 600), dt=st.floats(0.01, 2.0))
def test_every_move_keeps_both_sides_on_one_clock(moves, grid_b, dt):
    s = _session()
    s.set_compare(True)
    s.select_side(1)
    s.edit(LaunchSetup(H100.key, parse_launch(str(grid_b), "1024", 0, 64, None)))
    for move in moves:
        if move == "wave+":
            s.step_wave(1)
        elif move == "wave-":
            s.step_wave(-1)
        elif move == "block+":
            s.step_block(1)
        elif move == "block-":
            s.step_block(-1)
        elif move == "tick":
            s.play()
            s.advance(dt)
        elif move == "restart":
            s.restart()
        elif move == "side":
            s.select_side(1 - s.edited)
        else:
            grid = s.edited_setup.config.grid.x % 300 + 1
            s.edit(LaunchSetup(s.edited_setup.device_key, parse_launch(str(grid), "1024", 0, 32, None)))
        t = s.moment
        for anim in (s.animation(0), s.animation(1)):
            assert anim.t == pytest.approx(min(t, anim.waves))
            assert anim.playing == s.playing
        if move.startswith(("wave", "block")):
            assert not s.playing  # a step pauses


# --- selection and the inspector ------------------------------------------------------------------
def test_what_the_inspector_shows_follows_pointer_pin_and_clock():
    s = _session()
    assert s.inspection() is None  # the hint
    s.hover(0, Hit(sm=14, slot=0, warp=0, lane=3))  # wave 1 has not started: an empty slot
    assert s.inspection() == EmptySlot(14, 0, "wave 1 of 7")
    s.show_moment(2 + DISPATCH + RUN / 2)  # wave 3 running: block 46 sits on SM 14
    shown = s.inspection()
    assert isinstance(shown, ThreadShown) and not shown.pinned
    assert (shown.info.block_linear, shown.info.thread_linear) == (46, 3)
    assert shown.now == "its block is running on SM 14 (wave 3 of 7)"
    s.click(0, Hit(sm=14, slot=0, warp=0, lane=3))
    assert s.selection == Selection(0, 46, 0, 3)
    s.hover(0, Hit(-1))  # the pointer left the SMs: the pinned thread, whose "now" follows the clock
    s.step_wave(1)
    shown = s.inspection()
    assert shown.pinned and shown.now == "its block has finished (wave 4 of 7)"
    s.hover(0, Hit(sm=3))  # over an SM but no slot, with a thread pinned: the pinned thread stays
    assert s.inspection().pinned
    s.click(0, Hit(sm=3))  # a click where no thread is pins nothing new
    assert s.selection == Selection(0, 46, 0, 3)


def test_a_lane_past_a_partial_warp_has_no_thread():
    s = _session()
    s.edit(LaunchSetup(GTX.key, parse_launch("2", "48", 0, 32, None)))  # 2 warps, the last of 16 lanes
    s.step_wave(1)
    s.hover(0, Hit(sm=1, slot=0, warp=1, lane=20))
    assert s.inspection() == NoThread("blockIdx (1, 0, 0)", 1, 20)


def test_a_thread_pinned_on_b_is_bs():
    s = _session()
    s.set_compare(True)
    s.select_side(1)
    s.select_device("h100")
    s.step_wave(1)
    s.click(1, Hit(sm=5, slot=0, warp=0, lane=3))
    block = s.animation(1).block_at(5, 0)
    assert s.selection == Selection(1, block, 0, 3)
    assert s.inspection().info.sm == 5


# --- events -------------------------------------------------------------------------------------
def test_events_say_what_changed():
    s = _session()
    seen = _recorder(s)
    s.step_wave(1)
    assert seen == ["moment"]
    seen.clear()
    s.hover(0, Hit(sm=2, slot=0, warp=0, lane=0))
    s.hover(0, Hit(sm=2, slot=0, warp=0, lane=0))  # the same target: nothing new
    assert seen == ["selection"]
    seen.clear()
    s.apply_preset(PRESETS[1])
    assert seen == ["launch", "selection", "moment"]
    seen.clear()
    s.apply_preset(PRESETS[1])  # the same launch again: nothing to plan
    assert seen == []
    s.set_compare(True)
    assert seen == ["launch", "selection", "moment"]
    seen.clear()
    s.select_side(1)
    s.select_side(1)
    assert seen == ["launch"]
    seen.clear()
    s.set_devices(s.devices)  # the same devices: listed again, nothing planned again
    assert seen == ["devices"]
    seen.clear()
    s.play()
    s.pause()
    s.change_speed(-1)
    assert seen == ["moment", "moment", "moment"]


def test_an_event_callback_may_disconnect_itself():
    s = _session()
    calls = []

    def once() -> None:
        calls.append(1)
        s.events.moment.disconnect(once)

    s.events.moment.connect(once)
    s.step_wave(1)
    s.step_wave(1)
    assert calls == [1]


# --- a typed size that does not parse -----------------------------------------------------------
def test_a_refused_size_is_a_side_that_cannot_run_with_the_parsers_words():
    s = _session()
    bad = TypedSize("1920,ten", "problem size y is 'ten'; it must be a whole number")
    s.edit(LaunchSetup(GTX.key, LaunchConfig(Dim3(120, 68), Dim3(16, 16)), bad_size=bad))
    assert s.sides[0].plan is None and s.sides[0].problem == bad.problem and s.clock is None
    assert bad.problem in plain(s.summary())


def test_another_machines_gpu_can_be_side_b():
    """A remote's GPU is listed under its host's key; B finds it there like any other device."""
    remote_gpu = _gpu(name="NVIDIA Lab GPU ON gpu-lab", key="host-1/cuda:0")
    s = LaunchSession([*(DeviceChoice(d) for d in CATALOG), DeviceChoice(remote_gpu, None, 0)])
    s.set_compare(True)
    s.select_side(1)
    s.edit(LaunchSetup(remote_gpu.key, LESSON))
    assert s.sides[1].device == remote_gpu and s.sides[1].plan is not None
    assert s.comparison.row("sm_count").b == 28
