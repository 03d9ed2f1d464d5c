"""A damaged state file, seen from the window: it opens normally, says once (in words, with the
path) that the file was moved aside, and keeps working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from explorer.bench import results as R
from explorer.bench.results import BenchPoint
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from explorer.ui.panel import UnavailablePanel

GOOD = {"workload": "matmul", "variant": "cpu", "device": "cpu", "size": 64, "size_label": "n=64"}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def window(qtbot, fake_nvml, fake_clock, fake_timer, no_gpu_discovery):
    def make(**kwargs):
        w = MainWindow(
            AppContext(no_gpu_discovery),
            discover_on_show=False,
            devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
            **kwargs,
        )
        qtbot.addWidget(w)
        return w

    return make


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"points": [{**GOOD, "median_s": "fast"}]}),
        json.dumps({"points": [{**GOOD, "throughput": "fast"}]}),
        '{"points": [1]}',
        "[" * 200_000 + "]" * 200_000,
        json.dumps({"points": [{**GOOD, "size": 10**400}]}),
    ],
    ids=["string median", "string throughput", "not a point", "deep nesting", "400-digit size"],
)
def test_the_benchmarks_panel_opens_and_the_window_names_the_moved_file(home, window, text):
    path = home / R.LAST_RESULTS_FILE
    path.write_text(text)
    w = window(panel="benchmarks")
    w.show()
    panel = w.panels["benchmarks"]
    assert not isinstance(panel, UnavailablePanel)
    assert panel.points == [] and panel.controls.start_button.isEnabled()
    (aside,) = home.glob(R.LAST_RESULTS_FILE + ".damaged-*")
    assert w.notice_bar.isVisible()
    body = w.notice_bar.banner.body_label.text()
    assert "saved benchmark results" in body and str(path) in body and str(aside) in body
    assert w.context.notices == [body]  # said once

    # the panel keeps results again, and the next window reads them without a word
    panel.set_run([BenchPoint(**GOOD, median_s=0.001)])
    panel.session.save_last()
    assert not panel.message_label.isVisible()
    w2 = window(panel="benchmarks")
    assert [p.median_s for p in w2.panels["benchmarks"].points] == [0.001]
    assert not w2.context.notices and w2.notice_bar.isHidden()

    w.notice_bar.dismiss_button.click()
    assert w.notice_bar.isHidden()


@pytest.mark.slow
def test_screenshot_of_the_benchmarks_panel_with_a_bad_value_exits_0(home, tmp_path):
    """The screenshot from the issue, in its own process (it was exit 139, a segfault), less the
    real benchmark run the panel's screenshot starts (not what crashed)."""
    (home / R.LAST_RESULTS_FILE).write_text(json.dumps({"points": [{**GOOD, "median_s": "fast"}]}))
    script = textwrap.dedent(
        """
        from explorer.commands import gui
        from explorer.ui.bench_panel import BenchPanel
        BenchPanel.prepare_screenshot = lambda self: None
        image = gui.render_window("benchmarks", (1280, 800))
        print("rendered", image.width(), image.height())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen", "DEVICE_EXPLORER_HOME": str(home)},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rendered 1280 800" in done.stdout
    assert list(home.glob(R.LAST_RESULTS_FILE + ".damaged-*"))


OPEN_AND_QUIT = textwrap.dedent(
    """
    from explorer.ui.main_window import MainWindow
    MainWindow.start_discovery = lambda self: None
    from explorer.commands.gui import open_main_window
    from PySide6.QtCore import QTimer
    app, window = open_main_window(remember=True)  # as run_gui opens it: settings read and saved
    app.processEvents()
    print("NOTICE", window.notice_bar.isVisible(), window.notice_bar.banner.body_label.text())
    QTimer.singleShot(0, app.quit)
    app.exec()
    import os; os._exit(0)
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["random bytes", "latin-1", "deep JSON", "named pipe", "folder"])
def test_the_window_opens_with_damaged_settings_and_names_them_once(home, tmp_path, kind):
    path = home / "settings.json"
    if kind == "random bytes":
        path.write_bytes(os.urandom(4096).replace(b"{", b"\xff"))
    elif kind == "latin-1":
        path.write_bytes('{"theme": "dark", "panel": "caf\u00e9"}'.encode("latin-1"))
    elif kind == "deep JSON":
        path.write_text("[" * 200_000 + "]" * 200_000)
    elif kind == "named pipe":
        if not hasattr(os, "mkfifo"):
            pytest.skip("named pipes are POSIX")
        os.mkfifo(path)
    else:
        path.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DEVICE_EXPLORER_HOME": str(home)}

    def run():
        return subprocess.run(
            [sys.executable, "-c", OPEN_AND_QUIT],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            cwd=tmp_path,
        )

    first = run()  # a named pipe used to hang here for ever (the timeout would fail the test)
    assert first.returncode == 0, first.stderr[-3000:]
    (aside,) = home.glob("settings.json.damaged-*")
    assert f"NOTICE True The settings file in {path} could not be used" in first.stdout
    assert str(aside) in first.stdout and "Traceback" not in first.stderr
    assert path.is_file()  # the session's settings were saved in its place
    second = run()
    assert second.returncode == 0 and "NOTICE False" in second.stdout  # said once


def test_the_largest_size_kept_is_shown(home, window):
    """The edge of what is kept: a size of 2**63 - 1 loads, and the page shows and draws it."""
    R.save_last(
        [BenchPoint(**{**GOOD, "size": 2**63 - 1, "size_label": "n=huge"}, median_s=0.5, throughput=1.0)]
    )
    w = window(panel="benchmarks")
    w.show()
    panel = w.panels["benchmarks"]
    assert not isinstance(panel, UnavailablePanel) and [p.size for p in panel.points] == [2**63 - 1]
    assert not w.context.notices
    assert not w.grab().isNull()


@pytest.mark.parametrize(
    "text",
    ["[" * 200_000 + "]" * 200_000, '{"format_version": 2, "roofs": {"cpu": {"clock_ghz": 1e308}}}'],
    ids=["deep nesting", "clock of 1e308 GHz"],
)
def test_the_benchmarks_panel_opens_with_a_damaged_ceilings_file(home, window, text):
    """The page said "could not be opened" at every start."""
    from explorer.roofs import store

    store.store_path().write_text(text)
    w = window(panel="benchmarks")
    w.show()
    panel = w.panels["benchmarks"]
    assert not isinstance(panel, UnavailablePanel) and panel.controls.start_button.isEnabled()
    panel.show_screenshot_view("roofline")  # the roofline reads the ceilings: drawn from what is known
    assert list(home.glob(store.STORE_FILE + ".damaged-*"))
