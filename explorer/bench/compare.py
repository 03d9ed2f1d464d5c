"""Compare a run's points: series per variant, the GPU's speedup over the CPU, and how each
measurement stands against its device's peak.

The panel draws what this module computes; the CLI prints the same peak share, so a figure
never reads one way in the window and another in a terminal. Error rows are left out of the
series (a failed point has no time, and a zero would lie on a log axis); the table keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from explorer.bench.fmt import number_text
from explorer.bench.results import BenchPoint
from explorer.roofs.model import ABOVE_HARDWARE, INVALID_WORDS
from explorer.words import percent


@dataclass
class Series:
    variant: str
    device: str
    unit: str
    sizes: list[int] = field(default_factory=list)
    size_labels: list[str] = field(default_factory=list)
    median_s: list[float] = field(default_factory=list)
    throughput: list[float | None] = field(default_factory=list)
    noisy: list[bool] = field(default_factory=list)  # the noise verdict of each point (hollow on the plot)
    #: each point faster than the hardware can go (``BenchPoint.invalid``: crossed on the plot)
    invalid: list[bool] = field(default_factory=list)
    peak: float | None = None
    peak_basis: str = ""
    peak_is_estimate: bool = False
    peak_kind: str = ""


@dataclass
class SpeedupCurve:
    """GPU over CPU at each size both measured: CPU median / GPU median (above 1, the GPU wins)."""

    variant: str
    reference: str  # the CPU variant it is measured against
    sizes: list[int]
    ratios: list[float]

    @property
    def label(self) -> str:
        return f"{self.variant} vs {self.reference}"


def build_series(points: Sequence[BenchPoint]) -> list[Series]:
    """One series per variant, sizes ascending; a re-measured size replaces the older point."""
    latest: dict[tuple[str, int], BenchPoint] = {}
    order: list[str] = []
    for p in points:
        if p.error is not None or p.median_s is None:
            continue
        if p.variant not in order:
            order.append(p.variant)
        latest[(p.variant, p.size)] = p
    series: list[Series] = []
    for variant in order:
        rows = sorted((p for (v, _), p in latest.items() if v == variant), key=lambda p: p.size)
        first = rows[0]
        s = Series(variant=variant, device=first.device, unit=first.throughput_unit)
        for p in rows:
            s.sizes.append(p.size)
            s.size_labels.append(tick_label(p.size, p.size_label))
            assert p.median_s is not None  # points without one were left out above
            s.median_s.append(p.median_s)
            s.throughput.append(p.throughput)
            s.noisy.append(p.noisy)
            s.invalid.append(p.invalid)
            if p.peak is not None:
                s.peak, s.peak_basis, s.peak_is_estimate = p.peak, p.peak_basis, p.peak_is_estimate
                s.peak_kind = p.peak_kind
        if len({p.peak for p in rows if p.peak is not None}) > 1:
            # points judged against different memory levels' roofs (L1 for the small sizes, DRAM
            # for the big ones) have no one peak line: the roofline's levels show them
            s.peak, s.peak_basis, s.peak_is_estimate, s.peak_kind = None, "", False, ""
        series.append(s)
    return series


def speedup_reference(series: Sequence[Series]) -> Series | None:
    """The first CPU variant measured: every GPU variant's speedup is over this one."""
    return next((s for s in series if s.device == "cpu"), None)


def speedup_curves(series: Sequence[Series]) -> list[SpeedupCurve]:
    """One curve per GPU variant, at the sizes the CPU reference measured too."""
    cpu = speedup_reference(series)
    if cpu is None:
        return []
    cpu_by_size = dict(zip(cpu.sizes, cpu.median_s, strict=True))
    curves = []
    for s in series:
        if s.device == "cpu":
            continue
        pairs = [
            (n, cpu_by_size[n] / t)
            for n, t in zip(s.sizes, s.median_s, strict=True)
            if n in cpu_by_size and t > 0
        ]
        if pairs:
            curves.append(SpeedupCurve(s.variant, cpu.variant, [n for n, _ in pairs], [r for _, r in pairs]))
    return curves


