"""The Benchmarks page's shares of a roof as a student reads them: never "258% of peak" against a
roof measured while other programs were busy, and a working set near a cache's edge measured
against the levels on both sides of it, in the table, the roofline and the bandwidth view."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.bench.judge import judge
from explorer.bench.results import BenchPoint
from explorer.bench.run_results import RunResults
from explorer.bench.workloads import get_workload
from explorer.roofs.model import Roof
from tests.roofs.levels import MIB, levels

BUSY = ">100% (roof measured while busy)"


def _roof(busy: bool) -> Roof:
    return Roof("cpu", "Test CPU", [replace(c, disturbed=busy) for c in levels(DRAM=12.0)])


def _vector_add(n: int, gbps: float, roof: Roof) -> BenchPoint:
    """A vector add of ``n`` floats at ``gbps`` (its declared bytes over its time), placed as the
    engine places it."""
    w = get_workload("vector_add")
    moved, flops = w.bytes_moved(n), w.flops(n)
    seconds = moved / gbps / 1e9
    point = BenchPoint(
        workload="vector_add",
        variant="cpu numpy",
        device="cpu",
        size=n,
        size_label=w.size_label(n),
        median_s=seconds,
        min_s=seconds,
        repeats=5,
        throughput=gbps,
        throughput_unit=w.unit,
        threads=2,
    )
    return judge(point, flops, moved, w.working_set_bytes(n), roof)


def _cells(points: list[BenchPoint], column: str) -> list[str]:
    from explorer.ui.bench.table import COLUMNS, ResultsModel

    results = RunResults()
    results.set_run("vector_add", points)
    results.show("vector_add")
    model = ResultsModel(results)
    return [model.data(model.index(row, COLUMNS.index(column))) for row in range(model.rowCount())]


def _tooltips(items) -> str:
    return "\n".join(item.toolTip() for item in items)


def test_a_share_over_a_roof_measured_while_busy_is_not_a_figure(qtbot):
    from explorer.ui.bench.bandwidth_view import BandwidthPlot
    from explorer.ui.bench.roofline_view import RooflinePlot

    assert get_workload("vector_add").unit == "GB/s"
    busy = _roof(busy=True)
    big = 50_000_000  # 600 MB: in DRAM, far past every cache
    over, under = _vector_add(big, 31.0, busy), _vector_add(big, 6.0, busy)
    assert (
        over.memory_level == "DRAM" and over.roof_busy and over.roof_share == pytest.approx(31 / 12, abs=1e-4)
    )
    assert _cells([over, under], "% of peak") == [BUSY, "50%"]
    # on a quiet roof the figure stands: a share over it is a finding, with its reason in the note
    quiet = _vector_add(big, 31.0, _roof(busy=False))
    assert _cells([quiet], "% of peak") == ["258.3%"]

    roofline = RooflinePlot()
    qtbot.addWidget(roofline)
    roofline.set_data([busy], [over])
    words = _tooltips(roofline._scatters())
    assert ">100% of its DRAM roof (roof measured while busy)" in words and "258" not in words
    bandwidth = BandwidthPlot()
    qtbot.addWidget(bandwidth)
    bandwidth.set_data([busy], [over])
    words = _tooltips(i for i in bandwidth._drawn if "level" in getattr(i, "opts", {}))
    assert ">100% of its DRAM roof (roof measured while busy)" in words and "258" not in words


def test_a_working_set_just_past_a_cache_shows_its_share_of_both_levels(qtbot):
    from explorer.ui.bench.bandwidth_view import BandwidthPlot

    roof = _roof(busy=False)
    # 12 bytes a float over three arrays: 3 MiB just past the 2 MiB L2s (and the 64 KiB L1s)
    n = 3 * MIB // 12
    point = _vector_add(n, 150.0, roof)
    assert point.memory_level == "L3" and point.near_level == "L2"
    [cell] = _cells([point], "roof")
    assert cell == "fits in L3, near L2's edge: 82% of L3, 67% of L2"
    deep = _vector_add(8 * MIB // 12, 150.0, roof)  # deep inside L3 (2-34 MiB): one level's share
    assert _cells([deep], "roof") == ["fits in L3"] and _cells([deep], "% of peak") == ["81.5%"]
    bandwidth = BandwidthPlot()
    qtbot.addWidget(bandwidth)
    bandwidth.set_data([roof], [point])
    words = _tooltips(i for i in bandwidth._drawn if "level" in getattr(i, "opts", {}))
    assert "82% of its L3 roof, 67% of L2's roof across L2's edge" in words
