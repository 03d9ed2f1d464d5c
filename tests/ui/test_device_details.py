"""Every "n/a" in a device's details carries the probe's own reason, for every kind of device.

The records come from the real probes fed stand-ins that leave values out (a psutil without
clocks, an NVML whose GPU lacks sensors, a CPU-only torch), so a key the view looks up under a
wrong name, or a field a probe leaves empty without a reason, fails here.
"""

from __future__ import annotations

import types

import pytest
from PySide6.QtWidgets import QLabel

from explorer.devices.catalog import load_catalog
from explorer.devices.cpu import probe_cpu
from explorer.devices.discover import discover
from explorer.devices.model import CpuDevice
from explorer.ui.device_details import DeviceDetails, DeviceHeader, compute_rows
from explorer.ui.formatting import NA
from explorer.ui.widgets import NO_REASON
from tests.devices.fake_cuda import A100, GTX1650, make_fake_numba, make_fake_torch
from tests.devices.fake_nvml import make_fake_nvml


def _bare_psutil():
    """psutil on a system that reports cores but no clocks and no physical core count."""
    return types.SimpleNamespace(
        cpu_count=lambda logical=True: 4 if logical else None,
        cpu_freq=lambda: None,
        virtual_memory=lambda: types.SimpleNamespace(total=8 << 30, available=2 << 30),
    )


def _cpu_missing_much() -> CpuDevice:
    return probe_cpu(psutil_module=_bare_psutil(), cpuinfo_info={"brand_raw": "Some CPU"})


def _gpus(monkeypatch, visible, nvml, torch, numba):
    """The present GPUs ``discover`` makes of these stand-ins under ``CUDA_VISIBLE_DEVICES=visible``."""
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    disc = discover(include_catalog=False, probe_cpu=False, nvml=nvml, torch=torch, numba=numba)
    return disc.installed_gpus


def _gpus_nvml_only(monkeypatch):
    return _gpus(monkeypatch, None, make_fake_nvml(), make_fake_torch(None), make_fake_numba(None))


def _gpus_runtime_only(monkeypatch):
    nvml = make_fake_nvml(init_error="library_not_found")
    return _gpus(monkeypatch, None, nvml, make_fake_torch([A100, GTX1650]), make_fake_numba(None))


def _gpus_hidden(monkeypatch):
    return _gpus(monkeypatch, "", make_fake_nvml(), make_fake_torch(None), make_fake_numba(None))


def _shown_na(qtbot, device) -> dict[str, str]:
    """Every row of the details that shows n/a, with its hover text."""
    details = DeviceDetails(device)
    qtbot.addWidget(details)
    shown = {}
    for title, group in details.groups.items():
        for key, label in group.values.items():
            if label.text() == NA:
                shown[f"{title}/{key}"] = label.toolTip()
    return shown


@pytest.mark.parametrize(
    "make",
    [
        lambda mp: [_cpu_missing_much()],
        _gpus_nvml_only,
        _gpus_runtime_only,
        _gpus_hidden,
        lambda mp: load_catalog(),
    ],
    ids=["cpu", "gpu-nvml-only", "gpu-torch-only", "gpu-hidden", "catalog"],
)
def test_every_na_carries_the_probes_reason(qtbot, monkeypatch, make):
    devices = make(monkeypatch)
    assert devices
    some_na = False
    for device in devices:
        assert device.unexplained() == [], f"{device.key} leaves fields empty without a reason"
        for row, hover in _shown_na(qtbot, device).items():
            some_na = True
            assert hover and hover != NO_REASON, f"{device.key} {row}: n/a without the probe's reason"
    assert some_na  # the stand-ins do leave values out, so the check above was exercised


def test_cpu_clock_na_says_what_the_probe_said(qtbot):
    """The bug: the view asked for "cpu.frequency_mhz" where the probe stored "frequency_mhz"."""
    cpu = _cpu_missing_much()
    shown = _shown_na(qtbot, cpu)
    assert shown["Compute/frequency_mhz"] == "the operating system does not report the CPU clock"
    assert shown["Compute/physical_cores"] == "the operating system does not report physical cores"


