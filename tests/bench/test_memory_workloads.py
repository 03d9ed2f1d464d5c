"""The memory and divergence workloads: their model beside each point, the CPU strided copy measured
here, and the machine without a GPU saying up front which workloads cannot run and why."""

from __future__ import annotations

import json
import random

import pytest

from explorer.bench import results as R
from explorer.bench.execute import PointSpec, run_point
from explorer.bench.lines import format_point
from explorer.bench.workload import STRIDED_COPY_ELEMENTS_CPU
from explorer.bench.workloads import WORKLOADS, get_workload
from explorer.cli import main
from explorer.memory.coalescing import (
    CPU_LINE_BYTES,
    SECTOR_BYTES,
    granule_efficiency,
    strided_copy_model,
)

NO_DRIVER = (
    "No NVIDIA GPU was found on this machine. NVML library not found: no NVIDIA driver is installed. "
    "Not asked: NVML sees no GPU."
)


def _brute_efficiency(elem: int, stride: int, granule: int, elements: int) -> float:
    """Bytes used over bytes moved, walking every byte of ``elements`` strided elements."""
    touched = {(i * stride * elem + b) // granule for i in range(elements) for b in range(elem)}
    return elements * elem / (len(touched) * granule)


def test_the_granule_model_matches_a_walk_over_every_byte():
    rng = random.Random(16)
    for _ in range(300):
        elem, granule = rng.choice((1, 2, 4, 8, 16)), rng.choice((32, 64, 128))
        stride = rng.randint(1, 70)
        period = granule // __import__("math").gcd(stride * elem, granule)
        assert granule_efficiency(elem, stride, granule) == pytest.approx(
            _brute_efficiency(elem, stride, granule, period * 7)
        ), (elem, stride, granule)


def test_the_copy_model_is_the_warp_model_for_4_byte_elements():
    for stride in range(1, 65):
        gpu = strided_copy_model(stride)
        # a warp of 4-byte elements spans 128 * stride bytes, sector-aligned: per warp = long run
        assert gpu.read_efficiency == pytest.approx(granule_efficiency(4, stride, SECTOR_BYTES))
        assert gpu.write_efficiency == 1.0
        # requested 2 x, moved x / read + x / write
        assert gpu.efficiency == pytest.approx(2 / (1 / gpu.read_efficiency + 1))
        cpu = strided_copy_model(stride, granule_bytes=CPU_LINE_BYTES)
        assert cpu.read_efficiency == pytest.approx(_brute_efficiency(4, stride, 64, 64 * 5))
    assert strided_copy_model(1).efficiency == 1.0
    assert strided_copy_model(32).read_efficiency == 4 / 32  # one sector per lane


def test_gpu_only_workloads_and_their_refusal_in_one_line():
    for name in ("shared_transpose", "branch", "utilization_trap"):
        w = WORKLOADS[name]
        assert w.needs_gpu_count == 1 and not w.variants_on("cpu") and w.variants_on("cuda:0")
        said = w.cannot_run_here(0, NO_DRIVER)
        assert said and said.startswith(f"{name} needs a GPU (") and "\n" not in said
        assert said.endswith("this machine has none (NVML library not found: no NVIDIA driver is installed)")
        assert w.cannot_run_here(1, "") is None
    assert WORKLOADS["strided_copy"].cannot_run_here(0, NO_DRIVER) is None
    assert WORKLOADS["two_gpus"].cannot_run_here(1) == (
        "two_gpus needs 2 GPUs (it runs on two GPUs at once and copies between them); this machine has 1"
    )
    assert get_workload("utilization-trap").name == "utilization_trap"


def test_bench_lists_what_cannot_run_here_and_why(capsys, monkeypatch):
    from explorer.commands import bench

    monkeypatch.setattr(bench, "gpus_here", lambda: (0, NO_DRIVER))
    assert main(["bench"]) == 0
    out = capsys.readouterr().out
    tail = out[out.index("Cannot run here") :]
    assert "no NVIDIA driver is installed" in tail.splitlines()[0]
    for name in ("two_gpus", "shared_transpose", "branch", "utilization_trap"):
        assert f"  {name} needs" in tail
    assert "strided_copy needs" not in tail and "matmul needs" not in tail
    assert main(["bench", "--json"]) == 0
    listed = {w["name"]: w["cannot_run_here"] for w in json.loads(capsys.readouterr().out)}
    assert listed["matmul"] is None and listed["strided_copy"] is None
    assert "no NVIDIA driver" in listed["branch"]

    monkeypatch.setattr(bench, "gpus_here", lambda: (1, ""))
    assert main(["bench"]) == 0
    tail = capsys.readouterr().out.split("Cannot run here", 1)[1]
    assert "two_gpus needs 2 GPUs" in tail and "branch" not in tail


@pytest.mark.parametrize(
    "argv",
    [["bench", "utilization-trap"], ["bench", "shared_transpose", "--device", "cpu"], ["bench", "branch"]],
)
def test_a_gpu_only_workload_without_a_gpu_is_refused_before_it_runs(capsys, monkeypatch, argv):
    from explorer.commands import bench

    monkeypatch.setattr(bench, "gpus_here", lambda: (0, NO_DRIVER))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a GPU" in err and "no NVIDIA driver" in err


def test_a_gpu_only_workload_on_the_cpu_of_a_gpu_machine_is_refused(capsys, monkeypatch):
    from explorer.commands import bench

    monkeypatch.setattr(bench, "gpus_here", lambda: (1, ""))
    assert main(["bench", "branch", "--device", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert "branch has no CPU variant" in err and "--device cuda:N" in err


def test_the_cpu_strided_copy_stands_beside_its_cache_line_model(tmp_path):
    from explorer.bench import peaks

    points = []
    for stride in (1, 8):
        spec = PointSpec(
            0, "strided_copy", "cpu", "cpu numpy strided", "numpy", stride, repeats=3, budget_s=0.3
        )
        p, fatal = run_point(spec, get_workload(spec.workload))
        assert p.error is None and not fatal, p.error
        assert p.throughput == pytest.approx(8.0 * STRIDED_COPY_ELEMENTS_CPU / p.median_s / 1e9)
        assert p.model_note.startswith("model, not a measurement")
        efficiency = strided_copy_model(stride, granule_bytes=CPU_LINE_BYTES).efficiency
        assert f"uses {round(efficiency * 100, 1):g}%" in p.model_note
        bandwidth = peaks.memory_bandwidth_gbps("cpu")
        if bandwidth is None:  # no ceiling measured on this machine: no figure, and the note says why
            assert p.model_estimate is None and "no memory bandwidth known" in p.model_note
        else:
            assert p.model_estimate == pytest.approx(efficiency * bandwidth)
            assert p.model.startswith("est. ") and R.model_cell(p).endswith("x)")
            assert f"[model: {R.model_cell(p)}]" in format_point(p)
        points.append(p)
    # the model travels with the point through JSON and CSV
    R.write_json(points, tmp_path / "r.json")
    R.write_csv(points, tmp_path / "r.csv")
    for again in (R.read_json(tmp_path / "r.json"), R.read_csv(tmp_path / "r.csv")):
        assert [(q.model, q.model_estimate, q.model_note) for q in again] == [
            (q.model, q.model_estimate, q.model_note) for q in points
        ]


def test_the_trap_words_say_what_nvml_counts():
    from explorer.bench.wl_memory import trap_words

    cell, sentence = trap_words(1, 132, 100.0)
    assert cell == "NVML 100%; at most 1 of 132 SMs busy"
    assert "0.8%" in sentence and "not the share of SMs" in sentence
    cell, _ = trap_words(512, 132, 99.0)
    assert cell == "NVML 99%; at most 132 of 132 SMs busy"


@pytest.mark.gpu
def test_on_a_gpu_the_stride_sweep_falls_as_the_model_does(gpu_here):
    """Measured GB/s at stride 1 beats stride 8 and 32, and stride 1 is within a factor of two of the
    model's estimate (efficiency 1 x the memory bandwidth) when a bandwidth is known."""
    from explorer.bench.runner import BenchPlan, BenchRun

    rows = BenchRun(BenchPlan("strided_copy", ["cuda:0"], sizes=[1, 8, 32], time_budget_s=0.5)).run_all()
    assert all(r.error is None for r in rows), [r.error for r in rows]
    by = {r.size: r for r in rows}
    assert by[1].throughput > by[8].throughput > 0 and by[1].throughput > by[32].throughput
    if by[1].model_estimate:
        assert 0.5 < by[1].throughput / by[1].model_estimate < 2.0
