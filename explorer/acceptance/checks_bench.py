"""The benchmarks on the GPU, through the app's own engine (a worker process per run, honest
timing, every result checked against the host): first every workload's GPU variants at small
sizes, then the figures against their targets.

Points are found by their variant's key (``BenchPoint.variant_key``), never by the words of a label.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from explorer.acceptance.context import CannotRun, CheckContext
from explorer.acceptance.judge import (
    MEMORY_SHARE_TARGET,
    MODEL_TOLERANCE,
    above_figure,
    count_figure,
    divergence_figure,
    ladder_figures,
    record_figure,
    share_figure,
    status_of,
    transpose_figure,
    within_figure,
)
from explorer.acceptance.records import CheckResult, Figure
from explorer.words import count

if TYPE_CHECKING:
    from explorer.bench.results import BenchPoint
    from explorer.roofs.model import Ceiling, Quantity

#: a point taking longer than this is an error row and its worker is replaced
POINT_TIMEOUT_S = 120.0
#: the only error a one-GPU machine is expected to give: the two-GPU workload's own refusal
EXPECTED_ON_ONE_GPU = "needs two GPUs"
#: the utilization trap: NVML's "utilization" reads at least this with one warp at work...
TRAP_UTILIZATION_AT_LEAST = 90.0
#: ... while GPM's SM activity reads at most this (one SM of 132 is 0.76%)
TRAP_ACTIVITY_AT_MOST = 5.0
#: NVML's PCIe counter against the copy's own rate while a pinned copy runs
PCIE_COUNTER_TOLERANCE = 0.5


def run_points(ctx: CheckContext, workload: str, sizes: Sequence[int], budget_s: float) -> list[BenchPoint]:
    """One plan through the app's runner on the context's GPU; every point is logged as it lands."""
    from explorer.bench.lines import format_point
    from explorer.bench.runner import BenchPlan, BenchRun

    plan = BenchPlan(
        workload, [ctx.device], sizes=list(sizes), time_budget_s=budget_s, point_timeout_s=POINT_TIMEOUT_S
    )
    points = []
    for point in BenchRun(plan).run_all():
        ctx.log(format_point(point))
        points.append(point)
    return points


def point_of(
    points: Sequence[BenchPoint], workload: str, key: str, device: str, size: int
) -> BenchPoint | None:
    return next(
        (p for p in points if (p.workload, p.variant_key, p.device, p.size) == (workload, key, device, size)),
        None,
    )


def _row(p: BenchPoint) -> dict[str, Any]:
    return {
        "workload": p.workload,
        "variant": p.variant,
        "size": p.size,
        "error": p.error,
        "median_s": p.median_s,
        "throughput": p.throughput,
        "unit": p.throughput_unit,
        "peak": p.peak,
        "peak_basis": p.peak_basis,
        "model": p.model,
        "model_estimate": p.model_estimate,
        "noisy": p.noisy,
        "noise_reason": p.noise_reason,
        "extra": p.extra,
    }


def hardware_bounds(device: str) -> tuple[float | None, float | None]:
    """``device``'s physical roofs, which no figure may beat: its FP32 peak at boost clock and its
    theoretical DRAM bandwidth (``None`` where not known), from its record's roof."""
    from explorer.bench import peaks
    from explorer.devices.roofs import record_roof
    from explorer.roofs.placement import boost_peak

    rec = peaks.device_record(device)
    if rec is None:
        return None, None
    roof = record_roof(rec)
    peak, dram = boost_peak(roof), roof.dram_peak()
    return (peak[0] if peak else None), (dram.value if dram else None)


def _impossible(figures: Sequence[Figure]) -> str:
    """The first figure above the hardware's limit, its one line; "" where none is."""
    return next((f"; FAILED: {f.note}" for f in figures if f.impossible), "")


def _disturbed(points: Sequence[BenchPoint]) -> str:
    noisy = [p for p in points if p.noisy]
    return f"{count(len(noisy), 'point')} disturbed: {noisy[0].noise_reason}" if noisy else ""


def _failed(name: str, points: Sequence[BenchPoint], what: str) -> CheckResult | None:
    bad = [p for p in points if p.error]
    if not points:
        return CheckResult(name, "fail", f"{what}: the runner returned no point")
    if bad:
        return CheckResult(
            name,
            "fail",
            f"{what}: {bad[0].variant} {bad[0].size_label}: {bad[0].error}",
            details={"points": [_row(p) for p in points]},
        )
    return None


