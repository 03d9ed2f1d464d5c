"""What a GPU of each compute capability allows, read from ``resources/limits.json``.

The numbers live in data, not code, so each one can carry the place it was read from: a
teacher who doubts "16 blocks per SM on Turing" can follow ``ArchLimits.sources`` to the
Programming Guide's table or to the function in NVIDIA's ``cuda_occupancy.h`` that says so.
A present GPU's driver knows better than any table, so ``limits_for_device`` lets what the
driver reported win.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cache, lru_cache
from typing import Any

from explorer.devices.model import CudaLimits, Device
from explorer.errors import UserError
from explorer.inputs import parse_cc as parse_cc_text
from explorer.resources import load_json

LIMITS_FILE = "limits.json"


@dataclass(frozen=True)
class ArchLimits:
    """The launch and residency limits of one compute capability (or of one present GPU)."""

    cc: tuple[int, int]
    arch_name: str
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int
    max_regs_per_block: int
    max_regs_per_thread: int
    reg_alloc_unit: int  # registers, allocated per warp in multiples of this
    smem_per_sm_bytes: int  # the largest shared-memory carveout of the SM
    smem_carveouts_bytes: tuple[int, ...]  # the shared-memory sizes an SM can be configured to
    max_smem_per_block_bytes: int  # without opt-in
    max_smem_per_block_optin_bytes: int  # with cudaFuncAttributeMaxDynamicSharedMemorySize
    smem_alloc_unit_bytes: int
    reserved_smem_per_block_bytes: int  # taken by the driver from every block on 8.x and newer
    max_block_dim: tuple[int, int, int]
    max_grid_dim: tuple[int, int, int]
    reg_sub_partitions: int = 4  # the register file is split across this many SM sub-partitions
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def cc_string(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"

    @property
    def label(self) -> str:
        """How messages name a device known only by its compute capability."""
        return f"compute capability {self.cc_string} ({self.arch_name})"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["cc"] = self.cc_string
        for key in ("smem_carveouts_bytes", "max_block_dim", "max_grid_dim"):
            data[key] = list(data[key])
        data["sources"] = dict(self.sources)
        return data


def parse_cc(text: str | tuple[int, int]) -> tuple[int, int]:
    """'8.6' -> (8, 6). Bad text is a UserError naming what was given."""
    if isinstance(text, tuple):
        return (int(text[0]), int(text[1]))
    return parse_cc_text(text)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    return load_json(LIMITS_FILE)


def known_ccs() -> list[tuple[int, int]]:
    """Every compute capability the table describes, oldest first (aliases not included)."""
    return sorted(parse_cc(k) for k in _table()["compute_capabilities"])


@cache
def limits_for_cc(cc: tuple[int, int]) -> ArchLimits:
    """The table's limits for ``cc``; an unknown CC is a UserError listing the known ones."""
    cc = parse_cc(cc)
    table = _table()
    key = f"{cc[0]}.{cc[1]}"
    key = table.get("aliases", {}).get(key, key)
    entry = table["compute_capabilities"].get(key)
    if entry is None:
        known = ", ".join(f"{a}.{b}" for a, b in known_ccs())
        raise UserError(f"compute capability {cc[0]}.{cc[1]} is not in the limits table; known: {known}")
    values: dict[str, Any] = dict(table["common"])
    values.update({k: v for k, v in entry.items() if k != "sources"})
    names = {f.name for f in fields(ArchLimits)}
    sources = {
        k: _expand_source(v, table["sources"]) for k, v in table["field_sources"].items() if k in names
    }
    sources.update({k: _expand_source(v, table["sources"]) for k, v in entry.get("sources", {}).items()})
    return ArchLimits(
        cc=cc,
        arch_name=values["arch_name"],
        warp_size=values["warp_size"],
        max_threads_per_block=values["max_threads_per_block"],
        max_threads_per_sm=values["max_threads_per_sm"],
        max_warps_per_sm=values["max_threads_per_sm"] // values["warp_size"],
        max_blocks_per_sm=values["max_blocks_per_sm"],
        regs_per_sm=values["regs_per_sm"],
        max_regs_per_block=values["max_regs_per_block"],
        max_regs_per_thread=values["max_regs_per_thread"],
        reg_alloc_unit=values["reg_alloc_unit"],
        smem_per_sm_bytes=values["smem_per_sm_bytes"],
        smem_carveouts_bytes=tuple(values["smem_carveouts_bytes"]),
        max_smem_per_block_bytes=values["max_smem_per_block_bytes"],
        max_smem_per_block_optin_bytes=values["max_smem_per_block_optin_bytes"],
        smem_alloc_unit_bytes=values["smem_alloc_unit_bytes"],
        reserved_smem_per_block_bytes=values["reserved_smem_per_block_bytes"],
        max_block_dim=tuple(values["max_block_dim"]),
        max_grid_dim=tuple(values["max_grid_dim"]),
        reg_sub_partitions=values["reg_sub_partitions"],
        sources=sources,
    )


