"""The memory and divergence kernels compute the right thing, on numba's CUDA simulator (in a fresh
process: the simulator must be on before numba is first imported). Speed needs a real GPU."""

from __future__ import annotations

import textwrap

import pytest

from tests.simulator import run_on_simulator

pytestmark = pytest.mark.slow  # every test here starts a process

SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.numbacuda import cuda
    from explorer.launch.schedule import blocks_for
    from explorer.memory import kernels as K

    out = {}
    rng = np.random.default_rng(3)
    src = rng.standard_normal(70 * 5, dtype=np.float32)
    dst = cuda.device_array(70, dtype=np.float32)
    K.strided_read[blocks_for(70, 32), 32](cuda.to_device(src), dst, 5)
    out["strided"] = bool(np.array_equal(dst.copy_to_host(), src[::5][:70]))
    # the grid-stride loop with four loads in flight: sizes that are no multiple of the unroll, the
    # block or the grid, each over one block, an odd grid and the grid the workload would pick
    from explorer.bench.grid import resident_blocks
    cases = []
    for n in (1, 31, 33, 130, 4097):
        for stride in (1, 3, 32):
            data = rng.standard_normal(n * stride, dtype=np.float32)
            for blocks, threads in ((1, 32), (3, 32), (resident_blocks(n, 32, None), 32), (resident_blocks(n, 64, 2, 128), 64)):
                d = cuda.to_device(np.full(n, np.nan, dtype=np.float32))  # every element must be written
                K.strided_read[blocks, threads](cuda.to_device(data), d, stride)
                cases.append([n, stride, blocks, threads, bool(np.array_equal(d.copy_to_host(), data[::stride][:n]))])
    out["strided_cases"] = cases

    m = rng.standard_normal((40, 70), dtype=np.float32)  # not a multiple of the tile: edges masked
    for padded in (False, True):
        t = cuda.device_array((70, 40), dtype=np.float32)
        K.launch_transpose(cuda.to_device(m), t, padded)
        out["transpose_padded" if padded else "transpose_naive"] = bool(np.array_equal(t.copy_to_host(), m.T))

    vals = rng.standard_normal(96, dtype=np.float32)
    for name, kernel, by_warp in (("lane", K.branch_by_lane, False), ("warp", K.branch_by_warp, True)):
        d = cuda.to_device(vals.copy())
        kernel[3, 32](d, 4)
        out["branch_" + name] = bool(np.allclose(d.copy_to_host(), K.reference_branch(vals, 4, by_warp), rtol=1e-6))

    busy = cuda.device_array(70, dtype=np.int64)  # 3 blocks of one warp, the last one partly idle
    K.busy_warps[3, 32](busy, 25)
    out["busy"] = bool(np.array_equal(busy.copy_to_host(), K.reference_busy(70, 25)))
    x = 5  # the host reference against the plain recurrence, step by step
    for _ in range(25):
        x = (x * 1664525 + 1013904223) % 2**32
    out["busy_reference"] = int(K.reference_busy(6, 25)[5]) == x

    filled = cuda.device_array(100, dtype=np.float32)
    K.fill_index[4, 32](filled)
    out["fill"] = bool(np.array_equal(filled.copy_to_host(), np.arange(100, dtype=np.float32)))
    filled = cuda.device_array(1000, dtype=np.float32)
    K.fill_index[3, 32](filled)  # fewer threads than elements: the grid-stride loop covers the rest
    out["fill_strided"] = bool(np.array_equal(filled.copy_to_host(), np.arange(1000, dtype=np.float32)))
    print("RESULT" + json.dumps(out))
    """
)


def test_memory_kernels_on_the_simulator():
    out = run_on_simulator(SCRIPT)
    assert out["strided"]
    assert len(out["strided_cases"]) == 5 * 3 * 4
    assert [c for c in out["strided_cases"] if not c[4]] == []
    assert {c[2] for c in out["strided_cases"] if c[0] == 4097} >= {1, 3, 4}  # several grids really ran
    assert out["transpose_naive"] and out["transpose_padded"]
    assert out["branch_lane"] and out["branch_warp"]
    assert out["busy"] and out["busy_reference"]
    assert out["fill"] and out["fill_strided"]
