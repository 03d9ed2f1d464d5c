"""The checks' own logic with stand-in inputs: figures from benchmark points, the random launch
configurations of the occupancy check and its kernel's register pressure, and the lessons check
recording stand-in results into copies of the lessons (never the real files)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from explorer.acceptance.checks_bench import strided_figures, trap_figures
from explorer.acceptance.checks_lessons import RECORDINGS_FILE, check_lessons
from explorer.acceptance.checks_occupancy import draw_configs, kernel_source
from explorer.acceptance.context import CheckContext, Sizes
from explorer.bench.results import BenchPoint
from explorer.lessons.builtin import builtin_paths
from explorer.lessons.files import load_lesson

STAND_IN = "stand-in point for a test, not a measurement"


def _point(workload: str, size: int, throughput: float, device: str = "cuda:0", **fields) -> BenchPoint:
    return BenchPoint(
        workload=workload,
        variant=f"{device} numba kernel" if device != "cpu" else device,
        device=device,
        size=size,
        size_label=f"{size}",
        median_s=0.01,
        repeats=3,
        throughput=throughput,
        throughput_unit="GB/s",
        extra={"note": STAND_IN, **fields.pop("extra", {})},
        **fields,
    )


def test_the_stride_sweep_counts_strides_inside_the_band_and_names_the_furthest():
    points = [
        _point("strided_copy", 1, 2900.0, model_estimate=3000.0),
        _point("strided_copy", 2, 1500.0, model_estimate=1500.0),
        _point("strided_copy", 8, 700.0, model_estimate=375.0),  # caches help: 1.87x the model
    ]
    figures, per_stride = strided_figures(points)
    assert [f.met for f in per_stride] == [True, True, False]
    assert figures[0].value == 2 and figures[0].unit == "of 3" and figures[0].met is False
    assert figures[1].name == "furthest: stride 8" and figures[1].ratio == pytest.approx(700 / 375)


def test_without_a_known_bandwidth_the_sweep_has_no_verdict_and_says_why():
    figures, _ = strided_figures([_point("strided_copy", 1, 100.0, model_estimate=None)])
    assert figures[0].met is None and "no memory bandwidth known" in figures[0].note


def test_the_trap_is_shown_when_utilization_is_full_and_sm_activity_is_tiny():
    one = _point(
        "utilization_trap", 1, 1e9, extra={"nvml_gpu_utilization_pct": 100.0, "gpm_sm_activity_pct": 0.76}
    )
    full = _point(
        "utilization_trap", 132, 1e11, extra={"nvml_gpu_utilization_pct": 100.0, "gpm_sm_activity_pct": 97.0}
    )
    figures = trap_figures([full, one], 132)
    assert [f.met for f in figures] == [True, True, None, None]
    assert "1 SM of 132" in figures[1].target
    no_gpm = _point(
        "utilization_trap",
        1,
        1e9,
        extra={"nvml_gpu_utilization_pct": 100.0, "gpm_sm_activity_pct_missing": "needs Hopper"},
    )
    figures = trap_figures([no_gpm], 80)
    assert figures[1].met is None and figures[1].note == "needs Hopper"
    low = _point(
        "utilization_trap", 1, 1e9, extra={"nvml_gpu_utilization_pct": 40.0, "gpm_sm_activity_pct": 0.5}
    )
    assert trap_figures([low], 132)[0].met is False


def test_occupancy_configurations_stay_inside_what_each_kernel_may_launch():
    kernels = {32: (1024, 0), 128: (512, 0), 0: (384, 1024)}
    configs = draw_configs(random.Random(1), kernels, 2000, 232_448)
    assert len(configs) == 2000
    for cap, threads, smem in configs:
        max_threads, static = kernels[cap]
        assert 1 <= threads <= max_threads and 0 <= smem <= 232_448 - static
    assert {c[0] for c in configs} == set(kernels)
    assert sum(1 for c in configs if c[2] == 0) > 300  # no dynamic shared memory is drawn too
    assert max(c[2] for c in configs) > 200_000  # and past the 48 KiB a block gets without opting in
    assert configs == draw_configs(
        random.Random(1), kernels, 2000, 232_448
    )  # seeded: a rerun compares the same


@pytest.mark.slow
def test_numba_max_registers_really_forces_the_kernels_register_count(tmp_path):
    """The occupancy kernel keeps many values live, so a register cap forces spills: compiled to
    PTX by numba here and assembled by NVIDIA's ptxas for Hopper under several caps."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("NVIDIA's ptxas is not installed (CUDA toolkit)")
    from numba import float32

    from explorer.numbacuda import cuda

    namespace = {"cuda": cuda, "float32": float32}
    exec(compile(kernel_source(40), "<test>", "exec"), namespace)
    try:
        ptx, _ = cuda.compile_ptx(namespace["pressure"], "void(float32[::1], int32)", cc=(9, 0))
    except Exception as exc:
        pytest.skip(f"numba cannot compile PTX here (no NVVM): {exc}")
    source = tmp_path / "pressure.ptx"
    source.write_text(ptx)
    used = {}
    for cap in (0, 24, 32):
        args = [ptxas, "-arch=sm_90", "-v", str(source), "-o", str(tmp_path / "p.o")]
        if cap:
            args[1:1] = ["--maxrregcount", str(cap)]
        out = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        used[cap] = int(out.stderr.split("Used ")[1].split(" registers")[0])
    assert used[24] <= 24 < used[32] <= 32 < used[0]


