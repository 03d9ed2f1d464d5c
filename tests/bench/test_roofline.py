"""True peaks and measured ceilings: the CPU's FP32 peak from its measured clock, the working-set
sweep that measures each memory level, the worker's one roof per device, and what the CLI says."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time

import pytest

from explorer.bench import ceilings, peaks, sweep
from explorer.bench.clock import CHAIN_OPS, chain_kernel, chain_reference, measure_clock
from explorer.bench.compare import peak_note, peak_share_text
from explorer.bench.results import BenchPoint, read_csv, write_csv
from explorer.bench.workloads import get_workload
from explorer.devices.caches import CpuCache
from explorer.devices.catalog import catalog_device
from explorer.devices.isa import cpu_fp32_peak_gflops, flops_per_cycle
from explorer.devices.roofs import RoofBook, catalog_roof, fingerprint, record_roof
from explorer.roofs import store
from explorer.roofs.model import Ceiling
from explorer.roofs.plateaus import CacheSize
from explorer.roofs.store import MeasuredRoof
from tests.roofs.levels import levels

# --- FLOP per cycle and the peak's basis, per ISA -----------------------------------------------


@pytest.mark.parametrize(
    ("flags", "isa", "per_cycle"),
    [
        (["sse4_2", "avx", "avx2", "fma", "avx512f"], "AVX-512", 64),
        (["sse4_2", "avx", "avx2", "fma"], "AVX2+FMA", 32),
        (["sse4_2", "avx"], "AVX", 16),
        (["sse4_2"], "SSE", 8),
        (["neon"], "NEON", 16),
        (["asimd", "asimdhp"], "NEON", 16),
        ([], "scalar", 1),
    ],
)
def test_flop_per_cycle_per_isa(flags, isa, per_cycle):
    f = flops_per_cycle(flags)
    assert (f.isa, f.flop_per_cycle) == (isa, per_cycle)
    # the manuals' figures: lanes x pipes, x 2 where a pipe does a fused multiply-add
    assert f.flop_per_cycle == {True: 2, False: 1}[f.fma] * f.lanes * f.pipes
    assert f.basis.startswith(f"{per_cycle} FLOP/cycle ({isa}")


@pytest.mark.parametrize(
    "vendor,family,model,per_cycle,core",
    [
        ("AMD", 25, 17, 32, "AMD Zen 4"),  # EPYC Genoa: 236 GFLOP/s native FMA on 2 cores at 3.69 GHz
        ("AMD", 26, 2, 64, ""),  # Zen 5: full 512-bit FMA pipes
        ("Intel", 6, 143, 64, ""),  # Sapphire Rapids
        (None, None, None, 64, ""),  # nothing known beyond the flags: the upper bound
    ],
)
def test_avx512_flop_per_cycle_follows_the_core_not_only_the_flags(vendor, family, model, per_cycle, core):
    f = flops_per_cycle(["avx", "avx2", "fma", "avx512f"], vendor, family, model)
    assert f.flop_per_cycle == per_cycle
    assert core in f.basis and f.basis.startswith(f"{per_cycle} FLOP/cycle (AVX-512")


def test_zen_and_zen_plus_split_256_bit_fmas_but_zen_2_and_3_do_not():
    flags = ["avx", "avx2", "fma"]
    assert flops_per_cycle(flags, "AMD", 23, 0x08).flop_per_cycle == 16  # Zen+ (Ryzen 2000)
    assert flops_per_cycle(flags, "AMD", 23, 0x31).flop_per_cycle == 32  # Zen 2 (EPYC Rome)
    assert flops_per_cycle(flags, "AMD", 25, 0x21).flop_per_cycle == 32  # Zen 3: no AVX-512
    assert flops_per_cycle(flags, "Intel", 6, 0x3C).flop_per_cycle == 32  # Haswell


def test_this_machines_peak_uses_its_core_family():
    """The record the probe makes carries the family and model the peak needs (read from
    /proc/cpuinfo on Linux), so a Zen 4 here gets 32 FLOP/cycle."""
    from explorer.devices.cpu import core_flops_per_cycle, parse_proc_cpuinfo, probe_cpu

    text = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nflags\t\t: sse4_2 avx avx2 fma avx512f\n"
    info = parse_proc_cpuinfo(text, "x86_64")
    assert (info["family"], info["model"]) == (25, 17)
    rec = probe_cpu(cpuinfo_info={**info, "source": "/proc/cpuinfo"})
    assert (rec.vendor, rec.cpu_family, rec.cpu_model) == ("AMD", 25, 17)
    assert core_flops_per_cycle(rec).flop_per_cycle == 32
    if (
        rec.fp32_peak_gflops
        and rec.physical_cores
        and rec.frequency_max_mhz
        and "measured" not in rec.fp32_peak_basis
    ):
        assert rec.fp32_peak_gflops == pytest.approx(
            rec.physical_cores * rec.frequency_max_mhz / 1000 * 32, rel=1e-3
        )


# --- the clock-measuring chain ------------------------------------------------------------------


def test_the_chain_is_computed_not_folded():
    chain = chain_kernel()
    for n, a, b in ((0, 5, 9), (1, 3, 7), (37, 0x5DEECE66D, 0x2545F4914F6C), (1000, -12345, 987654321)):
        assert chain(n, a, b) == chain_reference(n, a, b)


def test_the_chains_time_grows_with_its_length():
    """A folded or vectorised chain would take the same time whatever its length."""
    chain = chain_kernel()
    chain(10, 3, 5)

    def fastest(n: int) -> float:
        best = math.inf
        for _ in range(7):
            t0 = time.perf_counter()
            chain(n, 3, 5)
            best = min(best, time.perf_counter() - t0)
        return best

    short, long = fastest(200_000), fastest(1_600_000)
    # 8x the operations: 8x the time (a busy machine can only stretch the long run further); a
    # folded chain would take the same time at both lengths, a vectorised one barely more
    assert long / short > 4.0


def test_measure_clock_runs_every_thread_and_reports_cycles_per_second():
    m = measure_clock(threads=2, samples=5, sample_s=0.001)
    assert m.threads == 2 and len(m.per_thread_ghz) == 2
    assert 0.2 < m.ghz < 8.0  # cycles per second of a real core, not ops of a folded loop
    assert f"{m.threads} threads at once" in m.method and CHAIN_OPS == 16


def test_peak_arithmetic_and_basis_text_from_the_measured_clock(home, cpu_record):
    assert cpu_fp32_peak_gflops(3.35, 2, flops_per_cycle(["avx512f"])) == pytest.approx(428.8)
    _seed(cpu_record, clock_ghz=3.35)
    roof = record_roof(cpu_record)
    peak = roof.ceilings[0]
    assert (peak.quantity, peak.kind, peak.value) == ("compute", "theoretical", pytest.approx(428.8))
    assert peak.basis.startswith("measured clock 3.35 GHz x 2 cores x 64 FLOP/cycle (AVX-512")
    assert "2 FMA pipes assumed" in peak.basis and not peak.estimate
    assert peaks.fp32_peak_gflops("cpu") == pytest.approx(428.8)
    basis = peaks.compute_peak_basis("cpu")
    # built on a clock measured here: a theoretical peak, not an estimate from a reported clock
    assert basis.kind == "theoretical" and not basis.is_estimate and basis.text == peak.basis


def test_without_a_measured_clock_the_reported_clock_estimate_stands(home, cpu_record):
    roof = record_roof(cpu_record)
    assert [c.basis for c in roof.ceilings] == ["estimate from maximum clock"]
    assert roof.ceilings[0].estimate and peaks.compute_peak_basis("cpu").is_estimate
    assert roof.note == "not measured yet on this machine"


def test_a_roof_measured_while_busy_says_so_on_its_labels_and_in_the_note(home, cpu_record):
    _seed(cpu_record, clock_ghz=3.0, busy="other programs used 87% of the CPU during this point")
    roof = record_roof(cpu_record)
    dram = roof.level("DRAM")
    assert dram is not None and dram.label == "DRAM (measured while busy): 12 GB/s" and dram.quiet is False
    assert "while other programs were busy (other programs used 87%" in roof.note
    assert "kept only until a quiet measurement replaces it" in roof.note
    assert roof.quiet is False and roof.to_dict()["quiet"] is False
    _seed(cpu_record, clock_ghz=3.0)  # a quiet measurement replaces it and is labelled plainly
    quiet = record_roof(cpu_record)
    assert quiet.level("DRAM").label == "DRAM (measured): 12 GB/s" and "on a quiet machine" in quiet.note


# --- measuring once, keeping the quiet one --------------------------------------------------------


@pytest.fixture
def fake_measure(monkeypatch):
    """``measure_cpu_roof`` replaced by a recorder; ``busy`` makes the next measurement a busy one."""
    calls: list[float] = []
    state = {"busy": "", "quiet_now": True}

    def measure(cpu, fp, **_: object) -> MeasuredRoof:
        calls.append(time.time())
        return _roof(fp, 10.0 + len(calls), busy=state["busy"])

    monkeypatch.setattr(ceilings, "measure_cpu_roof", measure)
    monkeypatch.setattr(peaks, "machine_quiet_now", lambda: state["quiet_now"])
    return calls, state


def test_ceilings_are_measured_once_per_machine_and_kept(home, cpu_record, fake_measure):
    calls, state = fake_measure
    assert peaks.ensure_measured("cpu") is not None and len(calls) == 1  # none stored: measured
    assert peaks.ensure_measured("cpu") is None and len(calls) == 1  # stored and quiet: kept
    assert peaks.ensure_measured("cpu", force=True).replaced and len(calls) == 2  # asked: measured
    # a change of machine invalidates them
    _seed(cpu_record, clock_ghz=3.0, fp="cpu|some other machine")
    assert peaks.ensure_measured("cpu") is not None and len(calls) == 3
    assert store.load("cpu", fingerprint(cpu_record))[0] == "stored"


def test_a_busy_measurement_never_replaces_the_quiet_one(home, cpu_record, fake_measure):
    calls, state = fake_measure
    peaks.ensure_measured("cpu")
    quiet = store.load("cpu", fingerprint(cpu_record))[1]
    state["busy"] = "other programs used 91% of the CPU"
    saved = peaks.ensure_measured("cpu", force=True)
    assert saved is not None and not saved.replaced and len(calls) == 2
    assert "so the quiet one measured" in saved.message
    assert store.load("cpu", fingerprint(cpu_record))[1] == quiet


def test_a_busy_stored_roof_is_measured_again_only_when_the_machine_is_quiet(home, cpu_record, fake_measure):
    calls, state = fake_measure
    state["busy"] = "other programs used 70% of the CPU"
    peaks.ensure_measured("cpu")
    state["quiet_now"] = False  # still busy: measuring now would give another busy roof
    assert peaks.ensure_measured("cpu") is None and len(calls) == 1
    state["quiet_now"], state["busy"] = True, ""
    assert peaks.ensure_measured("cpu").stored.quiet and len(calls) == 2


def test_the_worker_builds_each_roof_once_and_places_every_point_under_it(home, cpu_record, fake_measure):
    """The roof was computed in the worker, again in the window on every batch and again by a
    remote's agent; now one per device per worker, the same object for every point."""
    calls, _ = fake_measure
    assert peaks.ensure_measured_quietly("cpu") == ("", False) and len(calls) == 1
    first = peaks.worker_roof("cpu")
    store.save(_roof(fingerprint(cpu_record), clock_ghz=9.0))  # another program measured meanwhile
    for _ in range(3):
        assert peaks.ensure_measured_quietly("cpu") == ("", False)
        assert peaks.worker_roof("cpu") is first
    assert len(calls) == 1
    peaks.forget_roof("cpu")
    assert peaks.worker_roof("cpu").clock_ghz == 9.0


