"""The roofline tab of the Benchmarks panel, rendered offscreen: roofs, ridge, points, catalog roof,
the PNG export, and a legend that names every roof off the view."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.bench import peaks
from explorer.bench.results import BenchPoint
from explorer.bench.workloads import get_workload
from explorer.devices.catalog import load_catalog
from explorer.devices.discovery import Discovery, ProbeReport
from explorer.devices.roofs import RoofBook, fingerprint
from explorer.roofs import store
from explorer.roofs.model import Ceiling
from explorer.roofs.store import MeasuredRoof
from explorer.ui.context import AppContext
from explorer.ui.settle import settle
from tests.roofs.levels import levels

#: set to a folder to keep the rendered PNGs (to look at them)
KEEP = os.environ.get("DEVICE_EXPLORER_KEEP_RENDERS")

CLOCK_GHZ, SGEMM = 3.0, 340.0
PEAK = CLOCK_GHZ * 2 * 64
LEVELS = levels(DRAM=12.0)
DRAM = LEVELS[-1].value


def _seed(rec) -> None:
    now = time.time()
    store.save(
        MeasuredRoof(
            "cpu",
            fingerprint(rec),
            now,
            clock_ghz=CLOCK_GHZ,
            clock_threads=2,
            ceilings=[
                Ceiling("compute", SGEMM, "measured", "sgemm", "torch.mm n=2048", now),
                *levels(now, DRAM=12.0),
            ],
        )
    )


@pytest.fixture
def panel(qtbot, tmp_path, monkeypatch, cpu_record):
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(peaks, "_book", RoofBook())
    _seed(cpu_record)
    reports = [ProbeReport(probe="nvml", ok=False, message="NVML library not found.")]
    p = BenchPanel(AppContext(Discovery(devices=[cpu_record, *load_catalog()], reports=reports)))
    qtbot.addWidget(p)
    p.controls.ceilings_combo.setCurrentIndex(p.controls.ceilings_combo.findData("skip"))
    yield p
    p.shutdown()


def _point(workload: str, variant: str, size: int, seconds: float, threads: int = 2) -> BenchPoint:
    """A point as the engine makes it: throughput in the workload's unit, placed by peaks.place_point."""
    w = get_workload(workload)
    flops, moved = w.flops(size), w.bytes_moved(size)
    unit_work = flops if w.unit == "GFLOP/s" else moved
    p = BenchPoint(
        workload=workload,
        variant=variant,
        device="cpu",
        size=size,
        size_label=w.size_label(size),
        median_s=seconds,
        spread_s=seconds / 50,
        min_s=seconds,
        repeats=9,
        throughput=unit_work / seconds / 1e9,
        throughput_unit=w.unit,
        threads=threads,
    )
    if w.unit == "GFLOP/s":
        basis = peaks.compute_peak_basis("cpu")
        p = replace(
            p,
            peak=peaks.fp32_peak_gflops("cpu"),
            peak_basis=basis.text,
            peak_is_estimate=basis.is_estimate,
            peak_kind=basis.kind,
        )
    return peaks.place_point(
        p, flops, moved if workload != "copies" else 2.0 * moved, w.working_set_bytes(size)
    )


def _run_points() -> list[BenchPoint]:
    return [
        _point("vector_add", "cpu numpy", 30_000_000, 0.045),  # 8 GB/s
        _point("matvec", "cpu numpy", 1_000_000, 0.05),  # 8 GB/s
        _point("matmul", "cpu", 256, 0.0004),
        _point("matmul", "cpu", 2048, 0.07),  # 245 GFLOP/s
        _point("copies", "cpu host memcpy", 1 << 26, 0.01),  # no arithmetic: not on the roofline
    ]


