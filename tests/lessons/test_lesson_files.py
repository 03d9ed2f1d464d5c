"""Lesson files: load, save, round-trip, unknown fields kept, a damaged step alone, catalog fallback."""

from __future__ import annotations

import json

import pytest

from explorer.devices.catalog import load_catalog
from explorer.devices.model import CpuDevice, CudaGpu
from explorer.lessons import (
    FORMAT_NAME,
    BenchState,
    LessonError,
    VisualizerState,
    dump_lesson,
    load_lesson,
    parse_lesson,
    save_lesson,
)
from explorer.lessons.builtin import builtin_lessons, find_lesson
from explorer.lessons.resolve import bench_devices, visualizer_device


def _lesson(*steps, **top):
    return {"format": FORMAT_NAME, "version": 1, "title": "T", "steps": list(steps), **top}


def _vis(**state):
    return {
        "panel": "visualizer",
        "narration": "n",
        "state": {"device": "1650", "grid": "6", "block": "1024", **state},
    }


def test_load_reads_every_field(tmp_path):
    path = tmp_path / "l.json"
    step = _vis(
        n="5466",
        smem="48K",
        regs=64,
        wave=2,
        blocks_placed=3,
        speed=2,
        zoom=1.5,
        thread="5,0,0:400,0,0",
        side_tab="real run",
        device_kind="present",
    )
    step["narration"] = ["# Heading", "", "text"]
    path.write_text(json.dumps(_lesson(step, summary="s")), encoding="utf-8")
    lesson = load_lesson(path)
    assert lesson.title == "T" and lesson.summary == "s" and lesson.path == path
    s = lesson.steps[0]
    assert s.ok and s.narration == "# Heading\n\ntext"
    v = s.state
    assert isinstance(v, VisualizerState)
    assert (v.device, v.device_kind, v.grid, v.block, v.smem, v.regs, v.n) == (
        "1650",
        "present",
        "6",
        "1024",
        "48K",
        "64",
        "5466",
    )
    assert (v.wave, v.blocks_placed, v.speed, v.zoom, v.thread, v.side_tab) == (
        2,
        3,
        2.0,
        1.5,
        "5,0,0:400,0,0",
        "real run",
    )


def test_round_trip_is_stable(tmp_path):
    data = _lesson(
        _vis(n="1920,1080", grid=[120, 68], block=[16, 16]),
        {
            "panel": "benchmarks",
            "narration": "b",
            "state": {"workload": "matmul", "devices": ["cpu", "cuda:0"], "sizes": [256, "1K"], "repeats": 5},
        },
        {"panel": "devices", "narration": "d", "state": {"device": "cpu"}},
    )
    first = parse_lesson(data)
    path = save_lesson(first, tmp_path / "out.json")
    second = load_lesson(path)
    assert dump_lesson(second) == dump_lesson(first)
    assert second.steps[0].state.grid == "120,68"
    assert second.steps[1].state.sizes == (256, 1024)
    assert not second.problems


def test_unknown_fields_from_a_newer_version_are_kept(tmp_path):
    step = _vis(compare={"device": "h100"}, future_knob=3)
    step["voice_over"] = "a.mp3"
    data = _lesson(step, version=7, theme_song="x")
    lesson = parse_lesson(data)
    assert "newer Device Explorer" in lesson.newer_note
    assert lesson.steps[0].state.extra == {"compare": {"device": "h100"}, "future_knob": 3}
    out = dump_lesson(save_and_reload(lesson, tmp_path))
    assert out["version"] == 7 and out["theme_song"] == "x"
    assert out["steps"][0]["voice_over"] == "a.mp3"
    assert out["steps"][0]["state"]["compare"] == {"device": "h100"}
    assert out["steps"][0]["state"]["future_knob"] == 3


def save_and_reload(lesson, tmp_path):
    return load_lesson(save_lesson(lesson, tmp_path / "again.json"))


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ({"grid": "abc"}, "step 2: grid x is 'abc'"),
        ({"regs": "many"}, "step 2: registers per thread is 'many'"),
        ({"zoom": 5}, "step 2: zoom is 5"),
        ({"thread": "48"}, "step 2: thread is '48'"),
        ({"side_tab": "graphs"}, 'step 2: side_tab is "graphs"'),
        ({"speed": "fast"}, 'step 2: speed is "fast"'),
        ({"device": ""}, "step 2: device is empty"),
        # values no launch field holds: the step names the lesson's own number, where the field
        # used to clamp it and the refusal then quoted 0 for a lesson's -1
        ({"block": "-1"}, "step 2: block x is -1; it must be at least 1"),
        ({"grid": "6,0"}, "step 2: grid y is 0; it must be at least 1"),
        ({"block": "32,5000"}, "step 2: block y is 5,000; the launch fields hold at most 4,096"),
        ({"regs": "2000"}, "step 2: registers per thread is 2,000; the launch fields hold 1 to 1,024"),
        ({"smem": "99999999"}, "step 2: shared memory is 99,999,999 bytes; the launch fields hold 0 to"),
    ],
)
def test_a_damaged_step_names_the_step_and_field_and_the_rest_works(tmp_path, state, words):
    damaged = _vis(**state)
    data = _lesson(_vis(), damaged, _vis(grid="98"))
    lesson = parse_lesson(data)
    assert [s.ok for s in lesson.steps] == [True, False, True]
    assert len(lesson.problems) == 1
    problem = lesson.problems[0]
    assert problem.startswith(words), problem
    assert "\n" not in problem
    # saving writes the damaged step back exactly as it was: the teacher's typo is theirs to fix
    out = dump_lesson(save_and_reload(lesson, tmp_path))
    assert out["steps"][1] == damaged


