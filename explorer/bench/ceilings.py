"""Measuring a device's ceilings: what this machine sustains, per memory level and in arithmetic.

* CPU clock: :mod:`explorer.bench.clock` (the theoretical FP32 peak is built on it).
* CPU compute: the measured FP32 ceiling, an FMA-throughput loop of the widest vectors on every
  core at once (:mod:`explorer.bench.fma`), which shares are taken against (the theoretical peak
  is named beside it); and the best FP32 matmul (torch sgemm on every core, the fastest timed
  sample of each size, best over sizes).
* CPU memory, per level: a working-set sweep of read, copy and triad kernels on every core
  (:mod:`explorer.bench.sweep`); its plateaus are found and named by the cache sizes the OS
  reports (:mod:`explorer.roofs.plateaus`), and each level's roof is its fastest kernel's plateau.
  DRAM counts only the sizes of at least four times the last-level cache, flat over several, and
  is checked against the app's own long read-only and triad streams over DRAM: a figure above
  the fastest of them is impossible, and refused (the fastest stream stands for DRAM instead).
  Bytes are counted as STREAM counts them; the extra read a write-allocate cache makes before it
  writes a line is *not* counted.
* GPU compute: the FP32 FMA loop on every SM (:mod:`explorer.bench.roof_kernels`, not yet run on
  a GPU) and the best sgemm (torch, FP32 with TF32 off). GPU memory: L2 and DRAM from a
  working-set sweep of read and copy kernels (:mod:`explorer.bench.gpu_sweep`). Other processes
  NVML lists on that GPU meanwhile make the measurement a busy one, as they do a point.

Every measured ceiling carries its method (kernel, threads, working sets, repeats, how the
samples became the figure: ``explorer.roofs.model.Method``), so a remeasure is compared like with
like. The whole measurement is judged by the noise verdict the points use
(:mod:`explorer.bench.noise`): where other programs used the CPU meanwhile, it is marked busy, and
the store keeps a quiet one over it (:mod:`explorer.roofs.store`); a quiet one that moved more
than 10% from the quiet one stored is turned away as not steady (``explorer.bench.peaks``).
Measuring runs in a worker process or the CLI, never in the window's thread: it takes seconds (at
most 15 on a quiet 2-core laptop).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from explorer.bench.sweep import KERNELS, STREAM_BYTES, STREAM_SAMPLES, SweepResult
from explorer.devices.gpu_clock import ClockWatch, cuda_sm_reader
from explorer.devices.model import CpuDevice, CudaGpu
from explorer.roofs.model import FMA_NAME, Ceiling, Method
from explorer.roofs.plateaus import (
    DRAM_LLC_FACTOR,
    CacheSize,
    Plateau,
    above_streams,
    dram_figure,
    find_plateaus,
)
from explorer.roofs.store import MeasuredRoof
from explorer.units import binary_bytes

Progress = Callable[[float, str], None]

MATMUL_SIZES_CPU = (1024, 2048)
MATMUL_SIZES_GPU = (4096, 8192)
SGEMM_BUDGET_S = 0.6
#: where each part of the measurement ends, as a share of its time, for the progress bar
_CLOCK, _FMA, _SWEEP, _STREAMS = 0.05, 0.12, 0.7, 0.8
WRITE_ALLOCATE = "bytes as STREAM counts them (the write-allocate reads are not counted)"


def quiet_progress(_fraction: float, _text: str) -> None:
    pass


# --- the noise verdict on a whole measurement ---------------------------------------------------


def busy_reason(measure: Callable[[], Any], threads: int) -> tuple[Any, str, float | None]:
    """Run ``measure`` while watching the machine; (its result, the noise verdict's reason ("" when
    quiet), other programs' share of the CPU meanwhile). The verdict is the points' own
    (``noise.noise_verdict``) for a region that keeps every core busy."""
    from explorer.bench.noise import noise_verdict, observe_end, observe_start

    try:
        start = observe_start()
    except Exception:  # no psutil, no /proc: nothing can be said about the machine
        return measure(), "", None
    result = measure()
    load = observe_end(start)
    verdict = noise_verdict(load, threads=threads, median_s=1.0, min_s=1.0, spread_s=0.0, repeats=1)
    return result, verdict.reason, round(load.others_share(), 3)


# --- compute --------------------------------------------------------------------------------------


def best_sgemm(
    torch: Any,
    device: Any,
    sizes: tuple[int, ...],
    budget_s: float,
    sync: Callable[[], None] | None,
    watch: ClockWatch | None = None,
) -> tuple[float, int, int]:
    """(best GFLOP/s, its n, the timed samples of that size): each size's fastest sample of repeated FP32 matmuls, the best over sizes.
    The fastest, as STREAM reports its best pass: other programs can only slow a sample down, and a
    roof is what the hardware can do, not what it did while shared."""
    from explorer.bench.timing import measure, measure_torch

    best, best_n, repeats = 0.0, 0, 0
    for n in sizes:
        gen = torch.Generator(device="cpu").manual_seed(n)
        a = torch.rand(n, n, generator=gen).to(device)
        b = torch.rand(n, n, generator=gen).to(device)
        c = torch.empty(n, n, device=device)

        def step(a: Any = a, b: Any = b, c: Any = c) -> None:
            torch.mm(a, b, out=c)

        if sync is None:
            timing = measure_torch(step, budget_s=budget_s)
        else:  # a GPU: its SM clock held steady before the samples and watched during them
            timing = measure(step, sync, budget_s=budget_s, sm_clock=watch.read if watch else None)
            if watch is not None:
                watch.add(timing.sm_mhz_steady, timing.sm_mhz_min)
        rate = 2.0 * n**3 / timing.min_s / 1e9
        if rate > best:
            best, best_n, repeats = rate, n, timing.repeats
        del a, b, c
    return best, best_n, max(1, repeats)


# --- memory levels from a sweep ---------------------------------------------------------------------


def sweep_caches(cpu: CpuDevice, threads: int) -> list[CacheSize]:
    """The cache sizes the sweep's ``threads`` threads have between them: one cache's size times
    the caches of that level they run on (per-core caches: one per thread up to their number)."""
    return [
        CacheSize(c.level, c.size_bytes * min(c.instances, threads), min(c.instances, threads))
        for c in cpu.caches
        if c.size_bytes > 0
    ]


def _median_over(result: SweepResult, name: str, lo: int, hi: int) -> float | None:
    values = [g for w, g in zip(result.ws_bytes, result.gbps[name], strict=True) if lo <= w <= hi and g > 0]
    return statistics.median(values) if values else None


def _fallback(result: SweepResult, level: str, lo: float, hi: float) -> Plateau | None:
    """A level the plateau finder left without a flat stretch (a busy machine, a gently sloping
    curve): the median of the envelope over the sizes well inside its interval, said as such."""
    inside = [
        (w, g) for w, g in zip(result.ws_bytes, result.envelope(), strict=True) if lo <= w <= hi and g > 0
    ]
    if len(inside) < 2:
        return None
    return Plateau(level, statistics.median(g for _, g in inside), inside[0][0], inside[-1][0], len(inside))


def sweep_method(result: SweepResult, kernels: Sequence[str], sizes: Sequence[int], how: str) -> Method:
    """How a level's figure was had: the sweep's kernels and threads, the level's sizes, the passes."""
    return Method(
        kernel=f"{', '.join(kernels)} sweep",
        threads=result.threads,
        sizes_bytes=tuple(int(s) for s in sizes),
        repeats=result.samples,
        best_of=f"fastest of {result.samples} passes at each size; {how}",
    )


