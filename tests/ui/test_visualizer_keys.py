"""The visualizer in the main window, driven from the keyboard and by editing.

Space and the arrows must answer whenever the tab is shown, wherever the focus went (the tab bar,
a button), except inside a text field being edited, which gives them back on Enter or Escape.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtWidgets import QApplication

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery
from explorer.launch.animation import DISPATCH, RUN
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.presets import PRESETS
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow


@pytest.fixture
def window(qtbot, fake_nvml, fake_clock, fake_timer):
    w = MainWindow(
        AppContext(Discovery(devices=load_catalog(), reports=[])),
        discover_on_show=False,
        panel="devices",
        devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
    )
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=3000)
    yield w
    w.close()


def open_catalog_window(qtbot, fakes, saved=None, panel="devices"):
    """A window over the catalog GPUs, 1280x800, with ``saved`` prefs applied as at a start."""
    nvml, clock, timer = fakes
    w = MainWindow(
        AppContext(Discovery(devices=load_catalog(), reports=[])),
        discover_on_show=False,
        panel=panel,
        devices_panel_options={"nvml": nvml, "clock": clock, "timer": timer},
    )
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    if saved is not None:
        w.apply_prefs(saved)
    return w


def _panel(window, qtbot):
    panel = window.show_panel("visualizer")
    qtbot.wait(20)  # the tab switch settles (its shortcuts join the window's) before a key can come
    return panel


def test_space_and_arrows_work_straight_after_switching_to_the_tab(window, qtbot):
    bar = window.tabs.tabBar()
    bar.setFocus()
    panel = _panel(window, qtbot)
    assert bar.hasFocus()  # the focus is outside the panel, as after clicking its tab
    qtbot.keyClick(bar, Qt.Key.Key_Right)
    assert panel.sm_view.wave_bar.frame.dispatched == 16  # wave 1, all its blocks placed
    assert window.current_panel() is panel  # the arrow stepped, it did not switch tabs
    qtbot.keyClick(bar, Qt.Key.Key_Space)
    assert panel.session.playing and panel.frame_clock.running
    qtbot.keyClick(bar, Qt.Key.Key_Space)
    assert not panel.session.playing
    play = panel.playback.play_button
    play.setFocus()  # a focused button does not swallow Space either
    qtbot.keyClick(play, Qt.Key.Key_Space)
    assert panel.session.playing
    panel.session.pause()


def test_keys_of_a_hidden_tab_do_nothing(window, qtbot):
    panel = _panel(window, qtbot)
    devices = window.show_panel("devices")
    devices.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    devices.setFocus()
    qtbot.wait(20)
    t = panel.session.moment
    qtbot.keyClick(devices, Qt.Key.Key_Right)
    qtbot.keyClick(devices, Qt.Key.Key_Space)
    assert window.current_panel() is devices
    assert panel.session.moment == t and not panel.session.playing


def test_space_straight_after_typing_takes_the_value_and_plays(window, qtbot):
    """Space did nothing while a just-typed field had the focus. No field of the form
    takes a space (numbers, and N's commas): Space takes what was typed, as Enter does, and plays."""
    panel = _panel(window, qtbot)
    edit = panel.controls.n_edit
    edit.setFocus()
    edit.clear()
    qtbot.keyClicks(edit, "5466")
    qtbot.keyClick(edit, Qt.Key.Key_Space)
    assert edit.text() == "5466" and panel.session.playing
    assert "5,466" in panel.sm_view.summary_label.text()
    panel.session.pause()
    grid = panel.controls.grid_spins[0]
    grid.setFocus()
    grid.selectAll()
    qtbot.keyClicks(grid, "6")
    qtbot.keyClick(grid, Qt.Key.Key_Space)
    assert grid.value() == 6 and panel.session.playing
    assert "6 blocks" in panel.sm_view.summary_label.text()
    panel.session.pause()


def test_escape_in_size_n_drops_the_typing_and_leaves_the_field(window, qtbot):
    panel = _panel(window, qtbot)
    edit = panel.controls.n_edit
    edit.setFocus()
    qtbot.keyClicks(edit, "999")
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert edit.text() == "100000" and not edit.hasFocus()
    assert "N = 100,000" in panel.sm_view.summary_label.text()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Right)
    assert panel.sm_view.wave_bar.frame.dispatched == 16


def test_enter_in_a_spin_box_applies_it_and_gives_the_keys_back(window, qtbot):
    panel = _panel(window, qtbot)
    spin = panel.controls.block_spins[0]
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "256")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not spin.hasFocus(), timeout=2000)
    assert spin.value() == 256 and "of 256 threads" in panel.sm_view.summary_label.text()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)
    assert panel.session.playing
    panel.session.pause()


