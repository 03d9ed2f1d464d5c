"""The timeline's and latency view's state in a lesson step and in the settings file: checked by the
lesson parser like every other field, written back as read, applied to the model whole, and every
step of the two lessons that use them showing what its narration is about."""

from __future__ import annotations

import pytest

from explorer.devices.catalog import load_catalog
from explorer.launch.dispatch import simulate_dispatch
from explorer.launch.durations import parse_durations
from explorer.launch.latency import config_for_launch, find_preset, simulate_latency
from explorer.launch.session import DeviceChoice, LaunchSession
from explorer.launch.time_views import DispatchSettings, LatencySettings, TimeViews
from explorer.lessons import load_lesson
from explorer.lessons.builtin import builtin_paths
from explorer.lessons.files import parse_step, step_dict
from explorer.lessons.model import DispatchStep, LatencyStep, VisualizerState
from explorer.lessons.time_steps import (
    apply_time_views,
    record_time_views,
    restore_time_views,
    saved_time_views,
)
from explorer.lessons.visualizer import apply_step

CATALOG = load_catalog()


def _model() -> TimeViews:
    return TimeViews(LaunchSession([DeviceChoice(d) for d in CATALOG]))


def _step(**state) -> dict:
    return {"panel": "visualizer", "narration": "n", "state": {"device": "GTX 1650", "grid": "98", **state}}


def test_a_step_with_both_views_parses_and_is_written_back_as_read():
    raw = _step(
        view="timeline",
        dispatch={"durations": "heavy:1.5", "policy": "round-robin", "seed": 4, "time": 3.25, "future": [1]},
        latency={"preset": "h100-pcie-dram", "alu": 3, "policy": "lrr", "cycle": 900},
    )
    step = parse_step(raw, 1)
    assert step.ok, step.problem
    s = step.state
    assert s.view == "timeline"
    assert s.dispatch == DispatchStep("heavy:1.5", "round-robin", 4, 3.25, {"future": [1]})
    assert s.latency == LatencyStep("h100-pcie-dram", 3, "lrr", 900)
    written = step_dict(step)["state"]
    assert written["view"] == "timeline"
    assert written["dispatch"] == raw["state"]["dispatch"] and written["latency"] == raw["state"]["latency"]
    # left out: the defaults, and nothing written for them
    plain = parse_step(_step(), 1)
    assert plain.state.view == "sms" and plain.state.dispatch == DispatchStep()
    assert plain.state.latency == LatencyStep()
    assert not {"view", "dispatch", "latency"} & set(step_dict(plain)["state"])


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ({"view": "gantt"}, 'view is "gantt", not one of sms, timeline, latency'),
        ({"dispatch": "uniform"}, 'dispatch is "uniform", not an object'),
        ({"dispatch": {"durations": "jitter:1.5"}}, "dispatch: P of jitter:P"),
        ({"dispatch": {"durations": "lognormal:2"}}, "dispatch: --durations 'lognormal:2' is not one of"),
        ({"dispatch": {"policy": "fastest"}}, "dispatch: --policy 'fastest' is not one of free, round-robin"),
        ({"dispatch": {"seed": -3}}, "dispatch: seed is -3; it must be at least 0"),
        ({"dispatch": {"seed": 1e400}}, "dispatch: seed"),
        ({"dispatch": {"time": -1}}, "dispatch time is -1; it must be 0 to 1e+09"),
        ({"dispatch": {"time": "soon"}}, 'dispatch time is "soon", not a number'),
        ({"latency": {"preset": "v100-l4"}}, "latency: latency preset 'v100-l4' is not one of"),
        (
            {"latency": {"alu": 1001}},
            "latency: alu (K, arithmetic instructions per load) is 1001; it must be at most 1000",
        ),
        ({"latency": {"policy": "fifo"}}, "latency: policy 'fifo' is not one of gto, lrr"),
        ({"latency": {"cycle": 5000}}, "latency: latency cycle is 5000; it must be at most 4096"),
        ({"latency": []}, "latency is [], not an object"),
    ],
)
def test_bad_values_damage_only_their_step_and_name_the_field(state, words):
    step = parse_step(_step(**state), 3)
    assert not step.ok and step.problem.startswith("step 3: ")
    assert words in step.problem, step.problem
    assert "\n" not in step.problem
    assert step_dict(step) == _step(**state)  # kept as it was in the file


