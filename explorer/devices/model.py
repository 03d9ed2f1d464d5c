"""Records that describe a compute device, whatever probe found it.

Every probe (CPU, NVML, CUDA runtime, catalog) fills the same ``Device`` record so the
views and the launch maths never care where a number came from. A value a probe could not
read stays ``None`` and its reason goes into ``Device.unavailable`` under the field's name:
one unsupported sensor must never blank a whole device (nvitop's lesson).

Units are in the field names (``_bytes``, ``_mhz``, ``_w``, ``_c``, ``_pct``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DeviceKind = Literal["cpu", "cuda", "catalog"]


@dataclass
class CudaLimits:
    """What the CUDA runtime (or the per-CC table, for catalog devices) allows on this device."""

    max_threads_per_block: int | None = None
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    warp_size: int | None = None
    max_block_dim: tuple[int, int, int] | None = None
    max_grid_dim: tuple[int, int, int] | None = None
    shared_mem_per_block_bytes: int | None = None
    shared_mem_per_block_optin_bytes: int | None = None
    shared_mem_per_sm_bytes: int | None = None
    regs_per_block: int | None = None
    regs_per_sm: int | None = None
    l2_cache_bytes: int | None = None


@dataclass
class GpuProcess:
    pid: int
    name: str
    used_memory_bytes: int | None = None


@dataclass
class LiveReading:
    """One sample of a present GPU's sensors, taken through NVML.

    ``utilization_gpu_pct`` is NVML's "GPU utilization": the share of the last sample period
    in which at least one kernel was running. It is *not* how busy the SMs were.
    """

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
    unavailable: dict[str, str] = field(default_factory=dict)


@dataclass
class CpuDetails:
    physical_cores: int | None = None
    logical_cores: int | None = None
    frequency_mhz: float | None = None
    frequency_max_mhz: float | None = None
    architecture: str | None = None
    isa_flags: list[str] = field(
        default_factory=list
    )  # the speed-relevant ones: avx2, avx512f, fma, neon ...
    memory_available_bytes: int | None = None


@dataclass
class Device:
    """One compute device: the CPU, a present NVIDIA GPU, or a catalog spec sheet.

    ``kind == "catalog"`` means *not present on this machine*: it exists so lessons work on
    any laptop, and it must never be offered for benchmarks nor shown as installed.
    """

    kind: DeviceKind
    name: str
    index: int | None = None  # CUDA ordinal for kind "cuda" (as torch/numba number them)
    key: str = ""  # stable id: "cpu", "cuda:0", "catalog:h100-sxm5"
    vendor: str | None = None
    # identity (present GPUs)
    uuid: str | None = None
    pci_bus_id: str | None = None
    nvml_index: int | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    # compute
    compute_capability: tuple[int, int] | None = None
    architecture: str | None = None  # "Turing", "Hopper", ...
    sm_count: int | None = None
    cuda_cores_per_sm: int | None = None
    clock_sm_mhz: int | None = None  # current
    clock_sm_max_mhz: int | None = None  # boost / max
    clock_sm_base_mhz: int | None = None  # catalog: the sheet's base clock
    fp32_peak_gflops: float | None = None
    #: how that peak was had where it is worked out rather than read off a sheet (benchmarks label it)
    fp32_peak_basis: str = ""
    # memory
    memory_total_bytes: int | None = None
    memory_bus_width_bits: int | None = None
    clock_memory_mhz: int | None = None
    clock_memory_max_mhz: int | None = None
    memory_bandwidth_gbps: float | None = None  # GB/s, 1e9 bytes per second
    memory_bandwidth_basis: str = ""  # as fp32_peak_basis
    memory_type: str | None = None
    # bus
    pcie_generation: int | None = None
    pcie_width: int | None = None
    pcie_generation_max: int | None = None
    pcie_width_max: int | None = None
    mig_mode: str | None = None  # "enabled" / "disabled" / None where the GPU has no MIG
    # limits and live state
    limits: CudaLimits | None = None
    live: LiveReading | None = None
    processes: list[GpuProcess] = field(default_factory=list)
    cpu: CpuDetails | None = None
    form_factor: str | None = None  # catalog: "laptop", "desktop", "data centre"
    tdp_w: float | None = None  # catalog: board power / TDP from the sheet
    chip: str | None = None  # catalog: GPU die, e.g. "TU117"
    # where the numbers came from, and why some are missing
    source: str = ""
    unavailable: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def present(self) -> bool:
        return self.kind != "catalog"

    @property
    def is_gpu(self) -> bool:
        return self.kind in ("cuda", "catalog")

    @property
    def cc_string(self) -> str | None:
        if self.compute_capability is None:
            return None
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    @property
    def display_name(self) -> str:
        if self.kind == "catalog":
            return f"{self.name} (catalog, not present)"
        if self.kind == "cuda" and self.index is not None:
            return f"{self.name} (cuda:{self.index})"
        return self.name

    def mark_unavailable(self, field_name: str, reason: str) -> None:
        self.unavailable.setdefault(field_name, reason)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable snake_case keys (the CLI's ``--json`` schema)."""
        data = asdict(self)
        data["present"] = self.present
        data["compute_capability"] = self.cc_string
        return data


@dataclass
class ProbeReport:
    """What one probe found, and in plain words why it found nothing when it did not."""

    probe: str  # "cpu", "nvml", "torch", "numba", "catalog"
    ok: bool
    message: str
    devices_found: int = 0


@dataclass
class Discovery:
    devices: list[Device]
    reports: list[ProbeReport]

    @property
    def present_gpus(self) -> list[Device]:
        return [d for d in self.devices if d.kind == "cuda"]

    @property
    def catalog(self) -> list[Device]:
        return [d for d in self.devices if d.kind == "catalog"]

    @property
    def cpu(self) -> Device | None:
        return next((d for d in self.devices if d.kind == "cpu"), None)

    def why_no_gpu(self) -> str | None:
        """One paragraph for the no-GPU banner; ``None`` when a GPU is present."""
        if self.present_gpus:
            return None
        reasons = [r.message for r in self.reports if r.probe in ("nvml", "torch", "numba") and not r.ok]
        if not reasons:
            return "No NVIDIA GPU was found on this machine."
        return "No NVIDIA GPU was found on this machine. " + " ".join(reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "devices": [d.to_dict() for d in self.devices],
            "probes": [asdict(r) for r in self.reports],
        }

    def find(self, query: str) -> list[Device]:
        """Devices whose key or name contains ``query``, case-insensitively ("1650", "h100", "cuda:0")."""
        q = query.strip().lower()
        exact = [d for d in self.devices if d.key.lower() == q or d.name.lower() == q]
        if exact:
            return exact
        return [d for d in self.devices if q in d.name.lower() or q in d.key.lower()]
