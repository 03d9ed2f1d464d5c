"""Runs one benchmark point inside the worker process and turns what happened into a BenchPoint.

Whatever a workload raises becomes an error row with one readable line. Errors that leave the
CUDA context unusable (illegal address, launch failure) are flagged ``fatal`` so the runner
replaces the worker before the next point; an out-of-memory error is not fatal: the memory is
released and the run goes on.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from explorer.bench import peaks
from explorer.bench.noise import Verdict, noise_verdict, others_busy_cores, threads_to_use
from explorer.bench.results import CEILINGS_NOTE, BenchPoint, error_point
from explorer.bench.spec import PointSpec
from explorer.bench.timing import Timing, measure, measure_torch
from explorer.bench.workload import Workload
from explorer.errors import UserError
from explorer.words import count

if TYPE_CHECKING:  # pragma: no cover
    import torch


class PointError(Exception):
    """A point that cannot run here, said in one line (e.g. "needs two GPUs; 0 found")."""


@dataclass
class Outcome:
    """What a workload measured; throughput is derived here so every workload computes it alike."""

    timing: Timing
    flops: float | None = None  # per step; None -> the workload's count
    bytes: float | None = None
    items: float | None = None  # images or elements per step; None -> the size
    unit: str | None = None  # None -> the workload's unit
    peak: float | None = None
    threads: int | None = None
    dtype: str | None = None
    extra: dict[str, float | str] = field(default_factory=dict)
    # what a model predicts beside the measurement (BenchPoint.model, model_estimate, model_note)
    model: str = ""
    model_estimate: float | None = None
    model_note: str = ""
    #: the CPU thread choice this attempt ran with (set when its verdict is made): a re-measured
    #: point keeps its fastest attempt, whose choice need not be the last one made
    thread_choice: ThreadChoice | None = None
    #: the bytes the point's data occupies, all arrays together (its memory level comes from it);
    #: None -> the workload's count
    working_set: float | None = None
    #: the bytes the memory levels move, counted as the roofs count them, where that differs from
    #: the throughput's bytes (a memcpy of n bytes reads n and writes n); None -> ``bytes``
    roof_bytes: float | None = None
    #: bound by a bus (PCIe, a peer link), not by a memory level: no level or roof share is said
    bus_bound: bool = False


@dataclass
class Checked:
    """What a check-only variant (``Variant.check``) found: a result compared, nothing timed."""

    model: str  # a few words for the table's model cell: "matches numpy; simulator, not a timing"
    note: str  # the whole sentence: what ran where, what it was compared with, why there is no time
    extra: dict[str, float | str] = field(default_factory=dict)


def checked_point(w: Workload, spec: PointSpec, label: str, found: Checked) -> BenchPoint:
    """The point of a check-only variant: no time, no throughput, no roofline place; its words
    say what was checked and that it is not a timing."""
    return BenchPoint(
        workload=w.name,
        variant=spec.variant,
        device=spec.device,
        size=spec.size,
        size_label=label,
        variant_key=spec.variant_key,
        throughput_unit=w.unit,
        model=found.model,
        model_note=found.note,
        dtype=w.dtype,
        versions=versions(spec.device),
        extra=dict(found.extra),
    )


# --- helpers the workload modules share -------------------------------------------------------


def cuda_index(device: str) -> int | None:
    if device == "cpu":
        return None
    return int(device.split(":", 1)[1])


def torch_device(spec: PointSpec) -> torch.device:
    """The torch device for ``spec``, made current; PointError when that GPU is not present."""
    import torch

    idx = cuda_index(spec.device)
    if idx is None:
        return torch.device("cpu")
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if idx >= gpus:
        raise PointError(f"{spec.device} is not present; {count(gpus, 'CUDA device')} found")
    torch.cuda.set_device(idx)
    return torch.device(spec.device)


def torch_sync(dev: torch.device) -> Callable[[], None] | None:
    if dev.type != "cuda":
        return None
    import torch

    return lambda: torch.cuda.synchronize(dev)


@dataclass
class ThreadChoice:
    """The thread count a CPU point chose, and why, kept for the point's record."""

    used: int = 0
    available: int = 0
    others_busy_cores: float = 0.0


#: torch's own thread count when the worker started: every core torch would use on a quiet machine
_all_threads: int | None = None
#: the choice of the point being measured (the worker measures one point at a time)
last_thread_choice = ThreadChoice()


