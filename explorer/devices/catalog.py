"""Spec sheets of well-known NVIDIA GPUs, read from ``resources/catalog.json``.

They let a lesson about a GTX 1650 or an H100 work on a laptop with no GPU at all. Every
entry becomes a ``CatalogGpu`` record: it is never present, never benchmarked.
CUDA limits (threads per SM, registers, shared memory) are *not* filled here: they follow
from the compute capability and come from the launch package's per-CC table.

The file is parsed once per process; each call hands out fresh copies so a caller
that edits one cannot change what the next caller sees.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from explorer.devices.model import CatalogGpu, Gpu
from explorer.resources import load_json
from explorer.schema import Ranges, SchemaError, build

CATALOG_FILE = "catalog.json"
GIB = 1024**3

#: the text fields a sheet must fill (an empty one is as good as missing)
_REQUIRED_TEXT = ("slug", "name", "compute_capability", "architecture", "form_factor", "source")


class CatalogError(ValueError):
    """The shipped catalog file is malformed: a packaging bug, not a user error."""


@dataclass(frozen=True)
class CatalogEntry:
    """One spec sheet as ``catalog.json`` spells it, each value checked against its type and range
    by ``explorer.schema`` (the one path every JSON the app reads takes) before a record is made."""

    slug: str
    name: str
    compute_capability: str
    architecture: str
    sm_count: int
    cuda_cores_per_sm: int
    memory_gib: float
    clock_boost_mhz: int
    fp32_peak_gflops: float
    form_factor: str
    source: str
    chip: str | None = None
    clock_base_mhz: int | None = None
    memory_type: str | None = None
    memory_bus_width_bits: int | None = None
    memory_bandwidth_gbps: float | None = None
    tdp_w: int | float | None = None  # as the sheet gives it: 165 stays 165 in `devices --json`
    notes: tuple[str, ...] = ()

    RANGES: ClassVar[Ranges] = {
        "sm_count": (1, 10_000),
        "cuda_cores_per_sm": (1, 1_024),
        "memory_gib": (0, 1 << 20),
        "clock_boost_mhz": (1, 100_000),
        "clock_base_mhz": (1, 100_000),
        "fp32_peak_gflops": (0, 1e9),
        "memory_bus_width_bits": (1, 1 << 16),
        "memory_bandwidth_gbps": (0, 1e6),
        "tdp_w": (0, 1e5),
    }


def _parse_cc(text: str, slug: str) -> tuple[int, int]:
    try:
        major, minor = str(text).split(".")
        return int(major), int(minor)
    except ValueError as exc:
        raise CatalogError(f"catalog entry {slug!r}: compute_capability {text!r} is not 'X.Y'") from exc


def _device_from_entry(raw: Any) -> CatalogGpu:
    slug = raw.get("slug", "?") if isinstance(raw, dict) else "?"
    try:
        entry = build(CatalogEntry, raw, f"catalog entry {slug!r}")
    except SchemaError as exc:
        raise CatalogError(str(exc)) from None
    missing = [f for f in _REQUIRED_TEXT if not getattr(entry, f)]
    if missing:
        raise CatalogError(f"catalog entry {slug!r} lacks {', '.join(missing)}")
    device = CatalogGpu(
        name=entry.name,
        key=f"catalog:{entry.slug}",
        vendor="NVIDIA",
        compute_capability=_parse_cc(entry.compute_capability, entry.slug),
        architecture=entry.architecture,
        chip=entry.chip,
        sm_count=entry.sm_count,
        cuda_cores_per_sm=entry.cuda_cores_per_sm,
        clock_sm_max_mhz=entry.clock_boost_mhz,
        clock_sm_base_mhz=entry.clock_base_mhz,
        fp32_peak_gflops=entry.fp32_peak_gflops,
        memory_total_bytes=int(round(entry.memory_gib * GIB)),
        memory_type=entry.memory_type,
        memory_bus_width_bits=entry.memory_bus_width_bits,
        memory_bandwidth_gbps=entry.memory_bandwidth_gbps,
        form_factor=entry.form_factor,
        tdp_w=entry.tdp_w,
        source=entry.source,
        notes=list(entry.notes),
    )
    for field_name in (
        "clock_sm_base_mhz",
        "memory_bandwidth_gbps",
        "memory_bus_width_bits",
        "tdp_w",
        "chip",
    ):
        if getattr(device, field_name) is None:
            device.mark_unavailable(field_name, "not given on the spec sheet this entry comes from")
    if device.memory_type is None:
        device.mark_unavailable("memory_type", "not given on the spec sheet this entry comes from")
    device.mark_unavailable(
        "limits",
        "a spec sheet lists no CUDA limits: the launch limits come from the compute capability's table",
    )
    return device


@lru_cache(maxsize=1)
def _entries() -> tuple[Any, ...]:
    """The file's entries as JSON, read once per process, not yet checked."""
    data = load_json(CATALOG_FILE)
    entries = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CatalogError(f"{CATALOG_FILE} has no 'devices' list")
    return tuple(entries)


@lru_cache(maxsize=1)
def _sheets() -> tuple[CatalogGpu, ...]:
    sheets = tuple(_device_from_entry(e) for e in _entries())
    keys = [s.key for s in sheets]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise CatalogError(f"{CATALOG_FILE} repeats {', '.join(duplicates)}")
    return sheets


def sheet_names() -> tuple[CatalogGpu, ...] | None:
    """Every sheet with only its key and name filled: what matching a typed name needs
    (``explorer.devices.names``), made without checking every entry, so that
    ``launch --device 1650`` checks only the sheet it names (``catalog_device``). ``None`` when
    an entry has no text slug and name; the full load then says what is wrong."""
    named = []
    for raw in _entries():
        slug = raw.get("slug") if isinstance(raw, dict) else None
        name = raw.get("name") if isinstance(raw, dict) else None
        if not (isinstance(slug, str) and isinstance(name, str) and slug and name):
            return None
        named.append(CatalogGpu(name=name, key=f"catalog:{slug}"))
    return tuple(named)


def load_catalog() -> list[CatalogGpu]:
    """Fresh ``CatalogGpu`` records for every catalog GPU, in file order (oldest architecture first)."""
    return [copy.deepcopy(s) for s in _sheets()]


def catalog_device(slug_or_key: str) -> CatalogGpu:
    """One catalog GPU by slug (``"h100-sxm5"``) or key (``"catalog:h100-sxm5"``): a record of
    its own, built from its entry alone (the others are not checked for it)."""
    slug = slug_or_key.removeprefix("catalog:")
    for raw in _entries():
        if isinstance(raw, dict) and raw.get("slug") == slug:
            return _device_from_entry(raw)
    raise KeyError(slug_or_key)


def theoretical_fp32_gflops(device: Gpu) -> float | None:
    """SMs x FP32 cores per SM x 2 FLOP per fused multiply-add x boost clock, in GFLOP/s."""
    if not (device.sm_count and device.cuda_cores_per_sm and device.clock_sm_max_mhz):
        return None
    return device.sm_count * device.cuda_cores_per_sm * 2 * device.clock_sm_max_mhz / 1000.0
