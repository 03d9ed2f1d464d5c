"""Series, the GPU's speedup over the CPU, and measurements against an estimated peak."""

from __future__ import annotations

import pytest

from explorer.bench.compare import (
    above_peak_reason,
    build_series,
    peak_captions,
    peak_label,
    peak_note,
    peak_share_cell,
    peak_share_text,
    peak_tooltip,
    speedup_curves,
    tick_label,
)
from explorer.bench.lines import format_point
from explorer.bench.results import BenchPoint, error_point
from explorer.devices.roofs import RoofBook


def pt(variant: str, device: str, size: int, median_s: float, **kw) -> BenchPoint:
    return BenchPoint(
        "matmul",
        variant,
        device,
        size,
        f"n={size}",
        median_s=median_s,
        **{"throughput_unit": "GFLOP/s", **kw},
    )


def test_series_skip_error_rows_and_speedup_is_cpu_time_over_gpu_time():
    points = [
        pt("cpu", "cpu", 64, 2e-5),
        pt("cuda:0", "cuda:0", 64, 4e-5),
        pt("cpu", "cpu", 128, 1e-4),
        pt("cuda:0", "cuda:0", 128, 2.5e-5),
        error_point("matmul", "cuda:0", "cuda:0", 256, "n=256", "out of memory"),
        pt("cpu", "cpu", 256, 8e-4),
    ]
    series = build_series(points)
    assert [(s.variant, s.sizes) for s in series] == [("cpu", [64, 128, 256]), ("cuda:0", [64, 128])]
    [curve] = speedup_curves(series)
    assert curve.variant == "cuda:0" and curve.sizes == [64, 128] and curve.label == "cuda:0 vs cpu"
    assert curve.ratios == pytest.approx([0.5, 4.0])  # the GPU loses at 64, wins at 128


def test_a_remeasured_size_replaces_the_older_point_and_no_cpu_means_no_speedup():
    series = build_series([pt("cuda:0", "cuda:0", 64, 4e-5), pt("cuda:0", "cuda:0", 64, 3e-5)])
    assert series[0].median_s == [3e-5]
    assert speedup_curves(series) == []


def test_tick_labels_are_short():
    assert [tick_label(n, f"n={n}") for n in (64, 9999, 10_000, 30_000_000)] == ["64", "9999", "10k", "30M"]
    assert tick_label(4096, "4 KiB") == "4 KiB"


def _cpu_points(throughputs: list[float]) -> list[BenchPoint]:
    return [
        pt(
            "cpu",
            "cpu",
            64 * (i + 1),
            1e-3,
            throughput=t,
            peak=143.7,
            peak_basis="estimate from advertised clock",
            peak_is_estimate=True,
        )
        for i, t in enumerate(throughputs)
    ]


def test_an_estimated_peak_is_labelled_as_one_and_a_point_above_it_is_explained():
    points = _cpu_points([120.0, 147.0])
    [series] = build_series(points)
    assert peak_label(series) == "CPU peak, estimate from advertised clock: 144 GFLOP/s"
    tip = peak_tooltip(series)
    assert "boosted above its advertised clock" in tip and "1 of 2 points are above it" in tip
    assert peak_share_text(points[1]) == "102.3% of estimated peak 144 GFLOP/s"
    below, above = peak_note(points[0]), peak_note(points[1])
    assert "boosted" not in below and "estimate from advertised clock" in below
    assert "boosted above its advertised clock" in above
    assert "102.3% of estimated peak" in format_point(points[1])


def test_a_reported_peak_is_not_called_an_estimate():
    p = pt(
        "cuda:0",
        "cuda:0",
        1 << 20,
        1e-3,
        throughput=12.0,
        throughput_unit="GB/s",
        peak=15.75,
        peak_basis="PCIe link maximum (generation x lanes)",
    )
    [series] = build_series([p])
    # the plot's label keeps the basis short; the detail in brackets is in the hover text
    assert peak_label(series) == "cuda:0 peak, PCIe link maximum: 15.8 GB/s"
    assert "PCIe link maximum (generation x lanes)" in peak_tooltip(series)
    assert "estimate" not in peak_tooltip(series)
    assert peak_share_text(p) == "76.2% of peak 15.8 GB/s"
    assert peak_share_text(pt("cpu", "cpu", 64, 1e-3, throughput=5.0)) == ""  # no peak known


