"""The window's device list fills in as probes answer, and a hung driver never holds the window.

Discovery runs the real probe code against the devices team's stand-ins (NVML, torch, numba);
the quit test runs the real ``device-explorer`` window in its own process against a
``pynvml`` whose ``nvmlInit`` sleeps a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from explorer.devices.discover import discover
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml

ROOT = Path(__file__).resolve().parents[2]
HUNG = ROOT / "tests" / "devices" / "hung_nvml"
STUCK_S = 60.0  # how long a stuck stand-in driver call holds before it gives up by itself


@pytest.fixture
def window_with(qtbot, fake_clock, fake_timer):
    made = []

    def make(discover_fn, nvml):
        window = MainWindow(
            AppContext(),
            discover_fn=discover_fn,
            devices_panel_options={"nvml": nvml, "clock": fake_clock, "timer": fake_timer},
        )
        qtbot.addWidget(window)
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()


def test_cpu_and_nvml_gpus_show_while_torch_and_numba_are_still_asked(qtbot, window_with, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    release = threading.Event()
    nvml = make_fake_nvml()
    torch = make_fake_torch([A100, GTX1650])
    torch.cuda.is_available = lambda: release.wait(30)  # torch answers only when the test says so

    window = window_with(
        lambda update: discover(
            nvml=nvml, torch=torch, numba=make_fake_numba([A100, GTX1650]), on_update=update
        ),
        nvml,
    )
    panel = window.devices_panel
    qtbot.waitUntil(lambda: window.context.discovery is not None, timeout=10000)
    # first the CPU and NVML's two GPUs (NVML's order), with their live readings; no banner
    assert panel.device_keys()[:3] == ["cpu", "cuda:0", "cuda:1"]
    assert "GTX 1650" in panel.list_texts()[2]
    assert not panel.banner.isVisible()
    assert panel.status_label.text() == "Asking torch and numba for CUDA details…"
    assert "still asking torch and numba" in window.statusBar().currentMessage()
    assert not window.refresh_action.isEnabled()
    panel.select_device("cuda:0")
    assert panel.details.groups["Compute"].values["sm_count"].toolTip() == (
        "torch and numba are still being asked about this GPU"
    )

    release.set()
    qtbot.waitUntil(lambda: not window.context.discovery.pending, timeout=10000)
    # then the merge: CUDA's order (the A100 first), SM counts from the runtime
    assert panel.device_keys()[:3] == ["cpu", "cuda:0", "cuda:1"]
    assert panel.details.device.name == "NVIDIA A100-SXM4-40GB"
    assert panel.details.groups["Compute"].values["sm_count"].text() == "108"
    assert panel.status_label.text() == ""
    assert window.refresh_action.isEnabled()


def test_a_hung_nvml_is_named_in_the_banner_and_the_rest_is_listed(qtbot, window_with):
    nvml = make_fake_nvml()
    nvml.nvmlInit = lambda: time.sleep(60)
    window = window_with(
        lambda update: discover(
            nvml=nvml,
            torch=make_fake_torch(None),
            numba=make_fake_numba(None),
            deadlines={"nvml": 0.5},
            on_update=update,
        ),
        nvml,
    )
    panel = window.devices_panel
    qtbot.waitUntil(
        lambda: window.context.discovery is not None and not window.context.discovery.pending, timeout=20000
    )
    assert panel.device_keys()[0] == "cpu" and len(panel.device_keys()) > 1
    assert panel.banner.isVisible()
    assert (
        "NVML did not answer within 0.5 s: the driver or a GPU may be hung." in panel.banner.body_label.text()
    )


_QUIT_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from argparse import Namespace
    from PySide6.QtCore import QTimer
    from explorer.ui.app import create_application
    from explorer.commands.gui import run_gui

    app = create_application()

    def close():
        if not os.path.exists(os.environ["HUNG_NVML_ENTERED"]):
            return  # the probe has not reached nvmlInit yet
        poll.stop()
        print("CLOSING", time.time(), flush=True)
        app.closeAllWindows()

    poll = QTimer()
    poll.timeout.connect(close)  # closed while NVML is asleep in its nvmlInit
    poll.start(20)
    rc = run_gui(Namespace(panel=None))
    print("RETURNED", time.time(), flush=True)
    sys.exit(rc)
    """
)


@pytest.mark.slow
def test_quitting_never_waits_on_a_hung_probe(tmp_path):
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(HUNG), str(ROOT), env.get("PYTHONPATH", "")]),
        HUNG_NVML_SLEEP_S="60",
        HUNG_NVML_ENTERED=str(tmp_path / "nvml-entered"),
        QT_QPA_PLATFORM="offscreen",
        DEVICE_EXPLORER_HOME=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, "-c", _QUIT_SCRIPT], env=env, capture_output=True, text=True, timeout=50
    )
    ended = time.time()
    assert done.returncode == 0, done.stderr
    closing = float(next(ln for ln in done.stdout.splitlines() if ln.startswith("CLOSING")).split()[1])
    assert ended - closing < 30  # the stand-in sleeps 60 s: the process did not wait for it
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr


class _StuckSession:
    """An NVML session whose driver stops answering after it started (a GPU fell off the bus)."""

    def __init__(self, release: threading.Event, **_kwargs) -> None:
        self.release = release

    def init(self) -> None:
        pass

    def read_live(self, index: int):
        self.release.wait(STUCK_S)
        raise AssertionError("a stuck read should have been given up on")

    def shutdown(self) -> None:
        self.release.wait(STUCK_S)


def test_a_gpu_that_stops_answering_costs_the_window_one_short_wait(
    qtbot, two_gpu_discovery, fake_clock, fake_timer
):
    from explorer.ui.live_monitor import LIVE_DEADLINE_S, LiveMonitor

    release = threading.Event()
    monitor = LiveMonitor(
        clock=fake_clock, timer=fake_timer, session_factory=lambda **kw: _StuckSession(release, **kw)
    )
    try:
        started = time.monotonic()
        monitor.set_devices(two_gpu_discovery.present_gpus)  # opens the session and ticks once
        # the stuck read holds for 60 s: half of that is a bound no loaded machine reaches, and the
        # words below say which path answered
        assert time.monotonic() - started < STUCK_S / 2
        reading = monitor.latest("cuda:0")
        assert reading.temperature_c is None
        assert reading.unavailable["temperature_c"].startswith(
            f"NVML did not answer within {LIVE_DEADLINE_S:g} s"
        )
        # still stuck: the next ticks are answered at once, and say for how long it has been silent
        started = time.monotonic()
        monitor.tick()
        assert time.monotonic() - started < STUCK_S / 2
        assert "has not answered for" in monitor.latest("cuda:1").unavailable["power_draw_w"]
        started = time.monotonic()
        monitor.stop()  # its shutdown hangs too: the window does not wait for it
        assert time.monotonic() - started < STUCK_S / 2
    finally:
        release.set()
