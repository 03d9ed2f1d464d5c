"""The Benchmarks panel, driven as a user would: real CPU runs through the real engine.

Each run spawns the engine's worker process, so the sizes are tiny and the repeats few; the
tests wait on what the user would see (rows, curves, the progress bar), never on sleeps.
"""

from __future__ import annotations

import csv
import json

import pytest

from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.model import CatalogGpu, CpuDevice, CudaGpu, Device
from explorer.errors import UserError
from explorer.ui.context import AppContext
from explorer.ui.settle import settle

RUN_TIMEOUT_MS = 90_000  # worker spawn + torch import on a busy 2-core machine


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))


def _context(*extra: Device) -> AppContext:
    cpu = CpuDevice(name="Test CPU", key="cpu")
    reports = [ProbeReport(probe="nvml", ok=False, message="NVML library not found.")]
    return AppContext(Discovery(devices=[cpu, *extra], reports=reports))


@pytest.fixture
def panel(qtbot):
    from explorer.ui.bench_panel import BenchPanel

    p = BenchPanel(_context())
    qtbot.addWidget(p)
    # each test has its own data folder: measuring the roofline's ceilings there would take seconds
    p.controls.ceilings_combo.setCurrentIndex(p.controls.ceilings_combo.findData("skip"))
    yield p
    p.shutdown()


def _configure(panel, sizes: str, workload: str = "matmul", repeats: int = 3, budget_s: float = 0.2) -> None:
    panel.controls.set_workload(workload)
    panel.controls.sizes_edit.setText(sizes)
    panel.controls.repeats_spin.setValue(repeats)
    panel.controls.budget_spin.setValue(budget_s)


@pytest.mark.slow
def test_cpu_run_streams_points_into_table_and_plot_then_exports(panel, qtbot, tmp_path):
    _configure(panel, "32, 64, 128")
    assert panel.start()
    assert not panel.controls.start_button.isEnabled() and panel.controls.stop_button.isEnabled()
    # the first point is drawn while the run is still going
    qtbot.waitUntil(lambda: "cpu" in panel.plot.curve_names(), timeout=RUN_TIMEOUT_MS)
    assert panel.running and len(panel.points) < 3
    qtbot.waitUntil(lambda: not panel.running, timeout=RUN_TIMEOUT_MS)
    # the plot follows the points on the event loop's next turn, which a busy machine may delay
    qtbot.waitUntil(lambda: len(panel.plot.series[0].sizes) == 3, timeout=RUN_TIMEOUT_MS)

    points = panel.points
    assert [p.size for p in points] == [32, 64, 128]
    assert all(p.error is None and p.median_s > 0 and p.device == "cpu" for p in points)
    assert panel.table.model().rowCount() == 3
    assert panel.progress_bar.value() == panel.progress_bar.maximum() == 3
    assert panel.controls.start_button.isEnabled()
    [series] = panel.plot.series
    assert series.sizes == [32, 64, 128]
    if points[0].peak:  # the CPU's FP32 peak, where the engine knows it: a dashed line
        assert len(panel.plot.peak_lines()) == 1

    # time mode plots the medians themselves
    panel.plot.set_mode("time")
    [item] = panel.plot.main.listDataItems()
    assert list(item.getOriginalDataset()[1]) == [p.median_s for p in points]
    assert panel.plot.peak_lines() == []  # a peak is a throughput, not a time

    from explorer.bench.results import read_csv, read_json

    csv_path = panel.export_csv(tmp_path / "out.csv")
    json_path = panel.export_json(tmp_path / "out.json")
    png_path = panel.export_png(tmp_path / "out.png")
    assert [(p.size, p.median_s) for p in read_csv(csv_path)] == [(p.size, p.median_s) for p in points]
    with csv_path.open() as fh:
        assert len(list(csv.DictReader(fh))) == 3
    assert [p.to_dict() for p in read_json(json_path)] == [p.to_dict() for p in points]
    exported = json.loads(json_path.read_text())
    assert exported["points"][0]["workload"] == "matmul"
    # the roof the points were placed under travels with them, one per (host, device)
    assert [(r["host"], r["device"]) for r in exported["roofs"]] == [("", "cpu")]
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png_path.stat().st_size > 5_000

    # the last results come back in a new panel (as after a restart)
    from explorer.ui.bench_panel import BenchPanel

    again = BenchPanel(_context())
    qtbot.addWidget(again)
    assert [p.to_dict() for p in again.points] == [p.to_dict() for p in points]
    assert again.plot.series[0].sizes == [32, 64, 128]
    assert again.controls.workload.name == "matmul"


