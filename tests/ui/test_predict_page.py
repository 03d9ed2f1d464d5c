"""Predict mode on the Memory page: with Predict on, the tab's answer is in no visible widget's
text and not painted by its picture until the student commits; the commit reveals the picture,
grades the prediction beside it and keeps it in the answers file; a new pattern asks again."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTableWidget,
    QTextEdit,
    QWidget,
)

from explorer.quiz.answers import answers_path
from explorer.ui.settle import settle
from tests.ui.figure_text import figure_problems, recording, room_problems
from tests.ui.layout_check import clipped


@pytest.fixture
def window(catalog_window):
    return catalog_window


def visible_texts(root: QWidget) -> str:
    """Every text a visible widget of ``root`` shows: labels, fields, buttons, menus' current
    entries, tables' cells."""
    out: list[str] = []
    for w in root.findChildren(QWidget):
        if not w.isVisible():
            continue
        if isinstance(w, QLabel):
            out.append(w.text())
        elif isinstance(w, (QLineEdit, QAbstractSpinBox)):
            out.append(w.text())
        elif isinstance(w, QAbstractButton):
            out.append(w.text())
        elif isinstance(w, QComboBox):
            out.append(w.currentText())
        elif isinstance(w, (QTextEdit, QPlainTextEdit)):
            out.append(w.toPlainText())
        elif isinstance(w, QTableWidget):
            cells = (w.item(r, c) for r in range(w.rowCount()) for c in range(w.columnCount()))
            out += [cell.text() for cell in cells if cell is not None]
    # as a reader sees it: a space a label keeps unbroken ("(32 B)" on one line) is a space
    return "\n".join(out).replace("\u00a0", " ")


def painted_texts(widget: QWidget) -> str:
    with recording("page") as log:
        widget.grab()
    return "\n".join(p.text for p in log)


def test_coalescing_hides_its_answer_until_the_commit_and_asks_again_for_a_new_pattern(window):
    memory = window.show_panel("memory")
    tab = memory.coalescing
    tab.preset.setCurrentIndex(2)  # stride 32: every lane in its own sector
    settle()
    assert "32 sectors of 32 B" in visible_texts(window)  # Predict off: the answer shows
    assert "0 B" in painted_texts(memory)  # and the picture draws the fetched sectors

    memory.predict_button.click()
    settle()
    box = tab.predict_box
    assert memory.predict_button.isChecked() and memory.predict_button.text() == "Predict: on"
    assert box.ask.isVisible()
    assert "How many 32-byte sectors" in box.ask.prompt.text()
    shown, painted = visible_texts(window), painted_texts(memory)
    for answer in ("32 sectors", "sectors per request", "efficiency"):
        assert answer not in shown, answer
    assert " B" not in painted and "lane" not in painted  # no sector, byte or lane of the picture
    assert not tab.canvas.isVisible() and tab.cover.isVisible()

    box.ask.answer.setText("8")
    box.ask.confidence.setCurrentText("sure")
    box.ask.commit()
    settle()
    shown = visible_texts(window)
    assert "Not right (sure): off by -24: the answer is 32 sectors." in shown
    assert "32 sectors of 32 B" in shown and "sectors per request (32 B): 32" in shown
    assert tab.canvas.isVisible() and not tab.cover.isVisible() and not box.ask.isVisible()
    assert "0 B" in painted_texts(memory)
    with open(answers_path(), newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["lesson"], row["answer"], row["confidence"], row["right"]) == (
        "memory page",
        "8",
        "sure",
        "0",
    )

    tab.stride.setValue(1)  # the student moves a field: the new picture is asked about
    settle()
    assert box.ask.isVisible() and "element 0 + 1 x i" in box.ask.prompt.text()
    assert "4 sectors" not in visible_texts(window) and not tab.canvas.isVisible()

    memory.predict_button.click()  # Predict off: everything shows at once
    settle()
    assert not box.isVisible() and "4 sectors of 32 B" in visible_texts(window)