def test_a_recorded_step_applies_back_to_the_same_state():
    a = _model()
    apply_step(a.session, VisualizerState(device="V100", grid="640", block="256", regs="128"), CATALOG)
    a.load("timeline", DispatchSettings("jitter:0.2", "round-robin", 9), LatencySettings("a100-l2", 2, "lrr"))
    a.show_time(2.75)
    state = VisualizerState(device="V100", grid="640", block="256", regs="128")
    record_time_views(a, state)
    step = parse_step({"panel": "visualizer", "state": step_dict_state(state)}, 1)
    b = _model()
    apply_step(b.session, step.state, CATALOG)
    apply_time_views(b, step.state)
    assert (b.view, b.dispatch_settings, b.latency_settings) == (
        a.view,
        a.dispatch_settings,
        a.latency_settings,
    )
    assert b.time == a.time == 2.75
    # the latency view's chart position travels the same way
    a.set_view("latency")
    a.cycles.seek(700)
    record_time_views(a, state)
    apply_time_views(b, parse_step({"panel": "visualizer", "state": step_dict_state(state)}, 1).state)
    assert b.view == "latency" and b.cycles.cycle == a.cycles.cycle == 700


def step_dict_state(state: VisualizerState) -> dict:
    from explorer.lessons.files import _state_dict

    return _state_dict(state)


def test_the_settings_file_brings_back_the_view_and_its_settings_and_skips_what_does_not_parse(tmp_path):
    a = _model()
    a.load(
        "latency",
        DispatchSettings("rows:1,4,1", "round-robin", 12),
        LatencySettings("h100-pcie-l2", 7, "lrr"),
    )
    saved = saved_time_views(a)
    b = _model()
    restore_time_views(b, saved)
    assert (b.view, b.dispatch_settings, b.latency_settings) == (
        a.view,
        a.dispatch_settings,
        a.latency_settings,
    )
    # a durations file that has gone, a damaged seed and preset: the rest is taken
    damaged = {**saved, "durations": f"file:{tmp_path / 'gone.txt'}", "seed": "many", "latency_preset": "l9"}
    c = _model()
    restore_time_views(c, damaged)
    assert c.view == "latency"
    assert c.dispatch_settings == DispatchSettings("uniform", "round-robin", 0)
    assert c.latency_settings == LatencySettings("v100-l1", 7, "lrr")
    restore_time_views(c, {"view": "3d", "alu": True})  # nothing usable: nothing changes
    assert c.view == "latency" and c.latency_settings.alu == 7


@pytest.mark.parametrize("name", ["13-tail-uneven-blocks", "14-latency-occupancy-ilp"])
def test_every_step_shows_the_view_and_the_figures_its_narration_is_about(name):
    """Each step of the two lessons is applied as the window applies it; the view it shows holds the
    core's own figures for its launch (the ones tests/lessons/test_lesson_numbers.py finds in the
    narration), at the moment the step names."""
    (path,) = [p for p in builtin_paths() if p.stem == name]
    lesson = load_lesson(path)
    assert not lesson.problems
    model = _model()
    for step in lesson.steps:
        state = step.state
        apply_step(model.session, state, CATALOG)
        apply_time_views(model, state)
        plan = model.session.edited_side.plan
        assert model.view == state.view != "sms"
        if state.view == "timeline":
            d = state.dispatch
            want = simulate_dispatch(plan, parse_durations(d.durations), d.policy, d.seed)
            assert model.dispatch.figures == want.figures
            end = max(plan.waves, want.figures.makespan)
            assert model.time == (d.time if d.time is not None else end)
        else:
            lat = state.latency
            preset = find_preset(lat.preset)
            limits = model.session.edited_side.limits
            want = simulate_latency(
                config_for_launch(plan.occupancy, limits, preset.mem_latency, lat.alu, lat.policy)
            )
            assert model.latency.utilization == want.utilization
            assert model.latency.config == want.config
