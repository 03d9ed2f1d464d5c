"""Occupancy on worked examples (published or derived by hand in examples.py), for every CC family."""

from __future__ import annotations

import pytest

from explorer.devices.limits import limits_for_cc
from explorer.launch.occupancy import UNLIMITED, occupancy
from explorer.launch.sweep import sweep_block_size, sweep_registers, sweep_shared_memory
from tests.launch.examples import EXAMPLES


@pytest.mark.parametrize(
    "cc,threads,regs,smem,blocks,occ,limiters,source",
    EXAMPLES,
    ids=[f"{e[0][0]}.{e[0][1]}-{e[1]}t-{e[2]}r-{e[3]}B" for e in EXAMPLES],
)
def test_worked_example(cc, threads, regs, smem, blocks, occ, limiters, source):
    result = occupancy(limits_for_cc(cc), threads, regs, smem)
    assert result.active_blocks_per_sm == blocks, source
    assert result.occupancy == pytest.approx(occ), source
    assert result.limiters == limiters, source
    assert result.limiter == "+".join(limiters)
    assert result.active_warps_per_sm == blocks * result.warps_per_block


def test_every_cc_family_has_two_examples():
    families: dict[str, int] = {}
    for cc, *_ in EXAMPLES:
        family = limits_for_cc(cc).arch_name
        families[family] = families.get(family, 0) + 1
    assert set(families) >= {
        "Maxwell",
        "Pascal",
        "Volta",
        "Turing",
        "Ampere",
        "Ada Lovelace",
        "Hopper",
        "Blackwell",
    }
    assert all(n >= 2 for n in families.values()), families


def test_allocation_details_reported():
    occ = occupancy(limits_for_cc((8, 6)), 256, 33, 1000)
    # 33 regs x 32 lanes = 1056 -> 1280 per warp, x 8 warps
    assert occ.regs_per_block_allocated == 1280 * 8
    # 1000 + 1024 reserved = 2024 -> 2048 (unit 128)
    assert occ.smem_per_block_allocated_bytes == 2048
    assert occ.smem_carveout_bytes == 100 * 1024
    assert occ.blocks_limit_smem == 50


def test_no_shared_memory_is_no_limit_before_ampere_only():
    assert occupancy(limits_for_cc((7, 5)), 128).blocks_limit_smem == UNLIMITED
    assert occupancy(limits_for_cc((7, 5)), 128).to_dict()["blocks_limit_smem"] is None
    # from 8.0 the driver's 1 KB reserve is a real per-block cost: 164 KB / 1 KB
    assert occupancy(limits_for_cc((8, 0)), 128).blocks_limit_smem == 164


def test_smaller_carveout_limits_shared_memory_blocks():
    lim = limits_for_cc((8, 6))
    # 10000 + 1024 = 11024 -> 11136 bytes per block
    assert occupancy(lim, 128, 32, 10000).blocks_limit_smem == 102400 // 11136
    # asking for a 32 KB carveout leaves room for 2 blocks
    small = occupancy(lim, 128, 32, 10000, carveout_bytes=32 * 1024)
    assert small.smem_carveout_bytes == 32 * 1024
    assert small.blocks_limit_smem == 2
    # a preference below one block's need is raised to the next size that fits one block
    tiny = occupancy(lim, 128, 32, 10000, carveout_bytes=0)
    assert tiny.smem_carveout_bytes == 16 * 1024
    assert tiny.blocks_limit_smem == 1
    # 20 KB is not a carveout of 8.6: the driver rounds it up to 32 KB
    assert occupancy(lim, 128, 32, 10000, carveout_bytes=20 * 1024).smem_carveout_bytes == 32 * 1024
    # CUDA's percentage form: 50% of 100 KB = 50 KB -> 64 KB
    assert occupancy(lim, 128, 32, 10000, carveout_percent=50).smem_carveout_bytes == 64 * 1024


def test_turing_has_no_zero_carveout():
    lim = limits_for_cc((7, 5))
    assert occupancy(lim, 128, 32, 1000, carveout_bytes=0).smem_carveout_bytes == 32 * 1024


