"""The registry, the peak arithmetic, and every workload's CPU variant measured at a tiny size."""

from __future__ import annotations

import importlib

import pytest

from explorer.bench.execute import PointSpec, run_point
from explorer.bench.peaks import pcie_peak_gbps
from explorer.bench.workload import cnn_param_count
from explorer.bench.workloads import TEST_WORKLOADS, WORKLOADS, get_workload
from explorer.errors import UserError
from explorer.words import count

EIGHT = ["matmul", "vector_add", "matvec", "copies", "small_vs_big", "cnn_step", "timing_lesson", "two_gpus"]
MEMORY = ["strided_copy", "shared_transpose", "branch", "utilization_trap"]
GPU_ONLY = MEMORY[1:]
TILING = ["tiled_matmul"]
TINY = {
    "matmul": 32,
    "vector_add": 1000,
    "matvec": 500,
    "copies": 4096,
    "small_vs_big": 5,
    "cnn_step": 4,
    "timing_lesson": 32,
    "two_gpus": 32,
    "strided_copy": 3,
    "tiled_matmul": 12,
}


def test_registry_holds_the_workloads_with_lessons():
    assert list(WORKLOADS) == EIGHT + MEMORY + TILING
    for w in WORKLOADS.values():
        assert len(w.lesson) > 200, w.name
        # a workload without a CPU size runs only on a GPU, and says so before any run
        assert (not w.default_sizes_cpu) == (w.name in GPU_ONLY) == (not w.variants_on("cpu")), w.name
        assert w.default_sizes_gpu and w.unit
        assert all(s > 0 for s in w.default_sizes_cpu + w.default_sizes_gpu)
        assert not w.hidden
    assert max(WORKLOADS["matmul"].default_sizes_cpu) <= 2048
    assert max(WORKLOADS["matmul"].default_sizes_gpu) == 8192
    assert WORKLOADS["two_gpus"].needs_gpu_count == 2
    assert (
        WORKLOADS["copies"].default_sizes_gpu[0] == 4096
        and WORKLOADS["copies"].default_sizes_gpu[-1] == 2**30
    )


def test_test_workloads_are_hidden_but_reachable():
    assert set(TEST_WORKLOADS) == {"_crash_test", "_hang_test", "_oom_test"}
    assert not set(TEST_WORKLOADS) & set(WORKLOADS)
    assert get_workload("_crash_test").hidden


def test_unknown_workload_names_the_known_ones():
    with pytest.raises(UserError) as err:
        get_workload("matmull")
    assert "matmull" in str(err.value) and "matmul" in str(err.value) and "\n" not in str(err.value)


def test_variant_labels_carry_the_device():
    w = WORKLOADS["copies"]
    assert w.variants("cuda:1") == [
        "cuda:1 H2D pageable",
        "cuda:1 H2D pinned",
        "cuda:1 D2H pageable",
        "cuda:1 D2H pinned",
    ]
    assert WORKLOADS["matmul"].variants("cpu") == ["cpu"]
    assert WORKLOADS["copies"].size_label(4096) == "4 KiB"


@pytest.mark.parametrize(
    "gen,width,expected", [(3, 16, 15.754), (4, 16, 31.508), (5, 8, 31.508), (2, 16, 8.0), (1, 1, 0.25)]
)
def test_pcie_peak_from_generation_and_width(gen, width, expected):
    assert pcie_peak_gbps(gen, width) == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("gen,width", [(None, 16), (3, None), (9, 16), (3, 0)])
def test_pcie_peak_unknown_is_none(gen, width):
    assert pcie_peak_gbps(gen, width) is None


class _LinkNvml:
    """An NVML stand-in for the link reading: answers, or hangs in nvmlInit like a GPU off the bus."""

    def __init__(self, hang: bool) -> None:
        import threading

        self.release = threading.Event()
        self.hang = hang

    def nvmlInit(self) -> None:
        if self.hang:
            self.release.wait(30)

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetHandleByPciBusId(self, bus_id):
        return bus_id

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle):
        return 4

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle):
        return 16


