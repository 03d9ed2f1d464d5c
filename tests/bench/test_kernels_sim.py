"""The numba kernels and GPU variants, run on numba's CUDA simulator in a fresh process (the
simulator must be switched on before numba is first imported)."""

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
    from explorer.bench import kernels as K
    from explorer.launch.schedule import blocks_for
    from explorer.bench.execute import PointSpec, run_point
    from explorer.bench.workloads import get_workload

    out = {}
    n = 2 * K.THREADS_PER_BLOCK + 5  # three blocks, the last one mostly idle threads
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    res = cuda.to_device(np.full(n, 99.0, dtype=np.float32))  # garbage in the output must be overwritten
    K.launch_vector_add(cuda.to_device(a), cuda.to_device(b), res)
    cuda.synchronize()
    out["blocks"] = blocks_for(n, K.THREADS_PER_BLOCK)
    out["add_exact"] = bool(np.array_equal(res.copy_to_host(), a + b))

    m = rng.standard_normal((1100, 100), dtype=np.float32)
    v = rng.standard_normal(100, dtype=np.float32)
    u = cuda.device_array(1100, dtype=np.float32)
    K.launch_matvec(cuda.to_device(m), cuda.to_device(v), u)
    got = u.copy_to_host()
    out["matvec_close"] = bool(np.allclose(got, m @ v, rtol=1e-4, atol=1e-4))
    out["matvec_dtype"] = str(got.dtype)

    points = []
    for wl, key, size in [("vector_add", "numba_kernel", 2000), ("vector_add", "numba_with_copies", 2000),
                          ("matvec", "numba_row_per_thread", 1100)]:
        p, fatal = run_point(PointSpec(0, wl, "cuda:0", "cuda:0 " + key, key, size, repeats=2,
                                       budget_s=0.1), get_workload(wl))
        points.append({"error": p.error, "median_s": p.median_s, "throughput": p.throughput,
                       "max_abs_error": p.extra.get("max_abs_error"), "fatal": fatal})
    out["points"] = points

    # The same GPU variants end to end: plan -> worker process (inherits the simulator) -> rows.
    from explorer.bench.runner import BenchPlan, BenchRun

    rows = BenchRun(BenchPlan("vector_add", ["cuda:0"], sizes=[1500], repeats=2, time_budget_s=0.1)).run_all()
    out["runner"] = [(r.variant, r.error, r.median_s) for r in rows]
    print("RESULT" + json.dumps(out))
    """
)


def test_kernels_and_gpu_variants_on_the_simulator():
    out = run_on_simulator(SCRIPT)
    assert out["blocks"] == 3
    assert out["add_exact"]
    assert out["matvec_close"] and out["matvec_dtype"] == "float32"
    for p in out["points"]:
        assert p["error"] is None and not p["fatal"]
        assert p["median_s"] > 0 and p["throughput"] > 0
        assert p["max_abs_error"] is not None and p["max_abs_error"] < 1e-3
    assert [r[0] for r in out["runner"]] == ["cuda:0 numba kernel", "cuda:0 numba with copies"]
    assert all(r[1] is None and r[2] > 0 for r in out["runner"])