def test_divergence_and_banks_cover_their_answers_and_a_random_branch_says_why(window):
    memory = window.show_panel("memory")
    memory.set_predict(True)
    tab = memory.divergence
    memory.tabs.setCurrentWidget(tab)
    settle()
    assert tab.result.simt_efficiency == 0.5  # the first preset: every other thread takes the branch
    shown, painted = visible_texts(window), painted_texts(memory)
    assert "50%" not in shown and "50%" not in painted and "paths" not in painted
    assert tab.predict_box.ask.isVisible() and "SIMT efficiency" in tab.predict_box.ask.prompt.text()
    tab.predict_box.ask.answer.setText("0.5")
    tab.predict_box.ask.commit()
    settle()
    shown = visible_texts(window)
    assert "Right (sure): the answer is 0.5." in shown and "SIMT efficiency 50%" in shown
    assert "50%" in painted_texts(memory)

    tab.kind.setCurrentIndex(3)  # a random branch: no exact answer, the picture shows with why
    settle()
    assert tab.canvas.isVisible() and not tab.predict_box.ask.isVisible()
    assert "Nothing to predict here: a random branch" in visible_texts(window)

    banks = memory.banks
    memory.tabs.setCurrentWidget(banks)
    banks.preset.setCurrentIndex(2)  # a column of tile[32][32]: 32-way
    settle()
    assert "32-way" not in visible_texts(window) and banks.predict_box.ask.isVisible()
    banks.predict_box.ask.answer.setText("32")
    banks.predict_box.ask.commit()
    settle()
    assert "32-way bank conflict" in visible_texts(window)
    assert "Right (sure): the answer is 32-way." in visible_texts(window)


@pytest.mark.parametrize("size,scale", [((1024, 768), 100), ((1280, 800), 200)], ids=["1024x768", "200%"])
def test_predict_mode_fits_before_and_after_the_commit(window, size, scale):
    """Asked and revealed, each Memory tab and the visualizer's occupancy at a projector's sizes:
    nothing of the question, the answer box, the verdict or the rule is cut off, and the column
    scrolls rather than clips."""
    window.apply_text_scale(scale)
    window.resize(*size)
    memory = window.show_panel("memory")
    memory.set_predict(True)
    problems: list[str] = []
    try:
        for tab in (memory.coalescing, memory.banks, memory.divergence):
            memory.tabs.setCurrentWidget(tab)
            settle()
            assert tab.predict_box.ask.isVisible()
            problems += [f"{type(tab).__name__} asked: {p}" for p in clipped(memory)]
            tab.predict_box.ask.answer.setText("3")
            tab.predict_box.ask.commit()
            settle()
            assert tab.predict_box.verdict.isVisible() and tab.canvas.isVisible()
            problems += [f"{type(tab).__name__} revealed: {p}" for p in clipped(memory)]
            problems += [f"{type(tab).__name__} revealed: {p}" for p in figure_problems(memory)]
            problems += [f"{type(tab).__name__} revealed: {p}" for p in room_problems(memory)]
        vis = window.show_panel("visualizer")
        vis.open_columns([vis.right_side])
        vis.occupancy_view.predict_button.click()
        settle()
        problems += [f"occupancy asked: {p}" for p in clipped(vis)]
        vis.occupancy_view.predict_box.ask.answer.setText("3")
        vis.occupancy_view.predict_box.ask.commit()
        settle()
        assert vis.occupancy_view.numbers.isVisible()
        problems += [f"occupancy revealed: {p}" for p in clipped(vis)]
        problems += [f"occupancy revealed: {p}" for p in figure_problems(vis.occupancy_view)]
        problems += [f"occupancy revealed: {p}" for p in room_problems(vis.occupancy_view)]
        assert (window.width(), window.height()) == size
    finally:
        window.apply_text_scale(100)
    assert not problems, "\n".join(problems)


