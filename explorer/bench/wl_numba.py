"""Vector add and matrix-vector product: numba kernels on the GPU vs numpy (and torch) on the CPU.

Imported only inside the benchmark worker. Each GPU result is checked against numpy after the
timing, so a fast wrong kernel is an error row, not a figure.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from explorer.bench import peaks
from explorer.bench.execute import (
    Outcome,
    PointError,
    PointSpec,
    blas_threads,
    cuda_index,
    time_plain,
    time_torch,
    torch_device,
)
from explorer.bench.timing import Timing
from explorer.bench.variants import Variant
from explorer.bench.workload import MATVEC_COLS, MIB, Workload
from explorer.devices.model import CudaGpu
from explorer.units import binary_bytes
from explorer.words import count

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


def numba_device(spec: PointSpec) -> Any:  # explorer.numbacuda.cuda, typed Any there
    """numba's CUDA target with ``spec``'s GPU selected; PointError when numba cannot use it.
    Every numba workload (vectors, memory, tiling) starts here."""
    from explorer.numbacuda import cuda

    idx = cuda_index(spec.device)
    if not cuda.is_available():
        raise PointError(f"{spec.device} is not usable by numba: no CUDA driver or GPU found")
    gpus = len(cuda.gpus)
    if idx is None or idx >= gpus:
        raise PointError(f"{spec.device} is not present; {count(gpus, 'CUDA device')} found")
    cuda.select_device(idx)
    return cuda


def check_against_numpy(
    result: np.ndarray, expected: np.ndarray, what: str, rtol: float = 1e-4, atol: float = 1e-3
) -> float:
    """The largest difference of ``result`` from numpy's ``expected``; PointError naming ``what``
    when they differ beyond the tolerances, so a fast wrong kernel is an error row, not a figure."""
    import numpy as np

    err = float(np.max(np.abs(result - expected))) if result.size else 0.0
    if not np.allclose(result, expected, rtol=rtol, atol=atol):
        raise PointError(f"{what} gave a wrong result (max error {err:.3g} vs numpy)")
    return err


# --- the GPU's shape, and a cold L2 --------------------------------------------------------------

#: the L2 assumed where neither the driver nor the device's record gives its size: twice this is
#: more than any GPU's L2 so far (126 MB on a B200), as triton's do_bench flushes 256 MB
L2_UNKNOWN_BYTES = 128 * MIB
#: threads per block of the flush's fill kernel
FLUSH_THREADS = 256
#: under numba's simulator there is no cache to flush: a write this size stands in, so the flush's
#: code runs there (a real size would take the simulator's one Python thread per CUDA thread hours)
SIMULATOR_FLUSH_BYTES = 4 * 1024


@dataclass(frozen=True)
class GpuShape:
    """What sizes a streaming kernel's grid and a cold L2's flush: None where unknown."""

    sms: int | None
    threads_per_sm: int | None
    l2_bytes: int | None
    simulated: bool = False  # numba's CUDA simulator: no SMs, no caches


def gpu_shape(cuda: Any, device: str) -> GpuShape:
    """The current GPU's SM count, resident threads per SM and L2 size: the driver's figures,
    else the Devices record's; on numba's simulator none of them."""
    from numba import config

    if getattr(config, "ENABLE_CUDASIM", 0):
        return GpuShape(None, None, None, simulated=True)
    try:
        dev = cuda.get_current_device()
        l2 = int(dev.L2_CACHE_SIZE)
        return GpuShape(int(dev.MULTIPROCESSOR_COUNT), int(dev.MAX_THREADS_PER_MULTI_PROCESSOR), l2 or None)
    except Exception:
        rec = peaks.device_record(device)
        if not isinstance(rec, CudaGpu):
            return GpuShape(None, None, None)
        limits = rec.limits
        return GpuShape(
            rec.sm_count,
            limits.max_threads_per_sm if limits is not None else None,
            limits.l2_cache_bytes if limits is not None else None,
        )


class L2Flush:
    """Called before each sample (``measure``'s ``between``): writes a buffer twice the L2, so the
    sample's data is no longer there and comes from DRAM, as triton's do_bench does. The buffer
    is allocated once per point and freed after it (``cold_l2``)."""

    def __init__(self, cuda: Any, shape: GpuShape) -> None:
        import numpy as np

        from explorer.bench.grid import resident_blocks

        self.l2_known = shape.l2_bytes is not None
        self.simulated = shape.simulated
        self.nbytes = SIMULATOR_FLUSH_BYTES if shape.simulated else 2 * (shape.l2_bytes or L2_UNKNOWN_BYTES)
        n = self.nbytes // 4
        self._buffer = cuda.device_array(n, dtype=np.int32)
        self._blocks = resident_blocks(n, FLUSH_THREADS, shape.sms, shape.threads_per_sm, per_thread=1)
        self.calls = 0

    def __call__(self) -> None:
        from explorer.bench.kernels import fill

        self.calls += 1  # a new value each time: every line is written, none merely re-read
        fill[self._blocks, FLUSH_THREADS](self._buffer, self.calls)

    def free(self) -> None:
        self._buffer = None

    @property
    def words(self) -> str:
        if self.simulated:
            return (
                f"L2 'flushed' before each sample: numba's simulator has no cache, a {binary_bytes(self.nbytes)} "
                "write stands in"
            )
        twice = (
            "twice the L2"
            if self.l2_known
            else f"twice {binary_bytes(L2_UNKNOWN_BYTES)}, the L2's size unknown"
        )
        return f"L2 flushed before each sample (a {binary_bytes(self.nbytes)} write, {twice})"


@contextmanager
def cold_l2(cuda: Any, spec: PointSpec, shape: GpuShape) -> Iterator[L2Flush | None]:
    """The flush a point of ``spec`` runs before each sample, or None where it asked for a warm L2;
    its buffer freed when the block ends."""
    if spec.warm_l2:
        yield None
        return
    flush = L2Flush(cuda, shape)
    try:
        yield flush
    finally:
        flush.free()


#: why a warm point can read above the DRAM roof, said beside such a point only
WARM_ABOVE_DRAM = (
    "L2 warm: its data stayed in the L2 between samples, so part of it never came from DRAM. "
    "A 16 MB vector add warm can exceed the DRAM roof; cold (the L2 flushed before each sample, "
    "the default) it cannot"
)


def l2_record(
    extra: dict[str, float | str], timing: Timing, flush: L2Flush | None, device: str, bytes_per_step: float
) -> None:
    """Says with the point whether its L2 was cold or warm (``extra["l2"]`` and the timing's
    method); beside a warm point above the DRAM roof, why (``extra["l2_note"]``)."""
    if flush is not None:
        extra["l2"] = "cold"
        extra["l2_flush_bytes"] = float(flush.nbytes)
        timing.method = f"{timing.method}; {flush.words}"
        return
    extra["l2"] = "warm"
    timing.method = f"{timing.method}; L2 warm (not flushed between samples)"
    dram = peaks.worker_roof(device).main_memory()
    if dram is not None and timing.median_s > 0 and bytes_per_step / timing.median_s / 1e9 > dram.value:
        extra["l2_note"] = f"{WARM_ABOVE_DRAM} (the DRAM roof here: {dram.value:,.0f} GB/s)"


def _vector_operands(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    rng = np.random.default_rng(n)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    return a, b, np.empty_like(a)


def _vector_add_numpy(w: Workload, spec: PointSpec) -> Outcome:
    import numpy as np

    a, b, out = _vector_operands(spec.size)
    timing = time_plain(spec, lambda: np.add(a, b, out=out))
    check_against_numpy(out, a + b, "numpy's add")
    return Outcome(
        timing,
        threads=1,
        extra={"library": "numpy (one core: numpy ufuncs are single-threaded)"},
    )


def _vector_add_numba(w: Workload, spec: PointSpec, *, with_copies: bool) -> Outcome:
    n = spec.size
    a, b, out = _vector_operands(n)
    expected = a + b
    cuda = numba_device(spec)
    from explorer.bench.grid import resident_blocks
    from explorer.bench.kernels import THREADS_PER_BLOCK, launch_vector_add

    shape = gpu_shape(cuda, spec.device)
    blocks = resident_blocks(n, THREADS_PER_BLOCK, shape.sms, shape.threads_per_sm)
    a_dev, b_dev = cuda.to_device(a), cuda.to_device(b)
    out_dev = cuda.device_array_like(a)
    extra: dict[str, float | str] = {
        "blocks": float(blocks),
        "threads_per_block": float(THREADS_PER_BLOCK),
    }
    if not with_copies:
        with cold_l2(cuda, spec, shape) as flush:
            timing = time_plain(
                spec,
                lambda: launch_vector_add(a_dev, b_dev, out_dev, blocks),
                cuda.synchronize,
                between=flush,
            )
        l2_record(extra, timing, flush, spec.device, w.bytes_moved(n))
    else:

        def copies_and_kernel() -> None:
            a_dev.copy_to_device(a)
            b_dev.copy_to_device(b)
            launch_vector_add(a_dev, b_dev, out_dev, blocks)
            out_dev.copy_to_host(out)

        timing = time_plain(spec, copies_and_kernel, cuda.synchronize)
        extra["note"] = "two copies in, kernel, one copy out"
    extra["max_abs_error"] = check_against_numpy(out_dev.copy_to_host(), expected, "the vector-add kernel")
    # with the copies it is bounded by the bus, not by a memory level (the copies workload has
    # the bus's peak); the kernel alone is judged against the level its vectors live in
    return Outcome(timing, extra=extra, bus_bound=with_copies)


def _matvec_operands(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, MATVEC_COLS), dtype=np.float32)
    v = rng.standard_normal(MATVEC_COLS, dtype=np.float32)
    return m, v, m @ v


def _matvec_torch(w: Workload, spec: PointSpec) -> Outcome:
    import torch

    n = spec.size
    m, v, expected = _matvec_operands(n)
    dev = torch_device(spec)
    mt, vt = torch.from_numpy(m).to(dev), torch.from_numpy(v).to(dev)
    ut = torch.empty(n, device=dev)
    timing = time_torch(spec, lambda: torch.mv(mt, vt, out=ut), dev)
    err = check_against_numpy(ut.cpu().numpy(), expected, "torch.mv")
    threads = torch.get_num_threads() if dev.type == "cpu" else None
    return Outcome(timing, threads=threads, extra={"max_abs_error": err})


def _matvec_numpy(w: Workload, spec: PointSpec) -> Outcome:
    import numpy as np

    m, v, expected = _matvec_operands(spec.size)
    out = np.empty(spec.size, dtype=np.float32)
    with blas_threads(spec) as threads:
        timing = time_plain(spec, lambda: np.dot(m, v, out=out))
    return Outcome(timing, threads=threads, extra={"library": "numpy"})


def _matvec_numba(w: Workload, spec: PointSpec) -> Outcome:
    import numpy as np

    n = spec.size
    m, v, expected = _matvec_operands(n)
    cuda = numba_device(spec)
    from explorer.bench.kernels import THREADS_PER_BLOCK, launch_matvec
    from explorer.launch.schedule import blocks_for

    m_dev, v_dev = cuda.to_device(m), cuda.to_device(v)
    out_dev = cuda.device_array(n, dtype=np.float32)
    timing = time_plain(spec, lambda: launch_matvec(m_dev, v_dev, out_dev), cuda.synchronize)
    err = check_against_numpy(out_dev.copy_to_host(), expected, "the matvec kernel")
    return Outcome(
        timing,
        extra={
            "max_abs_error": err,
            "blocks": float(blocks_for(n, THREADS_PER_BLOCK)),
            "threads_per_block": float(THREADS_PER_BLOCK),
        },
    )


# --- the variants, as the registry lists them (order = the order points run and legends list) -----

VECTOR_ADD = (
    Variant("numpy", "numpy", _vector_add_numpy, where="cpu"),
    Variant("numba_kernel", "numba kernel", partial(_vector_add_numba, with_copies=False), where="gpu"),
    Variant(
        "numba_with_copies", "numba with copies", partial(_vector_add_numba, with_copies=True), where="gpu"
    ),
)
MATVEC = (
    Variant("numpy", "numpy", _matvec_numpy, where="cpu"),
    Variant("numba_row_per_thread", "numba row per thread", _matvec_numba, where="gpu"),
    Variant("torch", "torch", _matvec_torch),
)
