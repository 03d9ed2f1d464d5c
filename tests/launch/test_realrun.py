"""The real run: the kernel launched with the user's configuration records who wrote each element."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.errors import UserError
from explorer.launch import realrun


def test_simulator_run_records_the_writer_of_every_element():
    # The N = 5466 lesson in small: 3 blocks of 64 threads for 150 elements -> 42 idle threads.
    result = realrun.run_real((3, 1, 1), (64, 1, 1), 150, simulator=True, timeout_s=120)
    assert result.backend == "simulator"
    assert result.n == 150
    i = np.arange(150)
    assert (result.block_of_element == i // 64).all()
    assert (result.thread_of_element == i % 64).all()
    assert (result.writes_per_element == 1).all()
    assert result.sum_correct
    assert "every element written exactly once" in result.summary()


def test_simulator_run_2d_grid_and_block_use_x_fastest_linear_indices():
    # grid (2, 2), block (4, 2): 4 blocks of 8 threads, N = 30 leaves the last 2 threads idle.
    result = realrun.run_real((2, 2, 1), (4, 2, 1), 30, simulator=True, timeout_s=120)
    i = np.arange(30)
    assert (result.block_of_element == i // 8).all()
    assert (result.thread_of_element == i % 8).all()


def test_too_few_threads_leave_elements_untouched():
    result = realrun.run_real((1, 1, 1), (32, 1, 1), 40, simulator=True, timeout_s=120)
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
        realrun.run_real((1, 1, 1), (32, 1, 1), 0, simulator=True)
    assert "\n" not in str(info.value)
