"""The matrix-vector lesson on the "Your kernel" tab: a step names a shipped example, the page
traces it, and the figures its narration quotes are the ones the table shows."""

from __future__ import annotations

import pytest

from explorer.lessons.builtin import builtin_paths
from explorer.lessons.files import load_lesson
from explorer.lessons.model import MemoryState
from explorer.ui.memory.panel import MemoryPanel

TRACE_S = 600  # an outer deadline only: the test waits on the tab's own signal


def _lesson():
    return load_lesson(next(p for p in builtin_paths() if p.stem.startswith("15-")))


def _cells(panel: MemoryPanel, source: str) -> list[str]:
    tab = panel.kernel
    launch = tab.session.launch
    assert launch is not None
    row = next(i for i, ln in enumerate(launch.lines) if source in ln.source)
    return [tab.table.item(row, c).text() for c in range(tab.table.columnCount())]


@pytest.mark.slow  # the trace runs the example in a child process under the simulator
def test_the_lessons_steps_trace_their_examples_and_show_the_figures_the_narration_quotes(qtbot):
    panel = MemoryPanel(None)
    qtbot.addWidget(panel)
    steps = _lesson().steps
    states = [s.state for s in steps]
    assert all(isinstance(s, MemoryState) and s.view == "kernel" for s in states)

    with qtbot.waitSignal(panel.kernel.traced, timeout=TRACE_S * 1000):
        panel.show_lesson_state(states[0])
    assert panel.tabs.currentWidget() is panel.kernel and panel.kernel.session.problem == ""
    line17 = _cells(panel, "total += m[row, col] * x[col]")
    assert line17[0] == "17" and line17[2] == "2,112 / 320"
    assert "2,112 / 320" in steps[1].narration and "**Load sectors**" in steps[1].narration
    assert panel.lesson_state() == MemoryState(view="kernel", example="matvec_row_per_thread.py")

    # the next step on the same script shows the trace it has: nothing runs again
    report = panel.kernel.session.report
    panel.show_lesson_state(states[1])
    assert panel.kernel.session.report is report and not panel.kernel.session.running
    # the line the narration points at is picked: its row selected, its first warp drawn
    assert panel.kernel.session.picked == 17 == states[1].line
    assert panel.kernel.pictures.isVisibleTo(panel.kernel)
    assert panel.lesson_state() == MemoryState(view="kernel", example="matvec_row_per_thread.py", line=17)

    with qtbot.waitSignal(panel.kernel.traced, timeout=TRACE_S * 1000):
        panel.show_lesson_state(states[2])
    assert _cells(panel, "total += m[row, col] * x[col]")[2] == "1,024 / 1,024"
    assert "1,024 / 1,024" in steps[2].narration
    branch = _cells(panel, "if lane == 0:")
    assert branch[7] == "64" and "**Divergent** 64" in steps[3].narration
    assert (
        _cells(panel, "s += partial[k]")[4] == "2,048 / 2,048"
        and _cells(panel, "s += partial[k]")[6] == "1.0"
    )
    assert panel.lesson_state() == MemoryState(view="kernel", example="matvec_coalesced.py", line=20)


def test_a_students_own_script_is_never_a_lesson_step(qtbot, tmp_path):
    panel = MemoryPanel(None)
    qtbot.addWidget(panel)
    script = tmp_path / "mine.py"
    script.write_text("print('hello')\n")
    panel.kernel.session.open(str(script))
    panel.tabs.setCurrentWidget(panel.kernel)
    assert panel.lesson_state() is None


@pytest.mark.slow  # the trace runs in a child process
def test_the_tab_says_the_launchs_occupancy_from_its_block_and_shared_memory(qtbot):
    """The padded transpose's blocks hold 32 x 33 floats (4,224 B) of shared memory and 1,024
    threads: on the GTX 1650 (CC 7.5, 1,024 threads per SM) one block fills the SM's 32 warps."""
    from explorer.devices.catalog import load_catalog
    from explorer.devices.names import best_match
    from explorer.kernels.examples import example_path
    from explorer.kernels.session import ASSUMED_REGS
    from explorer.launch.occupancy import occupancy

    panel = MemoryPanel(None)
    qtbot.addWidget(panel)
    (gpu,) = best_match("GTX 1650", [d for d in load_catalog() if d.is_gpu])
    panel.kernel.device_for_occupancy = lambda: gpu
    with qtbot.waitSignal(panel.kernel.traced, timeout=TRACE_S * 1000):
        panel.kernel.open(str(example_path("transpose_shared.py")))
    launches = panel.kernel.session.report.launches
    assert [la.shared_bytes for la in launches] == [32 * 32 * 4, 32 * 33 * 4]
    panel.kernel.launches.setCurrentIndex(1)
    text = panel.kernel.status.text()
    from explorer.devices.limits import limits_for_device

    occ = occupancy(limits_for_device(gpu), 1024, ASSUMED_REGS, 32 * 33 * 4)
    assert f"{occ.active_warps_per_sm} of {occ.max_warps_per_sm} warps" in text
    assert "4,224 B of shared memory per block" in text and "assumed (an estimate" in text