def tick_label(size: int, size_label: str) -> str:
    """A short axis label: the engine's own for byte sizes ("4 KiB"), else 100, 10k, 30M."""
    if size_label.endswith("B"):
        return size_label
    if size < 10_000:
        return str(size)
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size >= scale:
            return f"{size / scale:.3g}{suffix}"
    return str(size)


# --- measured against the peak ---------------------------------------------------------------


def _device_name(device: str) -> str:
    return "CPU" if device == "cpu" else device


def peak_word(kind: str, unit: str, is_estimate: bool, level: str = "") -> str:
    """What the line is called, from the peak's own record: a memory level's roof is "L2 roof", a
    formula over a reported clock is an estimate, one over a measured clock a theoretical peak."""
    if unit == "GB/s" and level:
        return f"{level} roof"
    if kind == "measured":
        return "measured bandwidth" if unit == "GB/s" else "measured ceiling"
    if kind == "spec sheet":
        return "spec-sheet peak"
    if is_estimate:
        return "estimated peak"
    return "theoretical peak" if kind == "theoretical" else "peak"


def peak_label(s: Series, *, with_basis: bool = True) -> str:
    """The peak line's label, saying so where the peak is an estimate rather than a reported figure:
    "CPU peak, estimate from advertised clock: 144 GFLOP/s". Without ``with_basis`` only the device,
    the kind of peak and the figure, for a plot too narrow for the rest (the table's caption and
    the line's hover text say the basis in full)."""
    if s.peak is None:
        return ""
    # the basis up to its details in brackets: the per-ISA detail is in the hover text
    short = s.peak_basis.split(" (", 1)[0] if s.peak_kind != "measured" and with_basis else ""
    basis = f", {short}" if short else ""
    word = "measured bandwidth" if s.peak_kind == "measured" and s.unit == "GB/s" else "peak"
    if s.peak_kind == "theoretical" and not s.peak_is_estimate:  # on a measured clock: as the table says
        word = "theoretical peak"
    return f"{_device_name(s.device)} {word}{basis}: {number_text(s.peak, s.unit)}"


def above_estimate_reason(device: str, peak_basis: str, is_estimate: bool = True) -> str:
    """Why a measurement can beat the compute peak it is drawn against, so no share above 100% goes
    unexplained. (A memory level's roof says its own reason: ``BenchPoint.roof_note``.)"""
    if device == "cpu" and not is_estimate:  # cores x the measured clock x FLOP per cycle
        return (
            "A measured value above this peak means the cores ran faster during it than when the clock "
            "was measured with every core busy (fewer busy cores turbo higher, or the clock was measured "
            "while other programs were busy): re-measure the ceilings on a quiet machine."
        )
    if device == "cpu" and "advertised" in peak_basis:
        return (
            "A measured value above this estimated peak means the CPU boosted above its advertised clock, "
            "which the estimate assumes; the estimate is cores x clock x FLOP per cycle, not a measurement."
        )
    where = "the CPU's maximum clock" if device == "cpu" else "the GPU's boost clock"
    return (
        f"This peak is at {where} already: a measured value more than {ABOVE_HARDWARE - 1:.0%} above it "
        f"is invalid ({INVALID_WORDS})."
    )


def peak_tooltip(s: Series) -> str:
    """The peak line's hover text: what the figure is, and what a point above it means."""
    if s.peak is None:
        return ""
    text = peak_label(s) + "."
    if s.peak_basis and s.peak_basis.split(" (", 1)[0] != s.peak_basis:
        text += f" Basis: {s.peak_basis}."
    if s.unit != "GB/s" and (s.peak_is_estimate or s.peak_kind == "theoretical"):
        text += " " + above_estimate_reason(s.device, s.peak_basis, s.peak_is_estimate)
        above = [v for v in s.throughput if v is not None and v > s.peak]
        if above:
            text += f" Here {len(above)} of {len(s.throughput)} points are above it (best {number_text(max(above), s.unit)})."
    return text


def peak_share(p: BenchPoint) -> float | None:
    """Measured throughput as a fraction of the device's peak (1.02 = 2 % above it): for a GB/s
    point, of its memory level's roof."""
    if p.error is not None or p.throughput is None or not p.peak:
        return None
    return p.throughput / p.peak