def test_a_failed_measurement_costs_no_point_and_is_said_with_the_roof(home, cpu_record, monkeypatch):
    def broken(*_a, **_k):
        raise RuntimeError("no numba here")

    monkeypatch.setattr(ceilings, "measure_cpu_roof", broken)
    said, failed = peaks.ensure_measured_quietly("cpu")
    assert failed and said == "the ceilings of cpu could not be measured: RuntimeError: no numba here"
    assert said in peaks.worker_roof("cpu").notice


def test_gpu_sgemm_code_path_runs_against_any_torch_device(monkeypatch):
    """The GPU's sgemm measurement, run on the CPU (no GPU here): same code, same records."""
    import torch

    monkeypatch.setattr(ceilings, "MATMUL_SIZES_GPU", (64, 128))
    before = torch.get_float32_matmul_precision()
    roof = ceilings.measure_gpu_roof(torch, torch.device("cpu"), None, "gpu|fake", "cuda:0", budget_s=0.05)
    compute = roof.ceiling("compute")
    assert (
        compute is not None and compute.kind == "measured" and compute.name == "sgemm" and compute.value > 0
    )
    assert "TF32 off" in compute.basis and roof.took_s is not None
    assert torch.get_float32_matmul_precision() == before  # restored to what it was


# --- the working-set sweep --------------------------------------------------------------------------


