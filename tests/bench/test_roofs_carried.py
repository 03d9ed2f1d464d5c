"""One roof per (host, device), computed once in the worker and carried with the results: the run
keeps it, the saved file keeps it, and a roof measured anew judges the shown points again."""

from __future__ import annotations

import threading

import pytest

from explorer.bench import peaks
from explorer.bench.judge import BUS, judge, judged_again
from explorer.bench.results import BenchPoint, load_last_run, save_last
from explorer.bench.run_results import RunResults
from explorer.devices.roofs import RoofBook
from explorer.errors import UserError
from explorer.roofs.model import Ceiling, Roof

KIB, MIB = 1 << 10, 1 << 20


def roof(dram: float = 40.0, l2: float = 225.0, host: str = "") -> Roof:
    def level(name: str, gbps: float, lo: int, hi: int, cache: int | None, inst: int | None) -> Ceiling:
        return Ceiling(
            "memory",
            gbps,
            "measured",
            name,
            "sweep",
            1.0,
            level=name,
            ws_lo_bytes=lo,
            ws_hi_bytes=hi,
            cache_bytes=cache,
            instances=inst,
        )

    return Roof(
        "cpu",
        "Test CPU",
        [
            Ceiling("compute", 236.0, "theoretical", "FP32 peak", "clock"),
            level("L1", 450.0, 4 * KIB, 60 * KIB, 64 * KIB, 2),
            level("L2", l2, 88 * KIB, 1300 * KIB, 2 * MIB, 2),
            level("DRAM", dram, 127 * MIB, 220 * MIB, None, None),
        ],
        host=host,
    )


def point(size: int, seconds: float, **kw) -> BenchPoint:
    p = BenchPoint(
        "vector_add",
        "cpu numpy",
        "cpu",
        size,
        f"N={size}",
        median_s=seconds,
        throughput=12.0 * size / seconds / 1e9,
        throughput_unit="GB/s",
        threads=1,
        **kw,
    )
    p = judge(p, float(size), 12.0 * size, 12.0 * size, roof())
    return p


def test_a_point_is_judged_again_under_a_new_roof_from_its_own_counts():
    p = point(10_000, 1.5e-6)  # 120 kB: L2 on one core, 80 GB/s
    assert (p.memory_level, p.roof_level, p.peak) == ("L2", "L2", 225.0)
    assert p.roof_share == pytest.approx(80.0 / 225.0, rel=1e-3)
    again = judged_again(p, roof(l2=160.0))
    assert again is not p and p.roof_share == pytest.approx(80.0 / 225.0, rel=1e-3)  # the old one stays
    assert again.peak == 160.0 and again.roof_share == pytest.approx(0.5, rel=1e-3)
    assert again.gbps == pytest.approx(p.gbps) and again.working_set_bytes == p.working_set_bytes
    # an error row, or a bus-bound copy, is not given a level by a new roof
    error = BenchPoint("vector_add", "cpu numpy", "cpu", 1, "N=1", error="boom")
    assert judged_again(error, roof()) is error
    bus = BenchPoint(
        "copies",
        "cuda:0 H2D pinned",
        "cuda:0",
        1 << 20,
        "1 MiB",
        median_s=1e-4,
        throughput=10.0,
        throughput_unit="GB/s",
        peak=15.75,
    )
    bus = judge(bus, 0.0, float(1 << 20), 2.0 * (1 << 20), roof(), bus_bound=True)
    assert bus.bound == BUS and bus.roof_level == "" and judged_again(bus, roof()).roof_level == ""
    assert judged_again(bus, roof()).peak == 15.75  # the bus's peak stays


def test_a_memcpy_is_judged_by_the_bytes_it_reads_and_writes_and_keeps_no_other_share():
    """The host memcpy's GB/s count each byte once; the levels' roofs count a copy's read and write.
    Its roof share counts both, and no "% of peak" says another figure beside it."""
    n = 4096
    p = BenchPoint(
        "copies",
        "cpu host memcpy",
        "cpu",
        n,
        "4 KiB",
        median_s=n / 8e9,
        throughput=8.0,
        throughput_unit="GB/s",
        threads=1,
    )
    p = judge(p, 0.0, 2.0 * n, 2.0 * n, roof())
    assert (p.memory_level, p.roof_level) == ("L1", "L1")
    assert p.gbps == pytest.approx(16.0) and p.roof_share == pytest.approx(16.0 / 450.0, abs=1e-4)
    assert p.peak is None  # no share of another count in the "% of peak" column