def test_the_visualizers_occupancy_waits_for_the_prediction(window):
    vis = window.show_panel("visualizer")
    vis.open_columns([vis.right_side])
    vis.controls.block_spins[0].setValue(256)
    vis.controls.regs_spin.setValue(128)  # half the register file's worth of blocks: 50%, registers
    settle()
    occ = vis.occupancy_view
    assert "50% theoretical occupancy" in visible_texts(window)
    assert "Occupancy vs registers" in painted_texts(occ)

    occ.predict_button.click()
    settle()
    box = occ.predict_box
    assert box.ask.isVisible() and "128 registers per thread" in box.ask.prompt.text()
    shown = visible_texts(window)
    assert "theoretical occupancy" not in shown.replace(box.ask.prompt.text(), "")
    assert "50%" not in shown and "limited by" not in shown
    assert "Occupancy vs" not in painted_texts(occ) and occ.cover.isVisible()

    box.ask.answer.setText("50")
    box.ask.confidence.setCurrentText("think so")
    box.ask.commit()
    settle()
    shown = visible_texts(window)
    assert "Right (think so): the answer is 50 %." in shown
    assert "50% theoretical occupancy" in shown and "Occupancy vs registers" in painted_texts(occ)
    with open(answers_path(), newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["lesson"], row["answer"], row["right"]) == ("launch visualizer page", "50", "1")

    vis.controls.regs_spin.setValue(64)  # another block: asked again
    settle()
    assert box.ask.isVisible() and "64 registers per thread" in box.ask.prompt.text()
    assert "theoretical occupancy" not in visible_texts(window).replace(box.ask.prompt.text(), "")


def test_view_predict_on_this_page_toggles_the_page_shown(window, qtbot):
    """View > Predict on this page (Ctrl+Shift+P): the Memory page's and the visualizer's Predict,
    the visualizer's occupancy column opened to it; a page without one says so in one line."""
    action = next(a for a in window.findChildren(QAction) if a.text() == "Pred&ict on this page")
    assert action.shortcut().toString() == "Ctrl+Shift+P"
    memory = window.show_panel("memory")
    memory.tabs.setCurrentWidget(memory.kernel)  # your kernel asks nothing: Coalescing does
    action.trigger()
    settle()
    assert memory.predict_button.isChecked() and memory.tabs.currentWidget() is memory.coalescing
    assert memory.coalescing.predict_box.ask.isVisible()
    assert window.statusBar().currentMessage().startswith("Predict on")
    action.trigger()
    settle()
    assert not memory.predict_button.isChecked() and memory.coalescing.canvas.isVisible()

    vis = window.show_panel("visualizer")
    vis.tabs.setCurrentWidget(vis.realrun_view)
    action.trigger()
    settle()
    assert vis.right_side.is_open() and vis.tabs.currentWidget() is vis.occupancy_view
    assert vis.occupancy_view.predict_box.ask.isVisible()

    window.show_panel("devices")
    action.trigger()
    assert "no Predict mode" in window.statusBar().currentMessage()


def test_the_student_picks_which_number_to_predict(window):
    memory = window.show_panel("memory")
    memory.set_predict(True)
    box = memory.coalescing.predict_box
    memory.coalescing.preset.setCurrentIndex(1)  # stride 2: half the fetched bytes used
    settle()
    assert box.concept.isVisible() and box.concept.currentText() == "sectors fetched"
    assert not memory.banks.predict_box.concept_row.isVisibleTo(memory.banks)  # banks asks one thing
    box.concept.setCurrentText("bytes used")
    settle()
    assert "What fraction of the fetched bytes" in box.ask.prompt.text()
    assert "50%" not in visible_texts(window)
    box.ask.answer.setText("0.5")
    box.ask.commit()
    settle()
    assert "Right (sure): the answer is 0.5." in visible_texts(window)

    vis = window.show_panel("visualizer")
    vis.open_columns([vis.right_side])
    vis.controls.block_spins[0].setValue(256)
    vis.controls.regs_spin.setValue(128)
    occ = vis.occupancy_view
    occ.predict_button.click()
    occ.predict_box.concept.setCurrentText("limiting resource")
    settle()
    ask = occ.predict_box.ask
    assert ask.choices.isVisible() and not ask.answer.isVisible()
    assert "which resource limits" in ask.prompt.text() and "registers" not in visible_texts(occ).replace(
        ask.prompt.text(), ""
    ).replace(ask.choices.currentText(), "")
    ask.choices.setCurrentText("registers")
    ask.commit()
    settle()
    assert "Right (sure): the answer is registers." in visible_texts(window)
    assert occ.numbers.isVisible() and "theoretical occupancy" in occ.numbers.text()