def level_ceilings(
    result: SweepResult,
    caches: Sequence[CacheSize],
    measured_at: float,
    who: str,
    kernels: Sequence[str] = KERNELS,
) -> list[Ceiling]:
    """One measured ceiling per memory level found in ``result`` (the envelope of its kernels),
    named by ``caches``; ``who`` says what ran it ("2 threads (numba)"). A level with no flat
    stretch gets the median over the sizes well inside it, labelled so. DRAM counts only the sizes
    of at least four times the last-level cache, flat over several
    (``explorer.roofs.plateaus.dram_figure``): a stretch that reaches into the cache is not DRAM."""
    found = {p.level: p for p in find_plateaus(result.ws_bytes, result.envelope(), caches) if p.level}
    ordered = sorted(caches, key=lambda c: c.bytes)
    bounds: list[tuple[str, float, float, CacheSize | None]] = []
    low = 0.0
    for size in ordered:
        bounds.append((size.level, 2 * low, size.bytes / 2, size))
        low = size.bytes
    out: list[Ceiling] = []
    for level, lo, hi, cache in bounds:
        plateau: Plateau | None = found.get(level)
        how = "flat over"
        if plateau is None:
            plateau, how = _fallback(result, level, lo, hi), "no flat stretch found: the median of"
            if plateau is not None and cache is not None:
                plateau = Plateau(
                    level,
                    plateau.gbps,
                    plateau.ws_lo_bytes,
                    plateau.ws_hi_bytes,
                    plateau.points,
                    cache.bytes,
                    cache.instances,
                )
        if plateau is None:
            continue
        per_kernel = {k: _median_over(result, k, plateau.ws_lo_bytes, plateau.ws_hi_bytes) for k in kernels}
        figures = ", ".join(f"{k} {v:,.0f}" for k, v in per_kernel.items() if v)
        best_kernel = max((k for k in per_kernel if per_kernel[k]), key=lambda k: per_kernel[k] or 0.0)
        # the level's roof is its fastest kernel's plateau (each kernel's median over the level's
        # working sets), so the figure and the kernels it names always agree
        value = per_kernel[best_kernel] or plateau.gbps
        capacity = (
            f"{binary_bytes(cache.bytes)} of {level} ({cache.instances} x {binary_bytes(cache.bytes // cache.instances)})"
            if cache is not None and cache.instances > 1
            else (f"{binary_bytes(cache.bytes)} of {level}" if cache is not None else "past every cache")
        )
        sizes = [w for w in result.ws_bytes if plateau.ws_lo_bytes <= w <= plateau.ws_hi_bytes]
        out.append(
            Ceiling(
                "memory",
                round(value, 1),
                "measured",
                level,
                f"{how} {plateau.points} sizes ({capacity}) on {who}; fastest kernel {best_kernel} "
                f"(GB/s: {figures}); {WRITE_ALLOCATE}",
                measured_at,
                level=level,  # type: ignore[arg-type]
                ws_lo_bytes=plateau.ws_lo_bytes,
                ws_hi_bytes=plateau.ws_hi_bytes,
                cache_bytes=cache.bytes if cache is not None else None,
                instances=cache.instances if cache is not None else None,
                kernel_gbps={k: round(v, 1) for k, v in per_kernel.items() if v},
                method=sweep_method(result, kernels, sizes, f"{best_kernel}'s median over the level's sizes"),
            )
        )
    if ordered:
        dram = dram_ceiling(result, ordered[-1], measured_at, who, kernels)
        if isinstance(dram, Ceiling):
            out.append(dram)
    return out


