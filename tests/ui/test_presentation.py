"""Presentation mode and the one text-size control: View > Text size (Ctrl+= / Ctrl+- / Ctrl+0,
100 % to 250 %), full screen with its own remembered size, and ``screenshot --scale``."""

from __future__ import annotations

from argparse import Namespace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel

from explorer.cli import main as cli_main
from explorer.commands.gui import parse_scale, run_screenshot
from explorer.devices.discovery import Discovery
from explorer.errors import UserError
from explorer.prefs import Prefs
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.theme import BASE_FONT_PT, fitting_text_scale, readable_px, text_scale_pct


@pytest.fixture
def window(qtbot, qapp, no_gpu_discovery, fake_nvml, fake_clock, fake_timer):
    from explorer.devices.catalog import load_catalog

    discovery = Discovery(
        devices=[*no_gpu_discovery.devices, *load_catalog()], reports=no_gpu_discovery.reports
    )
    w = MainWindow(
        AppContext(discovery),
        discover_on_show=False,
        devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
    )
    qtbot.addWidget(w)
    w.resize(1024, 768)
    w.show()
    yield w
    w.close()
    w.apply_text_scale(100)


def _action(window, words):
    for action in window.findChildren(type(window.presentation_action)):
        if action.text().replace("&", "").startswith(words):
            return action
    raise AssertionError(f"no action {words!r}")


def test_text_size_keys_change_the_whole_window(window, qapp):
    larger, smaller, actual = (_action(window, w) for w in ("Larger", "Smaller", "Actual size"))
    assert QKeySequence("Ctrl+=") in larger.shortcuts()
    assert smaller.shortcut() == QKeySequence("Ctrl+-")
    assert actual.shortcut() == QKeySequence("Ctrl+0")

    def sizes():
        return {
            w.text(): w.fontInfo().pixelSize()
            for w in window.devices_panel.findChildren(QLabel)
            if w.isVisibleTo(window) and w.text()
        }

    before = sizes()
    larger.trigger()
    larger.trigger()
    assert text_scale_pct() == 150
    assert QApplication.font().pointSizeF() == pytest.approx(BASE_FONT_PT * 1.5)
    qapp.processEvents()
    after = sizes()
    # every label of a page grows, not only the application font
    assert len(before) > 10 and set(after) >= set(before)
    assert {t: after[t] for t in before if after[t] < before[t] * 1.4} == {}
    assert window.text_size_control.value.text() == "Text 150%"
    for _ in range(10):
        larger.trigger()
    assert text_scale_pct() == 250  # the top of the range, not past it
    assert not window.text_size_control.larger.isEnabled()
    actual.trigger()
    assert text_scale_pct() == 100
    smaller.trigger()
    assert text_scale_pct() == 100