def test_gp100_refuses_what_other_pascal_chips_cannot_run():
    # 448 threads = 14 warps, 136 regs -> 4352 per warp. On GP100's 2 sub-partitions the block
    # needs 4352 x 14 = 60928 registers and would fit; on 4 sub-partitions 4352 x 16 = 69632
    # does not. CUDA keeps Pascal binaries portable, so GP100 reports 0 blocks too.
    assert occupancy(limits_for_cc((6, 0)), 448, 136).active_blocks_per_sm == 0
    assert occupancy(limits_for_cc((6, 0)), 448, 136).blocks_limit_regs == 0


def test_zero_blocks_explained():
    occ = occupancy(limits_for_cc((7, 5)), 1024, 255)
    assert occ.active_blocks_per_sm == 0 and occ.occupancy == 0.0
    assert "cannot run" in occ.explain() and "registers" in occ.explain()


def test_explain_names_the_limit_and_a_remedy():
    text = occupancy(limits_for_cc((8, 6)), 256, 64).explain()
    assert "66.7% theoretical occupancy" in text and "registers" in text.lower() and "fewer registers" in text
    text = occupancy(limits_for_cc((9, 0)), 128, 32, 100000).explain()
    assert "shared memory" in text and "1024 of them reserved" in text
    text = occupancy(limits_for_cc((8, 6)), 64).explain()
    assert "at most 16 blocks" in text
    tie = occupancy(limits_for_cc((7, 5)), 64)
    assert "warp slots and the per-SM block limit" in tie.explain()


def test_sweeps_shape_and_values():
    lim = limits_for_cc((7, 5))
    s = sweep_block_size(lim, 32, 0, 256)
    assert s.xs[0] == 32 and s.xs[-1] == 1024 and len(s.xs) == 32
    assert s.current_x == 256 and s.current_occupancy == 1.0
    assert s.occupancy[s.xs.index(96)] == pytest.approx(30 / 32)  # 96 thr = 3 warps: 10 blocks = 30 warps
    r = sweep_registers(lim, 256, 0, 32)
    assert r.xs == list(range(1, 256))
    assert r.occupancy[r.xs.index(64)] == 1.0  # Turing has only 32 warp slots: 64 regs x 1024 threads fit
    assert r.occupancy[r.xs.index(128)] == pytest.approx(0.5)  # 4096 per warp: 16 warps
    assert r.occupancy[-1] == 0.25  # 255 regs -> 8192 per warp x 8 warps = the whole file: 1 block
    m = sweep_shared_memory(lim, 256, 32, 20000)
    assert m.xs[0] == 0 and m.xs[-1] == 65536 and m.xs[1] - m.xs[0] == 256
    assert m.current_occupancy == pytest.approx(occupancy(lim, 256, 32, 20000).occupancy)
    assert all(a >= b for a, b in zip(m.occupancy, m.occupancy[1:], strict=False))


@pytest.mark.parametrize("cc", [(5, 0), (6, 0), (7, 0), (7, 5), (8, 0), (8, 6), (9, 0), (12, 0)])
def test_fast_sweeps_equal_the_full_calculation_at_every_point(cc):
    lim = limits_for_cc(cc)
    for threads, regs, smem in [(256, 32, 0), (96, 72, 12000), (1024, 64, 40000), (33, 168, 100)]:
        r = sweep_registers(lim, threads, smem, regs)
        assert r.occupancy == [occupancy(lim, threads, x, smem).occupancy for x in r.xs]
        assert r.current_occupancy == occupancy(lim, threads, regs, smem).occupancy
        m = sweep_shared_memory(lim, threads, regs, smem)
        assert m.occupancy == [occupancy(lim, threads, regs, x).occupancy for x in m.xs]
        b = sweep_block_size(lim, regs, smem, threads)
        assert b.occupancy == [occupancy(lim, x, regs, smem).occupancy for x in b.xs]
