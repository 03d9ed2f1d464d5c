"""The roofline's words at the four projector sizes: every text the plot's scene draws (its title,
axis titles, legend rows, any label of a line) is off every other and inside the plot, with a
roof measured while busy (the longest words), a catalog GPU's roof beside it and measured points
under them. A ceiling's label in the plot lay on the others, the ridge's and the points at every
projector scale; and "theoretical" never reads "theoretical while busy"."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QGraphicsTextItem

from explorer.bench.judge import judge
from explorer.devices.roofs import fingerprint
from explorer.roofs import store
from explorer.roofs.model import Ceiling
from explorer.roofs.store import MeasuredRoof
from explorer.ui.context import AppContext
from explorer.ui.main_window import MainWindow
from tests.roofs.levels import levels
from tests.ui.machines import lab_cpu, lab_discovery, measured_matmul_points

#: the screens and text sizes a teacher projects at
SIZES = [((1024, 768), 100), ((1024, 768), 150), ((1280, 800), 200), ((1920, 1080), 250)]
#: two texts may touch by a pixel of rounding
SLACK = 2.0


@pytest.fixture
def window(qtbot, qapp, tmp_path, monkeypatch, fake_nvml, fake_clock, fake_timer):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    now = time.time()
    store.save(  # measured while other programs were busy: every level's label says so
        MeasuredRoof(
            "cpu",
            fingerprint(lab_cpu()),
            now,
            clock_ghz=3.69,
            clock_threads=2,
            ceilings=[
                Ceiling("compute", 29.0, "measured", "sgemm", "torch.mm n=2048", now),
                *levels(now, L1=133.0, L2=64.4, L3=14.3, DRAM=5.3),
            ],
            busy_reason="other programs used 80% of the CPU",
        )
    )
    w = MainWindow(
        AppContext(lab_discovery()),
        discover_on_show=False,
        devices_panel_options={"nvml": fake_nvml, "clock": fake_clock, "timer": fake_timer},
    )
    qtbot.addWidget(w)
    yield w
    w.close()
    w.apply_text_scale(100)


def _show_roofline(window, qapp, size, scale, catalog: str):
    window.apply_text_scale(scale)
    window.resize(*size)
    window.show()
    window.show_panel("benchmarks")
    panel = window.panels["benchmarks"]
    cpu = next(d for d in panel.context.devices if d.key == "cpu")
    roof = panel.context.roof_of(cpu)
    # a matmul moves its three matrices: 2 n^3 FLOP over 12 n^2 bytes, placed as the engine does
    points = [judge(p, 2 * p.size**3, 12 * p.size**2, 12 * p.size**2, roof) for p in measured_matmul_points()]
    panel.set_run(points)
    panel.roofline.choose_catalog(catalog)
    panel.plot_tabs.setCurrentWidget(panel.roofline)
    for _ in range(6):
        qapp.processEvents()
    return panel.roofline


def _texts(view) -> list[tuple[str, QRectF, bool]]:
    """Each visible text item of the roofline's scene: its words, its glyphs' rectangle in the
    plot widget's pixels (the document's margin is not text), and whether it lies in the view box
    (a line's label) rather than around it (titles, legend rows)."""
    vb = view.plot.getPlotItem().vb
    out = []
    for item in view.plot.scene().items():
        if not isinstance(item, QGraphicsTextItem) or not item.isVisible() or not item.toPlainText().strip():
            continue
        margin = item.document().documentMargin()
        inner = item.boundingRect().adjusted(margin, margin, -margin, -margin)
        rect = QRectF(view.plot.mapFromScene(item.mapRectToScene(inner)).boundingRect())
        out.append((item.toPlainText().strip(), rect, vb.isAncestorOf(item)))
    return out


@pytest.mark.parametrize("catalog", ["", "catalog:h100-sxm5"], ids=["cpu", "cpu+h100"])
@pytest.mark.parametrize(
    "size,scale", SIZES, ids=lambda v: f"{v[0]}x{v[1]}" if isinstance(v, tuple) else f"{v}%"
)
def test_no_roofline_text_lies_on_another_or_runs_outside_the_plot(window, qapp, size, scale, catalog):
    view = _show_roofline(window, qapp, size, scale, catalog)
    texts = _texts(view)
    words = [t for t, _, _ in texts]
    assert "GFLOP/s" in words and "arithmetic intensity (FLOP per byte moved)" in words  # the axes' titles
    plot = QRectF(view.plot.rect()).adjusted(-SLACK, -SLACK, SLACK, SLACK)
    vb = view.plot.getPlotItem().vb
    inside_view = QRectF(view.plot.mapFromScene(vb.mapRectToScene(vb.boundingRect())).boundingRect())
    problems = []
    for text, rect, in_view in texts:
        if not plot.contains(rect):
            problems.append(f"{text!r} runs outside the plot")
        if in_view and not inside_view.adjusted(-SLACK, -SLACK, SLACK, SLACK).contains(rect):
            problems.append(f"{text!r} runs outside the plot's view")
    for i, (a, ra, _) in enumerate(texts):
        for b, rb, _ in texts[i + 1 :]:
            overlap = ra.intersected(rb)
            if overlap.width() > SLACK and overlap.height() > SLACK:
                problems.append(f"{a!r} and {b!r} are drawn over each other")
    assert problems == []
    # every ceiling is named once, the ridge once per roof, and a theoretical peak stays theoretical
    labels = view.line_labels()
    assert len(labels) == len(set(labels))
    assert sum("ridge" in t for t in labels) == (2 if catalog else 1)
    assert "FP32 peak (theoretical): 472 GFLOP/s" in [t.removeprefix("CPU ") for t in labels]
    assert not [t for t in (*labels, *view.legend_texts()) if "theoretical while" in t]
    assert "solid: measured while busy" in view.legend_texts()  # said once, not on every level
    # each measured point drawn
    assert sum(len(v) for v in view.placed_points().values()) == 4
