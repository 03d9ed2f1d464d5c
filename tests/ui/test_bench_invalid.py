"""A point faster than the hardware can go is shown as invalid everywhere: the table's verdict
and note, a crossed marker on the plot, the roofline and the bandwidth view, each named in its
legend, the CLI line."""

from __future__ import annotations

from explorer.bench.judge import judge
from explorer.bench.lines import format_point
from explorer.bench.results import BenchPoint
from explorer.roofs.model import INVALID_WORDS, Ceiling, Roof

PEAK = 66_908.0


def _roof() -> Roof:
    return Roof(
        "cuda:0",
        "NVIDIA H100 80GB HBM3",
        [
            Ceiling("compute", PEAK, "theoretical", "FP32 peak", "boost clock x tables", estimate=True),
            Ceiling("memory", 3352.0, "theoretical", "DRAM bandwidth", "memory clock x bus", level="DRAM"),
        ],
        llc_bytes=50 << 20,
    )


def _points() -> list[BenchPoint]:
    """The H100 log's timing lesson: three points, the middle one at 280% of the peak."""
    out = []
    for n, share in ((512, 0.3), (1024, 2.8), (2048, 0.6)):
        flops = 2.0 * n**3
        seconds = flops / (share * PEAK * 1e9)
        p = BenchPoint(
            "timing_lesson",
            "cuda:0 naive (no sync)",
            "cuda:0",
            n,
            f"n={n}",
            median_s=seconds,
            min_s=seconds,
            repeats=3,
            throughput=flops / seconds / 1e9,
            throughput_unit="GFLOP/s",
            peak=PEAK,
            peak_kind="theoretical",
            peak_is_estimate=True,
            peak_basis="boost clock x tables",
        )
        out.append(judge(p, flops, 12.0 * n * n, 12.0 * n * n, _roof()))
    return out


def test_the_cli_line_says_invalid_and_gives_no_excuse():
    line = format_point(_points()[1])
    assert f"INVALID: {INVALID_WORDS}" in line
    assert "ran faster" not in line and "boost)" not in line
    assert "INVALID" not in format_point(_points()[0])


def test_the_table_says_invalid_in_the_verdict_column_with_the_reason(qtbot):
    from PySide6.QtCore import Qt

    from explorer.bench.run_results import RunResults
    from explorer.ui.bench.table import COLUMNS, ResultsModel

    results = RunResults()
    results.set_run("timing_lesson", _points())
    results.show("timing_lesson")
    model = ResultsModel(results)
    verdicts = [model.data(model.index(r, COLUMNS.index("verdict"))) for r in range(3)]
    assert verdicts == ["ok", "invalid", "ok"]
    note = model.data(model.index(1, COLUMNS.index("note")))
    assert note.startswith(INVALID_WORDS) and "above the peak" not in note
    assert model.data(model.index(1, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert INVALID_WORDS in model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole)


def test_the_plot_crosses_the_invalid_point_and_names_the_cross_in_its_legend(qtbot):
    from PySide6.QtCore import Qt

    from explorer.ui.bench.plot import INVALID_LEGEND, INVALID_SYMBOL, BenchPlot

    plot = BenchPlot()
    qtbot.addWidget(plot)
    plot.set_points(_points())
    items = plot.main.listDataItems()
    crosses = [i for i in items if i.opts["symbol"] == INVALID_SYMBOL and i.name() is None]
    [cross] = crosses
    xs, _ = cross.getData()
    assert [round(10**x) for x in xs] == [1024]  # the log axis holds log10 of the size
    assert INVALID_LEGEND in [label.text for _, label in plot.legend.items]
    [curve] = [i for i in items if i.name() == "cuda:0 naive (no sync)"]
    pens = curve.opts["symbolPen"]
    assert [p.style() == Qt.PenStyle.NoPen for p in pens] == [False, True, False]
    plot.set_points(_points()[:1])  # the invalid point gone: its cross and its legend row too
    assert INVALID_LEGEND not in [label.text for _, label in plot.legend.items]


def test_the_roofline_crosses_the_invalid_point_and_names_it(qtbot):
    from explorer.ui.bench.plot import INVALID_LEGEND, INVALID_SYMBOL
    from explorer.ui.bench.roofline_view import RooflinePlot

    view = RooflinePlot()
    qtbot.addWidget(view)
    view.set_data([_roof()], _points())
    assert INVALID_LEGEND in view.legend_texts()
    symbols = {
        item.opts["symbol"]: len(item.getData()[0]) for item in view._scatters() if item.opts.get("variant")
    }
    assert symbols[INVALID_SYMBOL] == 1
    tips = [item.toolTip() for item in view._scatters() if item.opts["symbol"] == INVALID_SYMBOL]
    assert INVALID_WORDS in tips[0]


def _copies() -> list[BenchPoint]:
    """Device copies of 1 GiB on the H100: one at 90% of its DRAM bandwidth, one at 300% (a copy
    timed without waiting for it)."""
    out = []
    for share in (0.9, 3.0):
        moved = 2.0 * (1 << 30)
        seconds = moved / (share * 3352.0 * 1e9)
        p = BenchPoint(
            "copies",
            f"cuda:0 device copy {share}",
            "cuda:0",
            1 << 30,
            "1 GiB",
            median_s=seconds,
            min_s=seconds,
            repeats=3,
            throughput=moved / seconds / 1e9,
            throughput_unit="GB/s",
        )
        out.append(judge(p, 0.0, moved, moved, _roof()))
    return out


def test_the_bandwidth_view_crosses_the_invalid_copy_and_names_the_cross_in_its_legend(qtbot):
    from explorer.ui.bench.bandwidth_view import BandwidthPlot
    from explorer.ui.bench.plot import INVALID_LEGEND, INVALID_SYMBOL

    points = _copies()
    assert [p.invalid for p in points] == [False, True]
    view = BandwidthPlot()
    qtbot.addWidget(view)
    view.set_data([_roof()], points)
    drawn = [i for i in view.plot.listDataItems() if "level" in i.opts]
    crossed = [i for i in drawn if i.opts["symbol"] == INVALID_SYMBOL]
    assert [len(i.getData()[0]) for i in crossed] == [1]  # the 300% copy, and only it
    assert INVALID_WORDS in crossed[0].toolTip()
    assert all(INVALID_WORDS not in i.toolTip() for i in drawn if i not in crossed)
    legend = [label.text for _, label in view.legend.items]
    assert INVALID_LEGEND in legend
    view.set_data([_roof()], points[:1])  # the invalid copy gone: its legend row too
    assert INVALID_LEGEND not in [label.text for _, label in view.legend.items]


def test_a_lessons_recorded_table_says_invalid_beside_the_figure_and_why_on_hover(qtbot):
    from PySide6.QtCore import Qt

    from explorer.lessons.model import Recorded
    from explorer.lessons.texts import RECORDED_COLUMNS
    from explorer.ui.lessons.recorded import RecordedTable

    table = RecordedTable()
    qtbot.addWidget(table)
    table.set_recorded(Recorded("NVIDIA H100 80GB HBM3", "2026-11-20", tuple(_points())))
    model, column = table.recorded, RECORDED_COLUMNS.index("verdict")
    assert [model.data(model.index(r, column)) for r in range(3)] == ["ok", "invalid", "ok"]
    tip = model.data(model.index(1, column), Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("invalid: ") and INVALID_WORDS in tip
    assert model.headerData(column, Qt.Orientation.Horizontal) == "verdict"
