"""Recording a GPU's results into the built-in lessons, tested with a stand-in result on copies of
the lessons (no GPU figure is ever written into the real files by a test).

The stand-in points below are made up for the test and marked so: they exist only in a temporary
folder, so nothing here could pass for a measurement.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from explorer.bench.results import BenchPoint
from explorer.errors import UserError
from explorer.lessons.builtin import builtin_paths
from explorer.lessons.files import load_lesson
from explorer.lessons.recording import (
    RECORDED_BY,
    apply_bundle,
    make_recorded,
    recording_targets,
    recordings_bundle,
    write_recording,
)
from explorer.lessons.texts import RECORDED_COLUMNS, recorded_row, step_html, step_recorded

STAND_IN = "Stand-in GPU (test only)"


@pytest.fixture
def lessons(tmp_path) -> list[Path]:
    folder = tmp_path / "lessons"
    folder.mkdir()
    for path in builtin_paths():
        shutil.copy(path, folder / path.name)
    return sorted(folder.glob("*.json"))


def _points(
    workload: str, devices: tuple[str, ...], sizes: tuple[int, ...] = (1024, 2048)
) -> list[BenchPoint]:
    return [
        BenchPoint(
            workload=workload,
            variant=device,
            device=device,
            size=size,
            size_label=f"n={size}",
            median_s=0.001 * (i + 1),
            repeats=5,
            throughput=100.0 * (i + 1),
            throughput_unit="GFLOP/s",
            extra={"note": "stand-in point for a test"},
        )
        for i, size in enumerate(sizes)
        for device in devices
    ]


def test_the_gpu_steps_of_the_cpu_vs_gpu_lessons_are_the_targets_and_cpu_recordings_are_not():
    targets = {(t.lesson, t.step): t for t in recording_targets()}
    assert set(targets) == {
        ("04-timing-trap", 0),
        ("05-matmul-crossover", 0),
        ("06-pinned-copies", 0),
        ("07-cifar10-step", 2),
        ("12-tiled-matmul", 9),
    }
    assert targets[("05-matmul-crossover", 0)].devices == ("cpu", "cuda:0")
    assert targets[("07-cifar10-step", 2)].sizes == (16, 64, 256, 1024)
    # the CPU recordings made by hand (04 step 2, 05 step 2, 06 step 2, 07 step 2) are never targets
    assert ("07-cifar10-step", 1) not in targets


def test_the_built_in_lessons_are_written_back_byte_for_byte_by_the_saver(lessons):
    """A recording changes one step: the rest of the file must come back as it was."""
    from explorer.statefile import save_json

    for path in lessons:
        before = path.read_bytes()
        save_json(path, json.loads(before), create_folder=False)
        assert path.read_bytes() == before, path.name


def test_a_recording_goes_into_its_step_only_and_the_player_labels_it(lessons):
    target = next(t for t in recording_targets(lessons) if t.lesson == "05-matmul-crossover")
    before = json.loads(target.path.read_text())
    recorded = make_recorded(_points("matmul", ("cpu", "cuda:0")), STAND_IN, "2026-12-01", "stand-in")
    write_recording(target, recorded)
    after = json.loads(target.path.read_text())
    assert after["steps"][1:] == before["steps"][1:]
    assert {k: v for k, v in after["steps"][0]["state"].items() if k != "recorded"} == {
        k: v for k, v in before["steps"][0]["state"].items() if k != "recorded"
    }
    assert after["steps"][0]["state"]["recorded"]["recorded_by"] == RECORDED_BY
    lesson = load_lesson(target.path)
    assert not lesson.problems
    # the narration pane labels whose results they are; the player's table (RecordedModel, whose
    # cells are recorded_row's) shows each point, in the order the lesson holds them
    shown = step_html(lesson.steps[0])
    assert f"Results recorded on {STAND_IN}, 2026-12-01" in shown
    assert "4 points, in the table below" in shown
    recorded_step = step_recorded(lesson.steps[0])
    assert recorded_step is not None
    assert RECORDED_COLUMNS == ("series", "size", "median", "throughput", "verdict")
    assert [recorded_row(p) for p in recorded_step.points] == [
        ("cpu", "n=1024", "1 ms", "100 GFLOP/s", "ok"),
        ("cuda:0", "n=1024", "1 ms", "100 GFLOP/s", "ok"),
        ("cpu", "n=2048", "2 ms", "200 GFLOP/s", "ok"),
        ("cuda:0", "n=2048", "2 ms", "200 GFLOP/s", "ok"),
    ]
    # recording again replaces the earlier recording; the step stays a target
    again = make_recorded(_points("matmul", ("cuda:0",), (4096,)), STAND_IN, "2026-12-02", "")
    write_recording(target, again)
    assert load_lesson(target.path).steps[0].state.recorded.date == "2026-12-02"
    assert any(t.lesson == target.lesson and t.step == 0 for t in recording_targets(lessons))


@pytest.mark.parametrize(
    ("points", "words"),
    [
        (_points("copies", ("cuda:0",)), "holds 'copies' points; the step runs matmul"),
        (_points("matmul", ("cuda:1",)), "points on 'cuda:1'"),
        (_points("matmul", ("cpu",)), "no GPU point that was measured"),
    ],
)
def test_a_recording_that_does_not_fit_its_step_changes_nothing(lessons, points, words):
    target = next(t for t in recording_targets(lessons) if t.lesson == "05-matmul-crossover")
    before = target.path.read_bytes()
    with pytest.raises(UserError, match=words):
        write_recording(target, make_recorded(points, STAND_IN, "2026-12-01", ""))
    assert target.path.read_bytes() == before


def test_a_bundle_from_the_gpu_machine_is_applied_whole_or_not_at_all(lessons, tmp_path):
    targets = recording_targets(lessons)
    good = [
        (t, make_recorded(_points(t.workload, t.devices), STAND_IN, "2026-12-01", "stand-in"))
        for t in targets
    ]
    bundle = tmp_path / "lesson-recordings.json"
    bundle.write_text(json.dumps(recordings_bundle(good)))
    written = apply_bundle(bundle, lessons)
    assert len(written) == 5 and all(f"recorded on {STAND_IN}, 2026-12-01" in line for line in written)
    for t in targets:
        assert load_lesson(t.path).steps[t.step].state.recorded.device == STAND_IN

    # a planted bundle: one good recording, then one that is not the acceptance run's
    originals = {p: p.read_bytes() for p in lessons}
    planted = recordings_bundle(good)
    del planted["recordings"][1]["recorded"]["recorded_by"]
    bundle.write_text(json.dumps(planted))
    with pytest.raises(UserError, match="not made by the GPU acceptance run"):
        apply_bundle(bundle, lessons)
    assert {p: p.read_bytes() for p in lessons} == originals  # checked before any file was written


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{not json", "cannot be read as lesson recordings"),
        (b'{"format": "something-else"}', "not a lesson recordings file"),
        (b'{"format": "device-explorer-lesson-recordings", "version": 99}', "is version '99'"),
        (
            b'{"format": "device-explorer-lesson-recordings", "version": 1, "recordings": []}',
            "holds no recordings",
        ),
        (
            b'{"format": "device-explorer-lesson-recordings", "version": 1, "recordings": [{"lesson": "01-blocks-and-threads", "step": 0}]}',
            "takes no GPU recording",
        ),
    ],
)
def test_a_damaged_bundle_is_one_line_and_changes_nothing(lessons, tmp_path, content, words):
    bundle = tmp_path / "bundle.json"
    bundle.write_bytes(content)
    originals = {p: p.read_bytes() for p in lessons}
    with pytest.raises(UserError, match=words) as info:
        apply_bundle(bundle, lessons)
    assert "\n" not in str(info.value)
    assert {p: p.read_bytes() for p in lessons} == originals
