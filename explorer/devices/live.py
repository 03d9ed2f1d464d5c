"""A present GPU's live use, as NVML reads it: one sample of its sensors, and the processes on it.

Kept apart from the device records (``explorer.devices.model``) because only a GPU in this
machine has them, and only the device list, the live monitor and the agent read them: a launch
on a spec sheet never builds these classes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from explorer.devices.model import FieldReasons


@dataclass
class GpuProcess:
    """A process using a present GPU, as NVML lists it (its memory where NVML says)."""

    pid: int
    name: str
    used_memory_bytes: int | None = None


@dataclass(kw_only=True)
class LiveReading:
    """One sample of a present GPU's sensors, taken through NVML.

    ``utilization_gpu_pct`` is NVML's "GPU utilization": the share of the last sample period
    in which at least one kernel was running. It is *not* how busy the SMs were: that is
    ``sm_activity_pct`` (the share of SMs that had work, averaged over the time since the
    previous reading) and ``sm_occupancy_pct`` (the share of the SMs' warp slots in use), which
    NVML's GPM metrics give on Hopper and newer GPUs only; elsewhere they are missing with the
    reason. ``pcie_rx_bytes_per_s`` / ``pcie_tx_bytes_per_s`` are the PCIe traffic into and out
    of the GPU, as NVML counts it over a 20 ms window (``nvmlDeviceGetPcieThroughput``).
    """

    SENSORS: ClassVar[tuple[str, ...]] = (
        "utilization_gpu_pct",
        "utilization_memory_pct",
        "memory_used_bytes",
        "memory_total_bytes",
        "temperature_c",
        "power_draw_w",
        "power_limit_w",
        "clock_sm_mhz",
        "clock_memory_mhz",
        "pcie_rx_bytes_per_s",
        "pcie_tx_bytes_per_s",
        "sm_activity_pct",
        "sm_occupancy_pct",
    )

    timestamp_s: float
    utilization_gpu_pct: float | None = None
    utilization_memory_pct: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    temperature_c: float | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    clock_sm_mhz: int | None = None
    clock_memory_mhz: int | None = None
    pcie_rx_bytes_per_s: float | None = None  # host -> GPU
    pcie_tx_bytes_per_s: float | None = None  # GPU -> host
    sm_activity_pct: float | None = None  # NVML GPM: share of SMs busy since the last reading
    sm_occupancy_pct: float | None = None  # NVML GPM: share of warp slots in use since then
    unavailable: FieldReasons = field(default_factory=FieldReasons)

    def __post_init__(self) -> None:
        # a fresh FieldReasons each time, so a record made by dataclasses.replace shares none with its original
        self.unavailable = FieldReasons(dict(self.unavailable.items())).bind(type(self))

    @classmethod
    def failed(cls, timestamp_s: float, reason: str) -> LiveReading:
        """A reading in which no sensor could be read, each one saying why."""
        reading = cls(timestamp_s=timestamp_s)
        for name in cls.SENSORS:
            reading.unavailable.mark(name, reason)
        return reading

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["unavailable"] = self.unavailable.to_dict()
        return data
