"""The tiled matrix multiply measured: the naive numba kernel, the tiled one at T = 8, 16 and 32
(``explorer.memory.tiling_kernels``) and torch's matmul for reference, each checked against numpy.

On a GPU every variant is timed as the other GPU workloads are (warm-up, synchronize, repeats,
median), and each point carries the count model's global traffic (``explorer.memory.tiling``) as its
bytes, so its GB/s is that traffic over the measured time and the roofline places it at the model's
intensity. Without a GPU the numba kernels run under numba's CUDA simulator at small sizes, in a
child process started with the simulator on (numba reads the switch once, at import): a check that
the kernels compute C = A B, never a timing, since the simulator runs every CUDA thread as a Python
thread. torch's matmul on the CPU is timed as usual.

Imported only inside the benchmark worker; numba and torch are imported inside the run functions.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import lru_cache, partial
from typing import Any

from explorer.bench import peaks
from explorer.bench.execute import (
    Checked,
    Outcome,
    PointError,
    PointSpec,
    time_plain,
    time_torch,
    torch_device,
)
from explorer.bench.variants import Variant
from explorer.bench.wl_numba import check_against_numpy, numba_device
from explorer.bench.workload import TILED_MATMUL_SIM_MAX, Workload
from explorer.memory.tiling import (
    BENCH_TILES,
    NAIVE_BLOCK,
    KernelCounts,
    MatmulShape,
    naive_counts,
    tiled_counts,
)

#: the seconds a simulator child may take for one kernel at the largest size it accepts
SIM_CHILD_TIMEOUT_S = 300.0
SIM_ENV = "NUMBA_ENABLE_CUDASIM"


@lru_cache(maxsize=1)
def operands(n: int) -> tuple[Any, Any, Any]:
    """A, B (standard normal float32, seeded by n) and numpy's A @ B in float64: the reference
    every variant of a size is checked against (computed once per size)."""
    import numpy as np

    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def _tolerance(n: int) -> dict[str, float]:
    """float32 sums of n products of N(0, 1) numbers drift by about sqrt(n) x 1e-7 x their size."""
    return {"rtol": 1e-4, "atol": 1e-5 * n}


def _model_words(n: int, tile: int | None) -> tuple[KernelCounts, str, str, dict[str, float | str]]:
    """The count model's cell, sentence and figures for one kernel at n x n x n."""
    shape = MatmulShape(n, n, n, tile or NAIVE_BLOCK)
    counts = tiled_counts(shape) if tile else naive_counts(shape)
    naive = naive_counts(shape)
    extra: dict[str, float | str] = {
        "global_loads_model": float(counts.global_loads),
        "global_stores_model": float(counts.global_stores),
        "shared_loads_model": float(counts.shared_loads),
        "barriers_per_block_model": float(counts.barriers_per_block),
        "intensity_model": counts.intensity_flop_per_byte,
        "blocks": float(counts.blocks),
        "threads_per_block": float(counts.threads_per_block),
    }
    if tile:
        extra["tile"] = float(tile)
        cell = f"{naive.global_loads / counts.global_loads:.3g}x fewer global loads"
        sentence = (
            f"count model, not a measurement: the T = {tile} tiled kernel asks global memory for "
            f"{counts.global_loads:,} loads and {counts.global_stores:,} stores ({counts.global_bytes:,} bytes), "
            f"{naive.global_loads / counts.global_loads:.3g}x fewer loads than the naive kernel, with "
            f"{counts.barriers_per_block} barriers per block and {shape.shared_bytes_per_block:,} bytes of shared "
            f"memory per block; {counts.intensity_flop_per_byte:.3g} FLOP per byte. The GB/s is those bytes over "
            "the measured time"
        )
    else:
        cell = "every operand from global memory"
        sentence = (
            f"count model, not a measurement: the naive kernel asks global memory for {counts.global_loads:,} "
            f"loads (2 n^3) and {counts.global_stores:,} stores ({counts.global_bytes:,} bytes), "
            f"{counts.intensity_flop_per_byte:.3g} FLOP per byte. The GB/s is those bytes over the measured time; "
            "the L1 and L2 caches serve many of the repeated loads, so it can exceed the memory's bandwidth"
        )
    return counts, cell, sentence, extra


# --- on a GPU ---------------------------------------------------------------------------------


def _numba_kernel(w: Workload, spec: PointSpec, *, tile: int | None) -> Outcome:
    import numpy as np

    n = spec.size
    a, b, expected = operands(n)
    cuda = numba_device(spec)
    from explorer.memory.tiling_kernels import launch_naive, launch_tiled

    a_dev, b_dev = cuda.to_device(a), cuda.to_device(b)
    c_dev = cuda.device_array((n, n), dtype=np.float32)

    def step() -> None:
        if tile is None:
            launch_naive(a_dev, b_dev, c_dev)
        else:
            launch_tiled(a_dev, b_dev, c_dev, tile)

    timing = time_plain(spec, step, cuda.synchronize)
    what = "the naive kernel" if tile is None else f"the T = {tile} tiled kernel"
    err = check_against_numpy(c_dev.copy_to_host(), expected, what, **_tolerance(n))
    counts, cell, sentence, extra = _model_words(n, tile)
    extra["max_abs_error"] = err
    return Outcome(
        timing,
        bytes=float(counts.global_bytes),
        peak=peaks.fp32_peak_gflops(spec.device),
        extra=extra,
        model=cell,
        model_note=sentence,
    )