def _start_hanging_run(panel, qtbot) -> None:
    """A run of the engine's hidden ``_hang_test`` workload, once its first point is in: size 2
    never returns, so from here on only a cancel can end the run before its 120 s point limit
    (which would add an error row for size 2 and a point for size 3)."""
    build = panel.controls.build_plan
    plan = build()
    plan.workload, plan.sizes, plan.repeats = "_hang_test", [1, 2, 3], 2
    panel.controls.build_plan = lambda: plan  # hidden workloads are not in the chooser
    try:
        assert panel.start()
    finally:
        panel.controls.build_plan = build
    qtbot.waitUntil(lambda: [p.size for p in panel.points] == [1], timeout=RUN_TIMEOUT_MS)


@pytest.mark.slow
def test_stop_ends_the_run_promptly_and_the_panel_stays_usable(panel, qtbot):
    # "promptly" without a clock: the point in progress never ends, so the run can only end
    # because Stop ended it (within the outer deadline, well before the point's time limit)
    _start_hanging_run(panel, qtbot)
    panel.controls.stop_button.click()
    qtbot.waitUntil(lambda: not panel.running, timeout=RUN_TIMEOUT_MS)
    assert [(p.size, p.error) for p in panel.points] == [(1, None)], "no error row, no later point"
    assert "stopped" in panel.progress_bar.format()
    assert panel.controls.start_button.isEnabled() and not panel.controls.stop_button.isEnabled()
    assert panel.controls.sizes_edit.isEnabled()
    assert panel.controls.build_plan() is not None


@pytest.mark.slow
def test_crashing_workload_gives_an_error_row_and_the_panel_lives_on(panel, qtbot):
    from PySide6.QtCore import Qt

    from explorer.ui.bench.table import COLUMNS

    # "_crash_test" is the engine's hidden test workload: size 2 kills the worker process
    plan = panel.controls.build_plan()
    plan.workload, plan.sizes, plan.repeats = "_crash_test", [1, 2, 3], 3
    panel.controls.build_plan = lambda: plan  # hidden workloads are not in the chooser
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=RUN_TIMEOUT_MS)
    by_size = {p.size: p for p in panel.points}
    assert sorted(by_size) == [1, 2, 3], "the run goes on after the crash"
    assert by_size[2].error and by_size[1].error is None and by_size[3].error is None
    model = panel.table.model()
    row = panel.points.index(by_size[2])
    assert model.index(row, COLUMNS.index("note")).data() == " ".join(by_size[2].error.split())
    assert "crash" in by_size[2].error
    assert model.index(row, 0).data(Qt.ItemDataRole.ForegroundRole).color().red() > 150

    # plotted: the two good sizes only. The plot follows the points on the event loop's next turn,
    # so the run can end with the last point not drawn yet: wait for it (pytest-qt retries the
    # assertion and, at the deadline, raises it with its diff).
    def plotted_the_good_sizes_only() -> None:
        assert [s.sizes for s in panel.plot.series] == [[1, 3]]

    qtbot.waitUntil(plotted_the_good_sizes_only, timeout=RUN_TIMEOUT_MS)
    assert not panel.message_label.isVisible()
    assert panel.controls.start_button.isEnabled()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("64, 0, 128", " 0;"),
        ("64, -5", "-5;"),
        ("64, abc", "'abc'"),
        ("1.5", "'1.5'"),
        ("", "no sizes"),
        ("1e400", "'1e400'"),
    ],
)
def test_invalid_sizes_are_rejected_inline_naming_the_value(panel, text, named):
    panel.controls.sizes_edit.setText(text)
    assert not panel.start()
    assert not panel.running
    assert panel.controls.sizes_error.isVisibleTo(panel)
    assert named in panel.controls.sizes_error.text()


