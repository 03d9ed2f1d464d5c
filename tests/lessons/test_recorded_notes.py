"""A built-in lesson's recorded results say which CUDA runtime measured them: the version its own
GPU points carry, never a "?" left by a CPU point that has none."""

from __future__ import annotations

from explorer.lessons import BenchState, load_lesson
from explorer.lessons.builtin import builtin_paths


def test_recorded_notes_name_the_cuda_runtime_of_their_gpu_points():
    checked = 0
    for path in builtin_paths():
        for step in load_lesson(path).steps:
            state = step.state
            if not isinstance(state, BenchState) or state.recorded is None:
                continue
            runtimes = {p.versions.get("cuda_runtime") for p in state.recorded.points if p.versions} - {None}
            if "gpu_acceptance.py" not in state.recorded.note:
                continue
            assert "CUDA ?" not in state.recorded.note, path.name
            assert len(runtimes) == 1 and f"CUDA {runtimes.pop()})" in state.recorded.note, path.name
            checked += 1
    assert checked == 5  # lessons 04-07 and 12 carry the H100 run


def test_the_timing_traps_unsynchronised_gpu_figures_read_invalid_in_the_recorded_table():
    """Lesson 04 carries an H100 run whose unsynchronised timings are far above the GPU's FP32
    peak: the recorded table's verdict column says so beside each figure; the synchronised ones
    and the CPU's read ok."""
    from explorer.lessons.builtin import find_lesson
    from explorer.lessons.texts import RECORDED_COLUMNS, recorded_row

    state = load_lesson(find_lesson("04-timing-trap")).steps[0].state
    assert isinstance(state, BenchState) and state.recorded is not None
    column = RECORDED_COLUMNS.index("verdict")
    verdicts = {(p.variant, p.size): recorded_row(p)[column] for p in state.recorded.points}
    unsynced = {k: v for k, v in verdicts.items() if k[0].startswith("cuda:0 naive")}
    assert unsynced and set(unsynced.values()) == {"invalid"}
    assert {v for k, v in verdicts.items() if k not in unsynced} == {"ok"}
