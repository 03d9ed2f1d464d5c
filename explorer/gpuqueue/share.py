"""A GPU shared by several people, measured fairly: runs take turns per GPU, and intruders are named.

Why on the agent's side: the students sharing a lab server each start their own agent there (over
ssh), so the only place their runs can meet is that machine. An agent about to measure on a GPU
takes its turn in that GPU's line (``explorer.gpuqueue.tickets``: two small files per run in a
sticky folder, ``/tmp`` or the admin's ``$DEVICE_EXPLORER_LOCK_DIR``) and asks again before every
point (``hold_gpu_lock``, answered at once while the turn lasts). While it waits, it says who holds
the GPU, since when, for which workload, and where it is in the line, once a second
(``QueueWait``), which the client shows.

A turn ends when the run ends however it ends (its lock on its ticket goes with the process),
when it stops making progress for the admin's ``stall_s`` (its heartbeat is renewed while it
waits or measures, never while it sits idle: a client suspended with Ctrl-Z or a frozen laptop
stops it, and so does SIGSTOP on the agent), and after ``turn_s`` while others wait (between two
points: the run goes to the back of the line). A run that finds it was stopped for longer than
``stall_s`` while measuring marks that point disturbed: another run may have used the GPU.

A line only orders this app's runs. Other programs (a colleague's training job) are seen through
NVML's list of processes on the GPU: a point measured while another process was listed there is
marked disturbed, like a CPU point other programs slowed down.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.errors import UserError
from explorer.gpuqueue.tickets import (
    LOCK_DIR_ENV,
    Line,
    Place,
    QueuePolicy,
    Ticket,
    folder_problem,
    full_words,
    holder_stalled,
    order,
    queue_dir,
    read_policy,
    survey,
    sweep_own,
    waiting_short,
    waiting_words,
)

__all__ = ["LOCK_DIR_ENV", "QueueWait", "gpu_busy", "hold_gpu_lock", "release_gpu_locks", "take_lapse"]

#: How often a waiting run looks at the line again and tells the client where it stands.
POLL_S = 1.0


@dataclass(frozen=True)
class QueueWait:
    """A run waiting for a GPU another run holds: the sentence to show, and what it is about
    (the client says it again when ``holder``, ``ahead`` or ``stalled`` change)."""

    message: str
    waited_s: float
    holder: str = ""  # the user holding the GPU, "" when nobody does now
    ahead: int = 0  # places before this run's, the holder's included
    stalled: bool = False  # the holder has stopped making progress
    short: str = ""  # the same in a few words (a progress bar); ``message`` when not given

    def to_event(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "short": self.short,
            "waiting_s": round(self.waited_s, 1),
            "holder": self.holder,
            "ahead": self.ahead,
            "stalled": self.stalled,
        }

    @classmethod
    def from_event(cls, data: Mapping[str, Any]) -> QueueWait | None:
        """The wait an agent's ``gpu.lock`` event describes; None when it is not one."""
        message, waited = data.get("message"), data.get("waiting_s")
        if not isinstance(message, str) or isinstance(waited, bool) or not isinstance(waited, (int, float)):
            return None
        holder, ahead, stalled = data.get("holder", ""), data.get("ahead", 0), data.get("stalled", False)
        short = data.get("short")
        return cls(
            message=message[:300],
            waited_s=float(waited) if math.isfinite(waited) else 0.0,
            holder=holder[:64] if isinstance(holder, str) else "",
            ahead=ahead
            if isinstance(ahead, int) and not isinstance(ahead, bool) and 0 <= ahead < 10**6
            else 0,
            stalled=stalled is True,
            short=short[:120] if isinstance(short, str) and short else message[:120],
        )


@dataclass
class _Turn:
    """This process's place in one GPU's line."""

    place: Place
    policy: QueuePolicy
    device: str
    since: float = 0.0  # monotonic: when this turn began (0 while waiting)
    lapsed_s: float = 0.0  # the longest gap between beats while measuring, when over stall_s
    seen: dict[tuple[int, int, int], tuple[float, float]] = field(default_factory=dict)


_HELD: dict[str, _Turn] = {}
_STATE = threading.Lock()  # guards _HELD's turns against the heartbeat thread
#: held across a beat and the noting of its gap, so that no reader of ``take_lapse`` (nor another
#: beat) runs between the two: the heartbeat thread wakes first after a SIGCONT, and the point's own
#: closing beat then saw a fresh heartbeat and the lapse not yet noted (the point went unmarked)
_BEATING = threading.Lock()
_busy = 0
_beater: threading.Thread | None = None


