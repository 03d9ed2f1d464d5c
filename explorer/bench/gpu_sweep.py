"""A GPU's L2 and DRAM bandwidth, measured by sweeping the working set with numba CUDA kernels.

Two kernels (``explorer.bench.roof_kernels``) over float64 buffers, every thread walking the buffer
with the grid's stride (so each warp reads 256 contiguous bytes at a time) and going over it
``reps`` times in one launch:

* ``read``: ``acc += x[i]`` (8 bytes per element; one sum per thread written at the end, so no
  load is dropped);
* ``copy``: ``y[i] = x[i]`` (16 bytes: read + write, as NVIDIA's bandwidthTest counts a copy).

Working sets grow by ``GROWTH`` from well under the L2 size (``L2 / 16``) to well over it
(``16 x L2``, at least 512 MiB: DRAM); each is timed with ``reps`` chosen so one launch lasts a
few milliseconds, the fastest of ``SAMPLES`` launches kept (synchronized before and after). The
plateaus are found and named by the L2 size (``explorer.roofs.plateaus``): the one under it is L2,
the one past it DRAM (HBM or GDDR). Numba is imported inside the functions: the worker only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from explorer.bench.sweep import SweepResult
from explorer.devices.gpu_clock import ClockWatch

KERNELS: tuple[str, ...] = ("read", "copy")
BYTES_PER_ELEMENT = {"read": 8, "copy": 16}
ARRAYS = {"read": 1, "copy": 2}
GROWTH = 1.5
SAMPLES = 5
THREADS = 256
#: blocks per SM: enough warps in flight to cover the memory's latency
BLOCKS_PER_SM = 8
#: one launch moves at least this much, so the launch's own cost (microseconds) is noise
SAMPLE_BYTES = 4 << 30
MIN_DRAM_BYTES = 512 * 2**20


def _no_sync() -> None:
    """``run_kernel`` synchronizes itself."""


def kernels() -> dict[str, Any]:
    """The two kernels (``explorer.bench.roof_kernels``), imported on first use."""
    from explorer.bench import roof_kernels

    return {"read": roof_kernels.read, "copy": roof_kernels.copy}


def sizes(l2_bytes: int, growth: float = GROWTH) -> list[int]:
    """Working sets from L2 / 16 to 16 x L2 (at least 512 MiB), growing by ``growth``."""
    last = max(16 * l2_bytes, MIN_DRAM_BYTES)
    out, size = [], float(max(l2_bytes // 16, 64 * 1024))
    while size < last:
        out.append(int(size) // 256 * 256)
        size *= growth
    out.append(last // 256 * 256)  # the sweep ends well over the L2, whatever the growth
    return out


def run_kernel(cuda: Any, name: str, arrays: list[Any], out: Any, reps: int, blocks: int) -> None:
    """One launch of kernel ``name`` on ``arrays`` (device arrays), synchronized."""
    kernel = kernels()[name]
    if name == "read":
        kernel[blocks, THREADS](arrays[0], reps, out)
    else:
        kernel[blocks, THREADS](arrays[0], arrays[1], reps)
    cuda.synchronize()


def check_kernels(elements: int = 1000, reps: int = 2, blocks: int = 2) -> dict[str, bool]:
    """Run both kernels once on a small buffer and check their results on the host: the sums of
    every thread add up to ``reps`` times the buffer's sum, and the copy arrives. (The tests run
    it under numba's CUDA simulator, where no GPU is present.)"""
    import numpy as np

    from explorer.numbacuda import cuda

    host = np.arange(elements, dtype=np.float64)
    x = cuda.to_device(host)
    y = cuda.device_array_like(x)
    out = cuda.device_array(blocks * THREADS, dtype=np.float64)
    run_kernel(cuda, "read", [x], out, reps, blocks)
    run_kernel(cuda, "copy", [x, y], out, reps, blocks)
    return {
        "read": bool(math.isclose(float(out.copy_to_host().sum()), reps * float(host.sum()))),
        "copy": bool(np.array_equal(y.copy_to_host(), host)),
    }


def sweep(
    ws_bytes: list[int],
    sm_count: int,
    *,
    samples: int = SAMPLES,
    sample_bytes: int = SAMPLE_BYTES,
    progress: Callable[[float, str], None] | None = None,
    watch: ClockWatch | None = None,
) -> SweepResult:
    """Each kernel's best GB/s at each working set on the current GPU (``cuda.select_device`` first).
    With a ``watch`` the SM clock is held steady before the first launch and read after each
    timed one (``explorer.devices.gpu_clock``)."""
    import numpy as np

    from explorer.numbacuda import cuda

    started = time.perf_counter()
    blocks = max(1, sm_count) * BLOCKS_PER_SM
    out = cuda.device_array(blocks * THREADS, dtype=np.float64)
    result = SweepResult(
        threads=blocks * THREADS, ws_bytes=list(ws_bytes), gbps={k: [] for k in KERNELS}, samples=samples
    )
    biggest = max(ws_bytes) // 8
    # made once and sliced: the read's one array is the whole working set, the copy's two half
    pool = [cuda.to_device(np.ones(biggest)), cuda.to_device(np.ones(biggest // 2 + 1))]
    total = len(ws_bytes) * len(KERNELS)
    for index, size in enumerate(ws_bytes):
        for name in KERNELS:
            n = max(1, size // BYTES_PER_ELEMENT[name])
            arrays = [p[:n] for p in pool[: ARRAYS[name]]]
            reps = max(1, math.ceil(sample_bytes / size))
            run_kernel(cuda, name, arrays, out, 1, blocks)  # warm: caches, clocks
            if watch is not None and not watch.holds:  # an idle GPU's clock is low: hold it first
                watch.hold(partial(run_kernel, cuda, name, arrays, out, 1, blocks), _no_sync)
            best = math.inf
            for _ in range(samples):
                t0 = time.perf_counter()
                run_kernel(cuda, name, arrays, out, reps, blocks)
                best = min(best, time.perf_counter() - t0)
                if watch is not None:
                    watch.sample()
            result.gbps[name].append(BYTES_PER_ELEMENT[name] * n * reps / best / 1e9)
            if progress is not None:
                progress(
                    (index * len(KERNELS) + KERNELS.index(name) + 1) / total, f"{name} over {size >> 20} MiB"
                )
    result.seconds = time.perf_counter() - started
    return result