def test_a_view_asking_for_a_field_the_record_lacks_fails_loudly():
    cpu = _cpu_missing_much()
    with pytest.raises(KeyError, match="CpuDevice has no field 'cpu.frequency_mhz'"):
        cpu.reason("cpu.frequency_mhz")
    with pytest.raises(KeyError, match="sm_count"):
        cpu.mark_unavailable("sm_count", "a CPU has no SMs")
    with pytest.raises(KeyError):
        _ = "clock_sm_mhz" in cpu.unavailable
    with pytest.raises(KeyError):
        cpu.unavailable.get("cpu.frequency_mhz")
    # every row the view builds names a field the record has (reason() would raise otherwise)
    for _label, _value, field in compute_rows(cpu):
        cpu.reason(field)


def test_devices_panel_lists_hidden_gpus_with_live_readings(qtbot, monkeypatch, fake_clock, fake_timer):
    from explorer.devices.model import HIDDEN_BY_CUDA_VISIBLE_DEVICES
    from explorer.ui.context import AppContext
    from explorer.ui.devices_panel import DevicesPanel

    nvml = make_fake_nvml()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    disc = discover(nvml=nvml, torch=make_fake_torch(None), numba=make_fake_numba(None))
    panel = DevicesPanel(AppContext(disc), nvml=nvml, clock=fake_clock, timer=fake_timer)
    qtbot.addWidget(panel)
    panel.resize(1200, 760)
    panel.show()
    try:
        assert panel.device_keys()[:3] == ["cpu", "nvml:0", "nvml:1"]
        assert "hidden from CUDA" in panel.list_texts()[2]
        assert panel.banner.isVisible()
        assert HIDDEN_BY_CUDA_VISIBLE_DEVICES in panel.banner.body_label.text()
        assert "No NVIDIA GPU was found" not in panel.banner.body_label.text()
        panel.select_device("nvml:0")
        header = panel.details.findChild(DeviceHeader)
        assert header.badge.text() == "● present on this machine · hidden from CUDA"
        assert panel.live_view is not None
        assert panel.live_view.values.values["temperature_c"].text() != NA  # NVML still reads it
    finally:
        panel.shutdown()


def test_a_cpu_peak_on_the_measured_clock_is_shown_as_theoretical_with_its_basis(
    qtbot, tmp_path, monkeypatch
):
    """The Devices panel showed the measured-clock peak (355 GFLOP/s) as "FP32 peak (estimate)"
    beside the note "2 cores x 2300 MHz x 64 FLOP/cycle ...; not a measurement", which gives 294."""
    import time

    from explorer.devices.roofs import apply_measured, fingerprint, record_roof
    from explorer.roofs import store
    from explorer.roofs.model import Ceiling
    from explorer.roofs.store import MeasuredRoof

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    ps = types.SimpleNamespace(
        cpu_count=lambda logical=True: 2,
        cpu_freq=lambda: types.SimpleNamespace(current=2300.0, max=2300.0),
        virtual_memory=lambda: types.SimpleNamespace(total=8 << 30, available=2 << 30),
    )
    info = {"brand_raw": "Test CPU", "flags": ["avx512f", "fma"]}
    before = probe_cpu(psutil_module=ps, cpuinfo_info=info)
    rows = {label: value for label, value, _ in compute_rows(before)}
    assert "FP32 peak (estimate)" in rows and rows["Clock measured"] is None
    assert any("not a measurement" in n for n in before.notes)

    now = time.time()
    store.save(
        MeasuredRoof(
            "cpu",
            fingerprint(before),
            now,
            clock_ghz=2.78,
            clock_threads=2,
            clock_method="test",
            ceilings=[
                Ceiling("compute", 277.0, "measured", "sgemm", "torch.mm", now),
                Ceiling("memory", 21.5, "measured", "DRAM", "sweep", now, level="DRAM"),
            ],
        )
    )
    after = probe_cpu(psutil_module=ps, cpuinfo_info=info)
    apply_measured(after, record_roof(after))  # as discovery does
    rows = {label: value for label, value, _ in compute_rows(after)}
    assert rows["Clock measured"] == "2.78 GHz, all cores busy"
    assert rows["FP32 peak (theoretical)"] == "355.8 GFLOP/s"  # 2 cores x 2.78 GHz x 64
    assert rows["FP32 sgemm (measured)"] == "277 GFLOP/s"
    details = DeviceDetails(after)
    qtbot.addWidget(details)
    shown = " ".join(label.text() for label in details.findChildren(QLabel))
    assert "21.5 GB/s" in shown and "not a measurement" not in shown and "2300 MHz x" not in shown
    assert "theoretical FP32 peak: measured clock 2.78 GHz x 2 cores x 64 FLOP/cycle" in shown