def gpu_identity(
    device: str, nvml: Any = None, env: Mapping[str, str] | None = None
) -> tuple[str, int | None]:
    """The lock key and NVML index of ``cuda:N`` on this machine.

    The key is the GPU's UUID when NVML can tell it: ``cuda:0`` is a different GPU for two users
    whose ``CUDA_VISIBLE_DEVICES`` (or Slurm allocations) differ, the UUID is the same for both.
    Without NVML the CUDA ordinal is all there is (``cuda-0``), and the NVML index is None.
    """
    from explorer.devices.nvml import cuda_visible_nvml_indices, import_nvml

    ordinal = int(device.split(":", 1)[1]) if ":" in device else 0
    fallback = (f"cuda-{ordinal}", None)
    environ = os.environ if env is None else env
    try:
        lib = import_nvml() if nvml is None else nvml
        lib.nvmlInit()
    except Exception:  # no driver or no pynvml: the ordinal still orders runs
        return fallback
    try:
        count = int(lib.nvmlDeviceGetCount())
        uuids = [str(_text(lib.nvmlDeviceGetUUID(lib.nvmlDeviceGetHandleByIndex(i)))) for i in range(count)]
        mapping = cuda_visible_nvml_indices(environ.get("CUDA_VISIBLE_DEVICES"), uuids)
        if ordinal >= len(mapping.nvml_indices):
            return fallback
        index = mapping.nvml_indices[ordinal]
        return "gpu-" + _safe(uuids[index]), index
    except Exception:  # an NVML that cannot answer: fall back to the ordinal
        return fallback
    finally:
        try:
            lib.nvmlShutdown()
        except Exception:
            pass


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:120]


def hold_gpu_lock(
    key: str,
    on_wait: Callable[[QueueWait], None],
    *,
    device: str = "cuda:0",
    workload: str = "",
    directory: Path | None = None,
    poll_s: float = POLL_S,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Take, or keep, this process's turn on GPU ``key``; returns the seconds waited.

    Asked again before each point: while the turn lasts it renews the heartbeat and returns at
    once. A turn that lapsed (this run was stopped for longer than ``stall_s``) or that is over
    (``turn_s`` passed and another run waits) is given up, and the run waits again at the back
    of the line. While another run holds the GPU, ``on_wait`` is called about every ``poll_s``.
    Where ``flock`` does not exist (Windows) nothing is queued. UserError (one line) when the
    folder cannot hold a line other users cannot break, or a place cannot be written there."""
    try:
        import fcntl  # noqa: F401 - the line needs flock
    except ImportError:  # Windows: a laptop's own GPU is rarely shared
        return 0.0
    folder = queue_dir() if directory is None else directory
    problem = folder_problem(folder)
    if problem:
        raise UserError(problem)
    policy = read_policy(folder)
    with _STATE:
        turn = _HELD.get(key)
    try:
        if turn is not None and _keep(turn, policy, folder, key, clock):
            return 0.0
        if turn is None:
            sweep_own(folder, key)
            turn = _Turn(Place(folder, key, workload[:60], extra={"device": device}), policy, device)
        turn.policy, turn.since, turn.lapsed_s = policy, 0.0, 0.0
    except OSError as exc:
        raise UserError(_cannot_join(folder, key, exc)) from None
    _join(turn, folder, key)
    with _STATE:
        _HELD[key] = turn
    _leave_at_exit()
    return _wait_for_turn(turn, folder, key, on_wait, poll_s, clock)


def _join(turn: _Turn, folder: Path, key: str) -> None:
    """Take a place in the line; UserError (one line) when none can be written there."""
    try:
        turn.place.join()
    except OSError as exc:
        raise UserError(_cannot_join(folder, key, exc)) from None


def _cannot_join(folder: Path, key: str, exc: OSError) -> str:
    """Why no place could be written, naming whoever fills a full folder."""
    words = f"cannot take a place in the GPU queue in {str(folder)!r} ({exc.strerror or exc})"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        who = full_words(folder)
        return (
            f"{words}{'; ' + who if who else ''}; the lab admin can remove ended and planted places "
            "with 'sudo device-explorer admin queue --clean'"
        )
    return f"{words}; the lab admin can check it with 'ls -ld {folder}'"


def _keep(turn: _Turn, policy: QueuePolicy, folder: Path, key: str, clock: Callable[[], float]) -> bool:
    """Whether this process still holds ``turn`` (renewing its heartbeat if so)."""
    gap = turn.place.beat()
    if not turn.since or gap > policy.stall_s or turn.lapsed_s:
        return False  # stopped for longer than the line allows: others went on without it
    me = turn.place.name
    tickets = survey(folder, key, mine=me, stall_s=policy.stall_s).tickets
    line = order(tickets, me=me, now_mono=clock(), policy=policy, seen_holding=turn.seen)
    if not line.holds:
        return False
    if clock() - turn.since <= policy.turn_s:
        return True
    # the turn is over when anyone else waits, this user's own other runs included
    return not any(
        t.name != me and t.alive and t.beat_age_s is not None and t.beat_age_s <= policy.stall_s
        for t in tickets
    )


def _wait_for_turn(
    turn: _Turn,
    folder: Path,
    key: str,
    on_wait: Callable[[QueueWait], None],
    poll_s: float,
    clock: Callable[[], float],
) -> float:
    started = clock()
    while True:
        seen = survey(folder, key, mine=turn.place.name, stall_s=turn.policy.stall_s)
        line = order(
            seen.tickets, me=turn.place.name, now_mono=clock(), policy=turn.policy, seen_holding=turn.seen
        )
        if line.holds:
            turn.place.hold()
            turn.since = clock()
            _start_beating()
            return turn.since - started
        waited = clock() - started
        holder = line.holder
        lost = _lost_place(seen.mine(turn.place.name), line)
        if lost:  # e.g. an admin's clean-up took our files: say so, then take a place again
            message = f"waiting for {turn.device}: {lost}; taking a new place (waited {waited:.0f} s)"
            short = f"waiting for {turn.device}: taking a new place in the line"
        else:
            message = waiting_words(line, turn.device, waited, turn.policy, note=seen.ignored_words())
            short = waiting_short(line, turn.device, turn.policy)
        on_wait(
            QueueWait(
                message=message,
                waited_s=waited,
                holder=holder.user if holder is not None else "",
                ahead=line.ahead,
                stalled=holder_stalled(line, turn.policy),
                short=short,
            )
        )
        time.sleep(poll_s)
        if lost:
            _join(turn, folder, key)
        else:
            turn.place.beat()


def _lost_place(mine: Ticket | None, line: Line) -> str:
    """Why this run's own place no longer counts ("" while it does): its files were removed (an
    admin cleaning the folder), or its heartbeat is gone or went stale as others see it."""
    if mine is None:
        return "this run's place in the GPU queue was removed"
    if mine.beat_age_s is None:
        return "this run's heartbeat file in the GPU queue was removed"
    if line.mine is None and not line.own_first:
        return "this run's place in the GPU queue stopped counting (no heartbeat seen for too long)"
    return ""


def _leave_at_exit() -> None:
    """An agent ends with ``os._exit`` (no atexit): give the place back on its way out."""
    from explorer.agent.serve import EXIT_HOOKS

    if release_gpu_locks not in EXIT_HOOKS:
        EXIT_HOOKS.append(release_gpu_locks)


def _start_beating() -> None:
    global _beater
    with _STATE:
        if _beater is not None and _beater.is_alive():
            return
        _beater = threading.Thread(target=_beat_while_busy, name="gpu-heartbeat", daemon=True)
        _beater.start()


def _beat_while_busy() -> None:
    """Renew every held turn's heartbeat while a point is measured; note a gap over ``stall_s``
    (the process was stopped mid-point: its turn lapsed as others saw it)."""
    while True:
        with _STATE:
            turns = list(_HELD.values())
            busy = _busy > 0
        if not turns:
            return
        if busy:
            _beat(turns)
        time.sleep(min(t.policy.beat_every_s for t in turns))


def _beat(turns: list[_Turn]) -> None:
    with _BEATING:
        for turn in turns:
            if turn.since:
                gap = turn.place.beat()
                if gap > turn.policy.stall_s:
                    turn.lapsed_s = max(turn.lapsed_s, gap)


@contextlib.contextmanager
def gpu_busy() -> Iterator[None]:
    """Around a measurement: the held turns' heartbeats are renewed the whole time."""
    global _busy
    with _STATE:
        _busy += 1
        turns = list(_HELD.values())
    _beat(turns)
    try:
        yield
    finally:
        with _STATE:
            _busy -= 1
            turns = list(_HELD.values())
        _beat(turns)