def test_the_sweep_kernels_compute_what_they_should_and_keep_their_buffer_ones():
    import numpy as np

    k = sweep.kernels()
    buf = np.ones(3 * 1000 + 3 * sweep.PAGE_ELEMENTS)
    for name in sweep.KERNELS:
        n = 1000
        step = sweep.array_step(n, sweep.ARRAYS[name])
        assert k[name](buf, n, 3, 0.0, step) == sweep.expected_result(name, n, 3)
        assert (buf == 1.0).all()  # the next kernel reads ones again
    for arrays in (2, 3):  # no two arrays a whole number of pages apart (4K aliasing)
        for n in (512, 1000, 4096, 12345):
            step = sweep.array_step(n, arrays)
            assert step >= n and step % sweep.PAGE_ELEMENTS != 0


def test_a_small_sweep_measures_every_kernel_at_every_size():
    sizes = sweep.sizes(256 * 1024, first_bytes=16 * 1024, growth=2.0)
    assert sizes == [16384, 32768, 65536, 131072, 262144]
    result = sweep.sweep(sizes, 2, samples=2, sample_bytes=1 << 20)
    assert result.ws_bytes == sizes and result.threads == 2
    for name in sweep.KERNELS:
        assert len(result.gbps[name]) == len(sizes) and all(g > 0 for g in result.gbps[name])
    assert result.envelope() == [max(result.gbps[k][i] for k in sweep.KERNELS) for i in range(len(sizes))]


