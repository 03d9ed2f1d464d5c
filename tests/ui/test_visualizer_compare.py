"""Compare mode of the visualizer (issue 15.4): A and B side by side on one clock, B a copy of A,
the form editing the selected side, the table equal to the core's, and the state a lesson keeps."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QPoint, Qt

from explorer.devices.catalog import load_catalog
from explorer.devices.model import Discovery
from explorer.launch.animation import DISPATCH, RUN
from explorer.launch.compare import compare
from explorer.launch.config import Dim3, LaunchConfig, parse_launch
from explorer.ui.context import AppContext
from explorer.ui.visualizer.panel import VisualizerPanel
from explorer.ui.visualizer.scene import Hit
from tests.ui.test_visualizer_keys import _panel, open_catalog_window
from tests.ui.test_visualizer_keys import window as window  # noqa: F401 - the main-window fixture
from tests.ui.test_visualizer_panel import panel as panel  # noqa: F401 - the panel fixture

CATALOG = load_catalog()
H100 = next(d for d in CATALOG if d.key == "catalog:h100-sxm5")
GTX = next(d for d in CATALOG if d.key == "catalog:gtx-1650-laptop")


def _b_on_h100(panel) -> None:
    panel.set_compare(True)
    panel.select_side(1)
    assert panel.controls.select_device_key(H100.key)


def _same_moment(panel) -> None:
    """Both sides show the clock's moment; the shorter launch stays finished past its own end."""
    a, b = panel.anim, panel.anim_b
    t = panel.moment()
    assert a.t == pytest.approx(min(t, a.waves)) and b.t == pytest.approx(min(t, b.waves))
    fa, fb = a.frame(), b.frame()
    for anim, f in ((a, fa), (b, fb)):
        if t < anim.waves:
            assert f.wave == int(t + 1e-9) or f.phase == "dispatch"
        else:
            assert f.phase == "finished"


def test_b_starts_as_a_copy_of_a_at_the_same_moment(panel):
    panel.step_wave(1)
    panel.step_wave(1)
    t = panel.moment()
    panel.set_compare(True)
    assert panel.compare_on and panel.compare_box.isVisible() and not panel.scroll.isVisible()
    assert panel.plan_b == panel.plan  # the same device and launch
    assert panel.anim_b.t == panel.anim.t == t  # the moment shown is kept
    for row in panel.comparison.rows:
        assert row.a == row.b
    assert panel.pane_a.selected and not panel.pane_b.selected


def test_editing_the_form_edits_the_selected_side_only(panel):
    _b_on_h100(panel)
    assert panel.plan.device_name == GTX.name and panel.plan_b.device_name == H100.name
    panel.controls.regs_spin.setValue(64)  # edits B
    assert panel.plan_b.config.regs_per_thread == 64 and panel.plan.config.regs_per_thread == 32
    panel.select_side(0)  # the form now shows A again
    assert panel.controls.device().key == GTX.key and panel.controls.regs_spin.value() == 32
    panel.controls.block_spins[0].setValue(256)  # edits A
    assert panel.plan.config.block.x == 256 and panel.plan_b.config.block.x == 1024
    panel.select_side(1)
    assert panel.controls.device().key == H100.key and panel.controls.regs_spin.value() == 64
    assert "edit launch B" in panel.editing_label.text()
    panel.set_compare(False)  # back to A alone, in the form too
    assert not panel.compare_on and panel.controls.device().key == GTX.key
    assert panel.controls.block_spins[0].value() == 256 and panel.plan.config.block.x == 256


