"""Roofs that hold still, on synthetic sweeps and stored records: DRAM is counted only well past the
last-level cache and never above the app's own streams, the measured FP32 ceiling is the one
shares are taken against, a remeasure that moves is turned away, and the method travels with each
ceiling (old files without it still load)."""

from __future__ import annotations

import json
import random

import pytest

from explorer.bench import ceilings, sweep
from explorer.roofs import store
from explorer.roofs.model import FMA_NAME, Ceiling, Method, Roof, unsteady_changes
from explorer.roofs.placement import place
from explorer.roofs.plateaus import (
    STREAM_TOLERANCE,
    CacheSize,
    DramFigure,
    above_streams,
    dram_figure,
    find_plateaus,
)
from explorer.roofs.texts import peak_gap_text, roof_lines
from tests.roofs.levels import levels

KIB, MIB = 1 << 10, 1 << 20
LLC = 32 * MIB
CACHES = [CacheSize("L1", 64 * KIB, 2), CacheSize("L2", 2 * MIB, 2), CacheSize("L3", LLC, 1)]


def _sizes(last: float = 8 * LLC) -> list[int]:
    return sweep.sizes(int(last), first_bytes=4 * KIB, growth=1.2)


def _staircase(rate_at, sizes: list[int], noise: float = 0.0, seed: int = 0) -> sweep.SweepResult:
    """A sweep whose triad follows ``rate_at(working set)``, read and copy a little below it."""
    rng = random.Random(seed)
    triad = [rate_at(w) * (1 + rng.gauss(0, noise)) for w in sizes]
    result = sweep.SweepResult(threads=2, ws_bytes=sizes)
    result.gbps = {"read": [g * 0.93 for g in triad], "copy": [g * 0.96 for g in triad], "triad": triad}
    return result


def _into_the_llc(w: float) -> float:
    """L1 450, L2 225, L3 184 GB/s; then a flat 60 GB/s up to 3x the LLC (part of every stream still
    hits the L3), and the memory's own 40 GB/s from 3.5x on."""
    if w <= 64 * KIB:
        return 450.0
    if w <= 2 * MIB:
        return 225.0
    if w <= LLC:
        return 184.0
    if w <= 3 * LLC:
        return 60.0
    return 40.0


# --- DRAM past the last-level cache ----------------------------------------------------------------


def test_a_plateau_reaching_into_the_llc_is_not_taken_as_dram():
    result = _staircase(_into_the_llc, _sizes())
    # the plateau finder alone names the 60 GB/s stretch (1x to 3x the LLC) DRAM: the bias fixed here
    named = {p.level: p for p in find_plateaus(result.ws_bytes, result.envelope(), CACHES) if p.level}
    assert named["DRAM"].gbps == pytest.approx(60.0, rel=0.02) and named["DRAM"].ws_lo_bytes < 2 * LLC
    found = {c.level: c for c in ceilings.level_ceilings(result, CACHES, 1000.0, "2 threads")}
    dram = found["DRAM"]
    assert dram.value == pytest.approx(40.0, rel=0.01)
    assert dram.ws_lo_bytes >= 4 * LLC and dram.method is not None
    assert all(s >= 4 * LLC for s in dram.method.sizes_bytes) and len(dram.method.sizes_bytes) >= 3
    assert "past every cache" in dram.basis and "flat over" in dram.basis
    assert found["L3"].value == pytest.approx(184.0, rel=0.02)


@pytest.mark.parametrize("seed", range(10))
def test_dram_is_the_fastest_kernels_median_over_the_sizes_past_four_times_the_llc(seed):
    sizes = _sizes()
    result = _staircase(_into_the_llc, sizes, noise=0.02, seed=seed)
    figure = dram_figure(result.ws_bytes, result.gbps, LLC)
    assert isinstance(figure, DramFigure)
    far = [i for i, w in enumerate(sizes) if w >= 4 * LLC]
    expected = sorted(result.gbps["triad"][i] for i in far)
    mid = len(expected) // 2
    median = expected[mid] if len(expected) % 2 else (expected[mid - 1] + expected[mid]) / 2
    assert figure.kernel == "triad" and figure.gbps == pytest.approx(median, rel=1e-12)
    assert figure.flat and figure.points == len(far) and figure.ws_lo_bytes == sizes[far[0]]


