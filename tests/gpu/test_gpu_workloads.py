"""Every workload's GPU variants on the GPU at small sizes, each checked against the host by the
workload itself (a wrong result is an error row), and the lessons each one teaches, as
inequalities a GPU must show (not performance targets: those are the acceptance script's)."""

from __future__ import annotations

import pytest

from tests.gpu.helpers import point

pytestmark = pytest.mark.gpu

GPU_VARIANTS = [
    ("matmul", "plain", 1024),
    ("vector_add", "numba_kernel", 1_000_000),
    ("vector_add", "numba_with_copies", 1_000_000),
    ("matvec", "numba_row_per_thread", 100_000),
    ("matvec", "torch", 100_000),
    ("copies", "h2d_pageable", 1 << 20),
    ("copies", "h2d_pinned", 1 << 20),
    ("copies", "d2h_pageable", 1 << 20),
    ("copies", "d2h_pinned", 1 << 20),
    ("small_vs_big", "item_each_step", 100),
    ("small_vs_big", "copy_at_end", 100),
    ("cnn_step", "plain", 32),
    ("timing_lesson", "naive", 1024),
    ("timing_lesson", "synchronized", 1024),
    ("strided_copy", "numba_kernel", 4),
    ("shared_transpose", "naive", 1024),
    ("shared_transpose", "padded", 1024),
    ("branch", "divergent", 1 << 20),
    ("branch", "warp_aligned", 1 << 20),
]


@pytest.mark.parametrize(("workload", "key", "size"), GPU_VARIANTS)
def test_each_gpu_variant_measures_a_right_result(gpu, workload, key, size):
    p = point(workload, key, size, gpu.key)
    assert p.error is None, p.error
    assert p.median_s and p.median_s > 0 and p.throughput and p.throughput > 0
    assert p.extra.get("device_name") == gpu.name


def test_two_gpus_says_what_it_needs_on_one_gpu_and_runs_on_two(gpu):
    import torch

    p = point("two_gpus", "at_once", 1024, gpu.key)
    if torch.cuda.device_count() < 2:
        assert p.error == "needs two GPUs; 1 found"
    else:
        assert p.error is None, p.error


def test_sgemm_is_true_fp32_and_far_above_a_cpu(gpu):
    p = point("matmul", "plain", 4096, gpu.key, budget_s=1.0)
    assert p.error is None and p.extra["float32_matmul_precision"] == "highest"
    assert p.throughput > 1000  # GFLOP/s: any CUDA GPU of this decade
    assert p.peak and p.throughput < 1.05 * p.peak  # TF32 would beat the FP32 peak


def test_the_naive_timing_measures_launches_not_work(gpu):
    naive = point("timing_lesson", "naive", 4096, gpu.key)
    synced = point("timing_lesson", "synchronized", 4096, gpu.key)
    assert naive.median_s < synced.median_s / 2


def test_pinned_host_memory_copies_faster_than_pageable(gpu):
    pinned = point("copies", "h2d_pinned", 64 << 20, gpu.key)
    pageable = point("copies", "h2d_pageable", 64 << 20, gpu.key)
    assert pinned.throughput > pageable.throughput
    assert pinned.peak is None or pinned.throughput < pinned.peak  # under the PCIe link's peak


def test_padding_the_tile_removes_the_bank_conflict_cost(gpu):
    naive = point("shared_transpose", "naive", 4096, gpu.key)
    padded = point("shared_transpose", "padded", 4096, gpu.key)
    assert padded.median_s < naive.median_s


def test_a_divergent_branch_costs_more_than_a_warp_aligned_one(gpu):
    lane = point("branch", "divergent", 1 << 22, gpu.key)
    warp = point("branch", "warp_aligned", 1 << 22, gpu.key)
    assert lane.median_s > 1.2 * warp.median_s, (lane.median_s, warp.median_s)


def test_the_strided_copy_falls_with_the_stride(gpu):
    one = point("strided_copy", "numba_kernel", 1, gpu.key)
    wide = point("strided_copy", "numba_kernel", 32, gpu.key)
    assert one.throughput > 2 * wide.throughput
    assert one.model_estimate and one.model_estimate > wide.model_estimate


def test_the_utilization_trap_reads_full_with_one_warp(gpu):
    p = point("utilization_trap", "busy_warps", 1, gpu.key)
    assert p.error is None, p.error
    assert p.extra["nvml_gpu_utilization_pct"] >= 80, p.extra
    if gpu.compute_capability >= (9, 0):  # GPM: what the 100% hides
        assert p.extra["gpm_sm_activity_pct"] < 10, p.extra
        assert "SM activity" in p.model


def test_the_measured_roof_has_an_sgemm_and_a_memory_ceiling(gpu):
    from explorer.bench import peaks
    from explorer.devices.roofs import record_roof

    assert peaks.ensure_measured(gpu.key, force=True) is not None
    measured = [c for c in record_roof(gpu).ceilings if c.kind == "measured"]
    compute = max((c.value for c in measured if c.quantity == "compute"), default=0.0)
    memory = max((c.value for c in measured if c.quantity == "memory"), default=0.0)
    assert compute > 1000 and memory > 100, measured
    assert compute < 1.05 * gpu.fp32_peak_gflops