def _show(panel, qtbot, size: tuple[int, int]) -> None:
    points = _run_points()
    for name in dict.fromkeys(p.workload for p in points):  # one run per workload, as the panel keeps them
        panel.session.show(name)
        panel.session.set_run([p for p in points if p.workload == name])
    panel.controls.set_workload("matmul")
    panel.session.show("matmul")
    # the view itself places any points: every workload's at once, to see them side by side
    panel.roofline.set_data(panel.roofline.roofs, points)
    panel.resize(*size)
    panel.show()
    panel.plot_tabs.setCurrentWidget(panel.roofline)
    qtbot.waitExposed(panel)
    settle()


def test_one_roof_per_level_and_points_in_their_levels_colour(panel, qtbot):
    _show(panel, qtbot, (1280, 800))
    view = panel.roofline
    labels = view.line_labels()
    assert f"FP32 peak (theoretical): {PEAK:.0f} GFLOP/s" in labels
    assert "sgemm: 340 GFLOP/s" in labels  # measured: the solid line and one legend row say so
    assert "solid: measured" in view.legend_texts()
    for c in LEVELS:  # one slanted roof per level, named with its value
        assert f"{c.level}: {c.value:g} GB/s" in labels
    ridge = PEAK / DRAM
    assert f"ridge {ridge:.3g} FLOP/B" in labels
    placed = view.placed_points()
    ((vx, vy),) = placed["vector_add: cpu numpy"]
    ((mx, my),) = placed["matvec: cpu numpy"]
    big = max(placed["matmul: cpu"])
    assert vx == pytest.approx(1 / 12) and vy == pytest.approx(30e6 / 0.045 / 1e9)
    assert vx < ridge and mx < ridge  # memory-bound: under DRAM's slanted roof
    assert vy <= DRAM * vx * 1.01 and my <= DRAM * mx * 1.01
    assert big[0] == pytest.approx(2048 * 2 / 12) and big[0] > ridge  # under the flat one
    assert not any(k.startswith("copies") for k in placed)
    assert "with no arithmetic" in view.caption.toolTip() and "Bandwidth tab" in view.caption.toolTip()
    # each point drawn in its level's colour, and the legend names the levels in words
    assert view.point_colours() == {
        "cpu numpy N=30,000,000": "DRAM",
        "cpu numpy N=1,000,000x100": "DRAM",
        "cpu n=256": "L2",
        "cpu n=2,048": "DRAM",
    }
    # the legend's row of a level some point lives in shows that point's marker beside its line
    marked = {label.text for sample, label in view.legend.items if sample.item.opts.get("symbol")}
    assert {"L2: 225 GB/s", "DRAM: 12 GB/s"} <= marked and "L1: 450 GB/s" not in marked
    assert [p.roof_level for p in _run_points()] == ["DRAM", "DRAM", "compute", "compute", "DRAM"]
    assert [p.bound for p in panel.points] == ["compute", "compute"]  # the shown run: the matmul


def test_a_zero_flop_copy_stands_in_the_bandwidth_view_against_its_level(panel, qtbot):
    _show(panel, qtbot, (1280, 800))
    panel.bandwidth.set_data(panel.roofline.roofs[:1], _run_points())
    steps = panel.bandwidth.steps_drawn()
    assert [s[0] for s in steps] == ["L1", "L2", "L3", "DRAM"]
    assert [s[1] for s in steps] == [450.0, 225.0, 184.0, 12.0]
    assert all(a[3] == b[2] for a, b in zip(steps, steps[1:], strict=False))  # one step where the last ends
    drawn = panel.bandwidth.points_drawn()
    copy = next(d for d in drawn if d[1] == pytest.approx(2 * (1 << 26)))
    assert copy[0] == "DRAM" and copy[2] == pytest.approx(2 * (1 << 26) / 0.01 / 1e9)