def test_editing_a_preset_by_hand_drops_its_name_and_lesson(window, qtbot):
    """A preset edited by hand is no longer that preset: its name and its lesson caption go."""
    panel = _panel(window, qtbot)
    c = panel.controls
    c.apply_preset(PRESETS[1])
    assert c.preset_combo.currentText() == PRESETS[1].short_name
    assert c.lesson_label.text() == PRESETS[1].lesson and c.preset is PRESETS[1]
    c.grid_spins[0].setValue(7)
    assert c.preset is None and c.preset_combo.currentIndex() == 0
    assert c.lesson_label.text() == "" and not c.lesson_label.isVisible()
    c.apply_preset(PRESETS[2])
    assert c.preset_combo.currentText() == PRESETS[2].short_name
    c.select_device("h100")  # another device: still the same launch, the lesson stays
    assert c.preset is PRESETS[2] and c.lesson_label.text() == PRESETS[2].lesson
    c.n_edit.setText("1920, 1080")  # the same size typed differently is still the preset
    c.n_edit.editingFinished.emit()
    assert c.preset is PRESETS[2]
    c.n_edit.setText("1280,720")
    c.n_edit.editingFinished.emit()
    assert c.preset is None and c.lesson_label.text() == ""


def test_inspector_follows_the_animation_under_a_still_pointer(window, qtbot):
    """The inspector's "SM 14, block slot 0: empty now (wave 1 of 7)" must not stay up at wave 3."""
    panel = _panel(window, qtbot)
    grid = panel.sm_view.grid
    # the inspector's new text can reflow the page and move the SMs under a still pointer: aim
    # again until the slot stays where it was aimed at (in a full run another test may have left
    # the layout mid-settle)
    for _ in range(5):
        pos = grid.slot_center(sm=14, slot=0, warp=0, lane=3)
        qtbot.mouseMove(grid, pos)
        qtbot.mouseMove(grid, pos + QPoint(1, 0))
        qtbot.wait(30)
        if grid.slot_center(sm=14, slot=0, warp=0, lane=3) == pos:
            break
    qtbot.mouseMove(grid, pos)
    qtbot.mouseMove(grid, pos + QPoint(1, 0))
    assert "SM 14, block slot 0</b>: empty now (wave 1 of 7)" in panel.inspector.label.text()
    panel.session.show_moment(2 + DISPATCH + RUN / 2)  # wave 3 running: block 46 sits on SM 14
    text = panel.inspector.label.text()
    assert "empty now" not in text and "(46, 0, 0)" in text and "wave 3 of 7" in text
    # a pinned thread's "now" moves on too
    qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=pos + QPoint(1, 0))
    qtbot.mouseMove(grid, QPoint(grid.width() - 2, grid.height() - 2))
    QApplication.sendEvent(grid, QEvent(QEvent.Type.Leave))  # the pointer leaves the SMs
    assert "running on SM 14 (wave 3 of 7)" in panel.inspector.label.text()
    panel.session.step_wave(1)
    assert "has finished (wave 4 of 7)" in panel.inspector.label.text()


def test_launch_settings_come_back_after_a_restart(
    qtbot, monkeypatch, tmp_path, fake_nvml, fake_clock, fake_timer
):
    """Device, launch, speed and zoom, through the real settings file."""
    from explorer import prefs

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))

    def open_window(saved=None):
        return open_catalog_window(qtbot, (fake_nvml, fake_clock, fake_timer), saved)

    first = open_window()
    panel = _panel(first, qtbot)
    panel.controls.select_device("h100-sxm5")
    panel.controls.apply_preset(PRESETS[2])  # the 2D image
    panel.controls.block_spins[1].setValue(8)  # edited by hand: no preset any more
    panel.session.change_speed(1)
    panel.sm_view.zoom(1)
    assert prefs.save(first.current_prefs())
    first.close()

    second = open_window(prefs.load())
    assert second.current_panel_key() == "visualizer"
    panel = second.current_panel()
    qtbot.waitUntil(lambda: panel.sm_view.grid.minimumWidth() > 320, timeout=2000)  # zoomed in again
    c = panel.controls
    assert c.device().key.endswith("h100-sxm5") and "H100" in c.device_combo.currentText()
    assert c.launch() == LaunchConfig(Dim3(120, 68), Dim3(16, 8), 0, 32, extent=Dim3(1920, 1080))
    assert c.n_edit.text() == "1920,1080" and c.block_spins[1].value() == 8
    assert c.preset is None and c.preset_combo.currentIndex() == 0
    assert panel.session.speed_index == 3 and panel.session.animation(0).speed_index == 3
    assert panel.sm_view.zoom_index == 1
    assert "8,160 blocks</b> of 128 threads" in panel.sm_view.summary_label.text()  # 16 x 8 blocks
    second.close()

    # a remembered lesson preset comes back with its caption; a damaged launch is skipped
    saved = prefs.load()
    saved.pages["visualizer"].update(grid="98,1,1", block="1024,1,1", n="5466", preset="nonsense")
    third = open_window(saved)
    c = third.current_panel().controls
    assert c.launch().grid == Dim3(98) and c.preset is None
    third.close()
    saved.pages["visualizer"].update(grid="6,1,1", preset=PRESETS[1].short_name, speed=99, zoom=-1)
    saved.pages["visualizer"]["block"] = "lots"
    fourth = open_window(saved)
    p4 = fourth.current_panel()
    assert p4.controls.preset is PRESETS[0]  # the launch did not parse: the first lesson, as new
    assert p4.session.speed_index == 2 and p4.sm_view.zoom_index == 0  # out-of-range speed and zoom ignored
    fourth.close()