def dram_ceiling(
    result: SweepResult, llc: CacheSize, measured_at: float, who: str, kernels: Sequence[str] = KERNELS
) -> Ceiling | str:
    """DRAM's measured ceiling from the sweep's sizes of at least four times the last-level cache
    ``llc``, or why there is none (too few such sizes)."""
    curves = {k: result.gbps[k] for k in kernels if len(result.gbps.get(k, [])) == len(result.ws_bytes)}
    figure = dram_figure(result.ws_bytes, curves, llc.bytes)
    if isinstance(figure, str):
        return figure
    figures = ", ".join(f"{k} {v:,.0f}" for k, v in figure.per_kernel.items() if v)
    return Ceiling(
        "memory",
        round(figure.gbps, 1),
        "measured",
        "DRAM",
        f"past every cache: {figure.words}, from {DRAM_LLC_FACTOR:g}x the last-level cache ({binary_bytes(llc.bytes)} of "
        f"{llc.level}) on, on {who}; fastest kernel {figure.kernel} (GB/s: {figures}); {WRITE_ALLOCATE}",
        measured_at,
        level="DRAM",
        ws_lo_bytes=figure.ws_lo_bytes,
        ws_hi_bytes=figure.ws_hi_bytes,
        kernel_gbps={k: round(v, 1) for k, v in figure.per_kernel.items() if v},
        method=sweep_method(
            result, kernels, figure.sizes_bytes, f"{figure.kernel}'s median over the sizes past 4x the LLC"
        ),
    )