def test_too_few_sizes_past_the_llc_measure_no_dram_and_say_why():
    sizes = _sizes(last=5 * LLC)  # the free memory stopped the sweep at 5x the LLC: 2 sizes past 4x
    result = _staircase(_into_the_llc, sizes)
    why = dram_figure(result.ws_bytes, result.gbps, LLC)
    assert isinstance(why, str) and "DRAM not measured" in why and "128 MiB" in why
    assert "DRAM" not in {c.level for c in ceilings.level_ceilings(result, CACHES, 1000.0, "x")}


def test_a_dram_stretch_that_is_not_flat_takes_its_largest_sizes_and_says_so():
    sizes = _sizes(last=16 * LLC)
    result = _staircase(lambda w: _into_the_llc(w) if w < 4 * LLC else 40.0 * (8 * LLC / w) ** 0.3, sizes)
    figure = dram_figure(result.ws_bytes, result.gbps, LLC)
    assert isinstance(figure, DramFigure) and not figure.flat and figure.points == 3
    assert figure.ws_hi_bytes == sizes[-1] and figure.spread > 1.15
    assert "not flat" in figure.words


# --- never above the app's own streams ---------------------------------------------------------------


def _dram(value: float) -> Ceiling:
    return next(c for c in levels(1000.0, DRAM=value) if c.level == "DRAM")


def test_a_dram_figure_above_the_read_stream_is_refused():
    streams = {"read": 35.0, "triad": 33.0}
    checked = ceilings.checked_dram([_dram(47.3)], streams, 840 * MIB, 2, 1000.0)
    [dram] = checked
    assert dram.value == 35.0 and dram.level == "DRAM" and dram.kind == "measured"
    assert "refused" in dram.basis and "1.35x the app's own read stream" in dram.basis
    assert dram.method is not None and dram.method.sizes_bytes == (840 * MIB,)


def test_a_dram_figure_within_the_streams_stands_and_says_what_it_was_checked_against():
    [dram] = ceilings.checked_dram([_dram(34.8)], {"read": 35.9, "triad": 34.0}, 840 * MIB, 2, 1000.0)
    assert dram.value == 34.8 and "within the app's own streams over 840 MiB" in dram.basis


def test_no_dram_figure_from_the_sweep_takes_the_fastest_stream():
    l3 = [c for c in levels(1000.0) if c.level != "DRAM"]
    checked = ceilings.checked_dram(l3, {"read": 30.0, "triad": 31.5}, 840 * MIB, 2, 1000.0)
    assert checked[:-1] == l3 and checked[-1].level == "DRAM" and checked[-1].value == 31.5


def test_above_streams_refuses_exactly_what_passes_the_fastest_stream_beyond_its_noise():
    rng = random.Random(7)
    for _ in range(2000):
        streams = {"read": rng.uniform(1, 100), "triad": rng.uniform(1, 100)}
        value = rng.uniform(1, 150)
        refused = above_streams(value, streams)
        assert bool(refused) == (value > max(streams.values()) * STREAM_TOLERANCE)
    assert above_streams(50.0, {}) == "" and above_streams(50.0, {"read": 0.0}) == ""


# --- the measured compute ceiling ----------------------------------------------------------------------


def _cpu_roof(fma: float | None, peak: float = 207.0, dram: float = 35.0) -> Roof:
    ceilings_ = [
        Ceiling(
            "compute", peak, "theoretical", "FP32 peak", "measured clock 3.24 GHz x 2 cores x 32 FLOP/cycle"
        )
    ]
    if fma is not None:
        ceilings_.append(Ceiling("compute", fma, "measured", FMA_NAME, "FMA-throughput loop", 1000.0))
    ceilings_.append(Ceiling("compute", 60.0, "measured", "sgemm", "torch.mm", 1000.0))
    return Roof("cpu", "Test CPU", [*ceilings_, *levels(1000.0, DRAM=dram)])


