"""What "GPU utilization" hides, read through the stand-in NVML: PCIe traffic in each direction,
and on GPUs with NVML GPM (Hopper and newer) SM activity and SM occupancy beside utilization."""

from __future__ import annotations

import pytest

from explorer.devices.gpm import NO_DATA_YET, NO_GPM_FUNCTIONS, GpmReader
from explorer.devices.live import LiveReading
from explorer.devices.nvml import NvmlSession, probe_nvml, read_live
from explorer.devices.nvml_errors import MISSING_QUERY
from explorer.remote.records import live_from_dict
from tests.devices.fake_nvml import FakeGpu, hopper_gpu, make_fake_nvml


def test_pcie_traffic_is_read_in_bytes_per_second_for_each_direction():
    fake = make_fake_nvml([FakeGpu(pcie_rx_kib_s=1_500_000, pcie_tx_kib_s=250)])
    with NvmlSession(fake) as session:
        live = session.read_live(0)
    assert live.pcie_rx_bytes_per_s == 1_500_000 * 1024  # NVML counts KiB/s, over 20 ms
    assert live.pcie_tx_bytes_per_s == 250 * 1024
    assert "pcie_rx_bytes_per_s" not in live.unavailable


def test_a_gpu_that_cannot_count_pcie_traffic_says_so_and_keeps_the_rest():
    fake = make_fake_nvml([FakeGpu(fail={"nvmlDeviceGetPcieThroughput": "not_supported"})])
    with NvmlSession(fake) as session:
        live = session.read_live(0)
    assert live.pcie_rx_bytes_per_s is None and live.pcie_tx_bytes_per_s is None
    assert live.unavailable["pcie_rx_bytes_per_s"] == "not supported by this GPU or driver"
    assert live.temperature_c == 45.0 and live.utilization_gpu_pct == 3.0


def test_on_a_hopper_gpu_sm_activity_and_occupancy_follow_the_gpu_from_the_second_reading():
    fake = make_fake_nvml([hopper_gpu()])
    with NvmlSession(fake) as session:
        first = session.read_live(0)
        second = session.read_live(0)
        fake.gpus[0].sm_activity_pct, fake.gpus[0].sm_occupancy_pct = 97.5, 61.0
        third = session.read_live(0)
        assert fake.gpm_samples_held == 1  # the one kept for the next reading
    assert fake.gpm_samples_held == 0  # shutting the session down frees it
    assert first.sm_activity_pct is None and first.unavailable["sm_activity_pct"] == NO_DATA_YET
    # the utilization trap, as the Devices page reads it: 100% "utilization", under 1% of the SMs busy
    assert second.utilization_gpu_pct == 100.0
    assert second.sm_activity_pct == pytest.approx(0.76) and second.sm_occupancy_pct == pytest.approx(0.05)
    assert "sm_activity_pct" not in second.unavailable
    assert (third.sm_activity_pct, third.sm_occupancy_pct) == (97.5, 61.0)


def test_devices_lists_a_hopper_gpu_with_its_sm_activity_at_once_and_leaks_no_sample():
    """``devices`` reads each GPU once: the probe waits one short gap for the second GPM sample."""
    fake = make_fake_nvml([hopper_gpu(), FakeGpu()])
    h100, gtx = probe_nvml(fake, env={}).devices
    assert h100.live.sm_activity_pct == pytest.approx(0.76)
    assert h100.live.sm_occupancy_pct == pytest.approx(0.05)
    assert "sm_activity_pct" not in h100.live.unavailable
    assert gtx.live.sm_activity_pct is None and "Hopper or newer" in gtx.live.unavailable["sm_activity_pct"]
    assert fake.gpm_samples_held == 0 and fake.initialized == 0


def test_a_metric_the_driver_refuses_blanks_only_that_metric():
    fake = make_fake_nvml([hopper_gpu()])
    fake.NVML_GPM_METRIC_SM_OCCUPANCY = 399  # a metric id this driver does not know
    fake.nvmlInit()
    reader = GpmReader(fake, fake.nvmlDeviceGetHandleByIndex(0))
    reader.read()
    result = reader.read()
    reader.close()
    assert result.values == {"sm_activity_pct": pytest.approx(0.76)}
    assert result.reasons == {"sm_occupancy_pct": "not supported by this GPU or driver"}


def test_a_refused_gpm_sample_is_a_lasting_reason_and_is_not_asked_again():
    gpu = hopper_gpu()
    gpu.fail["nvmlGpmSampleGet"] = "no_permission"
    fake = make_fake_nvml([gpu])
    with NvmlSession(fake) as session:
        first = session.read_live(0)
        fake.calls.clear()
        second = session.read_live(0)
    assert "no permission" in first.unavailable["sm_activity_pct"]
    assert second.unavailable["sm_occupancy_pct"] == first.unavailable["sm_occupancy_pct"]
    assert not [c for c in fake.calls if c.startswith("nvmlGpm")]
    assert fake.gpm_samples_held == 0


def test_an_nvml_library_without_pcie_or_gpm_queries_says_it_is_too_old():
    fake = make_fake_nvml([hopper_gpu()])
    for name in ("nvmlDeviceGetPcieThroughput", "nvmlGpmQueryDeviceSupport", "nvmlGpmMetricsGet"):
        delattr(fake, name)
    fake.nvmlInit()
    live = read_live(fake, 0, gpm=GpmReader(fake, 0))
    assert live.unavailable["pcie_tx_bytes_per_s"] == MISSING_QUERY
    assert live.unavailable["sm_activity_pct"] == NO_GPM_FUNCTIONS
    assert live.power_draw_w == pytest.approx(120.0)


def test_a_one_off_read_without_a_gpm_reader_says_the_metrics_were_not_read():
    fake = make_fake_nvml([hopper_gpu()])
    fake.nvmlInit()
    live = read_live(fake, 0)
    assert live.sm_activity_pct is None and "not read" in live.unavailable["sm_activity_pct"]


def test_samples_out_of_order_are_refused_by_the_stand_in_as_by_nvml():
    """The stand-in is only worth testing against if it refuses what the real library refuses."""
    fake = make_fake_nvml([hopper_gpu()])
    fake.nvmlInit()
    handle = fake.nvmlDeviceGetHandleByIndex(0)
    early, late = fake.nvmlGpmSampleAlloc(), fake.nvmlGpmSampleAlloc()
    fake.nvmlGpmSampleGet(handle, early)
    fake.nvmlGpmSampleGet(handle, late)
    request = fake.c_nvmlGpmMetricsGet_t()
    request.version, request.numMetrics = fake.NVML_GPM_METRICS_GET_VERSION, 1
    request.sample1, request.sample2 = late, early
    with pytest.raises(fake.NVMLError_InvalidArgument):
        fake.nvmlGpmMetricsGet(request)


def test_the_new_readings_travel_from_a_remote_agent_unchanged():
    reading = LiveReading(
        timestamp_s=3.0,
        pcie_rx_bytes_per_s=5.5e10,
        pcie_tx_bytes_per_s=1.0e6,
        sm_activity_pct=0.76,
        sm_occupancy_pct=0.05,
    )
    reading.unavailable.mark("temperature_c", "not supported by this GPU or driver")
    back = live_from_dict(reading.to_dict())
    assert back == reading
