"""The roofs in the window: the Devices page's ceilings section, "Measure again" with progress on
both pages (one measurement at a time, the same stored values shown everywhere afterwards), a run
drawn under the roofs it carries, and a damaged ceilings file that costs nothing but a notice."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import Qt

from explorer.bench import peaks
from explorer.bench.remeasure import Measured
from explorer.bench.results import BenchPoint, save_last
from explorer.devices.caches import CpuCache
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CpuDevice
from explorer.devices.roofs import RoofBook, fingerprint
from explorer.roofs import store
from explorer.roofs.model import Ceiling, Roof
from explorer.roofs.store import MeasuredRoof
from explorer.ui.context import AppContext
from tests.roofs.levels import levels

KIB, MIB = 1 << 10, 1 << 20


def _levels(l2: float = 225.0, dram: float = 40.0, at: float = 1000.0) -> list[Ceiling]:
    return levels(at, L2=l2, DRAM=dram)


@pytest.fixture
def cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(peaks, "_book", RoofBook())
    store.take_notice()
    rec = CpuDevice(
        name="Test CPU",
        key="cpu",
        physical_cores=2,
        logical_cores=2,
        memory_total_bytes=8 << 30,
        isa_flags=["sse4_2", "avx", "avx2", "fma"],
        caches=[CpuCache("L1", 32 * KIB, 2), CpuCache("L2", MIB, 2)],
    )
    return rec


def _store(rec, **kw) -> None:
    store.save(
        MeasuredRoof(
            "cpu", fingerprint(rec), time.time(), clock_ghz=3.0, clock_threads=2, ceilings=_levels(**kw)
        )
    )


def _context(rec) -> AppContext:
    from explorer.devices.catalog import load_catalog

    return AppContext(
        Discovery(devices=[rec, *load_catalog()[:2]], reports=[ProbeReport("nvml", False, "none")])
    )


class FakeMeasurement:
    """``RoofMeasurement`` standing in for the real one (seconds of every core): it says progress,
    then waits for the test to let it finish, and stores and answers the roof the test gives."""

    release = threading.Event()
    started: list[list[str]] = []
    roof_ceilings: list[Ceiling] = []
    rec: CpuDevice | None = None

    def __init__(self, devices, **_):
        self.devices = list(devices)
        self.cancelled = False
        FakeMeasurement.started.append(self.devices)

    def cancel(self):
        self.cancelled = True
        FakeMeasurement.release.set()

    def run(self, progress=None):
        progress("cpu", 0.4, "memory levels: pass 2 of 5")
        FakeMeasurement.release.wait(60)
        if self.cancelled:
            return []
        measured = MeasuredRoof(
            "cpu",
            fingerprint(self.rec),
            time.time(),
            clock_ghz=3.3,
            clock_threads=2,
            ceilings=self.roof_ceilings,
        )
        saved = store.save(measured)
        from explorer.devices.roofs import record_roof

        return [Measured("cpu", record_roof(self.rec), saved.message)]


@pytest.fixture
def fake_measure(monkeypatch, cpu):
    from explorer.bench import remeasure

    FakeMeasurement.release = threading.Event()
    FakeMeasurement.started = []
    FakeMeasurement.roof_ceilings = _levels(l2=160.0, dram=20.0, at=time.time())
    FakeMeasurement.rec = cpu
    monkeypatch.setattr(remeasure, "RoofMeasurement", FakeMeasurement)
    return FakeMeasurement


def test_the_devices_page_shows_the_stored_roof_of_each_level(qtbot, cpu):
    from explorer.ui.devices_panel import DevicesPanel

    _store(cpu)
    panel = DevicesPanel(_context(cpu))
    qtbot.addWidget(panel)
    try:
        panel.select_device("cpu")
        section = panel.roof_section
        rows = {name: label.text() for name, label in section.group.values.items()}
        assert rows["L2 (measured)"] == "225 GB/s over 88 KiB to 1.3 MiB"
        assert rows["DRAM (measured)"] == "40 GB/s over 127 MiB to 220 MiB"
        assert rows["FP32 peak (theoretical)"].endswith("GFLOP/s")  # on the measured clock
        assert "on a quiet machine" in section.note.text() and section.measure is not None
        assert section.group.values["L2 (measured)"].toolTip() == "L2 sweep"
        panel.select_device(panel.context.devices[1].key)  # a catalog GPU: its spec sheet, no button
        assert panel.roof_section.measure is None
        assert any("(spec sheet)" in name for name in panel.roof_section.group.values)
    finally:
        panel.shutdown()


def test_measure_again_shows_progress_on_both_pages_and_every_page_shows_the_new_roof(
    qtbot, cpu, fake_measure
):
    _store(cpu)
    devices, bench = _pages(qtbot, _context(cpu))
    try:
        w = get_vector_add()
        shown = [_point(w, 10_000, 1.5e-6)]
        bench.controls.set_workload("vector_add")
        bench.session.set_run(shown)
        assert bench.points[0].roof_share == pytest.approx(80 / 225, rel=1e-3)
        devices.select_device("cpu")
        button = devices.roof_section.measure
        roofline_button = bench.roofs.measure
        button.button.click()
        # both pages show the one measurement's progress; neither starts a second
        qtbot.waitUntil(
            lambda: not roofline_button.bar.isHidden() and "pass 2 of 5" in roofline_button.bar.format()
        )
        assert not button.bar.isHidden() and button.button.text() == "Stop" == roofline_button.button.text()
        assert not roofline_button.start() and fake_measure.started == [["cpu"]]
        fake_measure.release.set()
        qtbot.waitUntil(lambda: not button.measurer.running and roofline_button.bar.isHidden())
        # the Devices page shows the new stored values (the details rebuilt on the next turn)
        qtbot.waitUntil(
            lambda: devices.roof_section is not None and devices.roof_section.measure is not button
        )
        rows = {n: v.text() for n, v in devices.roof_section.group.values.items()}
        assert rows["L2 (measured)"].startswith("160 GB/s") and rows["DRAM (measured)"].startswith("20 GB/s")
        assert devices.roof_section.measure.status.isHidden()  # a fresh section: the words were said
        assert cpu.memory_bandwidth_gbps == 20.0 and cpu.clock_measured_ghz == 3.3  # the record too
        # the roofline's run is judged against the new roof, the same stored values
        assert bench.points[0].roof_share == pytest.approx(0.5, rel=1e-3) and bench.points[0].peak == 160.0
        assert bench.roofline.roofs[0].level("L2").value == 160.0
        assert "cpu: measured on a quiet machine and stored" in roofline_button.status.text()
    finally:
        bench.shutdown()
        devices.shutdown()


def test_a_run_is_drawn_under_the_roofs_it_carries_not_a_file_read_each_batch(qtbot, cpu, monkeypatch):
    from explorer.devices import roofs as device_roofs
    from explorer.ui.bench_panel import BenchPanel

    _store(cpu)
    carried = Roof("cpu", "Test CPU", _levels(l2=111.0))
    w = get_vector_add()
    save_last([_point(w, 10_000, 1.5e-6)], [carried])
    reads: list[str] = []
    real = device_roofs.record_roof
    monkeypatch.setattr(device_roofs, "record_roof", lambda rec: reads.append(rec.key) or real(rec))
    bench = BenchPanel(_context(cpu))
    qtbot.addWidget(bench)
    try:
        before = len(reads)
        assert [r.level("L2").value for r in bench.roofline.roofs] == [111.0]
        for size in (1_000, 100_000, 1_000_000):  # a run's points arriving batch after batch
            bench.add_point(_point(w, size, size * 1e-10))
            bench._refresh_plot()
        assert len(reads) == before  # the store was not read again
        from explorer.ui.bench.table import COLUMNS

        roof_cell = bench.table.results.index(0, COLUMNS.index("roof"))
        assert bench.table.results.data(roof_cell) == "fits in L2"
        assert bench.table.results.data(roof_cell, Qt.ItemDataRole.ToolTipRole).startswith(
            "36% of L2 (measured)"
        )
    finally:
        bench.shutdown()


def test_a_damaged_ceilings_file_costs_a_notice_and_nothing_else(qtbot, cpu):
    path = store.store_path()
    path.parent.mkdir(parents=True)
    path.write_text("[" * 100_000 + "]" * 100_000)
    context = _context(cpu)
    devices, bench = _pages(qtbot, context)
    try:
        devices.select_device("cpu")
        assert [n for n in context.notices if "measured ceilings" in n] and not path.exists()
        notice = next(n for n in context.notices if "measured ceilings" in n)
        assert "nested too deeply" in notice and "they are measured again when next needed" in notice
        assert devices.roof_section.note.text() == "not measured yet on this machine"
        assert bench.roofline.roofs and bench.roofline.roofs[0].levels() == []
    finally:
        bench.shutdown()
        devices.shutdown()


def _pages(qtbot, context: AppContext):
    """The Devices page and the Benchmarks page of one window (one context)."""
    from explorer.ui.bench_panel import BenchPanel
    from explorer.ui.devices_panel import DevicesPanel

    devices, bench = DevicesPanel(context), BenchPanel(context)
    qtbot.addWidget(devices)
    qtbot.addWidget(bench)
    return devices, bench


def get_vector_add():
    from explorer.bench.workloads import get_workload

    return get_workload("vector_add")


def _point(w, size: int, seconds: float, rec=None) -> BenchPoint:
    """A vector_add point as the worker makes it, judged against ``rec``'s stored roof (else the
    test's levels)."""
    from explorer.bench.judge import judge
    from explorer.devices.roofs import record_roof

    p = BenchPoint(
        w.name,
        "cpu numpy",
        "cpu",
        size,
        w.size_label(size),
        median_s=seconds,
        throughput=w.bytes_moved(size) / seconds / 1e9,
        throughput_unit="GB/s",
        threads=1,
    )
    roof = record_roof(rec) if rec is not None else Roof("cpu", "Test CPU", _levels())
    p = judge(p, w.flops(size), w.bytes_moved(size), w.working_set_bytes(size), roof)
    return p