def test_table_shows_the_cores_comparison(panel):
    _b_on_h100(panel)
    config = parse_launch(*panel._setups[0].texts)
    expected = compare(GTX, config, H100, config)
    assert panel.comparison == expected
    cells = panel.compare_table.cells
    for row in expected.rows:
        texts = [cells[row.key, col].text() for col in ("label", "a", "b", "ratio")]
        assert texts == [row.label, row.a_text, row.b_text, row.ratio.text]
    assert cells["waves", "a"].text() == "7" and cells["waves", "b"].text() == "1"
    assert cells["waves", "ratio"].text() == "0.143x"
    assert "B needs 1 wave where A needs 7" in panel.summary_label.text()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.sampled_from(["wave+", "wave-", "block+", "block-", "tick", "home", "side"]), max_size=30
    )
)
def test_lock_step_both_sides_show_the_same_moment(panel, steps):
    if not panel.compare_on:
        _b_on_h100(panel)
        panel.controls.regs_spin.setValue(64)  # B: 1 block of 1024 per SM (registers), 132 at once
        panel.controls.grid_spins[0].setValue(400)  # so 400 blocks take 4 waves; A keeps its 7
        assert (panel.anim.waves, panel.anim_b.waves) == (7, 4)
    panel.show_moment(0.0)
    for step in steps:
        if step == "wave+":
            panel.step_wave(1)
        elif step == "wave-":
            panel.step_wave(-1)
        elif step == "block+":
            panel.step_block(1)
        elif step == "block-":
            panel.step_block(-1)
        elif step == "tick":
            panel.play()
            panel._lock.advance(0.37)  # what the frame timer does, without waiting for it
            panel.pause()
        elif step == "home":
            panel.restart()
        else:
            panel.select_side(1 - panel.selected_side)
        _same_moment(panel)
        assert f": {panel.anim.frame().label}," in panel.pane_a.title.text()
        assert f": {panel.anim_b.frame().label}," in panel.pane_b.title.text()


def test_a_side_that_cannot_run_says_why_and_the_other_still_animates(panel):
    _b_on_h100(panel)
    panel.controls.smem_spin.setValue(100_000)  # B on the H100: fine (opt-in)
    panel.select_side(0)
    panel.controls.smem_spin.setValue(100_000)  # A on the GTX 1650: more than its 64 KB
    assert panel.plan is None and panel.anim is None and panel.plan_b is not None
    assert "cannot run" in panel.pane_a.title.text() and "shared memory" in panel.pane_a.grid.empty_text
    assert panel.compare_table.cells["waves", "a"].text() == "cannot run"
    assert panel.compare_table.cells["waves", "ratio"].text() == "A cannot run"
    assert panel.controls.error_label.isVisibleTo(panel)
    assert panel.play_button.isEnabled()  # B still plays
    panel.step_wave(1)
    assert panel.anim_b.frame().dispatched == panel.anim_b.frame().blocks_in_wave


def test_clicking_a_thread_on_b_inspects_bs_launch(panel, qtbot):
    _b_on_h100(panel)
    panel.step_wave(1)
    panel._inspect(Hit(sm=5, slot=0, warp=0, lane=3), pin=True, side=1)
    block = panel.anim_b.block_at(5, 0)
    assert panel._pinned == (block, 0, 3) and panel._pinned_side == 1
    assert panel.pane_b.grid.selected == (block, 0, 3) and panel.pane_a.grid.selected is None
    info = panel.anim_b.thread_at(block, 0, 3)
    assert info.sm == 5 and f"({info.block_idx.x}, 0, 0)" in panel.inspector.label.text()


def test_compare_state_round_trips_through_remembered_and_restore(panel, qtbot):
    _b_on_h100(panel)
    panel.controls.regs_spin.setValue(64)
    saved = panel.remembered()
    assert saved["compare"] == 1 and saved["side"] == "B" and saved["b_device"] == H100.key
    assert saved["device"] == GTX.key and saved["regs"] == "32" and saved["b_regs"] == "64"
    other = VisualizerPanel(AppContext(Discovery(devices=CATALOG, reports=[])))
    qtbot.addWidget(other)
    other.restore(saved)
    assert other.compare_on and other.selected_side == 1
    assert other.plan == panel.plan and other.plan_b == panel.plan_b
    assert other.remembered() == saved
    other.restore({**saved, "compare": 0})  # a step without compare: A alone, in the form
    assert not other.compare_on and other.controls.device().key == GTX.key
    other.shutdown()


def test_a_lesson_names_b_by_part_of_its_name_and_b_copies_the_rest(panel):
    panel.restore(
        {"device": GTX.key, "grid": "98", "block": "1024", "n": "100000", "compare": 1, "b_device": "h100"}
    )
    assert panel.compare_on and panel.selected_side == 0
    assert panel.plan_b.device_name == H100.name and panel.plan_b.config == panel.plan.config
    panel.restore({"device": GTX.key, "grid": "98", "block": "1024", "compare": 1, "b_block": "bad"})
    assert panel.plan_b.config == panel.plan.config  # a B launch that does not parse: a copy of A