def check_workloads(ctx: CheckContext) -> CheckResult:
    """Every workload's GPU variants at small sizes; each checks its own result against the host."""
    from explorer.bench.workloads import get_workload

    rows, unexpected, expected = [], [], []
    for name, sizes in ctx.sizes.small.items():
        t0 = time.monotonic()
        points = run_points(ctx, name, sizes, ctx.sizes.small_budget_s)
        for p in points:
            if p.error is None:
                continue
            if get_workload(name).needs_gpu_count >= 2 and p.error.startswith(EXPECTED_ON_ONE_GPU):
                expected.append(f"{name}: {p.error}")
            else:
                unexpected.append(f"{p.variant} {p.size_label}: {p.error}")
        rows += [_row(p) for p in points]
        ctx.log(f"{name}: {len(points)} points in {time.monotonic() - t0:.1f} s")
    measured = sum(r["error"] is None for r in rows)
    figure = count_figure(
        "GPU points measured and checked",
        measured,
        len(rows),
        "all but the refusals a one-GPU machine gives",
        "points",
        not unexpected,
    )
    summary = f"{len(ctx.sizes.small)} workloads, {measured} of {len(rows)} points right"
    if unexpected:
        summary += f"; {len(unexpected)} wrong or failed: {unexpected[0]}"
    if expected:
        summary += f"; expected here: {expected[0]}"
    details = {"points": rows, "unexpected": unexpected, "expected": expected}
    return CheckResult("workloads", "fail" if unexpected else "pass", summary, [figure], details)


def check_sgemm(ctx: CheckContext) -> CheckResult:
    n = ctx.sizes.sgemm_n
    points = run_points(ctx, "matmul", [n], ctx.sizes.point_budget_s)
    failed = _failed("sgemm", points, "the matmul")
    if failed:
        return failed
    p = points[0]
    precision = p.extra.get("float32_matmul_precision")
    peak, _ = hardware_bounds(ctx.device)
    figure = share_figure(
        f"sgemm n={n} (FP32, TF32 off)",
        p.throughput,
        "GFLOP/s",
        p.peak,
        "the FP32 peak",
        note=p.peak_basis,
        bound=peak,
        bound_name="the FP32 peak at boost clock",
    )
    correct = precision == "highest"
    summary = (
        f"{p.throughput:,.0f} GFLOP/s at n={n}"
        + (f", {figure.ratio:.0%} of the FP32 peak" if figure.ratio is not None else "")
        + ("" if correct else f"; float32_matmul_precision was {precision!r}, so TF32 may have been used")
    )
    summary += _impossible([figure])
    if p.noisy:
        summary += f"; disturbed: {p.noise_reason}"
    return CheckResult("sgemm", status_of(correct, [figure]), summary, [figure], {"points": [_row(p)]})


def check_memory_bandwidth(ctx: CheckContext) -> CheckResult:
    """Vector add (a numba kernel, no copies) and a unit-stride copy kernel against the DRAM roof."""
    n = ctx.sizes.vector_n
    add = run_points(ctx, "vector_add", [n], ctx.sizes.point_budget_s)
    copy = run_points(ctx, "strided_copy", [1], ctx.sizes.point_budget_s)
    failed = _failed("memory_bandwidth", add + copy, "vector add and copy")
    if failed:
        return failed
    kernel = point_of(add, "vector_add", "numba_kernel", ctx.device, n)
    copied = point_of(copy, "strided_copy", "numba_kernel", ctx.device, 1)
    figures = []
    _, dram = hardware_bounds(ctx.device)
    for p, name in ((kernel, f"vector add N={n:,} (kernel only)"), (copied, "copy kernel (stride 1)")):
        if p is None:
            return CheckResult(
                "memory_bandwidth",
                "fail",
                f"no point for {name}",
                details={"points": [_row(q) for q in add + copy]},
            )
        figures.append(
            share_figure(
                name,
                p.throughput,
                "GB/s",
                p.peak,
                "the DRAM roof",
                MEMORY_SHARE_TARGET,
                note=p.peak_basis,
                bound=dram,
                bound_name="the theoretical DRAM bandwidth",
            )
        )
    with_copies = point_of(add, "vector_add", "numba_with_copies", ctx.device, n)
    if with_copies is not None:
        figures.append(
            record_figure(
                "vector add with its PCIe copies", with_copies.throughput, "GB/s", "bounded by the bus"
            )
        )
    summary = ", ".join(
        f"{f.name}: {f.value:,.0f} GB/s" + (f" ({f.ratio:.0%})" if f.ratio else "") for f in figures[:2]
    )
    summary += _impossible(figures)
    if _disturbed(add + copy):
        summary += f"; {_disturbed(add + copy)}"
    return CheckResult(
        "memory_bandwidth",
        status_of(True, figures),
        summary,
        figures,
        {"points": [_row(p) for p in add + copy]},
    )


