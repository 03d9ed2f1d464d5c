"""The peak a measured figure is drawn against: FP32 GFLOP/s, memory GB/s, PCIe GB/s.

Peaks come from the Devices code (``explorer.devices``) and from NVML's PCIe link; where a
peak is not known it is ``None`` and no line is drawn, rather than a guess.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

# Usable GB/s per lane per direction: transfer rate (GT/s) x encoding efficiency / 8 bits.
# Gen 1-2 use 8b/10b, gen 3-5 use 128b/130b, gen 6 uses PAM4 with 242/256-byte FLITs.
PCIE_LANE_GBPS: dict[int, float] = {
    1: 2.5 * 8 / 10 / 8,
    2: 5.0 * 8 / 10 / 8,
    3: 8.0 * 128 / 130 / 8,
    4: 16.0 * 128 / 130 / 8,
    5: 32.0 * 128 / 130 / 8,
    6: 64.0 * 242 / 256 / 8,
}


def pcie_peak_gbps(generation: int | None, width: int | None) -> float | None:
    """Peak one-direction bandwidth of a PCIe link (gen3 x16 -> 15.75 GB/s), ``None`` when unknown."""
    if not generation or not width or generation not in PCIE_LANE_GBPS or width <= 0:
        return None
    return PCIE_LANE_GBPS[generation] * width


@functools.lru_cache(maxsize=8)
def device_record(device: str) -> Any:
    """The Devices panel's record for ``device`` ("cpu", "cuda:0"), or ``None`` if it cannot be had."""
    try:
        from explorer.devices.discover import discover

        disc = discover(include_catalog=False, probe_gpus=device != "cpu")
        for d in disc.devices:
            if d.key == device or (device == "cpu" and d.kind == "cpu"):
                return d
    except Exception:
        return None
    return None


def fp32_peak_gflops(device: str) -> float | None:
    rec = device_record(device)
    return getattr(rec, "fp32_peak_gflops", None)


def memory_bandwidth_gbps(device: str) -> float | None:
    rec = device_record(device)
    return getattr(rec, "memory_bandwidth_gbps", None)


def pcie_link(device: str) -> tuple[int | None, int | None]:
    """(generation, lanes) of the GPU's link *now*: read after a copy, the link is out of its idle
    power state (GPUs drop to gen1 when idle, and a reading taken then would halve the peak)."""
    rec = device_record(device)
    gen = getattr(rec, "pcie_generation", None)
    width = getattr(rec, "pcie_width", None)
    bus_id = getattr(rec, "pci_bus_id", None)
    if bus_id:
        try:
            import pynvml

            pynvml.nvmlInit()
            try:
                handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
                gen = pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)
                width = pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)
            finally:
                pynvml.nvmlShutdown()
        except Exception:
            pass
    return gen, width


@dataclass(frozen=True)
class PeakBasis:
    """Where a peak figure comes from, in a few words for the plot's label, and whether it is an
    estimate (a formula over clocks and unit counts) rather than a figure the hardware reports."""

    text: str
    is_estimate: bool


def peak_basis(device: str, unit: str, workload: str = "") -> PeakBasis:
    """Taken from the device record, which says how it worked its peak out (an empty basis: a figure
    read off, not derived)."""
    if workload == "copies":
        return PeakBasis("PCIe link maximum (generation x lanes)", False)
    rec = device_record(device)
    field = {"GFLOP/s": "fp32_peak_basis", "GB/s": "memory_bandwidth_basis"}.get(unit)
    text = getattr(rec, field, "") if field else ""
    return PeakBasis(text, bool(text))
