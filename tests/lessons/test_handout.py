"""A handout's words (Qt-free): each step's heading, narration and the numbers its page computes,
checked against figures worked out by hand from the step's launch or access."""

from __future__ import annotations

import math

import pytest

from explorer.bench.results import BenchPoint
from explorer.devices.catalog import load_catalog
from explorer.devices.model import CpuDevice
from explorer.errors import UserError
from explorer.lessons.builtin import builtin_paths, open_lesson
from explorer.lessons.files import load_lesson, parse_lesson
from explorer.lessons.handout import MAX_RECORDED_ROWS, lesson_handout, parse_page_size
from explorer.lessons.model import BenchState, Lesson, Recorded, Step

DEVICES = [CpuDevice(name="Test CPU", key="cpu"), *load_catalog()]


def _step(handout, number):
    return handout.steps[number - 1]


def test_every_built_in_step_gets_its_heading_narration_and_numbers():
    for path in builtin_paths():
        lesson = load_lesson(path)
        handout = lesson_handout(lesson, DEVICES)
        assert handout.title == lesson.title
        assert [s.number for s in handout.steps] == list(range(1, len(lesson.steps) + 1))
        for step, source in zip(handout.steps, lesson.steps, strict=True):
            assert step.of == len(lesson.steps)
            assert step.narration == source.narration
            assert step.problem == "", (path.name, step.number, step.problem)
            assert step.numbers, (path.name, step.number)  # every page shows some figure
            assert step.heading.startswith(f"Step {step.number} of {step.of}")


def test_waves_on_each_gpu_are_the_ones_worked_out_by_hand():
    """Lesson 02: 98 blocks of 1,024 threads. A GTX 1650 (16 SMs) holds one such block per SM
    (1,024 threads fill its warp slots): 16 at once, ceil(98 / 16) = 7 waves. An H100 (132 SMs,
    2,048 threads per SM) holds two: 264 at once, one wave."""
    handout = lesson_handout(open_lesson("02"), DEVICES)
    first, second, both = (_step(handout, n).numbers for n in (1, 2, 3))
    assert f"waves: {math.ceil(98 / 16)}; the last runs 2 blocks (12.5% of the GPU's block slots)" in first
    assert "concurrent blocks: 16 = 16 SMs x 1" in first
    assert "idle threads (global index >= n): 352" in first  # 98 * 1024 - 100,000
    assert "concurrent blocks: 264 = 132 SMs x 2" in second
    assert any(line.startswith("waves: 1;") for line in second)
    # the comparison step: both sides, the verdict and the table, each side's wave shown
    assert both[0] == "B needs 1 wave where A needs 7: 264 blocks at once against 16."
    assert any(line.split()[:3] == ["waves", "7", "1"] for line in both)
    assert "A: shown: wave 1 of 7" in both and "B: shown: wave 1 of 1" in both


def test_latency_step_reads_the_utilization_littles_law_gives():
    """Lesson 14 step 2: a V100 with 128 registers per thread holds 2 blocks of 8 warps, 4 warps
    per scheduler; an L1 load (30 cycles, L = 29) with K = 0: U = 4 (0 + 1) / (29 + 0 + 1)."""
    numbers = _step(lesson_handout(open_lesson("14"), DEVICES), 2).numbers
    assert "latency hiding: V100 L1: 30 cycles" in numbers
    utilization = 4 * (0 + 1) / (29 + 0 + 1)
    assert any(f"= {100 * utilization:.1f}%" in line and "model U(N)" in line for line in numbers)
    assert any(f"N* = ceil((L+K+1) / (K+1)) = {math.ceil(30 / 1)} per scheduler" in line for line in numbers)


def test_memory_steps_read_the_sectors_and_the_conflicts():
    """Lesson 09 step 3: 32 lanes 128 B apart touch 32 sectors of 32 B for 128 useful bytes;
    lesson 10 step 3: a column of tile[32][32] puts all 32 lanes on one bank."""
    stride = _step(lesson_handout(open_lesson("09"), DEVICES), 3).numbers
    assert "bytes requested / fetched:  128 / 1024" in stride
    assert any(
        line.startswith("efficiency:") and line.endswith(f"{100 * 128 / 1024:.1f}%") for line in stride
    )
    column = _step(lesson_handout(open_lesson("10"), DEVICES), 3).numbers
    assert "32-way" in column[0]