def watch_pcie(ctx: CheckContext, nbytes: int, seconds: float) -> tuple[float, list[float], str]:
    """Pinned host-to-device copies for ``seconds`` while the app's live reader (``NvmlSession``)
    samples NVML's PCIe counter: (the copies' own rate in B/s, the counter's readings in B/s,
    why there are none)."""
    import torch

    from explorer.devices.nvml import NvmlSession
    from explorer.gpuqueue.share import gpu_identity

    index = gpu_identity(ctx.device, ctx.nvml)[1]
    if index is None:
        return 0.0, [], f"NVML does not list {ctx.device}"
    dev = torch.device(ctx.device)
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).fill_(3)
    buf = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    buf.copy_(host, non_blocking=True)
    torch.cuda.synchronize(dev)
    stop = threading.Event()
    moved = [0]

    def copy_loop() -> None:
        while not stop.is_set():
            buf.copy_(host, non_blocking=True)
            torch.cuda.synchronize(dev)
            moved[0] += nbytes

    readings: list[float] = []
    reasons: list[str] = []
    worker = threading.Thread(target=copy_loop, daemon=True)
    with NvmlSession(ctx.nvml) as session:
        t0 = time.perf_counter()
        worker.start()
        end = t0 + seconds
        while time.perf_counter() < end:
            live = session.read_live(index)
            if live.pcie_rx_bytes_per_s is not None:
                readings.append(live.pcie_rx_bytes_per_s)
            else:
                reasons.append(live.unavailable.get("pcie_rx_bytes_per_s") or "no reading")
        stop.set()
        worker.join()
        elapsed = time.perf_counter() - t0
    return moved[0] / elapsed, readings, (reasons[0] if reasons and not readings else "")


def check_pcie(ctx: CheckContext) -> CheckResult:
    """Pinned vs pageable copies against the PCIe link, and the Devices page's PCIe counter during one."""
    size = max(ctx.sizes.copy_bytes)
    points = run_points(ctx, "copies", ctx.sizes.copy_bytes, ctx.sizes.point_budget_s)
    failed = _failed("pcie", points, "the copies")
    if failed:
        return failed
    got = {
        key: point_of(points, "copies", key, ctx.device, size)
        for key in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable")
    }
    pinned, pageable = got["h2d_pinned"], got["h2d_pageable"]
    if pinned is None or pageable is None:
        return CheckResult(
            "pcie",
            "fail",
            "the copies returned no host-to-device points",
            details={"points": [_row(p) for p in points]},
        )
    link = str(pinned.extra.get("pcie_link", "the PCIe link"))
    figures = [
        share_figure(
            f"pinned H2D {size >> 20} MiB",
            pinned.throughput,
            "GB/s",
            pinned.peak,
            f"the PCIe link ({link})",
            bound=pinned.peak,  # the link's own maximum: no copy beats it
            bound_name=f"the PCIe link's maximum ({link})",
        ),
        above_figure(
            "pinned H2D against pageable", pinned.throughput, "GB/s", pageable.throughput, "pageable H2D"
        ),
    ]
    for key in ("d2h_pinned", "d2h_pageable"):
        p = got[key]
        if p is not None:
            figures.append(record_figure(f"{key.replace('_', ' ')} {size >> 20} MiB", p.throughput, "GB/s"))
    rate, readings, why = watch_pcie(ctx, size, ctx.sizes.pcie_watch_s)
    counter = statistics.median(readings) / 1e9 if readings else None
    figures.append(
        within_figure(
            "NVML PCIe in (the Devices page) during pinned H2D",
            counter,
            "GB/s",
            rate / 1e9,
            "the copies' own rate",
            PCIE_COUNTER_TOLERANCE,
            note=why or f"median of {len(readings)} readings",
        )
    )
    summary = (
        f"pinned H2D {pinned.throughput:,.1f} GB/s"
        + (f" ({figures[0].ratio:.0%} of {link})" if figures[0].ratio else "")
        + f", pageable {pageable.throughput:,.1f} GB/s; NVML's counter read "
        + (
            f"{counter:,.1f} GB/s while copies ran at {rate / 1e9:,.1f}"
            if counter is not None
            else f"nothing ({why})"
        )
    )
    summary += _impossible(figures)
    details = {"points": [_row(p) for p in points], "counter_readings_bps": readings, "copy_rate_bps": rate}
    return CheckResult("pcie", status_of(True, figures), summary, figures, details)


