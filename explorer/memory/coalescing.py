"""What one warp's global load or store costs: the 32-byte sectors and 128-byte lines it touches,
and the granules DRAM moves for it.

The model is the one NVIDIA's profiler counts (Nsight Compute's "sectors per request"): since
Maxwell the L1/L2 move global memory in 32-byte *sectors*, grouped in 128-byte cache *lines*;
a warp's request is served by fetching every sector that holds a byte some active lane asked
for. So the cost of an access pattern is the number of distinct sectors, and its efficiency is
the bytes the lanes asked for over the bytes fetched (32 per sector).

Addresses start at a 256-byte-aligned base (cudaMalloc aligns to at least 256 bytes), lane ``i``
of warp ``w`` in a block reads element ``offset + (32 w + i) * stride`` (a stride of 0 is a uniform
load: every lane reads one element, which one sector serves), and elements are
naturally aligned (an element of 1, 2, 4, 8 or 16 bytes never straddles a 32-byte sector), so
each lane's bytes lie in exactly one sector: sectors = distinct ``address // 32`` over the active
lanes. Everything here is that arithmetic over at most 32 lanes' bytes (at most 512), so a
pattern costs microseconds and a whole stride sweep well under a millisecond.

Below the L2, DRAM moves bigger pieces: on compute capability 8.0 and newer the L2 fetches 64 bytes
per miss by default (the driver's ``cudaLimitMaxL2FetchGranularity``, 0 to 128 bytes), so a lane
whose sector is alone in its 64-byte granule costs DRAM twice the bytes L1/L2 count. One rule,
``granules_holding``, says which aligned granules hold the requested bytes, at any size: the
sectors, the DRAM granules, and a CPU's cache lines all come from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from explorer.errors import UserError

WARP_SIZE = 32
SECTOR_BYTES = 32
LINE_BYTES = 128
BASE_ALIGNMENT = 256
ELEMENT_SIZES = (1, 2, 4, 8, 16)
#: strides and offsets beyond this (in elements) only move the pattern further apart: refuse them
#: rather than compute addresses no GPU has
MAX_ELEMENTS = 1 << 40
MAX_WARP_INDEX = 1023  # a block has at most 1024 threads: 32 warps; larger indices step further
#: the sizes DRAM can be modelled to move per L2 miss: a sector, or the 64 or 128 bytes an L2 may fetch
DRAM_GRANULARITIES = (32, 64, 128)
#: from compute capability 8.0 on, the L2's default fetch per miss (an estimate where not read from
#: the driver); earlier GPUs are modelled as moving single sectors
DRAM_GRANULARITY_CC80 = 64


@dataclass(frozen=True)
class DramGranularity:
    """How many bytes DRAM moves per L2 miss in the model, and where that size comes from."""

    bytes: int = DRAM_GRANULARITY_CC80
    basis: str = (
        f"estimate: {DRAM_GRANULARITY_CC80} B, the L2's default fetch on compute capability 8.0 and newer"
    )
    estimate: bool = True

    def __post_init__(self) -> None:
        if self.bytes not in DRAM_GRANULARITIES:
            raise UserError(
                f"DRAM granularity {self.bytes} bytes is not one the model knows; use "
                f"{', '.join(map(str, DRAM_GRANULARITIES))}"
            )


def dram_granularity(
    chosen: int | None = None, cc: tuple[int, int] | None = None, where: str = ""
) -> DramGranularity:
    """The DRAM granule for a pattern: ``chosen`` when given, else an estimate from the compute
    capability ``cc`` of the GPU named ``where`` (64 B from 8.0 on, 32 B before), else 64 B."""
    if chosen is not None:
        return DramGranularity(chosen, f"{chosen} B as chosen", estimate=False)
    on = f" ({where})" if where else ""
    if cc is not None and cc < (8, 0):
        return DramGranularity(
            SECTOR_BYTES,
            f"estimate: {SECTOR_BYTES} B, single sectors, for compute capability {cc[0]}.{cc[1]}{on} "
            "(before 8.0); not read from a driver",
        )
    if cc is not None:
        return DramGranularity(
            DRAM_GRANULARITY_CC80,
            f"estimate: {DRAM_GRANULARITY_CC80} B, the L2's default fetch on compute capability "
            f"{cc[0]}.{cc[1]}{on} (8.0 and newer); not read from a driver",
        )
    return DramGranularity()


def granules_holding(starts: Iterable[int], elem_bytes: int, granule_bytes: int) -> dict[int, int]:
    """The aligned ``granule_bytes`` pieces of memory holding the bytes of the elements that begin
    at the byte addresses ``starts``, each with how many distinct bytes of it are asked for (bytes
    asked twice count once: one fetch serves every lane that wants them). An element that is not
    naturally aligned may reach into the next granule: each byte counts in its own."""
    used: dict[int, int] = {}
    for byte in {start + i for start in starts for i in range(elem_bytes)}:
        used[byte // granule_bytes] = used.get(byte // granule_bytes, 0) + 1
    return used


@dataclass(frozen=True)
class GlobalAccess:
    """One warp-wide load or store: each active lane touches one element.

    ``stride`` and ``offset`` count elements, as a kernel's index arithmetic does
    (``a[offset + tid * stride]``); ``active_lanes`` lanes, starting at lane 0, take part (the
    rest are masked off, as in a partial last warp or behind an ``if``).
    """

    elem_bytes: int = 4
    stride: int = 1
    offset: int = 0
    active_lanes: int = WARP_SIZE
    warp: int = 0  # which warp of the block, so a block's warps can be stepped through

    def __post_init__(self) -> None:
        check_global_access(self)

    def lane_element(self, lane: int) -> int:
        return self.offset + (self.warp * WARP_SIZE + lane) * self.stride

    def lane_address(self, lane: int) -> int:
        """Byte address of ``lane``'s element, from a base at 0 (any 256-byte-aligned base gives
        the same sectors and lines, shifted)."""
        return self.lane_element(lane) * self.elem_bytes


@dataclass(frozen=True)
class GlobalGather:
    """One warp's load or store where each active lane names its own byte address, as a traced
    kernel's lanes do (``explorer.kernels``): ``addresses[i]`` is the ``i``-th active lane's, from a
    256-byte-aligned base, and ``lanes[i]`` that lane's number."""

    addresses: tuple[int, ...]
    lanes: tuple[int, ...]
    elem_bytes: int = 4

    def __post_init__(self) -> None:
        if not 1 <= len(self.addresses) <= WARP_SIZE or len(self.lanes) != len(self.addresses):
            raise UserError(
                f"a warp has 1 to {WARP_SIZE} active lanes, one address each; {len(self.addresses)} given"
            )
        if not 1 <= self.elem_bytes <= 16:
            raise UserError(f"element size {self.elem_bytes} bytes is outside 1..16")
        if any(a < 0 for a in self.addresses):
            raise UserError("a lane's address is below the array's base")

    @property
    def active_lanes(self) -> int:
        return len(self.addresses)

    def lane_address(self, index: int) -> int:
        return self.addresses[index]

    def lane_number(self, index: int) -> int:
        return self.lanes[index]


