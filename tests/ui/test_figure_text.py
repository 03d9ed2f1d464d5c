"""Every painted figure takes its text from the one text scale, up and back down,
measured from the painters' own calls (tests/ui/figure_text.py)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QPainter
from PySide6.QtWidgets import QWidget

from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.settle import settle
from explorer.ui.theme import FIGURE_TEXT_MIN_SHARE, label_px, readable_px
from tests.ui.figure_text import Painted, figure_problems, measure, recording
from tests.ui.machines import lab_discovery, measured_matmul_points


def _settle() -> None:
    settle()


@pytest.fixture
def window(qtbot, fake_nvml, fake_clock, fake_timer):
    w = MainWindow(
        AppContext(lab_discovery()),
        discover_on_show=False,
        devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
    )
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    yield w
    w.close()
    w.apply_text_scale(100)


def _figures_on_every_page(window) -> list[Painted]:
    """What the figures of each page paint: the SMs with the wave bar, legend and occupancy
    graphs, the three memory pictures and the efficiency plot, the measurements and roofline."""
    found: list[Painted] = []
    vis = window.show_panel("visualizer")
    vis.prepare_screenshot()
    vis.open_columns([vis.right_side])  # the occupancy graphs
    _settle()
    found += measure(window)
    vis.open_columns([])
    memory = window.show_panel("memory")
    for view in memory.SCREENSHOT_VIEWS:
        memory.show_screenshot_view(view)
        _settle()
        found += measure(window)
    bench = window.show_panel("benchmarks")
    bench.set_run(measured_matmul_points())
    for tab in range(bench.plot_tabs.count()):
        bench.plot_tabs.setCurrentIndex(tab)
        _settle()
        found += measure(window)
    return found


def _kinds(painted: list[Painted]) -> set[str]:
    return {p.figure.split("#")[0].rsplit("/", 1)[-1] for p in painted}


def test_figures_paint_no_text_below_the_readable_size_at_any_text_size(window):
    """At 100%, 175% and 250%: every painted text at least FIGURE_TEXT_MIN_SHARE of the label
    text, inside its figure and off the others."""
    for scale in (100, 175, 250):
        window.apply_text_scale(scale)
        painted = _figures_on_every_page(window)
        assert {
            "SmGrid",
            "WaveBar",
            "Legend",
            "SweepGraph",
            "CoalescingCanvas",
            "BankCanvas",
            "DivergenceCanvas",
            "PlotWidget",
        } <= _kinds(painted)
        least = min(p.px for p in painted)
        assert least + 0.5 >= FIGURE_TEXT_MIN_SHARE * label_px(), (scale, least)
        problems = figure_problems(window, painted)
        # (the walk checks overlaps per screen; here the sizes at three scales)
        assert not [p for p in problems if "drawn at" in p], problems


def test_figure_text_follows_the_scale_up_and_back_down(window):
    """Going from 250% back to 100% left the plots' axis titles at 250% beside 100% ticks: each
    painted text is the same size at 100% before and after a trip to 250%, and larger at 250%."""
    window.apply_text_scale(100)
    before = {(p.figure, p.text): p.px for p in _figures_on_every_page(window)}
    window.apply_text_scale(250)
    up = {(p.figure, p.text): p.px for p in _figures_on_every_page(window)}
    window.apply_text_scale(100)
    after = {(p.figure, p.text): p.px for p in _figures_on_every_page(window)}
    shared = set(before) & set(after)
    assert len(shared) > 100
    changed = {k: (before[k], after[k]) for k in shared if abs(before[k] - after[k]) > 0.6}
    assert not changed, sorted(changed.items())[:10]
    grown = [k for k in set(before) & set(up) if up[k] >= 2.0 * before[k]]
    assert len(grown) >= 0.9 * len(set(before) & set(up))  # 250% text: figures' text too


def test_the_check_sees_text_drawn_too_small(qtbot):
    """The measurement is of what is painted: a figure drawing 8 px text is caught."""

    class Tiny(QWidget):
        def paintEvent(self, _event) -> None:
            p = QPainter(self)
            font = QFont(self.font())
            font.setPixelSize(8)
            p.setFont(font)
            p.drawText(QRectF(2, 2, 100, 20), 0, "SM 131")
            p.end()

    w = Tiny()
    qtbot.addWidget(w)
    w.resize(120, 40)
    with recording("Tiny") as log:
        w.grab()
    assert [(p.text, p.px) for p in log] == [("SM 131", 8)]
    assert readable_px() > 8
    assert any("drawn at 8 px" in p for p in figure_problems(w, log))