def test_ctrl_equals_is_not_taken_by_the_visualizer(window, qtbot):
    """The visualizer's zoom once used Ctrl+= too: an ambiguous key does nothing at all."""
    window.show_panel("visualizer")
    grid = window.panels["visualizer"].sm_view.grid
    grid.setFocus()
    qtbot.keyClick(grid, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert text_scale_pct() == 125


def _screen() -> tuple[int, int]:
    size = QApplication.primaryScreen().geometry().size()
    return size.width(), size.height()


def test_presentation_mode_is_full_screen_with_its_own_text_size(window, qtbot):
    """The projector's default (150%) where the screen holds it, else the most it holds (this
    test's offscreen screen is 800x800: 125%); a size chosen there is kept for that screen size."""
    holds = fitting_text_scale(*_screen())
    window.apply_text_scale(100)
    window.set_presentation(True)
    assert window.isFullScreen() and not window.menuBar().isVisible()
    assert text_scale_pct() == min(150, holds)
    window.change_text_scale(1)
    chosen = min(150, holds) + 25
    assert text_scale_pct() == chosen  # the teacher may still go past what fits, by hand
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert not window.presenting and not window.isFullScreen() and window.menuBar().isVisible()
    assert text_scale_pct() == 100  # the laptop's size again
    prefs = window.current_prefs()
    key = "x".join(map(str, _screen()))
    assert (prefs.text_scale, prefs.presentation_text_scales) == (100, {key: chosen})
    window.presentation_action.trigger()
    assert window.presenting and text_scale_pct() == chosen
    window.presentation_action.trigger()
    assert not window.presenting


def test_a_projectors_text_size_is_not_carried_to_a_smaller_screen(window):
    """250% chosen on the 1920x1080 projector made lesson 02 on a 1024x768 one a 40 px
    strip. Each screen size keeps its own; a screen never seen before gets what it holds."""
    key = "x".join(map(str, _screen()))
    holds = fitting_text_scale(*_screen())
    window.apply_prefs(Prefs(presentation_text_scale=250, presentation_text_scales={"1920x1080": 250}))
    window.set_presentation(True)
    assert text_scale_pct() == min(250, holds) < 250
    window.set_presentation(False)
    window.apply_prefs(Prefs(presentation_text_scales={"1920x1080": 250, key: 100}))
    window.set_presentation(True)
    assert text_scale_pct() == 100  # this screen's own choice wins
    window.set_presentation(False)
    # the laptop's own size is never carried past what its screen holds either
    window.apply_prefs(Prefs(text_scale=250))
    assert text_scale_pct() == min(250, fitting_text_scale(*_screen()))


def test_the_text_size_a_screen_holds():
    """1024x768 holds 150%, 1280x800 200%, 1920x1080 and larger 250%: the sizes the render walk
    checks (tests/ui/test_render_walk.py); smaller screens less, and never under 100%."""
    assert fitting_text_scale(1024, 768) == 150
    assert fitting_text_scale(1280, 800) == 200
    assert fitting_text_scale(1920, 1080) == 250
    assert fitting_text_scale(3840, 2160) == 250
    assert fitting_text_scale(640, 480) == 100
    sizes = [(w, h) for w in range(640, 4000, 97) for h in range(480, 2400, 89)]
    for w, h in sizes:  # a larger screen never holds less
        assert fitting_text_scale(w, h) <= fitting_text_scale(w + 97, h) and fitting_text_scale(
            w, h
        ) <= fitting_text_scale(w, h + 89)


def test_text_sizes_come_back_from_prefs(window):
    holds = fitting_text_scale(*_screen())
    window.apply_prefs(Prefs(text_scale=125, presentation_text_scale=225))
    assert text_scale_pct() == 125
    window.set_presentation(True)
    assert text_scale_pct() == min(225, holds)
    window.set_presentation(False)
    assert Prefs.from_dict({"text_scale": 400, "presentation_text_scale": "big"}) == Prefs()
    assert Prefs.from_dict(Prefs(text_scale=175).to_dict()).text_scale == 175


@pytest.mark.parametrize("panel", ["devices", "visualizer"])
def test_screenshot_scale_renders_exactly_the_size_asked(qapp, tmp_path, capsys, panel):
    out = tmp_path / f"{panel}.png"
    assert run_screenshot(Namespace(panel=panel, out=str(out), size="1280x720", scale="150")) == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 720)
    assert "note:" not in capsys.readouterr().err
    QApplication.instance().setFont(QApplication.font())  # leave the app as other tests expect
    from explorer.ui.theme import apply_theme

    apply_theme(QApplication.instance(), "light", 100)


