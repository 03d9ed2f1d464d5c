"""The real run: the kernel launched with the user's configuration records who wrote each element."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.errors import UserError
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch_runs import realrun


def _launch(grid, block, n=None, extent=None) -> LaunchConfig:
    return LaunchConfig(Dim3(*grid), Dim3(*block), n=n, extent=Dim3(*extent) if extent else None)


@pytest.mark.slow
def test_simulator_run_records_the_writer_of_every_element():
    # The N = 5466 lesson in small: 3 blocks of 64 threads for 150 elements -> 42 idle threads.
    result = realrun.run_real(_launch((3, 1, 1), (64, 1, 1), 150), simulator=True, timeout_s=120)
    assert result.backend == "simulator"
    assert result.n == 150
    i = np.arange(150)
    assert (result.block_of_element == i // 64).all()
    assert (result.thread_of_element == i % 64).all()
    assert (result.writes_per_element == 1).all()
    assert result.sum_correct
    assert "every element written exactly once" in result.summary()


@pytest.mark.slow
def test_simulator_run_2d_grid_and_block_use_x_fastest_linear_indices():
    # grid (2, 2), block (4, 2): 4 blocks of 8 threads, N = 30 leaves the last 2 threads idle.
    result = realrun.run_real(_launch((2, 2, 1), (4, 2, 1), 30), simulator=True, timeout_s=120)
    i = np.arange(30)
    assert (result.block_of_element == i // 8).all()
    assert (result.thread_of_element == i % 8).all()


@pytest.mark.slow
def test_too_few_threads_leave_elements_untouched():
    result = realrun.run_real(_launch((1, 1, 1), (32, 1, 1), 40), simulator=True, timeout_s=120)
    assert result.untouched == 8
    assert (result.block_of_element[32:] == -1).all()
    assert "8 elements untouched" in result.summary()


def test_simulator_refuses_a_launch_that_would_take_minutes():
    with pytest.raises(UserError) as info:
        realrun.check_size((2048, 1, 1), (1024, 1, 1), None, simulator=True)
    msg = str(info.value)
    assert "2,097,152 threads" in msg and f"{realrun.SIMULATOR_MAX_THREADS:,}" in msg
    # the same launch is fine for a GPU
    assert realrun.check_size((2048, 1, 1), (1024, 1, 1), None, simulator=False) == 2048 * 1024


def test_child_failure_comes_back_as_one_line(monkeypatch):
    with pytest.raises(UserError) as info:
        realrun.run_real(_launch((1, 1, 1), (32, 1, 1), 0), simulator=True)
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_emulation_writes_exactly_what_the_simulator_writes():
    """The compiled CPU emulation runs the kernel's own index code over the same grid: for a 2D
    grid and block with idle threads its records match the CUDA simulator's element for element."""
    args = ((3, 2, 1), (8, 4, 1), 150)
    sim = realrun.run_real(_launch(*args), simulator=True, timeout_s=120)
    emu = realrun.run_real(_launch(*args), backend="emulation", timeout_s=120)
    assert emu.backend == "emulation" and "compiled CPU emulation" in emu.summary()
    assert (emu.block_of_element == sim.block_of_element).all()
    assert (emu.thread_of_element == sim.thread_of_element).all()
    assert (emu.writes_per_element == sim.writes_per_element).all() and emu.sum_correct


@pytest.mark.slow
def test_emulation_runs_the_100000_lesson_and_finds_a_short_grid():
    result = realrun.run_real(_launch((98, 1, 1), (1024, 1, 1), 100_000), backend="emulation", timeout_s=120)
    assert result.n == 100_000 and result.untouched == 0 and result.mismatches(1024) == 0
    short = realrun.run_real(_launch((97, 1, 1), (1024, 1, 1), 100_000), backend="emulation", timeout_s=120)
    assert short.untouched == 100_000 - 97 * 1024


