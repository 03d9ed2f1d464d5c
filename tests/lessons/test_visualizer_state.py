"""The visualizer's session as the settings file and a lesson step keep it (text), and back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.devices.catalog import load_catalog
from explorer.errors import UserError
from explorer.launch.animation import SPEEDS_WAVES_PER_S
from explorer.launch.config import FIELD_MAX_GRID, Dim3, LaunchConfig
from explorer.launch.presets import PRESETS
from explorer.launch.session import DeviceChoice, LaunchSession, LaunchSetup, TypedSize
from explorer.lessons.model import VisualizerState
from explorer.lessons.visualizer import apply_step, restore_state, saved_state, step_state

CATALOG = load_catalog()
KEYS = [d.key for d in CATALOG if d.is_gpu]
GTX = "catalog:gtx-1650-laptop"
H100 = "catalog:h100-sxm5"


def _session() -> LaunchSession:
    return LaunchSession([DeviceChoice(d) for d in CATALOG])


def _dim(most: int) -> st.SearchStrategy[Dim3]:
    axis = st.integers(1, most)
    return st.builds(Dim3, axis, st.integers(1, 64), st.integers(1, 8))


LAUNCHES = st.builds(
    LaunchConfig,
    _dim(FIELD_MAX_GRID[0]),
    _dim(2048),
    st.integers(0, 1 << 20),
    st.integers(1, 255),
    st.one_of(st.none(), st.integers(1, 10**12)),
) | st.builds(
    LaunchConfig,
    _dim(5000),
    _dim(1024),
    st.just(0),
    st.just(32),
    st.none(),
    st.builds(Dim3, st.integers(1, 4096), st.integers(1, 4096), st.integers(1, 4)),
)


@settings(max_examples=150, deadline=None)
@given(
    a=LAUNCHES,
    b=LAUNCHES,
    devices=st.tuples(st.sampled_from(KEYS), st.sampled_from(KEYS)),
    compare=st.booleans(),
    edited=st.integers(0, 1),
    speed=st.integers(0, len(SPEEDS_WAVES_PER_S) - 1),
)
def test_what_is_saved_comes_back_whole(a, b, devices, compare, edited, speed):
    """Any launch the fields can hold, on any device, alone or with B, survives the text form:
    a restart restores exactly the setups, the side being edited and the speed."""
    first = _session()
    setups = [LaunchSetup(devices[0], a), LaunchSetup(devices[1], b)][: 2 if compare else 1]
    first.load(setups, edited if compare else 0)
    first.set_speed(speed)
    saved = saved_state(first)
    assert all(isinstance(v, (str, int)) for v in saved.values())

    again = _session()
    restore_state(again, saved)
    assert again.setups == first.setups
    assert (again.edited, again.speed_index) == (first.edited, speed)
    assert saved_state(again) == saved


def test_a_remembered_preset_comes_back_only_while_the_launch_is_still_it():
    s = _session()
    s.apply_preset(PRESETS[2])  # the 2D image
    saved = saved_state(s)
    assert (saved["grid"], saved["n"], saved["preset"]) == ("120,68,1", "1920,1080", PRESETS[2].short_name)
    again = _session()
    restore_state(again, saved)
    assert again.setups[0].preset is PRESETS[2]
    restore_state(again, {**saved, "block": "16,8,1"})  # edited by hand after it was saved
    assert again.setups[0].preset is None
    restore_state(again, {**saved, "preset": "nonsense"})
    assert again.setups[0].preset is None and again.setups[0].config == PRESETS[2].config


def test_a_launch_that_does_not_parse_or_fit_the_fields_is_skipped_whole():
    s = _session()
    s.apply_preset(PRESETS[1])
    for bad in (
        {"block": "lots"},
        {"n": "1920,ten"},
        {"grid": str(FIELD_MAX_GRID[0] + 1)},
        {"regs": "1e400"},
    ):
        restore_state(s, {"device": H100, "grid": "98", "block": "1024", "n": "100000", **bad})
        assert s.setups[0].config == PRESETS[1].config, bad  # the launch it had
        assert s.setups[0].device_key == H100  # the parts that parse are taken
    restore_state(s, {"device": GTX, "grid": "98", "block": "1024", "compare": 1, "b_block": "bad"})
    assert s.setups[1].config == s.setups[0].config  # a B that does not parse: a copy of A


def test_b_copies_a_but_for_what_is_named_and_may_name_its_device_by_part_of_its_name():
    s = _session()
    restore_state(s, {"device": GTX, "grid": "98", "block": "1024", "n": "100000", "compare": 1, "b_device": "h100", "b_regs": "64"})  # fmt: skip
    a, b = s.setups
    assert b.device_key == H100 and b.config == LaunchConfig(Dim3(98), Dim3(1024), 0, 64, 100000)
    assert a.config.regs_per_thread == 32 and s.edited == 0


def test_a_device_not_found_yet_is_remembered_and_saved_again():
    s = _session()
    restore_state(s, {"device": "cuda:0", "grid": "6", "block": "1024"})
    assert s.wanted_key == "cuda:0" and s.setups[0].device_key == GTX
    assert saved_state(s)["device"] == "cuda:0"


def test_a_refused_size_is_saved_as_it_was_typed():
    s = _session()
    bad = TypedSize("1920,ten", "problem size y is 'ten'; it must be a whole number")
    s.edit(LaunchSetup(GTX, LaunchConfig(Dim3(120, 68), Dim3(16, 16)), bad_size=bad))
    assert saved_state(s)["n"] == "1920,ten"


def test_a_lesson_step_records_and_replays_the_moment_the_thread_and_b():
    s = _session()
    s.apply_preset(PRESETS[1])  # N = 5466: 6 blocks
    s.step_wave(1)
    s.step_block(-1)
    s.select_thread(5, 12, 16)
    s.set_compare(True)
    s.select_side(1)
    s.select_device("h100")
    s.select_thread(5, 12, 16)  # the thread is A's
    state = step_state(s, zoom=2.0, side_tab="real run")
    assert state is not None
    assert (state.device, state.device_kind, state.grid, state.n) == (
        "NVIDIA GeForce GTX 1650 Laptop GPU",
        "catalog",
        "6,1,1",
        "5466",
    )
    assert (state.wave, state.blocks_placed, state.thread) == (1, 5, "5,0,0:400,0,0")
    assert state.extra["compare"] == 1 and state.extra["b_device"] == H100 and state.extra["side"] == "B"
    assert (state.zoom, state.side_tab) == (2.0, "real run")

    again = _session()
    assert apply_step(again, state, CATALOG) == ""
    assert [(x.device_key, x.config) for x in again.setups] == [(x.device_key, x.config) for x in s.setups]
    assert again.edited == 1 and again.setups[0].preset is None  # a step names no preset for A
    assert again.moment == pytest.approx(s.moment) and not again.playing
    assert again.selection is not None and again.selection.thread == (5, 12, 16)
    a = again.animation(0)
    assert a.frame() == s.animation(0).frame()


def test_a_step_that_cannot_apply_here_is_one_line():
    s = _session()
    with pytest.raises(UserError, match="Voodoo 5"):
        apply_step(s, VisualizerState(device="Voodoo 5"), CATALOG)
    with pytest.raises(UserError, match="thread 99,0,0:0,0,0"):
        apply_step(s, VisualizerState(device="1650", grid="6", block="1024", thread="99,0,0:0,0,0"), CATALOG)
