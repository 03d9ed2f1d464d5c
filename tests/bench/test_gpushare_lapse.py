"""A run stopped mid-point (SIGSTOP, Ctrl-Z) past the admin's bound marks that point, whichever of
its threads beats first when it resumes.

After SIGCONT the heartbeat thread and the point's own thread both renew the heartbeat. The one
that comes second sees a fresh beat; if it could read ``take_lapse`` between the first one's beat
and the noting of its gap, the point went unmarked (``lapse`` 0.0 on CI, under load). Here the
heartbeat thread is held between the two, and the point must still come out marked.
"""

from __future__ import annotations

import threading

import pytest

from explorer.gpuqueue import share as gpushare
from explorer.gpuqueue.tickets import Place, QueuePolicy

pytest.importorskip("fcntl")

STALL_S = 2.0
#: the gap the held heartbeat reports: a run stopped for this long (past STALL_S)
STOPPED_S = 50.0
#: bound on any one wait for a thread's step (a loaded machine); the waits end on the event
WITHIN_S = 60.0


def test_the_point_is_marked_when_the_heartbeat_thread_saw_the_gap_first(tmp_path, monkeypatch):
    monkeypatch.setattr(gpushare, "read_policy", lambda folder: QueuePolicy(stall_s=STALL_S, turn_s=600))
    real_beat = Place.beat
    parked, go = threading.Event(), threading.Event()

    def beat(place: Place) -> float:
        gap = real_beat(place)
        if threading.current_thread().name == "gpu-heartbeat" and not parked.is_set():
            parked.set()  # the heartbeat is renewed, its gap not yet noted
            assert go.wait(WITHIN_S)
            return STOPPED_S
        return gap

    monkeypatch.setattr(Place, "beat", beat)
    # an empty line: held at once, and the heartbeat thread starts
    gpushare.hold_gpu_lock("gpu-lapse-test", lambda w: None, directory=tmp_path)
    try:
        measuring, done = threading.Event(), threading.Event()
        lapses: list[float] = []

        def point() -> None:  # as the agent measures one point (explorer.commands.agent.bench_point)
            with gpushare.gpu_busy():
                measuring.set()
                done.wait(WITHIN_S)
            lapses.append(gpushare.take_lapse())

        thread = threading.Thread(target=point, daemon=True)
        thread.start()
        assert measuring.wait(WITHIN_S)
        assert parked.wait(WITHIN_S), "the heartbeat thread never beat while the point was measured"
        done.set()  # the point ends while the heartbeat thread is between its beat and its note
        thread.join(0.5)  # before the fix it read take_lapse() here, as 0.0
        go.set()
        thread.join(WITHIN_S)
        assert not thread.is_alive()
        assert lapses == [STOPPED_S]
    finally:
        go.set()
        gpushare.release_gpu_locks()
