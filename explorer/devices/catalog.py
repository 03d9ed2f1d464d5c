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
from functools import lru_cache
from typing import Any

from explorer.devices.model import CatalogGpu, Gpu
from explorer.resources import load_json

CATALOG_FILE = "catalog.json"
GIB = 1024**3

_REQUIRED = (
    "slug",
    "name",
    "compute_capability",
    "architecture",
    "sm_count",
    "cuda_cores_per_sm",
    "memory_gib",
    "clock_boost_mhz",
    "fp32_peak_gflops",
    "form_factor",
    "source",
)


class CatalogError(ValueError):
    """The shipped catalog file is malformed: a packaging bug, not a user error."""


def _parse_cc(text: str, slug: str) -> tuple[int, int]:
    try:
        major, minor = str(text).split(".")
        return int(major), int(minor)
    except ValueError as exc:
        raise CatalogError(f"catalog entry {slug!r}: compute_capability {text!r} is not 'X.Y'") from exc


def _device_from_entry(entry: dict[str, Any]) -> CatalogGpu:
    slug = entry.get("slug", "?")
    missing = [k for k in _REQUIRED if entry.get(k) in (None, "")]
    if missing:
        raise CatalogError(f"catalog entry {slug!r} lacks {', '.join(missing)}")
    device = CatalogGpu(
        name=entry["name"],
        key=f"catalog:{slug}",
        vendor="NVIDIA",
        compute_capability=_parse_cc(entry["compute_capability"], slug),
        architecture=entry["architecture"],
        chip=entry.get("chip"),
        sm_count=int(entry["sm_count"]),
        cuda_cores_per_sm=int(entry["cuda_cores_per_sm"]),
        clock_sm_max_mhz=int(entry["clock_boost_mhz"]),
        clock_sm_base_mhz=entry.get("clock_base_mhz"),
        fp32_peak_gflops=float(entry["fp32_peak_gflops"]),
        memory_total_bytes=int(round(float(entry["memory_gib"]) * GIB)),
        memory_type=entry.get("memory_type"),
        memory_bus_width_bits=entry.get("memory_bus_width_bits"),
        memory_bandwidth_gbps=entry.get("memory_bandwidth_gbps"),
        form_factor=entry["form_factor"],
        tdp_w=entry.get("tdp_w"),
        source=entry["source"],
        notes=list(entry.get("notes", [])),
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
def _sheets() -> tuple[CatalogGpu, ...]:
    data = load_json(CATALOG_FILE)
    entries = data.get("devices") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise CatalogError(f"{CATALOG_FILE} has no 'devices' list")
    sheets = tuple(_device_from_entry(e) for e in entries)
    keys = [s.key for s in sheets]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise CatalogError(f"{CATALOG_FILE} repeats {', '.join(duplicates)}")
    return sheets


def load_catalog() -> list[CatalogGpu]:
    """Fresh ``CatalogGpu`` records for every catalog GPU, in file order (oldest architecture first)."""
    return [copy.deepcopy(s) for s in _sheets()]


def catalog_device(slug_or_key: str) -> CatalogGpu:
    """One catalog GPU by slug (``"h100-sxm5"``) or key (``"catalog:h100-sxm5"``)."""
    key = slug_or_key if slug_or_key.startswith("catalog:") else f"catalog:{slug_or_key}"
    for sheet in _sheets():
        if sheet.key == key:
            return copy.deepcopy(sheet)
    raise KeyError(slug_or_key)


def theoretical_fp32_gflops(device: Gpu) -> float | None:
    """SMs x FP32 cores per SM x 2 FLOP per fused multiply-add x boost clock, in GFLOP/s."""
    if not (device.sm_count and device.cuda_cores_per_sm and device.clock_sm_max_mhz):
        return None
    return device.sm_count * device.cuda_cores_per_sm * 2 * device.clock_sm_max_mhz / 1000.0