def strided_figures(points: Sequence[BenchPoint]) -> tuple[list[Figure], list[Figure]]:
    """(the summary figures, one figure per stride): each stride's GB/s against the coalescing
    model's estimate, within ``MODEL_TOLERANCE``; how many are inside, and the one furthest out."""
    per_stride = [
        within_figure(
            f"stride {p.size}", p.throughput, "GB/s", p.model_estimate, "the model", MODEL_TOLERANCE
        )
        for p in sorted(points, key=lambda q: q.size)
    ]
    judged = [f for f in per_stride if f.met is not None]
    inside = sum(bool(f.met) for f in judged)
    worst = max(judged, key=lambda f: abs((f.ratio or 1) - 1), default=None)
    figures = [
        count_figure(
            f"strides within +-{MODEL_TOLERANCE:.0%} of the coalescing model",
            inside,
            len(per_stride),
            "every stride",
            "strides measured",
            (inside == len(per_stride)) if judged else None,
            "" if judged else "no memory bandwidth known to scale the model",
        )
    ]
    if worst is not None:
        figures.append(
            Figure(
                f"furthest: {worst.name}",
                worst.value,
                "GB/s",
                worst.target,
                worst.reference,
                "the model",
                worst.ratio,
                worst.met,
            )
        )
    return figures, per_stride


def check_strided_copy(ctx: CheckContext) -> CheckResult:
    """The strided copy, stride by stride, against the coalescing model (``MODEL_TOLERANCE``)."""
    points = run_points(ctx, "strided_copy", ctx.sizes.strides, ctx.sizes.stride_budget_s)
    failed = _failed("strided_copy", points, "the strided copy")
    if failed:
        return failed
    figures, per_stride = strided_figures(points)
    inside, worst = int(figures[0].value or 0), figures[1] if len(figures) > 1 else None
    summary = f"{inside} of {len(per_stride)} strides within +-{MODEL_TOLERANCE:.0%} of the model" + (
        f"; {worst.name} at {worst.ratio:.2f}x the model" if worst is not None and worst.ratio else ""
    )
    details = {"points": [_row(p) for p in points], "per_stride": [f.__dict__ for f in per_stride]}
    return CheckResult("strided_copy", status_of(True, figures), summary, figures, details)


def _pair(
    ctx: CheckContext, check: str, workload: str, size: int, keys: tuple[str, str], what: str
) -> tuple[list[BenchPoint], BenchPoint, BenchPoint] | CheckResult:
    """Two variants of one workload at one size, measured together: (points, first, second), or
    the failed result saying what went wrong."""
    points = run_points(ctx, workload, [size], ctx.sizes.point_budget_s)
    failed = _failed(check, points, what)
    if failed:
        return failed
    first, second = (point_of(points, workload, key, ctx.device, size) for key in keys)
    if first is None or second is None:
        return CheckResult(check, "fail", f"{what} returned no {keys[0]} or {keys[1]} point")
    return points, first, second


def check_transpose(ctx: CheckContext) -> CheckResult:
    n = ctx.sizes.transpose_n
    pair = _pair(ctx, "transpose", "shared_transpose", n, ("naive", "padded"), "the transpose")
    if isinstance(pair, CheckResult):
        return pair
    points, naive, padded = pair
    wavefronts = int(float(naive.extra.get("wavefronts_model", 0)))
    figures = [
        transpose_figure(naive.median_s, padded.median_s, wavefronts),
        record_figure("tile[32][32]", naive.throughput, "GB/s"),
        record_figure("tile[32][33]", padded.throughput, "GB/s"),
    ]
    summary = f"n={n}: naive {naive.throughput:,.0f} GB/s, padded {padded.throughput:,.0f} GB/s" + (
        f" ({figures[0].value:.2f}x)" if figures[0].value else ""
    )
    return CheckResult(
        "transpose", status_of(True, figures), summary, figures, {"points": [_row(p) for p in points]}
    )


