"""The visualizer's timeline and latency views without a window (``explorer.launch.time_views``):
the timeline on the session's clock, the wave picture as its equal-duration case block for block,
the clock running on to an uneven launch's end, the latency view following the launch's
occupancy, bad settings refused in one line, and measurements kept only for their launch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.devices.catalog import load_catalog
from explorer.errors import UserError
from explorer.launch.animation import DISPATCH, RUN
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.dispatch import simulate_dispatch
from explorer.launch.durations import parse_durations
from explorer.launch.lockstep import LockStep
from explorer.launch.presets import PRESETS
from explorer.launch.session import DeviceChoice, LaunchSession, LaunchSetup
from explorer.launch.time_views import (
    DispatchSettings,
    LatencySettings,
    TimeViews,
    chart_window,
    first_sentence,
)
from explorer.launch_runs.measured import MeasuredDispatch, timeline_from_records

CATALOG = load_catalog()
BY_KEY = {d.key: d for d in CATALOG}
GTX = BY_KEY["catalog:gtx-1650-laptop"]
V100 = next(d for d in CATALOG if "V100" in d.name)
GPUS = [
    BY_KEY[k]
    for k in ("catalog:gtx-1650-laptop", "catalog:h100-sxm5", "catalog:a100-sxm4-40gb", "catalog:gtx-980")
]
LESSON = PRESETS[0].config  # 98 blocks of 1024 threads on the GTX 1650: 7 waves of 16


def _model(device=GTX, config: LaunchConfig = LESSON) -> TimeViews:
    session = LaunchSession([DeviceChoice(d) for d in CATALOG])
    session.load([LaunchSetup(device.key, config)])
    return TimeViews(session)


def _events(model: TimeViews) -> list[str]:
    seen: list[str] = []
    for name in ("view", "dispatch", "latency", "measured"):
        getattr(model.events, name).connect(lambda n=name: seen.append(n))
    model.session.events.moment.connect(lambda: seen.append("moment"))
    return seen


def test_nothing_is_simulated_until_its_view_is_shown():
    m = _model()
    assert m.view == "sms" and m.dispatch is None and m.latency is None
    m.set_durations("jitter:0.2")
    assert m.dispatch is None  # the SMs are shown: the launch in time is not needed yet
    seen = _events(m)
    m.set_view("timeline")
    assert m.dispatch is not None and "view" in seen and "dispatch" in seen
    first = m.dispatch
    m.set_view("sms")
    m.set_view("timeline")
    assert m.dispatch is first  # the same launch and settings: not simulated again


@settings(max_examples=150, deadline=None)
@given(
    gpu=st.sampled_from(GPUS),
    blocks=st.integers(1, 3000),
    threads=st.sampled_from([32, 96, 128, 256, 512, 1024]),
    regs=st.sampled_from([16, 32, 64, 128]),
    moment=st.floats(0, 1, allow_nan=False),
)
def test_equal_blocks_on_the_clock_are_the_wave_picture_block_for_block(gpu, blocks, threads, regs, moment):
    """One wave of the session's clock is one mean block of the timeline: with equal blocks every
    block runs in the wave and on the SM and slot the wave picture puts it, the launch ends on the
    last wave, and while a wave runs the counts of both pictures agree."""
    m = _model(gpu, LaunchConfig(Dim3(blocks), Dim3(threads), 0, regs))
    plan = m.session.edited_side.plan
    if plan is None:  # more registers than the GPU gives a block: nothing to compare
        return
    m.set_view("timeline")
    t = m.dispatch.timeline
    assert m.dispatch.figures.makespan == plan.waves == m.session.clock_end
    for b in {0, blocks - 1, blocks // 2, blocks // 3}:
        place = plan.placement(b)
        assert (int(t.sm[b]), int(t.slot[b]), t.start[b], t.end[b]) == (
            place.sm,
            place.slot,
            place.wave,
            place.wave + 1,
        )
    wave = min(int(moment * plan.waves), plan.waves - 1)
    m.session.show_moment(wave + DISPATCH + RUN * moment)  # wave k's blocks all placed, running
    frame = m.session.animation(0).frame()
    assert t.counts_at(m.time) == (frame.queued, frame.running, frame.done)


def test_uneven_blocks_keep_the_clock_going_to_the_launchs_end_and_no_further():
    m = _model()
    m.set_view("timeline")
    m.set_durations("heavy:1.5")
    makespan = m.dispatch.figures.makespan
    assert makespan > 7 and m.session.clock_end == makespan
    m.session.play()
    while m.session.advance(1.0):
        pass
    assert m.time == makespan and not m.session.playing
    assert m.session.animation(0).finished  # the wave picture ended at wave 7 and stays finished
    m.session.step_wave(-1)  # past the last wave a wave step is one block time
    assert m.time == pytest.approx(float(int(makespan)))
    m.set_view("latency")  # the wave picture's end again: the moment comes back to it
    assert m.session.clock_end == 7 and m.time == 7
    m.set_view("timeline")
    m.set_durations("rows:8,1,1,1")  # ends before the last wave: the clock still runs to wave 7
    assert m.dispatch.figures.makespan < 7 and m.session.clock_end == 7


@settings(max_examples=200, deadline=None)
@given(
    moves=st.lists(
        st.sampled_from(["wave+", "wave-", "block+", "block-", "tick", "seek", "end"]), max_size=30
    ),
    end=st.floats(0, 20, allow_nan=False),
    grid=st.integers(1, 200),
    dt=st.floats(0.01, 3.0),
)
def test_the_clock_past_the_last_wave_keeps_every_side_finished(moves, end, grid, dt):
    from explorer.launch.animation import Animation
    from explorer.launch.schedule import plan_launch

    anim = Animation(plan_launch(LaunchConfig(Dim3(grid), Dim3(1024)), GTX))
    lock = LockStep([anim], end)
    for move in moves:
        before = lock.t
        if move == "wave+":
            lock.step_wave(1)
            assert lock.t >= before
        elif move == "wave-":
            lock.step_wave(-1)
            assert lock.t <= before
        elif move == "block+":
            lock.step_block(1, anim)
        elif move == "block-":
            lock.step_block(-1, anim)
        elif move == "tick":
            lock.playing = True
            going = lock.advance(dt)
            assert going == (not lock.finished) == anim.playing
        elif move == "seek":
            lock.seek(dt * 7)
        else:
            lock.set_end(dt * 5)
        assert 0 <= lock.t <= lock.end and lock.end == max(anim.waves, lock._end)
        assert anim.t == pytest.approx(min(lock.t, anim.waves))
        if lock.t > anim.waves:
            assert anim.finished


def test_durations_that_do_not_parse_are_refused_in_one_line_and_change_nothing():
    m = _model()
    m.set_view("timeline")
    assert m.set_durations("jitter:0.1")
    shown = m.dispatch
    seen = _events(m)
    assert not m.set_durations("jitter:2")
    text, why = m.durations_refused
    assert text == "jitter:2" and "\n" not in why and "below 1" in why
    assert m.dispatch is shown and m.dispatch_settings.durations == "jitter:0.1" and "dispatch" in seen
    assert m.set_durations("uniform") and m.durations_refused is None


def test_a_durations_file_for_another_grid_says_so(tmp_path):
    path = tmp_path / "blocks.txt"
    path.write_text("1 2 3\n")
    m = _model()
    m.set_view("timeline")
    assert m.set_durations(f"file:{path}")
    assert m.dispatch is None and "3 numbers" in m.dispatch_problem and "98 blocks" in m.dispatch_problem
    path.write_text(" ".join(["2"] * 49 + ["1"] * 49))
    assert m.set_durations(f"file:{path}")  # read again: the same text, a new file
    assert m.dispatch.figures.makespan == pytest.approx(
        simulate_dispatch(m.session.edited_side.plan, parse_durations(f"file:{path}")).figures.makespan
    )


def test_a_launch_that_cannot_run_has_no_timeline_and_says_why():
    m = _model(GTX, LaunchConfig(Dim3(98), Dim3(2048)))
    m.set_view("timeline")
    assert m.dispatch is None and m.dispatch_problem.startswith("the launch cannot run: ")
    m.set_view("latency")
    assert m.latency is None and "cannot run" in m.latency_problem


def test_policy_and_seed_are_checked_and_change_the_timeline():
    m = _model()
    m.set_view("timeline")
    m.set_durations("jitter:0.3")
    a = m.dispatch
    m.set_seed(7)
    assert m.dispatch is not a and not np.array_equal(m.dispatch.timeline.end, a.timeline.end)
    m.set_policy("round-robin")
    assert m.dispatch.policy == "round-robin"
    with pytest.raises(UserError, match="seed is -1"):
        m.set_seed(-1)
    with pytest.raises(UserError, match="not one of free, round-robin"):
        m.set_policy("fastest")
    assert m.dispatch_settings == DispatchSettings("jitter:0.3", "round-robin", 7)


def test_more_registers_or_shared_memory_hide_less_latency():
    """The latency view's warps are the launch's resident warps: each step up in registers per
    thread (or shared memory per block) leaves as many warps or fewer, and never more issue slots used."""
    m = _model(V100, LaunchConfig(Dim3(640), Dim3(256), 0, 32))
    m.set_view("latency")
    m.set_latency(LatencySettings("v100-l1", 9, "gto"))
    last = (10**9, 2.0)
    for regs in (32, 64, 96, 128, 168, 255):
        m.session.edit(LaunchSetup(V100.key, LaunchConfig(Dim3(640), Dim3(256), 0, regs)))
        run = m.latency
        occ = m.session.edited_side.plan.occupancy
        assert run.config.warps == occ.active_warps_per_sm and run.config.warp_slots == occ.max_warps_per_sm
        assert run.config.warps <= last[0] and run.utilization <= last[1]
        last = (run.config.warps, run.utilization)
    assert last[1] < 0.6  # 255 registers: 1 block, 8 warps, below N* = 4 per scheduler
    m.session.edit(LaunchSetup(V100.key, LaunchConfig(Dim3(640), Dim3(256), 48 * 1024, 32)))
    assert m.latency.config.warps < 64 and "shared memory" in m.latency_caption()


def test_latency_settings_are_checked_and_the_chart_clock_plays_through_its_cycles():
    m = _model(V100, LaunchConfig(Dim3(640), Dim3(256), 0, 128))
    m.set_view("latency")
    for bad, match in (
        (LatencySettings("v100-l9", 9, "gto"), "not one of"),
        (LatencySettings("v100-l1", 5000, "gto"), "at most 1000"),
        (LatencySettings("v100-l1", 9, "fifo"), "not one of gto, lrr"),
    ):
        with pytest.raises(UserError, match=match):
            m.set_latency(bad)
    assert m.latency_settings == LatencySettings()
    clock = m.cycles
    assert clock.window == chart_window(m.latency) and clock.cycle == clock.window
    clock.play()
    moved = clock.cycle
    while clock.advance(0.5):
        assert clock.cycle > moved
        moved = clock.cycle
    assert clock.cycle == m.latency.recorded_cycles and not clock.playing
    clock.seek(10)
    assert clock.cycle == clock.window  # the chart always shows a whole window


def test_load_takes_a_whole_state_at_once_or_nothing():
    m = _model()
    good = (DispatchSettings("jitter:0.2", "round-robin", 3), LatencySettings("a100-dram", 4, "lrr"))
    m.load("timeline", *good)
    assert (m.view, m.dispatch_settings, m.latency_settings) == ("timeline", *good)
    assert m.dispatch.durations.value == 0.2
    with pytest.raises(UserError):
        m.load("latency", DispatchSettings("heavy:0.5"), LatencySettings())
    assert (m.view, m.dispatch_settings, m.latency_settings) == ("timeline", *good)


def _measured(plan, spin_ns: int = 1000) -> MeasuredDispatch:
    sim = simulate_dispatch(plan, parse_durations("uniform"))
    t = sim.timeline
    start = (t.start * spin_ns).astype(np.uint64) + 10_000
    timeline = timeline_from_records(t.sm, start, start + spin_ns, plan.sm_count, plan.resident_blocks_per_sm)
    return MeasuredDispatch(
        "Stand-in GPU (test only)", "gpu", plan, spin_ns, timeline, plan.config.regs_per_thread
    )


def test_a_measurement_is_kept_only_for_its_launch_and_stretches_the_clock():
    m = _model()
    m.set_view("timeline")
    key = m.launch_key()
    measured = _measured(m.session.edited_side.plan)
    assert not m.take_measured(None, measured)
    assert m.take_measured(key, measured) and m.measured is measured
    assert m.session.clock_end == pytest.approx(measured.makespan_blocks)
    m.session.edit(LaunchSetup(GTX.key, LaunchConfig(Dim3(99), Dim3(1024))))
    assert m.measured is None  # another launch: its timeline is not this one's
    assert not m.take_measured(key, measured)  # a run that finishes late is not shown either


def test_without_a_gpu_the_measured_parts_say_why_in_one_line():
    m = _model()
    why = "No NVIDIA GPU was found on this machine. NVML library not found: no NVIDIA driver is installed."
    line = m.measure_problem(why)
    assert "catalog sheet" in line and line.endswith("No NVIDIA GPU was found on this machine.")
    assert "\n" not in line and first_sentence(why) == "No NVIDIA GPU was found on this machine."
