"""The main window: its four areas, menus, background discovery, About, themes and screenshots."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
import threading
from argparse import Namespace
from importlib import metadata

import pytest
from PySide6.QtGui import QImage, QKeySequence, QPalette

from explorer.cli import main as cli_main
from explorer.commands.gui import run_screenshot
from explorer.errors import UserError
from explorer.ui.context import AppContext
from explorer.ui.main_window import PAGES, MainWindow, PageSpec, load_panel_class
from explorer.ui.theme import current_theme


@pytest.fixture
def make_window(qtbot, fake_nvml, fake_clock, fake_timer):
    made = []

    def make(discovery=None, **kwargs):
        kwargs.setdefault(
            "devices_panel_options", {"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer}
        )
        window = MainWindow(AppContext(discovery), **kwargs)
        qtbot.addWidget(window)
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()


def _menu(window, title):
    return next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == title)


def test_window_has_four_areas_menus_and_shortcuts(make_window, no_gpu_discovery):
    window = make_window(no_gpu_discovery, discover_on_show=False)
    window.show()
    assert window.windowTitle() == "Device Explorer"
    names = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert names == ["Devices", "Launch visualizer", "Benchmarks", "Memory and divergence"]
    assert [a.text().replace("&", "") for a in window.menuBar().actions()] == [
        "File",
        "View",
        "Lessons",
        "Help",
    ]
    lesson_items = [a.text().replace("&", "") for a in _menu(window, "Lessons").actions() if a.text()]
    assert lesson_items[:2] == ["Open lesson file…", "Built-in lessons"]
    assert {"Next step", "Previous step", "Save current state as a step", "Save lesson…"} <= set(lesson_items)
    file_items = [a.text().replace("&", "") for a in _menu(window, "File").actions() if a.text()]
    assert file_items == ["Export…", "Export handout…", "Quit"]
    view = {a.text().replace("&", ""): a for a in _menu(window, "View").actions() if a.text()}
    assert view["Devices"].shortcut() == QKeySequence("Ctrl+1")
    assert view["Launch visualizer"].shortcut() == QKeySequence("Ctrl+2")
    assert view["Benchmarks"].shortcut() == QKeySequence("Ctrl+3")
    assert view["Memory and divergence"].shortcut() == QKeySequence("Ctrl+4")
    assert {"Dark theme", "Refresh devices"} <= set(view)
    assert [a.text().replace("&", "") for a in _menu(window, "Help").actions()] == [
        "Keyboard shortcuts",
        "About Device Explorer",
    ]
    assert window.current_panel_key() == "devices"
    assert window.export_action.isEnabled()  # the Devices panel exports its JSON

    for key, action in (
        ("visualizer", view["Launch visualizer"]),
        ("benchmarks", view["Benchmarks"]),
        ("memory", view["Memory and divergence"]),
    ):
        action.trigger()
        assert window.current_panel_key() == key
        panel = window.panels[key]
        assert window.tabs.currentWidget().isAncestorOf(panel)
    view["Devices"].trigger()
    assert window.tabs.currentWidget().isAncestorOf(window.devices_panel)


def test_discovery_runs_in_the_background_after_the_window_paints(qtbot, make_window, no_gpu_discovery):
    release = threading.Event()
    calls = []

    def slow_discover(_update):
        calls.append(threading.current_thread() is threading.main_thread())
        release.wait(10)
        return no_gpu_discovery

    window = make_window(None, discover_fn=slow_discover)
    window.show()
    qtbot.waitUntil(lambda: bool(calls), timeout=5000)
    assert calls == [False]  # not on the GUI thread
    assert "Looking for devices" in window.devices_panel.status_label.text()
    assert "Looking for devices" in window.statusBar().currentMessage()
    assert not window.refresh_action.isEnabled()
    release.set()
    qtbot.waitUntil(lambda: window.context.discovery is not None, timeout=5000)
    assert window.devices_panel.device_keys() == ["cpu", "catalog:gtx-1650"]
    assert "no NVIDIA GPU" in window.statusBar().currentMessage()
    assert window.refresh_action.isEnabled()

    # Refresh runs discovery again
    window.refresh_action.trigger()
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=5000)
    qtbot.waitUntil(lambda: window.refresh_action.isEnabled(), timeout=5000)


def test_a_failing_discovery_is_reported_and_the_window_lives_on(qtbot, make_window):
    def broken(_update):
        raise RuntimeError("probe exploded")

    window = make_window(None, discover_fn=broken)
    window.show()
    qtbot.waitUntil(lambda: window.devices_panel.error_label.isVisible(), timeout=5000)
    assert "probe exploded" in window.devices_panel.error_label.text()
    assert window.refresh_action.isEnabled()


@pytest.mark.slow
def test_about_lists_versions(make_window, no_gpu_discovery):
    window = make_window(no_gpu_discovery, discover_on_show=False)
    text = window.about_dialog().text()
    assert f"Python: {platform.python_version()}" in text
    assert "Qt: 6." in text and "PySide6: 6." in text
    assert f"torch: {metadata.version('torch')}" in text
    assert f"numba: {metadata.version('numba')}" in text
    assert f"pyqtgraph: {metadata.version('pyqtgraph')}" in text
    assert f"NVML bindings (nvidia-ml-py): {metadata.version('nvidia-ml-py')}" in text
    assert "NVIDIA driver: none: NVML library not found" in text


@pytest.mark.slow
def test_about_shows_the_driver_of_a_present_gpu(make_window, two_gpu_discovery):
    window = make_window(two_gpu_discovery, discover_on_show=False)
    assert "NVIDIA driver: 550.54" in window.about_dialog().text()


def test_dark_theme_switches_the_palette(make_window, no_gpu_discovery, qapp):
    window = make_window(no_gpu_discovery, discover_on_show=False)
    light = qapp.palette().color(QPalette.ColorRole.Window).name()
    window.dark_action.trigger()
    try:
        assert current_theme().name == "dark"
        assert qapp.palette().color(QPalette.ColorRole.Window).name() != light
    finally:
        window.dark_action.trigger()
    assert current_theme().name == "light"


def test_closing_the_window_stops_live_readings(make_window, two_gpu_discovery, fake_timer):
    window = make_window(two_gpu_discovery, discover_on_show=False)
    window.show()
    assert fake_timer.isActive()
    window.close()
    assert not fake_timer.isActive()


def test_missing_panel_module_is_reported_not_raised():
    cls, reason = load_panel_class(PageSpec("x", "X", (("explorer.ui.no_such_panel", "Panel"),)))
    assert cls is None
    assert "explorer.ui.no_such_panel is missing" in reason
    assert {p.key for p in PAGES} == {"devices", "visualizer", "benchmarks", "memory"}
    from explorer.panels import PANELS

    assert (
        tuple(p.key for p in PAGES) == PANELS
    )  # the CLI's --panel choices and the saved panel are the tabs, in order


@pytest.mark.slow
def test_window_opens_without_torch_numba_or_what_only_a_lesson_needs():
    """The start-up path (app + window shown, before discovery returns) must not import torch or
    numba, nor what only an opened lesson or dialog needs: the lesson reader (it imports every
    page's model), the predict questions, and importlib.metadata (the About dialog's)."""
    code = textwrap.dedent(
        """
        import sys
        from explorer.ui.main_window import MainWindow
        MainWindow.start_discovery = lambda self: None  # what the window itself imports, nothing more
        from explorer.commands.gui import open_main_window
        app, window = open_main_window(remember=True)  # as run_gui opens it, settings read
        for _ in range(3):
            app.processEvents()
        assert not window.grab().isNull()
        later = (
            "torch", "numba", "cpuinfo", "explorer.lessons.files", "explorer.memory.session",
            "explorer.quiz.topics", "importlib.metadata",
        )
        heavy = sorted(m for m in later if m in sys.modules)
        print("HEAVY", heavy)
        import os; os._exit(0)
        """
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr


def test_screenshot_writes_a_png_of_the_requested_size(qapp, tmp_path, capsys):
    out = tmp_path / "devices.png"
    assert run_screenshot(Namespace(panel="devices", out=str(out), size="1024x700")) == 0
    assert capsys.readouterr().out.strip() == str(out)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1024, 700)
    assert out.stat().st_size > 10_000


def test_screenshot_refuses_a_bad_out_or_size_in_one_line(tmp_path, capsys):
    with pytest.raises(UserError, match="does not exist"):
        run_screenshot(Namespace(panel="devices", out=str(tmp_path / "nope" / "x.png"), size="1280x800"))
    with pytest.raises(UserError, match="must look like 1280x800"):
        run_screenshot(Namespace(panel="devices", out=str(tmp_path / "x.png"), size="big"))
    assert cli_main(["screenshot", "--out", str(tmp_path / "nope" / "x.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "does not exist" in err
    if os.geteuid() != 0:  # root can write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(UserError, match="not writable"):
            run_screenshot(Namespace(panel="devices", out=str(locked / "x.png"), size="1280x800"))


def test_gui_without_a_display_says_so_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert cli_main([]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no display" in err and "screenshot" in err


@pytest.mark.slow
def test_end_to_end_with_the_devices_fakes(qtbot, make_window, fake_clock, fake_timer):
    """Real discovery and NVML session code, fed by the devices team's fake pynvml, torch and numba."""
    from explorer.devices.discover import discover
    from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
    from tests.devices.fake_nvml import make_fake_nvml

    nvml = make_fake_nvml()
    found = discover(
        nvml=nvml, torch=make_fake_torch([GTX1650, A100]), numba=make_fake_numba([GTX1650, A100])
    )
    window = make_window(
        None,
        discover_fn=lambda _update: found,
        devices_panel_options={"nvml": nvml, "clock": fake_clock, "timer": fake_timer},
    )
    window.show()
    qtbot.waitUntil(lambda: window.context.discovery is not None, timeout=5000)
    panel = window.devices_panel
    assert panel.device_keys()[:3] == ["cpu", "cuda:0", "cuda:1"]
    assert not panel.banner.isVisible()
    assert "2 NVIDIA GPUs" in window.statusBar().currentMessage()

    panel.select_device("cuda:1")
    assert panel.details.device.name == "NVIDIA A100-SXM4-40GB"
    live = panel.live_view.values.values
    assert live["temperature_c"].text() == "n/a" and "not supported" in live["temperature_c"].toolTip()
    assert live["power_draw_w"].text() == "250 W (limit 400 W)"
    nvml.gpus[1].utilization_gpu_pct = 12
    fake_clock.advance(1.0)
    panel.tick()
    assert live["utilization_gpu_pct"].text() == "12 %"
    assert "NVIDIA driver: 550.54.14 (CUDA 12.4)" in window.about_dialog().text()