def test_only_present_devices_are_offered(qtbot):
    from explorer.ui.bench_panel import BenchPanel

    catalog = CatalogGpu(name="NVIDIA H100 SXM5", key="catalog:h100-sxm5")
    p = BenchPanel(_context(catalog))
    qtbot.addWidget(p)
    boxes = p.controls.device_boxes()
    assert "catalog:h100-sxm5" not in boxes
    assert not boxes["gpu-none"].isEnabled()
    assert "NVML library not found" in boxes["gpu-none"].toolTip()
    assert p.controls.selected_devices() == ["cpu"]

    gpu = CudaGpu(name="NVIDIA GeForce GTX 1650", index=0, key="cuda:0")
    p.controls._context.set_discovery(Discovery(devices=[CpuDevice(name="c", key="cpu"), gpu], reports=[]))
    assert p.controls.device_box("cuda:0").isEnabled()
    assert "gpu-none" not in p.controls.device_boxes()
    assert p.controls.selected_devices() == ["cpu", "cuda:0"]


@pytest.mark.slow
def test_shutdown_cancels_a_running_benchmark_and_ends_its_worker(panel, qtbot):
    from tests.processes import gone

    _start_hanging_run(panel, qtbot)
    stream = panel._stream
    worker = stream._run.worker_pid  # the worker process, hanging in size 2
    assert worker is not None
    panel.shutdown()  # waits for the run's thread, which the hanging point would hold for ever
    assert stream.cancelled and not stream._thread.is_alive()
    assert gone(worker), "the worker outlived the shutdown"


def test_a_workload_needing_two_gpus_says_so_instead_of_starting(panel):
    panel.controls.set_workload("two_gpus")
    assert not panel.start()
    assert not panel.running
    text = panel.controls.message_label.text()
    assert "needs 2 GPUs" in text and "0 present" in text
    assert panel.controls.start_button.isEnabled()


def test_a_plan_the_engine_refuses_is_one_line_in_the_panel_not_a_traceback(panel, qtbot):
    plan = panel.controls.build_plan()
    plan.repeats = -1  # the form cannot produce this; the engine must still refuse it politely
    panel.controls.build_plan = lambda: plan
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=10_000)
    text = panel.message_label.text()
    assert panel.message_label.isVisibleTo(panel)
    assert "repeats" in text and "-1" in text and "\n" not in text and "Traceback" not in text
    assert panel.points == [] and panel.controls.start_button.isEnabled()


def test_speedup_strip_shows_gpu_over_cpu_and_goes_into_the_png(panel, qtbot, tmp_path):
    """Points as a CPU + GPU matmul run streams them (no GPU here: the records are made by hand)."""
    from PySide6.QtGui import QImage

    from explorer.bench.results import BenchPoint

    def point(device, n, median_s):
        return BenchPoint(
            workload="matmul",
            variant=device,
            device=device,
            size=n,
            size_label=f"n={n}",
            median_s=median_s,
            spread_s=median_s / 50,
            repeats=5,
            throughput=2 * n**3 / median_s / 1e9,
            throughput_unit="GFLOP/s",
        )

    points = [
        point("cpu", 256, 2e-4),
        point("cpu", 1024, 1.5e-2),
        point("cuda:0", 256, 4e-4),
        point("cuda:0", 1024, 5e-4),
    ]
    panel.resize(1100, 760)
    panel.show()  # exported as laid out on screen
    panel.plot.set_points(points[:2])
    assert panel.plot.exported_plots() == [panel.plot.main]  # no GPU yet: no strip, not in the PNG
    one = QImage(str(panel.export_png(tmp_path / "cpu.png")))

    panel.plot.set_points(points)
    [curve] = [i for i in panel.plot.speedup.listDataItems()]
    xs, ys = curve.getOriginalDataset()
    assert list(xs) == [256, 1024]
    assert list(ys) == pytest.approx([0.5, 30.0])  # slower than the CPU at 256, 30x faster at 1024
    assert panel.plot.exported_plots() == [panel.plot.main, panel.plot.speedup]
    settle()  # the layout makes room for the strip
    both = QImage(str(panel.export_png(tmp_path / "both.png")))
    assert both.width() == one.width() == 1600  # slide width
    strip = panel.plot.speedup
    assert (
        both.height()
        >= round(1600 / panel.plot.main.width() * (panel.plot.main.height() + strip.height())) - 2
    )


def test_dark_theme_restyles_the_plot_and_keeps_its_lines(panel, qtbot):
    from explorer.ui.theme import DARK, LIGHT
    from tests.points import cpu_matmul_point

    points = [cpu_matmul_point(n, 140.0, repeats=5, peak=143.7, peak_is_estimate=True) for n in (256, 1024)]
    panel.resize(1100, 760)
    panel.show()
    panel.plot.set_points(points)
    names, peaks = panel.plot.curve_names(), len(panel.plot.peak_lines())
    try:
        panel.apply_theme(DARK)
        assert panel.plot.main.backgroundBrush().color().name() == DARK.plot_background
        assert panel.plot.main.getAxis("left").textPen().color().name() == DARK.plot_foreground
        assert panel.plot.curve_names() == names and len(panel.plot.peak_lines()) == peaks == 1
    finally:
        panel.apply_theme(LIGHT)
    assert panel.plot.main.backgroundBrush().color().name() == LIGHT.plot_background