def check_branch(ctx: CheckContext) -> CheckResult:
    n = ctx.sizes.branch_n
    pair = _pair(ctx, "branch", "branch", n, ("divergent", "warp_aligned"), "the branch kernels")
    if isinstance(pair, CheckResult):
        return pair
    points, lane, warp = pair
    lane_simt = float(lane.extra.get("simt_efficiency_model", 0.5))
    warp_simt = float(warp.extra.get("simt_efficiency_model", 1.0))
    figure = divergence_figure(lane.median_s, warp.median_s, warp_simt / lane_simt)
    summary = (
        f"N={n:,}: divergent {(lane.median_s or 0) * 1e3:.2f} ms, warp-aligned {(warp.median_s or 0) * 1e3:.2f} ms"
        + (
            f" ({figure.value:.2f}x; model {figure.reference:.1f}x)"
            if figure.value and figure.reference
            else ""
        )
    )
    return CheckResult(
        "branch", status_of(True, [figure]), summary, [figure], {"points": [_row(p) for p in points]}
    )


def trap_figures(points: Sequence[BenchPoint], sms: int | None) -> list[Figure]:
    """NVML's utilization and GPM's SM activity per point: one warp must read >= 90% utilization
    and <= 5% SM activity (the trap shown); more blocks are recorded."""
    figures = []
    for p in sorted(points, key=lambda q: q.size):
        util = p.extra.get("nvml_gpu_utilization_pct")
        activity = p.extra.get("gpm_sm_activity_pct")
        missing = str(p.extra.get("gpm_sm_activity_pct_missing", ""))
        label = f"{count(p.size, 'block')} of one warp"
        if p.size == 1:
            figures.append(
                Figure(
                    f"NVML utilization, {label}",
                    float(util) if util is not None else None,
                    "%",
                    f">= {TRAP_UTILIZATION_AT_LEAST:.0f}% (NVML counts time, not SMs)",
                    met=None if util is None else float(util) >= TRAP_UTILIZATION_AT_LEAST,
                )
            )
            figures.append(
                Figure(
                    f"SM activity (GPM), {label}",
                    float(activity) if activity is not None else None,
                    "%",
                    f"<= {TRAP_ACTIVITY_AT_MOST:.0f}% (1 SM of {sms or '?'} has work)",
                    met=None if activity is None else float(activity) <= TRAP_ACTIVITY_AT_MOST,
                    note=missing,
                )
            )
        else:
            figures.append(
                record_figure(f"NVML utilization, {label}", float(util) if util is not None else None, "%")
            )
            figures.append(
                record_figure(
                    f"SM activity (GPM), {label}",
                    float(activity) if activity is not None else None,
                    "%",
                    missing,
                )
            )
    return figures


def check_utilization_trap(ctx: CheckContext) -> CheckResult:
    """One warp on one SM: NVML's utilization against GPM's SM activity, and a block on every SM."""
    from explorer.acceptance.checks_launch import sm_count

    sms = sm_count(ctx)
    blocks = sorted({b or sms or 1 for b in ctx.sizes.trap_blocks})
    points = run_points(ctx, "utilization_trap", blocks, ctx.sizes.point_budget_s)
    failed = _failed("utilization_trap", points, "the utilization trap")
    if failed:
        return failed
    figures = trap_figures(points, sms)
    one = next((p for p in points if p.size == 1), points[0])
    summary = one.model + (f"; {_disturbed(points)}" if _disturbed(points) else "")
    return CheckResult(
        "utilization_trap", status_of(True, figures), summary, figures, {"points": [_row(p) for p in points]}
    )