@pytest.mark.slow
def test_window_comes_back_as_the_user_left_it(tmp_path):
    """Dark theme, the visualizer tab and a size chosen in one run are there in the next; a panel
    named on the command line wins over the remembered one."""
    code = textwrap.dedent(
        """
        import sys
        from explorer.ui.main_window import MainWindow
        MainWindow.start_discovery = lambda self: None
        from explorer.commands.gui import open_main_window
        from explorer.ui.theme import current_theme
        from PySide6.QtCore import QTimer
        step, panel = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
        app, window = open_main_window(panel, remember=True)
        app.processEvents()
        frame = window.frameGeometry()
        print("STATE", current_theme().name, window.current_panel_key(), window.width(), window.height(),
              frame.width(), frame.height())
        if step == "first":
            window.set_theme("dark")
            window.show_panel("visualizer")
            window.resize(1200, 760)
        QTimer.singleShot(0, app.quit)
        app.exec()
        import os; os._exit(0)
        """
    )
    # a 1920x1080 offscreen screen, as on a lab PC; the plugin's default screen is 800x800
    screen = tmp_path / "screen.json"
    screen.write_text(
        json.dumps(
            {
                "screens": [
                    {
                        "name": "lab",
                        "x": 0,
                        "y": 0,
                        "width": 1920,
                        "height": 1080,
                        "logicalDpi": 96,
                        "logicalBaseDpi": 96,
                        "dpr": 1,
                    }
                ]
            }
        )
    )
    home = tmp_path / "home"
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={screen}", DEVICE_EXPLORER_HOME=str(home))

    def run(*args, platform=None):
        run_env = dict(env, QT_QPA_PLATFORM=platform) if platform else env
        out = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, env=run_env, timeout=120
        )
        lines = [line for line in out.stdout.splitlines() if line.startswith("STATE")]
        assert lines, out.stdout + out.stderr
        return lines[0].split()[1:]

    assert run("first")[:4] == ["light", "devices", "1280", "800"]
    assert (home / "settings.json").is_file()
    assert run("second")[:4] == ["dark", "visualizer", "1200", "760"]
    assert run("third", "benchmarks")[:2] == ["dark", "benchmarks"]
    # the size saved on the big screen is shrunk to fit a smaller one (800x800) instead of overflowing
    # it, its frame included (the frame's borders come off the width: 796 px under offscreen's 2 px)
    theme, page, width, height, frame_w, frame_h = run("fourth", "devices", platform="offscreen")
    assert [theme, page, height] == ["dark", "devices", "760"]
    assert int(frame_w) <= 800 and int(frame_h) <= 800 and int(width) >= 800 - (int(frame_w) - int(width)) - 1


