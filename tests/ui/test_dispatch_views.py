"""The timeline and latency-hiding views: rendered offscreen at the three classroom sizes, the
chart's pixel coverage against a brute-force count, playing, the per-cycle chart against the
model's records, and the one-line 'unavailable' state."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QColor, QFontMetrics

from explorer.devices.catalog import load_catalog
from explorer.launch.config import parse_launch
from explorer.launch.dispatch import simulate_dispatch
from explorer.launch.durations import parse_durations
from explorer.launch.latency import (
    ELIGIBLE,
    IDLE,
    ISSUING,
    STALLED,
    LatencyConfig,
    find_preset,
    simulate_latency,
    utilization_curve,
)
from explorer.launch.schedule import plan_launch
from explorer.launch.timeline import Timeline
from explorer.launch_runs.measured import BandwidthPoint, BandwidthSweep
from explorer.ui.theme import FIGURE_TEXT_MIN_SHARE, apply_theme, current_theme, figure_px, label_px
from explorer.ui.visualizer import palette
from explorer.ui.visualizer.latency_view import _ALU, _ELIGIBLE, _IDLE, _LOAD, _STALLED, LatencyView
from explorer.ui.visualizer.sweep_graph import nice_ticks
from explorer.ui.visualizer.timeline_view import (
    MIN_PLOT_LINES,
    SHADE_A,
    SHADE_B,
    TimelineView,
    _coverage,
    rasterise,
)
from tests.ui.figure_text import recording

GPUS = {d.name: d for d in load_catalog()}
SIZES = [(100, 1024, 768), (200, 1280, 800), (250, 1920, 1080)]


@pytest.fixture
def text_scale(qapp):
    """Set the app's text scale for one test, and put it back."""
    theme = current_theme()

    def set_scale(percent: int) -> None:
        apply_theme(qapp, theme, percent)

    yield set_scale
    apply_theme(qapp, theme, 100)


def _readable(painted) -> None:  # the painted texts
    """Every text the view painted is at least the share of the label text every figure keeps
    to (its small text was once 11 px at 100%, under it), whatever the text size."""
    assert painted
    least = FIGURE_TEXT_MIN_SHARE * label_px()
    small = [(p.text, p.px) for p in painted if p.px + 0.5 < least]
    assert not small, f"painted below {least:.1f} px: {small[:5]}"


def _heavy_result():
    plan = plan_launch(parse_launch("98", "1024"), GPUS["NVIDIA GeForce GTX 1650 Laptop GPU"])
    return simulate_dispatch(plan, parse_durations("heavy:2"), seed=3)


def _distinct_colours(image) -> int:
    w, h = image.width(), image.height()
    return len({image.pixel(x, y) for x in range(0, w, 7) for y in range(0, h, 7)})


@pytest.mark.parametrize(("scale", "width", "height"), SIZES)
def test_timeline_renders_at_classroom_sizes(qapp, text_scale, scale, width, height):
    text_scale(scale)
    view = TimelineView()
    result = _heavy_result()
    view.set_dispatch(result)
    with recording("timeline") as painted:
        image = view.render_image(width, height)
    assert (image.width(), image.height()) == (width, height)
    assert _distinct_colours(image) > 5
    _readable(painted)
    lay = view.layout_now()
    # header, chart and axis stacked inside the view, none on another
    assert lay.title.bottom() <= lay.facts.top() and lay.facts.bottom() < lay.plot.top()
    assert lay.plot.bottom() <= lay.axis.top() and lay.axis.bottom() <= height
    assert lay.plot.left() >= lay.label_w and lay.plot.right() <= width
    # 16 SMs x 1 slot: a row per slot at every size
    assert lay.slot_rows and lay.rows == 16
    # the text grows with the app's text size: the label text's size, as every figure's
    assert view.fonts().body.pixelSize() == figure_px(1.0)
    # a pixel in the middle of SM 0's row early on is a block's blue
    y = int(lay.plot.top() + lay.plot.height() / 32)
    x = int(lay.plot.left() + 2)
    assert QColor(image.pixel(x, y)).name() in {SHADE_A.name(), SHADE_B.name()}


