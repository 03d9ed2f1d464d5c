"""True peaks and measured ceilings: the CPU's FP32 peak from its measured clock, the per-machine
cache of measured ceilings, and where each point sits on its device's roofline."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from explorer.bench import ceilings, peaks
from explorer.bench.ceilings import Ceiling, MeasuredRoof
from explorer.bench.clock import CHAIN_OPS, chain_kernel, chain_reference, measure_clock
from explorer.bench.compare import peak_note, peak_share_text
from explorer.bench.results import BenchPoint, read_csv, write_csv
from explorer.bench.roofline import Roof, place, plot_range, segments
from explorer.bench.workloads import get_workload
from explorer.devices.isa import cpu_fp32_peak_gflops, flops_per_cycle

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


def test_peak_arithmetic_and_basis_text_from_the_measured_clock(home, cpu_record):
    assert cpu_fp32_peak_gflops(3.35, 2, flops_per_cycle(["avx512f"])) == pytest.approx(428.8)
    _seed(clock_ghz=3.35)
    roof = peaks.device_roof("cpu")
    peak = roof.ceilings[0]
    assert (peak.quantity, peak.kind, peak.value) == ("compute", "theoretical", pytest.approx(428.8))
    assert peak.basis.startswith("measured clock 3.35 GHz x 2 cores x 64 FLOP/cycle (AVX-512")
    assert "2 FMA pipes assumed" in peak.basis
    assert peaks.fp32_peak_gflops("cpu") == pytest.approx(428.8)  # fresh in the cache: not re-measured
    basis = peaks.peak_basis("cpu", "GFLOP/s")
    # built on a clock measured here: a theoretical peak, not an estimate from a reported clock
    assert basis.kind == "theoretical" and not basis.is_estimate and basis.text == peak.basis


def test_without_a_measured_clock_the_reported_clock_estimate_stands(home, cpu_record):
    roof = peaks.device_roof("cpu")
    assert [c.basis for c in roof.ceilings] == ["estimate from maximum clock"]
    assert roof.ceilings[0].estimate and peaks.peak_basis("cpu", "GFLOP/s").is_estimate
    assert roof.note == "not measured yet on this machine"


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


# --- the per-machine cache ----------------------------------------------------------------------


def test_cache_fresh_stale_other_machine_and_absent(home):
    fp = "cpu|test|2c/2t"
    assert ceilings.load("cpu", fp) == ("absent", None)
    roof = MeasuredRoof("cpu", fp, measured_at=1000.0, clock_ghz=3.0, ceilings=[_triad(20.0)])
    ceilings.save(roof)
    status, back = ceilings.load("cpu", fp, now=1000.0 + 3600)
    assert status == "fresh" and back == roof
    assert ceilings.load("cpu", fp, now=1000.0 + ceilings.STALE_AFTER_S + 1)[0] == "stale"
    assert ceilings.load("cpu", "cpu|another|8c/16t", now=1001.0)[0] == "other machine"
    assert ceilings.load("cuda:0", fp)[0] == "absent"


def test_a_roof_measured_while_other_programs_were_busy_is_measured_again(home):
    fp = "cpu|test|2c/2t"
    busy = MeasuredRoof("cpu", fp, measured_at=1000.0, clock_ghz=3.0, ceilings=[_triad(4.0)])
    busy.others_cpu_share = 0.87
    ceilings.save(busy)
    status, back = ceilings.load("cpu", fp, now=1000.0 + 60)
    assert status == "stale" and back is not None and back.others_cpu_share == 0.87
    quiet = MeasuredRoof("cpu", fp, measured_at=1000.0, clock_ghz=3.0, ceilings=[_triad(20.0)])
    quiet.others_cpu_share = 0.02
    ceilings.save(quiet)
    assert ceilings.load("cpu", fp, now=1000.0 + 60)[0] == "fresh"


def test_a_roof_measured_while_busy_says_so_on_its_label_and_in_the_note(home, cpu_record):
    roof = MeasuredRoof("cpu", peaks.fingerprint("cpu"), time.time(), clock_ghz=3.0, ceilings=[_triad(4.0)])
    roof.others_cpu_share = 0.87
    ceilings.save(roof)
    shown = peaks.device_roof("cpu")
    triad = next(c for c in shown.ceilings if c.name == "STREAM triad")
    assert triad.label == "STREAM triad (measured while busy): 4 GB/s"
    assert "other programs used 87% of the CPU meanwhile" in shown.note
    assert "stale: measured again on the next run" in shown.note
    roof.others_cpu_share = 0.02  # a quiet measurement is labelled plainly
    ceilings.save(roof)
    quiet = next(c for c in peaks.device_roof("cpu").ceilings if c.name == "STREAM triad")
    assert quiet.label == "STREAM triad (measured): 4 GB/s"


def test_a_damaged_cache_is_moved_aside_not_fatal(home):
    path = ceilings.cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json", encoding="utf-8")
    assert ceilings.load("cpu", "x") == ("absent", None)
    (aside,) = path.parent.glob(path.name + ".damaged-*")  # explorer.statefile's name for it
    assert aside.read_text(encoding="utf-8") == "{not json" and not path.exists()


def test_ensure_measured_reuses_fresh_and_remeasures_stale_other_machine_or_forced(
    home, cpu_record, monkeypatch
):
    calls: list[bool] = []

    def fake_measure(fp: str, *, clock_only: bool = False, **_: object) -> MeasuredRoof:
        calls.append(clock_only)
        return MeasuredRoof(
            "cpu", fp, time.time(), clock_ghz=3.1, ceilings=[] if clock_only else [_triad(15.0)]
        )

    monkeypatch.setattr(ceilings, "measure_cpu_roof", fake_measure)
    _seed(clock_ghz=3.0)
    assert peaks.ensure_measured("cpu").clock_ghz == 3.0 and calls == []  # fresh and complete
    peaks.ensure_measured("cpu", force=True)
    assert calls == [False]
    _seed(clock_ghz=3.0, measured_at=time.time() - ceilings.STALE_AFTER_S - 10)
    peaks.ensure_measured("cpu", clock_only=True)
    assert calls == [False, True]
    _seed(clock_ghz=3.0, fingerprint="cpu|some other machine")
    assert peaks.ensure_measured("cpu").clock_ghz == 3.1 and calls == [False, True, False]
    assert ceilings.load("cpu", peaks.fingerprint("cpu"))[0] == "fresh"


def test_a_roof_measured_while_busy_is_measured_once_per_run_so_every_point_has_one_peak(
    home, cpu_record, monkeypatch
):
    """On a busy machine the measured roof is disturbed, which counts as stale. The worker of one
    run measures it once and keeps it for every later point (one peak for the plot's line, the
    caption and every row); the next run's worker measures it again."""
    calls: list[bool] = []

    def busy_measure(fp: str, *, clock_only: bool = False, **_: object) -> MeasuredRoof:
        calls.append(clock_only)
        return MeasuredRoof(
            "cpu",
            fp,
            time.time(),
            clock_ghz=2.5 + 0.1 * len(calls),  # each measurement under load reads another clock
            ceilings=[] if clock_only else [_triad(10.0 + len(calls))],
            others_cpu_share=0.6,
        )

    monkeypatch.setattr(ceilings, "measure_cpu_roof", busy_measure)
    monkeypatch.setattr(peaks, "_measured_here", {})
    _seed(clock_ghz=3.0, ceilings_=[])
    ceilings.save(replace(ceilings.load("cpu", peaks.fingerprint("cpu"))[1], others_cpu_share=0.7))
    # the run's first point measures the whole roof (the cached one was measured while busy) ...
    assert peaks.ensure_measured_quietly("cpu") == "" and calls == [False]
    first_peak = peaks.fp32_peak_gflops("cpu")
    # ... and every later point, asking for the peak or the roof, gets that same roof
    for _ in range(3):
        assert peaks.ensure_measured_quietly("cpu") == ""
        assert peaks.fp32_peak_gflops("cpu") == first_peak
    assert calls == [False]
    assert ceilings.load("cpu", peaks.fingerprint("cpu"))[0] == "stale"  # still marked busy
    # asked to measure again, it does
    peaks.ensure_measured("cpu", force=True)
    assert calls == [False, False]
    # another program's newer roof in the cache is not this worker's: measured again
    _seed(clock_ghz=3.3)
    ceilings.save(replace(ceilings.load("cpu", peaks.fingerprint("cpu"))[1], others_cpu_share=0.7))
    peaks.ensure_measured("cpu")
    assert calls == [False, False, False]
    # the next run is a new worker: the busy roof is measured again
    monkeypatch.setattr(peaks, "_measured_here", {})
    peaks.ensure_measured("cpu", clock_only=True)
    assert calls == [False, False, False, True]


