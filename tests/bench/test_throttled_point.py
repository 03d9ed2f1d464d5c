"""A GPU point's SM clock, end to end on a fake GPU: held and watched by ``time_plain``, a fall
below 75% of steady marked on the point (flag, figures, the sentence in its noise verdict), and
kept by the JSON and CSV files."""

from __future__ import annotations

import pytest

from explorer.bench import execute
from explorer.bench import results as R
from explorer.bench.execute import Outcome, run_point, time_plain
from explorer.bench.lines import format_point
from explorer.bench.spec import PointSpec
from explorer.bench.variants import Variant
from explorer.bench.workload import Workload

STEADY = 1980.0


def fake_gpu_workload():
    """A one-variant "cuda:0" workload: a short Python sum stands for the kernel and a no-op for
    the synchronize; the point's SM clock reader is the test's (put in ``execute._sm_clocks``)."""

    def run(w: Workload, spec: PointSpec) -> Outcome:
        return Outcome(time_plain(spec, lambda: sum(range(2000)), sync=lambda: None), items=1.0)

    return Workload(
        name="_clock_test",
        title="clock test",
        description="",
        lesson="",
        size_name="n",
        default_sizes_cpu=(1,),
        default_sizes_gpu=(1,),
        unit="elements/s",
        code=lambda: (Variant("plain", "", run),),
        preload=(),
        hidden=True,
    )


def point_with(monkeypatch, reader):
    monkeypatch.setitem(execute._sm_clocks, "cuda:0", reader)
    monkeypatch.setattr(execute, "_gpu_intruders", lambda device: [])
    spec = PointSpec(
        0, "_clock_test", "cuda:0", "cuda:0", variant_key="plain", size=1, repeats=5, budget_s=0.5
    )
    point, fatal = run_point(spec, fake_gpu_workload())
    assert not fatal and point.error is None, point.error
    return point


def test_a_steady_gpu_clock_leaves_the_point_quiet(monkeypatch):
    point = point_with(monkeypatch, lambda: STEADY)
    assert (point.sm_mhz_steady, point.sm_mhz_min, point.throttled) == (STEADY, STEADY, False)
    assert "throttled" not in point.noise_reason
    assert "held steady at 1980 MHz" in point.extra["timing_method"]


def test_a_clock_that_falls_below_75_percent_marks_the_point_throttled(monkeypatch):
    reads = {"n": 0}
    held = {"done": False}

    def reader() -> float:
        reads["n"] += 1
        # steady through the hold (which reads every step for 0.1 s), then every third read dips
        return 0.7 * STEADY if held["done"] and reads["n"] % 3 == 0 else STEADY

    import explorer.bench.timing as timing

    real_hold = timing.hold_clock

    def hold_then_dip(*args, **kwargs):
        out = real_hold(*args, **kwargs)
        held["done"] = True
        return out

    monkeypatch.setattr(timing, "hold_clock", hold_then_dip)
    point = point_with(monkeypatch, reader)
    assert point.throttled and point.noisy
    assert point.sm_mhz_min == pytest.approx(0.7 * STEADY) and point.sm_mhz_steady == STEADY
    assert "throttled: the GPU's SM clock fell to 1386 MHz" in point.noise_reason
    assert "NOISY: " in format_point(point) and "throttled" in format_point(point)


def test_no_nvml_is_said_and_raises_nothing(monkeypatch):
    from explorer.devices.gpu_clock import no_reading

    point = point_with(monkeypatch, no_reading)
    assert not point.throttled and point.sm_mhz_steady is None
    assert "no SM clock from NVML" in point.extra["timing_method"]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_clock_figures_survive_the_files(tmp_path, fmt):
    point = R.BenchPoint(
        "matmul",
        "cuda:0",
        "cuda:0",
        64,
        "n=64",
        median_s=1e-3,
        sm_mhz_steady=1980.0,
        sm_mhz_min=1386.0,
        throttled=True,
    )
    path = tmp_path / f"out.{fmt}"
    (R.write_json if fmt == "json" else R.write_csv)([point], path)
    (back,) = (R.read_json if fmt == "json" else R.read_csv)(path)
    assert (back.sm_mhz_steady, back.sm_mhz_min, back.throttled) == (1980.0, 1386.0, True)
