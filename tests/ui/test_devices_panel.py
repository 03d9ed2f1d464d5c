"""The Devices panel as a student sees it: what is present, what is a spec sheet, what the GPUs do now.

Live readings are driven by calling the tick with a fake clock and a stand-in NVML module:
no sleeps, no driver.
"""

from __future__ import annotations

import json

import pytest

from explorer.errors import UserError
from explorer.ui.context import AppContext
from explorer.ui.devices_panel import CATALOG_HEADER, PRESENT_HEADER, DevicesPanel
from explorer.ui.formatting import NA


@pytest.fixture
def make_panel(qtbot, fake_nvml, fake_clock, fake_timer):
    made = []

    def make(discovery=None):
        panel = DevicesPanel(AppContext(discovery), nvml=fake_nvml, clock=fake_clock, timer=fake_timer)
        qtbot.addWidget(panel)
        panel.resize(1200, 760)
        panel.show()
        made.append(panel)
        return panel

    yield make
    for panel in made:
        panel.shutdown()


def test_lists_present_devices_before_catalog_devices_marked_not_present(make_panel, no_gpu_discovery):
    panel = make_panel(no_gpu_discovery)
    texts = panel.list_texts()
    assert texts[0] == PRESENT_HEADER.upper()
    assert panel.device_keys() == ["cpu", "catalog:gtx-1650"]
    catalog_row = texts.index(CATALOG_HEADER.upper())
    assert "not present" in texts[catalog_row].lower()
    gtx = next(t for t in texts if t.startswith("NVIDIA GeForce GTX 1650"))
    assert texts.index(gtx) > catalog_row
    assert "catalog" in gtx and "CC 7.5" in gtx and "16 SMs" in gtx

    panel.select_device("catalog:gtx-1650")
    assert panel.details.device.key == "catalog:gtx-1650"
    badge_texts = [w.text() for w in panel.details.findChildren(type(panel.status_label))]
    assert "catalog — not present" in badge_texts
    assert panel.live_view is None  # a spec sheet has no sensors
    # its limits are the launch core's for CC 7.5, each with its source on hover
    limits = panel.details.groups["Limits"].values
    assert limits["Max threads per block"].text() == "1,024"
    assert limits["Max threads per SM"].text() == "1,024"
    assert limits["Warp size"].text() == "32"
    assert "Programming Guide" in limits["Max threads per SM"].toolTip()


def test_no_gpu_banner_explains_why_and_points_to_the_catalog(make_panel, no_gpu_discovery):
    panel = make_panel(no_gpu_discovery)
    assert panel.banner.isVisible()
    body = panel.banner.body_label.text()
    assert "NVML library not found" in body
    assert "catalog" in body.lower()
    # the CPU is selected by default and shows its groups, without GPU limits
    assert panel.selected_key == "cpu"
    assert set(panel.details.groups) == {"Compute", "Memory"}


def test_no_gpu_banner_is_one_line_until_details_are_asked_for(make_panel, no_gpu_discovery, qapp):
    """At a projector's text size the banner's paragraph took half the page: it now folds to its
    title, one short line and a Details button; the probes' words show on demand, and the list
    gets the room back when they fold again."""
    from explorer.ui.theme import apply_theme, current_theme
    from explorer.ui.widgets import HIDE_DETAILS, SHOW_DETAILS

    apply_theme(qapp, current_theme(), 200)
    try:
        panel = make_panel(no_gpu_discovery)
        panel.resize(1024, 700)
        for _ in range(3):
            qapp.processEvents()
        banner = panel.banner
        assert banner.isVisible() and not banner.body_label.isVisible()
        assert banner.details_button.text() == SHOW_DETAILS
        line = banner.title_label.fontMetrics().height()
        assert banner.height() < 4 * line, (banner.height(), line)  # the summary may wrap once
        folded_list = panel.device_list.height()

        banner.details_button.click()
        for _ in range(3):
            qapp.processEvents()
        assert banner.body_label.isVisible() and banner.details_button.text() == HIDE_DETAILS
        assert "NVML library not found" in banner.body_label.text()
        assert panel.device_list.height() < folded_list
        banner.details_button.click()
        for _ in range(3):
            qapp.processEvents()
        assert not banner.body_label.isVisible()
        assert panel.device_list.height() == folded_list
    finally:
        apply_theme(qapp, current_theme(), 100)


def test_banner_on_this_machine_which_has_no_gpu(make_panel, real_discovery):
    if real_discovery.present_gpus:
        pytest.skip("this machine has an NVIDIA GPU")
    panel = make_panel(real_discovery)
    assert panel.banner.isVisible()
    assert real_discovery.why_no_gpu() in panel.banner.body_label.text()
    assert len(panel.device_keys()) == 1 + len(real_discovery.catalog)
    cpu_values = panel.details.groups["Compute"].values
    assert cpu_values["physical_cores"].text() != NA


def test_looking_for_devices_until_discovery_arrives(make_panel, no_gpu_discovery):
    panel = make_panel(None)
    assert "Looking for devices" in panel.status_label.text()
    assert not panel.refresh_button.isEnabled()
    assert panel.device_keys() == []
    panel.context.set_discovery(no_gpu_discovery)
    panel.set_busy(False)
    assert panel.device_keys() == ["cpu", "catalog:gtx-1650"]
    assert panel.refresh_button.isEnabled()