def test_a_measured_compute_ceiling_below_the_theoretical_one_is_used_for_shares():
    from explorer.bench.peaks import peak_ceiling

    roof = _cpu_roof(fma=110.0)
    assert roof.compute_roof().name == FMA_NAME
    assert roof.ridge_flop_per_byte == pytest.approx(110.0 / 35.0)
    # a compute-bound point (a big matmul: 100 FLOP per byte) is judged against the FMA ceiling
    where = place(flops=100e9, bytes_moved=1e9, seconds=1.0, roof=roof, working_set_bytes=8 * MIB)
    assert where.roof_level == "compute" and where.roof_share == pytest.approx(100.0 / 110.0)
    assert roof.attainable_gflops(1000.0) == 110.0
    chosen = peak_ceiling(roof, "compute")
    assert chosen is not None and chosen.value == 110.0 and chosen.kind == "measured"
    # the theoretical peak named beside it, and why they differ by more than a quarter
    assert "the theoretical peak is 207 GFLOP/s" in chosen.basis and "shared" in chosen.basis


def test_without_a_measured_ceiling_the_theoretical_peak_is_the_compute_roof():
    from explorer.bench.peaks import peak_ceiling

    roof = _cpu_roof(fma=None)
    assert roof.compute_roof().name == "FP32 peak" and peak_ceiling(roof, "compute").value == 207.0
    assert roof.ridge_flop_per_byte == pytest.approx(207.0 / 35.0)
    assert peak_gap_text(roof) == ""


def test_the_gap_is_said_only_beyond_a_quarter_and_named_in_the_roofs_lines():
    assert peak_gap_text(_cpu_roof(fma=160.0)) == ""  # 77%: within a quarter
    low = peak_gap_text(_cpu_roof(fma=110.0))
    assert low.startswith(
        "The measured FP32 ceiling (110 GFLOP/s) is 53% of the theoretical peak (207 GFLOP/s)"
    )
    assert "VM" in low and "power" in low and "AVX clock offsets" in low
    assert low in roof_lines(_cpu_roof(fma=110.0))
    high = peak_gap_text(_cpu_roof(fma=300.0))
    assert "145%" in high and "FMA pipes" in high


def test_the_devices_page_rows_show_the_measured_ceiling_beside_the_peak():
    from explorer.ui.roof_section import ceiling_rows, peak_rows

    roof = _cpu_roof(fma=110.0)
    names = [name for name, _, _ in ceiling_rows(roof)]
    assert names[:3] == ["FP32 peak (theoretical)", "FP32 FMA (measured)", "sgemm (measured)"]
    [(name, value, hover)] = peak_rows(roof)
    assert name == "Measured / theoretical FP32" and value == "53% of the theoretical peak"
    assert hover == peak_gap_text(roof)
    assert peak_rows(_cpu_roof(fma=None)) == []


# --- repeatable: a remeasure that moves is turned away ------------------------------------------------


def _method(version: int | None = None) -> Method:
    kwargs = {} if version is None else {"version": version}
    return Method("read, copy, triad sweep", 2, (1 << 20, 2 << 20), 5, "fastest of 5 passes", **kwargs)


def _measured(at: float, *, l1: float = 356.0, dram: float = 34.8, fma: float = 110.0, method=True, busy=""):
    m = _method() if method else None
    rows = [
        Ceiling("compute", fma, "measured", FMA_NAME, "FMA loop", at, method=m),
        *(
            Ceiling(
                "memory",
                c.value,
                "measured",
                c.name,
                c.basis,
                at,
                level=c.level,
                ws_lo_bytes=c.ws_lo_bytes,
                ws_hi_bytes=c.ws_hi_bytes,
                method=m,
            )
            for c in levels(at, L1=l1, DRAM=dram)
        ),
    ]
    return store.MeasuredRoof("cpu", "fp", at, clock_ghz=3.2, ceilings=rows, busy_reason=busy)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    store.take_notice()
    return tmp_path / "home"