def test_gpu_ceilings_code_path_runs_against_any_torch_device(monkeypatch):
    """The GPU's sgemm and device-copy measurement, run on the CPU (no GPU here): same code, same records."""
    import torch

    monkeypatch.setattr(ceilings, "MATMUL_SIZES_GPU", (64, 128))
    monkeypatch.setattr(ceilings, "COPY_BYTES_GPU", 1 << 20)
    before = torch.get_float32_matmul_precision()
    roof = ceilings.measure_gpu_roof(torch, torch.device("cpu"), "gpu|fake", "cuda:0", budget_s=0.05)
    compute, memory = roof.ceiling("compute"), roof.ceiling("memory")
    assert (
        compute is not None and compute.kind == "measured" and compute.name == "sgemm" and compute.value > 0
    )
    assert "TF32 off" in compute.basis
    assert memory is not None and memory.name == "device copy" and "read + write" in memory.basis
    assert torch.get_float32_matmul_precision() == before  # restored to what it was


def test_triad_counts_bytes_as_stream_does():
    gbps = ceilings.stream_triad_gbps(1 << 16, passes=3)
    assert gbps > 0  # it checked its own result; a loaded machine makes a tiny triad slow
    elements, rule = ceilings.triad_array_elements(32 * 2**20, 64 * 2**30)
    assert elements * 8 == 4 * 32 * 2**20 and "4 x the 32 MiB last-level cache" in rule
    elements, rule = ceilings.triad_array_elements(None, 64 * 2**30)
    assert elements * 8 == ceilings.TRIAD_MIN_ARRAY_BYTES
    elements, rule = ceilings.triad_array_elements(1 << 30, 2 << 30)  # would not fit: capped
    assert 3 * elements * 8 <= (2 << 30) // 4 and "quarter of the free memory" in rule


