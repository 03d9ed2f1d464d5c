"""Memory and divergence measured: what ``explorer.memory`` models, timed on a GPU.

Four workloads, each point recorded beside what the model says (``Outcome.model``, ``model_estimate``
and ``model_note``, kept apart from the measurement and labelled as a model):

* ``strided_copy``: ``dst[i] = src[i * stride]``, GB/s vs stride, beside the coalescing model's
  estimate (the copy's efficiency x the device's memory bandwidth: in DRAM granules for a working
  set past the L2, in sectors for one within it). On the CPU, a numpy
  strided copy beside the same model in 64-byte cache lines.
* ``shared_transpose``: a tiled transpose through ``tile[32][32]`` vs the padded ``tile[32][33]``,
  beside the modelled bank-conflict degree of the tile's column read (32 vs 1).
* ``branch``: a lane-by-lane (divergent) vs a warp-aligned branch, beside the modelled SIMT efficiency.
* ``utilization_trap``: a few warps spinning for seconds while NVML is sampled: "GPU utilization
  100%" while at most a handful of the GPU's SMs have work.

Imported only inside the benchmark worker; numba is imported inside the run functions. Every GPU
result is checked on the host after the timing, so a fast wrong kernel is an error row.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from dataclasses import replace
from functools import partial
from typing import Any

from explorer.bench import peaks
from explorer.bench.execute import Outcome, PointError, PointSpec, time_plain
from explorer.bench.variants import Variant
from explorer.bench.wl_numba import check_against_numpy, cold_l2, gpu_shape, l2_record, numba_device
from explorer.bench.workload import (
    BRANCH_STEPS,
    FLOAT32_BYTES,
    STRIDED_COPY_ELEMENTS_CPU,
    STRIDED_COPY_ELEMENTS_GPU,
    Workload,
    strided_copy_elements,
)
from explorer.devices.gpm import GpmReader, GpmResult
from explorer.devices.model import CudaGpu
from explorer.memory.coalescing import CopyModel
from explorer.memory.texts import UTILIZATION_MEANING
from explorer.units import binary_bytes
from explorer.words import count, from_percent, percent

#: seconds the utilization trap keeps its warps busy per point, and how long NVML is given to
#: catch up before its readings count (it averages over a past period of 1/6 s to 1 s)
TRAP_SECONDS = 3.0
NVML_SETTLE_S = 1.0
NVML_EVERY_S = 0.05
#: each of the trap's launches lasts about this long: short enough for a display GPU's watchdog
#: (a few seconds), long enough that the gaps between launches are invisible to NVML
TRAP_LAUNCH_S = 0.2


# --- strided copy ---------------------------------------------------------------------------


def _bandwidth(device: str) -> tuple[float | None, str]:
    """The DRAM bandwidth the model multiplies, and where it comes from (the device's roof)."""
    dram = peaks.worker_roof(device).main_memory()
    if dram is None:
        return None, ""
    return dram.value, f"{dram.name} roof, {dram.kind_text}"


def copy_model_level(
    stride: int, on_gpu: bool, working_set: float | None = None, device: CudaGpu | None = None
) -> tuple[CopyModel, str]:
    """The strided copy's model at the level its data comes from, and that level in words.

    On a GPU, data that fits the L2 moves in the 32-byte sectors L1/L2 count; data past the L2
    comes from DRAM in its granules (64 B from compute capability 8.0 on, an estimate): a copy
    whose lanes are a sector or more apart moves a whole granule for each. With the L2's size
    unknown the data is not known to be past it, and the sectors are said."""
    from explorer.memory.coalescing import CPU_LINE_BYTES, dram_granularity, strided_copy_model

    if not on_gpu:
        return strided_copy_model(stride, FLOAT32_BYTES, CPU_LINE_BYTES), f"{CPU_LINE_BYTES}-byte cache lines"
    sectors = strided_copy_model(stride, FLOAT32_BYTES)
    l2 = device.limits.l2_cache_bytes if device is not None and device.limits is not None else None
    if l2 is None or working_set is None:
        return sectors, "32-byte sectors (the L2's size is not known here, so DRAM's granules are left out)"
    where = f"the {binary_bytes(working_set)} working set"
    if working_set <= l2:
        return sectors, f"32-byte sectors ({where} fits the {binary_bytes(l2)} L2)"
    dram = dram_granularity(cc=device.compute_capability if device is not None else None)
    return (
        strided_copy_model(stride, FLOAT32_BYTES, dram=dram),
        f"{dram.bytes}-byte DRAM granules ({where} is past the {binary_bytes(l2)} L2; granule size {dram.basis})",
    )


def _copy_model_words(
    stride: int, device: str, on_gpu: bool, working_set: float | None = None
) -> tuple[str, float | None, str]:
    """(cell, estimate GB/s, sentence) of the coalescing model for one stride on ``device``."""
    record = peaks.device_record(device) if on_gpu else None
    model, unit = copy_model_level(
        stride, on_gpu, working_set, record if isinstance(record, CudaGpu) else None
    )
    gbps, basis = _bandwidth(device)
    head = (
        f"model, not a measurement: reads {percent(model.read_efficiency)} and writes "
        f"{percent(model.write_efficiency)} efficient in {unit}, so the copy uses {percent(model.efficiency)} "
        "of the bytes it moves"
    )
    if gbps is None:
        return (
            f"{percent(model.efficiency)} of bytes used",
            None,
            head + "; no memory bandwidth known to scale it",
        )
    estimate = model.efficiency * gbps
    sentence = (
        f"{head}; x {gbps:,.0f} GB/s ({basis or 'the memory roof'}) = est. {estimate:,.0f} GB/s. "
        "Caches, prefetchers and DRAM pages are not modelled"
    )
    if not on_gpu:
        sentence += "; the copy runs on one core, the bandwidth is the whole CPU's"
    return f"est. {estimate:,.0f} GB/s", estimate, sentence


def _strided_numpy(w: Workload, spec: PointSpec) -> Outcome:
    import numpy as np

    stride, n = spec.size, STRIDED_COPY_ELEMENTS_CPU
    src = np.arange(n * stride, dtype=np.float32)
    dst = np.empty(n, dtype=np.float32)
    timing = time_plain(spec, lambda: np.copyto(dst, src[::stride]))
    if not np.array_equal(dst, src[::stride]):
        raise PointError("numpy's strided copy did not arrive")
    cell, estimate, note = _copy_model_words(stride, spec.device, on_gpu=False)
    return Outcome(
        timing,
        bytes=2.0 * FLOAT32_BYTES * n,
        threads=1,
        working_set=float(src.nbytes + dst.nbytes),
        extra={"elements": float(n), "input_bytes": float(src.nbytes), "library": "numpy (one core)"},
        model=cell,
        model_estimate=estimate,
        model_note=note,
    )


def _strided_numba(w: Workload, spec: PointSpec) -> Outcome:
    import numpy as np

    from explorer.bench.grid import resident_blocks

    stride = spec.size
    cuda = numba_device(spec)
    from explorer.memory.kernels import THREADS, fill_index, strided_read

    shape = gpu_shape(cuda, spec.device)
    # at least 4x the L2 at stride 1, so the stride-1 point is a DRAM figure on a 60 MB L2 too
    n = strided_copy_elements(shape.l2_bytes, STRIDED_COPY_ELEMENTS_GPU)
    src = cuda.device_array(n * stride, dtype=np.float32)
    # made on the device: gigabytes need not cross the bus
    fill_index[resident_blocks(n * stride, THREADS, shape.sms, shape.threads_per_sm), THREADS](src)
    dst = cuda.device_array(n, dtype=np.float32)
    blocks = resident_blocks(n, THREADS, shape.sms, shape.threads_per_sm)
    moved = 2.0 * FLOAT32_BYTES * n
    extra: dict[str, float | str] = {
        "elements": float(n),
        "input_bytes": float(n * stride * FLOAT32_BYTES),
        "blocks": float(blocks),
        "threads_per_block": float(THREADS),
    }
    with cold_l2(cuda, spec, shape) as flush:
        timing = time_plain(
            spec, lambda: strided_read[blocks, THREADS](src, dst, stride), cuda.synchronize, between=flush
        )
    l2_record(extra, timing, flush, spec.device, moved)
    expected = (np.arange(n, dtype=np.int64) * stride).astype(np.float32)
    check_against_numpy(dst.copy_to_host(), expected, "the strided-read kernel", rtol=0.0, atol=0.0)
    working_set = float(FLOAT32_BYTES * n * (stride + 1))  # the strided source and the copy
    cell, estimate, note = _copy_model_words(stride, spec.device, on_gpu=True, working_set=working_set)
    return Outcome(
        timing,
        bytes=moved,
        extra=extra,
        model=cell,
        model_estimate=estimate,
        model_note=note,
        working_set=working_set,
    )


# --- shared-memory transpose ------------------------------------------------------------------


def _transpose(w: Workload, spec: PointSpec, *, padded: bool) -> Outcome:
    import numpy as np

    from explorer.memory.banks import bank_conflicts, tile_column

    n = spec.size
    cuda = numba_device(spec)
    from explorer.memory.kernels import TILE, launch_transpose

    m = np.random.default_rng(n).standard_normal((n, n), dtype=np.float32)
    src, dst = cuda.to_device(m), cuda.device_array((n, n), dtype=np.float32)
    extra: dict[str, float | str] = {}
    with cold_l2(cuda, spec, gpu_shape(cuda, spec.device)) as flush:
        timing = time_plain(spec, lambda: launch_transpose(src, dst, padded), cuda.synchronize, between=flush)
    l2_record(extra, timing, flush, spec.device, w.bytes_moved(n))
    check_against_numpy(dst.copy_to_host(), m.T, "the transpose kernel", rtol=0.0, atol=0.0)
    width = TILE + (1 if padded else 0)
    conflicts = bank_conflicts(tile_column(width))
    degree = conflicts.conflict_degree
    cell = "no bank conflict" if degree == 1 else f"{degree}-way bank conflict"
    note = (
        f"model, not a measurement: reading a column of tile[{TILE}][{width}] puts the warp's 32 lanes "
        f"in {count(len({lb.bank for lb in conflicts.lanes}), 'bank')}: conflict degree {degree}, "
        f"{count(conflicts.wavefronts, 'wavefront')} per warp where 1 is the fewest. Global memory traffic is "
        "the same with and without padding; only the shared-memory reads differ"
    )
    extra.update(conflict_degree_model=float(degree), wavefronts_model=float(conflicts.wavefronts))
    return Outcome(
        timing,
        extra=extra,
        model=cell,
        model_note=note,
    )


# --- divergent vs warp-aligned branch ---------------------------------------------------------


def _branch(w: Workload, spec: PointSpec, *, by_warp: bool) -> Outcome:
    import numpy as np

    from explorer.memory.divergence import Branch, divergence

    n = spec.size
    cuda = numba_device(spec)
    from explorer.launch.schedule import blocks_for
    from explorer.memory.kernels import THREADS, branch_by_lane, branch_by_warp, reference_branch

    values = np.random.default_rng(n).standard_normal(n, dtype=np.float32)
    data = cuda.to_device(values)
    kernel, blocks = (branch_by_warp if by_warp else branch_by_lane), blocks_for(n, THREADS)

    def step() -> None:
        kernel[blocks, THREADS](data, BRANCH_STEPS)

    timing = time_plain(spec, step, cuda.synchronize)
    # every run maps x -> work(x) again; check the last one from a fresh copy of its input
    data.copy_to_device(values)
    step()
    cuda.synchronize()
    check_against_numpy(
        data.copy_to_host(), reference_branch(values, BRANCH_STEPS, by_warp), "the branch kernel", rtol=1e-4
    )
    model = divergence(THREADS, Branch("warp", k=2) if by_warp else Branch("mod", k=2))
    cell = f"SIMT {percent(model.simt_efficiency)}"
    note = (
        f"model, not a measurement: with `if ({model.branch.condition})` in blocks of {THREADS}, "
        f"{model.diverged_warps} of {len(model.warps)} warps diverge; SIMT efficiency "
        f"{percent(model.simt_efficiency)} (lane slots at work while both paths run)"
        + (
            ", so the same work should take about twice the warp-aligned branch's time"
            if model.diverged_warps
            else ": every warp takes one path"
        )
    )
    return Outcome(
        timing,
        extra={"simt_efficiency_model": model.simt_efficiency, "steps_per_element": float(BRANCH_STEPS)},
        model=cell,
        model_note=note,
    )


# --- the utilization trap ---------------------------------------------------------------------


class UtilizationSampler:
    """Reads NVML's "GPU utilization" of one GPU every ``every_s`` on a thread, with the time of
    each reading. ``nvml`` is pynvml or a stand-in (the tests pass one).

    Where the GPU has NVML's GPM metrics (Hopper and newer), it also measures SM activity and SM
    occupancy over the window from ``window_start`` (a ``perf_counter`` time, once the readings
    have settled) to the end of the ``with`` block: ``gpm`` holds them, or why there are none."""

    def __init__(
        self, nvml: Any, index: int, every_s: float = NVML_EVERY_S, window_start: float | None = None
    ) -> None:
        self._nvml = nvml
        self._handle = nvml.nvmlDeviceGetHandleByIndex(index)
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nvml-utilization", daemon=True)
        self.samples: list[tuple[float, float]] = []  # (perf_counter seconds, utilization %)
        self.window_start = time.perf_counter() if window_start is None else window_start
        self._gpm = GpmReader(nvml, self._handle)
        self.gpm = GpmResult.missing("the kernel ended before the GPM window began")

    def read(self) -> float:
        return float(self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu)

    def _loop(self) -> None:
        while not self._stop.is_set():
            now = time.perf_counter()
            if now >= self.window_start and not self._gpm.primed and self._gpm.unusable is None:
                first = self._gpm.read()  # the window's first sample
                if not self._gpm.primed:
                    self.gpm = first  # GPM is not there: its reason
            try:
                self.samples.append((now, self.read()))
            except Exception:  # one failed reading is a gap, not a failed point
                pass
            self._stop.wait(self._every_s)

    def __enter__(self) -> UtilizationSampler:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        if self._gpm.primed:
            self.gpm = self._gpm.read()  # the window's last sample: the metrics over the window
        self._gpm.close()

    def after(self, start: float) -> list[float]:
        return [value for at, value in self.samples if at >= start]


def _open_nvml(device: str, nvml: Any = None) -> tuple[Any, int]:
    """NVML initialised and ``device``'s NVML index; PointError, in one line, when it cannot be read."""
    from explorer.devices.nvml import import_nvml
    from explorer.gpuqueue.share import gpu_identity

    try:
        lib = nvml if nvml is not None else import_nvml()
        lib.nvmlInit()
    except Exception as exc:
        raise PointError(
            f"NVML cannot be read here ({str(exc).strip() or type(exc).__name__}); the utilization trap "
            "needs its 'GPU utilization' reading"
        ) from exc
    index = gpu_identity(device, lib)[1]
    if index is None:
        raise PointError(
            f"NVML does not list {device} (CUDA_VISIBLE_DEVICES?), so its utilization cannot be read"
        )
    return lib, index


def _sm_count(cuda: Any, device: str) -> int | None:
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # the simulator's device has no attributes: ask the Devices record
        rec = peaks.device_record(device)
        return rec.sm_count if isinstance(rec, CudaGpu) else None


def trap_words(
    blocks: int,
    sms: int | None,
    utilization: float | None,
    sm_activity: float | None = None,
    sm_occupancy: float | None = None,
) -> tuple[str, str]:
    """The table's cell and the whole sentence: NVML's reading beside the SMs that had work, and
    beside what NVML's GPM measured of them where the GPU has it (SM activity and occupancy)."""
    busy = f"at most {min(blocks, sms)} of {sms} SMs" if sms else f"at most {count(blocks, 'SM')}"
    share = f" ({percent(min(blocks, sms) / sms)})" if sms else ""
    nvml = percent(from_percent(utilization), decimals=0) if utilization is not None else ""
    reading = f"NVML {nvml}" if utilization is not None else "NVML no reading"
    measured = ""
    if sm_activity is not None:
        activity = percent(from_percent(sm_activity), decimals=0, fine=True, spaced=True)
        reading += f"; SM activity {activity}"
        occupancy = (
            f" and SM occupancy {percent(from_percent(sm_occupancy), decimals=0, fine=True, spaced=True)}"
            if sm_occupancy is not None
            else ""
        )
        measured = f" NVML's GPM counters measured SM activity {activity}{occupancy} meanwhile."
    sentence = (
        f"{count(blocks, 'block')} of one warp: {busy} had work{share} (from the launch), while NVML's "
        + (f"'GPU utilization' read {nvml}" if utilization is not None else "reading was missing")
        + f".{measured} {UTILIZATION_MEANING}"
    )
    return f"{reading}; {busy} busy", sentence


def _utilization_trap(w: Workload, spec: PointSpec, nvml: Any = None) -> Outcome:
    import numpy as np

    blocks = spec.size
    cuda = numba_device(spec)
    from explorer.memory.kernels import WARP, busy_warps, reference_busy

    lib, index = _open_nvml(spec.device, nvml)
    try:
        out = cuda.device_array(blocks * WARP, dtype=np.int64)

        def launch(steps: int) -> float:
            t0 = time.perf_counter()
            busy_warps[blocks, WARP](out, steps)
            cuda.synchronize()
            return time.perf_counter() - t0

        steps = 1 << 10
        launch(steps)  # compile
        while (took := launch(steps)) < TRAP_LAUNCH_S / 10 and steps < 1 << 40:
            steps *= 4
        steps = max(1, int(steps * TRAP_LAUNCH_S / max(took, 1e-9)))
        launches = max(2, math.ceil(TRAP_SECONDS / TRAP_LAUNCH_S))
        start = time.perf_counter()
        with UtilizationSampler(lib, index, window_start=start + NVML_SETTLE_S) as sampler:
            timing = time_plain(
                replace(spec, repeats=launches),
                lambda: busy_warps[blocks, WARP](out, steps),
                cuda.synchronize,
            )
            readings = sampler.after(start + NVML_SETTLE_S)
        gpm = sampler.gpm
    finally:
        try:
            lib.nvmlShutdown()
        except Exception:  # the reading is taken; a failed shutdown changes nothing
            pass
    got = out.copy_to_host()
    if not np.array_equal(got, reference_busy(blocks * WARP, steps)):
        raise PointError("the busy kernel gave a wrong result (its LCG chain differs from the host's)")
    sms = _sm_count(cuda, spec.device)
    utilization = statistics.median(readings) if readings else None
    activity, occupancy = gpm.values.get("sm_activity_pct"), gpm.values.get("sm_occupancy_pct")
    cell, sentence = trap_words(blocks, sms, utilization, activity, occupancy)
    extra: dict[str, float | str] = {
        "nvml_samples": float(len(readings)),
        "steps_per_launch": float(steps),
        "seconds_busy": float(timing.median_s * timing.repeats),
    }
    for name in ("sm_activity_pct", "sm_occupancy_pct"):
        if name in gpm.values:
            extra[f"gpm_{name}"] = gpm.values[name]
        else:
            extra[f"gpm_{name}_missing"] = gpm.reasons.get(name, "not measured")
    if utilization is not None:
        extra["nvml_gpu_utilization_pct"] = utilization
        extra["nvml_gpu_utilization_min_pct"] = min(readings)
    if sms:
        extra["sm_count"] = float(sms)
        extra["sms_with_work_at_most"] = float(min(blocks, sms))
    return Outcome(
        timing,
        items=float(blocks * WARP * steps),
        extra=extra,
        model=cell,
        model_note=sentence,
    )


# --- the variants, as the registry lists them (order = the order points run and legends list) -----

STRIDED_COPY = (
    Variant("numpy", "numpy strided", _strided_numpy, where="cpu"),
    Variant("numba_kernel", "numba kernel", _strided_numba, where="gpu"),
)
SHARED_TRANSPOSE = (
    Variant("naive", "tile[32][32]", partial(_transpose, padded=False), where="gpu"),
    Variant("padded", "tile[32][33] padded", partial(_transpose, padded=True), where="gpu"),
)
BRANCH = (
    Variant("divergent", "divergent (i % 2)", partial(_branch, by_warp=False), where="gpu"),
    Variant("warp_aligned", "warp-aligned ((i / 32) % 2)", partial(_branch, by_warp=True), where="gpu"),
)
UTILIZATION_TRAP = (Variant("busy_warps", "busy warps", _utilization_trap, where="gpu"),)