def check_roofs(ctx: CheckContext) -> CheckResult:
    """The roofline's measured ceilings on this GPU (every level the app measures: L2 and DRAM),
    next to the theoretical ones: what the Benchmarks page draws. L2 must beat DRAM."""
    from explorer.bench import peaks
    from explorer.devices.roofs import record_roof

    saved = peaks.ensure_measured(ctx.device, force=True)
    rec = peaks.device_record(ctx.device)
    if saved is None or rec is None:
        raise CannotRun(f"{ctx.device} has no fingerprint here (discovery did not find it)")
    roof = saved.stored
    theoretical = {c.quantity: c for c in record_roof(rec).ceilings if c.kind != "measured"}
    peak, dram = hardware_bounds(ctx.device)
    figures = roof_figures(roof.ceilings, theoretical, peak, dram)
    summary = "; ".join(
        f"{f.name} {f.value:,.0f} {f.unit}" + (f" ({f.ratio:.0%} of {f.reference_name})" if f.ratio else "")
        for f in figures
    )
    levels = {c.level: c.value for c in roof.ceilings if c.quantity == "memory" and c.level}
    ordered = "L2" not in levels or "DRAM" not in levels or levels["L2"] > levels["DRAM"]
    if not ordered:
        summary += f"; L2 ({levels['L2']:,.0f} GB/s) is not above DRAM ({levels['DRAM']:,.0f} GB/s)"
    summary += _impossible(figures)
    if not roof.quiet:
        summary += f"; measured while busy ({roof.busy_reason})"
    return CheckResult(
        "roofs",
        "pass" if figures and ordered and not any(f.impossible for f in figures) else "fail",
        summary or "no ceiling was measured",
        figures,
        {"roof": [c.to_dict() for c in roof.ceilings]},
    )


def roof_figures(
    ceilings: Sequence[Ceiling], theoretical: dict[Quantity, Ceiling], peak: float | None, dram: float | None
) -> list[Figure]:
    """Each measured ceiling beside the theoretical one of its quantity; a compute ceiling above
    the FP32 peak at boost or a DRAM one above the theoretical DRAM bandwidth (``ABOVE_HARDWARE``)
    is ``impossible``, said in one line naming both."""
    from explorer.roofs.placement import beyond_hardware

    figures = []
    for c in ceilings:
        ref = theoretical.get(c.quantity)
        bound = peak if c.quantity == "compute" else dram if c.level == "DRAM" else None
        bound_name = (
            "the FP32 peak at boost clock" if c.quantity == "compute" else "the theoretical DRAM bandwidth"
        )
        over = bound is not None and beyond_hardware(c.value, bound)
        note = (
            f"{c.name} (measured): {c.value:,.0f} {c.unit} is above {bound_name} {bound:,.0f} {c.unit}: "
            "faster than the hardware can go, the timing missed work"
            if over and bound is not None
            else c.basis
        )
        figures.append(
            Figure(
                f"{c.name} (measured)",
                c.value,
                c.unit,
                reference=ref.value if ref else None,
                reference_name=ref.name if ref else "",
                ratio=c.value / ref.value if ref and ref.value else None,
                note=note,
                impossible=over,
            )
        )
    return figures


def check_latency_ladder(ctx: CheckContext) -> CheckResult:
    """The pointer-chase latency ladder on this GPU (the one the Benchmarks page shows): L1 < L2 <
    DRAM, and each level, and shared memory, within +-30% of the published Hopper figures."""
    from explorer.bench import peaks
    from explorer.bench.chase import measure_ladder
    from explorer.numbacuda import cuda

    rec = peaks.device_record(ctx.device)
    from explorer.devices.model import CudaGpu

    l2 = rec.limits.l2_cache_bytes if isinstance(rec, CudaGpu) and rec.limits is not None else None
    if rec is None or not l2:
        raise CannotRun(f"{ctx.device} has no L2 size here (discovery did not report it)")
    cuda.select_device(ctx.index)
    ladder = measure_ladder(rec.name, l2, progress=lambda _f, text: ctx.log(text))
    for rung in ladder.rungs:
        ctx.log(f"{rung.footprint_bytes // 1024:>9,} KiB: {rung.cycles:8.1f} cycles, {rung.ns:7.1f} ns")
    ordered_ok, figures = ladder_figures(ladder)
    summary = "; ".join(
        f"{f.name} {f.value:,.0f} cycles" if f.value is not None else f"{f.name} not measured"
        for f in figures
    )
    summary += f"; SM clock {ladder.sm_clock_mhz:.0f} MHz"
    if not ordered_ok:
        summary += "; the levels are not ordered L1 < L2 < DRAM"
    return CheckResult(
        "latency_ladder", status_of(ordered_ok, figures), summary, figures, {"ladder": ladder.to_dict()}
    )