def test_tiling_step_reads_the_counts_of_the_shape():
    """Lesson 12 step 9: 40 x 40 x 40 in 16 x 16 tiles: ceil(40 / 16) = 3 blocks a side, each
    loading its tiles over 3 phases; the naive kernel loads 2 K values per output, 2 * 40**3."""
    numbers = _step(lesson_handout(open_lesson("12"), DEVICES), 9).numbers
    assert numbers[0].startswith("C = A (40 x 40) . B (40 x 40) in 16 x 16 tiles: 3 x 3 blocks")
    assert any(f"instead of {2 * 40**3:,}" in line for line in numbers)


def _lesson(steps):
    return parse_lesson({"format": "device-explorer-lesson", "version": 1, "title": "T", "steps": steps})


def test_a_step_that_cannot_be_shown_keeps_its_narration_and_says_why():
    lesson = _lesson(
        [
            {"panel": "visualizer", "narration": "kept", "state": {"device": "no such gpu", "grid": "2"}},
            {"panel": "visualizer", "narration": "bad field", "state": {"device": "1650", "grid": "x"}},
            {"panel": "memory", "narration": "ok", "state": {"view": "banks", "stride": 2}},
        ]
    )
    missing, damaged, fine = lesson_handout(lesson, DEVICES).steps
    assert missing.narration == "kept" and not missing.numbers
    assert "'no such gpu' is neither in this machine nor in the catalog" in missing.problem
    assert damaged.narration == "bad field" and "grid" in damaged.problem and not damaged.numbers
    assert not damaged.problem.startswith("step 2:")  # the page says which step already
    assert fine.problem == "" and "2-way" in fine.numbers[0]


def test_a_gpu_step_made_elsewhere_notes_the_catalog_sheet_standing_in():
    lesson = _lesson(
        [{"panel": "visualizer", "state": {"device": "1650", "device_kind": "present", "grid": "4"}}]
    )
    (step,) = lesson_handout(lesson, DEVICES).steps
    assert "its catalog spec sheet is shown" in step.note
    assert "blocks: 4" in step.numbers[3]


def test_recorded_results_are_listed_up_to_a_limit_and_counted_beyond():
    points = tuple(
        BenchPoint("matmul", "naive", "cpu", n, f"n={n}", median_s=1e-3 * n, repeats=3)
        for n in range(1, MAX_RECORDED_ROWS + 6)
    )
    state = BenchState(workload="matmul", recorded=Recorded("Lab box", "2026-11-23", points))
    lesson = Lesson("T", [Step("benchmarks", state, narration="look")])
    (step,) = lesson_handout(lesson, DEVICES).steps
    assert "results recorded on Lab box, 2026-11-23 (not this machine's):" in step.numbers
    rows = [line for line in step.numbers if line.startswith("naive")]
    assert len(rows) == MAX_RECORDED_ROWS
    assert step.numbers[-1] == "... and 5 more points"


def test_a_benchmark_step_without_recorded_results_says_the_run_is_made_in_class():
    lesson = Lesson("T", [Step("benchmarks", BenchState(workload="matmul", sizes=(64, 128)))])
    (step,) = lesson_handout(lesson, DEVICES).steps
    assert step.numbers[0] == "workload matmul on cpu; sizes: 64, 128"
    assert "the run is made in class" in step.numbers[1]


@pytest.mark.parametrize(
    ("text", "size"), [("A4", "A4"), ("a4", "A4"), (" letter ", "Letter"), ("LETTER", "Letter")]
)
def test_page_sizes_are_read_in_any_case(text, size):
    assert parse_page_size(text) == size


@pytest.mark.parametrize("text", ["A5", "", "legal", "a4x"])
def test_other_page_sizes_are_one_line_naming_the_two(text):
    with pytest.raises(UserError) as caught:
        parse_page_size(text)
    assert "use A4 or Letter" in str(caught.value) and "\n" not in str(caught.value)
