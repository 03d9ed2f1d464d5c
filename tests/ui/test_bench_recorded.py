"""A lesson's recorded GPU results are drawn, not only listed: their own dashed curves on the
Measurements plot with a "recorded on <device>, <date>" legend row, and their points on the
roofline under that device's own roofs, beside this machine's; a step without a recording takes
them away."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from explorer.lessons.builtin import builtin_paths
from explorer.lessons.files import load_lesson
from explorer.lessons.model import BenchState
from explorer.ui.context import AppContext
from tests.ui.machines import lab_discovery


def _recorded_steps() -> list[tuple[str, int]]:
    out = []
    for path in builtin_paths():
        for index, step in enumerate(load_lesson(path).steps):
            if isinstance(step.state, BenchState) and step.state.recorded is not None:
                out.append((path.stem, index))
    return out


@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch):
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    p = BenchPanel(AppContext(lab_discovery()))
    qtbot.addWidget(p)
    yield p
    p.shutdown()


def _state(stem: str, index: int) -> BenchState:
    path = next(p for p in builtin_paths() if p.stem == stem)
    state = load_lesson(path).steps[index].state
    assert isinstance(state, BenchState)
    return state


def test_every_recording_of_the_built_in_lessons_is_there_to_draw():
    stems = {stem[:2] for stem, _ in _recorded_steps()}
    assert {"04", "05", "06", "07", "12"} <= stems


@pytest.mark.parametrize(("stem", "index"), _recorded_steps())
def test_a_steps_recorded_results_are_drawn_as_dashed_curves(panel, stem, index):
    state = _state(stem, index)
    panel.show_lesson_state(state)
    rec = state.recorded
    assert rec is not None
    variants = {p.variant for p in rec.points if p.error is None and p.workload == panel.results.shown}
    assert variants, "the step's form shows the workload its recording holds"
    curves = panel.plot.recorded_items()
    assert sorted(c.name() for c in curves) == sorted(f"{v} (recorded)" for v in variants)
    for curve in curves:
        assert curve.opts["pen"].style() == Qt.PenStyle.DashLine
        xs, _ = curve.getData()
        assert xs is not None and len(xs) > 0
    marks = [n for n in panel.plot.curve_names() if n.startswith("dashed: recorded on ")]
    assert marks == [f"dashed: recorded on {_short(rec)}, {rec.date}"]


def _short(rec) -> str:
    gpu = next((p for p in rec.points if p.device != "cpu"), None)
    if gpu is not None:
        return str(gpu.extra["device_name"])
    return rec.device.split(",", 1)[0].split(" (", 1)[0]


def test_the_tiled_matmuls_recorded_points_stand_under_the_h100s_own_roofs(panel):
    [(stem, index)] = [s for s in _recorded_steps() if s[0].startswith("12")]
    state = _state(stem, index)
    panel.show_lesson_state(state)
    assert len(panel.plot.recorded_items()) == 5  # naive, T = 8, 16, 32 and torch's
    roofline = panel.roofline
    [h100] = [r for r in roofline.roofs if r.device.startswith("recorded:")]
    assert h100.name == "NVIDIA H100 80GB HBM3 (recorded)"
    assert h100.top("compute").value == pytest.approx(66908.16)
    assert h100.main_memory().value == pytest.approx(3352.3)
    assert "H100 80GB HBM3 (recorded) ridge 20 FLOP/B" in roofline.line_labels()
    drawn = roofline.recorded_items()
    assert sum(len(i.getData()[0]) for i in drawn) == 25
    placed = roofline.placed_points()
    naive = placed["tiled_matmul: cuda:0 numba naive (16x16 blocks) (recorded)"]
    assert min(naive)[0] == pytest.approx(0.2495, abs=1e-4)  # its FLOP per byte, as recorded
    assert any("recorded on NVIDIA H100 80GB HBM3, 2026-11-26" in i.toolTip() for i in drawn)
    # a step without a recording takes the curves and points away
    panel.show_lesson_state(BenchState(workload="tiled_matmul", devices=("cpu",)))
    assert panel.plot.recorded_items() == [] and roofline.recorded_items() == []
    assert not [r for r in roofline.roofs if r.device.startswith("recorded:")]
    assert not [n for n in panel.plot.curve_names() if "recorded" in n]


def test_several_peaks_are_named_in_the_legend_under_the_plot_not_on_their_lines(panel, qtbot):
    """Lesson 05 draws the H100's recorded peak, its host CPU's and this CPU's: three labels on
    lines a few pixels apart were written over each other and over the curves. Two or more peaks
    are named in the legend rows under the view (dashed, in their lines' colours); one alone
    keeps its label on its line."""
    from explorer.ui.settle import settle

    panel.resize(1280, 800)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_lesson_state(_state(next(s for s, _ in _recorded_steps() if s.startswith("05")), 0))
    settle()
    plot = panel.plot
    lines = plot.peak_lines()
    assert len(lines) >= 2
    assert not any(line.label.isVisible() for line in lines)
    names = plot.peak_names()
    assert len(names) == len(lines) and any("H100" in n for n in names)
    legend_texts = [label.text for _, label in plot.legend.items]
    assert set(names) <= set(legend_texts)
    view = plot.main.getPlotItem().vb
    legend = plot.legend.mapRectToScene(plot.legend.boundingRect())
    assert legend.top() >= view.mapRectToScene(view.boundingRect()).bottom() - 1  # under the view
    # a step without a recording takes them away: one peak again, named on its line
    panel.show_lesson_state(BenchState(workload="matmul", devices=("cpu",)))
    settle()
    assert not plot.recorded_items()
    assert all(line.label.isVisible() for line in plot.peak_lines())
    assert plot.peak_names() == [line.label.toPlainText() for line in plot.peak_lines()]
    assert not set(names) & {label.text for _, label in plot.legend.items}
