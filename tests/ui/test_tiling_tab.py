"""The Memory page's Tiled matmul tab shows what the Qt-free TilingSession computed: the controls
drive the session, the stepper's counters end at the count model's totals, the T slider moves the
roofline point and the occupancy through explorer.launch.occupancy, and a lesson step saved from
the window replays the same state."""

from __future__ import annotations

import pytest

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery
from explorer.devices.limits import limits_for_device
from explorer.launch.occupancy import occupancy
from explorer.lessons import load_lesson
from explorer.memory import tiling_texts as texts
from explorer.memory.tiling import MatmulShape, tiled_counts
from explorer.ui.context import AppContext
from explorer.ui.memory.panel import MemoryPanel


@pytest.fixture
def panel(qtbot):
    context = AppContext(Discovery(devices=list(load_catalog()), reports=[]))
    p = MemoryPanel(context)
    qtbot.addWidget(p)
    p.resize(1280, 760)
    p.show()
    p.tabs.setCurrentWidget(p.tiling)
    return p


def test_it_opens_on_the_issue_s_example_on_the_gtx_1650(panel):
    tab = panel.tiling
    s = tab.session
    assert (s.shape.m, s.shape.n, s.shape.k, s.shape.tile) == (64, 64, 64, 8)
    assert s.device is not None and "1650" in s.device.name
    assert tab.headline.text() == texts.headline(s.model)
    assert "8x fewer global loads" in tab.headline.text() and "16 barriers per block" in tab.headline.text()
    assert tab.position_label.text() == f"step 0 of {s.steps}"


def test_stepping_to_the_end_reaches_the_model_s_totals(panel, qtbot):
    tab = panel.tiling
    tab.m.setValue(20)  # ragged for T = 8: edge blocks load zeros
    tab.k.setValue(19)
    s = tab.session
    assert (s.shape.m, s.shape.k) == (20, 19) and s.position == 0
    tab.forward.click()
    assert s.position == 1 and tab.canvas.state == s.state
    tab.barrier.click()  # to the first barrier that opens
    assert s.state.tick.kind == "barrier"
    tab.end.click()
    totals = tiled_counts(MatmulShape(20, 64, 19, 8))
    grid = s.state.grid
    assert (grid.global_loads, grid.shared_loads, grid.barriers, grid.flops) == (
        totals.global_loads,
        totals.shared_loads,
        totals.barriers,
        totals.flops,
    )
    table = tab.counters.text()
    assert f"{totals.global_loads:,}" in table and "reached the model's totals" in tab.counters_note.text()
    tab.start.click()
    assert s.position == 0 and tab.position.value() == 0


def test_play_steps_by_itself_and_stops_at_the_end(panel, qtbot):
    tab = panel.tiling
    tab.session.set_shape(MatmulShape(4, 4, 4, 2))
    tab.timer.setInterval(1)
    tab.play.click()
    assert tab.play.text() == "Pause"
    qtbot.waitUntil(lambda: tab.session.finished, timeout=10_000)
    qtbot.waitUntil(lambda: tab.play.text() == "Play", timeout=10_000)
    assert not tab.timer.isActive()


def test_the_t_slider_moves_the_roofline_point_and_the_occupancy(panel):
    tab = panel.tiling
    s = tab.session
    before = {p.tile: p for p in s.roof_points()}[8]
    tab.tile.setValue(32)
    assert s.shape.tile == 32 and s.position == 0
    after = {p.tile: p for p in s.roof_points()}[32]
    assert after.intensity_flop_per_byte > before.intensity_flop_per_byte
    assert tab.roof_line.text().startswith(texts.roof_line(after, s.roof, s.roof_ceilings()))
    limits = limits_for_device(s.device)
    assert s.cost.occupancy == occupancy(limits, 1024, 32, 8192)
    assert tab.cost_line.text() == texts.cost_line(s.cost)
    assert "8,192 B of shared memory per block" in tab.cost_line.text()


def test_another_gpu_and_more_registers_change_the_costs(panel):
    tab = panel.tiling
    tab.tile.setValue(16)
    h100 = next(i for i in range(tab.gpu.count()) if "H100" in tab.gpu.itemText(i))
    tab.gpu.setCurrentIndex(h100)
    s = tab.session
    assert "H100" in s.device.name and "H100" in s.roof.name
    tab.regs.setValue(128)  # 256 threads x 128 registers: registers now limit the blocks per SM
    assert s.cost.occupancy == occupancy(limits_for_device(s.device), 256, 128, 2048)
    assert "registers" in tab.cost_line.text()


def test_a_tiling_step_saved_from_the_window_replays(qtbot, tmp_path):
    from explorer.ui.main_window import MainWindow

    def window():
        w = MainWindow(
            AppContext(Discovery(devices=list(load_catalog()), reports=[])), discover_on_show=False
        )
        qtbot.addWidget(w)
        return w

    first = window()
    mem = first.show_panel("memory")
    mem.tabs.setCurrentWidget(mem.tiling)
    tab = mem.tiling
    tab.gpu.setCurrentIndex(next(i for i in range(tab.gpu.count()) if "T4" in tab.gpu.itemText(i)))
    tab.session.set_shape(MatmulShape(40, 33, 50, 16))
    tab.edge.click()
    tab.session.seek(17)
    first.lessons.save_current_as_step(narration="edge block")
    lesson = load_lesson(first.lessons.save_to(tmp_path / "tiling.json"))
    step = lesson.steps[0].state
    assert (step.view, step.rows, step.cols, step.inner, step.tile) == ("tiling", 40, 33, 50, 16)
    assert (step.block_x, step.block_y, step.tick, step.gpu) == (2, 2, 17, "NVIDIA T4")

    second = window()
    assert second.lessons.open_path(tmp_path / "tiling.json")
    again = second.panels["memory"]
    assert again.tabs.currentWidget() is again.tiling
    s = again.tiling.session
    assert (s.shape, s.block, s.position, s.device.name) == (
        MatmulShape(40, 33, 50, 16),
        (2, 2),
        17,
        "NVIDIA T4",
    )
    assert second.lessons.note == ""
