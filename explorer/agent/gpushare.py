"""A GPU shared by several people, measured fairly: runs queue per GPU, and intruders are named.

Why on the agent's side: the students sharing a lab server each start their own agent there (over
ssh), so the only place their runs can meet is that machine. An agent about to benchmark a GPU
takes that GPU's lock, an ``flock`` on a file in a directory every user can write
(``/tmp/device-explorer-locks``, or ``$DEVICE_EXPLORER_LOCK_DIR``); a second run waits for it and
says so once a second ("waiting: another run is using this GPU (12s)"), which the client shows.
The kernel releases an flock when its process ends, however it ends (killed, ssh dropped), so a
crashed run never leaves the GPU locked.

A lock only orders this app's runs. Other programs (a colleague's training job) are seen through
NVML's list of processes on the GPU: a point measured while another process was listed there is
marked disturbed, like a CPU point other programs slowed down.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from explorer.errors import UserError

LOCK_DIR_ENV = "DEVICE_EXPLORER_LOCK_DIR"
#: How often a waiting run tries the lock again and tells the client how long it has waited.
POLL_S = 1.0

#: lock key -> the open file whose flock this process holds until it exits
_HELD: dict[str, int] = {}


def lock_dir() -> Path:
    """Where the GPU locks live: shared by every user of the machine (sticky, like /tmp)."""
    value = os.environ.get(LOCK_DIR_ENV)
    return Path(value) if value else Path(tempfile.gettempdir()) / "device-explorer-locks"


def waiting_message(waited_s: float) -> str:
    return f"waiting: another run is using this GPU ({waited_s:.0f}s)"


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
    except Exception:  # noqa: BLE001 - no driver or no pynvml: the ordinal still orders runs
        return fallback
    try:
        count = int(lib.nvmlDeviceGetCount())
        uuids = [str(_text(lib.nvmlDeviceGetUUID(lib.nvmlDeviceGetHandleByIndex(i)))) for i in range(count)]
        mapping = cuda_visible_nvml_indices(environ.get("CUDA_VISIBLE_DEVICES"), uuids)
        if ordinal >= len(mapping.nvml_indices):
            return fallback
        index = mapping.nvml_indices[ordinal]
        return "gpu-" + _safe(uuids[index]), index
    except Exception:  # noqa: BLE001 - an NVML that cannot answer: fall back to the ordinal
        return fallback
    finally:
        try:
            lib.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:120]


def hold_gpu_lock(
    key: str,
    on_wait: Callable[[float], None],
    *,
    directory: Path | None = None,
    poll_s: float = POLL_S,
    clock: Callable[[], float] = time.monotonic,
) -> float:
    """Take the lock ``key`` for the rest of this process's life; returns the seconds waited.

    While another process holds it, ``on_wait(seconds_waited)`` is called about every
    ``poll_s``. Taking a lock this process already holds returns at once. Where ``flock`` does
    not exist (Windows) nothing is locked. UserError (one line) when the lock file cannot be
    opened (a directory another user made private).
    """
    if key in _HELD:
        return 0.0
    try:
        import fcntl
    except ImportError:  # Windows: no flock; a laptop's own GPU is rarely shared anyway
        return 0.0
    folder = lock_dir() if directory is None else directory
    path = folder / f"{_safe(key)}.lock"
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            try:
                folder.chmod(0o1777)  # every user's runs must be able to make and lock files here
            except OSError:
                pass
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError as exc:
        raise UserError(
            f"cannot open the GPU lock {str(path)!r} ({exc.strerror}); make {str(folder)!r} writable "
            f"by every user (chmod 1777), or set {LOCK_DIR_ENV}"
        ) from None
    try:
        os.fchmod(fd, 0o666)  # the next user must be able to open it too (umask took bits away)
    except OSError:
        pass  # someone else's file: they made it, and opened it for everyone
    started = clock()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            on_wait(clock() - started)
            time.sleep(poll_s)
        except OSError as exc:
            os.close(fd)
            raise UserError(f"cannot lock {str(path)!r}: {exc.strerror}") from None
    _HELD[key] = fd
    return clock() - started


def release_gpu_locks() -> None:
    """Give back every lock this process holds (the process ending does it too)."""
    while _HELD:
        _, fd = _HELD.popitem()
        try:
            os.close(fd)
        except OSError:
            pass


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
    except Exception:  # noqa: BLE001 - NVML that cannot tell: nothing is claimed either way
        return []
