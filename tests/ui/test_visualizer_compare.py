"""Compare mode of the visualizer: A and B side by side on one clock, B a copy of A,
the form editing the selected side, the table equal to the core's, and the state a lesson keeps."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QPoint, Qt

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery
from explorer.launch.animation import DISPATCH, RUN
from explorer.launch.compare import compare
from explorer.launch.config import Dim3, LaunchConfig, parse_launch
from explorer.launch.session import Hit, Selection
from explorer.ui.context import AppContext
from explorer.ui.settle import settle
from explorer.ui.visualizer.panel import VisualizerPanel
from tests.ui.test_visualizer_keys import _panel, open_catalog_window
from tests.ui.test_visualizer_keys import window as window  # the main-window fixture
from tests.ui.test_visualizer_panel import panel as panel  # the panel fixture

CATALOG = load_catalog()
H100 = next(d for d in CATALOG if d.key == "catalog:h100-sxm5")
GTX = next(d for d in CATALOG if d.key == "catalog:gtx-1650-laptop")


def _b_on_h100(panel) -> None:
    panel.playback.compare_button.click()
    panel.sm_view.pane_b.button.click()
    assert panel.controls.select_device_key(H100.key)


def _plans(panel):
    return tuple(side.plan for side in panel.session.sides)


def _anims(panel):
    return tuple(side.animation for side in panel.session.sides)


def _same_moment(panel) -> None:
    """Both sides show the clock's moment; the shorter launch stays finished past its own end."""
    a, b = _anims(panel)
    t = panel.session.moment
    assert a.t == pytest.approx(min(t, a.waves)) and b.t == pytest.approx(min(t, b.waves))
    fa, fb = a.frame(), b.frame()
    for anim, f in ((a, fa), (b, fb)):
        if t < anim.waves:
            assert f.wave == int(t + 1e-9) or f.phase == "dispatch"
        else:
            assert f.phase == "finished"


def test_b_starts_as_a_copy_of_a_at_the_same_moment(panel):
    session = panel.session
    session.step_wave(1)
    session.step_wave(1)
    t = session.moment
    panel.playback.compare_button.click()
    assert (
        session.compare
        and panel.sm_view.compare_box.isVisible()
        and not panel.sm_view.scroll_area.isVisible()
    )
    a, b = _plans(panel)
    assert b == a  # the same device and launch
    assert _anims(panel)[1].t == _anims(panel)[0].t == t  # the moment shown is kept
    for row in session.comparison.rows:
        assert row.a == row.b
    assert panel.sm_view.pane_a.selected and not panel.sm_view.pane_b.selected


def test_editing_the_form_edits_the_selected_side_only(panel):
    _b_on_h100(panel)
    a, b = _plans(panel)
    assert a.device_name == GTX.name and b.device_name == H100.name
    panel.controls.regs_spin.setValue(64)  # edits B
    a, b = _plans(panel)
    assert b.config.regs_per_thread == 64 and a.config.regs_per_thread == 32
    panel.sm_view.pane_a.button.click()  # the form now shows A again
    assert panel.controls.device().key == GTX.key and panel.controls.regs_spin.value() == 32
    panel.controls.block_spins[0].setValue(256)  # edits A
    a, b = _plans(panel)
    assert a.config.block.x == 256 and b.config.block.x == 1024
    panel.sm_view.pane_b.button.click()
    assert panel.controls.device().key == H100.key and panel.controls.regs_spin.value() == 64
    assert "edit launch B" in panel.editing_note.text()
    panel.sm_view.pane_b.button.click()  # pressed again: B stays the side being edited
    assert panel.session.edited == 1 and panel.sm_view.pane_b.button.isChecked()
    panel.playback.compare_button.click()  # back to A alone, in the form too
    assert not panel.session.compare and panel.controls.device().key == GTX.key
    assert panel.controls.block_spins[0].value() == 256 and _plans(panel)[0].config.block.x == 256


