"""What the device probes found: every device, each probe's report, and the probes still running.

``explorer.devices.discover`` runs the probes and returns this record; the device list, the
``devices`` command and a remote's answer (``explorer.remote.records``) all read it. Its own
module so that answering a name from the spec sheets alone (``explorer.devices.find``) does
not build it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from explorer.devices.model import (
    HIDDEN_BY_CUDA_VISIBLE_DEVICES,
    NO_GPU_FOUND,
    CatalogGpu,
    CpuDevice,
    CudaGpu,
    Device,
)
from explorer.devices.names import candidates
from explorer.words import count


@dataclass
class ProbeReport:
    """What one probe found, and in plain words why it found nothing when it did not."""

    probe: str  # "cpu", "nvml", "driver" (the CUDA driver API), "torch", "numba", "catalog"
    ok: bool
    message: str
    devices_found: int = 0
    #: the probe was given up on at its deadline (a hung driver): it may have had GPUs to report
    timed_out: bool = False


@dataclass
class Discovery:
    devices: list[Device]
    reports: list[ProbeReport]
    #: probes still running (progressive discovery shows what the finished ones found)
    pending: list[str] = field(default_factory=list)

    @property
    def present_gpus(self) -> list[CudaGpu]:
        """The GPUs CUDA can use here, by CUDA index: what benchmarks may be offered."""
        return [d for d in self.devices if d.kind == "cuda" and d.usable]

    @property
    def hidden_gpus(self) -> list[CudaGpu]:
        """GPUs in this machine that NVML lists but CUDA cannot use here (``CUDA_VISIBLE_DEVICES``)."""
        return [d for d in self.devices if d.kind == "cuda" and not d.usable]

    @property
    def installed_gpus(self) -> list[CudaGpu]:
        """Every GPU in this machine: the usable ones, then the hidden ones."""
        return [d for d in self.devices if d.kind == "cuda"]

    @property
    def catalog(self) -> list[CatalogGpu]:
        return [d for d in self.devices if d.kind == "catalog"]

    @property
    def cpu(self) -> CpuDevice | None:
        return next((d for d in self.devices if d.kind == "cpu"), None)

    def report(self, probe: str) -> ProbeReport | None:
        return next((r for r in self.reports if r.probe == probe), None)

    def why_no_gpu(self) -> str | None:
        """One paragraph for the no-GPU banner; ``None`` when a usable GPU is present, or while
        probes that could still find one are running.

        GPUs that NVML lists but ``CUDA_VISIBLE_DEVICES`` hides are named as such: the banner
        never claims there is no GPU when there is one.
        """
        if self.present_gpus:
            return None
        if self.pending and not self.installed_gpus:
            return None  # torch or numba may still find one: no banner until they have answered
        hidden = self.hidden_gpus
        if hidden:
            names = ", ".join(d.name for d in hidden)
            return (
                f"No GPU is usable from CUDA here: this machine has {count(len(hidden), 'NVIDIA GPU')} "
                f"({names}), {HIDDEN_BY_CUDA_VISIBLE_DEVICES}. "
                "Unset CUDA_VISIBLE_DEVICES, or list the GPU in it, to use it."
            )
        failed = [r for r in self.reports if r.probe in ("nvml", "driver", "torch", "numba") and not r.ok]
        # torch and numba skipped for the same reason (a quick probe) say it once, not twice
        reasons = list(dict.fromkeys(r.message for r in failed))
        if any(r.timed_out for r in failed):
            return (
                "No NVIDIA GPU could be listed: a driver did not answer in time, so this machine may have "
                "one that is not responding. " + " ".join(reasons)
            )
        return " ".join([NO_GPU_FOUND, *reasons])

    def to_dict(self) -> dict[str, Any]:
        return {
            "devices": [d.to_dict() for d in self.devices],
            "probes": [dataclasses.asdict(r) for r in self.reports],
        }

    def find(self, query: str) -> list[Device]:
        """Devices ``query`` names exactly, else those whose key or name contains it, ignoring case,
        spaces, dashes and underscores ("1650", "gtx1650", "h100", "cuda:0"): ``names.candidates``."""
        return candidates(query, self.devices)