def take_lapse() -> float:
    """The longest time a held turn went without a heartbeat (over ``stall_s``) in this turn; 0
    when none did. A point measured across such a gap may have shared the GPU with the next run
    (the next ``hold_gpu_lock`` gives the lapsed turn up and waits again)."""
    with _BEATING, _STATE:
        return max((t.lapsed_s for t in _HELD.values()), default=0.0)


def release_gpu_locks() -> None:
    """Leave every line this process is in (the process ending does it too)."""
    with _STATE:
        turns = list(_HELD.values())
        _HELD.clear()
    for turn in turns:
        turn.place.leave()


def other_gpu_processes(nvml_index: int | None, nvml: Any = None, own_pid: int | None = None) -> list[str]:
    """The processes other than this one NVML lists on that GPU, as "name (pid N)"; empty when
    there are none or NVML cannot tell (a GPU without NVML is not watched, and says nothing)."""
    if nvml_index is None:
        return []
    from explorer.devices.nvml import NvmlSession, process_name

    me = os.getpid() if own_pid is None else own_pid
    try:
        with NvmlSession(nvml) as session:
            raw = session.nvml.nvmlDeviceGetComputeRunningProcesses(session.handle(nvml_index))
            pids = [int(p.pid) for p in raw or [] if int(p.pid) != me]
            return [f"{process_name(session.nvml, pid)} (pid {pid})" for pid in pids]
    except Exception:  # NVML that cannot tell: nothing is claimed either way
        return []
