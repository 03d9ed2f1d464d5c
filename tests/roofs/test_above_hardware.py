"""A point faster than the hardware can go is invalid: the timing missed work. Never explained
away, never a share of a roof, never a roof itself."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from explorer.bench.judge import judge, judged_roofs
from explorer.bench.results import BenchPoint, points_from_csv, points_to_csv
from explorer.devices.caches import CpuCache
from explorer.devices.model import CpuDevice
from explorer.devices.roofs import within_hardware
from explorer.roofs.model import ABOVE_HARDWARE, INVALID_WORDS, Ceiling, Roof
from explorer.roofs.placement import above_hardware, beyond_hardware

H100_FP32 = 66_908.0  # GFLOP/s at boost, the tables' figure the H100 log was judged against
H100_DRAM = 3_352.0  # GB/s, theoretical
H100_L2 = 50 << 20
GIB = 1 << 30


def h100_roof() -> Roof:
    return Roof(
        "cuda:0",
        "NVIDIA H100 80GB HBM3",
        [
            Ceiling("compute", H100_FP32, "theoretical", "FP32 peak", "boost clock x tables", estimate=True),
            Ceiling("memory", H100_DRAM, "theoretical", "DRAM bandwidth", "memory clock x bus", level="DRAM"),
        ],
        llc_bytes=H100_L2,
    )


def cpu_roof() -> Roof:
    """A CPU measured on a 3.0 GHz all-core clock, whose maximum turbo clock makes 400 GFLOP/s."""
    return Roof(
        "cpu",
        "CPU",
        [
            Ceiling("compute", 300.0, "theoretical", "FP32 peak", "measured clock 3.00 GHz"),
            Ceiling("compute", 280.0, "measured", "FP32 FMA", "FMA loop"),
            Ceiling("memory", 40.0, "measured", "DRAM", "sweep", level="DRAM"),
        ],
        boost_peak_gflops=400.0,
        boost_peak_basis="maximum clock 4000 MHz",
        llc_bytes=32 << 20,
    )


def matmul(
    n: int, share_of_peak: float, peak: float, device: str = "cuda:0", **kw
) -> tuple[BenchPoint, float]:
    """An n x n matmul point timed to reach ``share_of_peak`` of ``peak`` GFLOP/s, and its FLOP."""
    flops = 2.0 * n**3
    seconds = flops / (share_of_peak * peak * 1e9)
    point = BenchPoint(
        "matmul", device, device, n, f"n={n}", median_s=seconds, throughput_unit="GFLOP/s", **kw
    )
    return point, flops


def judged(point: BenchPoint, flops: float, roof: Roof) -> BenchPoint:
    n = point.size
    return judge(point, flops, 3.0 * 4 * n * n, 3.0 * 4 * n * n, roof)


def test_a_gpu_point_at_280_percent_of_peak_is_invalid_with_no_share_and_no_excuse():
    point, flops = matmul(1024, 2.802, H100_FP32, variant_key="naive")
    p = judged(point, flops, h100_roof())
    assert p.invalid
    assert p.invalid_reason.startswith(INVALID_WORDS)
    assert "280%" in p.invalid_reason and "66,908" in p.invalid_reason
    assert p.roof_share is None and p.near_level_share is None
    assert p.roof_note == ""  # no "the cores ran faster"
    assert "faster" not in p.roof_note
    # it makes no roof: the roofs rebuilt from recorded points leave it out, a valid one's stay
    assert p.bandwidth_ceiling_gbps == H100_DRAM
    assert judged_roofs([replace(p, peak=H100_FP32)]) == []
    valid, valid_flops = matmul(1024, 0.5, H100_FP32)
    roofs = judged_roofs([replace(judged(valid, valid_flops, h100_roof()), peak=H100_FP32)])
    assert [c.value for c in roofs[0].ceilings] == [H100_FP32, H100_DRAM]


def test_a_gpu_point_at_104_percent_of_peak_is_valid():
    point, flops = matmul(4096, 1.04, H100_FP32)
    p = judged(point, flops, h100_roof())
    assert not p.invalid and p.invalid_reason == ""
    assert p.roof_share == pytest.approx(1.04, abs=1e-3)


def test_half_precision_and_tf32_points_are_not_held_to_the_fp32_peak():
    for kw in ({"dtype": "float16"}, {"extra": {"float32_matmul_precision": "high"}}):
        point, flops = matmul(4096, 3.0, H100_FP32, **kw)
        assert not judged(point, flops, h100_roof()).invalid


def test_a_cpu_point_is_invalid_above_its_peak_at_turbo_and_explained_below_it():
    roof = cpu_roof()
    over, flops = matmul(512, 1.2, 400.0, device="cpu")  # 480 GFLOP/s: above the turbo peak
    p = judged(over, flops, roof)
    assert p.invalid and p.roof_share is None and p.roof_note == ""
    # 390 GFLOP/s: above the measured FMA roof (280) and the measured-clock peak, below the turbo
    # peak: honest words, a share, valid
    under, flops = matmul(512, 390.0 / 400.0, 400.0, device="cpu")
    q = judged(under, flops, roof)
    assert not q.invalid
    assert q.roof_share == pytest.approx(390.0 / 280.0, abs=1e-3)
    assert "ran faster" in q.roof_note


def test_a_cpu_at_104_percent_of_its_turbo_peak_is_valid():
    point, flops = matmul(512, 1.04, 400.0, device="cpu")
    assert not judged(point, flops, cpu_roof()).invalid


def test_bandwidth_past_the_last_cache_above_the_theoretical_dram_is_invalid_and_inside_it_is_not():
    roof = h100_roof()
    gib_moved = 2.0 * GIB
    for ws, gbps, invalid in [
        (4 * GIB, 3352 * 1.2, True),  # far past the 50 MiB L2: DRAM's theoretical bound holds
        (4 * GIB, 3352 * 1.04, False),
        (8 << 20, 3352 * 1.5, False),  # fits in L2: faster than DRAM is no fault
    ]:
        point = BenchPoint("vector_add", "cuda:0", "cuda:0", 1, "x", median_s=gib_moved / (gbps * 1e9))
        p = judge(point, 0.0, gib_moved, float(ws), roof)
        assert p.invalid is invalid, (ws, gbps)
        if invalid:
            assert "DRAM bandwidth" in p.invalid_reason and "3,352" in p.invalid_reason


def test_the_flag_is_exactly_figure_above_1_05_times_the_peak_over_random_figures():
    rng = random.Random(7)
    roof = h100_roof()
    cases = [(0.0, 1.0), (1.05, 1.0), (1.0500001, 1.0), (1e-9, 1e-9)]
    cases += [(rng.uniform(0, 3) * p, p) for p in (rng.uniform(1e-3, 1e6) for _ in range(3000))]
    for figure, peak in cases:
        assert beyond_hardware(figure, peak) is (figure > ABOVE_HARDWARE * peak)
    for _ in range(2000):
        gflops = rng.uniform(0, 3) * H100_FP32
        assert bool(above_hardware(roof, gflops, None, None)) is (gflops > ABOVE_HARDWARE * H100_FP32)
        gbps = rng.uniform(0, 3) * H100_DRAM
        ws = rng.choice([1 << 20, 200 << 20, 4 * GIB])
        expected = ws > 2 * H100_L2 and gbps > ABOVE_HARDWARE * H100_DRAM
        assert bool(above_hardware(roof, None, gbps, ws)) is expected


def test_the_verdict_survives_csv_and_json():
    point, flops = matmul(1024, 2.8, H100_FP32)
    p = judged(point, flops, h100_roof())
    back = points_from_csv(points_to_csv([p]))[0]
    assert back.invalid and back.invalid_reason == p.invalid_reason
    assert BenchPoint.from_dict(p.to_dict()).invalid


def test_a_roof_round_trips_its_hardware_limits():
    roof = cpu_roof()
    back = Roof.from_dict(roof.to_dict())
    assert (back.boost_peak_gflops, back.boost_peak_basis, back.llc_bytes) == (
        400.0,
        "maximum clock 4000 MHz",
        32 << 20,
    )


def test_a_measured_ceiling_above_the_hardware_is_no_roof():
    roof = h100_roof()
    fast = Ceiling("compute", H100_FP32 * 2, "measured", "sgemm", "torch.mm")
    fine = Ceiling("compute", H100_FP32 * 0.7, "measured", "FP32 FMA", "loop")
    dram = Ceiling("memory", H100_DRAM * 1.3, "measured", "DRAM", "copy", level="DRAM")
    kept, note = within_hardware(roof, [fast, fine, dram])
    assert kept == [fine]
    assert INVALID_WORDS in note and "sgemm" in note and "DRAM" in note


def test_a_cpu_record_gives_its_roof_the_peak_at_its_maximum_clock_only_when_reported(monkeypatch):
    from explorer.devices import roofs as devroofs
    from explorer.devices.cpu import ADVERTISED_CLOCK_NOTE

    monkeypatch.setattr(devroofs, "stored", lambda rec: ("absent", None))
    rec = CpuDevice(key="cpu", name="CPU")
    rec.physical_cores, rec.frequency_max_mhz = 4, 4000.0
    rec.caches = [CpuCache("L2", 1 << 20, 4), CpuCache("L3", 32 << 20, 1)]
    roof = devroofs.record_roof(rec)
    assert roof.boost_peak_gflops and roof.boost_peak_gflops > 0
    assert "4000 MHz" in roof.boost_peak_basis
    assert roof.llc_bytes == 32 << 20
    rec.notes.append(f"{ADVERTISED_CLOCK_NOTE} from cpuinfo; the OS does not report a boost clock.")
    assert devroofs.record_roof(rec).boost_peak_gflops is None  # maybe the base clock: no bound