def check_global_access(a: GlobalAccess) -> None:
    """One line naming the value and the limit for a pattern that has no meaning."""
    if a.elem_bytes not in ELEMENT_SIZES:
        raise UserError(
            f"element size {a.elem_bytes} bytes is not one a GPU loads in one instruction; "
            f"use {', '.join(map(str, ELEMENT_SIZES))}"
        )
    if not 0 <= a.stride <= MAX_ELEMENTS:
        raise UserError(f"stride {a.stride} is outside 0..{MAX_ELEMENTS} elements")
    if not 0 <= a.offset <= MAX_ELEMENTS:
        raise UserError(f"offset {a.offset} is outside 0..{MAX_ELEMENTS} elements")
    if not 1 <= a.active_lanes <= WARP_SIZE:
        raise UserError(f"active lanes {a.active_lanes} is outside 1..{WARP_SIZE} (a warp has 32 lanes)")
    if not 0 <= a.warp <= MAX_WARP_INDEX:
        raise UserError(f"warp {a.warp} is outside 0..{MAX_WARP_INDEX}")


@dataclass(frozen=True)
class LaneAccess:
    lane: int
    address: int  # byte address from the 256-byte-aligned base
    sector: int  # address // 32
    line: int  # address // 128


@dataclass(frozen=True)
class Coalescing:
    """What the memory system does for one warp's request."""

    access: GlobalAccess | GlobalGather
    lanes: tuple[LaneAccess, ...]  # the active lanes, in lane order
    sectors: tuple[int, ...]  # distinct sector numbers touched, ascending
    lines: tuple[int, ...]  # distinct 128-byte line numbers touched, ascending
    bytes_requested: int  # distinct bytes the lanes ask for (lanes reading one element count it once)
    bytes_fetched: int
    #: bytes of each fetched sector that some lane used (same order as ``sectors``)
    used_bytes_per_sector: tuple[int, ...] = field(default=())
    #: what DRAM moves for the sectors that miss the L2: the granule size and the granules, ascending
    dram: DramGranularity = field(default_factory=DramGranularity)
    dram_granules: tuple[int, ...] = field(default=())

    @property
    def dram_bytes_fetched(self) -> int:
        """Bytes DRAM moves when none of the sectors is in the L2 yet."""
        return len(self.dram_granules) * self.dram.bytes

    @property
    def dram_efficiency(self) -> float:
        """Distinct bytes asked for over the bytes DRAM moves for them."""
        return self.bytes_requested / self.dram_bytes_fetched

    @property
    def sectors_per_request(self) -> int:
        return len(self.sectors)

    @property
    def lines_per_request(self) -> int:
        return len(self.lines)

    @property
    def efficiency(self) -> float:
        """Distinct bytes asked for over bytes fetched: 1.0 when every fetched byte is used."""
        return self.bytes_requested / self.bytes_fetched

    @property
    def ideal_sectors(self) -> int:
        """The fewest sectors these bytes could need: packed and aligned."""
        return -(-self.bytes_requested // SECTOR_BYTES)

    def to_dict(self) -> dict[str, object]:
        a = self.access
        pattern: dict[str, object] = (
            {"stride": a.stride, "offset": a.offset}
            if isinstance(a, GlobalAccess)
            else {"addresses": list(a.addresses)}
        )
        return {
            "space": "global",
            "elem_bytes": a.elem_bytes,
            **pattern,
            "active_lanes": a.active_lanes,
            "warp": a.warp if isinstance(a, GlobalAccess) else None,
            "sectors_per_request": self.sectors_per_request,
            "lines_per_request": self.lines_per_request,
            "bytes_requested": self.bytes_requested,
            "bytes_fetched": self.bytes_fetched,
            "efficiency": self.efficiency,
            "ideal_sectors": self.ideal_sectors,
            "dram_granularity_bytes": self.dram.bytes,
            "dram_granularity_basis": self.dram.basis,
            "dram_granules": len(self.dram_granules),
            "dram_bytes_fetched": self.dram_bytes_fetched,
            "dram_efficiency": self.dram_efficiency,
            "lanes": [{"lane": la.lane, "address": la.address, "sector": la.sector} for la in self.lanes],
        }


def coalesce(access: GlobalAccess | GlobalGather, dram: DramGranularity | None = None) -> Coalescing:
    """Sectors, lines and bytes of one warp's request, and the granules DRAM moves for it in
    ``dram``'s size (64 B by default; see the module docstring for the model)."""
    dram = DramGranularity() if dram is None else dram
    numbers = (
        range(access.active_lanes)
        if isinstance(access, GlobalAccess)
        else [access.lane_number(i) for i in range(access.active_lanes)]
    )
    lanes = tuple(
        LaneAccess(lane, addr, addr // SECTOR_BYTES, addr // LINE_BYTES)
        for index, lane in enumerate(numbers)
        for addr in (access.lane_address(index),)
    )
    # lanes that share bytes (a stride of 0: a uniform load, every lane the same value) ask for
    # them once: one fetch serves them all. An element that is not naturally aligned (a traced
    # kernel's packed record) may reach into the next sector: each byte counts in its own.
    starts = [la.address for la in lanes]
    used = granules_holding(starts, access.elem_bytes, SECTOR_BYTES)
    sectors = tuple(sorted(used))
    requested = sum(used.values())
    return Coalescing(
        access=access,
        lanes=lanes,
        sectors=sectors,
        lines=tuple(sorted({la.line for la in lanes})),
        bytes_requested=requested,
        bytes_fetched=len(sectors) * SECTOR_BYTES,
        used_bytes_per_sector=tuple(used[s] for s in sectors),
        dram=dram,
        dram_granules=tuple(sorted(granules_holding(starts, access.elem_bytes, dram.bytes))),
    )


@dataclass(frozen=True)
class SweepPoint:
    stride: int
    sectors_per_request: int
    efficiency: float


def stride_sweep(elem_bytes: int = 4, strides: range = range(1, 33), offset: int = 0) -> list[SweepPoint]:
    """Efficiency of a full warp's access for each stride: the curve a course draws (and the
    model that the measured strided-copy bandwidth is compared against)."""
    out = []
    for s in strides:
        c = coalesce(GlobalAccess(elem_bytes=elem_bytes, stride=s, offset=offset))
        out.append(SweepPoint(s, c.sectors_per_request, c.efficiency))
    return out


# --- the patterns a course uses, as accesses -----------------------------------------------------


def matrix_row(width: int, elem_bytes: int = 4, row: int = 0) -> GlobalAccess:
    """Lanes read consecutive elements of one row of a row-major ``? x width`` matrix."""
    return GlobalAccess(elem_bytes=elem_bytes, stride=1, offset=row * width)


def matrix_column(width: int, elem_bytes: int = 4, column: int = 0) -> GlobalAccess:
    """Lanes read one column of a row-major matrix: neighbouring lanes are ``width`` elements apart."""
    return GlobalAccess(elem_bytes=elem_bytes, stride=width, offset=column)


def struct_field(struct_bytes: int, field_offset_bytes: int, elem_bytes: int = 4) -> GlobalAccess:
    """Lane i reads one field of ``structs[i]`` in an array of structs (AoS). The struct size and
    the field's offset must be multiples of the field's size (as a C compiler lays them out)."""
    if struct_bytes <= 0 or struct_bytes % elem_bytes or field_offset_bytes % elem_bytes:
        raise UserError(
            f"a struct of {struct_bytes} bytes with a {elem_bytes}-byte field at byte {field_offset_bytes} "
            f"is not laid out on {elem_bytes}-byte boundaries"
        )
    if not 0 <= field_offset_bytes < struct_bytes:
        raise UserError(f"field offset {field_offset_bytes} is outside the {struct_bytes}-byte struct")
    return GlobalAccess(
        elem_bytes=elem_bytes, stride=struct_bytes // elem_bytes, offset=field_offset_bytes // elem_bytes
    )


# --- a whole strided copy, as the benchmark measures it ------------------------------------------

#: a CPU moves memory in 64-byte cache lines (x86 and most Arm cores); the model of the CPU's
#: strided copy uses them where a GPU's uses 32-byte sectors
CPU_LINE_BYTES = 64


def granule_efficiency(elem_bytes: int, stride: int, granule_bytes: int) -> float:
    """Over a long run of ``a[i * stride]``, the bytes used over the bytes moved when memory moves
    in aligned ``granule_bytes`` pieces (64-byte CPU lines, 32-byte GPU sectors). The pattern
    repeats every ``granule / gcd(stride * elem, granule)`` elements, so one period is exact."""
    step = stride * elem_bytes
    period = granule_bytes // math.gcd(step, granule_bytes)
    used = granules_holding((i * step for i in range(period)), elem_bytes, granule_bytes)
    return sum(used.values()) / (len(used) * granule_bytes)


@dataclass(frozen=True)
class CopyModel:
    """What the memory system moves for ``dst[i] = src[i * stride]``: the reads strided, the writes
    unit-stride, each in its granule. ``efficiency`` is the bytes the copy asks for over the bytes
    moved, so the model's bandwidth for the copy is ``efficiency x`` the memory's bandwidth (a
    model, not a measurement: caches, prefetchers and DRAM pages are left out)."""

    stride: int
    elem_bytes: int
    granule_bytes: int
    read_efficiency: float
    write_efficiency: float

    @property
    def efficiency(self) -> float:
        # as many bytes read as written: requested 2B, moved B/read + B/write
        return 2.0 / (1.0 / self.read_efficiency + 1.0 / self.write_efficiency)


def strided_copy_model(
    stride: int, elem_bytes: int = 4, granule_bytes: int = SECTOR_BYTES, dram: DramGranularity | None = None
) -> CopyModel:
    """The copy on a GPU as L1/L2 see it (32-byte sectors, one warp's request as ``coalesce``
    counts it), as DRAM sees it (``dram`` given: the same warp's DRAM granules, for data past
    the L2) or, with ``granule_bytes=CPU_LINE_BYTES``, on a CPU (64-byte lines over a long run)."""
    if dram is not None:
        read_c = coalesce(GlobalAccess(elem_bytes=elem_bytes, stride=stride), dram)
        write_c = coalesce(GlobalAccess(elem_bytes=elem_bytes, stride=1), dram)
        return CopyModel(stride, elem_bytes, dram.bytes, read_c.dram_efficiency, write_c.dram_efficiency)
    if granule_bytes == SECTOR_BYTES:
        read = coalesce(GlobalAccess(elem_bytes=elem_bytes, stride=stride)).efficiency
        write = coalesce(GlobalAccess(elem_bytes=elem_bytes, stride=1)).efficiency
    else:
        check_global_access(GlobalAccess(elem_bytes=elem_bytes, stride=stride))
        read = granule_efficiency(elem_bytes, stride, granule_bytes)
        write = granule_efficiency(elem_bytes, 1, granule_bytes)
    return CopyModel(stride, elem_bytes, granule_bytes, read, write)
