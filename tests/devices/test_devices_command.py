"""``device-explorer devices``: the JSON schema scripts rely on, and the text a student reads."""

from __future__ import annotations

import functools
import json

import pytest

import explorer.commands.devices as devices_command
from explorer.cli import main
from explorer.devices.discover import discover
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml

DEVICE_KEYS = {
    "kind",
    "name",
    "index",
    "key",
    "present",
    "vendor",
    "uuid",
    "pci_bus_id",
    "nvml_index",
    "driver_version",
    "cuda_driver_version",
    "compute_capability",
    "architecture",
    "sm_count",
    "cuda_cores_per_sm",
    "clock_sm_mhz",
    "clock_sm_max_mhz",
    "fp32_peak_gflops",
    "memory_total_bytes",
    "memory_bus_width_bits",
    "memory_bandwidth_gbps",
    "pcie_generation",
    "pcie_width",
    "mig_mode",
    "limits",
    "live",
    "processes",
    "cpu",
    "form_factor",
    "source",
    "unavailable",
    "notes",
}


@pytest.fixture
def with_gpus(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fake = functools.partial(
        discover,
        nvml=make_fake_nvml(),
        torch=make_fake_torch([A100, GTX1650]),
        numba=make_fake_numba([A100, GTX1650]),
    )
    monkeypatch.setattr(devices_command, "discover", fake)


@pytest.fixture
def without_gpus(monkeypatch):
    fake = functools.partial(
        discover,
        nvml=make_fake_nvml(init_error="library_not_found"),
        torch=make_fake_torch(None),
        numba=make_fake_numba(None),
    )
    monkeypatch.setattr(devices_command, "discover", fake)


def _json(capsys, *argv: str) -> dict:
    assert main(["devices", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_schema_is_stable(capsys, with_gpus):
    data = _json(capsys)
    assert set(data) == {"devices", "probes", "why_no_gpu", "roofs"}
    for dev in data["devices"]:
        assert DEVICE_KEYS <= set(dev), DEVICE_KEYS - set(dev)
        assert all(k == k.lower() and " " not in k for k in dev)
    for probe in data["probes"]:
        assert set(probe) == {"probe", "ok", "message", "devices_found", "timed_out"}
    cpu, a100, gtx = data["devices"]
    assert cpu["kind"] == "cpu" and cpu["cpu"]["logical_cores"] >= 1 and cpu["memory_total_bytes"] > 0
    assert (a100["key"], a100["compute_capability"], a100["sm_count"], a100["present"]) == (
        "cuda:0",
        "8.0",
        108,
        True,
    )
    assert a100["live"]["unavailable"]["temperature_c"] == "not supported by this GPU or driver"
    assert a100["limits"]["max_block_dim"] == [1024, 1024, 64]
    assert gtx["processes"] == [{"pid": 4242, "name": "python", "used_memory_bytes": 300 * 1024**2}]
    assert data["why_no_gpu"] is None


def test_catalog_only_with_flag(capsys, with_gpus):
    assert not [d for d in _json(capsys)["devices"] if d["kind"] == "catalog"]
    catalog = [d for d in _json(capsys, "--catalog")["devices"] if d["kind"] == "catalog"]
    assert len(catalog) >= 12
    assert all(d["present"] is False and d["compute_capability"] and d["sm_count"] for d in catalog)


def test_text_lists_devices_and_says_why_no_gpu(capsys, without_gpus):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:2] == ["device", "name"]
    assert "NVML library not found: no NVIDIA driver is installed." in out
    assert "torch was built without CUDA" in out
    assert "--catalog" in out


def test_text_with_catalog_marks_sheets_not_present(capsys, without_gpus):
    assert main(["devices", "--catalog"]) == 0
    out = capsys.readouterr().out
    gtx_line = next(line for line in out.splitlines() if "GTX 1650" in line)
    assert "catalog (not present)" in gtx_line and "7.5" in gtx_line and "16 SMs" in gtx_line


def test_real_machine_json_lists_the_cpu(capsys):
    """Unfaked: on any machine the CPU is there, and either GPUs or the reason for none."""
    data = _json(capsys)
    cpu = data["devices"][0]
    assert cpu["key"] == "cpu" and cpu["cpu"]["physical_cores"] and cpu["memory_total_bytes"] > 0
    gpus = [d for d in data["devices"] if d["kind"] == "cuda"]
    assert gpus or data["why_no_gpu"]


def test_text_shows_live_readings_and_the_missing_sensor(capsys, with_gpus):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    a100_live = next(line for line in out.splitlines() if line.strip().startswith("cuda:0 now:"))
    assert "97% of the time (not SM load)" in a100_live
    assert "temperature n/a (not supported by this GPU or driver)" in a100_live
    assert "250 W of 400 W" in a100_live
    assert "No NVIDIA GPU" not in out


def test_every_kind_of_record_keeps_every_key_of_the_schema(capsys, with_gpus):
    """CPU, present GPU and catalog records are different types now; the JSON a script reads is not."""
    data = _json(capsys, "--catalog")
    kinds = {dev["kind"] for dev in data["devices"]}
    assert kinds == {"cpu", "cuda", "catalog"}
    for dev in data["devices"]:
        assert DEVICE_KEYS <= set(dev), (dev["kind"], DEVICE_KEYS - set(dev))
    cpu = data["devices"][0]
    # a CPU has no SMs, and says so as it always did: null, not a missing key
    assert cpu["sm_count"] is None and cpu["compute_capability"] is None
    assert (
        cpu["clock_sm_max_mhz"] == int(cpu["cpu"]["frequency_max_mhz"] or 0)
        or cpu["clock_sm_max_mhz"] is None
    )
    sheet = next(d for d in data["devices"] if d["kind"] == "catalog")
    assert sheet["present"] is False and sheet["pci_bus_id"] is None and sheet["form_factor"]


def test_json_and_text_carry_pcie_traffic_and_what_utilization_hides(capsys, monkeypatch):
    """A Hopper GPU: ``devices --json`` has SM activity and occupancy beside utilization (GPM) and
    the PCIe traffic in both directions; the text says them in words, a GPU without GPM says why."""
    from tests.devices.fake_nvml import FakeGpu, hopper_gpu

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fake = functools.partial(
        discover,
        nvml=make_fake_nvml([hopper_gpu(), FakeGpu()]),
        torch=make_fake_torch(None),
        numba=make_fake_numba(None),
    )
    monkeypatch.setattr(devices_command, "discover", fake)
    data = _json(capsys)
    h100, gtx = (d for d in data["devices"] if d["kind"] == "cuda")
    assert h100["live"]["utilization_gpu_pct"] == 100.0
    assert h100["live"]["sm_activity_pct"] == pytest.approx(0.76)
    assert h100["live"]["sm_occupancy_pct"] == pytest.approx(0.05)
    assert h100["live"]["pcie_rx_bytes_per_s"] == 48_000_000 * 1024
    assert gtx["live"]["sm_activity_pct"] is None
    assert "Hopper or newer" in gtx["live"]["unavailable"]["sm_activity_pct"]
    assert main(["devices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    h100_live = next(line for line in lines if line.strip().startswith("cuda:0 now:"))
    assert "SM activity 0.76 %, SM occupancy 0.05 % (NVML GPM)" in h100_live
    assert "PCIe in 49.2 GB/s, out 2 MB/s" in h100_live
    gtx_live = next(line for line in lines if line.strip().startswith("cuda:1 now:"))
    assert "SM activity n/a (NVML's GPM metrics are not available" in gtx_live