def test_a_plateau_narrower_than_a_decade_still_gets_labelled_ticks(panel):
    """A CPU at 120..180 GFLOP/s: pyqtgraph's log ticks (1..9 x 10^k) would leave the axis bare."""
    import math

    axis = panel.plot.main.getAxis("left")
    axis.setLogMode(False, True)
    ticks = axis.tickValues(math.log10(120), math.log10(180), 300)
    values = sorted(round(10**v) for _, vs in ticks for v in vs)
    assert len(values) >= 2 and all(120 <= v <= 180 for v in values)
    assert all(text for text in axis.logTickStrings([math.log10(v) for v in values], 1, 1))


def test_gpus_hidden_by_cuda_visible_devices_are_never_offered(qtbot):
    from explorer.devices.model import HIDDEN_BY_CUDA_VISIBLE_DEVICES
    from explorer.ui.bench_panel import BenchPanel

    hidden = CudaGpu(
        name="NVIDIA A100-SXM4-40GB", key="nvml:0", nvml_index=0, hidden=HIDDEN_BY_CUDA_VISIBLE_DEVICES
    )
    p = BenchPanel(_context(hidden))
    qtbot.addWidget(p)
    boxes = p.controls.device_boxes()
    assert "nvml:0" not in boxes and p.controls.selected_devices() == ["cpu"]
    assert boxes["gpu-none"].text() == "GPU: none usable here"
    assert HIDDEN_BY_CUDA_VISIBLE_DEVICES in boxes["gpu-none"].toolTip()
    # while torch and numba are still being asked, the row says so rather than guessing
    cpu = CpuDevice(name="c", key="cpu")
    p.controls._context.set_discovery(Discovery(devices=[cpu], reports=[], pending=["torch", "numba"]))
    assert p.controls.device_boxes()["gpu-none"].toolTip() == "Still asking torch and numba for GPUs."


def _title(panel) -> str:
    return panel.plot.main.getPlotItem().titleLabel.text


def _left_axis(panel) -> str:
    return panel.plot.main.getAxis("left").labelText


@pytest.mark.slow
def test_switching_workload_never_mixes_runs_and_going_back_shows_the_run_again(panel, qtbot):
    _configure(panel, "32, 64", repeats=2)
    assert panel.start()
    assert "Press Start" not in _title(panel) and "Measuring" in _title(panel)  # a run is under way
    qtbot.waitUntil(lambda: not panel.running, timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: panel.plot.curve_names() == ["cpu"], timeout=RUN_TIMEOUT_MS)
    assert _title(panel).startswith("Matrix multiply") and "GFLOP/s" in _left_axis(panel)
    assert panel.table.model().rowCount() == 2 and panel.export_formats()

    panel.controls.set_workload("vector_add")
    assert panel.plot.curve_names() == [] and panel.plot.series == []
    assert "Matrix multiply" not in _title(panel) and "Press Start" in _title(panel)
    assert "GFLOP/s" not in _left_axis(panel)
    assert panel.table.model().rowCount() == 0 and panel.points == []
    assert panel.export_formats() == ()  # nothing of vector add's to export
    assert "no run of this workload yet" in panel.progress_bar.format()

    panel.controls.set_workload("matmul")  # kept per workload: the matmul run is back, alone
    assert panel.plot.curve_names() == ["cpu"] and [p.size for p in panel.points] == [32, 64]
    assert panel.table.model().rowCount() == 2 and _title(panel).startswith("Matrix multiply")
    assert all(p.workload == "matmul" for p in panel.points)


def _noisy_run() -> list:
    from explorer.bench.results import BenchPoint

    def p(n: int, median: float, noisy: bool) -> BenchPoint:
        return BenchPoint(
            "matmul",
            "cpu",
            "cpu",
            n,
            f"n={n}",
            median_s=median,
            spread_s=median / 20,
            min_s=median * (0.4 if noisy else 0.95),
            repeats=40,
            throughput=2 * n**3 / median / 1e9,
            throughput_unit="GFLOP/s",
            threads=2,
            noisy=noisy,
            noise_reason="other programs used 48% of the CPU during this point" if noisy else "",
            remeasured=2 if noisy else 0,
        )

    return [p(64, 2e-5, False), p(128, 8e-3, True), p(256, 1.3e-4, False), p(512, 8e-3, True)]