def test_table_shows_the_cores_comparison(panel):
    _b_on_h100(panel)
    config = panel.session.setups[0].config
    assert config == parse_launch("98", "1024", "0", "32", "100000")
    expected = compare(GTX, config, H100, config)
    assert panel.session.comparison == expected
    cells = panel.sm_view.compare_box.table.cells
    for row in expected.rows:
        texts = [cells[row.key, col].text() for col in ("label", "a", "b", "ratio")]
        assert texts == [row.label, row.a_text, row.b_text, row.ratio.text]
    assert cells["waves", "a"].text() == "7" and cells["waves", "b"].text() == "1"
    assert cells["waves", "ratio"].text() == "0.143x"
    assert "B needs 1 wave where A needs 7" in panel.sm_view.summary_label.text()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.sampled_from(["wave+", "wave-", "block+", "block-", "tick", "home", "side"]), max_size=30
    )
)
def test_lock_step_both_sides_show_the_same_moment(panel, steps):
    session = panel.session
    if not session.compare:
        _b_on_h100(panel)
        panel.controls.regs_spin.setValue(64)  # B: 1 block of 1024 per SM (registers), 132 at once
        panel.controls.grid_spins[0].setValue(400)  # so 400 blocks take 4 waves; A keeps its 7
        assert tuple(a.waves for a in _anims(panel)) == (7, 4)
    session.show_moment(0.0)
    for step in steps:
        if step == "wave+":
            panel.playback.wave_button.click()
        elif step == "wave-":
            panel.playback.back_wave_button.click()
        elif step == "block+":
            panel.playback.block_button.click()
        elif step == "block-":
            panel.playback.back_block_button.click()
        elif step == "tick":
            session.play()
            session.advance(0.37)  # what the frame clock does, without waiting for it
            session.pause()
        elif step == "home":
            panel.playback.restart_button.click()
        else:
            session.select_side(1 - session.edited)
        _same_moment(panel)
        a, b = _anims(panel)
        assert f": {a.frame().label}," in panel.sm_view.pane_a.title.text()
        assert f": {b.frame().label}," in panel.sm_view.pane_b.title.text()


def test_a_side_that_cannot_run_says_why_and_the_other_still_animates(panel):
    _b_on_h100(panel)
    panel.controls.smem_spin.setValue(100_000)  # B on the H100: fine (opt-in)
    panel.session.select_side(0)
    panel.controls.smem_spin.setValue(100_000)  # A on the GTX 1650: more than its 64 KB
    (a, b), (anim_a, anim_b) = _plans(panel), _anims(panel)
    assert a is None and anim_a is None and b is not None
    pane_a, cells = panel.sm_view.pane_a, panel.sm_view.compare_box.table.cells
    assert "cannot run" in pane_a.title.text() and "shared memory" in pane_a.grid.empty_text
    assert cells["waves", "a"].text() == "cannot run"
    assert cells["waves", "ratio"].text() == "A cannot run"
    assert panel.controls.error_label.isVisibleTo(panel)
    assert panel.playback.play_button.isEnabled()  # B still plays
    panel.session.step_wave(1)
    assert anim_b.frame().dispatched == anim_b.frame().blocks_in_wave


def test_clicking_a_thread_on_b_inspects_bs_launch(panel, qtbot):
    _b_on_h100(panel)
    panel.session.step_wave(1)
    panel.session.click(1, Hit(sm=5, slot=0, warp=0, lane=3))
    anim_b = _anims(panel)[1]
    block = anim_b.block_at(5, 0)
    assert panel.session.selection == Selection(side=1, block=block, warp=0, lane=3)
    assert panel.sm_view.pane_b.grid.selected == (block, 0, 3) and panel.sm_view.pane_a.grid.selected is None
    info = anim_b.thread_at(block, 0, 3)
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
    assert other.session.compare and other.session.edited == 1
    assert _plans(other) == _plans(panel)
    assert other.remembered() == saved
    other.restore({**saved, "compare": 0})  # a step without compare: A alone, in the form
    assert not other.session.compare and other.controls.device().key == GTX.key
    other.shutdown()


def test_a_lesson_names_b_by_part_of_its_name_and_b_copies_the_rest(panel):
    panel.restore(
        {"device": GTX.key, "grid": "98", "block": "1024", "n": "100000", "compare": 1, "b_device": "h100"}
    )
    assert panel.session.compare and panel.session.edited == 0
    a, b = _plans(panel)
    assert b.device_name == H100.name and b.config == a.config
    panel.restore({"device": GTX.key, "grid": "98", "block": "1024", "compare": 1, "b_block": "bad"})
    a, b = _plans(panel)
    assert b.config == a.config  # a B launch that does not parse: a copy of A


