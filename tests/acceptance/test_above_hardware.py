"""The acceptance run judges from above too: a figure above its physical roof (measured DRAM
above an H100's theoretical 3,352 GB/s, sgemm above the FP32 peak at boost) fails the check, in
one line naming the figure and the bound."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from explorer.acceptance import checks_bench
from explorer.acceptance.context import CheckContext
from explorer.acceptance.judge import share_figure, status_of
from explorer.acceptance.records import CheckResult
from explorer.bench.results import BenchPoint
from explorer.roofs.model import ABOVE_HARDWARE, Ceiling

H100_DRAM, H200_DRAM, H100_FP32 = 3352.0, 4800.0, 66_908.0


@pytest.mark.parametrize(("bound", "name"), [(H100_DRAM, "H100"), (H200_DRAM, "H200")])
def test_measured_dram_above_the_theoretical_bandwidth_fails_in_one_line(bound, name):
    f = share_figure(
        "vector add",
        bound * 1.3,
        "GB/s",
        bound,
        "the DRAM roof",
        bound=bound,
        bound_name="the theoretical DRAM",
    )
    assert f.impossible and f.met is False
    assert status_of(True, [f]) == "fail"
    assert "\n" not in f.note
    assert f"{bound * 1.3:,.0f} GB/s" in f.note and f"the theoretical DRAM {bound:,.0f} GB/s" in f.note
    assert "FAILED" in f.line()
    within = share_figure("vector add", bound * 0.9, "GB/s", bound, "the DRAM roof", bound=bound)
    assert not within.impossible and status_of(True, [within]) == "pass"


def test_the_bound_is_the_one_rule_over_random_figures():
    rng = random.Random(3)
    for _ in range(3000):
        bound = rng.uniform(1e-3, 1e6)
        value = rng.uniform(0, 2) * bound
        f = share_figure("x", value, "GB/s", bound * rng.uniform(0.2, 1.0), "r", bound=bound)
        assert f.impossible is (value > ABOVE_HARDWARE * bound)
        assert (status_of(True, [f]) == "fail") is f.impossible


def test_a_report_reads_back_the_verdict_and_an_old_one_without_it():
    f = share_figure("sgemm", 2e5, "GFLOP/s", 6.7e4, "the FP32 peak", bound=6.7e4)
    back = CheckResult.from_dict(CheckResult("sgemm", "fail", "s", [f]).to_dict())
    assert back.figures[0].impossible
    old = CheckResult("sgemm", "pass", "s", [share_figure("sgemm", 5e4, "GFLOP/s", 6.7e4, "p")]).to_dict()
    del old["figures"][0]["impossible"]
    assert not CheckResult.from_dict(old).figures[0].impossible


def _ctx(tmp_path: Path) -> CheckContext:
    return CheckContext(device="cuda:0", out_dir=tmp_path, repo=tmp_path)


def _point(workload: str, key: str, size: int, throughput: float, unit: str, peak: float, **kw) -> BenchPoint:
    return BenchPoint(
        workload,
        key,
        "cuda:0",
        size,
        str(size),
        variant_key=key,
        median_s=1e-3,
        repeats=5,
        throughput=throughput,
        throughput_unit=unit,
        peak=peak,
        **kw,
    )


def test_sgemm_above_the_fp32_peak_at_boost_fails(tmp_path, monkeypatch):
    ctx = _ctx(tmp_path)
    n = ctx.sizes.sgemm_n
    fast = _point("matmul", "torch", n, H100_FP32 * 1.5, "GFLOP/s", 50_000.0)
    fast = BenchPoint(**{**fast.to_dict(), "extra": {"float32_matmul_precision": "highest"}})
    monkeypatch.setattr(checks_bench, "run_points", lambda *a, **k: [fast])
    monkeypatch.setattr(checks_bench, "hardware_bounds", lambda device: (H100_FP32, H100_DRAM))
    result = checks_bench.check_sgemm(ctx)
    assert result.status == "fail"
    assert "FAILED" in result.summary and "the FP32 peak at boost clock 66,908 GFLOP/s" in result.summary


def test_the_memory_check_fails_above_the_theoretical_dram(tmp_path, monkeypatch):
    ctx = _ctx(tmp_path)
    n = ctx.sizes.vector_n

    def run_points(_ctx, workload, sizes, _budget):
        if workload == "vector_add":
            return [_point("vector_add", "numba_kernel", n, 4100.0, "GB/s", 3000.0)]
        return [_point("strided_copy", "numba_kernel", 1, 2900.0, "GB/s", 3000.0)]

    monkeypatch.setattr(checks_bench, "run_points", run_points)
    monkeypatch.setattr(checks_bench, "hardware_bounds", lambda device: (H100_FP32, H100_DRAM))
    result = checks_bench.check_memory_bandwidth(ctx)
    assert result.status == "fail"
    assert "4,100 GB/s is above the theoretical DRAM bandwidth 3,352 GB/s" in result.summary
    assert [f.impossible for f in result.figures] == [True, False]


def test_a_measured_ceiling_above_its_physical_roof_fails_the_roofs_check():
    ceilings = [
        Ceiling("compute", 70_000.0, "measured", "FP32 FMA", "loop"),  # 105% is within the rule
        Ceiling("memory", 9000.0, "measured", "L2", "sweep", level="L2"),  # L2 may beat DRAM
        Ceiling("memory", 3900.0, "measured", "DRAM", "sweep", level="DRAM"),
    ]
    figures = checks_bench.roof_figures(ceilings, {}, H100_FP32, H100_DRAM)
    assert [f.impossible for f in figures] == [False, False, True]
    assert "3,900 GB/s is above the theoretical DRAM bandwidth 3,352 GB/s" in figures[2].note


@pytest.mark.parametrize(("share", "status"), [(0.84, "miss"), (0.86, "pass")])
def test_vector_add_and_copy_must_reach_85_percent_of_the_measured_dram_roof(
    tmp_path, monkeypatch, share, status
):
    ctx = _ctx(tmp_path)
    n = ctx.sizes.vector_n
    roof = 3000.0

    def run_points(_ctx, workload, sizes, _budget):
        if workload == "vector_add":
            return [_point("vector_add", "numba_kernel", n, share * roof, "GB/s", roof)]
        return [_point("strided_copy", "numba_kernel", 1, 0.9 * roof, "GB/s", roof)]

    monkeypatch.setattr(checks_bench, "run_points", run_points)
    monkeypatch.setattr(checks_bench, "hardware_bounds", lambda device: (H100_FP32, H100_DRAM))
    result = checks_bench.check_memory_bandwidth(ctx)
    assert result.status == status
    assert result.figures[0].target == ">= 85% of the DRAM roof" and result.figures[0].met == (share >= 0.85)
