"""A lesson step sets the whole state it describes and shows what its narration points at:
whatever the settings held, however late the devices arrive, with the column its words name
open and its zoom placed on the thread it selects. (Every built-in step on every screen of the
issue is walked by tests/ui/test_render_walk.py; these are the cases one by one.)"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice
from explorer.lessons import load_lesson
from explorer.lessons.builtin import builtin_paths
from explorer.prefs import Prefs
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.settle import settle


def _lesson(prefix: str):
    return load_lesson(next(p for p in builtin_paths() if p.stem.startswith(prefix)))


def _discoveries() -> tuple[Discovery, Discovery]:
    """As the window receives them: the CPU and the catalog first, then the same once torch and
    numba have answered (nothing new found)."""
    devices = [CpuDevice(name="Test CPU", key="cpu"), *load_catalog()]
    first = Discovery(devices=devices, reports=[], pending=["torch", "numba"])
    last = Discovery(devices=list(devices), reports=[ProbeReport("nvml", False, "no NVIDIA driver")])
    return first, last


def _settle() -> None:
    settle()


@pytest.fixture
def late_window(qtbot):
    """The window as ``gui --lesson`` opens it: settings applied, the lesson open, no devices yet."""
    window = MainWindow(AppContext(), discover_on_show=False)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    yield window
    window.close()
    window.apply_text_scale(100)


#: what an earlier session left: an H100, N = 8000, and A/B compare mode
OLD_SETTINGS = {
    "device": "catalog:h100-sxm5",
    "grid": "8",
    "block": "1024",
    "n": "8000",
    "compare": 1,
    "b_device": "catalog:t4",
    "speed": 3,
}


@pytest.mark.parametrize("saved", [OLD_SETTINGS, None], ids=["old-settings", "fresh-home"])
def test_lesson_01_step_1_shows_its_six_blocks_whatever_was_saved_and_however_late_the_devices(
    late_window, saved
):
    """``gui --lesson 01`` with an H100 and N 8000 saved opened step 1 on 98 blocks and
    N = 100,000; with a fresh home it showed the 6 blocks still queued, so the red idle lanes the
    narration points at were not there until Play."""
    window = late_window
    window.apply_prefs(Prefs(panel="visualizer", pages={"visualizer": saved} if saved else {}))
    window.lessons.open(_lesson("01"), 0)
    first, last = _discoveries()
    window.context.set_discovery(first)
    _settle()
    window.context.set_discovery(last)
    _settle()
    vis = window.panels["visualizer"]
    s = vis.session
    assert not s.compare
    a = s.animation(0)
    assert a is not None and a.plan.device_name == "NVIDIA GeForce GTX 1650 Laptop GPU"
    assert (a.plan.total_blocks, a.plan.config.n, a.plan.idle_threads) == (6, 5466, 678)
    fill = a.fill()
    assert fill is not None and fill.wave == 0 and fill.dispatched == 6  # every block placed
    summary = vis.sm_view.summary_label.text()
    assert "6 blocks" in summary and "678 idle threads" in summary


def test_a_step_opens_the_column_its_words_point_at_and_leaves_the_rest_to_the_page(qtbot):
    """``"side_tab": "occupancy"`` did not unfold the folded occupancy column the
    narration refers to. A step naming it opens it; a step selecting a thread opens the
    inspector's; a step naming neither leaves the columns as the page would have them."""
    window = MainWindow(AppContext(_discoveries()[1]), discover_on_show=False)
    qtbot.addWidget(window)
    window.resize(1024, 768)
    window.show()
    try:
        window.lessons.open(_lesson("03"), 0)  # "Look for: the Occupancy tab on the right"
        _settle()
        vis = window.panels["visualizer"]
        assert vis.right_side.is_open() and vis.tabs.currentWidget() is vis.occupancy_view
        window.lessons.show_step(3)  # a launch that cannot run: its message is in the left column
        _settle()
        assert vis.left_side.is_open()
        window.lessons.open(_lesson("01"), 1)  # a selected thread: the inspector
        _settle()
        assert vis.left_side.is_open() and not vis.right_side.is_open()  # 1024 px hold one column
        assert "Selected thread" in vis.inspector.label.text()
        window.lessons.show_step(3)  # no thread, no tab: the page decides (the SMs keep the room)
        _settle()
        assert vis.left_side.choice is None and vis.right_side.choice is None
    finally:
        window.close()


@pytest.mark.parametrize(
    ("size", "scale"), [((1024, 768), 100), ((1280, 800), 200), ((1920, 1080), 250)], ids=str
)
def test_lesson_01_step_3_zooms_onto_the_partial_warp_the_narration_points_at(qtbot, size, scale):
    """At 1920x1080 the zoom scrolled the partial warp's idle lanes (block 5, warp 10,
    lanes 26 to 31: threads 5,466 to 5,471 are past N) out of view."""
    window = MainWindow(AppContext(_discoveries()[1]), discover_on_show=False)
    qtbot.addWidget(window)
    window.apply_text_scale(scale)
    window.resize(*size)
    window.show()
    try:
        window.lessons.open(_lesson("01"), 2)
        _settle()
        vis = window.panels["visualizer"]
        grid, area = vis.sm_view.grid, vis.sm_view.scroll_area
        assert vis.sm_view.zoom_index > 0 and vis.session.selection is not None
        plan = vis.session.animation(0).plan
        place = plan.placement(5)
        lay = grid.layout_now()
        view = QRect(-grid.x(), -grid.y(), area.viewport().width(), area.viewport().height())
        for lane in range(26, 32):
            assert view.contains(grid.slot_center(place.sm, place.slot, 10, lane)), (lane, view)
        x, y = lay.slot_origin(place.sm, place.slot)
        if lay.tile_w <= view.width() and lay.tile_h <= view.height():
            assert view.contains(QRect(x, y, lay.tile_w, lay.tile_h))  # the whole block where it fits
    finally:
        window.close()
        window.apply_text_scale(100)
