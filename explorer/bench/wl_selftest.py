"""Test-only workloads: at size 2 ``_crash_test`` segfaults, ``_hang_test`` hangs and ``_oom_test``
runs out of memory.

They exist so the runner's recovery (error row, fresh worker, next point) is tested against a
real segfault and a real hang, not a mock. Other sizes time a real, short Python sum.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial

from explorer.bench.execute import Outcome, PointSpec
from explorer.bench.timing import measure
from explorer.bench.variants import Variant
from explorer.bench.workloads import Workload

MISBEHAVING_SIZE = 2
#: when set, the file ``_hang_test`` creates once its point hangs: a test then acts on the hang
#: itself (cancel, close, signal), not on a guess of how long the worker takes to get there
HANG_MARK_ENV = "DEVICE_EXPLORER_TEST_HANG_MARK"


def _segfault() -> None:
    import ctypes

    ctypes.string_at(0)  # reads address 0: SIGSEGV on POSIX, an access violation on Windows


def _out_of_memory() -> None:
    import numpy as np

    np.empty(2**61, dtype=np.uint8)  # 2 EiB: a real MemoryError from the allocator


def _hang() -> None:
    mark = os.environ.get(HANG_MARK_ENV)
    if mark:
        with open(mark, "a"):
            pass
    while True:
        time.sleep(1.0)


def run(w: Workload, spec: PointSpec, *, misbehave: Callable[[], None]) -> Outcome:
    if spec.size == MISBEHAVING_SIZE:
        misbehave()
        _hang()  # a misbehaviour that returned (it should not) must not pass for a measurement
    data = list(range(spec.size * 1000))
    timing = measure(lambda: sum(data), repeats=spec.repeats or 5, budget_s=min(spec.budget_s, 0.2))
    return Outcome(timing, items=float(len(data)), threads=1)


CRASH = (Variant("plain", "", partial(run, misbehave=_segfault)),)
HANG = (Variant("plain", "", partial(run, misbehave=_hang)),)
OUT_OF_MEMORY = (Variant("plain", "", partial(run, misbehave=_out_of_memory)),)
