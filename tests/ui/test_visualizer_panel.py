"""The Launch visualizer panel driven like a teacher would: presets, typing, stepping, clicking."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery
from explorer.launch.animation import DISPATCH, RUN, SPEEDS_WAVES_PER_S
from explorer.launch.config import Dim3
from explorer.launch.presets import PRESETS
from explorer.launch.session import Hit
from explorer.ui.context import AppContext
from explorer.ui.settle import settle
from explorer.ui.theme import px
from explorer.ui.visualizer.panel import VisualizerPanel
from explorer.ui.visualizer.sm_view import CANNOT_RUN
from tests.processes import gone


@pytest.fixture
def panel(visualizer_panel):
    return visualizer_panel


def _preset(name_part: str):
    return next(p for p in PRESETS if name_part in p.name)


def test_starts_on_the_gtx_1650_vector_add_lesson(panel):
    assert "GTX 1650" in panel.controls.device_combo.currentText()
    assert "catalog" in panel.controls.device_combo.currentText()
    text = panel.sm_view.summary_label.text()
    assert "98 blocks" in text and "7 waves" in text and "352 idle threads" in text
    assert panel.sm_view.wave_bar.frame.label == "wave 1 of 7"
    assert panel.sm_view.wave_bar.frame.queued == 98


def test_5466_preset_shows_6_blocks_and_678_idle_threads(panel):
    panel.controls.apply_preset(_preset("5466"))
    text = panel.sm_view.summary_label.text()
    assert "6 blocks" in text and "678 idle threads" in text and "1 wave" in text


def test_typed_configuration_updates_the_numbers(panel):
    panel.controls.block_spins[0].setValue(256)
    panel.controls.grid_spins[0].setValue(391)
    text = panel.sm_view.summary_label.text()
    # 1650 (Turing): 1024 threads per SM -> 4 blocks of 256 per SM x 16 SMs = 64 at once
    assert "391 blocks" in text and "64 at once" in text and "7 waves" in text


def test_invalid_launch_animates_nothing_and_the_summary_says_why(panel, qtbot):
    """The "Too big" preset must not leave the previous launch described and playable."""
    panel.controls.apply_preset(_preset("2048"))
    err = panel.controls.error_label
    assert err.isVisible()
    assert "2048" in err.text() and "1024" in err.text()
    summary = panel.sm_view.summary_label.text()
    assert "cannot run" in summary and "block has 2048 threads" in summary
    assert "98 blocks" not in summary and "waves" not in summary
    assert panel.session.sides[0].plan is None and panel.session.clock is None
    assert panel.sm_view.grid.animation is None and panel.sm_view.grid.empty_text == CANNOT_RUN
    assert panel.sm_view.wave_bar.frame is None
    assert "No occupancy" in panel.occupancy_view.numbers.text()
    assert not panel.playback.play_button.isEnabled() and not panel.realrun_view.button.isEnabled()
    panel.sm_view.grid.setFocus()
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Space)
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Right)
    assert not panel.frame_clock.running and panel.session.clock is None
    # fixing the value clears the message and brings the launch back, playable
    panel.controls.block_spins[0].setValue(1024)
    assert not err.isVisible()
    assert panel.session.sides[0].plan is not None and "cannot run" not in panel.sm_view.summary_label.text()
    assert panel.playback.play_button.isEnabled()
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Space)
    assert panel.frame_clock.running


def test_right_arrow_lands_on_the_next_wave_full_and_shift_right_on_the_next_block(panel, qtbot):
    """Stepping wave by wave shows every wave full, through the keys and the buttons a teacher uses."""
    panel.sm_view.grid.setFocus()
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Right)
    f = panel.sm_view.wave_bar.frame
    assert f.label == "wave 1 of 7" and f.dispatched == 16 and f.queued == 82
    panel.playback.wave_button.click()
    f = panel.sm_view.wave_bar.frame
    assert f.label == "wave 2 of 7" and f.dispatched == 16
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    f = panel.sm_view.wave_bar.frame
    assert f.label == "wave 3 of 7" and f.dispatched == 1
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Left)
    f = panel.sm_view.wave_bar.frame
    assert f.label == "wave 2 of 7" and f.dispatched == 16
    panel.playback.back_block_button.click()
    assert panel.sm_view.wave_bar.frame.dispatched == 15


def test_play_moves_the_clock_and_space_pauses(panel, qtbot):
    panel.session.set_speed(len(SPEEDS_WAVES_PER_S) - 1)
    panel.sm_view.grid.setFocus()
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Space)
    assert panel.frame_clock.running
    qtbot.waitUntil(lambda: panel.session.animation(0).frame().wave >= 1, timeout=3000)
    qtbot.keyClick(panel.sm_view.grid, Qt.Key.Key_Space)
    assert not panel.frame_clock.running and not panel.session.playing


def test_clicking_a_lane_shows_its_index_formula(panel, qtbot):
    panel.session.show_moment(1 + DISPATCH + RUN / 2)  # wave 2 running: blocks 16..31 on SMs 0..15
    pos = panel.sm_view.grid.slot_center(sm=1, slot=0, warp=0, lane=17)
    qtbot.mouseClick(panel.sm_view.grid, Qt.MouseButton.LeftButton, pos=pos)
    text = panel.inspector.label.text()
    assert "blockIdx.x * blockDim.x + threadIdx.x = 17 * 1024 + 17 = 17425" in text
    assert "SM 1, wave 2" in text
    assert panel.sm_view.grid.selected == (17, 0, 17)


def test_hover_over_an_idle_lane_says_idle(panel, qtbot):
    panel.controls.apply_preset(_preset("5466"))
    panel.session.show_moment(DISPATCH + RUN / 2)
    settle()  # the new summary's wrapped lines settle before the pointer aims
    # block 5 is on SM 5; its warp 31 holds threads past 5466
    pos = panel.sm_view.grid.slot_center(sm=5, slot=0, warp=31, lane=0)
    qtbot.mouseMove(panel.sm_view.grid, pos)
    qtbot.mouseMove(panel.sm_view.grid, pos + pos.__class__(1, 0))
    text = panel.inspector.label.text()
    assert "idle" in text and "5 * 1024 + 992 = 6112" in text


def test_3d_preset_formula_has_the_z_terms(panel):
    panel.controls.apply_preset(_preset("3D"))
    # 13^3 blocks of 8x8x8 over a 100^3 volume: 104^3 - 100^3 threads outside it
    assert "2,197 blocks" in panel.sm_view.summary_label.text()
    assert f"{104**3 - 100**3:,} idle threads" in panel.sm_view.summary_label.text()
    panel.session.select_thread(300, 0, 3)
    assert "blockIdx.z" in panel.inspector.label.text()


def test_occupancy_text_and_graph_marker_follow_the_registers(panel):
    panel.controls.block_spins[0].setValue(256)
    assert "100% theoretical occupancy" in panel.occupancy_view.numbers.text()
    panel.controls.regs_spin.setValue(128)
    occ_text = panel.occupancy_view.numbers.text()
    assert "50% theoretical occupancy" in occ_text and "registers" in occ_text
    assert "register" in panel.occupancy_view.explain.text()
    sweep = panel.occupancy_view.sweeps["regs_per_thread"]
    assert sweep.current_x == 128 and sweep.current_occupancy == pytest.approx(0.5)


def test_h100_with_a_huge_grid_draws_without_one_item_per_block(panel):
    panel.controls.select_device("h100-sxm5")
    panel.controls.apply_preset(_preset("100000"))
    panel.controls.block_spins[0].setValue(256)
    panel.controls.grid_spins[0].setValue(2**31 - 1)
    assert "2,147,483,647 blocks" in panel.sm_view.summary_label.text()
    panel.session.show_moment(3 + DISPATCH + RUN / 2)
    image = panel.sm_view.grid.grab()
    assert not image.isNull()
    assert len(panel.session.animation(0).resident()) == 132 * 8
    # wave 4 lies wholly past N = 100000: its 1056 blocks are one run of idle blocks, drawn from one
    # cached tile and one cached SM picture (plus the pair for full blocks), never block by block
    runs = panel.session.animation(0).idle_blocks().runs
    assert len(runs) == 1 and runs[0].stop - runs[0].start == 132 * 8
    assert panel.sm_view.grid.cached_pictures <= 4


def test_prepare_screenshot_is_mid_animation_on_the_lesson(panel):
    panel.prepare_screenshot()
    f = panel.sm_view.wave_bar.frame
    assert f.label == "wave 2 of 7" and f.phase == "run"
    assert "blockIdx.x * blockDim.x + threadIdx.x = 17 * 1024 + 17 = 17425" in panel.inspector.label.text()


@pytest.mark.slow
def test_simulator_real_run_colours_every_element_by_its_block(panel, qtbot):
    panel.controls.apply_preset(_preset("5466"))
    with qtbot.waitSignal(panel.realrun_view.finished, timeout=120_000) as blocker:
        panel.realrun_view.button.click()
    result = blocker.args[0]
    assert not isinstance(result, str), result
    assert result.backend == "simulator" and result.n == 5466
    assert result.untouched == 0 and result.written_twice == 0
    assert result.mismatches(1024) == 0
    assert panel.realrun_view.strip.result is result
    assert "every element written exactly once" in panel.realrun_view.status.text()


def test_fits_a_1280x800_projector_with_every_control_readable(panel):
    """Nothing pushes the window past 1280 px, and every field shows its whole value."""
    assert panel.minimumSizeHint().width() <= 1280 - 12
    c = panel.controls
    c.grid_spins[0].setValue(1_234_567)
    c.grid_spins[1].setValue(65535)
    c.block_spins[0].setValue(1024)
    for spin in (*c.grid_spins, *c.block_spins, c.smem_spin, c.regs_spin):
        edit = spin.lineEdit()
        assert edit.fontMetrics().horizontalAdvance(edit.text()) <= edit.width(), spin.text()
    for combo in (c.device_combo, c.preset_combo):
        text_w = combo.fontMetrics().horizontalAdvance(combo.currentText())
        assert text_w <= combo.width() - 24, combo.currentText()  # the arrow takes about 20 px
    # the full device name stays one hover away
    assert "NVIDIA GeForce GTX 1650" in c.device_combo.toolTip()


def test_2d_image_preset_shows_idle_lanes_in_the_bottom_row_of_tiles(panel):
    panel.controls.apply_preset(_preset("2D image"))
    assert panel.controls.n_edit.text() == "1920,1080"
    assert "1,920 x 1,080 problem: <b>15,360 idle threads" in panel.sm_view.summary_label.text()
    plan = panel.session.sides[0].plan
    bottom = plan.block_linear(Dim3(0, 67, 0))
    wave = plan.placement(bottom).wave
    panel.session.show_moment(wave + DISPATCH + RUN / 2)
    panel.sm_view.grid.grab()
    idle = dict(panel.session.animation(0).idle_blocks().blocks())
    assert idle[bottom] == (32, 32, 32, 32, 0, 0, 0, 0)
    # the inspector names the pixel and says it is below the image
    sm, slot = plan.placement(bottom).sm, plan.placement(bottom).slot
    panel.session.click(0, Hit(sm, slot, 5, 3))
    text = panel.inspector.label.text()
    assert "idle" in text and "(3, 1082) is outside the 1920 x 1080 problem" in text


def test_2d_extent_typed_badly_is_one_inline_line_and_the_summary_says_why(panel):
    panel.controls.n_edit.setText("1920,ten")
    panel.controls.n_edit.editingFinished.emit()
    assert panel.session.sides[0].plan is None
    message = "problem size y is 'ten'; it must be a whole number"
    assert message in panel.controls.error_label.text()
    assert message in panel.sm_view.summary_label.text().replace("&#x27;", "'")


def _words(rich: str) -> str:
    """What a reader sees in a rich-text label: tags dropped, entities decoded."""
    import html
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", rich))


def test_2d_inspector_shows_per_axis_position_and_the_row_major_index(panel, qtbot):
    """An image kernel's x, y and y * width + x, and the linear number named as such."""
    panel.controls.apply_preset(_preset("2D image"))
    plan = panel.session.sides[0].plan
    block = plan.block_linear(Dim3(48, 2, 0))
    warp, lane = divmod(plan.thread_linear(Dim3(4, 5, 0)), 32)
    place = plan.placement(block)
    panel.session.show_moment(place.wave + DISPATCH + RUN / 2)
    pos = panel.sm_view.grid.slot_center(sm=place.sm, slot=place.slot, warp=warp, lane=lane)
    qtbot.mouseClick(panel.sm_view.grid, Qt.MouseButton.LeftButton, pos=pos)
    assert panel.sm_view.grid.selected == (block, warp, lane)
    text = _words(panel.inspector.label.text())
    assert "x = blockIdx.x * blockDim.x + threadIdx.x = 48 * 16 + 4 = 772" in text
    assert "y = blockIdx.y * blockDim.y + threadIdx.y = 2 * 16 + 5 = 37" in text
    assert "index = y * width + x = 37 * 1920 + 772 = 71812" in text
    assert "works on element (772, 37) of 1920 x 1080, index 71812" in text
    assert "linear thread number" in text and "= 288 * 256 + 84 = 73812" in text
    assert "Global index" not in text


