"""The acceptance's GPU checks run for real where they can without a GPU: through the runner, in
their own processes, with numba's CUDA simulator switched on for them (each benchmark worker
they start inherits it), at the tests' tiny sizes. The figures mean nothing on the simulator;
what is tested is that each check measures through the app's own paths and judges the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.acceptance import checks_bench, checks_launch
from explorer.acceptance.context import CheckContext, Sizes
from explorer.acceptance.registry import CheckSpec
from explorer.acceptance.runner import run_acceptance

pytestmark = pytest.mark.slow  # every test here starts a process

REPO = Path(__file__).resolve().parents[2]
SIMULATOR = {"NUMBA_ENABLE_CUDASIM": "1"}


def test_the_workload_branch_and_real_run_checks_measure_through_the_app_on_the_simulator(tmp_path):
    specs = [
        CheckSpec("workloads", "t", checks_bench.check_workloads, 1, 600, SIMULATOR),
        CheckSpec("branch", "t", checks_bench.check_branch, 1, 600, SIMULATOR),
        CheckSpec("real_run", "t", checks_launch.check_real_run, 1, 600, SIMULATOR),
    ]
    ctx = CheckContext(device="cuda:0", out_dir=tmp_path / "acc", repo=REPO, sizes=Sizes.tiny())
    report = run_acceptance(specs, ctx, budget_s=1200, gpu="numba's CUDA simulator", say=lambda _: None)
    by = {c.name: c for c in report.checks}
    workloads = by["workloads"]
    assert workloads.status == "pass", workloads.summary
    rows = workloads.details["points"]
    assert {r["workload"] for r in rows} == {"branch", "vector_add"}
    assert all(r["error"] is None for r in rows) and len(rows) == 4  # 2 variants each, checked on the host
    branch = by["branch"]
    assert branch.status in ("pass", "miss"), branch.summary  # the simulator's timing is Python's
    assert branch.figures[0].name == "divergent / warp-aligned time" and branch.figures[0].value > 0
    assert branch.figures[0].reference == 2.0  # the divergence model: both paths at half the lanes
    real = by["real_run"]
    assert real.status == "pass", real.summary
    assert "every element written exactly once" in real.summary
    assert real.details["one_d"]["sm_note"] == "the simulator has no SMs"