def test_screenshot_refuses_a_bad_scale_in_one_line(tmp_path, capsys):
    assert parse_scale("150%") == 150
    with pytest.raises(UserError, match="outside the supported range 100 to 250"):
        parse_scale("300")
    with pytest.raises(UserError, match="whole percentage"):
        parse_scale("big")
    assert cli_main(["screenshot", "--scale", "50", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--scale 50" in err


# --- room for the SM view and the plot ------------------------------------------------------------
def _shown(window, qapp, key, size, scale=100):
    window.apply_text_scale(scale)
    window.show_panel(key)
    window.resize(*size)
    for _ in range(4):
        qapp.processEvents()
    return window.panels[key]


def test_side_columns_fold_so_the_sm_view_keeps_its_room(window, qapp):
    from tests.ui.layout_check import clipped

    vis = _shown(window, qapp, "visualizer", (1024, 768))
    assert vis.left_side.is_open() and not vis.right_side.is_open()  # occupancy folds first
    assert vis.sm_view.grid.width() >= 300
    vis.right_side.handle.click()  # the teacher opens the occupancy column
    qapp.processEvents()
    assert vis.right_side.is_open() and not vis.left_side.is_open()  # the one not asked for folds
    assert window.width() == 1024 and clipped(window) == []
    vis.left_side.handle.click()
    qapp.processEvents()
    assert vis.left_side.is_open() and not vis.right_side.is_open()
    vis.left_side.handle.click()  # folded by hand: stays folded however wide the window gets
    window.resize(1920, 1080)
    qapp.processEvents()
    assert not vis.left_side.is_open() and vis.right_side.is_open()
    vis.left_side.handle.click()
    qapp.processEvents()
    assert vis.left_side.is_open() and vis.right_side.is_open()  # 1920 px hold all three


def test_bench_settings_fold_when_the_plot_would_get_too_little(window, qapp):
    bench = _shown(window, qapp, "benchmarks", (1280, 720), 150)
    assert not bench.settings_side.is_open()
    assert bench.plot.width() >= 700
    bench.settings_side.handle.click()  # opened by hand: stays open, the plot narrows
    qapp.processEvents()
    assert bench.settings_side.is_open() and window.width() == 1280
    window.apply_text_scale(100)
    window.resize(1024, 768)
    qapp.processEvents()
    assert bench.settings_side.is_open()


def test_sm_numbers_are_readable_on_an_h100(window, qapp):
    vis = _shown(window, qapp, "visualizer", (1024, 768))
    assert vis.controls.select_device("h100")
    qapp.processEvents()
    lay = vis.sm_view.grid.layout_now()
    assert lay.sm_count == 132
    font = vis.sm_view.grid.sm_label_font()
    assert font.pixelSize() >= readable_px()  # was 7 px: 19 columns of 18 px cells
    assert vis.sm_view.grid.sm_label_width(132) <= lay.cell_w  # "131" fits without shrinking
    assert vis.sm_view.grid.sm_labels(lay) in ("long", "short")


def test_blocks_carry_their_numbers_when_they_fit(window, qapp):
    vis = _shown(window, qapp, "visualizer", (1280, 800))
    vis.prepare_screenshot()  # GTX 1650, the 98-block lesson, mid wave 2
    qapp.processEvents()
    lay, fill = vis.sm_view.grid.layout_now(), vis.session.animation(0).fill()
    font, placed = vis.sm_view.grid.block_numbers(lay, fill)
    assert [words for _r, words in placed] == [str(b) for b in range(16, 32)]
    assert font.pixelSize() >= 10
    for (rect, _w), i in zip(placed, range(16), strict=True):
        x, y = lay.slot_origin(i, 0)
        assert rect.left() >= x and rect.right() <= x + lay.tile_w and rect.bottom() <= y + lay.tile_h
    # 2D grid: blockIdx, not the linear number
    vis.controls.grid_spins[0].setValue(8)
    vis.controls.grid_spins[1].setValue(4)
    vis.controls.block_spins[0].setValue(256)
    vis.session.show_moment(0.29)  # wave 1 nearly all landed
    qapp.processEvents()
    numbers = vis.sm_view.grid.block_numbers(vis.sm_view.grid.layout_now(), vis.session.animation(0).fill())
    assert numbers is not None and numbers[1][1][1] == "1,0"
    # an H100 full of 64-thread blocks: tiles too small for any number, so none at all
    vis.controls.select_device("h100")
    vis.controls.grid_spins[0].setValue(10000)
    vis.controls.grid_spins[1].setValue(1)
    vis.controls.block_spins[0].setValue(64)
    vis.session.show_moment(0.29)
    qapp.processEvents()
    assert (
        vis.sm_view.grid.block_numbers(vis.sm_view.grid.layout_now(), vis.session.animation(0).fill()) is None
    )


@pytest.mark.parametrize("scale", [100, 150, 250])
@pytest.mark.parametrize("width", [360, 420, 640, 900, 1400])
def test_wave_bar_texts_never_overlap_or_run_out(qtbot, width, scale, qapp):
    """'finished: all 7 wa...' was clipped under the queue count at every size. ``width`` is at
    100% text (360 is the least the visualizer gives the SM view) and grows with the text."""
    width = width * scale // 100
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFontMetrics

    from explorer.devices.catalog import catalog_device
    from explorer.devices.limits import limits_for_device
    from explorer.launch.animation import Animation
    from explorer.launch.config import parse_launch
    from explorer.launch.schedule import plan_launch
    from explorer.ui.theme import apply_theme
    from explorer.ui.visualizer.wavebar import WaveBar

    apply_theme(qapp, "light", scale)
    try:
        device = catalog_device("gtx-1650-laptop")
        plan = plan_launch(parse_launch("98", "1024", "0", "32", "100000"), device, limits_for_device(device))
        anim = Animation(plan)
        bar = WaveBar()
        qtbot.addWidget(bar)
        bar.resize(width, 100)
        bar.show()
        for t, tail in (
            (1.4, ""),
            (6.2, "tail wave: 2 of 16 block slots busy (12.5%), the rest of the GPU idles"),
            (7.0, ""),
        ):
            anim.seek(t)
            bar.set_frame(anim.frame(), tail)
            qapp.processEvents()
            pieces = bar.pieces()
            inside = QRectF(bar.rect())
            words = [p for p in pieces if p.text]
            assert {p.kind for p in words} >= {"label", "count", "phase"}
            for p in pieces:
                assert inside.contains(p.rect), (p, width, scale)
            for i, a in enumerate(pieces):
                for b in pieces[i + 1 :]:
                    assert not a.rect.intersects(b.rect), (a, b, width, scale)
            fonts = bar._fonts()
            for p in words:
                fm = QFontMetrics(fonts.big if p.kind == "label" else fonts.small)
                if p.kind == "phase":
                    need = fm.boundingRect(p.rect.toRect(), 0x1000, p.text)  # Qt::TextWordWrap
                    assert need.height() <= p.rect.height() + 1, (p, width, scale)
                else:
                    assert fm.horizontalAdvance(p.text) <= p.rect.width(), (p, width, scale)
    finally:
        apply_theme(qapp, "light", 100)


@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_sm_view_wave_bar_and_graphs_follow_the_theme(window, qapp, theme_name):
    """In the dark theme the SM view, the wave header and the graphs stayed white."""
    vis = _shown(window, qapp, "visualizer", (1920, 1080))
    vis.prepare_screenshot()
    window.set_theme(theme_name)
    qapp.processEvents()
    try:
        for widget in (vis.sm_view.grid, vis.sm_view.wave_bar, *vis.occupancy_view.plots.values()):
            image = widget.grab().toImage()
            corner = image.pixelColor(2, image.height() - 2)
            dark = corner.lightnessF() < 0.3
            assert dark == (theme_name == "dark"), (type(widget).__name__, corner.name())
    finally:
        window.set_theme("light")


def test_bench_plot_title_keeps_its_arrow_and_says_measuring_while_running(qtbot):
    from explorer.ui.bench.plot import BenchPlot

    plot = BenchPlot()
    qtbot.addWidget(plot)

    def title():
        return plot.main.getPlotItem().titleLabel.item.toPlainText()

    assert title().startswith("Press Start")
    plot.set_running(True)
    assert title().startswith("Measuring")
    plot.set_running(False)
    plot.set_titles("Host <-> device copies (pageable vs pinned)", "bytes")
    from explorer.bench.results import BenchPoint

    plot.set_points(
        [BenchPoint(workload="copies", variant="cpu", device="cpu", size=64, size_label="64", median_s=1e-3)]
    )
    assert title() == "Host <-> device copies (pageable vs pinned)"
