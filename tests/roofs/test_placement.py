"""Every point judged against the roof of its level: the level a working set lives in (per-core
caches shrink with fewer threads), the roof at its intensity, its share, and why where it is over."""

from __future__ import annotations

import pytest

from explorer.bench.roofline import bandwidth_range, bandwidth_steps, plot_range, segments
from explorer.roofs.model import Ceiling, Roof
from explorer.roofs.placement import above_roof_reason, home_level, level_text, place

KIB, MIB = 1 << 10, 1 << 20


def level(name, gbps, lo, hi, cache=None, instances=None, **kw):
    return Ceiling(
        "memory",
        gbps,
        "measured",
        name,
        f"{name} sweep",
        1000.0,
        level=name,
        ws_lo_bytes=lo,
        ws_hi_bytes=hi,
        cache_bytes=cache,
        instances=instances,
        **kw,
    )


def cpu_roof(**kw) -> Roof:
    return Roof(
        "cpu",
        "CPU",
        [
            Ceiling("compute", 236.0, "theoretical", "FP32 peak", "measured clock"),
            Ceiling("compute", 200.0, "measured", "sgemm", "torch"),
            level("L1", 450.0, 4 * KIB, 60 * KIB, 64 * KIB, 2, **kw),
            level("L2", 225.0, 88 * KIB, 1300 * KIB, 2 * MIB, 2, **kw),
            level("L3", 184.0, 2300 * KIB, 17 * MIB, 32 * MIB, 1, **kw),
            level("DRAM", 40.0, 127 * MIB, 220 * MIB, **kw),
        ],
    )


@pytest.mark.parametrize(
    ("working_set", "threads", "expected"),
    [
        (12_000, 1, "L1"),  # vector_add N=1e3 on one core: 12 kB in its 32 KiB L1
        (50 * KIB, 2, "L1"),  # two cores: 64 KiB of L1 between them
        (50 * KIB, 1, "L2"),  # one core has one 32 KiB L1
        (120_000, 1, "L2"),  # N=1e4
        (1_200_000, 1, "L3"),  # N=1e5: more than one core's 1 MiB L2
        (1_200_000, 2, "L2"),  # two cores' L2s hold it
        (12_000_000, 1, "L3"),  # N=1e6
        (33 * MIB, 2, "L3"),  # AMD's L3 holds what L2 evicts: 32 MiB + 2 MiB
        (120_000_000, 1, "DRAM"),  # N=1e7, far past the 32 MiB L3
        (1_200_000_000, 1, "DRAM"),  # N=1e8
    ],
)
def test_the_level_a_working_set_lives_in(working_set, threads, expected):
    assert home_level(cpu_roof(), working_set, threads).level == expected


def test_a_memory_bound_point_is_judged_against_its_level_in_gb_per_s():
    roof = cpu_roof()
    # vector_add N=1e4 on one core: 1 FLOP per 12 bytes, 120 kB in 1.5 us = 80 GB/s
    p = place(1e4, 120_000, 1.5e-6, roof, 120_000, 1)
    assert (p.memory_level, p.roof_level, p.bound) == ("L2", "L2", "memory")
    assert p.gbps == pytest.approx(80.0) and p.roof_share == pytest.approx(80.0 / 225.0)
    assert p.ridge_flop_per_byte == pytest.approx(236.0 / 225.0)
    assert level_text(p.memory_level, p.roof_level) == "fits in L2"


def test_where_compute_binds_the_point_is_judged_against_the_compute_roof():
    # a matmul of n=64 in L1: 2*64^3 FLOP over 3*64*64*4 bytes = 10.7 FLOP/B; 450 GB/s x 10.7 > 236
    n = 64
    flops, moved = 2.0 * n**3, 3.0 * 4 * n * n
    p = place(flops, moved, flops / 118e9, cpu_roof(), moved, 2)
    assert (p.memory_level, p.roof_level, p.bound) == ("L1", "compute", "compute")
    assert p.roof_share == pytest.approx(0.5)
    assert level_text(p.memory_level, p.roof_level) == "fits in L1, compute-bound"
    # 1 FLOP per byte: in L1 the compute roof binds (450 GB/s x 1 > 236), from DRAM the slant does
    in_l1 = place(1e6, 1e6, 1e6 / 118e9, cpu_roof(), 40 * KIB, 2)
    assert (in_l1.roof_level, in_l1.roof_share) == ("compute", pytest.approx(0.5))
    big = place(1e6, 1e6, 1e6 / 20e9, cpu_roof(), 500 * MIB, 2)
    assert (big.roof_level, big.roof_share) == ("DRAM", pytest.approx(0.5))