def _contrast(a, b) -> float:
    """WCAG contrast ratio of two QColors (1 to 21)."""

    def luminance(c):
        def channel(v):
            v /= 255
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme_name", ["light", "dark"])
def test_every_label_is_readable_in_both_themes(make_window, no_gpu_discovery, qapp, theme_name):
    """A projector washes colours out: every visible label, and every colour set inside its rich
    text, keeps at least WCAG's 4.5:1 contrast against the window in either theme."""
    import re

    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QLabel

    from explorer.ui.theme import THEMES

    window = make_window(no_gpu_discovery, discover_on_show=False)
    window.resize(1280, 800)
    window.show()
    window.show_panel("visualizer")
    window.panels["visualizer"].prepare_screenshot()  # a selected thread: the inspector's coloured words
    window.set_theme(theme_name)
    try:
        background = QColor(THEMES[theme_name].window)
        poor, checked = [], 0
        for key in ("devices", "benchmarks", "visualizer"):
            window.show_panel(key)
            qapp.processEvents()  # a page's widgets are shown by the event loop
            for label in window.panels[key].findChildren(QLabel):
                if not label.isVisibleTo(window) or not label.text() or "background" in label.styleSheet():
                    continue  # a label with its own background (the inline error box) is not on the window
                label.ensurePolished()
                checked += 1
                colours = [label.palette().color(label.foregroundRole())]
                colours += [QColor(c) for c in re.findall(r"color:\s*(#[0-9a-fA-F]{6})", label.text())]
                for colour in colours:
                    if _contrast(colour, background) < 4.5:
                        poor.append((key, colour.name(), label.text()[:50]))
        assert checked > 30
        assert poor == []
    finally:
        window.set_theme("light")


