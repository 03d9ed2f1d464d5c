"""Typed records for the compute devices the app knows: one record type per kind of device.

``CpuDevice`` (the host CPU), ``CudaGpu`` (an NVIDIA GPU in this machine) and ``CatalogGpu``
(a spec sheet of a GPU that is *not* here) each carry only the fields that kind of device
has: a CPU has cores and an instruction set, not SMs; a catalog sheet has a board power, not
a PCI bus id. ``Device`` is the union of them, so code that takes "any device" says so, and a
``d.kind == "cpu"`` check narrows it for the type checker.

Why a record's missing fields carry their reason in ``unavailable`` (a ``FieldReasons``),
rather than each field holding a small ``Missing(reason)`` value: the launch maths, the bench
peaks and the visualizer read plain ``int | None`` fields (``sm_count``, ``fp32_peak_gflops``)
in many places; a ``Missing`` value would have to be unwrapped at every one of them, and a
forgotten unwrap turns into arithmetic on an object. Keeping values plain and their reasons
beside them changes no reader, and ``FieldReasons`` is *checked*: it knows the field names of
the record it belongs to, so marking or asking for a name the record does not have raises
``KeyError`` at once. A view that looks up ``"cpu.frequency_mhz"`` on a record whose field is
``frequency_mhz`` fails in its test instead of silently showing "no reason" for ever.

Units are in the field names (``_bytes``, ``_mhz``, ``_w``, ``_c``, ``_pct``). The JSON form
(``to_dict``, the CLI's ``devices --json``) keeps every key the single ``Device`` record of
earlier versions had, ``None`` where a kind has no such field, so scripts keep working.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:  # records of their own modules, which a launch on a spec sheet never loads
    from explorer.devices.caches import CpuCache
    from explorer.devices.live import GpuProcess, LiveReading

DeviceKind = Literal["cpu", "cuda", "catalog"]


class FieldReasons(Mapping[str, str]):
    """Why each missing field of one record is missing, keyed by that record's own field names.

    Bound to a record type (``bind``): every name used to mark or to ask must be one of its
    dataclass fields, or ``"<field>.<sub-field>"`` for a field that holds a dataclass (for
    example ``"limits.l2_cache_bytes"``); anything else raises ``KeyError``. Before binding
    (while a record is being constructed) names are kept as given and checked at ``bind``.
    """

    def __init__(self, reasons: Mapping[str, str] | None = None) -> None:
        self._reasons: dict[str, str] = dict(reasons or {})
        self._names: frozenset[str] | None = None
        self._owner = "record"

    def bind(self, owner: type) -> FieldReasons:
        self._names = field_names(owner)
        self._owner = owner.__name__
        for name in self._reasons:
            self._check(name)
        return self

    def _check(self, name: str) -> None:
        if self._names is not None and name not in self._names:
            raise KeyError(f"{self._owner} has no field {name!r}")

    def mark(self, name: str, reason: str) -> None:
        """Record why ``name`` is missing; the first reason given for a field is kept."""
        self._check(name)
        self._reasons.setdefault(name, reason)

    def discard(self, name: str) -> None:
        self._check(name)
        self._reasons.pop(name, None)

    def __getitem__(self, name: str) -> str:
        self._check(name)
        return self._reasons[name]

    def get(self, name: str, default: Any = None) -> Any:
        self._check(name)  # Mapping.get would swallow the KeyError of an unknown name
        return self._reasons.get(name, default)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._check(name)
        return name in self._reasons

    def __iter__(self) -> Iterator[str]:
        return iter(self._reasons)

    def __len__(self) -> int:
        return len(self._reasons)

    def __repr__(self) -> str:
        return f"FieldReasons({self._reasons!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, str]:
        return dict(self._reasons)


def field_names(record_type: type) -> frozenset[str]:
    """The names ``FieldReasons`` accepts for ``record_type``: its fields and nested dataclass fields."""
    names: set[str] = set()
    hints = _nested_types(record_type)
    for f in dataclasses.fields(record_type):
        names.add(f.name)
        nested = hints.get(f.name)
        if nested is not None:
            names.update(f"{f.name}.{sub.name}" for sub in dataclasses.fields(nested))
    return frozenset(names)


def _nested_types(record_type: type) -> dict[str, type]:
    return dict(getattr(record_type, "NESTED", {}))


def _is_missing(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == ()


@dataclass(kw_only=True)
class CudaLimits:
    """What the CUDA runtime (or the per-CC table, for catalog devices) reported of this device's
    limits: the reported part of ``explorer.devices.limits.ArchLimits``, the one record of what a
    GPU allows, under the same field names.

    A driver reports some limits and not others (allocation units, carveouts and the reserve are
    the table's alone), so each field may be missing; ``limits_for_device`` puts every reported
    one first over the table's value of the same name. ``l2_cache_bytes`` is the one field the
    table lacks: a cache, not a launch limit (``REPORTED_ONLY``)."""

    #: fields a driver reports that are no launch limit (every other field is an ArchLimits field)
    REPORTED_ONLY: ClassVar[frozenset[str]] = frozenset({"l2_cache_bytes"})

    max_threads_per_block: int | None = None
    max_threads_per_sm: int | None = None
    max_blocks_per_sm: int | None = None
    warp_size: int | None = None
    max_block_dim: tuple[int, int, int] | None = None
    max_grid_dim: tuple[int, int, int] | None = None
    max_smem_per_block_bytes: int | None = None
    max_smem_per_block_optin_bytes: int | None = None
    smem_per_sm_bytes: int | None = None
    max_regs_per_block: int | None = None
    regs_per_sm: int | None = None
    l2_cache_bytes: int | None = None


@dataclass(kw_only=True, init=False, repr=False, eq=False)  # a base: the kinds make their own
class _Record:
    """What every kind of device has: a name, a key, where its numbers came from, and why some are missing."""

    NESTED: ClassVar[dict[str, type]] = {}

    name: str
    key: str = ""  # stable id: "cpu", "cuda:0", "catalog:h100-sxm5"
    vendor: str | None = None
    memory_total_bytes: int | None = None
    fp32_peak_gflops: float | None = None
    #: how that peak was had where it is worked out rather than read off a sheet (benchmarks label it)
    fp32_peak_basis: str = ""
    memory_bandwidth_gbps: float | None = None  # GB/s, 1e9 bytes per second
    memory_bandwidth_basis: str = ""  # as fp32_peak_basis
    source: str = ""
    notes: list[str] = field(default_factory=list)
    unavailable: FieldReasons = field(default_factory=FieldReasons)

    def __post_init__(self) -> None:
        # a fresh FieldReasons each time, so a record made by dataclasses.replace shares none with its original
        self.unavailable = FieldReasons(dict(self.unavailable.items())).bind(type(self))

    def mark_unavailable(self, field_name: str, reason: str) -> None:
        """Say why ``field_name`` (a field of this record) has no value; raises ``KeyError`` for a name it lacks."""
        self.unavailable.mark(field_name, reason)

    def value(self, field_name: str) -> Any:
        """The value of a field or of ``"<field>.<sub-field>"``; ``KeyError`` for a name the record lacks."""
        if field_name not in field_names(type(self)):
            raise KeyError(f"{type(self).__name__} has no field {field_name!r}")
        head, _, tail = field_name.partition(".")
        value = getattr(self, head)
        if tail:
            value = None if value is None else getattr(value, tail)
        return value

    def reason(self, field_name: str) -> str | None:
        """Why ``field_name`` is missing, or ``None`` when it has a value.

        A missing sub-field with no reason of its own takes its parent's ("limits.x" from "limits").
        """
        if not _is_missing(self.value(field_name)):
            return None
        if field_name in self.unavailable:
            return self.unavailable[field_name]
        head = field_name.partition(".")[0]
        if head != field_name and head in self.unavailable:
            return self.unavailable[head]
        return None

    def unexplained(self) -> list[str]:
        """Top-level fields that are missing with no reason: a probe that leaves any is incomplete."""
        return [
            f.name
            for f in dataclasses.fields(self)
            if f.name not in self.OPTIONAL
            and _is_missing(getattr(self, f.name))
            and self.reason(f.name) is None
        ]

    #: fields whose emptiness is a fact, not a gap (no notes, no basis, no processes running)
    OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {
            "notes",
            "unavailable",
            "fp32_peak_basis",
            "memory_bandwidth_basis",
            "source",
            "clock_measured_basis",
            "fp32_measured_basis",
        }
    )

    @property
    def display_name(self) -> str:
        return self.name

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable snake_case keys (the CLI's ``--json`` schema).

        Every key of the schema is present for every kind (``None`` where a kind has no such
        field), so a script reading ``d["sm_count"]`` of the CPU gets ``null`` as it always did.
        """
        data: dict[str, Any] = dict(_LEGACY_DEFAULTS)
        for f in dataclasses.fields(self):
            data[f.name] = _json_value(getattr(self, f.name))
        data["unavailable"] = self.unavailable.to_dict()
        data["present"] = self.present
        return data

    @property
    def present(self) -> bool:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    @property
    def is_gpu(self) -> bool:  # pragma: no cover - every kind overrides it
        raise NotImplementedError


def _json_value(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        return to_dict() if callable(to_dict) else dataclasses.asdict(value)
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, tuple):
        return list(value)
    return value


@dataclass(kw_only=True)
class CpuDevice(_Record):
    """The host CPU: model, cores, clocks, vector instruction sets, memory."""

    kind: Literal["cpu"] = field(default="cpu", init=False)
    architecture: str | None = None  # "x86_64", "arm64"
    physical_cores: int | None = None
    logical_cores: int | None = None
    frequency_mhz: float | None = None  # now
    frequency_max_mhz: float | None = None  # boost / max, or the advertised clock
    isa_flags: list[str] = field(
        default_factory=list
    )  # the speed-relevant ones: avx2, avx512f, fma, neon ...
    #: x86 family and model numbers: the flags cannot tell an AMD Zen 4 (AVX-512 on 256-bit pipes,
    #: half the FLOP per cycle) from a Zen 5 or a Xeon, these can (``explorer.devices.isa``)
    cpu_family: int | None = None
    cpu_model: int | None = None
    memory_available_bytes: int | None = None
    #: the all-core clock measured by the benchmarks (a dependent-instruction chain; cached per
    #: machine): the FP32 peak is built on it once there is one
    clock_measured_ghz: float | None = None
    clock_measured_basis: str = ""
    #: the best FP32 matmul measured on this machine (the roofline's measured compute ceiling)
    fp32_measured_gflops: float | None = None
    fp32_measured_basis: str = ""
    #: the data caches, nearest the cores first (``explorer.devices.caches``): the roofline's
    #: memory levels are named by these sizes
    caches: list[CpuCache] = field(default_factory=list)

    @property
    def present(self) -> bool:
        return True

    @property
    def is_gpu(self) -> bool:
        return False

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        # Earlier versions nested the CPU's own facts under "cpu" and put its clocks in the SM-clock keys.
        data["cpu"] = {name: data[name] for name in _CPU_NESTED}
        data["clock_sm_mhz"] = int(self.frequency_mhz) if self.frequency_mhz else None
        data["clock_sm_max_mhz"] = int(self.frequency_max_mhz) if self.frequency_max_mhz else None
        return data


_CPU_NESTED = (
    "physical_cores",
    "logical_cores",
    "frequency_mhz",
    "frequency_max_mhz",
    "architecture",
    "isa_flags",
    "memory_available_bytes",
)


@dataclass(kw_only=True, init=False, repr=False, eq=False)  # a base: the kinds make their own
class _Gpu(_Record):
    """What every NVIDIA GPU has, in this machine or on a spec sheet: the launch maths read these."""

    NESTED: ClassVar[dict[str, type]] = {"limits": CudaLimits}

    compute_capability: tuple[int, int] | None = None
    architecture: str | None = None  # "Turing", "Hopper", ...
    sm_count: int | None = None
    cuda_cores_per_sm: int | None = None
    clock_sm_max_mhz: int | None = None  # boost / max
    memory_bus_width_bits: int | None = None
    limits: CudaLimits | None = None

    @property
    def is_gpu(self) -> bool:
        return True

    @property
    def cc_string(self) -> str | None:
        if self.compute_capability is None:
            return None
        return f"{self.compute_capability[0]}.{self.compute_capability[1]}"

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["compute_capability"] = self.cc_string
        return data


#: why a GPU that NVML lists is not usable from CUDA here
HIDDEN_BY_CUDA_VISIBLE_DEVICES = "hidden by CUDA_VISIBLE_DEVICES: not usable for benchmarks here"
#: how ``explorer.devices.discovery.Discovery.why_no_gpu`` begins when no probe found a GPU; the reasons follow it (a workload's
#: refusal quotes the first of them after this head)
NO_GPU_FOUND = "No NVIDIA GPU was found on this machine."


@dataclass(kw_only=True)
class CudaGpu(_Gpu):
    """An NVIDIA GPU in this machine, as NVML and the CUDA driver (and torch, numba, when asked) see it.

    ``index`` is its CUDA ordinal (as torch and numba number it) and ``None`` when
    ``CUDA_VISIBLE_DEVICES`` hides it; ``hidden`` then says so in words, and the GPU is listed
    with its live readings but never offered for benchmarks.
    """

    kind: Literal["cuda"] = field(default="cuda", init=False)
    index: int | None = None
    nvml_index: int | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    clock_sm_mhz: int | None = None  # current
    clock_memory_mhz: int | None = None
    clock_memory_max_mhz: int | None = None
    pcie_generation: int | None = None
    pcie_width: int | None = None
    pcie_generation_max: int | None = None
    pcie_width_max: int | None = None
    mig_mode: str | None = None  # "enabled" / "disabled"
    live: LiveReading | None = None
    processes: list[GpuProcess] = field(default_factory=list)
    hidden: str | None = None  # why CUDA cannot use it here (HIDDEN_BY_CUDA_VISIBLE_DEVICES), else None

    OPTIONAL: ClassVar[frozenset[str]] = _Record.OPTIONAL | {"processes", "hidden", "index"}

    @property
    def present(self) -> bool:
        return True

    @property
    def usable(self) -> bool:
        """Whether CUDA programs (the app's GPU benchmarks) can run on it from this process."""
        return self.index is not None and self.hidden is None

    @property
    def display_name(self) -> str:
        if self.index is not None:
            return f"{self.name} (cuda:{self.index})"
        if self.hidden:
            return f"{self.name} (hidden from CUDA)"
        return self.name


@dataclass(kw_only=True)
class CatalogGpu(_Gpu):
    """A spec sheet of a well-known GPU: *not present on this machine*.

    It exists so lessons work on any laptop, and it must never be offered for benchmarks nor
    shown as installed.
    """

    kind: Literal["catalog"] = field(default="catalog", init=False)
    clock_sm_base_mhz: int | None = None  # the sheet's base clock
    memory_type: str | None = None
    form_factor: str | None = None  # "laptop", "desktop", "data centre"
    tdp_w: float | None = None  # board power / TDP from the sheet
    chip: str | None = None  # GPU die, e.g. "TU117"

    @property
    def present(self) -> bool:
        return False

    @property
    def display_name(self) -> str:
        return f"{self.name} (catalog, not present)"


#: any device record; ``d.kind`` tells which (and narrows the type)
Device = CpuDevice | CudaGpu | CatalogGpu
#: any GPU record, present or on a spec sheet: what the launch maths and the visualizer take
Gpu = CudaGpu | CatalogGpu

# The JSON keys of the one Device record earlier versions had, with the value a kind without that field shows.
_LEGACY_DEFAULTS: dict[str, Any] = {
    "kind": None,
    "name": None,
    "index": None,
    "key": "",
    "vendor": None,
    "uuid": None,
    "pci_bus_id": None,
    "nvml_index": None,
    "driver_version": None,
    "cuda_driver_version": None,
    "compute_capability": None,
    "architecture": None,
    "sm_count": None,
    "cuda_cores_per_sm": None,
    "clock_sm_mhz": None,
    "clock_sm_max_mhz": None,
    "clock_sm_base_mhz": None,
    "fp32_peak_gflops": None,
    "fp32_peak_basis": "",
    "memory_total_bytes": None,
    "memory_bus_width_bits": None,
    "clock_memory_mhz": None,
    "clock_memory_max_mhz": None,
    "memory_bandwidth_gbps": None,
    "memory_bandwidth_basis": "",
    "memory_type": None,
    "pcie_generation": None,
    "pcie_width": None,
    "pcie_generation_max": None,
    "pcie_width_max": None,
    "mig_mode": None,
    "limits": None,
    "live": None,
    "processes": [],
    "cpu": None,
    "form_factor": None,
    "tdp_w": None,
    "chip": None,
    "source": "",
    "unavailable": {},
    "notes": [],
}


def import_failure(module: str, exc: BaseException) -> str:
    """Why importing a probe's module failed, in words: a broken install raises, and a module that
    calls ``sys.exit`` while it is imported (a stand-in pynvml did, with 3) would end the whole
    command with that status and no word; the probe reports it instead."""
    if isinstance(exc, SystemExit):
        return f"{module} is installed but ended the program while being imported (sys.exit({exc.code!r}))"
    return f"{module} is installed but failed to import: {exc}"