# --- roofline geometry, intensity and bound -----------------------------------------------------

CPU_ROOF = Roof(
    "cpu",
    "CPU",
    [
        Ceiling("compute", 400.0, "theoretical", "FP32 peak", "measured clock"),
        Ceiling("compute", 340.0, "measured", "sgemm", "torch"),
        Ceiling("memory", 10.0, "measured", "STREAM triad", "triad"),
    ],
)


def test_ridge_point_is_peak_over_bandwidth_and_the_roof_bends_there():
    ridge = CPU_ROOF.ridge_flop_per_byte
    assert ridge == pytest.approx(400.0 / 10.0)  # the highest compute roof over the highest memory roof
    assert CPU_ROOF.attainable_gflops(ridge) == pytest.approx(400.0)
    assert CPU_ROOF.attainable_gflops(ridge / 8) == pytest.approx(10.0 * ridge / 8)
    assert CPU_ROOF.attainable_gflops(ridge * 8) == pytest.approx(400.0)
    assert Roof("cpu", "CPU", [CPU_ROOF.ceilings[0]]).ridge_flop_per_byte is None  # no memory roof


@pytest.mark.parametrize(
    ("workload", "size", "intensity", "bound"),
    [
        ("vector_add", 10_000_000, 1 / 12, "memory"),
        ("matvec", 1_000_000, pytest.approx(0.495, abs=0.01), "memory"),
        ("copies", 1 << 20, 0.0, "memory"),  # no arithmetic at all
        ("matmul", 64, 64 * 2 / 12, "memory"),  # 10.7 FLOP/byte: under the slanted roof
        ("matmul", 2048, 2048 * 2 / 12, "compute"),
    ],
)
def test_intensity_and_bound_per_workload(workload, size, intensity, bound):
    w = get_workload(workload)
    p = place(w.flops(size), w.bytes_moved(size), 1e-3, CPU_ROOF)
    assert p.intensity_flop_per_byte == (intensity if intensity is None else pytest.approx(intensity))
    assert p.bound == bound
    assert p.gbps == pytest.approx(w.bytes_moved(size) / 1e-3 / 1e9)
    assert p.memory_ceiling is not None and p.memory_ceiling.name == "STREAM triad"


def test_memory_bound_workloads_report_gb_per_s():
    for name in ("vector_add", "matvec", "copies"):
        assert get_workload(name).unit == "GB/s"


def test_plot_range_holds_every_point_and_ridge():
    lo, hi = plot_range([CPU_ROOF], [1 / 12, 300.0])
    assert lo <= 1 / 12 / 4 and hi >= 300.0 * 4 and lo < 40 < hi


def test_catalog_roof_comes_from_the_spec_sheet():
    roof = peaks.catalog_roof("h100-sxm5")
    assert {c.kind for c in roof.ceilings} == {"spec sheet"}
    assert roof.top("compute").value == 66900.0 and roof.top("memory").value == 3350.0
    assert roof.ridge_flop_per_byte == pytest.approx(66900 / 3350)


# --- no share above 100% without its reason -----------------------------------------------------