def test_a_zero_flop_copy_is_judged_in_gb_per_s():
    p = place(0.0, 64 * MIB, 64 * MIB / 30e9, cpu_roof(), 128 * MIB, 1)
    assert p.intensity_flop_per_byte == 0 and p.gflops is None
    assert (p.roof_level, p.roof_share) == ("DRAM", pytest.approx(30e9 / 40e9 / 1.0, rel=1e-3))


def test_over_110_percent_says_why():
    roof = cpu_roof()
    quiet = place(0.0, 1e9, 1e9 / 50e9, roof, 40 * MIB, 2)  # 50 GB/s just past L3's edge
    assert quiet.roof_share == pytest.approx(1.25)
    why = above_roof_reason(quiet, roof, 40 * MIB, 2)
    assert "just past the edge of L3" in why and "184 GB/s" in why
    far = place(0.0, 1e9, 1e9 / 50e9, roof, 800 * MIB, 2)
    assert "faster than the DRAM roof measured here" in above_roof_reason(far, roof, 800 * MIB, 2)
    busy = cpu_roof(disturbed=True)
    on_busy = place(0.0, 1e9, 1e9 / 50e9, busy, 800 * MIB, 2)
    assert "measured while other programs used the CPU" in above_roof_reason(on_busy, busy, 800 * MIB, 2)
    under = place(0.0, 1e9, 1e9 / 41e9, roof, 800 * MIB, 2)  # 102.5%: within a measurement's noise
    assert above_roof_reason(under, roof, 800 * MIB, 2) == ""


def test_a_roof_without_levels_judges_against_its_one_memory_figure():
    roof = Roof(
        "catalog:x", "X", [Ceiling("memory", 3350.0, "spec sheet", "DRAM bandwidth", "sheet", level="DRAM")]
    )
    p = place(0.0, 1e9, 1e9 / 1675e9, roof, 10 * KIB, None)
    assert (p.roof_level, p.roof_share) == ("DRAM", pytest.approx(0.5))
    assert place(1.0, 1.0, 1.0, Roof("cpu", "CPU"), 1.0).roof_share is None


def test_the_levels_draw_as_lines_and_steps():
    roof = cpu_roof()
    lo, hi = plot_range([roof], [1 / 12])
    segs = {s.ceiling.name: s for s in segments(roof, lo, hi)}
    assert set(segs) == {"FP32 peak", "sgemm", "L1", "L2", "L3", "DRAM"}
    for name in ("L1", "L2", "L3", "DRAM"):  # each slant ends on the compute roof
        assert segs[name].y1 == pytest.approx(236.0) or segs[name].x1 == hi
    x_lo, x_hi = bandwidth_range([roof], [12_000, 1.2e9])
    steps = bandwidth_steps(roof, x_lo, x_hi, threads=1)
    assert [s.ceiling.level for s in steps] == ["L1", "L2", "L3", "DRAM"]
    assert steps[0].x1 == pytest.approx(32 * KIB)  # one core's L1
    assert all(a.x1 == b.x0 for a, b in zip(steps, steps[1:], strict=False))
    assert steps[-1].x1 == x_hi and x_lo <= 12_000 / 2


def test_a_roof_travels_as_json_and_bad_ceilings_from_elsewhere_are_left_out():
    sent = cpu_roof().to_dict()
    assert [c["level"] for c in sent["ceilings"]][2:] == ["L1", "L2", "L3", "DRAM"]
    assert sent["ceilings"][2]["quiet"] is True and sent["ceilings"][2]["ws_lo_bytes"] == 4 * KIB
    back = Roof.from_dict(sent, host="gpu-lab")
    assert back.ceilings == cpu_roof().ceilings and back.host == "gpu-lab"
    sent["ceilings"] += [
        {**sent["ceilings"][2], "value": -1},
        {**sent["ceilings"][2], "value": 1e300},  # no device moves an exabyte per second
        {**sent["ceilings"][2], "value": 10**400},
        {**sent["ceilings"][2], "level": "L9"},
        {**sent["ceilings"][2], "ws_lo_bytes": -5},
        {**sent["ceilings"][2], "measured_at": 1e300},
        "rm -rf /",
    ]
    assert Roof.from_dict(sent).ceilings == cpu_roof().ceilings
    for bad in (None, [], {"device": "", "name": "x"}, {"device": "cpu"}):
        with pytest.raises(ValueError):
            Roof.from_dict(bad)