def test_a_launch_too_big_for_its_gpu_is_a_step_not_damage():
    """The "Too big" lesson shows a refused launch on purpose: 2,048 threads a block is a value
    the fields hold, refused by the GPU in the window, not by the lesson file."""
    lesson = parse_lesson(_lesson(_vis(block="2048"), _vis(grid="2147483647", regs="255")))
    assert lesson.problems == [] and all(s.ok for s in lesson.steps)


def test_a_damaged_bench_step(tmp_path):
    bad = {"panel": "benchmarks", "state": {"workload": "nope"}}
    lesson = parse_lesson(_lesson(_vis(), bad))
    assert lesson.problems[0].startswith("step 2: workload: unknown workload 'nope'")
    assert lesson.steps[0].ok


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([1, 2], "not a JSON object"),
        ({"format": "other"}, 'its "format" is "other"'),
        ({"format": FORMAT_NAME, "steps": []}, "steps is [], not a list of at least one step"),
        ({"format": FORMAT_NAME, "steps": [{}], "title": 3}, "title is 3, not text"),
    ],
)
def test_a_file_that_is_no_lesson_is_one_line(data, words):
    with pytest.raises(LessonError) as info:
        parse_lesson(data, "x.json")
    assert words in str(info.value) and "\n" not in str(info.value)


def test_unreadable_files_are_one_line(tmp_path):
    (tmp_path / "bad.json").write_bytes(b"\xff\xfe{")
    for path, words in (
        (tmp_path / "bad.json", "not UTF-8"),
        (tmp_path / "none.json", "does not exist"),
        (tmp_path, "folder"),
    ):
        with pytest.raises(LessonError) as info:
            load_lesson(path)
        assert words in str(info.value)


def _gpus():
    return [CpuDevice(name="cpu", key="cpu"), *load_catalog()]


def test_a_gpu_that_is_absent_falls_back_to_its_catalog_sheet_and_says_so():
    state = VisualizerState(device="NVIDIA GeForce GTX 1650", device_kind="present")
    here = visualizer_device(state, _gpus())
    assert here.key == "catalog:gtx-1650-laptop" and not here.problem
    assert "catalog spec sheet is shown" in here.note and "GTX 1650" in here.note
    # with the GPU in the machine, the real one is used and nothing needs saying
    real = CudaGpu(name="NVIDIA GeForce GTX 1650", key="cuda:0", index=0, sm_count=16)
    there = visualizer_device(state, [*_gpus(), real])
    assert there.key == "cuda:0" and there.note == ""
    # a catalog step says nothing either way
    assert visualizer_device(VisualizerState(device="h100"), _gpus()).note == ""


def test_an_unknown_gpu_is_a_problem_not_a_crash():
    resolved = visualizer_device(VisualizerState(device="Voodoo 5"), _gpus())
    assert resolved.key == "" and "neither in this machine nor in the catalog" in resolved.problem


def test_a_gpu_benchmark_without_a_gpu_runs_on_the_cpu_and_says_so():
    devices, note = bench_devices(BenchState(devices=("cpu", "cuda:0")), _gpus())
    assert devices == ("cpu",)
    assert "cuda:0" in note and "does not have" in note and "no recorded results" in note


def test_builtin_lessons_all_load_without_problems():
    infos = builtin_lessons()
    assert len(infos) >= 4
    for info in infos:
        assert info.problems == (), info
        assert info.steps >= 2
        lesson = load_lesson(info.path)
        assert dump_lesson(parse_lesson(dump_lesson(lesson))) == dump_lesson(lesson)
        for step in lesson.steps:
            assert "look for" in lesson.steps[-1].narration.lower(), info.name
            if isinstance(step.state, VisualizerState):
                assert not visualizer_device(step.state, _gpus()).problem


def test_find_lesson_by_name_or_path(tmp_path):
    assert find_lesson("01").stem == "01-blocks-and-threads"
    assert find_lesson(str(tmp_path / "x.json")) == tmp_path / "x.json"
    with pytest.raises(LessonError, match="built-in lessons: 01-blocks"):
        find_lesson("zz-nothing")
