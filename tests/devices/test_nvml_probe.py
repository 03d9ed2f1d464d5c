"""The NVML probe against a stand-in pynvml: per-field failures, plain init errors, live reads."""

from __future__ import annotations

import pytest

from explorer.devices.nvml import NvmlSession, NvmlUnavailable, probe_nvml, read_live
from tests.devices.fake_nvml import FakeGpu, make_fake_nvml


def test_two_gpus_listed_with_identity_memory_clocks_pcie_and_processes():
    fake = make_fake_nvml()
    result = probe_nvml(fake, env={})
    assert result.report.ok and result.report.devices_found == 2
    gtx, a100 = result.devices
    assert gtx.name == "NVIDIA GeForce GTX 1650" and a100.name == "NVIDIA A100-SXM4-40GB"
    assert gtx.uuid == "GPU-11111111-2222-3333-4444-555555555555"
    assert gtx.pci_bus_id == "00000000:01:00.0"
    assert gtx.driver_version == "550.54.14" and gtx.cuda_driver_version == "12.4"
    assert gtx.compute_capability == (7, 5) and a100.compute_capability == (8, 0)
    assert gtx.memory_total_bytes == 4 * 1024**3
    assert (gtx.clock_sm_mhz, gtx.clock_sm_max_mhz, gtx.clock_memory_max_mhz) == (300, 2100, 4001)
    assert (gtx.pcie_generation, gtx.pcie_generation_max, gtx.pcie_width_max) == (1, 3, 16)
    assert [(p.pid, p.name, p.used_memory_bytes) for p in gtx.processes] == [(4242, "python", 300 * 1024**2)]
    assert a100.mig_mode == "disabled"
    assert gtx.mig_mode is None and "mig_mode" in gtx.unavailable  # no MIG on a GeForce: said, not hidden
    assert fake.initialized == 0, "the probe must shut NVML down again"


def test_unsupported_temperature_blanks_only_that_field():
    result = probe_nvml(make_fake_nvml(), env={})
    gtx, a100 = result.devices
    assert a100.live.temperature_c is None
    assert a100.live.unavailable["temperature_c"] == "not supported by this GPU or driver"
    # every other reading of the same GPU is still there
    assert a100.live.power_draw_w == pytest.approx(250.0)
    assert a100.live.power_limit_w == pytest.approx(400.0)
    assert a100.live.utilization_gpu_pct == 97.0
    assert a100.live.memory_used_bytes == 1024**3
    assert gtx.live.temperature_c == 45.0
    # a Turing GPU has no GPM: its SM activity and occupancy are missing with that reason, nothing else is
    assert set(gtx.live.unavailable) == {"sm_activity_pct", "sm_occupancy_pct"}
    assert "Hopper or newer" in gtx.live.unavailable["sm_activity_pct"]


def test_a_failing_static_query_marks_that_field_with_its_reason():
    gpu = FakeGpu(
        fail={"nvmlDeviceGetMaxPcieLinkGeneration": "no_permission", "nvmlDeviceGetName": "unknown"}
    )
    (dev,) = probe_nvml(make_fake_nvml([gpu]), env={}).devices
    assert dev.pcie_generation_max is None
    assert "permission" in dev.unavailable["pcie_generation_max"]
    assert dev.name == "NVIDIA GPU 0" and "name" in dev.unavailable
    assert dev.pcie_generation == 1 and dev.memory_total_bytes == 4 * 1024**3


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ("library_not_found", "NVML library not found: no NVIDIA driver is installed."),
        ("driver_not_loaded", "driver is installed but not loaded"),
        ("lib_rm_version_mismatch", "reboot"),
        ("no_permission", "No permission"),
    ],
)
def test_nvml_that_cannot_start_is_explained_in_plain_words(error, words):
    result = probe_nvml(make_fake_nvml(init_error=error), env={})
    assert not result.report.ok and result.devices == []
    assert words in result.report.message


def test_zero_gpus_is_not_ok_and_says_so():
    result = probe_nvml(make_fake_nvml([]), env={})
    assert not result.report.ok and "no NVIDIA GPU" in result.report.message


def test_session_reads_live_values_cheaply_and_sees_changes():
    fake = make_fake_nvml()
    ticks = iter([10.0, 11.0])
    with NvmlSession(fake, clock=lambda: next(ticks)) as session:
        first = session.read_live(0)
        fake.gpus[0].temperature_c = 71
        fake.gpus[0].power_draw_w = 42.25
        fake.calls.clear()
        second = session.read_live(0)
        live_calls = list(fake.calls)
    assert (first.timestamp_s, second.timestamp_s) == (10.0, 11.0)
    assert first.temperature_c == 45.0 and second.temperature_c == 71.0
    assert second.power_draw_w == pytest.approx(42.25)
    # the handle is kept: a live read is only the sensor calls, no handle look-up or init; a GPU
    # without GPM was asked once whether it has it, and is not asked again
    assert "nvmlDeviceGetHandleByIndex" not in live_calls and "nvmlInit" not in live_calls
    assert len(live_calls) == 9 and live_calls.count("nvmlDeviceGetPcieThroughput") == 2
    assert not [c for c in live_calls if c.startswith("nvmlGpm")]
    assert fake.initialized == 0


def test_module_level_read_live_accepts_an_index():
    fake = make_fake_nvml()
    fake.nvmlInit()
    live = read_live(fake, 1, clock=lambda: 5.0)
    assert live.timestamp_s == 5.0 and live.utilization_gpu_pct == 97.0
    assert "temperature_c" in live.unavailable


def test_session_init_raises_plain_unavailable():
    with pytest.raises(NvmlUnavailable, match="no NVIDIA driver is installed"):
        NvmlSession(make_fake_nvml(init_error="library_not_found")).init()


def test_process_name_falls_back_when_nvml_may_not_read_it():
    gpu = FakeGpu()
    from tests.devices.fake_nvml import FakeProcess

    gpu.processes = [FakeProcess(999_999_999, "ghost", None)]
    (dev,) = probe_nvml(make_fake_nvml([gpu], process_names_visible=False), env={}).devices
    assert dev.processes[0].pid == 999_999_999
    assert dev.processes[0].name == "pid 999999999"
    assert dev.processes[0].used_memory_bytes is None


def test_fake_uses_only_names_the_real_pynvml_has():
    """The stand-in must not drift from nvidia-ml-py: every name it offers exists in the real module."""
    real = pytest.importorskip("pynvml")
    fake = make_fake_nvml()
    names = [n for n in vars(fake) if n.startswith(("nvml", "NVML"))]
    assert len(names) > 30
    missing = [n for n in names if not hasattr(real, n)]
    assert missing == []
    consts = [n for n in names if n.startswith("NVML_")]
    assert [c for c in consts if getattr(fake, c) != getattr(real, c)] == []
    assert issubclass(real.NVMLError_NotSupported, real.NVMLError)
    assert fake.NVMLError_NotSupported(3).value == real.NVMLError_NotSupported(3).value