def test_the_sweep_reaches_past_the_last_level_cache():
    assert sweep.last_size(32 << 20, None) == 8 * (32 << 20)
    assert sweep.last_size(None, None) == 4 * sweep.MIN_LAST_BYTES
    assert sweep.last_size(32 << 20, 64 << 20) == 16 << 20  # a quarter of the free memory


def _synthetic_sweep() -> sweep.SweepResult:
    from tests.roofs.test_plateaus import FOUR
    from tests.roofs.test_plateaus import sweep as staircase

    ws, gbps = staircase(*FOUR, noise=0.01, seed=5)
    result = sweep.SweepResult(threads=2, ws_bytes=ws)
    result.gbps = {"read": [g * 0.9 for g in gbps], "copy": [g * 0.95 for g in gbps], "triad": gbps}
    return result


def test_level_ceilings_are_named_by_the_caches_and_say_how_they_were_had():
    caches = [CacheSize("L1", 64 << 10, 2), CacheSize("L2", 2 << 20, 2), CacheSize("L3", 32 << 20, 1)]
    found = ceilings.level_ceilings(_synthetic_sweep(), caches, 1000.0, "2 threads (numba)")
    assert [(c.level, c.name) for c in found] == [("L1", "L1"), ("L2", "L2"), ("L3", "L3"), ("DRAM", "DRAM")]
    l2 = found[1]
    assert l2.value == pytest.approx(225.0, rel=0.05) and (l2.cache_bytes, l2.instances) == (2 << 20, 2)
    assert "fastest kernel triad" in l2.basis and "2 MiB of L2 (2 x 1 MiB)" in l2.basis
    assert "write-allocate reads are not counted" in l2.basis
    assert l2.ws_lo_bytes < (2 << 20) and l2.ws_hi_bytes > (64 << 10)
    assert found[3].cache_bytes is None and "past every cache" in found[3].basis