@pytest.mark.parametrize(("scale", "width", "height"), SIZES)
def test_a_short_timeline_drops_whole_figures_and_keeps_its_chart(qapp, text_scale, scale, width, height):
    """Half the page (a measured timeline shares it) at a large text size: the figures over the
    chart give up lines, whole ones, before the chart goes under MIN_PLOT_LINES of small text."""
    text_scale(scale)
    view = TimelineView()
    view.set_dispatch(_heavy_result())
    clauses = list(view.shown.facts)
    assert "; ".join(clauses) in view.layout_now(10 * width, height).facts_text  # room for all
    small = QFontMetrics(view.fonts().small).height()
    one_line = QFontMetrics(view.fonts().body).lineSpacing() + 1
    shown = []
    for h in (height // 3, height // 2, height):
        lay = view.layout_now(width - 400, h)
        kept = lay.facts_text.split("; ")
        assert kept == clauses[: len(kept)]  # the leading figures, each whole
        assert lay.plot.height() >= MIN_PLOT_LINES * small or lay.facts.height() <= one_line
        shown.append(len(kept))
    assert shown == sorted(shown)  # a taller view never shows fewer figures


def test_timeline_of_a_million_blocks_draws_one_row_per_sm_or_fewer(qapp):
    plan = plan_launch(parse_launch("1000000", "256"), GPUS["NVIDIA H100 SXM5 80GB"])
    view = TimelineView()
    view.set_dispatch(simulate_dispatch(plan, parse_durations("jitter:0.3")))
    view.render_image(1024, 768)
    lay = view.layout_now()
    assert not lay.slot_rows and lay.rows <= 132


def test_the_moment_shown_reveals_the_blocks_started_by_then_and_counts_them(qapp):
    """The view draws the moment it is given (the visualizer's clock sets it): blocks started by
    then, none past the cursor, and the counts at that moment."""
    view = TimelineView()
    result = _heavy_result()
    view.set_dispatch(result)
    assert view.time == result.figures.makespan  # a new record: the whole launch
    view.set_time(0.0)
    assert view.shown.timeline.counts_at(view.time) == (98 - 16, 16, 0)
    view.set_time(1.7)
    waiting, running, done = view.shown.timeline.counts_at(view.time)
    assert waiting + running + done == 98 and running <= 16 and done > 0
    # past the cursor nothing is drawn yet: the column just right of it is the plot's plain face
    image = view.render_image(800, 500)
    lay = view.layout_now()
    x = int(lay.plot.left() + view.time / view.span * lay.plot.width()) + 4
    y = int(lay.plot.top() + lay.plot.height() / 2)
    assert QColor(image.pixel(x, y)).name() == palette.canvas().sm_face.name()
    view.set_time(1e9)  # past the end: the whole launch, held at its end
    assert view.time == result.figures.makespan


def test_unavailable_says_why(qapp):
    view = TimelineView()
    view.set_unavailable("--measure runs on a GPU in this machine; No NVIDIA GPU was found on this machine.")
    image = view.render_image(640, 300)
    assert view.shown is None and "No NVIDIA GPU" in view.unavailable
    assert _distinct_colours(image) > 1  # the line is drawn


@settings(max_examples=300, deadline=None)
@given(
    intervals=st.lists(
        st.tuples(st.integers(0, 2), st.floats(0, 20, allow_nan=False), st.floats(0, 20, allow_nan=False)),
        min_size=1,
        max_size=30,
    )
)
def test_pixel_coverage_matches_a_brute_force_count(intervals):
    rows, width = 3, 20
    row = np.array([r for r, _a, _b in intervals])
    x0 = np.array([min(a, b) for _r, a, b in intervals])
    x1 = np.array([max(a, b) for _r, a, b in intervals])
    got = _coverage(row, x0, x1, rows, width)
    want = np.zeros((rows, width))
    for r, a, b in zip(row, x0, x1, strict=True):
        for j in range(width):
            want[r, j] += max(0.0, min(b, j + 1) - max(a, j))
    assert np.allclose(got, want, atol=1e-9)


def test_raster_alternates_shades_along_a_slot():
    # one SM, one slot, four blocks of one unit each: pixels alternate shade A, B, A, B
    t = Timeline(1, 1, np.zeros(4, np.int32), np.zeros(4, np.int32), np.arange(4.0), np.arange(4.0) + 1)
    image = rasterise(t, 40, 1, True)
    colours = [QColor(image.pixel(x, 0)).name() for x in (5, 15, 25, 35)]
    assert colours == [SHADE_A.name(), SHADE_B.name(), SHADE_A.name(), SHADE_B.name()]


@settings(max_examples=2000, deadline=None)
@given(lo=st.floats(0, 1e4), span=st.floats(1e-6, 1e7), count=st.integers(2, 10))
def test_axis_ticks_are_the_smallest_round_step_over_the_span(lo, span, count):
    """A measured timeline spans 0.014 ms, a million-block one 60,000 mean blocks: the ticks of
    either are a round step (1, 2, 2.5 or 5 times a power of ten), the smallest not under
    span/count (found here by trying every power), every multiple of it in the span and no other."""
    hi = lo + span
    ticks = nice_ticks(lo, hi, count)
    nice = sorted(m * 10.0**e for e in range(-12, 13) for m in (1, 2, 2.5, 5))
    step = next(n for n in nice if n >= (hi - lo) / count * (1 - 1e-9))
    want = [k * step for k in range(math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9) + 1)]
    assert len(ticks) == len(want) >= count // 2
    assert ticks == pytest.approx(want, rel=1e-9, abs=step * 1e-6)


# ----------------------------------------------------------------------------- latency view


