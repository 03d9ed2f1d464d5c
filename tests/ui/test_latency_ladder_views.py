"""The latency ladder where a teacher sees it: the Benchmarks page's Latency tab lists the stored
levels beside the published Hopper figures (and says why where none is stored), and the
visualizer's latency page offers "L measured on this GPU" only for a GPU with a stored ladder."""

from __future__ import annotations

import pytest

from explorer.devices import roofs as device_roofs
from explorer.devices.discovery import Discovery
from explorer.devices.model import CpuDevice, CudaGpu, CudaLimits
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.latency import MEASURED_PRESET_KEY, PRESETS
from explorer.launch.session import LaunchSetup
from explorer.roofs import store
from explorer.roofs.latency import NO_LADDER, PUBLISHED_SOURCE, LatencyLadder, LatencyRung
from explorer.roofs.store import MeasuredRoof
from explorer.ui.context import AppContext


def _gpu(index: int, name: str) -> CudaGpu:
    return CudaGpu(
        name=name,
        index=index,
        key=f"cuda:{index}",
        nvml_index=index,
        compute_capability=(9, 0),
        sm_count=132,
        memory_total_bytes=141 << 30,
        limits=CudaLimits(max_threads_per_block=1024, warp_size=32),
        driver_version="570.1",
        source="test",
    )


H200, OTHER = _gpu(0, "NVIDIA H200"), _gpu(1, "NVIDIA H100 PCIe")


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    store.take_notice()
    cycles = (34.0, 35.0, 240.0, 250.0, 700.0, 720.0)
    rungs = tuple(LatencyRung(4096 << k, c, c / 1.98) for k, c in enumerate(cycles))
    ladder = LatencyLadder("NVIDIA H200", 1000.0, rungs, 30.0, 1980.0, "pointer chase (test)", 20000)
    fp = device_roofs.fingerprint(H200)
    assert fp is not None
    store.save(MeasuredRoof(H200.key, fp, 1000.0, latency=ladder))


def _context() -> AppContext:
    return AppContext(Discovery(devices=[CpuDevice(name="Test CPU", key="cpu"), H200, OTHER], reports=[]))


def test_the_benchmarks_latency_tab_lists_the_levels_beside_the_published_figures(qtbot):
    from explorer.ui.bench_panel import BenchPanel

    panel = BenchPanel(_context())
    qtbot.addWidget(panel)
    try:
        panel.roofs.refresh()
        rows = panel.latency.rows_shown()
        assert rows[0] == ("shared memory", "30", "15", "~30")
        assert rows[1][0] == "L1" and rows[1][3] == "33-38"
        assert rows[3] == ("DRAM", "710", "359", "650-830")
        text = panel.latency.caption.text()
        assert PUBLISHED_SOURCE in text and "1980 MHz" in text and "pointer chase (test)" in text
        panel.latency.set_roofs([])
        assert panel.latency.rows_shown() == [] and panel.latency.caption.text() == NO_LADDER
    finally:
        panel.shutdown()


def test_the_latency_page_offers_l_measured_on_this_gpu_only_where_one_is_stored(qtbot):
    from explorer.ui.visualizer.panel import VisualizerPanel

    panel = VisualizerPanel(_context())
    qtbot.addWidget(panel)
    try:
        page, model = panel.latency_page, panel.time_views
        model.set_view("latency")
        panel.session.edit(LaunchSetup(H200.key, LaunchConfig(Dim3(264), Dim3(256))))
        assert page.measured_button.isEnabled()
        page.measured_button.click()
        assert model.latency_settings.preset == MEASURED_PRESET_KEY
        assert model.latency.config.mem_latency == 709  # the DRAM level, 710 cycles: L = 709
        assert page.preset_box.currentText() == model.measured_preset.label
        panel.session.edit(LaunchSetup(OTHER.key, LaunchConfig(Dim3(264), Dim3(256))))
        assert not page.measured_button.isEnabled()
        assert "no latency ladder is stored for NVIDIA H100 PCIe" in page.measured_button.toolTip()
        assert model.latency_settings.preset != MEASURED_PRESET_KEY
        assert page.preset_box.count() == len(PRESETS)  # the measured item is gone with its GPU
    finally:
        panel.shutdown()