def test_a_level_without_a_flat_stretch_takes_the_median_well_inside_it():
    result = _synthetic_sweep()
    # DRAM's sizes made to fall steadily: no flat stretch, yet a roof, labelled so
    result.gbps = {
        k: [
            g * (1.0 - 0.3 * (w > 40 << 20) * (w / result.ws_bytes[-1]))
            for w, g in zip(result.ws_bytes, v, strict=True)
        ]
        for k, v in result.gbps.items()
    }
    caches = [CacheSize("L3", 32 << 20, 1)]
    dram = next(c for c in ceilings.level_ceilings(result, caches, 1000.0, "x") if c.level == "DRAM")
    assert dram.ws_lo_bytes >= 128 << 20
    assert "no flat stretch found" in dram.basis or "flat over" in dram.basis


def test_sweep_caches_count_the_caches_the_threads_have():
    cpu = _cpu_with_caches()
    assert ceilings.sweep_caches(cpu, 2) == [
        CacheSize("L1", 64 << 10, 2),
        CacheSize("L2", 2 << 20, 2),
        CacheSize("L3", 32 << 20, 1),
    ]
    assert ceilings.sweep_caches(cpu, 1)[1] == CacheSize("L2", 1 << 20, 1)


def test_a_whole_cpu_measurement_runs_end_to_end(home, cpu_record, monkeypatch):
    """The real kernels, clock and sgemm, on a sweep cut short so the test takes a second or two:
    every part is there, said how, and judged quiet or busy."""
    monkeypatch.setattr(sweep, "last_size", lambda llc, free: 512 << 10)
    monkeypatch.setattr(sweep, "SAMPLE_BYTES", 1 << 20)
    monkeypatch.setattr(sweep, "STREAM_BYTES", 1 << 20)
    monkeypatch.setattr(ceilings, "MATMUL_SIZES_CPU", (128,))
    cpu_record.caches = [CpuCache("L1", 32 << 10, 2), CpuCache("L2", 1 << 20, 2)]
    seen: list[float] = []
    roof = ceilings.measure_cpu_roof(
        cpu_record, "fp", progress=lambda f, _t: seen.append(f), sgemm_budget_s=0.05
    )
    assert roof.clock_ghz
    assert [c.name for c in roof.ceilings if c.quantity == "compute"] == ["FP32 FMA", "sgemm"]
    assert roof.ceilings[0].value > 0 and "FMA-throughput loop" in roof.ceilings[0].basis
    levels = [c for c in roof.ceilings if c.quantity == "memory"]
    assert levels and all(c.level in ("L1", "L2", "DRAM") and c.ws_lo_bytes for c in levels)
    # every ceiling carries how it was measured; the streams DRAM is checked against are kept
    assert all(c.method is not None and c.method.threads >= 1 for c in roof.ceilings)
    assert set(roof.streams_gbps) == {"read", "triad"} and 0 < (roof.streams_bytes or 0) <= 512 << 10
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    assert roof.took_s is not None and roof.others_cpu_share is not None
    assert roof.quiet == (roof.busy_reason == "")


# --- the catalog and the points ---------------------------------------------------------------------


def test_catalog_roof_comes_from_the_spec_sheet_labelled_as_such():
    roof = catalog_roof(catalog_device("h100-sxm5"))
    assert {c.kind for c in roof.ceilings} == {"spec sheet"}
    assert roof.top("compute").value == 66900.0 and roof.level("DRAM").value == 3350.0
    assert roof.ridge_flop_per_byte == pytest.approx(66900 / 3350)
    assert roof.note.startswith("spec sheet: ")


def _point(**kw: object) -> BenchPoint:
    base = dict(workload="vector_add", variant="cpu numpy", device="cpu", size=100_000, size_label="N=100000")
    base.update(kw)
    return BenchPoint(**base)  # type: ignore[arg-type]