def _torch_matmul(w: Workload, spec: PointSpec) -> Outcome:
    import torch

    n = spec.size
    a, b, expected = operands(n)
    dev = torch_device(spec)
    at, bt = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
    ct = torch.empty(n, n, device=dev)
    timing = time_torch(spec, lambda: torch.mm(at, bt, out=ct), dev)
    err = check_against_numpy(ct.cpu().numpy(), expected, "torch.mm", **_tolerance(n))
    threads = torch.get_num_threads() if dev.type == "cpu" else None
    return Outcome(
        timing,
        peak=peaks.fp32_peak_gflops(spec.device),
        threads=threads,
        extra={
            "max_abs_error": err,
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "library": "torch (cuBLAS on a GPU, its CPU BLAS on the CPU)",
        },
    )


# --- without a GPU: the kernels under numba's CUDA simulator, checked, not timed ----------------


def _not_timed(w: Workload, spec: PointSpec) -> Outcome:
    raise PointError(f"{spec.variant} checks the kernel under the simulator; it times nothing")


def simulator_check(w: Workload, spec: PointSpec, *, tile: int | None) -> Checked:
    """Run the kernel under numba's CUDA simulator and compare it with numpy. In a process started
    with the simulator on this runs here; elsewhere it asks a child agent started with it on to
    measure this same point (``bench.point``), and returns what the child found."""
    n = spec.size
    if n > TILED_MATMUL_SIM_MAX:
        raise PointError(
            f"n = {n}: numba's CUDA simulator (no GPU here) runs one Python thread per CUDA thread, so "
            f"this correctness check runs at most n = {TILED_MATMUL_SIM_MAX}; time the kernels on a GPU"
        )
    if os.environ.get(SIM_ENV) == "1":
        return _check_here(n, tile)
    return _check_in_child(spec)


def _check_here(n: int, tile: int | None) -> Checked:
    import numpy as np

    from explorer.memory.tiling_kernels import launch_naive, launch_tiled
    from explorer.numbacuda import cuda

    a, b, expected = operands(n)
    c = cuda.device_array((n, n), dtype=np.float32)
    if tile is None:
        grid = launch_naive(cuda.to_device(a), cuda.to_device(b), c)
    else:
        grid = launch_tiled(cuda.to_device(a), cuda.to_device(b), c, tile)
    what = "the naive kernel" if tile is None else f"the T = {tile} tiled kernel"
    err = check_against_numpy(c.copy_to_host(), expected, f"{what} under the CUDA simulator", **_tolerance(n))
    *_, extra = _model_words(n, tile)
    extra.update({"max_abs_error": err, "grid_x": float(grid[0]), "grid_y": float(grid[1])})
    ragged = (
        "" if n % (tile or 1) == 0 else f" (T does not divide {n}: the edge tiles were padded with zeros)"
    )
    return Checked(
        model=f"matches numpy under the CUDA simulator (largest difference {err:.2g}); not a timing",
        note=(
            f"numba's CUDA simulator ran {what} on {n} x {n} matrices, every CUDA thread as a Python thread "
            f"on the CPU (no GPU here){ragged}: its C matches numpy's A @ B (largest difference {err:.2g}). "
            "The simulator's seconds say nothing about a GPU, so no time is given"
        ),
        extra=extra,
    )


def _check_in_child(spec: PointSpec) -> Checked:
    from explorer.agent.child import local_agent
    from explorer.agent.protocol import AgentError

    agent = local_agent(env_overrides={SIM_ENV: "1"}, label="the CUDA simulator child")
    try:
        agent.start()
        answer = agent.request(
            "bench.point",
            replace(spec, measure_roof=False, remeasure_roof=False).to_dict(),
            timeout_s=SIM_CHILD_TIMEOUT_S,
        )
    except AgentError as exc:
        raise PointError(f"the CUDA simulator child failed: {exc}") from None
    finally:
        agent.close()
    point = answer.get("point") or {}
    if point.get("error"):
        raise PointError(str(point["error"]))
    extra = {k: v for k, v in (point.get("extra") or {}).items() if isinstance(v, (float, str))}
    return Checked(model=str(point.get("model", "")), note=str(point.get("model_note", "")), extra=extra)


# --- the variants, as the registry lists them (order = the order points run and legends list) -----


def _kernels() -> tuple[Variant, ...]:
    naive = f"numba naive ({NAIVE_BLOCK}x{NAIVE_BLOCK} blocks)"
    gpu = [Variant("naive", naive, partial(_numba_kernel, tile=None), "gpu")]
    gpu += [
        Variant(f"tiled_{t}", f"numba tiled T={t}", partial(_numba_kernel, tile=t), "gpu")
        for t in BENCH_TILES
    ]
    sim = [
        Variant(
            "sim_naive",
            "numba naive (simulator check)",
            _not_timed,
            "cpu",
            partial(simulator_check, tile=None),
        )
    ]
    sim += [
        Variant(
            f"sim_tiled_{t}",
            f"numba tiled T={t} (simulator check)",
            _not_timed,
            "cpu",
            partial(simulator_check, tile=t),
        )
        for t in BENCH_TILES
    ]
    return (*gpu, *sim, Variant("torch", "torch matmul", _torch_matmul))


TILED_MATMUL = _kernels()
