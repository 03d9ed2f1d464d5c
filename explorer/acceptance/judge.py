"""The acceptance's decisions, apart from the measuring: plain values in, a ``Figure`` or a status
out, so each rule is tested with numbers and never needs a GPU.

Targets (a miss is a finding, not a failure of the script): sgemm >= 70% of the FP32 peak,
vector add and the copy kernel >= 85% of the measured DRAM roof, pinned host-to-device >= 70% of
the PCIe link and faster than pageable, the strided copy within +-25% of the coalescing model at
every stride, the real run's kernel under 1 ms, the padded transpose faster than the naive one,
every occupancy configuration equal to the driver's. And from above: no figure over its
physical roof.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from explorer.acceptance.records import Figure, Status
from explorer.launch.occupancy_truth import compare
from explorer.roofs.latency import AGREEMENT, PUBLISHED, LatencyLadder, ordered
from explorer.roofs.placement import beyond_hardware

SHARE_TARGET = 0.70  # of a peak: sgemm, pinned H2D
#: vector add and the copy kernel against the measured DRAM roof: kernels that keep several loads
#: in flight reach it; one that cannot makes every share below it look like the student's fault
MEMORY_SHARE_TARGET = 0.85
MODEL_TOLERANCE = 0.25  # the strided copy against the coalescing model (DRAM granules past the L2)
#: "Run it for real": the 1-D launch's kernel time on a GPU (a compile or a cold clock inside it
#: read 673 ms for 135k additions on the first GPU)
REALRUN_KERNEL_LIMIT_MS = 1.0
DIVERGENCE_TOLERANCE = 0.30  # the divergent branch's slowdown against the model's


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def share_figure(
    name: str,
    value: float | None,
    unit: str,
    reference: float | None,
    reference_name: str,
    at_least: float = SHARE_TARGET,
    note: str = "",
    *,
    bound: float | None = None,
    bound_name: str = "",
) -> Figure:
    """``value`` as a share of ``reference`` (a peak): met when the share is at least ``at_least``.
    Without a reference the figure is kept and the target said to be unknowable. Above its
    physical roof ``bound`` (more than ``ABOVE_HARDWARE`` times it: the theoretical DRAM
    bandwidth, the FP32 peak at boost) the figure is ``impossible`` and its check fails, with one
    line naming the figure and the bound."""
    target = f">= {at_least:.0%} of {reference_name}"
    if _finite(value) and _finite(bound) and bound and bound > 0:
        assert value is not None
        if beyond_hardware(value, bound):
            ratio = value / reference if _finite(reference) and reference else None
            why = (
                f"{name}: {value:,.0f} {unit} is above {bound_name or 'the hardware limit'} "
                f"{bound:,.0f} {unit} ({value / bound:.0%}): faster than the hardware can go, the timing missed work"
            )
            return Figure(
                name, value, unit, target, reference, reference_name, ratio, False, why, impossible=True
            )
    if not _finite(value) or not _finite(reference) or not reference:
        why = "no value" if not _finite(value) else f"no {reference_name} known"
        return Figure(name, value, unit, target, reference, reference_name, None, None, note or why)
    assert value is not None and reference is not None
    ratio = value / reference
    return Figure(name, value, unit, target, reference, reference_name, ratio, ratio >= at_least, note)


def within_figure(
    name: str,
    value: float | None,
    unit: str,
    model: float | None,
    model_name: str,
    tolerance: float,
    note: str = "",
) -> Figure:
    """``value`` against a model's prediction: met when within ``tolerance`` (0.3 = +-30%)."""
    target = f"within +-{tolerance:.0%} of {model_name}"
    if not _finite(value) or not _finite(model) or not model:
        why = "no value" if not _finite(value) else f"no {model_name}"
        return Figure(name, value, unit, target, model, model_name, None, None, note or why)
    assert value is not None and model is not None
    ratio = value / model
    return Figure(name, value, unit, target, model, model_name, ratio, abs(ratio - 1) <= tolerance, note)


def above_figure(
    name: str, value: float | None, unit: str, reference: float | None, reference_name: str, note: str = ""
) -> Figure:
    """Met when ``value`` is above ``reference`` ("pinned faster than pageable")."""
    target = f"> {reference_name}"
    if not _finite(value) or not _finite(reference) or not reference:
        return Figure(
            name, value, unit, target, reference, reference_name, None, None, note or "not measured"
        )
    assert value is not None and reference is not None
    return Figure(
        name, value, unit, target, reference, reference_name, value / reference, value > reference, note
    )


def under_figure(
    name: str, value: float | None, unit: str, limit: float, limit_name: str, note: str = ""
) -> Figure:
    """Met when ``value`` is under ``limit`` ("the real run's kernel under 1 ms")."""
    target = f"< {limit_name}"
    if not _finite(value):
        return Figure(name, value, unit, target, limit, limit_name, None, None, note or "not measured")
    assert value is not None
    return Figure(name, value, unit, target, limit, limit_name, value / limit, value < limit, note)


def record_figure(name: str, value: float | None, unit: str, note: str = "") -> Figure:
    """A figure kept for the record, with no target."""
    return Figure(name, value, unit, note=note)


def count_figure(
    name: str, count: int, total: int, target: str, what: str, met: bool | None, note: str = ""
) -> Figure:
    """``count`` of ``total`` things (configurations, fields, points, tests) that are as they should be."""
    return Figure(
        name,
        float(count),
        f"of {total}",
        target,
        float(total),
        what,
        count / total if total else None,
        met,
        note,
    )