def _choose_threads(spec: PointSpec, all_threads: int) -> int:
    """The threads a point on ``spec`` may use out of ``all_threads``: the plan's count if it names
    one; on the CPU otherwise one thread per core other programs leave free (``noise.threads_to_use``
    says why: a thread waiting for a busy core turns a 1 ms step into a 10 ms one); on a GPU all."""
    if spec.cpu_threads:
        return spec.cpu_threads
    if spec.device != "cpu":
        return all_threads
    busy = others_busy_cores()
    n = threads_to_use(all_threads, os.cpu_count() or all_threads, busy)
    last_thread_choice.used, last_thread_choice.available = n, all_threads
    last_thread_choice.others_busy_cores = busy
    return n


def torch_threads(spec: PointSpec) -> int:
    """Set torch's threads for ``spec`` (``_choose_threads``) and return the count."""
    import torch

    global _all_threads
    if _all_threads is None:
        _all_threads = torch.get_num_threads()
    n = _choose_threads(spec, _all_threads)
    torch.set_num_threads(n)
    return n


@contextmanager
def blas_threads(spec: PointSpec) -> Iterator[int | None]:
    """numpy's BLAS gets the same thread choice as torch for the length of the block: left alone, an
    OpenBLAS that starts a thread per core on a busy machine makes matvec 10-100x slower with no
    sign of why. Yields the count in force, or None where threadpoolctl finds no BLAS to limit."""
    from threadpoolctl import threadpool_info, threadpool_limits

    counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    if not counts:
        yield None
        return
    n = _choose_threads(spec, max(counts))
    with threadpool_limits(limits=n, user_api="blas"):
        yield n


#: cuda:N -> its SM clock reader (``gpu_clock.no_reading`` without NVML), looked up once per worker
_sm_clocks: dict[str, Callable[[], float | None] | None] = {}


def sm_clock(device: str) -> Callable[[], float | None] | None:
    """The SM clock reader a GPU point holds and watches (``explorer.devices.gpu_clock``); None on a CPU."""
    if device not in _sm_clocks:
        from explorer.devices.gpu_clock import cuda_sm_reader

        _sm_clocks[device] = cuda_sm_reader(device)
    return _sm_clocks[device]


def time_torch(spec: PointSpec, step: Callable[[], object], dev: torch.device) -> Timing:
    """A torch step timed with torch.utils.benchmark.Timer on every CPU thread, synchronized on GPUs
    (after the GPU's SM clock is held steady, and watched during the samples)."""
    sync = torch_sync(dev)
    return measure_torch(
        step,
        num_threads=torch_threads(spec),
        repeats=spec.repeats,
        budget_s=spec.budget_s,
        sync=sync,
        sm_clock=sm_clock(spec.device) if sync is not None else None,
    )


def time_plain(
    spec: PointSpec,
    step: Callable[[], object],
    sync: Callable[[], object] | None = None,
    naive: bool = False,
    between: Callable[[], object] | None = None,
) -> Timing:
    """``step`` timed by ``measure`` with the point's repeats and budget; ``between`` runs before
    each sample, untimed (the L2 flush of a cold memory point); with a ``sync`` on a GPU, its SM
    clock is held and watched."""
    clock = sm_clock(spec.device) if sync is not None else None
    return measure(
        step, sync, repeats=spec.repeats, budget_s=spec.budget_s, naive=naive, between=between, sm_clock=clock
    )


