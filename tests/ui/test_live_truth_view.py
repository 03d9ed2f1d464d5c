"""The Live group shows what "GPU utilization" hides: SM activity and occupancy beside it on a
Hopper GPU (NVML GPM), the reason where a GPU has no GPM, and PCIe traffic in both directions.
Driven by the stand-in NVML and a hand-driven clock and timer, as the panel's other tests are."""

from __future__ import annotations

import math

import pytest
from PySide6.QtWidgets import QBoxLayout

from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.nvml import probe_nvml
from explorer.ui.context import AppContext
from explorer.ui.devices_panel import DevicesPanel
from explorer.ui.formatting import NA
from explorer.ui.live_plot import PLOTS
from tests.devices.fake_nvml import FakeGpu, hopper_gpu, make_fake_nvml
from tests.ui.conftest import cpu_device


@pytest.fixture
def hopper_panel(qtbot, fake_clock, fake_timer):
    fake = make_fake_nvml([hopper_gpu(), FakeGpu()])
    gpus = probe_nvml(fake, env={}).devices
    discovery = Discovery(devices=[cpu_device(), *gpus], reports=[ProbeReport("nvml", True, "2 GPUs", 2)])
    panel = DevicesPanel(AppContext(discovery), nvml=fake, clock=fake_clock, timer=fake_timer)
    qtbot.addWidget(panel)
    panel.resize(1400, 900)
    panel.show()
    yield panel, fake
    panel.shutdown()
    assert fake.gpm_samples_held == 0, "every GPM sample the Live group took is freed"


def _tick(panel, fake_clock, times: int = 1) -> None:
    for _ in range(times):
        fake_clock.advance(1.0)
        panel.tick()


def test_the_utilization_trap_is_drawn_with_sm_activity_beside_utilization(hopper_panel, fake_clock):
    panel, fake = hopper_panel
    panel.select_device("cuda:0")
    live = panel.live_view
    # the first reading has no GPM window yet: it says so instead of showing a number
    assert live.values.values["sm_activity_pct"].text() == NA
    assert "no data yet" in live.values.values["sm_activity_pct"].toolTip()
    _tick(panel, fake_clock, 3)
    values = live.values.values
    assert values["utilization_gpu_pct"].text() == "100 %"
    assert values["sm_activity_pct"].text() == "0.76 %"  # one warp on one SM of 132
    assert values["sm_occupancy_pct"].text() == "0.05 %"
    util_x, util_y = live.curves["utilization_gpu_pct"].getData()
    act_x, act_y = live.curves["sm_activity_pct"].getData()
    assert list(util_y)[-3:] == [100.0, 100.0, 100.0]
    assert math.isnan(act_y[0]) and list(act_y[-3:]) == pytest.approx([0.76] * 3)
    assert list(act_x) == list(util_x)  # drawn on the same plot, the same time axis
    title = live.plots["utilization"].getPlotItem().titleLabel.text
    assert "SM activity" in title and "SM occupancy" in title
    assert "SM activity" in live.caption.text()

    fake.gpus[0].sm_activity_pct, fake.gpus[0].sm_occupancy_pct = 98.0, 45.5
    _tick(panel, fake_clock)
    assert values["sm_activity_pct"].text() == "98 %" and values["sm_occupancy_pct"].text() == "46 %"


def test_pcie_traffic_in_and_out_is_plotted_in_gb_per_second(hopper_panel, fake_clock):
    panel, fake = hopper_panel
    panel.select_device("cuda:0")
    _tick(panel, fake_clock)
    live = panel.live_view
    assert live.values.values["pcie_rx_bytes_per_s"].text() == "49.2 GB/s / 2 MB/s"
    _x, rx = live.curves["pcie_rx_bytes_per_s"].getData()
    _x, tx = live.curves["pcie_tx_bytes_per_s"].getData()
    assert rx[-1] == pytest.approx(48_000_000 * 1024 / 1e9)
    assert tx[-1] == pytest.approx(2_000 * 1024 / 1e9)


def test_a_gpu_without_gpm_shows_na_and_says_it_needs_hopper(hopper_panel, fake_clock):
    panel, _fake = hopper_panel
    panel.select_device("cuda:1")
    _tick(panel, fake_clock, 2)
    cell = panel.live_view.values.values["sm_activity_pct"]
    assert cell.text() == NA and "Hopper or newer" in cell.toolTip()
    assert panel.live_view.values.values["utilization_gpu_pct"].text() == "3 %"


def test_every_reading_field_drawn_has_one_curve():
    drawn = [s.field for p in PLOTS for s in p.series]
    assert len(drawn) == len(set(drawn))
    assert {"sm_activity_pct", "sm_occupancy_pct", "pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s"} <= set(drawn)


def test_a_narrow_pane_puts_the_readings_above_the_plots_and_the_plots_in_one_column(hopper_panel):
    panel, _fake = hopper_panel
    panel.select_device("cuda:0")
    live = panel.live_view
    live.fit_width(2000)
    assert live._row.direction() == QBoxLayout.Direction.LeftToRight
    assert live._plot_columns == 2
    live.fit_width(700)
    assert live._row.direction() == QBoxLayout.Direction.TopToBottom and live._plot_columns == 2
    live.fit_width(380)
    assert live._plot_columns == 1