def _expand_source(text: str, named: dict[str, str]) -> str:
    """'pg: Warp size' -> the Programming Guide's full title followed by the row named."""
    parts = []
    for piece in text.split("; "):
        tag, sep, rest = piece.partition(": ")
        if sep and tag in named:
            parts.append(f"{named[tag]}: {rest}")
        else:
            head, _, tail = piece.partition(" ")
            parts.append(f"{named[head]} {tail}" if head in named else piece)
    return "; ".join(parts)


def limits_for_device(device: Device) -> ArchLimits:
    """The table for the device's CC, with every limit its driver (or catalog sheet) reported put first.

    Values the driver does not report (allocation units, carveouts, the reserve) stay the
    table's. A device without a compute capability (the CPU) is a UserError.
    """
    if device.kind == "cpu" or device.compute_capability is None:
        raise UserError(
            f"{device.name} has no CUDA compute capability; launch limits exist only for NVIDIA GPUs"
        )
    base = limits_for_cc(tuple(device.compute_capability))
    reported = device.limits
    if reported is None:
        return base
    changes: dict[str, Any] = {}
    sources = dict(base.sources)
    origin = device.source or device.kind
    # one vocabulary: each reported field overrides the table's field of the same name
    for dst in (f.name for f in fields(CudaLimits) if f.name not in CudaLimits.REPORTED_ONLY):
        value = getattr(reported, dst)
        if value is None:
            continue
        value = tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else int(value)
        if (min(value) if isinstance(value, tuple) else value) <= 0:
            continue  # an attribute the driver answers with 0 is one it does not know
        if value != getattr(base, dst):
            changes[dst] = value
        sources[dst] = f"reported for {device.name} ({origin})"
    if "max_threads_per_sm" in changes or "warp_size" in changes:
        threads = changes.get("max_threads_per_sm", base.max_threads_per_sm)
        warp = changes.get("warp_size", base.warp_size)
        changes["max_warps_per_sm"] = threads // warp
        sources["max_warps_per_sm"] = f"max_threads_per_sm / warp_size as reported for {device.name}"
    optin = changes.get("max_smem_per_block_optin_bytes", base.max_smem_per_block_optin_bytes)
    default = changes.get("max_smem_per_block_bytes", base.max_smem_per_block_bytes)
    if optin < default:  # no opt-in on this GPU: the default is the ceiling
        changes["max_smem_per_block_optin_bytes"] = default
    if "smem_per_sm_bytes" in changes:
        size = changes["smem_per_sm_bytes"]
        carveouts = tuple(c for c in base.smem_carveouts_bytes if c <= size)
        if not carveouts or carveouts[-1] != size:
            carveouts = carveouts + (size,)
        changes["smem_carveouts_bytes"] = carveouts
    return replace(base, sources=sources, **changes)