def _point(**kw: object) -> BenchPoint:
    base = dict(workload="vector_add", variant="cpu numpy", device="cpu", size=100_000, size_label="N=100000")
    base.update(kw)
    return BenchPoint(**base)  # type: ignore[arg-type]


def test_a_point_above_the_measured_bandwidth_says_it_ran_from_cache():
    p = _point(
        median_s=1e-5, throughput=120.0, throughput_unit="GB/s", peak=10.0, peak_kind="measured", gbps=120.0
    )
    assert peak_share_text(p) == "1200% of measured bandwidth 10 GB/s: fits in cache"
    assert "served from the caches" in peak_note(p) and "1.2 MB" in peak_note(p)
    below = _point(median_s=1e-2, throughput=8.0, throughput_unit="GB/s", peak=10.0, peak_kind="measured")
    assert peak_share_text(below) == "80% of measured bandwidth 10 GB/s"


def test_a_point_above_the_clock_based_peak_says_why():
    basis = "measured clock 2.99 GHz x 2 cores x 64 FLOP/cycle (AVX-512: ...)"
    p = _point(
        workload="matmul",
        median_s=1e-3,
        throughput=390.0,
        throughput_unit="GFLOP/s",
        peak=382.7,
        peak_basis=basis,
        peak_is_estimate=False,  # built on the measured clock
        peak_kind="theoretical",
    )
    assert peak_share_text(p).endswith(": cores ran above the measured clock")
    assert "re-measure the ceilings on a quiet machine" in peak_note(p)


def test_place_point_fills_the_roofline_fields_and_csv_keeps_them(home, cpu_record, tmp_path):
    _seed(clock_ghz=3.0, ceilings_=[_triad(10.0)])
    w = get_workload("vector_add")
    p = _point(size=10_000_000, median_s=0.012, throughput=10.0, throughput_unit="GB/s")
    peaks.place_point(p, w.flops(p.size), w.bytes_moved(p.size))
    assert p.bound == "memory" and p.intensity_flop_per_byte == pytest.approx(1 / 12)
    assert p.gbps == pytest.approx(10.0) and p.gflops == pytest.approx(10_000_000 / 0.012 / 1e9)
    assert p.bandwidth_ceiling_gbps == 10.0 and p.bandwidth_ceiling_basis.startswith(
        "STREAM triad (measured)"
    )
    assert p.ridge_flop_per_byte == pytest.approx(3.0 * 2 * 64 / 10.0)
    write_csv([p], tmp_path / "r.csv")
    [back] = read_csv(tmp_path / "r.csv")
    assert (back.bound, back.intensity_flop_per_byte, back.gbps) == (
        p.bound,
        p.intensity_flop_per_byte,
        p.gbps,
    )


# --- the command line ---------------------------------------------------------------------------