def test_a_quiet_remeasure_within_ten_percent_of_every_level_replaces_the_stored_one(home):
    from explorer.bench.peaks import unsteady_against_stored

    store.save(_measured(1000.0))
    again = _measured(2000.0, l1=356.0 * 1.09, dram=34.8 * 0.92, fma=110.0 * 1.05)
    assert unsteady_changes(_measured(1000.0).ceilings, again.ceilings) == []
    assert unsteady_against_stored(again) is None


def test_an_unsteady_remeasure_keeps_the_earlier_value_and_says_the_machine_is_not_steady(home, monkeypatch):
    from explorer.bench import peaks

    first = _measured(1000.0)
    store.save(first)
    # the measurement itself replaced: L1 moved 356 -> 288 GB/s (-19%) between two quiet runs
    monkeypatch.setattr(ceilings, "measure_cpu_roof", lambda cpu, fp, **_: _measured(2000.0, l1=288.0))
    monkeypatch.setattr(peaks, "fingerprint", lambda rec: "fp")
    from explorer.devices.model import CpuDevice

    saved = peaks.ensure_measured("cpu", force=True, record=CpuDevice(name="Test CPU", key="cpu"))
    assert saved is not None and not saved.replaced
    assert "not steady" in saved.message and "L1 356 GB/s -> 288 GB/s (-19%)" in saved.message
    status, kept = store.load("cpu", "fp")
    assert status == "stored" and kept is not None and kept.measured_at == 1000.0
    assert kept.ceiling("memory", "L1").value == 356.0


def test_a_busy_or_differently_measured_stored_roof_is_no_yardstick(home):
    from explorer.bench.peaks import unsteady_against_stored

    store.save(_measured(1000.0, method=False))  # stored before methods were kept
    assert unsteady_against_stored(_measured(2000.0, l1=200.0)) is None
    old_version = _measured(1000.0)
    old_version.ceilings = [
        Ceiling(**{**c.__dict__, "method": _method(version=1)}) for c in old_version.ceilings
    ]
    store.save(old_version)
    assert unsteady_against_stored(_measured(2000.0, l1=200.0)) is None
    store.save(_measured(1000.0, busy="other programs used 80% of the CPU"))
    assert unsteady_against_stored(_measured(2000.0, l1=200.0)) is None


def test_the_method_is_stored_with_each_ceiling_and_old_files_without_it_still_load(home):
    store.save(_measured(1000.0))
    _, back = store.load("cpu", "fp")
    assert back is not None and all(c.method == _method() for c in back.ceilings)
    assert back.ceilings[1].method.text.startswith("read, copy, triad sweep on 2 threads over 2 working sets")
    # a file written before methods and streams were kept: the same entry without them
    data = json.loads(store.store_path().read_text())
    entry = data["roofs"]["cpu"]
    entry.pop("streams_gbps"), entry.pop("streams_bytes")
    for c in entry["ceilings"]:
        c.pop("method")
    store.store_path().write_text(json.dumps(data))
    status, old = store.load("cpu", "fp")
    assert status == "stored" and old is not None and store.take_notice() == ""
    assert [c.method for c in old.ceilings] == [None] * len(old.ceilings) and old.streams_gbps == {}


def test_a_damaged_method_is_refused_by_name():
    row = json.loads(json.dumps(_measured(1000.0).ceilings[1].to_dict()))
    assert Ceiling.from_dict(row).method == _method()
    row["method"]["threads"] = 0
    with pytest.raises(ValueError, match="method.threads"):
        Ceiling.from_dict(row)


# --- one CPU peak formula ---------------------------------------------------------------------------