def test_keys_move_both_sides_in_the_window(window, qtbot):
    panel = _panel(window, qtbot)
    panel.session.set_compare(True)
    bar = window.tabs.tabBar()
    bar.setFocus()
    qtbot.keyClick(bar, Qt.Key.Key_Right)
    a, b = _anims(panel)
    for anim in (a, b):
        f = anim.frame()
        assert f.wave == 0 and f.dispatched == f.blocks_in_wave == 16
    qtbot.keyClick(bar, Qt.Key.Key_Space)
    assert a.playing and b.playing and panel.frame_clock.running
    qtbot.keyClick(bar, Qt.Key.Key_Space)
    assert not a.playing and not b.playing and not panel.frame_clock.running
    panel.session.show_moment(1 + DISPATCH + RUN * 0.5)
    assert a.frame().label == b.frame().label == "wave 2 of 7"


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
    plans = _plans(panel)
    assert prefs.save(first.current_prefs())
    first.close()

    second = open_window(prefs.load())
    panel = second.current_panel()
    assert panel.session.compare and panel.session.edited == 1 and panel.sm_view.compare_box.isVisible()
    assert _plans(panel) == plans
    assert panel.controls.device().key == H100.key and panel.controls.regs_spin.value() == 64
    second.close()


def test_run_it_for_real_runs_the_side_being_edited(panel, monkeypatch):
    started = []
    monkeypatch.setattr(panel.realrun_view, "start", lambda *args: started.append(args))
    _b_on_h100(panel)
    panel.controls.grid_spins[0].setValue(40)  # B: 40 blocks
    panel.realrun_view.button.click()
    assert started[-1] == (LaunchConfig(Dim3(40), Dim3(1024), n=100000), None, None)
    panel.session.select_side(0)
    panel.realrun_view.button.click()
    assert started[-1] == (LaunchConfig(Dim3(98), Dim3(1024), n=100000), None, None)


def test_the_summary_tooltip_gives_both_sides_readings(panel):
    _b_on_h100(panel)
    label = panel.sm_view.summary_label
    tip = label.toolTip()
    assert tip.startswith(f"A: {GTX.name}\n") and f"\n\nB: {H100.name}\n" in tip
    assert "waves: 7;" in tip and "waves: 1;" in tip
    panel.session.set_compare(False)
    assert not label.toolTip().startswith("A: ") and "waves: 7;" in label.toolTip()


def test_a_short_pane_scrolls_rather_than_squeeze_132_sms_into_a_strip(panel, qtbot):
    _b_on_h100(panel)
    pane_b = panel.sm_view.pane_b
    panel.resize(900, 420)  # little height for two panes and the table
    qtbot.waitUntil(lambda: pane_b.scroll_area.height() < 200, timeout=2000)
    grid = pane_b.grid
    need = grid.height_for_width(
        pane_b.scroll_area.width() - pane_b.scroll_area.verticalScrollBar().sizeHint().width()
    )
    assert need > pane_b.scroll_area.height()
    qtbot.waitUntil(lambda: grid.minimumHeight() == need, timeout=2000)
    lay = grid.layout_now()
    assert lay.cols > 1 and lay.cell_h >= lay.label_h + lay.bar_h + lay.pad  # cells with room for blocks
    panel.resize(1280, 800)  # room again: no scrolling
    qtbot.waitUntil(lambda: grid.minimumHeight() < need, timeout=2000)


def test_the_pointer_over_b_describes_bs_thread_and_a_click_pins_it(panel, qtbot):
    _b_on_h100(panel)
    panel.controls.grid_spins[0].setValue(40)  # B: 40 blocks on the H100, one per SM
    panel.session.step_wave(1)
    grid = panel.sm_view.pane_b.grid
    settle()  # the panes and the table settle their sizes
    point = grid.slot_center(7, 0)
    assert grid.hit_at(point.x(), point.y()).sm == 7
    qtbot.mouseMove(grid, point)
    qtbot.mouseMove(grid, point + QPoint(1, 0))  # offscreen, the first move only places the pointer
    qtbot.waitUntil(lambda: "(7, 0, 0)" in panel.inspector.label.text(), timeout=2000)  # blockIdx 7
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=point)
    selection = panel.session.selection
    assert selection.side == 1 and selection.block == 7 and grid.selected == selection.thread


def test_choosing_the_other_side_keeps_the_pinned_thread_marked_and_inspected(panel):
    _b_on_h100(panel)
    panel.session.step_wave(1)
    panel.session.click(1, Hit(sm=5, slot=0, warp=0, lane=3))
    pinned = panel.session.selection
    text = panel.inspector.label.text()
    panel.sm_view.pane_a.button.click()  # the form now edits A; B's thread stays pinned
    assert panel.session.edited == 0 and panel.session.selection == pinned
    assert panel.sm_view.pane_b.grid.selected == pinned.thread and panel.sm_view.pane_a.grid.selected is None
    assert panel.inspector.label.text() == text