def test_the_run_carries_one_roof_per_host_and_device():
    results = RunResults()
    results.start_run("vector_add")
    results.add_roof(roof())
    results.add_roof(roof(dram=1.0))  # a later one for the same device does not replace the first
    results.add_roof(roof(host="gpu-lab"))
    assert [(r.host, r.level("DRAM").value) for r in results.roofs_of()] == [("", 40.0), ("gpu-lab", 40.0)]
    results.start_run("vector_add")  # a new run starts with none
    assert results.roofs_of() == []


def test_a_roof_measured_again_judges_every_runs_points_of_that_device():
    results = RunResults()
    results.set_run("vector_add", [point(10_000, 1.5e-6), point(100_000_000, 0.06)], [roof()])
    results.set_run("matmul", [])
    assert results.show("vector_add")
    remote = BenchPoint("vector_add", "cpu numpy", "cpu", 10, "N=10", median_s=1.0, host="gpu-lab")
    results.add(remote)
    assert results.measured_again(roof(dram=20.0, l2=160.0))
    small, big, far = results.points
    assert small.roof_share == pytest.approx(0.5, rel=1e-3) and big.peak == 20.0
    assert far is remote  # another machine's point is not this machine's roof's
    assert results.roofs_of()[0].level("DRAM").value == 20.0
    assert not results.measured_again(roof(host="elsewhere"))  # no point of it: nothing changed


def test_a_saved_run_keeps_its_roofs_and_an_older_file_has_none(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    points = [point(10_000, 1.5e-6)]
    save_last(points, [roof(), roof(host="gpu-lab")])
    loaded = load_last_run()
    assert loaded.notice == "" and loaded.value.points == points
    assert [(r.host, r.device) for r in loaded.value.roofs] == [("", "cpu"), ("gpu-lab", "cpu")]
    assert loaded.value.roofs[0].ceilings == roof().ceilings
    save_last(points)  # no roofs: the file is the earlier versions' shape
    assert load_last_run().value.roofs == []


def test_the_agents_roofs_measure_method_streams_progress_and_answers_the_stored_roof(
    tmp_path, monkeypatch, cpu_record
):
    from explorer.bench import ceilings
    from explorer.commands import agent as methods
    from explorer.devices.roofs import fingerprint
    from explorer.roofs.store import MeasuredRoof

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setattr(peaks, "_book", RoofBook())

    def fake(cpu, fp, *, progress, **_):
        for f in (0.0, 0.5, 1.0):
            progress(f, f"part {f}")
        return MeasuredRoof("cpu", fp, 1000.0, clock_ghz=3.0, ceilings=roof().ceilings[1:])

    monkeypatch.setattr(ceilings, "measure_cpu_roof", fake)
    events: list[dict] = []
    answer = methods.roofs_measure({"device": "cpu"}, events.append)
    assert [e["progress"] for e in events] == [0.0, 0.5, 1.0] and events[1]["message"] == "part 0.5"
    back = Roof.from_dict(answer["roof"])
    assert back.level("L2").value == 225.0 and back.clock_ghz == 3.0
    assert answer["message"].startswith("cpu: measured on a quiet machine and stored (measured ")
    assert fingerprint(cpu_record)  # the fake record is this test's CPU
    with pytest.raises(UserError):
        methods.roofs_measure({"device": 3}, events.append)


@pytest.mark.slow
def test_measuring_again_in_a_worker_says_in_one_line_what_could_not_be_measured():
    """A real worker process, asked for a GPU this machine does not have: one line, no traceback,
    and the worker is gone afterwards."""
    from explorer.bench.remeasure import RoofMeasurement

    job = RoofMeasurement(["cuda:7"])
    [result] = job.run()
    assert result.device == "cuda:7" and result.roof is None
    assert result.message.startswith("the ceilings of cuda:7 could not be measured: ")
    assert "Traceback" not in result.message


def test_a_measurement_stopped_before_it_starts_measures_nothing():
    from explorer.bench.remeasure import RoofMeasurement

    job = RoofMeasurement(["cpu"])
    job.cancel()
    done = threading.Event()
    out: list = []

    def run() -> None:
        out.extend(job.run())
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(60) and out == [] and job.cancelled