def test_place_point_names_the_level_and_share_and_csv_keeps_them(home, cpu_record, tmp_path):
    _seed(cpu_record, clock_ghz=3.0)
    w = get_workload("vector_add")
    p = _point(size=10_000, median_s=1.5e-6, throughput=80.0, throughput_unit="GB/s", threads=1)
    p = peaks.place_point(p, w.flops(p.size), w.bytes_moved(p.size), w.working_set_bytes(p.size))
    assert (p.memory_level, p.roof_level, p.bound) == ("L2", "L2", "memory")
    assert p.roof_share == pytest.approx(80.0 / 200.0, rel=1e-3) and p.roof_note == ""
    assert p.peak == 200.0 and p.peak_kind == "measured" and p.peak_basis.startswith("L2 roof: ")
    assert peak_share_text(p) == "40% of L2 roof 200 GB/s"
    assert p.working_set_bytes == 120_000 and p.intensity_flop_per_byte == pytest.approx(1 / 12)
    write_csv([p], tmp_path / "r.csv")
    [back] = read_csv(tmp_path / "r.csv")
    assert (back.memory_level, back.roof_level, back.roof_share, back.working_set_bytes) == (
        "L2",
        "L2",
        p.roof_share,
        120_000,
    )


def test_a_point_over_its_roof_says_why_in_the_cli_line(home, cpu_record):
    _seed(cpu_record, clock_ghz=3.0, busy="other programs used 80% of the CPU")
    w = get_workload("vector_add")
    p = _point(size=100_000_000, median_s=0.06, throughput=20.0, throughput_unit="GB/s", threads=1)
    p = peaks.place_point(p, w.flops(p.size), w.bytes_moved(p.size), w.working_set_bytes(p.size))
    assert p.roof_level == "DRAM" and p.roof_share == pytest.approx(20.0 / 12.0, rel=1e-3)
    assert "measured while other programs used the CPU" in p.roof_note
    assert peak_share_text(p).startswith("166.7% of DRAM roof 12 GB/s: the DRAM roof (12 GB/s) was measured")
    assert p.roof_note in peak_note(p)


# --- the command line ---------------------------------------------------------------------------