def test_keys_move_both_sides_in_the_window(window, qtbot):
    panel = _panel(window, qtbot)
    panel.set_compare(True)
    bar = window.tabs.tabBar()
    bar.setFocus()
    qtbot.keyClick(bar, Qt.Key.Key_Right)
    for anim in (panel.anim, panel.anim_b):
        f = anim.frame()
        assert f.wave == 0 and f.dispatched == f.blocks_in_wave == 16
    qtbot.keyClick(bar, Qt.Key.Key_Space)
    assert panel.anim.playing and panel.anim_b.playing and panel.timer.isActive()
    qtbot.keyClick(bar, Qt.Key.Key_Space)
    assert not panel.anim.playing and not panel.anim_b.playing
    panel.show_moment(1 + DISPATCH + RUN * 0.5)
    assert panel.anim.frame().label == panel.anim_b.frame().label == "wave 2 of 7"


def test_the_comparison_comes_back_after_a_restart(
    qtbot, monkeypatch, tmp_path, fake_nvml, fake_clock, fake_timer
):
    """Compare on, B an H100 with 64 registers, B being edited: through the real settings file."""
    from explorer import prefs

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))

    def open_window(saved=None):
        return open_catalog_window(qtbot, (fake_nvml, fake_clock, fake_timer), saved, panel="visualizer")

    first = open_window()
    panel = first.current_panel()
    _b_on_h100(panel)
    panel.controls.regs_spin.setValue(64)
    plans = (panel.plan, panel.plan_b)
    assert prefs.save(first.current_prefs())
    first.close()

    second = open_window(prefs.load())
    panel = second.current_panel()
    assert panel.compare_on and panel.selected_side == 1 and panel.compare_box.isVisible()
    assert (panel.plan, panel.plan_b) == plans
    assert panel.controls.device().key == H100.key and panel.controls.regs_spin.value() == 64
    second.close()


def test_run_it_for_real_runs_the_side_being_edited(panel, monkeypatch):
    started = []
    monkeypatch.setattr(panel.realrun_view, "start", lambda *args: started.append(args))
    _b_on_h100(panel)
    panel.controls.grid_spins[0].setValue(40)  # B: 40 blocks
    panel.run_for_real()
    assert started[-1] == (LaunchConfig(Dim3(40), Dim3(1024), n=100000), None, None)
    panel.select_side(0)
    panel.run_for_real()
    assert started[-1] == (LaunchConfig(Dim3(98), Dim3(1024), n=100000), None, None)


def test_the_summary_tooltip_gives_both_sides_readings(panel):
    _b_on_h100(panel)
    tip = panel.summary_label.toolTip()
    assert tip.startswith(f"A: {GTX.name}\n") and f"\n\nB: {H100.name}\n" in tip
    assert "waves: 7;" in tip and "waves: 1;" in tip
    panel.set_compare(False)
    assert (
        not panel.summary_label.toolTip().startswith("A: ") and "waves: 7;" in panel.summary_label.toolTip()
    )


def test_a_short_pane_scrolls_rather_than_squeeze_132_sms_into_a_strip(panel, qtbot):
    _b_on_h100(panel)
    panel.resize(900, 420)  # little height for two panes and the table
    qtbot.waitUntil(lambda: panel.pane_b.scroll.height() < 200, timeout=2000)
    grid = panel.pane_b.grid
    need = grid.height_for_width(
        panel.pane_b.scroll.width() - panel.pane_b.scroll.verticalScrollBar().sizeHint().width()
    )
    assert need > panel.pane_b.scroll.height()
    qtbot.waitUntil(lambda: grid.minimumHeight() == need, timeout=2000)
    lay = grid.layout_now()
    assert lay.cols > 1 and lay.cell_h >= lay.label_h + lay.bar_h + lay.pad  # cells with room for blocks
    panel.resize(1280, 800)  # room again: no scrolling
    qtbot.waitUntil(lambda: grid.minimumHeight() < need, timeout=2000)


def test_the_pointer_over_b_describes_bs_thread_and_a_click_pins_it(panel, qtbot):
    _b_on_h100(panel)
    panel.controls.grid_spins[0].setValue(40)  # B: 40 blocks on the H100, one per SM
    panel.step_wave(1)
    grid = panel.pane_b.grid
    qtbot.wait(50)  # the panes and the table settle their sizes
    point = grid.slot_center(7, 0)
    assert grid.hit_at(point.x(), point.y()).sm == 7
    qtbot.mouseMove(grid, point)
    qtbot.mouseMove(grid, point + QPoint(1, 0))  # offscreen, the first move only places the pointer
    qtbot.waitUntil(lambda: "(7, 0, 0)" in panel.inspector.label.text(), timeout=2000)  # blockIdx 7
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=point)
    assert panel._pinned_side == 1 and panel._pinned[0] == 7 and grid.selected == panel._pinned
