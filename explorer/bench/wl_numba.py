"""Vector add and matrix-vector product: numba kernels on the GPU vs numpy (and torch) on the CPU.

Imported only inside the benchmark worker. Each GPU result is checked against numpy after the
timing, so a fast wrong kernel is an error row, not a figure.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

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
from explorer.bench.variants import Variant
from explorer.bench.workload import MATVEC_COLS, Workload
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
    from explorer.bench.kernels import THREADS_PER_BLOCK, launch_vector_add
    from explorer.launch.schedule import blocks_for

    a_dev, b_dev = cuda.to_device(a), cuda.to_device(b)
    out_dev = cuda.device_array_like(a)
    extra: dict[str, float | str] = {
        "blocks": float(blocks_for(n, THREADS_PER_BLOCK)),
        "threads_per_block": float(THREADS_PER_BLOCK),
    }
    if not with_copies:
        timing = time_plain(spec, lambda: launch_vector_add(a_dev, b_dev, out_dev), cuda.synchronize)
    else:

        def copies_and_kernel() -> None:
            a_dev.copy_to_device(a)
            b_dev.copy_to_device(b)
            launch_vector_add(a_dev, b_dev, out_dev)
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
