"""Ask a driver something, and stop waiting for it after a deadline.

A GPU that fell off the bus makes ``nvmlInit`` (or ``cuInit``, under torch and numba) block
for a minute or for ever, and a call blocked inside a C library cannot be interrupted from
Python. So each such call runs in a daemon thread of its own and the caller waits for it at
most ``deadline_s``: past that it gets ``ProbeTimedOut`` and carries on without the answer.
The thread is never joined; being a daemon, it cannot keep the process alive when the user
quits, and its late answer is dropped.

A probe still stuck from an earlier call (the user pressed Refresh) is not started a second
time: a second ``nvmlInit`` would only queue behind the first inside the library. The caller
is told at once how long that one has been waiting.

Why threads and not child processes: the answer is made of Python objects the rest of the app
reads (handles, records), a child would have to import torch again (seconds) and pickle them
back, and the only thing a child would add, being killable, does not free a driver that hangs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

#: Seconds each probe may take once its module is imported (importing torch itself takes seconds
#: on a slow disk and is not a sign of a hung driver, so it is not counted). NVML answers in
#: milliseconds on a healthy machine; cuInit (the driver probe, torch.cuda, numba.cuda) can take a few seconds on a
#: machine with many GPUs and no persistence daemon, so those get more.
DEADLINES_S: dict[str, float] = {"nvml": 3.0, "driver": 6.0, "torch": 6.0, "numba": 6.0}

#: How each probe is named in what the user reads.
PROBE_NAMES = {
    "nvml": "NVML",
    "driver": "The CUDA driver (cuInit)",
    "torch": "torch.cuda",
    "numba": "numba.cuda",
}


class ProbeTimedOut(Exception):
    """The probe did not answer in time; ``str()`` is the sentence for the device list."""

    def __init__(self, probe: str, deadline_s: float, waiting_s: float | None = None) -> None:
        self.probe = probe
        self.deadline_s = deadline_s
        name = PROBE_NAMES.get(probe, probe)
        if waiting_s is None:
            text = f"{name} did not answer within {deadline_s:g} s: the driver or a GPU may be hung."
        else:
            text = (
                f"{name} has not answered for {waiting_s:.0f} s (asked earlier and still waiting): "
                "the driver or a GPU may be hung."
            )
        super().__init__(text)


@dataclass
class _Call:
    started_s: float
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


_lock = threading.Lock()
_stuck: dict[tuple[str, Hashable], _Call] = {}


def call_with_deadline(probe: str, fn: Callable[[], T], deadline_s: float, *, key: Hashable = None) -> T:
    """``fn()``'s result, or ``ProbeTimedOut`` once ``deadline_s`` has passed without one.

    ``fn``'s own exceptions are raised here as they are. ``key`` names what is being asked
    (the probe and the module asked, by default just the probe): while a call with that key is
    still stuck, a new one is not started.
    """
    slot = (probe, key)
    with _lock:
        earlier = _stuck.get(slot)
        if earlier is not None and not earlier.done.is_set():
            raise ProbeTimedOut(probe, deadline_s, time.monotonic() - earlier.started_s)
        call = _Call(started_s=time.monotonic())

    def run() -> None:
        try:
            call.result = fn()
        except BaseException as exc:  # handed to the caller, or dropped if it gave up
            call.error = exc
        finally:
            call.done.set()
            with _lock:
                if _stuck.get(slot) is call:
                    del _stuck[slot]

    thread = threading.Thread(target=run, name=f"probe-{probe}", daemon=True)
    thread.start()
    if not call.done.wait(deadline_s):
        with _lock:
            if not call.done.is_set():
                _stuck[slot] = call
        if not call.done.is_set():
            raise ProbeTimedOut(probe, deadline_s)
    if call.error is not None:
        raise call.error
    return call.result


def still_stuck() -> list[str]:
    """Probes whose driver call has not returned yet (for tests and the status line)."""
    with _lock:
        return sorted({probe for (probe, _key), c in _stuck.items() if not c.done.is_set()})
