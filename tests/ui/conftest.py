"""Stand-ins for the UI tests: a two-GPU NVML module, a hand-driven timer and clock, discoveries.

The fake NVML answers the same calls the real ``pynvml`` does (only those the live reader
makes), and raises an ``NVMLError_NotSupported`` where a real passively cooled board would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QObject, Signal

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# so ``tests.devices.fake_nvml`` (the devices team's full pynvml stand-in) imports however pytest starts
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from explorer.devices.discovery import Discovery, ProbeReport  # noqa: E402
from explorer.devices.model import CatalogGpu, CpuDevice, CudaGpu, CudaLimits, Device  # noqa: E402

GIB = 1 << 30


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


class FakeNvml:
    """Two GPUs whose sensors change as ``step`` advances; GPU 1 has no temperature sensor."""

    NVML_TEMPERATURE_GPU = 0
    NVML_CLOCK_SM = 1
    NVML_CLOCK_MEM = 2

    def __init__(self) -> None:
        self.step = 0
        self.initialised = False
        self.shutdowns = 0

    def nvmlInit(self) -> None:
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.initialised = False
        self.shutdowns += 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        assert self.initialised, "NVML used before nvmlInit"
        if index not in (0, 1):
            raise NVMLError("invalid index")
        return index

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(gpu=(10 * self.step + 5 * handle) % 101, memory=3)

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(total=4 * GIB, used=(self.step + 1) * 256 * (1 << 20), free=0)

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        if handle == 1:
            raise NVMLError_NotSupported("Not Supported")
        return 40 + self.step

    def nvmlDeviceGetPowerUsage(self, handle: int) -> int:
        return 20_000 + 1_000 * self.step  # milliwatts

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return 75_000

    def nvmlDeviceGetClockInfo(self, handle: int, which: int) -> int:
        return 1590 if which == self.NVML_CLOCK_SM else 4001


class FakeTimer(QObject):
    """A QTimer look-alike that never fires by itself: tests call the tick."""

    timeout = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.active = False
        self.interval_ms = 0

    def setInterval(self, ms: int) -> None:
        self.interval_ms = ms

    def start(self) -> None:
        self.active = True

    def stop(self) -> None:
        self.active = False

    def isActive(self) -> bool:
        return self.active


class FakeClock:
    def __init__(self, start_s: float = 1000.0) -> None:
        self.now_s = start_s

    def __call__(self) -> float:
        return self.now_s

    def advance(self, seconds: float) -> None:
        self.now_s += seconds


def cpu_device() -> Device:
    return CpuDevice(name="Test CPU 9000", key="cpu", source="test")


def catalog_device() -> Device:
    return CatalogGpu(
        name="NVIDIA GeForce GTX 1650",
        key="catalog:gtx-1650",
        compute_capability=(7, 5),
        sm_count=16,
        memory_total_bytes=4 * GIB,
        source="test spec sheet",
    )


def gpu_device(index: int) -> Device:
    return CudaGpu(
        name=f"Fake GPU {index}",
        index=index,
        key=f"cuda:{index}",
        nvml_index=index,
        compute_capability=(8, 6),
        sm_count=28,
        memory_total_bytes=4 * GIB,
        limits=CudaLimits(max_threads_per_block=1024, warp_size=32),
        driver_version="550.54",
        source="fake nvml + fake torch",
        unavailable={"memory_bus_width_bits": "the CUDA runtime did not report it in this test"},
    )


def no_gpu_discovery() -> Discovery:
    return Discovery(
        devices=[cpu_device(), catalog_device()],
        reports=[
            ProbeReport("cpu", True, "Test CPU 9000", 1),
            ProbeReport("nvml", False, "NVML library not found: no NVIDIA driver is installed."),
            ProbeReport("catalog", True, "1 spec sheet", 1),
        ],
    )


def two_gpu_discovery() -> Discovery:
    return Discovery(
        devices=[cpu_device(), gpu_device(0), gpu_device(1), catalog_device()],
        reports=[ProbeReport("cpu", True, "Test CPU 9000", 1), ProbeReport("nvml", True, "2 GPUs", 2)],
    )


@pytest.fixture
def fake_nvml() -> FakeNvml:
    return FakeNvml()


@pytest.fixture
def fake_timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(name="no_gpu_discovery")
def _no_gpu_discovery() -> Discovery:
    return no_gpu_discovery()


@pytest.fixture(name="two_gpu_discovery")
def _two_gpu_discovery() -> Discovery:
    return two_gpu_discovery()


@pytest.fixture
def visualizer_panel(qtbot):
    """The visualizer alone over the catalog GPUs, 1280x800, shut down after the test."""
    from explorer.devices.catalog import load_catalog
    from explorer.ui.context import AppContext
    from explorer.ui.visualizer.panel import VisualizerPanel

    p = VisualizerPanel(AppContext(Discovery(devices=load_catalog(), reports=[])))
    qtbot.addWidget(p)
    p.resize(1280, 800)
    p.show()
    qtbot.waitExposed(p)
    yield p
    p.shutdown()


@pytest.fixture(scope="session")
def real_discovery() -> Discovery:
    """What this machine really has (slow: imports torch and numba once per test session)."""
    from explorer.devices.discover import discover

    return discover(include_catalog=True)


@pytest.fixture(scope="module")
def display():
    """A private X server; its number comes from Xvfb itself (-displayfd), so parallel runs never collide."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-nolisten", "tcp", "-screen", "0", "1280x800x24"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as fh:
        number = fh.readline().strip()
    if not number:
        server.kill()
        pytest.skip("Xvfb did not start")
    yield f":{number}"
    server.terminate()
    server.wait(10)


@pytest.fixture
def catalog_window(qtbot, tmp_path, monkeypatch):
    """The main window at 1280x800 on a machine with no GPU and the catalog, its data folder (the
    answers file) the test's own."""
    from explorer.devices.catalog import load_catalog
    from explorer.ui.context import AppContext
    from explorer.ui.main_window import MainWindow

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    discovery = Discovery(
        devices=[CpuDevice(name="Test CPU", key="cpu"), *load_catalog()],
        reports=[ProbeReport("nvml", False, "NVML library not found: no NVIDIA driver is installed.")],
    )
    w = MainWindow(AppContext(discovery), discover_on_show=False)
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()
