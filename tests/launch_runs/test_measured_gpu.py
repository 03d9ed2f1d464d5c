"""On a GPU: the measured timeline and bandwidth sweep against the models (skipped without one,
with discovery's reason)."""

from __future__ import annotations

import pytest

from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.schedule import plan_launch


@pytest.fixture
def gpu():
    from explorer.devices.discover import discover

    found = discover(include_catalog=False, quick=True)
    gpus = [d for d in found.devices if d.kind == "cuda" and d.usable]
    if not gpus:
        pytest.skip(f"needs an NVIDIA GPU: {found.why_no_gpu()}")
    return gpus[0]


@pytest.mark.gpu
@pytest.mark.parametrize("waves", [1, 3, 8])
def test_spin_blocks_makespan_is_within_10_percent_of_the_simulation(gpu, waves):
    """Blocks of one fixed length: the measured makespan, in mean blocks, is within 10% of the
    simulated one (the wave count), and no slot stays empty while blocks wait beyond launch jitter."""
    from explorer.launch_runs.measured import measure_dispatch_here

    probe = plan_launch(LaunchConfig(Dim3(1), Dim3(256)), gpu)
    # a partial last wave too: the tail
    config = LaunchConfig(Dim3(probe.concurrent_blocks * waves - probe.sm_count // 2), Dim3(256))
    measured = measure_dispatch_here(plan_launch(config, gpu), gpu)
    assert measured.backend == "gpu"
    simulated = measured.simulated.figures.makespan
    assert abs(measured.makespan_blocks - simulated) <= 0.10 * simulated, measured.summary_lines()
    f = measured.timeline.figures
    assert f.sms_used == measured.plan.sm_count
    assert f.queued_idle_share <= 0.05, measured.summary_lines()


@pytest.mark.gpu
def test_bandwidth_rises_with_warps_and_the_latency_is_a_dram_latency(gpu):
    from explorer.launch_runs.measured import measure_bandwidth_here

    sweep = measure_bandwidth_here(16, gpu)
    assert 100 <= sweep.latency_ns <= 3000, sweep.summary_lines()
    by = {p.warps_per_sm: p for p in sweep.points}
    assert by[1].gbps < by[4].gbps < by[16].gbps, sweep.summary_lines()
    # with few warps the GPU is latency-bound: Little's law with one load per warp in flight is a
    # floor the measurement reaches (the compiler may keep more than one load in flight)
    assert by[1].gbps >= 0.5 * sweep.predicted_gbps(1), sweep.summary_lines()
    assert all(p.most_blocks_on_one_sm == 1 for p in sweep.points if p.warps_per_sm <= 32)
