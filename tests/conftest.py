"""Test-wide settings: Qt renders offscreen, numba's CUDA simulator is never on by accident."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Keep any settings/results a test writes out of the user's real folders.
os.environ.setdefault(
    "DEVICE_EXPLORER_HOME", os.path.join(os.environ.get("TMPDIR", "/tmp"), "device-explorer-tests")
)


import pytest  # noqa: E402


@pytest.fixture
def cpu_record(monkeypatch):
    """A 2-core AVX-512 CPU record (its reported clock gives the old estimate), which the bench's
    peaks take for this machine's CPU: the roofline tests seed its measured ceilings."""
    from explorer.bench import peaks
    from explorer.devices.model import CpuDevice

    rec = CpuDevice(
        name="Test CPU",
        key="cpu",
        fp32_peak_gflops=294.4,
        fp32_peak_basis="estimate from maximum clock",
        memory_total_bytes=16 * 2**30,
        physical_cores=2,
        logical_cores=4,
        isa_flags=["avx", "avx2", "fma", "avx512f"],
    )
    monkeypatch.setattr(peaks, "device_record", {"cpu": rec}.get)
    return rec
