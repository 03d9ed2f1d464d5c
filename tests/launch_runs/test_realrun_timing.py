"""The real run's kernel time never includes numba's compile: the kernel runs once (one thread,
scratch arrays of the same types) before the clock, and on a GPU the time is CUDA events'."""

from __future__ import annotations

import textwrap

import pytest

from explorer.launch_runs import realrun
from tests.simulator import run_on_simulator


class _FakeEvent:
    def __init__(self, log: list[str], name: str) -> None:
        self.log, self.name = log, name

    def record(self) -> None:
        self.log.append(f"record {self.name}")

    def synchronize(self) -> None:
        self.log.append(f"synchronize {self.name}")


class _FakeCuda:
    """numba.cuda's event API, logging each call; the GPU says the launch took 0.135 ms."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.events = 0

    def synchronize(self) -> None:
        self.log.append("synchronize")

    def event(self) -> _FakeEvent:
        self.events += 1
        return _FakeEvent(self.log, "start" if self.events == 1 else "end")

    def event_elapsed_time(self, start: _FakeEvent, end: _FakeEvent) -> float:
        assert (start.name, end.name) == ("start", "end")
        self.log.append("elapsed")
        return 0.135


def test_events_time_only_the_launch_after_the_warm_up_finished():
    cuda = _FakeCuda()
    seconds = realrun.time_launch(
        cuda, lambda: cuda.log.append("warm-up"), lambda: cuda.log.append("launch"), events=True
    )
    assert cuda.log == [
        "warm-up",
        "synchronize",
        "record start",
        "launch",
        "record end",
        "synchronize end",
        "elapsed",
    ]
    assert seconds == pytest.approx(135e-6)


def test_without_events_the_warm_up_is_still_outside_the_clock(monkeypatch):
    cuda = _FakeCuda()
    clock = iter([10.0, 10.25])
    monkeypatch.setattr(realrun.time, "perf_counter", lambda: next(clock))
    order: list[str] = []
    seconds = realrun.time_launch(
        cuda, lambda: order.append("warm-up"), lambda: order.append("launch"), events=False
    )
    assert order == ["warm-up", "launch"] and cuda.events == 0
    assert seconds == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(135e-6, "135.0 µs"), (0.0, "0.0 µs"), (0.0123, "12.30 ms"), (2.5, "2.50 s"), (0.999999, "1000.00 ms")],
)
def test_kernel_time_is_said_at_its_scale(seconds, words):
    assert realrun.kernel_time_words(seconds) == words


SPY = textwrap.dedent(
    """
    import json
    import numpy as np
    from explorer.launch_runs import realrun

    log = []
    real_kernel = realrun._kernel()

    class Spy:  # every launch of the recording kernel, in order
        def __getitem__(self, config):
            log.append(["kernel", [list(c) for c in config]])
            return real_kernel[config]

    realrun._KERNEL = Spy()
    real_time_launch = realrun.time_launch

    def spying_time_launch(cuda_api, warm_up, launch, *, events):
        def timed():
            log.append("clock")
            launch()
        return real_time_launch(cuda_api, warm_up, timed, events=events)

    realrun.time_launch = spying_time_launch
    r = realrun.run_here((3, 1, 1), (64, 1, 1), 150)
    i = np.arange(150)
    print("RESULT" + json.dumps({
        "log": log,
        "right": bool((r.block_of_element == i // 64).all() and (r.thread_of_element == i % 64).all()
                      and (r.writes_per_element == 1).all() and r.sum_correct),
        "method": r.kernel_method,
        "summary": r.summary(),
    }))
    """
)


@pytest.mark.slow
def test_the_timed_launch_is_never_the_kernels_first_call():
    out = run_on_simulator(SPY, timeout_s=240)
    assert out["log"] == [
        ["kernel", [[1, 1, 1], [1, 1, 1]]],  # the warm-up: one thread, compiles on a GPU
        "clock",
        ["kernel", [[3, 1, 1], [64, 1, 1]]],
    ]
    assert out["right"]  # the warm-up wrote scratch arrays, never the run's own
    assert out["method"] == realrun.TIMING_METHODS["simulator"]


def test_a_gpu_run_says_its_time_is_cuda_events_and_the_method_survives_the_trip(tmp_path):
    r = realrun.run_here((2, 1, 1), (32, 1, 1), 60, emulate=True)
    assert r.kernel_method == realrun.TIMING_METHODS["emulation"]
    gpu = realrun.RealRunResult(
        **{**r.__dict__, "backend": "gpu", "kernel_method": realrun.TIMING_METHODS["gpu"]}
    )
    assert "CUDA events" in gpu.kernel_method and "warm-up" in gpu.kernel_method
    back = realrun.result_from_inline(realrun.result_to_inline(gpu), gpu.grid, gpu.block, gpu.n, None, 1.0)
    assert back.kernel_method == realrun.TIMING_METHODS["gpu"]
    path = tmp_path / "run.npz"
    realrun._save(gpu, str(path))
    assert realrun._load(str(path), 1.0).kernel_method == realrun.TIMING_METHODS["gpu"]


def test_the_gpu_acceptance_flags_a_real_run_not_timed_with_events(monkeypatch, tmp_path):
    """The acceptance's real-run check on a GPU (stand-in runs: no GPU here) passes a run timed
    with CUDA events and names one timed any other way."""
    from pathlib import Path

    import numpy as np

    from explorer.acceptance import checks_launch
    from explorer.acceptance.context import CheckContext, Sizes
    from explorer.launch import config as launch_config

    def fake_run(config: launch_config.LaunchConfig, **_kw: object) -> realrun.RealRunResult:
        g, b, n, e = realrun._shape(config)
        r = realrun.run_here(g, b, n, emulate=True, extent=e)
        r.backend, r.kernel_method = "gpu", method
        # a GPU's time for these few elements: the emulation's own time is the loaded host's, and
        # the check's "< 1 ms" target would then pass or miss by chance
        r.kernel_s = 50e-6
        r.sm_of_block = np.arange(realrun._count(g), dtype=np.int32) % 4
        return r

    monkeypatch.setattr(checks_launch, "sm_count", lambda _ctx: 4)
    monkeypatch.setattr(realrun, "run_real", fake_run)
    ctx = CheckContext(device="cuda:0", out_dir=tmp_path, repo=Path("."), sizes=Sizes.tiny())
    method = realrun.TIMING_METHODS["gpu"]
    good = checks_launch.check_real_run(ctx)
    assert good.status == "pass", good.summary
    assert good.figures[1].name == "kernel time"
    assert good.figures[1].note == realrun.TIMING_METHODS["gpu"]
    assert good.figures[1].target == "< 1 ms" and good.figures[1].met is (good.figures[1].value < 1.0)
    method = "launch + synchronize"
    bad = checks_launch.check_real_run(ctx)
    assert bad.status != "pass" and "not taken with CUDA events" in bad.summary