def checked_dram(
    ceilings: list[Ceiling],
    streams: dict[str, float],
    stream_bytes: int,
    threads: int,
    measured_at: float,
    method: Method | None = None,
) -> list[Ceiling]:
    """``ceilings`` with DRAM's checked against the app's own streams over ``stream_bytes``: a
    figure faster than the fastest stream (beyond its noise) is impossible and refused, and the
    fastest stream stands for DRAM instead, saying so; one within it says what it was checked
    against. Where the sweep found no DRAM figure, the fastest stream is DRAM's. ``method``: how
    the streams were timed (the CPU's ``sweep.streams`` where not given)."""
    known = {k: v for k, v in streams.items() if v > 0}
    if not known:
        return ceilings
    fastest = max(known, key=lambda k: known[k])
    said = ", ".join(f"{k} {v:,.1f}" for k, v in known.items())
    streams_text = f"the app's own streams over {binary_bytes(stream_bytes)} (GB/s: {said})"
    stream_method = method or Method(
        kernel=f"{', '.join(known)} streams",
        threads=threads,
        sizes_bytes=(stream_bytes,),
        repeats=STREAM_SAMPLES,
        best_of=f"fastest of {STREAM_SAMPLES} calls, each moving at least {binary_bytes(STREAM_BYTES)}",
    )
    out: list[Ceiling] = []
    dram_seen = False
    for c in ceilings:
        if c.level != "DRAM" or c.kind != "measured":
            out.append(c)
            continue
        dram_seen = True
        refused = above_streams(c.value, known)
        if not refused:
            out.append(replace(c, basis=f"{c.basis}; within {streams_text}"))
            continue
        out.append(
            replace(
                c,
                value=round(known[fastest], 1),
                basis=f"{fastest} stream: {refused}; {streams_text}",
                kernel_gbps={k: round(v, 1) for k, v in known.items()},
                ws_lo_bytes=stream_bytes,
                ws_hi_bytes=stream_bytes,
                method=stream_method,
            )
        )
    if not dram_seen:
        out.append(
            Ceiling(
                "memory",
                round(known[fastest], 1),
                "measured",
                "DRAM",
                f"{fastest} stream: the sweep found no DRAM figure; {streams_text}",
                measured_at,
                level="DRAM",
                ws_lo_bytes=stream_bytes,
                ws_hi_bytes=stream_bytes,
                kernel_gbps={k: round(v, 1) for k, v in known.items()},
                method=stream_method,
            )
        )
    return out


def gpu_streams_checked(
    ceilings: list[Ceiling],
    stream_bytes: int,
    sm_count: int,
    measured_at: float,
    run: Callable[[list[int], int], SweepResult] | None = None,
) -> tuple[list[Ceiling], dict[str, float]]:
    """A GPU's level ceilings with DRAM checked (``checked_dram``) against its read and copy
    streams, timed again on their own over ``stream_bytes`` (the sweep's largest working set, 16x
    the L2 or more), and those streams' GB/s. ``run`` times them (``gpu_sweep.sweep`` over that one
    size; the tests pass a stand-in)."""
    from explorer.bench import gpu_sweep

    timed = (run or (lambda sizes, sms: gpu_sweep.sweep(sizes, sms)))([stream_bytes], sm_count)
    streams = {k: round(v[0], 1) for k, v in timed.gbps.items() if v and v[0] > 0}
    method = Method(
        kernel=f"{', '.join(streams)} streams (numba, float64, grid-stride, every SM)",
        threads=timed.threads,
        sizes_bytes=(stream_bytes,),
        repeats=timed.samples,
        best_of=(
            f"fastest of {timed.samples} launches, each moving at least {binary_bytes(gpu_sweep.SAMPLE_BYTES)}"
        ),
    )
    return checked_dram(ceilings, streams, stream_bytes, timed.threads, measured_at, method), streams


# --- measuring a CPU ------------------------------------------------------------------------------


def fma_ceiling(cpu: CpuDevice, threads: int, measured_at: float) -> Ceiling:
    """The measured FP32 ceiling: the FMA-throughput loop on every core (``explorer.bench.fma``)."""
    from explorer.bench.fma import measure_fma

    m = measure_fma(cpu.isa_flags, threads)
    return Ceiling("compute", round(m.gflops, 1), "measured", FMA_NAME, m.basis, measured_at, method=m.method)