def test_the_probes_estimate_and_the_roofs_theoretical_peak_are_one_formula(home):
    """On the same clock, the probe's estimate (on the reported clock) and the roof's theoretical
    peak (on the measured clock) are the same figure, said in the same words."""
    from explorer.devices.cpu import probe_cpu
    from explorer.devices.roofs import fingerprint, record_roof
    from tests.devices.test_cpu_probe import INTEL, _psutil

    for flags, mhz, cores in ((["avx", "fma"], 3000.0, 8), (["avx512f"], 2450.0, 2), (["sse2"], 1800.0, 4)):
        info = dict(INTEL, flags=flags)
        rec = probe_cpu(psutil_module=_psutil(physical=cores, freq=(mhz, mhz)), cpuinfo_info=info)
        store.save(store.MeasuredRoof("cpu", fingerprint(rec) or "", 1000.0, clock_ghz=mhz / 1000.0))
        peak = record_roof(rec).theoretical()
        assert peak is not None and peak.value == rec.fp32_peak_gflops and not peak.estimate
        estimate = next(n for n in rec.notes if n.startswith("theoretical FP32 peak estimate: "))
        said = estimate.removeprefix("theoretical FP32 peak estimate: ").removesuffix("; not a measurement")
        assert said.split(" x ", 1)[1] == peak.basis.split(" x ", 1)[1]  # "N cores x ... FLOP/cycle (...)"


def test_the_records_sgemm_stays_the_matmuls_beside_the_fma_ceiling(home):
    from explorer.devices.model import CpuDevice
    from explorer.devices.roofs import apply_measured, fingerprint, record_roof

    rec = CpuDevice(name="Test CPU", key="cpu", physical_cores=2, logical_cores=2, isa_flags=["avx512f"])
    m = _measured(1000.0, fma=132.0)
    m.fingerprint = fingerprint(rec) or ""
    m.ceilings.insert(1, Ceiling("compute", 38.1, "measured", "sgemm", "torch.mm", 1000.0))
    store.save(m)
    roof = record_roof(rec)
    apply_measured(rec, roof)
    assert rec.fp32_measured_gflops == 38.1 and rec.fp32_measured_basis.startswith("sgemm: ")
    assert roof.compute_roof().value == 132.0


# --- a GPU's DRAM roof, checked against its own read and copy streams -------------------------------


def _gpu_streams(read: float, copy: float):
    """A stand-in for ``gpu_sweep.sweep`` over one size: the streams' GB/s, and what it was asked."""
    asked: list[tuple[list[int], int]] = []

    def run(sizes: list[int], sms: int) -> sweep.SweepResult:
        asked.append((list(sizes), sms))
        return sweep.SweepResult(
            threads=132 * 8 * 256, ws_bytes=list(sizes), gbps={"read": [read], "copy": [copy]}
        )

    return run, asked


def test_a_gpu_dram_figure_above_its_streams_is_refused_and_the_fastest_stream_stands():
    run, asked = _gpu_streams(read=4310.04, copy=4402.96)
    found = levels(1000.0, DRAM=6120.0)
    checked, streams = ceilings.gpu_streams_checked(found, 960 * MIB, 132, 1000.0, run=run)
    assert asked == [([960 * MIB], 132)]  # the largest working set alone, on every SM
    assert streams == {"read": 4310.0, "copy": 4403.0}
    dram = next(c for c in checked if c.level == "DRAM")
    assert dram.value == 4403.0 and "refused" in dram.basis and "copy stream" in dram.basis
    assert dram.method is not None and dram.method.sizes_bytes == (960 * MIB,)
    assert dram.method.best_of == "fastest of 5 launches, each moving at least 4 GiB"
    assert "read, copy streams (numba, float64, grid-stride, every SM)" == dram.method.kernel
    assert [c for c in checked if c.level != "DRAM"] == [c for c in found if c.level != "DRAM"]


def test_a_gpu_dram_figure_within_its_streams_stands():
    run, _ = _gpu_streams(read=4310.0, copy=4403.0)
    checked, _ = ceilings.gpu_streams_checked(levels(1000.0, DRAM=4390.0), 960 * MIB, 132, 1000.0, run=run)
    dram = next(c for c in checked if c.level == "DRAM")
    assert dram.value == 4390.0 and "within the app's own streams over 960 MiB" in dram.basis


def test_streams_that_measured_nothing_leave_the_gpu_ceilings_as_they_were():
    run, _ = _gpu_streams(read=0.0, copy=0.0)
    found = levels(1000.0)
    checked, streams = ceilings.gpu_streams_checked(found, 960 * MIB, 132, 1000.0, run=run)
    assert checked == found and streams == {}