def test_without_a_gpu_small_launches_use_the_simulator_and_large_ones_the_emulation():
    assert realrun.cpu_backend(6 * 1024) == "simulator"
    assert realrun.cpu_backend(98 * 1024) == "emulation"
    with pytest.raises(UserError, match="the CPU emulation keeps at most"):
        realrun.check_size((1 << 15, 1, 1), (1024, 1, 1), None, backend="emulation")
    # the window asks with the launch itself, and gets the same answer
    with pytest.raises(UserError, match="the CPU emulation keeps at most"):
        realrun.check_launch(_launch((1 << 15, 1, 1), (1024, 1, 1)), "emulation")
    assert realrun.check_launch(_launch((4, 4, 1), (16, 16, 1), extent=(60, 60, 1)), "simulator") == 3600


@pytest.mark.slow
def test_a_2d_problem_is_written_by_the_thread_at_each_pixel():
    """Grid 4x4 of 16x16 over a 60 x 60 image writes 3,600 pixels, not 4,096 in a row;
    the simulator and the emulation agree, and each pixel's writer is the one the visualizer predicts."""
    image = _launch((4, 4, 1), (16, 16, 1), extent=(60, 60, 1))
    sim = realrun.run_real(image, simulator=True, timeout_s=120)
    emu = realrun.run_real(image, backend="emulation", timeout_s=120)
    for r in (sim, emu):
        assert r.n == 3600 and r.extent == (60, 60, 1) and r.untouched == 0 and r.written_twice == 0
        assert r.mismatches(256) == 0 and "60 x 60 problem (3,600 elements)" in r.summary()
    assert (sim.block_of_element == emu.block_of_element).all()
    # pixel (x=17, y=33): block (1, 2) = 1 + 4 * 2 = 9, thread (1, 1) = 1 + 16 * 1 = 17
    i = 33 * 60 + 17
    assert (emu.block_of_element[i], emu.thread_of_element[i]) == (9, 17)
    # too few blocks along y: the bottom rows stay untouched, and are counted
    short = realrun.run_real(_launch((4, 3, 1), (16, 16, 1), extent=(60, 60, 1)), backend="emulation")
    assert short.untouched == 60 * (60 - 48) and short.mismatches(256) == 0


def test_a_result_sent_inline_comes_back_whole_and_is_checked():
    """A remote run's arrays travel in the JSON answer: delta-coded and compressed, rebuilt
    exactly, and refused when they do not fit the launch that was asked for."""
    import base64
    import json
    import zlib

    import numpy as np

    from explorer.errors import UserError
    from explorer.launch_runs.realrun import result_from_inline, result_to_inline, run_here

    g, b = (4, 1, 1), (64, 1, 1)
    here = run_here(g, b, 200, emulate=True)  # 256 threads for 200 elements
    sent = json.loads(json.dumps(result_to_inline(here)))  # as it crosses the pipe
    assert len(json.dumps(sent)) < 1000  # a correct launch's arrays shrink to almost nothing
    back = result_from_inline(sent, g, b, 200, None, 1.5)
    for name in ("block_of_element", "thread_of_element", "writes_per_element"):
        assert (
            np.array_equal(getattr(back, name), getattr(here, name))
            and getattr(back, name).dtype == getattr(here, name).dtype
        )
    assert back.mismatches(64) == 0 and back.untouched == 0 and back.total_s == 1.5

    bomb = base64.b64encode(zlib.compress(bytes(8 * 10**7))).decode()
    for bad, words in (
        ({**sent, "grid": [8, 1, 1]}, "another launch"),
        ({**sent, "n": 100}, "another launch"),
        ({**sent, "backend": "quantum"}, "backend"),
        ({**sent, "kernel_s": "fast"}, "kernel time"),
        ({**sent, "writes_per_element": "!!"}, "not encoded"),
        ({**sent, "block_of_element": bomb}, "does not hold 200 values"),
        ([], "no result"),
    ):
        with pytest.raises(UserError, match=words):
            result_from_inline(bad, g, b, 200, None, 1.0)