def _cli(home_dir, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEVICE_EXPLORER_HOME": str(home_dir)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_devices_json_carries_the_roof_with_its_basis(home):
    _seed_this_machine(clock_ghz=3.0)
    out = _cli(home, "devices", "--json", "--catalog")
    assert out.returncode == 0, out.stderr
    roofs = {r["device"]: r for r in json.loads(out.stdout)["roofs"]}
    cpu = roofs["cpu"]
    assert cpu["measured_clock_ghz"] == 3.0 and cpu["note"].startswith("measured ")
    kinds = {(c["name"], c["kind"]) for c in cpu["ceilings"]}
    assert kinds == {("FP32 peak", "theoretical"), ("sgemm", "measured"), ("STREAM triad", "measured")}
    peak = next(c for c in cpu["ceilings"] if c["name"] == "FP32 peak")
    assert peak["basis"].startswith("measured clock 3.00 GHz x ") and peak["unit"] == "GFLOP/s"
    assert cpu["ridge_flop_per_byte"] == pytest.approx(peak["value"] / 12.5)
    assert roofs["catalog:h100-sxm5"]["ceilings"][0]["kind"] == "spec sheet"
    # the CPU's own record carries the measured clock, the peak built on it and the bandwidth
    [rec] = [d for d in json.loads(out.stdout)["devices"] if d["kind"] == "cpu"]
    assert rec["clock_measured_ghz"] == 3.0 and rec["clock_measured_basis"].startswith("test seed; measured ")
    assert rec["fp32_peak_gflops"] == peak["value"] and rec["fp32_peak_basis"] == peak["basis"]
    assert rec["fp32_measured_gflops"] == 50.0 and rec["fp32_measured_basis"].startswith("sgemm: ")
    assert rec["memory_bandwidth_gbps"] == 12.5 and rec["memory_bandwidth_basis"].startswith(
        "measured, STREAM triad"
    )
    assert "memory_bandwidth_gbps" not in rec["unavailable"]


def test_bench_vector_add_points_carry_gbps_intensity_and_bound(home):
    _seed_this_machine(clock_ghz=3.0)
    out = _cli(
        home, "bench", "vector_add", "--device", "cpu", "--sizes", "1000000", "--repeats", "3", "--json"
    )
    assert out.returncode == 0, out.stderr
    [point] = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert point["throughput_unit"] == "GB/s" and point["gbps"] == pytest.approx(point["throughput"])
    assert point["intensity_flop_per_byte"] == pytest.approx(1 / 12)
    assert point["bound"] == "memory"
    assert point["peak"] == 12.5 and point["peak_kind"] == "measured"
    assert point["bandwidth_ceiling_gbps"] == 12.5


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _triad(gbps: float) -> Ceiling:
    return Ceiling("memory", gbps, "measured", "STREAM triad", "triad", time.time())


def _seed(
    clock_ghz: float, measured_at: float | None = None, fingerprint: str | None = None, ceilings_=None
) -> None:
    ceilings.save(
        MeasuredRoof(
            "cpu",
            fingerprint or peaks.fingerprint("cpu"),
            time.time() if measured_at is None else measured_at,
            clock_ghz=clock_ghz,
            clock_threads=4,
            ceilings=[_triad(20.0)] if ceilings_ is None else ceilings_,
        )
    )


def _seed_this_machine(clock_ghz: float) -> None:
    """A fresh cache entry for this very machine (its real fingerprint), so the CLI measures nothing."""
    peaks.device_record.cache_clear()
    now = time.time()
    ceilings.save(
        MeasuredRoof(
            "cpu",
            peaks.fingerprint("cpu"),
            now,
            clock_ghz=clock_ghz,
            clock_threads=os.cpu_count(),
            clock_method="test seed",
            ceilings=[Ceiling("compute", 50.0, "measured", "sgemm", "seed", now), _triad(12.5)],
        )
    )


def test_segments_meet_at_the_ridge_and_lower_ceilings_stay_under_the_roof():
    lo, hi = 1 / 16, 1000.0
    segs = {s.ceiling.name: s for s in segments(CPU_ROOF, lo, hi)}
    ridge = CPU_ROOF.ridge_flop_per_byte
    triad, peak, sgemm = segs["STREAM triad"], segs["FP32 peak"], segs["sgemm"]
    assert (triad.x0, triad.y0) == (lo, pytest.approx(10.0 * lo))
    assert (triad.x1, triad.y1) == (
        pytest.approx(ridge),
        pytest.approx(400.0),
    )  # the slanted roof ends at the ridge
    assert (peak.x0, peak.y0, peak.x1) == (pytest.approx(ridge), 400.0, hi)  # the flat roof starts there
    assert sgemm.x0 == pytest.approx(340.0 / 10.0) and sgemm.y0 == sgemm.y1 == 340.0
    for s in segs.values():  # no ceiling is drawn above the roofline itself
        for x, y in ((s.x0, s.y0), (s.x1, s.y1)):
            assert y <= CPU_ROOF.attainable_gflops(x) * (1 + 1e-9)


def test_a_roof_sent_by_another_machine_is_rebuilt_and_checked():
    from explorer.bench.ceilings import Ceiling
    from explorer.bench.roofline import Roof

    sent = Roof(
        "cpu",
        "Intel Xeon",
        [
            Ceiling("compute", 900.0, "theoretical", "FP32 peak", "cores x clock"),
            Ceiling("memory", 40.0, "measured", "STREAM triad", "triad", 1000.0),
        ],
        note="measured 2 days ago",
    ).to_dict()
    sent["ceilings"] += [
        {**sent["ceilings"][0], "value": -1},  # not a rate
        {**sent["ceilings"][0], "value": "nan"},  # not finite
        {**sent["ceilings"][0], "quantity": "magic"},  # not a ceiling
        "rm -rf /",
    ]
    roof = Roof.from_dict(sent, host="gpu-lab")
    assert roof.host == "gpu-lab" and roof.title == "Intel Xeon ON gpu-lab"
    assert [(c.quantity, c.value) for c in roof.ceilings] == [("compute", 900.0), ("memory", 40.0)]
    assert roof.ridge_flop_per_byte == 900.0 / 40.0 and roof.note == "measured 2 days ago"
    for bad in (None, [], {"device": "", "name": "x"}, {"device": "cpu"}):
        with pytest.raises(ValueError):
            Roof.from_dict(bad)
