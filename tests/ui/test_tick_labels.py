"""Tick labels never drawn over each other: pyqtgraph limits how much of an axis its labels fill,
not whether two touch, and on a short log axis "50", "100", "200" and "500" lay on each other."""

from __future__ import annotations

import random

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF

from explorer.ui.bench.bandwidth_view import ByteAxis
from explorer.ui.bench.plot import LogAxis
from explorer.ui.plot_text import spaced_texts
from explorer.ui.settle import settle


def _brute_force(specs, gap):
    """The same rule, spelled out: walk in order, keep what clears every kept one by ``gap``."""
    kept = []
    for rect, flags, text in specs:
        grown = QRectF(rect.x() - gap / 2, rect.y() - gap / 2, rect.width() + gap, rect.height() + gap)
        if all(not grown.intersects(k[0]) for k in kept):
            kept.append((rect, flags, text))
    return kept


def test_kept_labels_never_touch_and_each_dropped_one_would_have():
    rng = random.Random(7)
    for case in range(3000):
        n = rng.randint(0, 12) if case else 1  # one label alone is always kept
        specs = [
            (
                QRectF(rng.uniform(0, 300), rng.uniform(0, 20), rng.uniform(1, 60), rng.uniform(5, 20)),
                0,
                str(i),
            )
            for i in range(n)
        ]
        gap = rng.choice([0.0, 4.0, 10.0])
        kept = spaced_texts(specs, gap)
        assert [k[2] for k in kept] == [k[2] for k in _brute_force(specs, gap)]
        if specs:
            assert kept[0] is specs[0]  # the first (pyqtgraph's major tick) is never dropped
        for i, a in enumerate(kept):
            for b in kept[i + 1 :]:
                assert not a[0].intersects(b[0])
        for spec in specs:
            if spec not in kept:
                assert any(
                    spec[0].adjusted(-gap / 2, -gap / 2, gap / 2, gap / 2).intersects(k[0]) for k in kept
                )


def _drawn_texts(axis_class, orientation, size, x_range, y_range, monkeypatch):
    """The tick labels the axis really draws (its draw specs as it paints)."""
    drawn = []
    original = pg.AxisItem.drawPicture

    def spy(self, p, axis_spec, tick_specs, text_specs):
        if isinstance(self, axis_class) and self.orientation == orientation:
            drawn[:] = [(rect, text) for rect, _flags, text in text_specs if text.strip()]
        return original(self, p, axis_spec, tick_specs, text_specs)

    monkeypatch.setattr(pg.AxisItem, "drawPicture", spy)
    widget = pg.PlotWidget(axisItems={orientation: axis_class(orientation)})
    widget.setLogMode(x=True, y=True)
    widget.resize(*size)
    widget.setXRange(*x_range, padding=0)
    widget.setYRange(*y_range, padding=0)
    widget.show()
    settle()
    widget.grab()
    widget.close()
    return [t for _r, t in drawn], [r for r, _t in drawn]


@pytest.mark.parametrize(
    ("cls", "orientation", "size", "xr", "yr"),
    [
        (LogAxis, "left", (400, 90), (0, 3), (1, 4)),  # three decades in 90 px
        (ByteAxis, "bottom", (200, 300), (3, 9), (0, 2)),  # 1 KiB to 1 GiB in 200 px
    ],
)
def test_a_short_log_axis_and_a_narrow_byte_axis_draw_no_label_over_another(
    qtbot, monkeypatch, cls, orientation, size, xr, yr
):
    texts, rects = _drawn_texts(cls, orientation, size, xr, yr, monkeypatch)
    assert len(texts) >= 2, texts  # still labelled
    for i, a in enumerate(rects):
        for b in rects[i + 1 :]:
            assert not a.intersects(b), texts