def versions(device: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("torch", "numpy", "numba"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = str(getattr(mod, "__version__", "?"))
    torch = sys.modules.get("torch")
    if torch is not None and device != "cpu":
        out["cuda_runtime"] = str(torch.version.cuda)
        try:
            out["cudnn"] = str(torch.backends.cudnn.version())
        except Exception:
            pass
    try:
        import explorer

        out["device_explorer"] = explorer.__version__
    except Exception:
        pass
    return out


# --- error classification ----------------------------------------------------------------------

_OOM_MARKERS = ("out of memory", "cuda_error_out_of_memory", "outofmemory")
_FATAL_MARKERS = (
    "illegal memory access",
    "unspecified launch failure",
    "device-side assert",
    "cuda error",
    "cuda_error",
    "cudaerror",
    "misaligned address",
    "ecc error",
)


def classify(exc: BaseException) -> tuple[str, bool]:
    """(one-line message, fatal?) for an exception raised while measuring a point."""
    if isinstance(exc, (PointError, UserError)):
        return str(exc), False
    text = f"{type(exc).__name__}: {exc}"
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    low = text.lower()
    if isinstance(exc, MemoryError) or any(m in low for m in _OOM_MARKERS):
        own = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"out of memory: {own[:300]}", False
    if any(m in low for m in _FATAL_MARKERS):
        return f"device fault (worker replaced): {first[:300]}", True
    return first[:400], False


def _release_memory() -> None:
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        try:
            torch.cuda.empty_cache()
        except Exception:
            pass


def _gpu_name(device: str) -> str | None:
    torch = sys.modules.get("torch")
    idx = cuda_index(device)
    if idx is None or torch is None:
        return None
    try:
        return str(torch.cuda.get_device_name(idx))
    except Exception:
        return None


def _throughput(w: Workload, spec: PointSpec, out: Outcome) -> tuple[float | None, str]:
    unit = out.unit or w.unit
    t = out.timing.median_s
    if not t or t <= 0:
        return None, unit
    if unit == "GFLOP/s":
        work = out.flops if out.flops is not None else w.flops(spec.size)
        return work / t / 1e9, unit
    if unit == "GB/s":
        work = out.bytes if out.bytes is not None else w.bytes_moved(spec.size)
        return work / t / 1e9, unit
    items = out.items if out.items is not None else float(spec.size)
    return items / t, unit


#: a disturbed point is measured at most this many times in all
MAX_ATTEMPTS = 3
#: the first attempt may use this share of the point's time budget, leaving the rest for a re-measure
FIRST_ATTEMPT_SHARE = 0.4


def verdict_of(out: Outcome, spec: PointSpec) -> Verdict:
    """The noise verdict on one attempt: what disturbed it (explorer.bench.noise), with its threads."""
    t = out.timing
    choice = out.thread_choice = replace(last_thread_choice)
    chose = bool(choice.used) and spec.device == "cpu"
    verdict = noise_verdict(
        t.load,
        threads=out.threads or 1,
        median_s=t.median_s,
        min_s=t.min_s,
        spread_s=t.spread_s,
        repeats=t.repeats,
        on_cpu=spec.device == "cpu",
        threads_quiet=min(choice.available, os.cpu_count() or choice.available) if chose else None,
        others_busy_at_start=choice.others_busy_cores,
    )
    if t.throttled:  # the GPU's clock fell below 75% of steady: not the device's steady figure
        reason = f"{verdict.reason}; {t.throttle_note}" if verdict.reason else t.throttle_note
        verdict = Verdict(True, reason)
    return verdict


def measure_until_quiet(
    run: Callable[[PointSpec], Outcome],
    spec: PointSpec,
    judge_attempt: Callable[[Outcome, PointSpec], Verdict] = verdict_of,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Outcome, Verdict, int]:
    """Measure; while the verdict says disturbed and at least half the first attempt's share of the
    point's time budget is left, measure again with what is left (at most ``MAX_ATTEMPTS`` in all).
    A disturbed attempt rarely settles early, so it runs to its budget: the first one gets
    ``FIRST_ATTEMPT_SHARE`` of the point's budget to leave room for a second.

    Returns the attempt kept, its verdict and how many re-measurements were made. An undisturbed
    attempt is kept as soon as there is one; when every attempt was disturbed, the fastest is kept
    (a disturbance only ever slows a point down), still marked, with its own reason.
    """
    start = clock()
    deadline = start + spec.budget_s
    first_budget = spec.budget_s * FIRST_ATTEMPT_SHARE
    attempts: list[tuple[Outcome, Verdict]] = []
    while True:
        began = clock()
        budget = first_budget if not attempts else deadline - began
        out = run(replace(spec, budget_s=budget))
        verdict = judge_attempt(out, spec)
        attempts.append((out, verdict))
        if not verdict.noisy:
            return out, verdict, len(attempts) - 1
        if len(attempts) >= MAX_ATTEMPTS or deadline - clock() < first_budget / 2:
            break
    out, verdict = min(attempts, key=lambda a: a[0].timing.median_s)
    return out, verdict, len(attempts) - 1


#: cuda:N -> its NVML index on this machine (None: NVML cannot tell), looked up once per agent
_nvml_index_of: dict[str, int | None] = {}


def _gpu_intruders(device: str) -> list[str]:
    """Other processes NVML lists on ``device``'s GPU now ("name (pid N)"); empty on a CPU."""
    if not device.startswith("cuda"):
        return []
    from explorer.gpuqueue.share import gpu_identity, other_gpu_processes

    if device not in _nvml_index_of:
        _nvml_index_of[device] = gpu_identity(device)[1]
    return other_gpu_processes(_nvml_index_of[device])


def run_point(spec: PointSpec, w: Workload) -> tuple[BenchPoint, bool]:
    """Measure one point of workload ``w`` (the registry's ``get_workload(spec.workload)``, which
    the caller looks up: the registry sits above the variants this runs); never raises. Returns
    the point and whether the worker must be replaced."""
    label = w.size_label(spec.size)
    roof_notice = peaks.RoofNotice()
    try:
        if spec.measure_roof:
            roof_notice = peaks.ensure_measured_quietly(spec.device, force=spec.remeasure_roof)
        variant = w.variant(spec.variant_key)
        if variant.check is not None:
            return checked_point(w, spec, label, variant.check(w, spec)), False
        last_thread_choice.used = 0
        intruders = _gpu_intruders(spec.device)
        out, verdict, remeasured = measure_until_quiet(lambda s: variant.run(w, s), spec)
        intruders += [p for p in _gpu_intruders(spec.device) if p not in intruders]
    except BaseException as exc:  # noqa: B036 - a point must never take the worker down with a traceback
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        message, fatal = classify(exc)
        _release_memory()
        failed = error_point(
            w.name,
            spec.variant,
            spec.device,
            spec.size,
            label,
            message,
            w.unit,
            variant_key=spec.variant_key,
            dtype=w.dtype,
            versions=versions(spec.device),
        )
        return failed, fatal
    tp, unit = _throughput(w, spec, out)
    t = out.timing
    extra = dict(out.extra)
    extra.setdefault("timing_method", t.method)
    name = _gpu_name(spec.device)
    if name:
        extra.setdefault("device_name", name)
    if t.steps_per_sample > 1:
        extra.setdefault("steps_per_sample", float(t.steps_per_sample))
    if roof_notice.failed:  # said beside the point (the CLI prints it): never a silent failure
        extra[CEILINGS_NOTE] = roof_notice.text
    choice = out.thread_choice or last_thread_choice
    if choice.used and out.threads and out.threads < choice.available:
        extra["threads_note"] = (
            f"{out.threads} of {choice.available} threads: other programs kept "
            f"{choice.others_busy_cores:.1f} cores busy when this point started"
        )
    basis: peaks.PeakBasis | None = None
    if out.peak and unit == "GFLOP/s":
        basis = peaks.compute_peak_basis(spec.device)
    elif out.peak and out.bus_bound:
        basis = peaks.PCIE_BASIS
    noisy, noise_reason = verdict.noisy, verdict.reason
    if intruders:  # a shared GPU: another program's kernels ran between ours
        shown = ", ".join(intruders[:3]) + (f" and {len(intruders) - 3} more" if len(intruders) > 3 else "")
        said = f"other processes used this GPU while it was measured: {shown}"
        noisy, noise_reason = True, f"{noise_reason}; {said}" if noise_reason else said
    load = t.load
    waiting = load.waiting_share(out.threads or 1) if load is not None else None
    steal = load.steal_share() if load is not None else None
    point = BenchPoint(
        workload=w.name,
        variant=spec.variant,
        device=spec.device,
        size=spec.size,
        size_label=label,
        variant_key=spec.variant_key,
        median_s=t.median_s,
        spread_s=t.spread_s,
        min_s=t.min_s,
        repeats=t.repeats,
        throughput=tp,
        throughput_unit=unit,
        peak=out.peak,
        peak_basis=basis.text if basis else "",
        peak_is_estimate=bool(basis and basis.is_estimate),
        peak_kind=basis.kind if basis else "",
        model=out.model,
        model_estimate=out.model_estimate,
        model_note=out.model_note,
        threads=out.threads,
        dtype=out.dtype or w.dtype,
        versions=versions(spec.device),
        extra=extra,
        noisy=noisy,
        noise_reason=noise_reason,
        remeasured=remeasured,
        others_cpu_share=round(load.others_share(), 4) if load is not None else None,
        waiting_share=None if waiting is None else round(waiting, 4),
        steal_share=None if steal is None else round(steal, 4),
        sm_mhz_steady=t.sm_mhz_steady,
        sm_mhz_min=t.sm_mhz_min,
        throttled=t.throttled,
    )
    if w.hidden:  # the hidden test workloads (crash, hang) have no place on a roofline
        return point, False
    moved = out.bytes if out.bytes is not None else w.bytes_moved(spec.size)
    placed = peaks.place_point(
        point,
        out.flops if out.flops is not None else w.flops(spec.size),
        out.roof_bytes if out.roof_bytes is not None else moved,
        out.working_set if out.working_set is not None else w.working_set_bytes(spec.size),
        bus_bound=out.bus_bound,
    )
    return placed, False