def status_of(correct: bool, figures: Iterable[Figure]) -> Status:
    """``fail`` when something was wrong or a figure is above the hardware's limit; else ``miss``
    when a target was missed; else ``pass``."""
    figures = list(figures)
    if not correct or any(f.impossible for f in figures):
        return "fail"
    return "miss" if any(f.met is False for f in figures) else "pass"


# --- occupancy against the driver ----------------------------------------------------------------


@dataclass(frozen=True)
class OccupancyCase:
    """One launch configuration: what was asked, what the kernel used, and both answers."""

    threads: int
    regs_cap: int  # numba's max_registers (0: none)
    regs: int  # the registers the compiled kernel uses (the driver's NUM_REGS)
    smem_static: int
    smem_dynamic: int
    driver_blocks: int  # cuOccupancyMaxActiveBlocksPerMultiprocessor
    model_blocks: int  # explorer.launch.occupancy

    @property
    def equal(self) -> bool:
        return self.driver_blocks == self.model_blocks


def occupancy_figure(cases: Sequence[OccupancyCase], wanted: int) -> Figure:
    """How many configurations agree with the driver: the target is every one, ``wanted`` at least."""
    equal = sum(c.equal for c in cases)
    met = equal == len(cases) and len(cases) >= wanted
    note = (
        ""
        if len(cases) >= wanted
        else f"only {len(cases)} of the {wanted} configurations wanted were compared"
    )
    return count_figure(
        "configurations equal to the driver",
        equal,
        len(cases),
        f"all, at least {wanted}",
        "configurations compared",
        met,
        note,
    )


# --- memory models ---------------------------------------------------------------------------------


def _over(a: float | None, b: float | None) -> float | None:
    """a / b where both are finite numbers and b is not 0; else None."""
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)) or b == 0:
        return None
    return a / b


def divergence_figure(divergent_s: float | None, aligned_s: float | None, model_slowdown: float) -> Figure:
    """The divergent branch's time over the warp-aligned one's, against the divergence model's
    slowdown (1 / SIMT efficiency: 2.0 for two paths taken lane by lane)."""
    measured = _over(divergent_s, aligned_s)
    return within_figure(
        "divergent / warp-aligned time",
        measured,
        "x",
        model_slowdown,
        "the divergence model's slowdown",
        DIVERGENCE_TOLERANCE,
    )


def transpose_figure(naive_s: float | None, padded_s: float | None, model_wavefronts: int) -> Figure:
    """The naive tile's time over the padded one's: above 1 when padding pays, as the bank model
    says it must (``model_wavefronts`` shared-memory passes per column read against 1)."""
    measured = _over(naive_s, padded_s)
    return above_figure(
        "tile[32][32] / tile[32][33] time",
        measured,
        "x",
        1.0,
        "1 (padded faster)",
        note=f"bank model: {model_wavefronts} wavefronts per column read against 1; global traffic the same",
    )


def ladder_figures(ladder: LatencyLadder) -> tuple[bool, list[Figure]]:
    """A measured latency ladder against the published Hopper figures: (the levels ordered L1 < L2
    < DRAM, one figure per level met when within ``AGREEMENT`` of the published range). A level
    the ladder could not tell is a figure without a value, never a pass."""
    levels = ladder.levels()
    figures = []
    for level in ("shared", "L1", "L2", "DRAM"):
        published = PUBLISHED[level]
        value = levels.get(level)
        target = f"within +-{AGREEMENT:.0%} of the published {published.text} cycles"
        met = None if value is None else published.agrees(value)
        ns = ladder.level_ns(level) if value is not None else None
        note = f"{ns:.0f} ns at {ladder.sm_clock_mhz:.0f} MHz" if ns is not None else "not measured"
        figures.append(Figure(f"{level} latency", value, "cycles", target, None, "", None, met, note))
    present = [levels.get(k) for k in ("L1", "L2", "DRAM")]
    return (all(v is not None for v in present) and ordered(levels)), figures


@dataclass(frozen=True)
class GpmOccupancyCase:
    """One launch of known occupancy: the app's prediction and what GPM measured over a window the
    kernel filled (None, and why, where GPM gave nothing)."""

    name: str
    predicted_pct: float
    measured_pct: float | None
    why: str = ""


def occupancy_truth_figures(cases: Sequence[GpmOccupancyCase], tolerance_points: float) -> list[Figure]:
    """Each launch's GPM SM occupancy against the predicted one: met within ``tolerance_points``
    percentage points (the kernel filled GPM's whole window, so the expected reading is the
    prediction). A case without a reading keeps its reason and no verdict."""
    figures = []
    for c in cases:
        target = f"within +-{tolerance_points:g} points of the predicted {c.predicted_pct:.1f} %"
        if c.measured_pct is None:
            figures.append(Figure(c.name, None, "%", target, c.predicted_pct, "predicted", None, None, c.why))
            continue
        agreement = compare(c.predicted_pct, c.measured_pct, tolerance_points)
        figures.append(
            Figure(
                c.name,
                c.measured_pct,
                "%",
                target,
                c.predicted_pct,
                "predicted",
                None,
                agreement.within,
                f"{agreement.difference_points:+.1f} points",
            )
        )
    return figures
