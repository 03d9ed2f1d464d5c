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
    # the grid-stride loop, four elements in flight per thread: sizes that are no multiple of the
    # unroll, the block or the grid, over one block, an odd grid, and the grid the workload picks
    from explorer.bench.grid import resident_blocks
    cases = []
    for m in (1, 31, 33, 1029, 4097):
        x = rng.standard_normal(m, dtype=np.float32)
        y = rng.standard_normal(m, dtype=np.float32)
        for blocks in (1, 3, resident_blocks(m, K.THREADS_PER_BLOCK, None), resident_blocks(m, K.THREADS_PER_BLOCK, 1, 2048)):
            r = cuda.to_device(np.full(m, np.nan, dtype=np.float32))
            K.launch_vector_add(cuda.to_device(x), cuda.to_device(y), r, blocks)
            cases.append([m, blocks, bool(np.array_equal(r.copy_to_host(), x + y))])
    out["add_cases"] = cases
    flushed = cuda.to_device(np.zeros(3000, dtype=np.int32))
    K.fill[2, 256](flushed, 7)  # 512 threads: each writes about six elements
    out["fill"] = bool((flushed.copy_to_host() == 7).all())
    from explorer.bench.wl_numba import GpuShape, L2Flush
    flush = L2Flush(cuda, GpuShape(sms=2, threads_per_sm=256, l2_bytes=3000))  # a known L2: twice it
    flush()
    flush()
    out["flush"] = [flush.nbytes, flush.words, bool((flush._buffer.copy_to_host() == 2).all())]

    m = rng.standard_normal((1100, 100), dtype=np.float32)
    v = rng.standard_normal(100, dtype=np.float32)
    u = cuda.device_array(1100, dtype=np.float32)
    K.launch_matvec(cuda.to_device(m), cuda.to_device(v), u)
    got = u.copy_to_host()
    out["matvec_close"] = bool(np.allclose(got, m @ v, rtol=1e-4, atol=1e-4))
    out["matvec_dtype"] = str(got.dtype)

    points = []
    for wl, key, size, warm in [("vector_add", "numba_kernel", 2000, False), ("vector_add", "numba_kernel", 2000, True),
                                ("vector_add", "numba_with_copies", 2000, False), ("matvec", "numba_row_per_thread", 1100, False)]:
        p, fatal = run_point(PointSpec(0, wl, "cuda:0", "cuda:0 " + key, key, size, repeats=3,
                                       budget_s=0.1, warm_l2=warm), get_workload(wl))
        points.append({"error": p.error, "median_s": p.median_s, "throughput": p.throughput,
                       "max_abs_error": p.extra.get("max_abs_error"), "fatal": fatal, "key": key,
                       "l2": p.extra.get("l2"), "flush_bytes": p.extra.get("l2_flush_bytes"),
                       "method": p.extra.get("timing_method"), "grouped": p.extra.get("steps_per_sample"),
                       "repeats": p.repeats, "bytes": p.gbps and p.gbps * p.median_s * 1e9})
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
    assert len(out["add_cases"]) == 5 * 4 and [c for c in out["add_cases"] if not c[2]] == []
    assert {c[1] for c in out["add_cases"] if c[0] == 4097} == {1, 2, 3}  # 2: one SM holds two blocks
    assert out["fill"]
    assert out["flush"] == [6000, "L2 flushed before each sample (a 5.9 KiB write, twice the L2)", True]
    assert out["matvec_close"] and out["matvec_dtype"] == "float32"
    for p in out["points"]:
        assert p["error"] is None and not p["fatal"]
        assert p["median_s"] > 0 and p["throughput"] > 0
        assert p["max_abs_error"] is not None and p["max_abs_error"] < 1e-3
    cold, warm, copies, matvec = out["points"]
    # cold by default: a flush before each of the 3 samples, one step each, said in the method
    assert cold["l2"] == "cold" and cold["flush_bytes"] == 4096.0 and cold["grouped"] is None
    assert cold["repeats"] == 3 and "'flushed' before each sample" in cold["method"]
    assert warm["l2"] == "warm" and warm["flush_bytes"] is None and "L2 warm" in warm["method"]
    assert copies["l2"] is None and matvec["l2"] is None  # bus-bound, and a workload without the switch
    assert cold["bytes"] == pytest.approx(12 * 2000, rel=1e-6)  # the bytes counted are unchanged
    assert [r[0] for r in out["runner"]] == ["cuda:0 numba kernel", "cuda:0 numba with copies"]
    assert all(r[1] is None and r[2] > 0 for r in out["runner"])
