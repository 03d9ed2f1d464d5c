"""Honest timing: warm up, synchronize, repeat until the spread settles, report median and IQR.

Two traps this module exists to avoid:

* GPU work is queued, not done, when a launch returns. A clock read without a synchronize
  measures the launch, not the work (the "GPU takes 1 ms" figure in our teaching notebook).
  Every timed region here ends with the device's ``sync``; the naive reading exists only for the
  timing lesson (``naive=True``), and even then the queue is drained *outside* the timed region
  so one sample's work never leaks into the next.
* ``torch.utils.benchmark.Timer`` runs on ONE thread unless told otherwise; a CPU baseline timed
  that way is slower than what the user's machine does. We always pass ``torch.get_num_threads()``.

The first calls pay for JIT compilation, cuBLAS handles and the caching allocator, so they are
run and thrown away before any sample is kept: warm calls go on until two agree, and the grouping
of short steps is decided on them, never on the compile. On a GPU the SM clock is held steady
first and watched during the samples (``explorer.devices.gpu_clock``): an idle GPU's clock is low,
and a point whose clock fell below 75% of steady is marked throttled.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from explorer.bench.noise import Load, observe_end, observe_start
from explorer.devices.gpu_clock import ClockHold, hold_clock, read_safely, throttle_note

SETTLED_REL_IQR = 0.05  # stop early once IQR / median is under this, with enough samples
MIN_SAMPLES = 5
MAX_SAMPLES = 2000
TARGET_SAMPLE_S = 1e-3
MIN_TIMER_SAMPLES = 3  # group short steps so one sample lasts at least this long
# Sample for at least this long (budget permitting), as torch.utils.benchmark's blocked_autorange
# does: a median of many samples, and a region long enough for the noise verdict's CPU-time
# figures (clock ticks of 10 ms) to mean something.
MIN_RUN_S = 0.2
# Warm-up until two successive calls agree within this share, at most this many calls or this
# share of the budget (at least one warm call after the first, whatever the bounds).
WARMUP_STABLE_REL = 0.10
WARMUP_MAX_CALLS = 50
WARMUP_MAX_SHARE = 0.5


@dataclass
class Timing:
    """The summary of one timed point; every figure is seconds for ONE step."""

    median_s: float
    spread_s: float  # interquartile range, or max - min with fewer than 4 samples
    min_s: float
    repeats: int  # samples kept
    steps_per_sample: int
    method: str  # "perf_counter + sync", "torch.utils.benchmark.Timer", "naive (no sync)"
    samples_s: list[float]
    load: Load | None = None  # what the machine did during the timed samples (the noise verdict's input)
    # The GPU's SM clock (``measure(sm_clock=...)``): the steady value the hold found, the lowest
    # read during the samples, and whether that fell below 75% of steady (with its sentence).
    sm_mhz_steady: float | None = None
    sm_mhz_min: float | None = None
    throttled: bool = False
    throttle_note: str = ""


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """Q1, median, Q3 with the 'inclusive' method, so two samples never give a spread beyond them."""
    v = sorted(values)
    if len(v) == 1:
        return v[0], v[0], v[0]
    q1, q2, q3 = statistics.quantiles(v, n=4, method="inclusive")
    return q1, q2, q3


def summarize(samples_s: Sequence[float], *, steps_per_sample: int = 1, method: str = "") -> Timing:
    """Median and spread of per-step times. Under 4 samples quartiles mean little, so the spread is max-min."""
    if not samples_s:
        raise ValueError("no samples to summarize")
    per_step = [s / steps_per_sample for s in samples_s]
    q1, med, q3 = quartiles(per_step)
    spread = (q3 - q1) if len(per_step) >= 4 else (max(per_step) - min(per_step))
    return Timing(
        median_s=med,
        spread_s=spread,
        min_s=min(per_step),
        repeats=len(per_step),
        steps_per_sample=steps_per_sample,
        method=method,
        samples_s=per_step,
    )


def settled(
    samples: Sequence[float], rel_iqr: float = SETTLED_REL_IQR, min_samples: int = MIN_SAMPLES
) -> bool:
    if len(samples) < max(min_samples, 4):
        return False
    q1, med, q3 = quartiles(samples)
    return med > 0 and (q3 - q1) / med <= rel_iqr


def _noop() -> None:
    return None


def measure(
    step: Callable[[], object],
    sync: Callable[[], object] | None = None,
    *,
    repeats: int | None = None,
    budget_s: float = 2.0,
    warmup: int | None = None,
    naive: bool = False,
    clock: Callable[[], float] = time.perf_counter,
    min_samples: int = MIN_SAMPLES,
    max_samples: int = MAX_SAMPLES,
    between: Callable[[], object] | None = None,
    sm_clock: Callable[[], float | None] | None = None,
) -> Timing:
    """Time ``step`` (one unit of work) honestly.

    ``sync`` waits for the device (``torch.cuda.synchronize``, numba ``cuda.synchronize``); for
    the CPU it is ``None``. With ``repeats`` exactly that many samples are kept; otherwise samples
    are taken until the spread settles or ``budget_s`` is spent (at least 3 samples unless one
    alone overruns the budget), and for at least ``MIN_RUN_S`` when the budget allows. Steps
    shorter than ~1 ms are grouped so the clock's resolution and the synchronize itself do not
    dominate; the grouping is decided once warm calls agree (``_warm_up``).

    ``between`` runs before every sample, outside its timed region (after the previous sample's
    synchronize, and synchronized itself before the clock starts): the L2 flush that makes each
    sample cold. With it every sample is one step, since a flush before a group of steps would
    leave all but the group's first warm.

    ``sm_clock`` (a GPU's SM clock reader, ``explorer.devices.gpu_clock.cuda_sm_reader``): the step
    runs until that clock is steady before the first sample (``hold_clock``), the clock is read
    after each sample, and a point whose clock fell below 75% of steady is marked ``throttled``.
    """
    sync = sync or _noop

    # Warm-up: the first call pays for JIT, library handles and allocations.
    sync()
    t0 = clock()
    step()
    sync()
    first = clock() - t0
    # An idle GPU's clock is low: run the step until NVML's SM clock stays at one value (a kernel
    # 1.7x slow for its first 100 ms is steady, so its samples would pass as settled). Bounded by
    # the hold itself, outside the budget.
    hold = hold_clock(step, sync, sm_clock, clock=clock) if sm_clock is not None else None
    # The budget is for measuring, so it starts after the first call: on the first GPU this ran
    # on, a numba kernel's compile ate a 1 s budget and left 3 samples at cold clocks (IQR larger
    # than the median).
    start_all = clock()
    warm = _warm_up(step, sync, clock, warmup, budget_s, start_all)
    # Group short steps into samples of at least TARGET_SAMPLE_S, decided on warm calls (never on
    # the compile: a 20 us kernel with a 10 us synchronize grouped on a 1 s compile read 30 us).
    per_call = min(warm[-3:]) if warm else first
    steps = 1
    if per_call > 0 and per_call < TARGET_SAMPLE_S:
        steps = min(10_000, max(1, int(TARGET_SAMPLE_S / per_call) + 1))

    samples: list[float] = []
    clock_mhz: list[float] = []
    budget_end = start_all + budget_s
    min_run_end = clock() + min(MIN_RUN_S, budget_s / 4)
    observed = observe_start()
    while True:
        if between is not None:
            steps = 1  # one step per sample: a group would run warm after its first step
            between()
            sync()  # the hook's own device work ends before the clock starts
        if naive:
            t0 = clock()
            for _ in range(steps):
                step()
            elapsed = clock() - t0
            sync()  # drained outside the timed region: the next sample starts from an idle device
        else:
            sync()
            t0 = clock()
            for _ in range(steps):
                step()
            sync()
            elapsed = clock() - t0
        samples.append(elapsed)
        if sm_clock is not None:  # outside the timed region: the clock these samples ran at
            mhz = read_safely(sm_clock)
            if mhz is not None:
                clock_mhz.append(mhz)
        n = len(samples)
        if repeats is not None:
            if n >= repeats:
                break
            continue
        if n >= max_samples:
            break
        now = clock()
        if now >= budget_end and (n >= 3 or (n >= 1 and elapsed >= budget_s)):
            break
        per_step = [s / steps for s in samples]
        if now >= min_run_end and settled(per_step, min_samples=min_samples):
            break
    load = observe_end(observed)
    method = "naive (no sync)" if naive else ("perf_counter + sync" if sync is not _noop else "perf_counter")
    timing = summarize(samples, steps_per_sample=steps, method=method)
    timing.load = load
    if hold is not None:
        _clock_verdict(timing, hold, clock_mhz)
    return timing


def _stable(warm: Sequence[float]) -> bool:
    """The last two warm calls agree within ``WARMUP_STABLE_REL`` of the slower."""
    if len(warm) < 2:
        return False
    a, b = warm[-2], warm[-1]
    return abs(a - b) <= WARMUP_STABLE_REL * max(a, b)


def _warm_up(
    step: Callable[[], object],
    sync: Callable[[], object],
    clock: Callable[[], float],
    warmup: int | None,
    budget_s: float,
    start: float,
) -> list[float]:
    """The warm calls after the first, each timed with its sync. ``warmup`` given: exactly that
    many. Otherwise at least one, then on until two successive calls agree (``_stable``), at most
    ``WARMUP_MAX_CALLS`` calls or ``WARMUP_MAX_SHARE`` of the budget, so a noisy machine cannot
    keep it warming for ever."""
    warm: list[float] = []

    def call() -> None:
        t0 = clock()
        step()
        sync()
        warm.append(clock() - t0)

    if warmup is not None:
        for _ in range(warmup):
            call()
        return warm
    call()
    while (
        not _stable(warm) and len(warm) < WARMUP_MAX_CALLS and clock() - start < WARMUP_MAX_SHARE * budget_s
    ):
        call()
    return warm


def _clock_verdict(timing: Timing, hold: ClockHold, clock_mhz: Sequence[float]) -> None:
    """Record the SM clock the samples ran at, and mark the point throttled by nvbench's rule."""
    timing.method += f"; {hold.words()}"
    # A clock that rose above the hold's value during the samples was not steady at the hold
    # (parked low, then raised): the highest reading is the steady one, and the low samples show.
    steady = max([m for m in (hold.steady_mhz, *clock_mhz) if m is not None], default=None)
    timing.sm_mhz_steady = steady
    timing.sm_mhz_min = min(clock_mhz) if clock_mhz else None
    timing.throttle_note = throttle_note(timing.sm_mhz_min, steady)
    timing.throttled = bool(timing.throttle_note)


def measure_torch(
    step: Callable[[], object],
    *,
    num_threads: int | None = None,
    repeats: int | None = None,
    budget_s: float = 2.0,
    sync: Callable[[], object] | None = None,
    sm_clock: Callable[[], float | None] | None = None,
) -> Timing:
    """Time a torch step with ``torch.utils.benchmark.Timer`` and every CPU thread torch has.

    The Timer synchronizes the current accelerator around each block and picks a block size that
    hides its own overhead; ``adaptive_autorange`` stops once IQR/median is under our threshold
    or the budget is spent. A fixed ``repeats`` goes through :func:`measure` (the Timer has no
    "exactly N samples" mode), with the same synchronize. ``sm_clock`` as for :func:`measure`:
    held steady before the Timer starts, read after each of its runs.
    """
    import torch
    from torch.utils.benchmark import Timer

    threads = num_threads or torch.get_num_threads()
    if repeats is not None:
        with _torch_threads(threads):
            return measure(step, sync, repeats=repeats, budget_s=budget_s, sm_clock=sm_clock)
    # Warm-up (JIT, cuBLAS handle, allocator) before the Timer estimates its block size.
    step()
    if sync:
        sync()
    hold = hold_clock(step, sync or _noop, sm_clock) if sm_clock is not None else None
    clock_mhz: list[float] = []
    timer = Timer(stmt="step()", globals={"step": step}, num_threads=threads)
    times: list[float] = []
    number = 1
    deadline = time.perf_counter() + 3 * budget_s
    observed = observe_start()
    # adaptive_autorange stops at max_run_time even with one sample; ask again (each call
    # re-estimates its block size) until there are enough samples for a median and a spread.
    while True:
        m = timer.adaptive_autorange(
            threshold=SETTLED_REL_IQR, min_run_time=min(MIN_RUN_S, budget_s / 4), max_run_time=budget_s
        )
        times.extend(m.times)  # per-step seconds (block time / number_per_run)
        mhz = read_safely(sm_clock) if sm_clock is not None else None
        if mhz is not None:
            clock_mhz.append(mhz)
        number = max(number, int(m.number_per_run))
        if len(times) >= MIN_TIMER_SAMPLES or time.perf_counter() > deadline:
            break
    load = observe_end(observed)
    t = summarize(times, method="torch.utils.benchmark.Timer")
    t.steps_per_sample = number
    t.load = load
    if hold is not None:
        _clock_verdict(t, hold, clock_mhz)
    return t


class _torch_threads:
    """Run a block with torch set to ``n`` threads, restoring the previous count after."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.prev = 0

    def __enter__(self) -> None:
        import torch

        self.prev = torch.get_num_threads()
        torch.set_num_threads(self.n)

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.set_num_threads(self.prev)