def test_cli_and_window_show_the_same_words(panel, capsys, monkeypatch):
    """The summary, the occupancy headline, the GPU fill and a thread's description are made once."""
    from explorer import cli
    from explorer.devices import find

    panel.controls.apply_preset(_preset("2D image"))
    device = panel.controls.device()
    monkeypatch.setattr(find, "find_device", lambda query, discovery=None: device)
    argv = ["launch", "--device", "x", "--grid", "120,68", "--block", "16,16", "--n", "1920,1080"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    summary = _words(panel.sm_view.summary_label.text())
    assert "15,360 idle threads" in summary and summary in out
    assert _words(panel.occupancy_view.numbers.text()) in out
    assert _words(panel.occupancy_view.fill.text()) in out
    assert cli.main([*argv, "--thread", "48,2,0:4,5,0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    plan = panel.session.sides[0].plan
    panel.session.select_thread(
        plan.block_linear(Dim3(48, 2, 0)), *divmod(plan.thread_linear(Dim3(4, 5, 0)), 32)
    )
    shown = _words(panel.inspector.label.text())
    for line in lines:  # "label: value" lines; every value is in the inspector word for word
        value = line.strip() if line.startswith(" ") else line.split(": ", 1)[1].strip()
        assert value in shown, line


def test_one_small_block_is_100_percent_theoretical_and_a_sliver_of_the_gpu(panel):
    """A single 33-thread block must not read as a full GPU."""
    c = panel.controls
    c.grid_spins[0].setValue(1)
    c.block_spins[0].setValue(33)
    c.n_edit.setText("")
    c.n_edit.editingFinished.emit()
    numbers = _words(panel.occupancy_view.numbers.text())
    fill = _words(panel.occupancy_view.fill.text())
    assert "100% theoretical occupancy" in numbers
    assert "2 of the GPU's 512 warp slots (0.4%)" in fill
    assert "only 1 of 16 SMs gets a block" in fill
    assert "0% means a block with that value cannot launch" in panel.occupancy_view.graph_note.text()


def test_shared_memory_opt_in_is_said_where_occupancy_is_shown(panel):
    """The note `occupancy --smem 100000` prints, in the window."""
    panel.controls.select_device("h100-sxm5")
    panel.controls.block_spins[0].setValue(128)
    panel.controls.smem_spin.setValue(100_000)
    note = panel.occupancy_view.notes
    assert note.isVisible()
    text = note.text().replace("\u200b", "")  # the label may break the long name between its words
    assert "must opt in with cudaFuncSetAttribute" in text and "100000" in text
    panel.controls.smem_spin.setValue(0)
    assert note.isHidden()


@pytest.mark.slow
def test_the_100000_lesson_runs_for_real_without_a_gpu_as_a_labelled_emulation(panel, qtbot):
    """The no-GPU path is fast enough for class and says what it is."""
    with qtbot.waitSignal(panel.realrun_view.finished, timeout=120_000) as blocker:
        panel.realrun_view.button.click()
        assert panel.realrun_view.button.text() == "Stop"
        assert "compiled CPU emulation" in panel.realrun_view.status.text()
    result = blocker.args[0]
    assert not isinstance(result, str), result
    assert result.backend == "emulation" and result.n == 100_000 and result.mismatches(1024) == 0
    status = panel.realrun_view.status.text()
    assert "compiled CPU emulation of the kernel" in status and "every element written exactly once" in status
    qtbot.waitUntil(lambda: panel.realrun_view.button.text() == "Run it for real", timeout=5000)
    # a changed launch clears the strip: it showed the old N
    panel.controls.apply_preset(_preset("5466"))
    assert panel.realrun_view.strip.result is None
    assert "run it again" in panel.realrun_view.status.text()


@pytest.mark.slow
def test_a_changed_form_stops_the_run_under_way(panel, qtbot):
    view = panel.realrun_view
    with qtbot.waitSignal(view.finished, timeout=120_000) as blocker:
        view.button.click()
        qtbot.waitUntil(lambda: view.process is not None, timeout=30_000)
        proc = view.process
        panel.controls.regs_spin.setValue(64)  # the launch changed
    assert isinstance(blocker.args[0], str) and "launch changed" in blocker.args[0]
    assert proc.pid is None or gone(proc.pid)  # the child was ended (or never started), not left running
    assert view.strip.result is None and "launch changed" in view.status.text()
    qtbot.waitUntil(lambda: not view.running, timeout=5000)


@pytest.mark.slow
def test_stop_ends_the_run_and_a_refused_run_clears_the_old_strip(panel, qtbot):
    view = panel.realrun_view
    panel.controls.apply_preset(_preset("5466"))
    with qtbot.waitSignal(view.finished, timeout=120_000):
        view.button.click()
        qtbot.waitUntil(lambda: view.process is not None, timeout=30_000)
        view.button.click()  # Stop
    assert "Stopped" in view.status.text()
    qtbot.waitUntil(lambda: not view.running, timeout=5000)
    with qtbot.waitSignal(view.finished, timeout=120_000):
        view.button.click()
    assert view.strip.result is not None
    qtbot.waitUntil(lambda: not view.running, timeout=5000)
    panel.controls.grid_spins[0].setValue(20_000)
    panel.controls.n_edit.setText("20000000")  # more elements than the emulation keeps
    panel.controls.n_edit.editingFinished.emit()
    with qtbot.waitSignal(view.finished, timeout=5000) as blocker:
        view.button.click()
    assert "N is 20,000,000; the CPU emulation keeps at most 16,777,216 elements" == blocker.args[0]
    assert view.strip.result is None


@pytest.mark.slow
def test_a_2d_real_run_is_drawn_as_the_image_it_wrote(panel, qtbot):
    """Grid 4x4, block 16x16, size 60,60 is a 60 x 60 image, not a 4,096-element strip."""
    c = panel.controls
    c.grid_spins[0].setValue(4)
    c.grid_spins[1].setValue(4)
    c.block_spins[0].setValue(16)
    c.block_spins[1].setValue(16)
    c.n_edit.setText("60,60")
    c.n_edit.editingFinished.emit()
    with qtbot.waitSignal(panel.realrun_view.finished, timeout=120_000) as blocker:
        panel.realrun_view.button.click()
    result = blocker.args[0]
    assert not isinstance(result, str), result
    assert result.extent == (60, 60, 1) and result.n == 3600 and result.mismatches(256) == 0
    strip = panel.realrun_view.strip
    words = QFontMetrics(strip.font_now()).height() + 8
    assert strip.height() == px(220) + words  # the image's room and its line of words, not the strip's
    image = strip.picture(200, 200)
    assert (image.width(), image.height()) == (60, 60)  # one pixel per element
    top_left, next_tile = image.pixelColor(0, 0), image.pixelColor(16, 0)
    assert top_left != next_tile and image.pixelColor(15, 15) == top_left
    assert "60 x 60 problem" in panel.realrun_view.status.text()


@pytest.mark.parametrize(
    "device,grid,share",
    [("1650", 98, "12.5%"), ("h100-sxm", 265, "0.4%")],  # 2 of 16 slots; 1 of 132 x 2 slots
)
def test_the_tail_wave_share_reads_as_in_the_cli(panel, capsys, device, grid, share):
    """The tail showed "(0%)" where the CLI said 0.4%, and "12%" for 12.5%: the window
    and ``device-explorer launch`` write the share with one rule (explorer/launch/texts.py)."""
    from explorer.cli import main

    panel.controls.select_device(device)
    panel.controls.apply_preset(_preset("100000"))
    panel.controls.grid_spins[0].setValue(grid)
    while panel.session.animation(0).frame().wave < panel.session.sides[0].plan.waves - 1:
        panel.session.step_wave(1)
    assert f"block slots busy ({share}), the rest of the GPU idles" in panel.sm_view.wave_bar.tail_text
    assert main(["launch", "--device", device, "--grid", str(grid), "--block", "1024"]) == 0
    assert f"({share} of the GPU's block slots)" in capsys.readouterr().out


def _idle_share_per_row(panel, block_idx: tuple[int, int, int]):
    """The tile of the block at ``block_idx`` as drawn now: its idle-coloured pixels per row."""
    from explorer.ui.visualizer import palette

    plan = panel.session.sides[0].plan
    g = plan.config.grid
    block = block_idx[0] + g.x * (block_idx[1] + g.y * block_idx[2])
    while not (
        panel.session.animation(0).fill()
        and block
        < panel.session.animation(0).fill().first_block + panel.session.animation(0).fill().dispatched
    ):
        panel.session.step_wave(1)
    idle_runs = panel.session.animation(0).idle_blocks()
    offset = block - idle_runs.first_block
    run = next(r for r in idle_runs.runs if r.start <= offset < r.stop)
    lay = panel.sm_view.grid.layout_now()
    image = panel.sm_view.grid.block_tile(lay, True, (run.busy_lanes, run.busy_masks)).toImage()
    idle = palette.IDLE_LANE.rgb()
    rows = [[image.pixel(x, y) == idle for x in range(image.width())] for y in range(image.height())]
    return lay.lod, rows


def _stretches(row: list[bool]) -> int:
    return sum(1 for i, v in enumerate(row) if v and (i == 0 or not row[i - 1]))


@pytest.mark.parametrize("device,lod", [("1650", "warps"), ("h100-sxm", "blocks")])
def test_3d_idle_lanes_are_drawn_where_they_are_not_as_one_slab(panel, device, lod):
    """At normal zoom a 3D block's idle lanes were one solid block. Block (12, y, z) of
    the 100^3 volume in 8x8x8 blocks idles lanes 4-7, 12-15, 20-23, 28-31 of every warp (x >= 100):
    stripes across the tile. Block (x, 12, z) idles every other warp: half idle, top to bottom."""
    panel.controls.select_device(device)
    panel.controls.apply_preset(_preset("3D volume"))
    panel.session.pause()
    got_lod, rows = _idle_share_per_row(panel, (12, 3, 0))
    assert got_lod == lod
    middle = rows[len(rows) // 2]
    assert _stretches(middle) >= 3, middle  # stripes, not one slab on the right
    assert 0.3 <= sum(middle) / len(middle) <= 0.7
    _, rows = _idle_share_per_row(panel, (3, 12, 0))
    share = sum(map(sum, rows)) / sum(map(len, rows))
    assert 0.3 <= share <= 0.7
    if lod == "blocks":  # rows cover two or three warps: no row all busy, none all idle
        assert all(any(r) and not all(r) for r in rows), rows


def test_the_play_button_stays_put_whatever_the_caption(panel, qapp):
    """The Play button moved when the preset's lesson caption wrapped to more lines."""
    where = set()
    for preset in PRESETS:
        panel.controls.apply_preset(preset)
        for _ in range(3):
            qapp.processEvents()
        where.add(
            panel.playback.play_button.mapTo(panel, panel.playback.play_button.rect().topLeft()).toTuple()
        )
    assert len(where) == 1, where


def test_device_names_are_matched_as_the_cli_matches_them(qtbot):
    """The visualizer did its own substring matching: "gtx-1650" found nothing, "1650" took the
    catalog sheet over the GPU in the machine. It follows explorer/devices/names.py now."""
    from explorer.devices.model import CudaGpu

    gpu = CudaGpu(
        name="NVIDIA GeForce GTX 1650", key="cuda:0", index=0, compute_capability=(7, 5), sm_count=14
    )
    ctx = AppContext(Discovery(devices=[*load_catalog(), gpu], reports=[]))
    p = VisualizerPanel(ctx)
    qtbot.addWidget(p)
    c = p.controls
    assert c.select_device("h100") and c.device().key == "catalog:h100-sxm5"
    assert c.select_device("1650") and c.device().key == "cuda:0"  # the one here, not the sheet
    assert c.select_device("gtx-1650-laptop") and c.device().key == "catalog:gtx-1650-laptop"
    assert c.select_device("GTX-1650") and c.device().key == "cuda:0"
    assert not c.select_device("rtx") and c.device().key == "cuda:0"  # several: nothing changes
    assert not c.select_device("no such gpu")
    p.shutdown()


def test_a_device_list_refresh_mid_animation_keeps_the_moment_and_the_thread(panel):
    """Discovery finishing, or a remote machine's listing coming in, lists the devices again; the
    launch shown is the same, so the class keeps its place in it."""
    panel.session.step_wave(1)
    panel.session.step_wave(1)
    panel.session.select_thread(17, 0, 17)
    label = panel.sm_view.wave_bar.frame.label
    panel.context.set_discovery(panel.context.discovery)
    assert panel.sm_view.wave_bar.frame.label == label == "wave 2 of 7"
    assert panel.session.selection.thread == (17, 0, 17) and panel.sm_view.grid.selected == (17, 0, 17)