def test_the_window_builds_each_roof_once_for_every_page_until_it_is_measured_again(qtbot, cpu, monkeypatch):
    """One roof per device in the window: the Devices page and an empty roofline read the store
    once between them, however often they are redrawn; a new measurement stands for both without
    a read, and only devices found anew are built again."""
    from explorer.bench.remeasure import Measured
    from explorer.devices import roofs as device_roofs

    _store(cpu)
    reads: list[str] = []
    real = device_roofs.record_roof
    monkeypatch.setattr(device_roofs, "record_roof", lambda rec: reads.append(rec.key) or real(rec))
    context = _context(cpu)
    devices, bench = _pages(qtbot, context)
    try:
        for _ in range(3):
            devices.select_device("cpu")
            bench.roofs.refresh()
        assert reads.count("cpu") == 1
        shown = context.roofs.get("cpu")
        assert devices.roof_section.roof is shown and bench.roofline.roofs == [shown]

        again = Roof("cpu", "Test CPU", _levels(l2=160.0, at=time.time()))
        context.measured_again([Measured("cpu", again, "cpu: measured on a quiet machine and stored")])
        qtbot.waitUntil(lambda: devices.roof_section.roof is again)
        assert bench.roofline.roofs == [again] and reads.count("cpu") == 1

        context.set_discovery(context.discovery)  # devices found anew: their roofs are built again
        bench.roofs.refresh()
        assert reads.count("cpu") == 2
    finally:
        bench.shutdown()
        devices.shutdown()
