"""``lessons --check`` builds every step's models as its page would: a step whose values parse but
whose page would fail (a model that raises, a durations file of the wrong count, a GPU the
catalog does not know) is reported in one line naming the step and the part."""

from __future__ import annotations

import json

import pytest

from explorer import cli
from explorer.devices.catalog import load_catalog
from explorer.lessons import FORMAT_NAME, parse_lesson
from explorer.lessons.build import build_step


def _lesson_file(tmp_path, *steps):
    path = tmp_path / "planted.json"
    path.write_text(json.dumps({"format": FORMAT_NAME, "version": 1, "title": "T", "steps": list(steps)}))
    return path


def _vis(**state):
    return {"panel": "visualizer", "narration": "n", "state": {"device": "GTX 1650", "grid": "98", **state}}


def _mem(**state):
    return {"panel": "memory", "narration": "n", "state": state}


def _check(capsys, path):
    code = cli.main(["lessons", "--check", str(path)])
    return code, capsys.readouterr().out.splitlines()


def test_a_step_whose_latency_model_crashes_is_named_with_its_step_and_part(tmp_path, capsys, monkeypatch):
    """A planted lesson; its second step opens the latency view, whose model is made to fail as
    the scheduler loop once did with fewer warps than schedulers."""
    import explorer.launch.time_views as time_views

    def broken(config):
        raise IndexError("list index out of range")

    monkeypatch.setattr(time_views, "simulate_latency", broken)
    path = _lesson_file(
        tmp_path,
        _mem(view="coalescing"),  # no launch: nothing to fail
        _vis(device="A100", grid="108", block="32", smem="100000", view="latency"),
    )
    code, lines = _check(capsys, path)
    assert code == 1
    assert lines[1:] == [
        "  step 2: latency: the page's model fails building it (IndexError: list index out of range)"
    ]


def test_a_tab_the_step_does_not_open_is_built_too(tmp_path, capsys, monkeypatch):
    """The class may click the latency tab of a step that shows the SMs: it must not be dead."""
    import explorer.launch.time_views as time_views

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(time_views, "utilization_curve", broken)
    code, lines = _check(capsys, _lesson_file(tmp_path, _vis(), _vis(view="timeline")))
    assert code == 1
    want = "latency: the page's model fails building it (ZeroDivisionError: division by zero)"
    assert lines[1:] == [f"  step 1: {want}", f"  step 2: {want}"]


def test_memory_steps_are_built_and_a_crash_named(tmp_path, capsys, monkeypatch):
    import explorer.memory.banks as banks

    def broken(access):
        raise KeyError(33)

    monkeypatch.setattr(banks, "bank_conflicts", broken)
    path = _lesson_file(tmp_path, _mem(view="banks", stride=2), _mem(view="tiling", gpu="Z9000"))
    code, lines = _check(capsys, path)
    assert code == 1
    assert lines[1:] == [
        "  step 1: banks: the page's model fails building it (KeyError: 33)",
        "  step 2: tiling: gpu 'Z9000' is not in the catalog",
    ]


def test_the_view_a_step_opens_says_what_it_would_show_instead(tmp_path, capsys):
    """A durations file with the wrong count: the timeline shows a line, not the timeline."""
    counts = tmp_path / "counts.txt"
    counts.write_text("1\n2\n")
    path = _lesson_file(tmp_path, _vis(view="timeline", dispatch={"durations": f"file:{counts}"}))
    code, lines = _check(capsys, path)
    assert code == 1 and len(lines) == 2
    assert lines[1].startswith("  step 1: timeline: durations file") and "98 blocks" in lines[1]


def test_the_low_occupancy_launches_build():
    """The launches that once left the latency view dead: every part of their steps builds."""
    lesson = parse_lesson(
        {
            "format": FORMAT_NAME,
            "steps": [
                _vis(device="A100", grid="108", block="32", smem="100000", view="latency"),
                _vis(device="GTX 1650", grid="16", block="64", smem="40000", view="latency"),
                _vis(device="GTX 1650", grid="16", block="64", smem="40000", latency={"policy": "lrr"}),
            ],
        }
    )
    catalog = load_catalog()
    assert [build_step(step, catalog) for step in lesson.steps] == [[], [], []]


@pytest.mark.parametrize("view", ["sms", "timeline", "latency"])
def test_a_launch_refused_by_design_is_no_problem(view):
    """A launch the GPU cannot run is a step: the refusal is the lesson, and the page shows it."""
    lesson = parse_lesson({"format": FORMAT_NAME, "steps": [_vis(smem="100000", view=view)]})
    step = lesson.steps[0]
    assert step.ok, step.problem
    assert build_step(step, load_catalog()) == []


def test_the_occupancy_column_is_built_for_each_side(tmp_path, capsys, monkeypatch):
    import explorer.launch.sweep as sweep

    def broken(limits, threads, smem, regs):
        raise OverflowError("int too large")

    monkeypatch.setattr(sweep, "sweep_registers", broken)
    code, lines = _check(capsys, _lesson_file(tmp_path, _vis(block="256", thread="3,0,0:17")))
    assert code == 1
    assert lines[1:] == [
        "  step 1: occupancy: the page's model fails building it (OverflowError: int too large)"
    ]