def measure_cpu_roof(
    cpu: CpuDevice,
    fingerprint: str,
    *,
    progress: Progress = quiet_progress,
    sgemm_budget_s: float = SGEMM_BUDGET_S,
) -> MeasuredRoof:
    """Measure the CPU: its all-core clock, its FP32 FMA ceiling, every memory level's bandwidth
    (DRAM's checked against the app's own long read-only and triad streams) and its best sgemm."""
    from explorer.bench import sweep
    from explorer.bench.clock import measure_clock

    threads = os.cpu_count() or 1

    def work() -> MeasuredRoof:
        started = time.time()
        progress(0.0, "measuring the clock")
        clock = measure_clock()
        roof = MeasuredRoof(
            device=cpu.key or "cpu",
            fingerprint=fingerprint,
            measured_at=started,
            clock_ghz=round(clock.ghz, 4),
            clock_threads=clock.threads,
            clock_method=clock.method,
        )
        progress(_CLOCK, "the FP32 ceiling: an FMA loop on every core")
        fma = fma_ceiling(cpu, threads, started)
        progress(_FMA, "compiling the bandwidth kernels")
        caches = sweep_caches(cpu, threads)
        llc = max((c.bytes for c in caches), default=None)
        sizes = sweep.sizes(sweep.last_size(llc, cpu.memory_available_bytes))
        result = sweep.sweep(
            sizes,
            threads,
            progress=lambda f, text: progress(_FMA + (_SWEEP - _FMA) * f, f"memory levels: {text}"),
        )
        levels = level_ceilings(result, caches, started, f"{threads} threads (numba)")
        progress(_SWEEP, "DRAM: the read-only and triad streams")
        roof.streams_bytes = max(sizes)
        roof.streams_gbps = {k: round(v, 2) for k, v in sweep.streams(roof.streams_bytes, threads).items()}
        levels = checked_dram(levels, roof.streams_gbps, roof.streams_bytes, threads, started)
        progress(_STREAMS, "sgemm: the best FP32 matmul")
        import torch

        rate, n, repeats = best_sgemm(torch, torch.device("cpu"), MATMUL_SIZES_CPU, sgemm_budget_s, None)
        roof.ceilings = [
            fma,
            Ceiling(
                "compute",
                round(rate, 2),
                "measured",
                "sgemm",
                f"best FP32 matmul: torch.mm n={n} on {torch.get_num_threads()} threads, fastest of "
                "its timed samples",
                started,
                method=Method(
                    kernel=f"torch.mm, n = {', '.join(map(str, MATMUL_SIZES_CPU))}",
                    threads=torch.get_num_threads(),
                    repeats=repeats,
                    best_of="fastest timed sample of each size, the best over sizes",
                ),
            ),
            *levels,
        ]
        progress(1.0, "done")
        return roof

    roof, reason, share = busy_reason(work, threads)
    roof.busy_reason, roof.others_cpu_share = reason, share
    roof.took_s = round(time.time() - roof.measured_at, 1)
    return roof


# --- measuring a GPU ------------------------------------------------------------------------------


#: the GPU's FMA loop: threads per block, blocks per SM (enough warps that every SM's FP32 pipes
#: always have an independent FMA to issue), how long one timed launch lasts, launches timed
GPU_FMA_THREADS = 256
GPU_FMA_BLOCKS_PER_SM = 8
GPU_FMA_LAUNCH_MS = 20.0
GPU_FMA_SAMPLES = 5
#: the multiply and the addend of the GPU's FMAs (run-time arguments, as on the CPU)
GPU_FMA_B, GPU_FMA_C = 0.999999, 1e-6


def gpu_fma_expected(n: int, index: int) -> float:
    """What thread ``index`` of ``roof_kernels.fma`` writes after ``n`` iterations (float32, one
    rounding per FMA as the GPU does it; numpy's separate multiply and add agree to a few ulps)."""
    import numpy as np

    start = np.float32(0.001) * np.float32(index % 7)
    a = np.array([start + np.float32(0.1 * k) if k else start for k in range(8)], dtype=np.float32)
    b, c = np.float32(GPU_FMA_B), np.float32(GPU_FMA_C)
    for _ in range(n):
        a = a * b + c
    return float(a.astype(np.float64).sum())