def _latency_model(warps: int = 16, preset: str = "v100-l1"):
    p = find_preset(preset)
    run = simulate_latency(LatencyConfig(warps, p.mem_latency, 9, 4, "gto", warp_slots=64))
    return run, utilization_curve(p.mem_latency, 9, 4, "gto"), p


def test_latency_chart_rows_are_the_models_states_and_picks(qapp):
    run, curve, preset = _latency_model(6)
    view = LatencyView()
    view.set_model(run, curve, preset)
    codes = view.chart_codes()
    labels = view.row_labels()
    assert len(labels) == codes.shape[0] == 4 + 64 and codes.shape[1] == run.recorded_cycles
    states, picks = run.states(), run.picks()
    expect = {ISSUING: (_ALU, _LOAD), STALLED: (_STALLED,), ELIGIBLE: (_ELIGIBLE,), IDLE: (_IDLE,)}
    for i, label in enumerate(labels):
        if label.startswith("sched"):
            s = int(label.split()[1])
            assert ((codes[i] != 0) == (picks[:, s] >= 0)).all()
        else:
            w = int(label[1:])
            for state, allowed in expect.items():
                assert np.isin(codes[i][states[:, w] == state], allowed).all()
    # room for every row: all 68; a short chart: the picks and the 6 resident warps, none of the
    # 58 empty slots, so a large text size does not squeeze each warp to a hairline
    assert view.rows_shown(3 * len(labels)) == list(range(len(labels)))
    short = [labels[i] for i in view.rows_shown(100)]
    resident = {f"w{w}" for w in range(64) if (states[:, w] != IDLE).any()}
    assert len(resident) == 6
    assert set(short) == {f"sched {s}" for s in range(4)} | resident


@pytest.mark.parametrize(("scale", "width", "height"), SIZES)
def test_latency_view_renders_at_classroom_sizes(qapp, text_scale, scale, width, height):
    text_scale(scale)
    run, curve, preset = _latency_model(16, "v100-dram")
    view = LatencyView()
    view.set_model(run, curve, preset)
    with recording("latency") as painted:
        image = view.render_image(width, height)
    assert _distinct_colours(image) > 6
    _readable(painted)
    # the legend wraps rather than running off a narrow view at large text
    assert view._legend_rows(width - 12, view.fonts().small) >= 1
    items = view._legend_items(400, view.fonts().small)
    assert all(x >= 0 for x, _r, _c, _w in items)


@pytest.mark.parametrize(("scale", "width", "height"), SIZES)
def test_latency_figures_drop_whole_clauses_where_the_view_is_short(qapp, text_scale, scale, width, height):
    text_scale(scale)
    run, curve, preset = _latency_model(16, "v100-dram")
    view = LatencyView()
    view.set_model(run, curve, preset)
    font = view.fonts().body
    clauses = view.facts()
    assert any(f"L = {run.config.mem_latency} cycles" in c for c in clauses)
    line = QFontMetrics(font).lineSpacing()
    counts = []
    for lines in (1, 2, 3):
        text, tall = view.facts_that_fit(width - 12, lines, font)
        kept = text.split("; ")
        assert kept == clauses[: len(kept)]  # the leading clauses, each whole
        assert len(kept) == 1 or tall <= lines * (line + 1)
        counts.append(len(kept))
        view.set_cycle(run.recorded_cycles)  # another share so far: the same clauses, the same height
        assert view.facts_that_fit(width - 12, lines, font)[1] == tall
        assert len(view.facts_that_fit(width - 12, lines, font)[0].split("; ")) == len(kept)
        view.set_cycle(view.window_cycles)
    assert counts == sorted(counts)  # more lines never show fewer figures
    assert view.facts_that_fit(10 * width, 3, font)[0] == "; ".join(view.facts())  # room for all


def test_latency_view_shows_the_window_of_cycles_before_the_cycle_it_is_given(qapp):
    run, curve, preset = _latency_model(16)
    view = LatencyView()
    view.set_model(run, curve, preset)
    assert view.cycle == view.window_cycles  # a new run: its first window
    view.set_cycle(5)
    assert view.cycle == view.window_cycles  # a whole window is always shown
    view.set_cycle(10**6)
    assert view.cycle == run.recorded_cycles


def test_latency_view_with_a_sweep_or_the_reason_there_is_none(qapp):
    run, curve, preset = _latency_model(16)
    view = LatencyView()
    view.set_model(run, curve, preset)
    view.set_sweep(None, "--measure runs on a GPU in this machine. No NVIDIA GPU was found on this machine.")
    view.render_image(1024, 768)
    sweep = BandwidthSweep(
        device_name="recorded for the test",
        backend="simulator",
        sm_count=80,
        latency_ns=500.0,
        chase_bytes=1 << 20,
        stream_bytes=1 << 20,
        peak_gbps=None,
        peak_basis="",
        points=tuple(BandwidthPoint(w, 20.0 * w, 0.01, 1) for w in (1, 2, 4, 8)),
    )
    view.set_sweep(sweep)
    image = view.render_image(1024, 768)
    assert _distinct_colours(image) > 5
