"""The ``tiled_matmul`` workload: without a GPU its numba kernels are checked under the CUDA
simulator (in a child process started with the simulator on) and say they are not a timing, while
torch's matmul is timed; too big a size for the simulator is one line; on a lent GPU (``gpu``
marked) the tiled kernel beats the naive one at n = 4096 and the GB/s of global traffic agrees with
the count model."""

from __future__ import annotations

import json

import pytest

from explorer.bench.execute import PointSpec, run_point
from explorer.bench.workload import TILED_MATMUL_SIM_MAX
from explorer.bench.workloads import WORKLOADS, get_workload
from explorer.memory.tiling import MatmulShape, naive_counts, tiled_counts

W = WORKLOADS["tiled_matmul"]


def test_the_variants_on_each_device():
    assert [v.key for v in W.variants_on("cuda:0")] == ["naive", "tiled_8", "tiled_16", "tiled_32", "torch"]
    cpu = W.variants_on("cpu")
    assert [v.key for v in cpu] == ["sim_naive", "sim_tiled_8", "sim_tiled_16", "sim_tiled_32", "torch"]
    assert [v.check is not None for v in cpu] == [True, True, True, True, False]
    assert W.cannot_run_here(0) is None  # it runs without a GPU: checked on the simulator
    assert W.flops(64) == 2 * 64**3


def _cpu_point(key: str, size: int):
    variant = W.variant(key).series_name("cpu")
    return run_point(
        PointSpec(0, W.name, "cpu", variant, key, size, repeats=3, budget_s=0.2), get_workload(W.name)
    )


def test_a_size_too_big_for_the_simulator_is_one_line():
    p, fatal = _cpu_point("sim_tiled_16", TILED_MATMUL_SIM_MAX + 1)
    assert not fatal and p.median_s is None
    assert p.error == (
        f"n = {TILED_MATMUL_SIM_MAX + 1}: numba's CUDA simulator (no GPU here) runs one Python thread per "
        f"CUDA thread, so this correctness check runs at most n = {TILED_MATMUL_SIM_MAX}; time the kernels on a GPU"
    )


@pytest.mark.slow
def test_without_a_gpu_the_kernels_are_checked_on_the_simulator_not_timed(capsys):
    """Through the CLI and the worker process, as a student without a GPU runs it: every kernel's
    point is checked in a simulator child and carries no time; torch's is timed and checked."""
    from explorer.cli import main

    code = main(["bench", "tiled_matmul", "--device", "cpu", "--sizes", "13", "--repeats", "3", "--json"])
    out = capsys.readouterr().out
    points = {p["variant"]: p for p in map(json.loads, out.splitlines())}
    assert code == 0, out
    assert set(points) == {
        "cpu numba naive (simulator check)",
        "cpu numba tiled T=8 (simulator check)",
        "cpu numba tiled T=16 (simulator check)",
        "cpu numba tiled T=32 (simulator check)",
        "cpu torch matmul",
    }
    for name, p in points.items():
        assert p["error"] is None, (name, p["error"])
        assert p["extra"]["max_abs_error"] < 1e-4
        if "simulator" in name:
            assert p["median_s"] is None and p["throughput"] is None and p["repeats"] == 0
            assert (
                p["model"].startswith("matches numpy under the CUDA simulator")
                and "not a timing" in p["model"]
            )
            assert "no time is given" in p["model_note"]
            assert ("T does not divide 13" in p["model_note"]) == ("tiled" in name)
            assert p["gflops"] is None  # not placed on the roofline: nothing was measured
        else:
            assert p["median_s"] > 0 and p["throughput"] > 0 and p["repeats"] == 3
    tiled16 = points["cpu numba tiled T=16 (simulator check)"]["extra"]
    assert tiled16["global_loads_model"] == tiled_counts(MatmulShape(13, 13, 13, 16)).global_loads
    assert (tiled16["grid_x"], tiled16["grid_y"]) == (1, 1)


# --- on a lent GPU -------------------------------------------------------------------------------


@pytest.mark.gpu
def test_on_a_gpu_tiled_beats_naive_at_4096(gpu_here):
    from explorer.bench.runner import BenchPlan, BenchRun

    rows = BenchRun(BenchPlan("tiled_matmul", ["cuda:0"], sizes=[4096], time_budget_s=3.0)).run_all()
    assert all(r.error is None for r in rows), [r.error for r in rows]
    by = {r.variant.removeprefix("cuda:0 "): r for r in rows}
    naive = by["numba naive (16x16 blocks)"].median_s
    best = min(by[f"numba tiled T={t}"].median_s for t in (16, 32))
    print({k: (r.median_s, r.throughput) for k, r in by.items()})
    assert best < naive


@pytest.mark.gpu
def test_on_a_gpu_the_global_traffic_agrees_with_the_count_model(gpu_here):
    """Each kernel's GB/s is the count model's global bytes over its measured time (the roofline
    places it there); the tiled kernels' traffic, T times less than the naive one's, stays under
    the GPU's memory roof, as it must if the model does not undercount it."""
    from explorer.bench import peaks
    from explorer.bench.runner import BenchPlan, BenchRun

    n = 4096
    rows = BenchRun(BenchPlan("tiled_matmul", ["cuda:0"], sizes=[n], time_budget_s=3.0)).run_all()
    assert all(r.error is None for r in rows), [r.error for r in rows]
    shape = MatmulShape(n, n, n, 16)
    bandwidth = peaks.memory_bandwidth_gbps("cuda:0")
    for r in rows:
        t = r.extra.get("tile")
        if "torch" in r.variant:
            continue
        counts = tiled_counts(MatmulShape(n, n, n, int(t))) if t else naive_counts(shape)
        assert r.gbps == pytest.approx(counts.global_bytes / r.median_s / 1e9, rel=1e-9)
        assert r.intensity_flop_per_byte == pytest.approx(counts.intensity_flop_per_byte)
        if t and bandwidth:
            assert r.gbps <= bandwidth, (r.variant, r.gbps, bandwidth)