def test_the_pcie_link_is_read_now_and_a_hung_nvml_costs_only_the_deadline(monkeypatch):
    """The copies workload reads the link after a copy; a hung nvmlInit in the worker must not hold
    the run (it had no deadline): past the probes' deadline the discovery's reading stands."""
    import time

    from explorer.bench import peaks
    from explorer.devices.model import CudaGpu

    rec = CudaGpu(name="GPU", key="cuda:0", pcie_generation=1, pcie_width=16, pci_bus_id="00000000:01:00.0")
    monkeypatch.setattr(peaks, "device_record", lambda device: rec)
    assert peaks.pcie_link("cuda:0", _LinkNvml(hang=False)) == (4, 16)
    hung = _LinkNvml(hang=True)
    t0 = time.monotonic()
    try:
        assert peaks.pcie_link("cuda:0", hung, deadline_s=0.3) == (1, 16)
        assert time.monotonic() - t0 < 15  # the stand-in hangs for 30 s
    finally:
        hung.release.set()


def test_cnn_flop_count_matches_the_model_that_runs():
    from explorer.bench.wl_cnn import build_cnn

    model = build_cnn()
    assert sum(p.numel() for p in model.parameters()) == cnn_param_count()
    import torch

    assert model(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


# the timed ones: a check-only variant (a kernel under the CUDA simulator) has its own tests
CPU_CASES = [
    (name, v.key)
    for name, w in WORKLOADS.items()
    if name != "two_gpus"
    for v in w.variants_on("cpu")
    if v.check is None
]


@pytest.mark.parametrize("name,key", CPU_CASES)
def test_every_cpu_variant_gives_a_sane_point(name, key):
    w = WORKLOADS[name]
    variant = w.variant(key).series_name("cpu")
    spec = PointSpec(
        index=0,
        workload=name,
        device="cpu",
        variant=variant,
        variant_key=key,
        size=TINY[name],
        repeats=3,
        budget_s=0.2,
    )
    for module in w.preload:  # what the worker imports for this workload before its first point
        importlib.import_module(module)
    p, fatal = run_point(spec, get_workload(spec.workload))
    assert p.error is None, p.error
    assert not fatal
    assert p.median_s > 0 and p.min_s <= p.median_s and p.spread_s >= 0 and p.repeats == 3
    assert p.variant == variant and p.device == "cpu" and p.size == TINY[name]
    # the versions of what measured it, whichever tests ran before in this process
    assert p.versions["python"] and all(p.versions[m] for m in w.preload)
    if p.throughput_unit == "GFLOP/s":
        assert p.throughput == pytest.approx(w.flops(p.size) / p.median_s / 1e9)
    elif name == "strided_copy":  # the CPU copies fewer elements than the GPU (its own byte count)
        from explorer.bench.workload import STRIDED_COPY_ELEMENTS_CPU

        assert p.throughput == pytest.approx(8.0 * STRIDED_COPY_ELEMENTS_CPU / p.median_s / 1e9)
    elif p.throughput_unit == "GB/s":
        assert p.throughput == pytest.approx(w.bytes_moved(p.size) / p.median_s / 1e9)
    else:
        assert p.throughput == pytest.approx(p.size / p.median_s)
    if name == "cnn_step":
        assert p.extra["copy_share"] == 0.0
    if name in ("matmul", "cnn_step", "small_vs_big", "timing_lesson"):
        from explorer.bench import execute

        # torch's threads, as many as other programs leave cores free; fewer than all is said
        all_threads = execute._all_threads
        assert all_threads and 1 <= p.threads <= all_threads
        assert (p.threads < all_threads) == ("threads_note" in p.extra)


def test_two_gpus_without_two_gpus_is_an_error_row_that_says_so():
    import torch

    if torch.cuda.device_count() >= 2:
        pytest.skip("this machine has two GPUs")
    p, fatal = run_point(
        PointSpec(0, "two_gpus", "cpu", "cpu", "cpu", 32, repeats=1), get_workload("two_gpus")
    )
    assert p.error == f"needs two GPUs; {torch.cuda.device_count()} found"
    assert p.median_s is None and not fatal


def test_a_missing_gpu_is_an_error_row_not_a_crash():
    import torch

    missing = torch.cuda.device_count()
    p, fatal = run_point(
        PointSpec(0, "matmul", f"cuda:{missing}", f"cuda:{missing}", "plain", 32, repeats=1),
        get_workload("matmul"),
    )
    assert p.error == f"cuda:{missing} is not present; {count(missing, 'CUDA device')} found"
    assert not fatal


def test_errors_are_classified_for_the_user():
    import torch

    from explorer.bench.execute import PointError, classify

    assert classify(PointError("needs two GPUs; 1 found")) == ("needs two GPUs; 1 found", False)
    msg, fatal = classify(MemoryError("cannot allocate 4 GiB"))
    assert msg.startswith("out of memory") and not fatal
    msg, fatal = classify(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert msg.startswith("out of memory") and not fatal
    msg, fatal = classify(RuntimeError("CUDA error: an illegal memory access was encountered\nmore"))
    assert msg.startswith("device fault") and fatal and "\n" not in msg
    msg, fatal = classify(ValueError("bad shape"))
    assert msg == "ValueError: bad shape" and not fatal


# --- typed variants ----------------------------------------------------------------------------


def test_every_variant_has_a_unique_key_and_runs_somewhere():
    for w in [*WORKLOADS.values(), *TEST_WORKLOADS.values()]:
        keys = [v.key for v in w.code()]
        assert keys and len(set(keys)) == len(keys), w.name
        assert w.variants_on("cpu") or w.variants_on("cuda:0"), w.name
        assert len(set(w.variants("cuda:0"))) == len(w.variants("cuda:0")), w.name


def test_an_unknown_variant_key_is_an_error_row_naming_the_known_ones():
    p, fatal = run_point(
        PointSpec(0, "copies", "cpu", "cpu x", "h2d_turbo", 4096, repeats=1), get_workload("copies")
    )
    assert p.error == (
        "copies has no variant 'h2d_turbo'; its variants: host_memcpy, h2d_pageable, h2d_pinned, "
        "d2h_pageable, d2h_pinned"
    )
    assert not fatal


@pytest.mark.parametrize(
    "module,name,key,workload,size",
    [
        ("wl_copies", "COPIES", "host_memcpy", "copies", 4096),
        ("wl_torch", "TIMING_LESSON", "naive", "timing_lesson", 32),
        ("wl_torch", "SMALL_VS_BIG", "item_each_step", "small_vs_big", 5),
    ],
)
def test_renaming_a_label_renames_the_series_and_still_measures(
    monkeypatch, module, name, key, workload, size
):
    import dataclasses
    import importlib

    from explorer.bench.runner import BenchPlan, plan_points

    mod = importlib.import_module(f"explorer.bench.{module}")
    renamed = tuple(
        dataclasses.replace(v, label="renamed by a teacher") if v.key == key else v
        for v in getattr(mod, name)
    )
    monkeypatch.setattr(mod, name, renamed)
    specs = [
        s for s in plan_points(BenchPlan(workload, ["cpu"], sizes=[size], repeats=2)) if s.variant_key == key
    ]
    assert [s.variant for s in specs] == ["cpu renamed by a teacher"]
    p, fatal = run_point(specs[0], get_workload(specs[0].workload))
    assert p.error is None and p.median_s > 0 and not fatal
    assert p.variant == "cpu renamed by a teacher"
    if key == "naive":  # the naive timing still runs the naive code, whatever its label says
        assert p.extra["note"].startswith("clock read without synchronizing")


@pytest.mark.slow
def test_the_registry_and_its_variant_labels_load_without_torch_or_numba():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from explorer.bench.workloads import WORKLOADS\n"
        "labels = [w.variants(d) for w in WORKLOADS.values() for d in ('cpu', 'cuda:0')]\n"
        "heavy = sorted(m for m in ('torch', 'numba', 'numpy') if m in sys.modules)\n"
        "print(len(labels), heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1000:]
    assert out.stdout.strip() == f"{2 * len(WORKLOADS)} []"