def test_the_lessons_check_records_into_copies_and_writes_the_bundle(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    builtin_before = {path: path.read_bytes() for path in builtin_paths()}
    for path in builtin_paths():
        shutil.copy(path, folder / path.name)
    lessons = sorted(folder.glob("*.json"))
    asked = []

    def stand_in(target, budget_s):
        asked.append((target.lesson, target.workload, target.devices, budget_s))
        return [
            BenchPoint(
                workload=target.workload,
                variant=device,
                device=device,
                size=64,
                size_label="n=64",
                median_s=0.001,
                repeats=3,
                throughput=1.0,
                throughput_unit="GFLOP/s",
                extra={"note": STAND_IN},
            )
            for device in target.devices
        ]

    ctx = CheckContext(device="cuda:0", out_dir=tmp_path / "acc", repo=tmp_path, sizes=Sizes.tiny())
    ctx.out_dir.mkdir()
    result = check_lessons(ctx, stand_in, lessons, planned=lambda target: len(target.devices))
    assert result.status == "pass", result.summary
    assert [a[0] for a in asked] == [
        "04-timing-trap",
        "05-matmul-crossover",
        "06-pinned-copies",
        "07-cifar10-step",
        "12-tiled-matmul",
    ]
    assert all(a[3] == Sizes.tiny().lesson_budget_s for a in asked)
    bundle = json.loads((ctx.out_dir / RECORDINGS_FILE).read_text())
    assert len(bundle["recordings"]) == 5
    step = load_lesson(folder / "05-matmul-crossover.json").steps[0]
    assert (
        step.state.recorded is not None
        and step.state.recorded.date == bundle["recordings"][1]["recorded"]["date"]
    )
    assert "its host's CPU" in step.state.recorded.device  # the step runs on the CPU and the GPU
    # the real lessons were not touched: the built-in files (which hold the H100's recordings) are
    # byte for byte what they were, none holds the stand-in's points
    for path, before in builtin_before.items():
        assert path.read_bytes() == before, path.name


def test_the_environment_check_names_the_driver_and_its_cuda_version(tmp_path):
    """The H100's report said "driver None (CUDA None)": the device's description has no driver."""
    from explorer.acceptance.checks_devices import check_environment
    from tests.devices.fake_nvml import make_fake_nvml

    ctx = CheckContext(device="cuda:0", out_dir=tmp_path, repo=tmp_path, nvml=make_fake_nvml())
    result = check_environment(ctx)
    assert "driver 550.54.14 (CUDA 12.4)" in result.summary, result.summary


@pytest.mark.parametrize("unreadable", ["nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion"])
def test_the_environment_check_fails_when_it_cannot_read_the_driver(tmp_path, unreadable):
    """It passed printing "driver None (CUDA None)": a run that cannot say what it ran on fails."""
    from explorer.acceptance.checks_devices import check_environment
    from tests.devices.fake_nvml import make_fake_nvml, nvml_error

    nvml = make_fake_nvml()

    def refuse():
        raise nvml_error("not_supported")

    setattr(nvml, unreadable, refuse)
    ctx = CheckContext(device="cuda:0", out_dir=tmp_path, repo=tmp_path, nvml=nvml)
    result = check_environment(ctx)
    assert result.status == "fail"
    what = "the driver version" if unreadable.endswith("GetDriverVersion") else "the CUDA driver version"
    assert result.summary.startswith(f"NVML could not read {what}: "), result.summary
    assert "None" not in result.summary.split(". ", 1)[0]


def _lesson_copies(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    for path in builtin_paths():
        shutil.copy(path, folder / path.name)
    return sorted(folder.glob("*.json"))


def _measured_then_out_of_time(measured: int):
    """A stand-in runner: each step's first ``measured`` points measured, the rest error rows."""

    def run(target, _budget_s):
        out = []
        for i in range(25):
            device = target.devices[i % len(target.devices)]
            common = dict(
                workload=target.workload, variant=device, device=device, size=64 + i, size_label=f"n={64 + i}"
            )
            if i < measured:
                out.append(
                    BenchPoint(
                        **common,
                        median_s=0.001,
                        repeats=3,
                        throughput=1.0,
                        throughput_unit="GFLOP/s",
                        extra={"note": STAND_IN},
                    )
                )
            else:
                out.append(BenchPoint(**common, error="not measured: the run's time was up"))
        return out

    return run


def test_a_partial_recording_fails_the_lessons_check_and_is_written_nowhere(tmp_path):
    lessons = _lesson_copies(tmp_path)
    before = {path: path.read_bytes() for path in lessons}
    ctx = CheckContext(device="cuda:0", out_dir=tmp_path / "acc", repo=tmp_path, sizes=Sizes.tiny())
    ctx.out_dir.mkdir()
    result = check_lessons(ctx, _measured_then_out_of_time(5), lessons, planned=lambda target: 25)
    assert result.status == "fail"
    assert "5 of 25 points measured" in result.summary
    assert "not measured: the run's time was up" in result.summary
    partial = result.details["partial"]
    assert len(partial) == 5 and all("\n" not in line for line in partial.values())
    assert not (ctx.out_dir / RECORDINGS_FILE).exists()  # no bundle carries a partial recording
    for path, was in before.items():
        assert path.read_bytes() == was, path.name


def test_fewer_points_than_planned_is_partial_even_without_error_rows(tmp_path):
    lessons = _lesson_copies(tmp_path)
    ctx = CheckContext(device="cuda:0", out_dir=tmp_path / "acc", repo=tmp_path, sizes=Sizes.tiny())
    ctx.out_dir.mkdir()
    run = _measured_then_out_of_time(25)
    result = check_lessons(ctx, lambda t, b: run(t, b)[:5], lessons, planned=lambda target: 25)
    assert result.status == "fail"
    assert "5 of 25 points measured; 20 planned point(s) never came back" in result.summary


def test_a_partial_recording_is_refused_by_the_lesson_writer(tmp_path):
    from explorer.errors import UserError
    from explorer.lessons.recording import make_recorded, recording_targets, write_recording

    lessons = _lesson_copies(tmp_path)
    target = recording_targets(lessons)[0]
    before = target.path.read_bytes()
    points = _measured_then_out_of_time(5)(target, 1.0)
    recorded = make_recorded(points, "a stand-in GPU", "2026-11-29", "stand-in")
    with pytest.raises(UserError, match=r"is partial \(5 of 25 points measured; n=69 on"):
        write_recording(target, recorded)
    assert target.path.read_bytes() == before


def test_a_complete_step_counts_its_plan():
    from explorer.acceptance.checks_lessons import planned_points
    from explorer.lessons.recording import recording_targets

    for target in recording_targets():
        assert planned_points(target) >= len(target.devices)