def check_gpu_fma(n: int = 5, blocks: int = 1, threads: int = 4) -> list[tuple[float, float]]:
    """Run the FMA kernel once on a small grid: (what each thread wrote, what it should have). The
    tests run it on numba's CUDA simulator."""
    import numpy as np

    from explorer.bench import roof_kernels
    from explorer.numbacuda import cuda

    out = cuda.device_array(blocks * threads, dtype=np.float32)
    roof_kernels.fma[blocks, threads](out, n, np.float32(GPU_FMA_B), np.float32(GPU_FMA_C))
    cuda.synchronize()
    got = out.copy_to_host()
    return [(float(got[i]), gpu_fma_expected(n, i)) for i in range(blocks * threads)]


def _no_sync() -> None:
    """The FMA launch waits for its own end event."""


def gpu_fma_ceiling(sm_count: int, measured_at: float, watch: ClockWatch | None = None) -> Ceiling:
    """The GPU's measured FP32 ceiling: the FMA loop (``roof_kernels.fma``) on every SM, compiled
    and run once before any clock, then timed with CUDA events; the fastest of
    ``GPU_FMA_SAMPLES`` launches of about ``GPU_FMA_LAUNCH_MS`` each. With a ``watch`` the SM
    clock is held steady before the launches are sized and read after each timed one. Not yet
    run on a GPU."""
    import numpy as np

    from explorer.bench import roof_kernels
    from explorer.numbacuda import cuda

    blocks = max(1, sm_count) * GPU_FMA_BLOCKS_PER_SM
    out = cuda.device_array(blocks * GPU_FMA_THREADS, dtype=np.float32)
    b, c = np.float32(GPU_FMA_B), np.float32(GPU_FMA_C)
    kernel = roof_kernels.fma[blocks, GPU_FMA_THREADS]

    def launch_ms(n: int) -> float:
        start, end = cuda.event(), cuda.event()
        start.record()
        kernel(out, n, b, c)
        end.record()
        end.synchronize()
        return float(cuda.event_elapsed_time(start, end))

    launch_ms(16)  # compiles: never inside a timing
    if watch is not None:  # an idle GPU's clock is low: sized and timed at its steady clock
        watch.hold(lambda: launch_ms(1 << 12), _no_sync)
    n = 1 << 12
    while True:  # long enough that the clock has left idle and a launch's own cost is noise
        took = launch_ms(n)
        if took >= GPU_FMA_LAUNCH_MS / 4 or n >= 1 << 30:
            break
        n *= 2
    n = max(1, int(n * GPU_FMA_LAUNCH_MS / max(took, 1e-3)))
    best = math.inf
    for _ in range(GPU_FMA_SAMPLES):
        best = min(best, launch_ms(n))
        if watch is not None:
            watch.sample()
    flop = 2.0 * roof_kernels.FMA_ACCUMULATORS * n * blocks * GPU_FMA_THREADS
    return Ceiling(
        "compute",
        round(flop / (best / 1e3) / 1e9, 1),
        "measured",
        FMA_NAME,
        f"FMA-throughput loop: {roof_kernels.FMA_ACCUMULATORS} independent FP32 accumulators per thread, "
        f"{GPU_FMA_BLOCKS_PER_SM} blocks of {GPU_FMA_THREADS} threads per SM, timed with CUDA events, "
        f"the fastest of {GPU_FMA_SAMPLES} launches",
        measured_at,
        method=Method(
            kernel=f"FMA: {roof_kernels.FMA_ACCUMULATORS} FP32 accumulators per thread (numba.cuda)",
            threads=blocks,
            repeats=GPU_FMA_SAMPLES,
            best_of=f"fastest of {GPU_FMA_SAMPLES} launches of about {GPU_FMA_LAUNCH_MS:g} ms (CUDA events)",
        ),
    )


def gpu_caches(gpu: CudaGpu) -> list[CacheSize]:
    l2 = gpu.limits.l2_cache_bytes if gpu.limits is not None else None
    return [CacheSize("L2", l2, 1)] if l2 else []


