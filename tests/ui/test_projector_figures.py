"""Figures at projector sizes with a lesson open: each keeps its least height in lines of its
axis text (or scrolls in its own area), no text of a figure over another, and the labels a
lesson points at drawn. Measured from what the figures paint (tests/ui/figure_text.py); the
render walk runs the same checks on every page and lesson step at the four screens."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.lessons.builtin import builtin_paths
from explorer.lessons.model import MemoryState
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.plot_widget import plot_widget
from explorer.ui.settle import settle
from explorer.ui.visualizer.scene import MIN_TILE_PX
from tests.ui.figure_text import (
    MIN_PLOT_LINES,
    figure_areas,
    figure_problems,
    measure,
    recording,
    room_problems,
)
from tests.ui.machines import lab_discovery


def _settle() -> None:
    settle()


def _lesson(prefix: str):
    return next(p for p in builtin_paths() if p.stem.startswith(prefix))


@pytest.fixture
def window(qtbot):
    w = MainWindow(AppContext(lab_discovery()), discover_on_show=False)
    qtbot.addWidget(w)
    yield w
    w.close()
    w.apply_text_scale(100)


def _show(window, size: tuple[int, int], scale: int) -> None:
    window.resize(*size)
    window.show()
    window.apply_text_scale(scale)
    window.resize(*size)
    _settle()


def _placement_problems(window) -> list[str]:
    """Texts of a figure over each other or out of their figure or plot (their sizes are the
    text-scale tests' business)."""
    return [p for p in figure_problems(window) if "drawn at" not in p]


def _in_view(widget, area) -> QRect:
    """The part of ``widget`` its scroll ``area`` shows now."""
    top_left = widget.mapTo(area.viewport(), QPoint(0, 0))
    return QRect(top_left, widget.size()).intersected(area.viewport().rect())


def test_the_latency_plots_keep_eight_lines_with_a_lesson_open_at_150(window):
    """Lesson 14 step 2 at 150% on 1024x768: the scheduler chart was 40 px tall with only
    "sched 0" labelled and the U-vs-warps graph 23 px. Both plots now keep MIN_PLOT_LINES lines
    of their axis text; the view scrolls in its own area where the page is shorter, the page
    itself fits, and the narration keeps its least lines."""
    _show(window, (1024, 768), 150)
    window.lessons.open_path(_lesson("14"), step=1)
    _settle()
    page = window.panels["visualizer"].latency_page
    measure(window)  # the figures paint: the latency view reports the plots it drew
    areas = dict((what, (rect, line)) for what, rect, line in figure_areas(page.view))
    assert set(areas) == {"scheduler chart", "graph"}
    for rect, line in areas.values():
        assert rect.height() + 1 >= MIN_PLOT_LINES * line
    assert not room_problems(window)
    assert not _placement_problems(window)
    labels = []
    with recording("latency") as log:
        page.view.grab()
    labels = [p.text for p in log]
    assert {"sched 0", "sched 1", "sched 2", "sched 3"} <= set(labels)  # every scheduler named
    container = window._containers["visualizer"]
    assert container.verticalScrollBar().maximum() == 0  # the page fits: its view scrolls instead
    narration = window.lessons.narration
    assert narration.viewport().height() >= 2 * narration.fontMetrics().lineSpacing()


def test_the_latency_graphs_point_label_stays_off_its_curve(window):
    """ "16 warps" was written over the utilization curve: it goes where no part of the line is."""
    _show(window, (1024, 768), 150)
    window.lessons.open_path(_lesson("14"), step=1)
    _settle()
    view = window.panels["visualizer"].latency_page.view
    with recording("latency") as log:
        view.grab()
    note = next(p for p in log if p.text.endswith("warps") or "warps of" in p.text)
    run, curve = view.run, view.curve
    (_what, plot, _line) = next(a for a in view.figure_areas() if a[0] == "graph")
    x_max = max([run.config.slots, run.config.warps] + [pt.warps for pt in curve.points])
    points = [(0.0, 0.0)] + [(pt.warps, pt.model) for pt in curve.points]
    for (w0, u0), (w1, u1) in zip(points, points[1:], strict=False):
        for i in range(21):
            w, u = w0 + (w1 - w0) * i / 20, u0 + (u1 - u0) * i / 20
            x = plot.left() + w / x_max * plot.width()
            y = plot.bottom() - u * plot.height()
            assert not note.rect.contains(x, y), (note.text, note.rect, x, y)


def _curve_samples(view) -> list[tuple[float, float]]:
    """Points along the utilization curve as ``view`` last drew it, every twentieth of a segment."""
    run, curve = view.run, view.curve
    (_what, plot, _line) = next(a for a in view.figure_areas() if a[0] == "graph")
    x_max = max([run.config.slots, run.config.warps] + [pt.warps for pt in curve.points])
    points = [(0.0, 0.0)] + [(pt.warps, pt.model) for pt in curve.points]
    out = []
    for (w0, u0), (w1, u1) in zip(points, points[1:], strict=False):
        for i in range(21):
            w, u = w0 + (w1 - w0) * i / 20, u0 + (u1 - u0) * i / 20
            out.append((plot.left() + w / x_max * plot.width(), plot.bottom() - u * plot.height()))
    return out


def test_the_n_star_label_stays_off_the_curve_at_every_width(window, qtbot):
    """Lesson 14 step 2 (N* = 120, past the SM's 64 warps): "N* = 120 > 64" sat low at the
    graph's right, where a narrow graph's rising curve ends; it was written over the line. At
    every width and height the view takes, the label is inside the graph and off the curve."""
    from explorer.ui.visualizer.latency_view import LatencyView

    _show(window, (1024, 768), 150)
    window.lessons.open_path(_lesson("14"), step=1)
    _settle()
    shown = window.panels["visualizer"].latency_page.view
    view = LatencyView()
    qtbot.addWidget(view)
    view.set_model(shown.run, shown.curve, shown.preset)
    checked = 0
    for width in range(520, 1400, 40):
        for extra in (0, 60, 200):
            view.resize(width, view.least_height(width) + extra)
            with recording("latency") as log:
                view.grab()
            need = [p for p in log if p.text.startswith("N* = ")]
            assert len(need) == 1, [p.text for p in log]
            (_what, plot, _line) = next(a for a in view.figure_areas() if a[0] == "graph")
            assert plot.contains(need[0].rect), (width, need[0].rect, plot)
            for x, y in _curve_samples(view):
                assert not need[0].rect.contains(x, y), (width, extra, need[0].text, need[0].rect, x, y)
            checked += 1
    assert checked == 66


def test_the_h100s_blocks_show_under_compare_with_the_waves_row_in_view(window):
    """Lesson 2 step 3 at 150% on 1024x768: the H100's running SMs looked empty (each block a
    1 px line) and the table's waves row was below the fold. Each block is at least MIN_TILE_PX
    on each side (the picture scrolls rather than thin them) and the waves row shows."""
    _show(window, (1024, 768), 150)
    window.lessons.open_path(_lesson("02"), step=2)
    _settle()
    vis = window.panels["visualizer"]
    assert vis.session.compare
    compare = vis.sm_view.compare_box
    for pane in (compare.pane_a, compare.pane_b):
        lay = pane.grid.layout_now()
        assert min(lay.tile_w, lay.tile_h) >= MIN_TILE_PX, lay
    waves = compare.table.cells["waves", "label"]
    shown = _in_view(waves, compare.table_scroll)
    assert shown.height() >= waves.height() - 1
    # the panes' titles take their two lines, not six (Qt's rich-text height-for-width)
    title = compare.pane_b.title
    assert title.height() <= 3 * title.fontMetrics().lineSpacing()


def test_coalescing_efficiency_plot_needs_no_scrolling_at_1280x800_200(window):
    """At 200% on 1280x800 the efficiency plot was below the fold of the form's column."""
    _show(window, (1280, 800), 200)
    memory = window.show_panel("memory")
    memory.show_screenshot_view("coalescing")
    _settle()
    tab = memory.tabs.currentWidget()
    assert tab.left_area.verticalScrollBar().maximum() == 0
    assert _in_view(tab.sweep, tab.left_area).height() == tab.sweep.height()
    measure(window)
    assert not room_problems(window)
    assert not _placement_problems(window)


def test_tiled_matmul_names_never_run_into_each_other(window):
    """A 100x5 beside C 100x70 was drawn "A 100x5C 100x70" at 1024x768 with a lesson open: a
    narrow matrix's name is shortened to its letter, never drawn over its neighbour's."""
    _show(window, (1024, 768), 100)
    window.lessons.open_path(_lesson("12"))
    _settle()
    memory = window.panels["memory"]
    for rows, cols, inner in ((100, 70, 5), (5, 70, 100), (100, 5, 70), (64, 64, 64)):
        memory.show_lesson_state(MemoryState(view="tiling", rows=rows, cols=cols, inner=inner, tile=8))
        _settle()
        canvas = memory.tabs.currentWidget().canvas
        with recording("tiling") as log:
            canvas.grab()
        names = [p for p in log if p.text[:1] in "ABC" and (len(p.text) == 1 or p.text[1] == " ")]
        assert {p.text[0] for p in names} == {"A", "B", "C"}, [p.text for p in names]
        assert not figure_problems(canvas, log), (rows, cols, inner)


def test_the_timelines_upper_bound_tick_is_labelled(window):
    """The upper bound's tick at the axis's right end had no label: the bounds have a line of
    their own under the makespan's."""
    _show(window, (1024, 768), 100)
    vis = window.show_panel("visualizer")
    vis.prepare_screenshot()
    vis.show_screenshot_view("timeline")
    _settle()
    view = vis.timeline_page.view
    shown = view.shown
    assert shown.upper_bound is not None and shown.lower_bound is not None
    with recording("timeline") as log:
        view.grab()
    words = {p.text for p in log}
    assert "makespan" in words
    assert words & {"upper bound", "upper"} and words & {"lower bound", "lower"}
    assert not figure_problems(view, log)


def test_the_checks_see_a_squashed_plot_and_labels_over_each_other(qtbot):
    """The render walk's two checks can fail: a plot 60 px tall is under MIN_PLOT_LINES lines of
    its axis text, and two labels placed on one point are drawn over each other."""
    holder = QWidget()
    qtbot.addWidget(holder)
    plot = plot_widget()
    QVBoxLayout(holder).addWidget(plot)
    holder.resize(420, 80)
    for text in ("N* = 120 > 64", "16 warps"):
        label = pg.TextItem(text)
        plot.addItem(label)
        label.setPos(0.5, 0.5)
    plot.setRange(xRange=(0, 1), yRange=(0, 1))
    holder.show()
    _settle()
    rooms = room_problems(holder)
    line = QFontMetricsF(plot.getPlotItem().getAxis("left").style["tickFont"] or plot.font()).lineSpacing()
    assert any("under 8 lines" in p for p in rooms), (rooms, line)
    problems = figure_problems(holder)
    assert any("are drawn over each other" in p and "16 warps" in p for p in problems), problems
    holder.resize(420, 100 + 10 * int(line))  # room for its lines: no longer squashed
    _settle()
    assert not room_problems(holder)