def _cli(home_dir, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEVICE_EXPLORER_HOME": str(home_dir)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.slow
def test_devices_json_carries_every_ceiling_with_its_level_range_time_and_quiet(home):
    _seed_this_machine(clock_ghz=3.0)
    out = _cli(home, "devices", "--json", "--catalog")
    assert out.returncode == 0, out.stderr
    roofs = {r["device"]: r for r in json.loads(out.stdout)["roofs"]}
    cpu = roofs["cpu"]
    assert cpu["measured_clock_ghz"] == 3.0 and cpu["note"].startswith("measured ")
    assert cpu["quiet"] is True and cpu["measured_at"] > 0
    memory = [c for c in cpu["ceilings"] if c["quantity"] == "memory"]
    assert [c["level"] for c in memory] == ["L1", "L2", "L3", "DRAM"]
    for c in memory:
        assert c["ws_lo_bytes"] < c["ws_hi_bytes"] and c["measured_at"] > 0 and c["quiet"] is True
        assert c["unit"] == "GB/s"
    peak = next(c for c in cpu["ceilings"] if c["name"] == "FP32 peak")
    assert peak["basis"].startswith("measured clock 3.00 GHz x ") and peak["unit"] == "GFLOP/s"
    assert cpu["ridge_flop_per_byte"] == pytest.approx(peak["value"] / 12.0)
    h100 = roofs["catalog:h100-sxm5"]["ceilings"]
    assert {c["kind"] for c in h100} == {"spec sheet"} and h100[1]["level"] == "DRAM"
    # the CPU's own record carries the measured clock, the peak built on it and the DRAM bandwidth
    [rec] = [d for d in json.loads(out.stdout)["devices"] if d["kind"] == "cpu"]
    assert rec["clock_measured_ghz"] == 3.0 and rec["clock_measured_basis"].startswith("test seed; measured ")
    assert rec["fp32_peak_gflops"] == peak["value"] and rec["fp32_peak_basis"] == peak["basis"]
    assert rec["fp32_measured_gflops"] == 50.0 and rec["fp32_measured_basis"].startswith("sgemm: ")
    assert rec["memory_bandwidth_gbps"] == 12.0 and rec["memory_bandwidth_basis"].startswith("measured, DRAM")
    assert "memory_bandwidth_gbps" not in rec["unavailable"]
    assert [c["level"] for c in rec["caches"]] and rec["caches"][0]["size_bytes"] > 0


@pytest.mark.slow
def test_devices_lists_the_levels_and_a_damaged_file_is_moved_aside_with_a_notice(home):
    _seed_this_machine(clock_ghz=3.0)
    out = _cli(home, "devices")
    assert out.returncode == 0, out.stderr
    assert "L2 (measured): 200 GB/s over working sets" in out.stdout
    assert "DRAM (measured): 12 GB/s" in out.stdout and "on a quiet machine" in out.stdout
    store.store_path().write_text("[" * 100_000 + "]" * 100_000)
    out = _cli(home, "devices", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert "could not be used (its JSON is nested too deeply), so the file was moved to" in out.stderr
    assert json.loads(out.stdout)["roofs"][0]["note"] == "not measured yet on this machine"
    assert [p.name for p in home.iterdir() if ".damaged-" in p.name]


@pytest.mark.slow
def test_bench_vector_add_points_carry_their_roof_level_and_share(home):
    _seed_this_machine(clock_ghz=3.0)
    out = _cli(
        home,
        "bench",
        "vector_add",
        "--device",
        "cpu",
        "--sizes",
        "1000",
        "1000000",
        "--repeats",
        "3",
        "--json",
    )
    assert out.returncode == 0, out.stderr
    first, second = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert first["throughput_unit"] == "GB/s" and first["gbps"] == pytest.approx(first["throughput"])
    assert first["intensity_flop_per_byte"] == pytest.approx(1 / 12) and first["bound"] == "memory"
    assert (first["memory_level"], first["roof_level"]) == ("L1", "L1")
    assert second["roof_level"] == "L3" and second["working_set_bytes"] == 12_000_000
    for p in (first, second):
        # roof_share is rounded to 4 decimals: compare it with that rounding's own tolerance
        assert p["roof_share"] == pytest.approx(
            p["gbps"] / p["bandwidth_ceiling_gbps"], rel=0, abs=0.5e-4 + 1e-12
        )
        assert p["peak"] == p["bandwidth_ceiling_gbps"] and p["peak_kind"] == "measured"


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(peaks, "_book", RoofBook())
    monkeypatch.setattr(peaks, "_checked", set())
    store.take_notice()
    return tmp_path / "home"


def _cpu_with_caches():
    from explorer.devices.model import CpuDevice

    return CpuDevice(
        name="Test CPU",
        key="cpu",
        physical_cores=2,
        logical_cores=2,
        caches=[CpuCache("L1", 32 << 10, 2), CpuCache("L2", 1 << 20, 2), CpuCache("L3", 32 << 20, 1)],
    )


def _roof(
    fp: str, dram: float = 12.0, *, busy: str = "", clock_ghz: float = 3.0, at: float | None = None
) -> MeasuredRoof:
    now = time.time() if at is None else at
    return MeasuredRoof(
        "cpu",
        fp,
        now,
        clock_ghz=clock_ghz,
        clock_threads=os.cpu_count(),
        clock_method="test seed",
        ceilings=[
            Ceiling("compute", 50.0, "measured", "sgemm", "seed", now),
            *levels(now, L1=400.0, L2=200.0, L3=150.0, DRAM=dram),
        ],
        busy_reason=busy,
    )


def _seed(rec, clock_ghz: float, busy: str = "", fp: str | None = None) -> None:
    """A stored roof for ``rec`` (a quiet one replaces anything; a busy one replaces a busy one)."""
    path = store.store_path()
    if busy and path.exists():
        path.unlink()
    store.save(_roof(fp or fingerprint(rec), clock_ghz=clock_ghz, busy=busy))
    peaks.forget_roof("cpu")


def _seed_this_machine(clock_ghz: float) -> None:
    """A quiet stored roof for this very machine (its real fingerprint), so the CLI measures nothing."""
    from explorer.devices.discover import discover

    cpu = next(d for d in discover(include_catalog=False, probe_gpus=False).devices if d.kind == "cpu")
    store.save(_roof(fingerprint(cpu), clock_ghz=clock_ghz))