def test_the_latency_tab_waits_for_the_prediction_and_says_why_lrr_asks_nothing(window):
    """The Latency tab: the chart and the curve (U, N*) are covered until the student commits; the
    answer is the closed form for the run shown; lrr's run is shown with why it asks nothing."""
    from explorer.launch.latency import model_utilization

    vis = window.show_panel("visualizer")
    page = vis.latency_page
    vis.centre.setCurrentWidget(page)
    settle()
    assert page.view_area.isVisible()
    window.toggle_predict()  # View > Predict on this page
    settle()
    assert "Predict on: the Latency tab" in window.statusBar().currentMessage()
    box = page.predict_box
    run = vis.time_views.latency
    assert run is not None and box.ask.isVisible() and page.cover.isVisible()
    assert not page.view_area.isVisible()  # the chart and the curve give U away
    assert f"With {run.config.warps} resident warps" in box.ask.prompt.text()

    u = model_utilization(run.config)
    box.ask.answer.setText(f"{u:.3f}")
    box.ask.commit()
    settle()
    assert page.view_area.isVisible() and not page.cover.isVisible()
    assert "Right" in box.verdict.text()
    with open(answers_path(), newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["lesson"], row["right"]) == ("latency page", "1")

    page.policy_box.setCurrentIndex(page.policy_box.findText("lrr"))
    page.policy_box.activated.emit(page.policy_box.currentIndex())
    settle()
    assert page.view_area.isVisible() and not box.ask.isVisible()
    assert "exact for the gto policy" in visible_texts(window)


def test_the_tiled_matmul_tab_waits_for_the_launchs_global_loads(window):
    """Tiled matmul: the headline, the grid's counters and the roofline wait for the prediction of
    the launch's global loads (or intensity, or barriers); the stepper stays to work it out."""
    from explorer.memory.tiling import MatmulShape, tiling_model

    memory = window.show_panel("memory")
    tab = memory.tiling
    memory.tabs.setCurrentWidget(tab)
    tab.m.setValue(100)
    tab.k.setValue(40)
    settle()
    s = tab.session.shape
    loads = tiling_model(MatmulShape(s.m, s.n, s.k, s.tile)).to_dict()["global_loads"]
    assert f"{loads:,}" in visible_texts(tab) or str(loads) in visible_texts(tab)

    memory.predict_button.click()
    settle()
    box = tab.predict_box
    assert box.ask.isVisible() and tab.cover.isVisible() and not tab.counters_area.isVisible()
    shown = visible_texts(tab).replace(box.ask.prompt.text(), "")
    assert f"{loads:,}" not in shown and str(loads) not in shown
    assert tab.canvas.isVisible()  # the block's steps stay: the way to work it out

    box.ask.answer.setText(str(loads))
    box.ask.commit()
    settle()
    assert "Right" in box.verdict.text() and tab.counters_area.isVisible()
    tab.tile.setValue(16)  # another launch: asked again
    settle()
    assert box.ask.isVisible() and "16 x 16 tiles" in box.ask.prompt.text()


def test_the_timeline_waits_for_the_launch_time_and_says_why_a_2d_grid_asks_nothing(window):
    """The Timeline: its simulated timeline waits for the launch's time in mean blocks, which is
    the makespan the page then draws; a 2-D grid (rows of durations read its rows) says why."""
    vis = window.show_panel("visualizer")
    page = vis.timeline_page
    vis.centre.setCurrentWidget(page)
    assert vis.controls.select_device("t4")
    vis.controls.grid_spins[0].setValue(100)
    vis.controls.block_spins[0].setValue(256)
    settle()
    window.toggle_predict()
    settle()
    assert "Predict on: the Timeline tab" in window.statusBar().currentMessage()
    box = page.predict_box
    assert box.ask.isVisible() and page.cover.isVisible() and not page.view.isVisible()
    assert "100 blocks of 256 threads" in box.ask.prompt.text()
    makespan = vis.time_views.dispatch.figures.makespan
    box.ask.answer.setText(f"{makespan:g}")
    box.ask.commit()
    settle()
    assert "Right" in box.verdict.text() and page.view.isVisible()

    vis.controls.grid_spins[1].setValue(2)  # a 2-D grid: shown, with why it asks nothing
    settle()
    assert page.view.isVisible() and not box.ask.isVisible()
    assert "1-D grid" in visible_texts(window)