def measure_gpu_roof(
    torch: Any,
    device: Any,
    gpu: CudaGpu | None,
    fingerprint: str,
    key: str,
    *,
    budget_s: float = 1.0,
    progress: Progress = quiet_progress,
    levels: bool = True,
) -> MeasuredRoof:
    """Measure a GPU: its best sgemm (TF32 off) and, where numba can reach it, its L2 and DRAM
    bandwidth (``levels``). ``torch`` and ``device`` are passed in so the sgemm's code can be run
    against the CPU in tests."""
    on_gpu = getattr(device, "type", "cpu") == "cuda"
    sync = (lambda: torch.cuda.synchronize(device)) if on_gpu else (lambda: None)
    # the SM clock over the whole roof: held before each timed loop, a fall below 75% said
    watch = ClockWatch(cuda_sm_reader(key)) if on_gpu else None
    started = time.time()
    progress(0.0, "sgemm: the best FP32 matmul")
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # true FP32: TF32 would beat the FP32 peak
    try:
        rate, n, repeats = best_sgemm(torch, device, MATMUL_SIZES_GPU, budget_s, sync, watch)
    finally:
        torch.set_float32_matmul_precision(previous)
    roof = MeasuredRoof(
        device=key,
        fingerprint=fingerprint,
        measured_at=started,
        ceilings=[
            Ceiling(
                "compute",
                round(rate, 2),
                "measured",
                "sgemm",
                f"best FP32 sgemm: torch.mm n={n}, TF32 off",
                started,
                method=Method(
                    kernel=f"torch.mm, n = {', '.join(map(str, MATMUL_SIZES_GPU))}, TF32 off",
                    threads=1,
                    repeats=repeats,
                    best_of="fastest timed sample of each size, the best over sizes",
                ),
            )
        ],
    )
    caches = gpu_caches(gpu) if gpu is not None else []
    others = _gpu_others(key)
    if levels and gpu is not None and gpu.index is not None:
        from explorer.numbacuda import cuda

        cuda.select_device(gpu.index)
        progress(0.15, "the FP32 ceiling: an FMA loop on every SM")
        roof.ceilings.insert(0, gpu_fma_ceiling(gpu.sm_count or 1, started, watch))
    if levels and caches and gpu is not None and gpu.index is not None:
        from explorer.bench import gpu_sweep
        from explorer.numbacuda import cuda

        sizes = gpu_sweep.sizes(caches[0].bytes)
        result = gpu_sweep.sweep(
            sizes,
            gpu.sm_count or 1,
            progress=lambda f, text: progress(0.2 + 0.7 * f, f"L2 and DRAM: {text}"),
            watch=watch,
        )
        found = level_ceilings(
            result, caches, started, "numba kernels, grid-stride, every SM", gpu_sweep.KERNELS
        )
        # no DRAM roof may pass the read and copy streams over the largest working set, timed on
        # their own; not yet run on a GPU (checked with a stand-in sweep)
        progress(0.9, "DRAM: the read and copy streams")
        roof.streams_bytes = max(sizes)
        checked, roof.streams_gbps = gpu_streams_checked(
            found, roof.streams_bytes, gpu.sm_count or 1, started
        )
        roof.ceilings += checked
        from explorer.bench.chase import measure_ladder

        roof.latency = measure_ladder(
            gpu.name, caches[0].bytes, progress=lambda f, text: progress(0.95 + 0.05 * f, text)
        )
    progress(1.0, "done")
    others += [p for p in _gpu_others(key) if p not in others]
    if others:  # a shared GPU: another program's kernels ran between ours
        roof.busy_reason = f"other processes used this GPU while it was measured: {', '.join(others[:3])}"
    # the SM clock fell below 75% of steady: lower than the GPU does, never kept over a quiet roof
    throttled = watch.note() if watch is not None else ""
    if throttled:
        roof.busy_reason = f"{roof.busy_reason}; {throttled}" if roof.busy_reason else throttled
    roof.took_s = round(time.time() - started, 1)
    return roof


def _gpu_others(device: str) -> list[str]:
    """Other processes NVML lists on ``device``'s GPU now (the noise verdict of a GPU's roof)."""
    if not device.startswith("cuda"):
        return []
    try:
        from explorer.gpuqueue.share import gpu_identity, other_gpu_processes

        return other_gpu_processes(gpu_identity(device)[1])
    except Exception:  # no NVML: nothing can be said, as for the points
        return []