def peak_share_cell(p: BenchPoint) -> str:
    """The table's "% of peak" cell: the share alone ("81.3%", one rule with the CLI and the launch
    texts); the peak is said once, in the table's caption (``peak_captions``), and why a share is
    above 100% in the row's note (``above_peak_reason``)."""
    share = peak_share(p)
    return "" if share is None else percent(share)


def above_peak_reason(p: BenchPoint) -> str:
    """In a few words, why a point is above the line it is measured against ("" when it is not):
    a memory level's roof says its own reason (``roof_note``) where the point is above 110% of it;
    a point faster than the hardware can go says that it is invalid, and nothing explains it away."""
    if p.invalid:
        return p.invalid_reason
    if p.roof_note:
        return p.roof_note
    share = peak_share(p)
    if share is None or share <= 1:
        return ""
    if (
        p.peak_kind == "theoretical"
        and not p.peak_is_estimate
        and p.device == "cpu"
        and p.throughput_unit != "GB/s"
    ):
        return "cores ran above the measured clock"
    return ""


def l2_state(p: BenchPoint) -> str:
    """ "L2 cold" or "L2 warm" for a GPU memory point that says which it ran with ("" otherwise)."""
    state = p.extra.get("l2")
    return f"L2 {state}" if state in ("cold", "warm") else ""


def warm_above_dram_note(p: BenchPoint) -> str:
    """Beside a warm point above the DRAM roof only: why it can be (its L2 kept the data)."""
    note = p.extra.get("l2_note")
    return note if isinstance(note, str) and p.extra.get("l2") == "warm" else ""


def _level_of_peak(p: BenchPoint) -> str:
    """The memory level whose roof is the point's peak ("" where its peak is not a level's)."""
    if p.throughput_unit == "GB/s" and p.memory_level and p.peak == p.bandwidth_ceiling_gbps:
        return p.memory_level
    return ""


def peak_share_text(p: BenchPoint) -> str:
    """ "81.3% of theoretical peak 355 GFLOP/s", "64% of L2 roof 225 GB/s" (the CLI's line): the
    word from the peak's own record, and why where a share is above 110% of its roof."""
    share = peak_share(p)
    if share is None:
        return ""
    word = peak_word(p.peak_kind, p.throughput_unit, p.peak_is_estimate, _level_of_peak(p))
    reason = above_peak_reason(p)
    return f"{percent(share)} of {word} {number_text(p.peak, p.throughput_unit)}" + (
        f": {reason}" if reason else ""
    )


def peak_captions(points: Sequence[BenchPoint]) -> list[str]:
    """Each device's peaks once, for the table's caption: "CPU theoretical peak 355 GFLOP/s
    (measured clock 2.78 GHz x 2 cores x 64 FLOP/cycle (AVX-512 ...))"; a memory level's roof
    without its long basis ("CPU L2 roof 225 GB/s (measured)": the row's hover says it), in the
    order measured."""
    seen: dict[tuple[str, str, str], str] = {}
    for p in points:
        level = _level_of_peak(p)
        key = (p.device, p.throughput_unit, level)
        if p.error is not None or not p.peak or key in seen:
            continue
        word = peak_word(p.peak_kind, p.throughput_unit, p.peak_is_estimate, level)
        if level:
            basis = f" ({p.peak_kind}{' while busy' if 'while busy' in p.bandwidth_ceiling_basis else ''})"
        else:
            basis = f" ({p.peak_basis})" if p.peak_basis else ""
        seen[key] = f"{_device_name(p.device)} {word} {number_text(p.peak, p.throughput_unit)}{basis}"
    return list(seen.values())


def peak_note(p: BenchPoint) -> str:
    """The table's hover text for a throughput: its share of the peak, where that peak comes from,
    and, when the measurement beats the peak, why that is not a contradiction."""
    share = peak_share(p)
    if share is None:
        return ""
    text = peak_share_text(p)
    if p.peak_basis:
        text += f" ({p.peak_basis})"
    text += "."
    if p.invalid:  # faster than the hardware can go: no clock or boost explains it
        return text
    if share > 1 and not _level_of_peak(p) and (p.peak_is_estimate or p.peak_kind == "theoretical"):
        text += " " + above_estimate_reason(p.device, p.peak_basis, p.peak_is_estimate)
    return text
