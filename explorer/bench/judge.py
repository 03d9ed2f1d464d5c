"""A point judged against a roof: its level, its share of that level's roof, and why where it is over.

The benchmark worker does it as each point is measured (``explorer.bench.peaks.place_point``,
under the worker's one roof per device); the window does it again for the points already shown
when the ceilings are measured anew (``judged_again``), from the point's own counts, so a table
and a roofline never show a share of an old roof beside a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from explorer.bench.results import BenchPoint
from explorer.roofs.model import MEMORY_LEVELS, Ceiling, CeilingKind, Roof
from explorer.roofs.placement import above_hardware, above_roof_reason, place

#: ``BenchPoint.bound`` of a point bound by a bus (PCIe, a peer link), not by a memory level
BUS = "bus"
#: the dtypes whose FLOP the FP32 peak at boost bounds (FP64 runs no faster than FP32 on any
#: device); "" is a workload's default, FP32. Half precision and TF32 have tensor cores' peaks.
FP32_BOUND_DTYPES = frozenset({"", "float32", "float64"})


def fp32_bound(point: BenchPoint) -> bool:
    """Whether the FP32 peak at boost bounds ``point``'s FLOP: an FP32 or FP64 point whose matmul
    precision (where it says one) is true FP32, not TF32."""
    precision = point.extra.get("float32_matmul_precision")
    return point.dtype in FP32_BOUND_DTYPES and precision in (None, "highest")


def judge(
    point: BenchPoint,
    flops: float,
    bytes_moved: float,
    working_set: float | None,
    roof: Roof,
    *,
    bus_bound: bool = False,
) -> BenchPoint:
    """``point`` with its roofline fields filled from its counts under ``roof`` (a copy: a point is
    never patched): intensity, rates, the level its working set lives in, the roof at its
    intensity, its share and, above 110%, why; above the hardware's own limit, ``invalid`` with
    why and no share (``explorer.roofs.placement.above_hardware``); whether that roof was measured while busy; and
    near a cache's edge, its share of the level across it. A GB/s point with no peak of its own takes its
    level's bandwidth as its "% of peak" where its GB/s count the bytes as the roof does (a
    memcpy's count each byte once: its share is the roof's). A bus-bound point gets its rates
    only: no memory level bounds it. An error row, or a point with no time, is returned as it is."""
    if point.error is not None or point.median_s is None:
        return point
    where = place(flops, bytes_moved, point.median_s, roof, working_set, point.threads)
    rated = replace(
        point,
        intensity_flop_per_byte=where.intensity_flop_per_byte,
        gflops=where.gflops,
        gbps=where.gbps,
        working_set_bytes=working_set,
    )
    invalid = above_hardware(roof, where.gflops, where.gbps, working_set, fp32_bound=fp32_bound(point))
    rated = replace(rated, invalid=bool(invalid), invalid_reason=invalid)
    if bus_bound:
        return replace(rated, bound=BUS)
    level = where.memory_ceiling
    placed = replace(
        rated,
        bound=where.bound,
        ridge_flop_per_byte=where.ridge_flop_per_byte,
        memory_level=where.memory_level,
        roof_level=where.roof_level,
        # an invalid point has no share of any roof, and nothing explains it away
        roof_share=None if where.roof_share is None or invalid else round(where.roof_share, 4),
        roof_note="" if invalid else above_roof_reason(where, roof, working_set, point.threads),
        roof_busy=where.roof_busy,
        near_level=where.neighbour.level if where.neighbour is not None else "",
        near_level_share=(
            None if where.neighbour_share is None or invalid else round(where.neighbour_share, 4)
        ),
        bandwidth_ceiling_gbps=level.value if level is not None else point.bandwidth_ceiling_gbps,
        bandwidth_ceiling_basis=(
            f"{level.label}: {level.basis}" if level is not None else point.bandwidth_ceiling_basis
        ),
    )
    if level is None:
        return placed
    was_level_peak = point.peak is not None and point.peak == point.bandwidth_ceiling_gbps
    # its "% of peak" is its share of this level's roof only where its throughput counts the
    # bytes the roof does (a memcpy's GB/s counts each byte once; its roof, read and write)
    same_bytes = (
        point.throughput is not None
        and placed.gbps is not None
        and (abs(placed.gbps - point.throughput) <= 1e-6 * max(point.throughput, 1e-12))
    )
    if point.throughput_unit == "GB/s" and same_bytes and (point.peak is None or was_level_peak):
        return replace(
            placed,
            peak=level.value,
            peak_kind=level.kind,
            peak_is_estimate=level.estimate,
            peak_basis=f"{level.name} roof: {level.basis}",
        )
    return placed


def judged_again(point: BenchPoint, roof: Roof) -> BenchPoint:
    """A copy of ``point`` judged against ``roof`` (the ceilings measured anew), from the rates and
    working set it carries; a point never placed (an error, a hidden test workload) is returned as
    it is."""
    if point.error is not None or point.median_s is None or (point.gbps is None and point.gflops is None):
        return point
    seconds = point.median_s
    flops = (point.gflops or 0.0) * 1e9 * seconds
    moved = (point.gbps or 0.0) * 1e9 * seconds
    return judge(point, flops, moved, point.working_set_bytes, roof, bus_bound=point.bound == BUS)


#: how a recorded roof's device key begins ("recorded:cuda:0"): never this machine's device
RECORDED_PREFIX = "recorded:"


def recorded_device_name(points: Sequence[BenchPoint], device: str) -> str:
    """A recorded device's short name: the name its points carry ("NVIDIA H100 80GB HBM3"), else
    "CPU" or the device key."""
    for p in points:
        name = p.extra.get("device_name") if p.device == device else None
        if isinstance(name, str) and name:
            return name
    return "CPU" if device == "cpu" else device


def judged_roofs(points: Sequence[BenchPoint]) -> list[Roof]:
    """The roofs a set of recorded points were judged against when they were measured, one per
    device, rebuilt from what each point carries (its compute peak, its level's bandwidth roof):
    a lesson's H100 points then stand under the H100's own roofs on any laptop. A device whose
    points carry no roof gives none."""
    roofs: list[Roof] = []
    for device in dict.fromkeys(p.device for p in points if p.error is None):
        mine = [p for p in points if p.device == device and p.error is None]
        ceilings: dict[tuple[str, str], Ceiling] = {}
        for p in mine:
            if p.invalid:  # faster than the hardware can go: no roof is built on it
                continue
            if p.throughput_unit == "GFLOP/s" and p.peak and p.peak > 0:
                kind = (
                    p.peak_kind if p.peak_kind in ("measured", "theoretical", "spec sheet") else "theoretical"
                )
                ceilings.setdefault(
                    ("compute", ""),
                    Ceiling("compute", p.peak, kind, "FP32 peak", p.peak_basis, estimate=p.peak_is_estimate),  # type: ignore[arg-type]
                )
            if p.bandwidth_ceiling_gbps and p.bandwidth_ceiling_gbps > 0 and p.bound != BUS:
                level = p.memory_level if p.memory_level in MEMORY_LEVELS else ""
                ceilings.setdefault(
                    ("memory", level),
                    Ceiling(
                        "memory",
                        p.bandwidth_ceiling_gbps,
                        _kind_of(p.bandwidth_ceiling_basis),
                        level or "memory bandwidth",
                        p.bandwidth_ceiling_basis,
                        level=level,  # type: ignore[arg-type]
                    ),
                )
        if ceilings:
            name = f"{recorded_device_name(mine, device)} (recorded)"
            roofs.append(Roof(RECORDED_PREFIX + device, name, list(ceilings.values()), note="recorded"))
    return roofs


def _kind_of(basis: str) -> CeilingKind:
    """How a carried bandwidth roof was had, from its label ("DRAM (measured while busy): ...")."""
    head = basis.split(":", 1)[0]
    if "(measured" in head:
        return "measured"
    if "(spec sheet" in head:
        return "spec sheet"
    return "theoretical"


def flag_recorded(points: Sequence[BenchPoint]) -> tuple[BenchPoint, ...]:
    """Recorded points judged again against the hardware's own limit, under the roofs they carry
    (``judged_roofs``): a lesson recorded before the invalid rule existed still shows a naive
    timing at 260% of its GPU's FP32 peak as invalid, with no share and nothing explaining it."""
    roofs = {r.device: r for r in judged_roofs(points)}
    flagged: list[BenchPoint] = []
    for p in points:
        roof = roofs.get(RECORDED_PREFIX + p.device)
        if p.error is None and not p.invalid and roof is not None:
            why = above_hardware(roof, p.gflops, p.gbps, p.working_set_bytes, fp32_bound=fp32_bound(p))
            if why:
                p = replace(
                    p, invalid=True, invalid_reason=why, roof_share=None, roof_note="", near_level_share=None
                )
        flagged.append(p)
    return tuple(flagged)