def test_a_catalog_gpus_roof_comes_from_its_spec_sheet(panel, qtbot):
    _show(panel, qtbot, (1280, 800))
    panel.roofline.choose_catalog("catalog:h100-sxm5")
    labels = panel.roofline.line_labels()
    assert "H100 SXM5 80GB FP32 peak (spec sheet): 66,900 GFLOP/s" in labels
    assert "H100 SXM5 80GB DRAM (spec sheet): 3,350 GB/s" in labels
    assert f"H100 SXM5 80GB ridge {66900 / 3350:.3g} FLOP/B" in labels
    assert f"CPU ridge {PEAK / DRAM:.3g} FLOP/B" in labels  # each roof's ridge named once
    panel.roofline.choose_catalog("")
    assert not any("H100" in text for text in panel.roofline.line_labels())


def _rect(item):
    return item.mapRectToScene(item.boundingRect())


@pytest.mark.parametrize(("size", "font_pt"), [((1280, 800), 10), ((1024, 768), 10), ((1280, 800), 12)])
def test_rendered_offscreen_legends_cover_no_label_and_png_holds_the_roofline(
    panel, qtbot, tmp_path, size, font_pt
):
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from explorer.ui.bench.export import export_png

    # the text size is pinned (another test may have left the application's font larger); 11 pt
    # stands for a larger text size: longer labels, the same rules
    font = QApplication.font()
    pinned = QApplication.font()
    pinned.setPointSize(font_pt)
    QApplication.setFont(pinned)
    try:
        _check_rendered(panel, qtbot, tmp_path, size, font_pt, export_png, QImage)
    finally:
        QApplication.setFont(font)


def _check_rendered(panel, qtbot, tmp_path, size, font_pt, export_png, QImage) -> None:
    _show(panel, qtbot, size)
    panel.roofline.choose_catalog("catalog:h100-sxm5")
    view = panel.roofline
    # the legend's columns follow the view's width and the view's height the legend's rows: the
    # layout takes a few passes of the event loop to settle, more on a busy machine
    vb = view.plot.getPlotItem().vb
    qtbot.waitUntil(lambda: _rect(view.legend).top() >= _rect(vb).bottom(), timeout=60_000)
    legend = _rect(view.legend)
    texts = view.label_items()
    assert len(texts) == 10  # 2 CPU compute ceilings and 4 levels, 2 H100 ones, 2 ridges
    # the roofs are named in the legend under the view: nothing is written over a line or a point
    view_box = _rect(view.plot.getPlotItem().vb)
    assert not legend.intersects(view_box)
    assert _rect(view.plot.getPlotItem()).contains(legend)  # nor does the legend run off the plot
    for i, a in enumerate(texts):  # no row hides another
        assert legend.contains(_rect(a)), a.text
        for b in texts[i + 1 :]:
            assert not _rect(a).intersects(_rect(b)), (a.text, b.text)
    # the roofline asks no more width than the measurements plot beside it (the panel's own minimum
    # width at 1024 px is the window's layout work)
    assert view.minimumSizeHint().width() <= panel.plot.minimumSizeHint().width()

    # the measurements tab: the peak label and the legend never overlap
    panel.plot_tabs.setCurrentWidget(panel.plot)
    settle()
    lines = panel.plot.peak_lines()
    assert len(lines) == 1  # the matmul's FP32 peak
    for line in lines:
        assert not _rect(panel.plot.legend).intersects(_rect(line.label)), line.label.toPlainText()

    out = panel.export_png(tmp_path / "run.png")
    picture = QImage(str(out))
    only_main = QImage(str(export_png(panel.plot.exported_plots(), tmp_path / "m.png")))
    assert picture.height() > only_main.height() * 1.5  # the roofline is stacked under the plot
    if KEEP:
        keep = Path(KEEP)
        keep.mkdir(parents=True, exist_ok=True)
        panel.plot_tabs.setCurrentWidget(panel.roofline)
        settle()
        panel.grab().save(str(keep / f"roofline-{size[0]}x{size[1]}-{font_pt}pt.png"))
        picture.save(str(keep / f"export-{size[0]}x{size[1]}-{font_pt}pt.png"))