def test_help_lists_the_keys_as_they_are_bound(make_window, no_gpu_discovery):
    from PySide6.QtGui import QKeySequence

    from explorer.ui.visualizer.panel import KEYS

    window = make_window(no_gpu_discovery, discover_on_show=False)
    help_action = next(
        a for a in _menu(window, "Help").actions() if a.text().replace("&", "") == "Keyboard shortcuts"
    )
    assert help_action.shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)
    dialog = window.shortcuts_dialog()
    sections = dict(dialog.sections)
    assert ("Ctrl+2", "Launch visualizer") in sections["Window"]
    assert ("Ctrl+Shift+D", "Dark theme") in sections["Window"]
    visualizer = sections["Launch visualizer (while it has the focus)"]
    assert ("Space", "play / pause the animation") in visualizer
    assert len(visualizer) == sum(1 for _k, words, _action in KEYS if words)  # aliases are not listed twice
    window.show_panel("visualizer")
    panel = window.panels["visualizer"]
    assert sorted(s.key().toString() for s in panel.shortcuts) == sorted(
        QKeySequence(k).toString() for k, *_ in KEYS
    )
    assert "Shift+Right" in dialog.label.text()


def test_every_page_is_a_panel_and_export_follows_what_the_page_can_write(
    make_window, no_gpu_discovery, tmp_path, monkeypatch
):
    """The window talks to pages through ``Panel`` only: File > Export is offered on the Benchmarks
    tab once it has results (CSV, JSON, PNG), greyed out on the visualizer, and writes the format
    picked in the save dialog, adding its suffix to a name typed without one."""
    from PySide6.QtWidgets import QFileDialog

    from explorer.bench.results import BenchPoint
    from explorer.ui.panel import Panel

    for spec in PAGES:
        cls, reason = load_panel_class(spec)
        assert cls is not None and issubclass(cls, Panel), reason

    window = make_window(no_gpu_discovery, discover_on_show=False)
    window.show()
    window.show_panel("visualizer")
    assert not window.export_action.isEnabled()
    bench = window.show_panel("benchmarks")
    bench.set_run([])
    bench.exports_changed.emit()
    assert not window.export_action.isEnabled()  # nothing measured yet, nothing to write
    bench.add_point(
        BenchPoint(
            workload="matmul",
            variant="cpu",
            device="cpu",
            size=64,
            size_label="n=64",
            median_s=1e-5,
            spread_s=1e-7,
            repeats=5,
            throughput=52.4,
            throughput_unit="GFLOP/s",
        )
    )

    bench.exports_changed.emit()
    assert window.export_action.isEnabled()
    assert [f.key for f in bench.export_formats()] == ["csv", "json", "png"]

    asked = {}

    def fake_dialog(_parent, _title, _dir, filters):
        asked["filters"] = filters.split(";;")
        return str(tmp_path / "run"), asked["filters"][1]  # the user picks JSON and types no suffix

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_dialog))
    window.export_action.trigger()
    assert asked["filters"] == ["CSV table (*.csv)", "JSON (*.json)", "PNG picture of the plots (*.png)"]
    data = json.loads((tmp_path / "run.json").read_text())
    assert data["points"][0]["throughput"] == 52.4