def test_refresh_button_asks_for_a_new_discovery(qtbot, make_panel, no_gpu_discovery):
    panel = make_panel(no_gpu_discovery)
    with qtbot.waitSignal(panel.refresh_requested, timeout=1000):
        panel.refresh_button.click()


def test_two_gpus_hide_the_banner_and_live_readings_follow_the_tick(
    make_panel, two_gpu_discovery, fake_nvml, fake_clock, fake_timer
):
    panel = make_panel(two_gpu_discovery)
    assert not panel.banner.isVisible()
    assert panel.device_keys()[:3] == ["cpu", "cuda:0", "cuda:1"]
    assert panel.selected_key == "cuda:0"  # a present GPU is the first thing shown
    assert fake_timer.isActive() and fake_timer.interval_ms == 1000
    assert set(panel.details.groups) >= {"Compute", "Memory", "Limits"}
    live = panel.live_view
    assert live is not None
    # the first reading is taken as soon as the GPUs are known
    assert live.values.values["utilization_gpu_pct"].text() == "0 %"
    assert live.values.values["temperature_c"].text() == "40 °C"

    for _ in range(3):
        fake_nvml.step += 1
        fake_clock.advance(1.0)
        panel.tick()
    assert live.values.values["utilization_gpu_pct"].text() == "30 %"
    assert live.values.values["temperature_c"].text() == "43 °C"
    assert live.values.values["memory_used_bytes"].text() == "1 GiB of 4 GiB"
    assert live.values.values["power_draw_w"].text() == "23 W (limit 75 W)"
    xs, ys = live.curves["utilization_gpu_pct"].getData()
    assert list(xs) == [-3.0, -2.0, -1.0, 0.0]  # seconds before the newest sample, from the fake clock
    assert list(ys) == [0.0, 10.0, 20.0, 30.0]
    assert "kernel was running" in live.caption.text()

    # the timer drives the same tick
    fake_nvml.step += 1
    fake_clock.advance(1.0)
    fake_timer.timeout.emit()
    assert live.values.values["utilization_gpu_pct"].text() == "40 %"

    # switching GPUs replaces the Live group; the history stays with the monitor
    panel.select_device("cuda:1")
    panel.select_device("cuda:0")
    fake_nvml.step += 1
    fake_clock.advance(1.0)
    panel.tick()  # must not touch the deleted Live groups
    xs, ys = panel.live_view.curves["utilization_gpu_pct"].getData()
    assert len(xs) == 6 and ys[-1] == 50.0


def test_a_sensor_that_raised_shows_na_with_its_reason(make_panel, two_gpu_discovery):
    panel = make_panel(two_gpu_discovery)
    panel.select_device("cuda:1")
    live = panel.live_view
    temperature = live.values.values["temperature_c"]
    assert temperature.text() == NA
    assert "not supported" in temperature.toolTip().lower()
    # the other sensors of the same GPU still read
    assert live.values.values["utilization_gpu_pct"].text() == "5 %"
    # a static field the probes could not read shows n/a and the probe's reason
    bus = panel.details.groups["Memory"].values["memory_bus_width_bits"]
    assert bus.text() == NA
    assert bus.toolTip() == "the CUDA runtime did not report it in this test"


def test_live_readings_stop_on_shutdown_and_when_gpus_disappear(
    make_panel, two_gpu_discovery, no_gpu_discovery, fake_nvml, fake_timer
):
    panel = make_panel(two_gpu_discovery)
    assert fake_timer.isActive()
    panel.context.set_discovery(no_gpu_discovery)
    assert not fake_timer.isActive()
    assert fake_nvml.shutdowns == 1
    assert panel.banner.isVisible()


def test_selection_survives_a_refresh(make_panel, two_gpu_discovery):
    panel = make_panel(two_gpu_discovery)
    panel.select_device("catalog:gtx-1650")
    panel.context.set_discovery(two_gpu_discovery)
    assert panel.selected_key == "catalog:gtx-1650"


def test_export_writes_the_discovery_json(make_panel, two_gpu_discovery, tmp_path):
    panel = make_panel(two_gpu_discovery)
    path = panel.export(tmp_path / "devices.json")
    data = json.loads(path.read_text())
    assert [d["key"] for d in data["devices"]] == ["cpu", "cuda:0", "cuda:1", "catalog:gtx-1650"]
    with pytest.raises(UserError, match="cannot write"):
        panel.export(tmp_path / "missing" / "devices.json")


def test_live_group_says_why_when_nvml_cannot_start(make_panel, two_gpu_discovery, fake_nvml, fake_timer):
    class NVMLError_DriverNotLoaded(Exception):
        pass

    def refuse():
        raise NVMLError_DriverNotLoaded("Driver Not Loaded")

    fake_nvml.nvmlInit = refuse
    panel = make_panel(two_gpu_discovery)
    assert not fake_timer.isActive()
    status = panel.live_view.status
    assert status.isVisible()
    assert "Live readings are unavailable" in status.text() and "not loaded" in status.text()
    assert panel.live_view.values.values["temperature_c"].text() == NA


def test_live_group_says_why_when_nvml_does_not_list_the_gpu(make_panel, two_gpu_discovery):
    gpu = two_gpu_discovery.present_gpus[0]
    gpu.nvml_index = None
    gpu.mark_unavailable("live", "NVML has no device with this GPU's UUID or PCI bus id")
    panel = make_panel(two_gpu_discovery)
    panel.select_device(gpu.key)
    assert panel.live_view.status.isVisible()
    assert "UUID or PCI bus id" in panel.live_view.status.text()
