"""On the GPU: the latency ladder (the app's one pointer chase) and "L measured on this GPU"."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.gpu
def test_the_ladder_has_ordered_levels_a_real_clock_and_feeds_the_latency_page(gpu: Any) -> None:
    """Every rung's chase ends where the host's walk does (``run_chase`` raises otherwise), the
    levels come out L1 < L2 < DRAM with shared memory below L2, cycles / ns is a real SM clock,
    and the DRAM level becomes the latency page's measured preset."""
    from explorer.bench.chase import measure_ladder
    from explorer.launch.latency import preset_from_ladder
    from explorer.numbacuda import cuda
    from explorer.roofs.latency import ordered

    if gpu.limits is None or not gpu.limits.l2_cache_bytes:
        pytest.skip(f"{gpu.name}: its L2 size is not known here")
    cuda.select_device(gpu.index)
    ladder = measure_ladder(gpu.name, gpu.limits.l2_cache_bytes)
    levels = ladder.levels()
    assert ladder.backend == "gpu" and {"L1", "L2", "DRAM"} <= set(levels), ladder.rungs
    assert ordered(levels), levels
    assert levels["shared"] < levels["L2"]
    assert 300 <= ladder.sm_clock_mhz <= 3500
    preset = preset_from_ladder(ladder)
    assert preset is not None and preset.latency_cycles == max(1, round(levels["DRAM"]))