def test_noisy_points_are_tinted_in_the_table_and_hollow_on_the_plot(qtbot):
    from PySide6.QtCore import Qt

    from explorer.bench.results import save_last
    from explorer.ui.bench.table import COLUMNS
    from explorer.ui.bench_panel import BenchPanel

    save_last(_noisy_run())
    panel = BenchPanel(_context())
    qtbot.addWidget(panel)
    model = panel.table.model()
    verdicts = [model.data(model.index(r, COLUMNS.index("verdict"))) for r in range(4)]
    notes = [model.data(model.index(r, COLUMNS.index("note"))) for r in range(4)]
    assert verdicts == ["ok", "noisy", "ok", "noisy"]
    reason = "other programs used 48% of the CPU during this point"
    assert notes == ["", reason, "", reason]
    assert model.data(model.index(1, COLUMNS.index("min"))) == "3.2 ms"
    assert model.data(model.index(1, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(model.index(0, 0), Qt.ItemDataRole.BackgroundRole) is None
    assert "Measured 3 times" in model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole)
    [item] = panel.plot.main.listDataItems()
    brushes = item.opts["symbolBrush"]
    background = panel.plot.main.backgroundBrush().color().name()
    assert [b.color().name() == background for b in brushes] == [False, True, False, True]
    assert "hollow" in panel.plot.hint_label.text()


def _measured_clock_points() -> list:
    """A CPU matmul run against a peak built on the measured clock (what the engine records)."""
    from explorer.bench.results import BenchPoint

    peak = {
        "peak": 355.0,
        "peak_basis": "measured clock 2.78 GHz x 2 cores x 64 FLOP/cycle (AVX-512: 16 lanes x 2 FMA pipes)",
        "peak_is_estimate": False,
        "peak_kind": "theoretical",
    }
    points = []
    for n, gflops in ((64, 63.1), (128, 157.0), (256, 224.0), (512, 288.7), (1024, 301.0)):
        t = 2 * n**3 / (gflops * 1e9)
        timing = {"median_s": t, "min_s": t, "spread_s": 1e-6, "repeats": 5, "threads": 2}
        points.append(
            BenchPoint(
                "matmul",
                "cpu",
                "cpu",
                n,
                f"n={n:,}",
                throughput=gflops,
                throughput_unit="GFLOP/s",
                **timing,
                **peak,
            )
        )
    return points


@pytest.mark.parametrize("size", [(1280, 800), (1024, 768)])
def test_the_share_of_peak_column_says_the_peak_once_and_is_not_cut_off(panel, qapp, size):
    """Every row read "81% of estimated peak 383 GFLOP/s" and the column was cut off.
    The cells hold the share; the caption names the peak once, with the word its record gives
    (theoretical: built on the measured clock), and every column shows in full."""
    from PySide6.QtCore import Qt

    from explorer.ui.bench.table import COLUMNS

    panel.resize(*size)
    panel.show()
    panel.set_run(_measured_clock_points())
    for _ in range(3):
        qapp.processEvents()
    model, table = panel.table.model(), panel.table
    share = COLUMNS.index("% of peak")
    cells = [model.index(r, share).data() for r in range(model.rowCount())]
    assert cells == ["17.8%", "44.2%", "63.1%", "81.3%", "84.8%"]
    caption = panel.peak_caption
    assert caption.isVisible() and caption.text().count("355 GFLOP/s") == 1
    assert "theoretical peak 355 GFLOP/s (measured clock 2.78 GHz" in caption.text()
    assert "estimated" not in caption.text()
    assert model.headerData(share, Qt.Orientation.Horizontal) == "% of peak"
    header, fm = table.horizontalHeader(), table.fontMetrics()
    for column in range(len(COLUMNS) - 1):  # the last (note) stretches over what is left
        texts = [model.index(r, column).data() or "" for r in range(model.rowCount())]
        need = max(fm.horizontalAdvance(t) for t in texts)
        assert header.sectionSize(column) >= need, (COLUMNS[column], header.sectionSize(column), need)
        right = header.sectionViewportPosition(column) + header.sectionSize(column)
        assert right <= table.viewport().width(), (COLUMNS[column], right, table.viewport().width())


def test_the_screenshot_can_show_the_roofline_tab_and_names_the_views_a_page_has(panel, capsys, tmp_path):
    """``screenshot --panel benchmarks --view roofline`` (the README's roofline picture): the tab is
    shown; a page without that view says so in one line and exits 2."""
    from explorer.cli import main

    assert panel.plot_tabs.currentWidget() is panel.plot
    panel.show_screenshot_view("roofline")
    assert panel.plot_tabs.currentWidget() is panel.roofline
    with pytest.raises(UserError, match="no view 'bars'; its views: roofline"):
        panel.show_screenshot_view("bars")
    code = main(["screenshot", "--panel", "devices", "--view", "roofline", "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert code == 2 and "this page has no view 'roofline'; its views: none" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "x.png").exists()


@pytest.mark.slow  # starts processes (the bench worker, or an X server)
def test_resume_keeps_every_finished_point_after_a_variant_is_relabelled(panel, qtbot, monkeypatch):
    """Points are keyed by what they measure: rewording the variant's label between the run and
    its Resume keeps both finished points, and the saved run comes back with their keys."""
    import dataclasses

    from explorer.bench import wl_selftest
    from explorer.ui.bench_panel import BenchPanel

    plan = panel.controls.build_plan()
    plan = dataclasses.replace(plan, workload="_oom_test", sizes=[1, 2, 3], repeats=1)
    panel.controls.build_plan = lambda: plan  # hidden workloads are not in the chooser
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=RUN_TIMEOUT_MS)
    first = panel.points
    assert [(p.size, p.ok, p.variant_key) for p in first] == [
        (1, True, "plain"),
        (2, False, "plain"),
        (3, True, "plain"),
    ]
    assert panel.resume_button.text() == "Resume (1 left)"

    renamed = tuple(dataclasses.replace(v, label="renamed by a teacher") for v in wl_selftest.OUT_OF_MEMORY)
    monkeypatch.setattr(wl_selftest, "OUT_OF_MEMORY", renamed)
    panel.resume_button.click()
    qtbot.waitUntil(lambda: not panel.running, timeout=RUN_TIMEOUT_MS)
    after = panel.points
    assert [(p.size, p.ok) for p in after] == [(1, True), (3, True), (2, False)]
    assert [p.timestamp for p in after[:2]] == [first[0].timestamp, first[2].timestamp]  # kept
    assert {p.variant for p in after} == {"cpu renamed by a teacher"}  # one series, as it is named now

    again = BenchPanel(_context())
    qtbot.addWidget(again)
    try:
        restored = again.results.points_of("_oom_test")  # kept; a hidden workload is not shown
        assert [(p.key, p.variant) for p in restored] == [(p.key, p.variant) for p in after]
    finally:
        again.shutdown()


def test_the_page_shows_what_its_session_holds_through_a_run_it_did_not_stream(panel, qtbot):
    """The views follow the session alone: a run driven on the model (no worker) locks the form,
    fills the bar, the wait and the error line, and its end unlocks the form and is said once."""
    from explorer.bench.results import BenchPoint
    from explorer.bench.runner import BenchPlan, Progress
    from explorer.gpuqueue.share import QueueWait

    session = panel.session
    said: list[str] = []
    panel.context.status_message.connect(said.append)
    panel.controls.set_workload("matmul")
    assert session.start(BenchPlan("matmul", ["cpu"], sizes=[32, 64], repeats=3))
    assert (
        panel.running
        and not panel.controls.start_button.isEnabled()
        and panel.controls.stop_button.isEnabled()
    )
    assert panel.progress_bar.maximum() == 0 and panel.progress_bar.format() == "starting the worker process…"

    wait = QueueWait(
        "waiting for the GPU: ana has it, you are 2nd in line", 3.0, "ana", 2, short="2nd in line"
    )
    session.wait(wait)
    assert panel.progress_bar.format() == "2nd in line" and panel.wait_label.text() == wait.message
    assert not panel.wait_label.isHidden()

    session.progress(Progress(1, 2, 4.0))
    session.add_point(
        BenchPoint("matmul", "cpu", "cpu", 32, "n=32", variant_key="plain", median_s=1e-3, repeats=3)
    )
    assert panel.progress_bar.value() == 1 and panel.progress_bar.format() == "1 / 2 points"
    assert panel.status_label.text() == "time left: about 4 s" and panel.wait_label.isHidden()
    assert panel.table.model().rowCount() == 1

    session.fail("the benchmark stopped: OSError: disk full\nTraceback ...")
    assert panel.message_label.text() == "the benchmark stopped: OSError: disk full"
    assert not panel.message_label.isHidden()
    with qtbot.waitSignal(panel.run_finished, timeout=5_000):
        session.end()
    assert not panel.running and panel.controls.start_button.isEnabled()
    assert panel.progress_bar.format() == "done: 1 / 2 points"
    assert said == ["Benchmark finished: 1 points"]
    assert panel.resume_button.isVisibleTo(panel) and panel.resume_button.text() == "Resume (1 left)"


def test_the_l2_choice_is_offered_for_gpu_memory_workloads_only(qtbot):
    """Cold by default; warm reaches the GPU's points of a memory workload only; greyed, with the
    reason on hover, where it means nothing (CPU only, a workload that does not stream memory)."""
    from explorer.bench.runner import plan_points
    from explorer.ui.bench_panel import BenchPanel

    p = BenchPanel(_context(CudaGpu(name="NVIDIA H200", index=0, key="cuda:0")))
    qtbot.addWidget(p)
    c = p.controls
    c.set_workload("vector_add")
    assert c.selected_devices() == ["cpu", "cuda:0"]
    assert c.l2_combo.isEnabled() and c.l2_combo.currentData() == "cold"
    assert c.build_plan().warm_l2 is False
    assert "CPU's points run with its caches" in c.l2_combo.toolTip()
    c.l2_combo.setCurrentIndex(c.l2_combo.findData("warm"))
    plan = c.build_plan()
    assert plan.warm_l2 is True
    assert {(s.device, s.warm_l2) for s in plan_points(plan)} == {("cpu", False), ("cuda:0", True)}

    c.device_box("cuda:0").setChecked(False)  # the CPU alone: nothing to flush
    assert not c.l2_combo.isEnabled() and c.build_plan().warm_l2 is False
    assert c.l2_combo.toolTip() == (
        "Not used here: the L2 choice is for GPUs; CPU points run with the CPU's caches as they find them."
    )
    c.device_box("cuda:0").setChecked(True)
    assert c.l2_combo.isEnabled()
    c.set_running(True)
    assert not c.l2_combo.isEnabled()
    c.set_running(False)
    assert c.l2_combo.isEnabled()
    c.set_workload("matmul")
    assert not c.l2_combo.isEnabled() and "matmul does not stream memory" in c.l2_combo.toolTip()
    assert c.build_plan().warm_l2 is False
    c.set_running(False)
    assert not c.l2_combo.isEnabled()  # the end of a run does not offer it where it means nothing
    p.shutdown()


def test_the_table_says_why_a_warm_point_is_above_dram_and_how_each_was_timed(qtbot):
    from PySide6.QtCore import Qt

    from explorer.bench.results import BenchPoint
    from explorer.bench.run_results import RunResults
    from explorer.bench.wl_numba import WARM_ABOVE_DRAM
    from explorer.ui.bench.table import COLUMNS, ResultsModel

    def point(size: int, **extra: str) -> BenchPoint:
        return BenchPoint(
            workload="vector_add",
            variant="cuda:0 numba kernel",
            device="cuda:0",
            size=size,
            size_label=f"N={size:,}",
            variant_key="numba_kernel",
            median_s=2e-6,
            min_s=2e-6,
            spread_s=0.0,
            repeats=5,
            throughput=8000.0,
            throughput_unit="GB/s",
            extra=dict(extra),
        )

    method = "perf_counter + sync; L2 warm (not flushed between samples)"
    warm = point(1_333_333, l2="warm", l2_note=WARM_ABOVE_DRAM, timing_method=method)
    cold = point(100_000_000, l2="cold", timing_method="perf_counter + sync; L2 flushed before each sample")
    results = RunResults()
    results.set_run("vector_add", [warm, cold])
    results.show("vector_add")
    model = ResultsModel(results)
    notes = [model.data(model.index(row, COLUMNS.index("note"))) for row in range(2)]
    assert notes == [WARM_ABOVE_DRAM, ""]
    tips = [
        model.data(model.index(row, COLUMNS.index("median")), Qt.ItemDataRole.ToolTipRole) for row in range(2)
    ]
    assert tips == [method, "perf_counter + sync; L2 flushed before each sample"]