def test_peak_basis_is_the_device_records_own(monkeypatch, tmp_path):
    """The label comes from the field the device probe set beside the peak, not from its notes."""
    from explorer.bench import peaks
    from explorer.devices.model import CpuDevice, CudaGpu

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))  # nothing measured yet
    monkeypatch.setattr(peaks, "_book", RoofBook())
    cpu = CpuDevice(
        name="CPU",
        key="cpu",
        fp32_peak_gflops=143.7,
        fp32_peak_basis="estimate from advertised clock",
        notes=["a note that says nothing of clocks"],
    )
    gpu = CudaGpu(
        name="GPU",
        key="cuda:0",
        fp32_peak_gflops=19500.0,
        memory_bandwidth_gbps=1555.0,
        memory_bandwidth_basis="theoretical, from memory clock and bus width",
    )
    monkeypatch.setattr(peaks, "device_record", {"cpu": cpu, "cuda:0": gpu}.get)
    assert peaks.compute_peak_basis("cpu") == peaks.PeakBasis(
        "estimate from advertised clock", True, "theoretical"
    )
    dram = peaks.worker_roof("cuda:0").level("DRAM")
    assert dram is not None and (dram.basis, dram.estimate, dram.kind) == (
        "theoretical, from memory clock and bus width",
        True,
        "theoretical",
    )
    assert peaks.compute_peak_basis("cuda:0") == peaks.PeakBasis("", False, "theoretical")  # not an estimate
    assert peaks.PCIE_BASIS.text == "PCIe link maximum (generation x lanes)"
    assert peaks.compute_peak_basis("cuda:1") == peaks.PeakBasis("", False)  # no record at all


def test_a_peak_on_the_measured_clock_is_theoretical_and_said_once_per_device():
    """Every row said "of estimated peak 383 GFLOP/s", though the CPU's peak is built
    on its measured clock. The word comes from the peak's record; the peak is said once."""
    basis = "measured clock 2.78 GHz x 2 cores x 64 FLOP/cycle (AVX-512)"
    cpu = [
        pt(
            "cpu",
            "cpu",
            n,
            1e-3,
            throughput=t,
            peak=355.0,
            peak_basis=basis,
            peak_is_estimate=False,
            peak_kind="theoretical",
        )
        for n, t in ((64, 63.1), (512, 288.7), (1024, 362.0))
    ]
    gpu = pt(
        "cuda:0",
        "cuda:0",
        64,
        1e-5,
        throughput=1000.0,
        peak=8000.0,
        peak_basis="theoretical, from compute-capability tables",
        peak_is_estimate=True,
        peak_kind="theoretical",
    )
    assert [peak_share_cell(p) for p in cpu] == ["17.8%", "81.3%", "102%"]
    assert [above_peak_reason(p) for p in cpu] == ["", "", "cores ran above the measured clock"]
    assert peak_share_text(cpu[1]) == "81.3% of theoretical peak 355 GFLOP/s"
    [series] = build_series(cpu)
    assert (
        peak_label(series)
        == "CPU theoretical peak, measured clock 2.78 GHz x 2 cores x 64 FLOP/cycle: 355 GFLOP/s"
    )
    assert "estimated" not in format_point(cpu[1]) and "81.3% of theoretical peak" in format_point(cpu[1])
    assert "ran faster during it than when the clock was measured" in peak_note(cpu[2])
    assert peak_captions([*cpu, gpu]) == [
        f"CPU theoretical peak 355 GFLOP/s ({basis})",
        "cuda:0 estimated peak 8,000 GFLOP/s (theoretical, from compute-capability tables)",
    ]
    assert peak_share_cell(gpu) == "12.5%"  # not "12%": the launch texts' rule
