"""A GPU's L2 and DRAM roofs: the kernels checked on numba's CUDA simulator (no GPU here), and the
real figures on a lent GPU (``gpu``-marked: they skip, saying why, where there is none)."""

from __future__ import annotations

import textwrap

import pytest

from explorer.bench import gpu_sweep
from tests.simulator import run_on_simulator

SCRIPT = textwrap.dedent(
    """
    import json
    from explorer.bench import gpu_sweep
    from explorer.devices.gpu_clock import ClockWatch

    out = {"checks": gpu_sweep.check_kernels(elements=1000, reps=2, blocks=2)}
    watch = ClockWatch(lambda: 1500.0)  # a steady fake SM clock: held first, read after each launch
    result = gpu_sweep.sweep([32 * 1024, 64 * 1024], sm_count=1, samples=1, sample_bytes=64 * 1024, watch=watch)
    out["sizes"] = result.ws_bytes
    out["gbps"] = result.gbps
    out["clock"] = [len(watch.holds), watch.steady_mhz, watch.low_mhz, watch.note()]
    print("RESULT" + json.dumps(out))
    """
)


@pytest.mark.slow
def test_the_l2_and_dram_kernels_compute_what_they_should_on_the_simulator():
    out = run_on_simulator(SCRIPT)
    assert out["checks"] == {"read": True, "copy": True}
    assert out["sizes"] == [32 * 1024, 64 * 1024]
    for name in gpu_sweep.KERNELS:  # timed (meaningless on the simulator) and counted
        assert len(out["gbps"][name]) == 2 and all(g > 0 for g in out["gbps"][name])
    assert out["clock"] == [1, 1500.0, 1500.0, ""]  # held once, before the first timed launch


def test_the_gpu_sweep_spans_well_under_to_well_over_the_l2():
    sizes = gpu_sweep.sizes(50 << 20)  # an H100's 50 MiB
    assert sizes[0] <= (50 << 20) // 16 and sizes[-1] >= 16 * (50 << 20) * 0.99
    assert all(1 < b / a <= gpu_sweep.GROWTH * 1.01 for a, b in zip(sizes, sizes[1:], strict=False))
    small = gpu_sweep.sizes(4 << 20)  # a laptop GPU's 4 MiB: DRAM still reaches 512 MiB
    assert small[-1] >= gpu_sweep.MIN_DRAM_BYTES * 0.99


@pytest.mark.gpu
def test_on_a_gpu_l2_and_dram_are_measured_with_l2_faster_and_its_knee_near_the_l2_size(
    gpu_here, tmp_path, monkeypatch
):
    from explorer.bench import peaks
    from explorer.devices.roofs import record_roof

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    saved = peaks.ensure_measured("cuda:0", force=True)
    assert saved is not None
    rec = peaks.device_record("cuda:0")
    roof = record_roof(rec)
    # the measured DRAM ceiling: roof.level("DRAM") is the theoretical bandwidth when that is higher
    l2 = roof.level("L2")
    dram = next((c for c in roof.ceilings if c.level == "DRAM" and c.kind == "measured"), None)
    assert l2 is not None and dram is not None
    assert l2.kind == "measured" and l2.value > dram.value
    l2_size = rec.limits.l2_cache_bytes
    # the L2 plateau ends near the L2's size: past half of it, before four times it
    assert l2_size / 2 <= l2.ws_hi_bytes <= 4 * l2_size
    assert dram.ws_lo_bytes > l2_size


@pytest.mark.gpu
def test_on_a_gpu_vector_add_points_are_within_110_percent_of_their_level(gpu_here, tmp_path, monkeypatch):
    from explorer.bench.runner import BenchPlan, BenchRun

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    plan = BenchPlan(
        "vector_add",
        ["cuda:0"],
        sizes=[1_000, 100_000, 10_000_000, 100_000_000],
        time_budget_s=0.5,
        measure_roof=True,
    )
    points = [p for p in BenchRun(plan).run_all() if p.variant.endswith("numba kernel")]
    assert points and all(p.error is None for p in points), [p.error for p in points]
    for p in points:
        assert p.roof_level in ("L2", "DRAM", "compute"), p
        if not p.noisy:
            assert p.roof_share <= 1.10, (p.size, p.roof_level, p.roof_share, p.roof_note)
    assert next(p for p in points if p.size == 100_000_000).roof_level == "DRAM"


UNROLLED = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.numbacuda import cuda
    from explorer.bench import gpu_sweep, roof_kernels

    blocks, reps = 2, 3
    stride = blocks * gpu_sweep.THREADS
    out = {}
    # 1 element, fewer than the grid, odd, one short of / at / one past a whole unrolled step, more
    for n in (1, 7, stride - 1, stride, 4 * stride - 1, 4 * stride, 4 * stride + 1, 9 * stride + 13):
        host = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.float64)
        x = cuda.to_device(host)
        y = cuda.to_device(np.full(n, np.nan))
        sums = cuda.to_device(np.full(stride, np.nan))
        roof_kernels.read[blocks, gpu_sweep.THREADS](x, reps, sums)
        roof_kernels.copy[blocks, gpu_sweep.THREADS](x, y, reps)
        # thread t adds x[t], x[t + stride], ...: integers, so every sum is exact
        want = np.array([reps * host[t::stride].sum() for t in range(stride)])
        out[str(n)] = [bool(np.array_equal(sums.copy_to_host(), want)),
                       bool(np.array_equal(y.copy_to_host(), host))]
    print("RESULT" + json.dumps({"unroll": roof_kernels.UNROLL, "sizes": out}))
    """
)


@pytest.mark.slow
def test_the_unrolled_kernels_read_and_copy_every_element_exactly_once_per_pass():
    """Four loads in flight per step, then the tail one at a time: each thread's sum is exactly its
    own elements' and the copy arrives whole, for sizes around every edge of the unrolled walk."""
    out = run_on_simulator(UNROLLED)
    assert out["unroll"] == 4
    assert out["sizes"] and all(ok == [True, True] for ok in out["sizes"].values()), out["sizes"]
