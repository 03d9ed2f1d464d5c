"""The measured ceilings of this machine's devices, kept in ``measured-ceilings.json``.

Measuring a roof takes seconds and moves with what else the machine does, so it is done once per
machine and kept: per device ("cpu", "cuda:0") and per machine fingerprint (CPU model, cores,
memory, OS, torch), with when it was measured and whether the machine was quiet. A measurement
from another machine (a home folder shared between lab PCs, a copied profile) is not used.

**A quiet measurement is never replaced by a busy one.** While other programs use the CPU every
bandwidth and the clock read low (a roof measured under load was 20 GB/s where one numpy core
reached 34 GB/s), so a busy measurement is kept only until a quiet one exists, and says so; a new
quiet one replaces whatever was there.

The file is read through ``explorer.statefile`` (size-bounded, never blocks on a named pipe,
nesting-safe) and checked through ``explorer.schema`` (types, finite numbers, ranges: a clock of
1e308 GHz or a ceiling of 1e300 GB/s is damage). A damaged file is moved aside, named, never
deleted; the one sentence saying so is kept for whoever shows it to the user (``take_notice``),
and the ceilings are measured again. A file of an earlier version (one bandwidth, no levels) is
not damaged: its entries are simply measured again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from explorer.roofs.latency import LatencyLadder
from explorer.roofs.model import MAX_TIMESTAMP, Ceiling
from explorer.schema import SchemaError, check_fields, check_range, field_label, show
from explorer.statefile import load_json, save_json
from explorer.userdirs import data_dir

STORE_FILE = "measured-ceilings.json"
STORE_FORMAT = 2
#: a ceilings file bigger than this was not written by the app (a few devices, a few kB each)
MAX_STORE_BYTES = 1 << 20
#: the most devices one file holds (a machine has a CPU and a few GPUs)
MAX_DEVICES = 64
#: no CPU core runs faster than this (GHz): a larger clock in the file is damage
MAX_CLOCK_GHZ = 100.0

StoreStatus = Literal["stored", "other machine", "absent"]


@dataclass
class MeasuredRoof:
    """What was measured for one device on one machine: the clock (CPUs) and the measured ceilings,
    when, and whether the machine was quiet (the noise verdict on the whole measurement)."""

    device: str  # "cpu", "cuda:0"
    fingerprint: str
    measured_at: float
    clock_ghz: float | None = None
    clock_threads: int | None = None
    clock_method: str = ""
    ceilings: list[Ceiling] = field(default_factory=list)
    #: other programs' share of every core while measuring, where psutil could tell
    others_cpu_share: float | None = None
    #: the noise verdict's words when other programs disturbed the measurement; "" when quiet
    busy_reason: str = ""
    #: how long the measurement took (seconds)
    took_s: float | None = None
    #: the app's own long read-only and triad streams over DRAM (GB/s), which no DRAM roof may
    #: exceed, and the working set they ran over (bytes); empty in files stored before them
    streams_gbps: dict[str, float] = field(default_factory=dict)
    streams_bytes: int | None = None
    #: a GPU's pointer-chase latency ladder (``explorer.roofs.latency``); None where none was
    #: measured, and in files stored before it
    latency: LatencyLadder | None = None

    @property
    def quiet(self) -> bool:
        return not self.busy_reason

    def ceiling(self, quantity: str, level: str = "") -> Ceiling | None:
        return next((c for c in self.ceilings if c.quantity == quantity and c.level == level), None)

    def usable_ceilings(self) -> list[Ceiling]:
        """The ceilings as a roof shows them: marked "while busy" where the machine was busy."""
        return [c if self.quiet else replace(c, disturbed=True) for c in self.ceilings]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ceilings"] = [c.to_dict() for c in self.ceilings]
        data["latency"] = self.latency.to_dict() if self.latency is not None else None
        data["quiet"] = self.quiet
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> MeasuredRoof:
        """A stored entry, every field checked; ``SchemaError`` names the first that does not fit."""
        if not isinstance(data, dict):
            raise SchemaError(f"{where or 'an entry'} is {show(data)}, not an object of named values")
        rows = data.get("ceilings", [])
        kwargs = check_fields(cls, {k: v for k, v in data.items() if k not in ("ceilings", "latency")}, where)
        check_range(kwargs["measured_at"], field_label(where, "measured_at"), 0, MAX_TIMESTAMP)
        check_range(kwargs.get("clock_ghz"), field_label(where, "clock_ghz"), 0.01, MAX_CLOCK_GHZ)
        check_range(kwargs.get("clock_threads"), field_label(where, "clock_threads"), 1, 1 << 20)
        check_range(kwargs.get("others_cpu_share"), field_label(where, "others_cpu_share"), 0, 1)
        check_range(kwargs.get("took_s"), field_label(where, "took_s"), 0, 86_400)
        check_range(kwargs.get("streams_bytes"), field_label(where, "streams_bytes"), 1, 1 << 60)
        for name, rate in kwargs.get("streams_gbps", {}).items():
            check_range(rate, field_label(where, f"streams_gbps[{name!r}]"), 0, 1e9)
        if len(kwargs.get("streams_gbps", {})) > 8:
            raise SchemaError(f"{field_label(where, 'streams_gbps')} names more than 8 streams")
        if not isinstance(rows, list):
            raise SchemaError(f"{field_label(where, 'ceilings')} is {show(rows)}, not a list of ceilings")
        kwargs["ceilings"] = [
            Ceiling.from_dict(row, where=f"{where or 'entry'}'s ceiling {i}") for i, row in enumerate(rows, 1)
        ]
        if data.get("latency") is not None:
            kwargs["latency"] = LatencyLadder.from_dict(
                data["latency"], f"{where or 'entry'}'s latency ladder"
            )
        return cls(**kwargs)


# --- the machine fingerprint -------------------------------------------------------------------


def _torch_version() -> str:
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:
        return "none"


def cpu_fingerprint(
    name: str, physical_cores: int | None, logical_cores: int | None, memory_bytes: int | None
) -> str:
    """What must match for a CPU's measured figures to be reused: model, cores, memory, OS, torch."""
    memory_gib = round((memory_bytes or 0) / 2**30)
    return (
        f"cpu|{name}|{physical_cores}c/{logical_cores}t|{memory_gib} GiB|"
        f"{platform.system()} {platform.machine()}|torch {_torch_version()}"
    )


def gpu_fingerprint(name: str, uuid: str | None, driver: str | None) -> str:
    return f"gpu|{name}|{uuid or '-'}|driver {driver or '-'}|torch {_torch_version()}"


#: the fields of a fingerprint in order, per kind (its first field), as ``what_differs`` names them
_FIELDS = {
    "cpu": ("CPU", "cores/threads", "memory", "system", "torch"),
    "gpu": ("GPU", "GPU UUID", "driver", "torch"),
}
#: fields that change with software only: the same machine, updated
_SOFTWARE = ("torch", "driver")


def what_differs(stored: str, current: str) -> tuple[str, bool]:
    """How the fingerprint ``stored`` differs from ``current``, in words ("measured with torch
    2.13.0; this is 2.14.1"), and whether only software differs (the same machine, updated)."""
    old, new = stored.split("|"), current.split("|")
    fields = _FIELDS.get(new[0]) if new else None
    if not old or old[0] != new[0] or fields is None or len(old) != len(new) or len(new) != len(fields) + 1:
        return "measured on another kind of device", False
    words: list[str] = []
    software_only = True
    for label, was, now in zip(fields, old[1:], new[1:], strict=True):
        if was == now:
            continue
        software_only &= label in _SOFTWARE
        for prefix in ("torch ", "driver "):
            if was.startswith(prefix) and now.startswith(prefix):
                was, now = was[len(prefix) :], now[len(prefix) :]
                words.append(f"measured with {prefix}{was}; this is {now}")
                break
        else:
            words.append(f"measured with {label} {was}; this is {now}")
    if not words:
        return "measured here", True
    return "; ".join(words), software_only


# --- the file ----------------------------------------------------------------------------------

_notice_lock = threading.Lock()
_pending_notice: list[str] = []
#: every sentence ever queued: a damaged file that could not be moved aside is read, and found
#: damaged, again at every read, and its sentence is said once, not once per read
_queued_notices: set[str] = set()


def store_path() -> Path:
    return data_dir() / STORE_FILE


def _parse(data: Any) -> dict[str, MeasuredRoof]:
    if not isinstance(data, dict):
        raise SchemaError(f"it is {show(data)}, not an object")
    version = data.get("format_version")
    if version == 1:  # an earlier version's one-bandwidth roofs: not damage, measured again
        return {}
    if version != STORE_FORMAT:
        raise SchemaError(f"its format_version is {show(version)}, not {STORE_FORMAT}")
    roofs = data.get("roofs")
    if not isinstance(roofs, dict):
        raise SchemaError(f"its roofs are {show(roofs)}, not an object of devices")
    if len(roofs) > MAX_DEVICES:
        raise SchemaError(f"it holds {len(roofs):,} devices, more than {MAX_DEVICES}")
    out: dict[str, MeasuredRoof] = {}
    for key, entry in roofs.items():
        roof = MeasuredRoof.from_dict(entry, where=f"the entry {show(key)}")
        if roof.device != key:
            raise SchemaError(f"the entry {show(key)} is for {show(roof.device)}")
        out[key] = roof
    return out


def read_all() -> dict[str, MeasuredRoof]:
    """Every stored roof by device. Never raises or blocks: a damaged file is moved aside and its
    notice kept for ``take_notice``; no file, or one that cannot be read, is no roofs."""
    loaded = load_json(
        store_path(),
        _parse,
        what="measured ceilings",
        instead="they are measured again when next needed",
        max_bytes=MAX_STORE_BYTES,
    )
    if loaded.notice:
        with _notice_lock:
            if loaded.notice not in _queued_notices:
                _queued_notices.add(loaded.notice)
                _pending_notice.append(loaded.notice)
    return loaded.value or {}


def take_notice() -> str:
    """The sentence saying the stored ceilings were damaged and moved aside, once ("" when none)."""
    with _notice_lock:
        text = " ".join(_pending_notice)
        _pending_notice.clear()
    return text


def load(device: str, fingerprint: str) -> tuple[StoreStatus, MeasuredRoof | None]:
    """The stored roof of ``device``: "stored" (this machine's), "other machine" or "absent"."""
    roof = read_all().get(device)
    if roof is None:
        return "absent", None
    if roof.fingerprint != fingerprint:
        return "other machine", roof
    return "stored", roof


@dataclass(frozen=True)
class Saved:
    """What ``save`` did: the roof now stored, whether the new one replaced it, and (when it did
    not) why the new one was turned away: the noise verdict on it."""

    stored: MeasuredRoof
    replaced: bool
    turned_away: str = ""

    @property
    def message(self) -> str:
        """One line for the user: what is stored now and why."""
        from explorer.roofs.texts import when_text

        kept = self.stored
        if not self.replaced:
            return (
                f"{kept.device}: this measurement was disturbed by other programs ({self.turned_away}), "
                f"so the quiet one {when_text(kept.measured_at)} is kept"
            )
        if kept.quiet:
            return f"{kept.device}: measured on a quiet machine and stored ({when_text(kept.measured_at)})"
        return (
            f"{kept.device}: measured while other programs were busy ({kept.busy_reason}); stored until "
            "a quiet measurement replaces it"
        )


def save(roof: MeasuredRoof) -> Saved:
    """Store ``roof`` beside the other devices' (atomically), unless it was measured while busy and
    a quiet one of the same machine is stored: that one stays. ``OSError`` when it cannot be written
    (a full disk, or another process kept the file locked past ``LOCK_WAIT_S``): the caller says so
    in one line.

    The read, the change and the write happen under ``store_lock``: two measurements of different
    devices that end together (two benchmark windows, a CPU and a GPU run) both stay; without it
    the second write replaced the file the first had just written."""
    path = store_path()
    with store_lock(path):
        roofs = read_all()
        old = roofs.get(roof.device)
        if old is not None and old.fingerprint == roof.fingerprint and old.quiet and not roof.quiet:
            return Saved(old, replaced=False, turned_away=roof.busy_reason)
        roofs[roof.device] = roof
        save_json(
            path,
            {"format_version": STORE_FORMAT, "roofs": {k: v.to_dict() for k, v in roofs.items()}},
            create_folder=True,
        )
    return Saved(roof, replaced=True)


#: how long a save waits for another process's save of the same file (a save takes milliseconds;
#: only a process stopped while holding the lock, Ctrl-Z, keeps it longer)
LOCK_WAIT_S = 30.0
_LOCK_POLL_S = 0.02


def lock_path(path: Path) -> Path:
    """The lock file beside ``path`` (``.measured-ceilings.json.lock``): kept, never removed, so
    that two processes can never lock two different files of the same name."""
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def store_lock(path: Path, wait_s: float | None = None) -> Iterator[None]:
    """An advisory lock (``fcntl.flock``, let go by the kernel when the process ends however it
    ends) on the lock file beside ``path``, held for a read-modify-write. ``TimeoutError`` (an
    ``OSError`` whose ``strerror`` names the holder's process) when another process holds it past
    ``wait_s`` (``LOCK_WAIT_S``). Where ``flock`` does not exist (Windows) nothing is locked."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    wait = LOCK_WAIT_S if wait_s is None else wait_s
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(
        lock_path(path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600
    )
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _lock_holder(fd)
                    raise TimeoutError(
                        errno.ETIMEDOUT,
                        f"another process{holder} kept it locked for over {wait:g} s",
                        str(lock_path(path)),
                    ) from None
                time.sleep(_LOCK_POLL_S)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except OSError:
            pass  # the pid is only for the message
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _lock_holder(fd: int) -> str:
    """ " (pid N)" from what the holder wrote in the lock file, "" when it is not a pid."""
    try:
        text = os.pread(fd, 16, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


__all__ = [
    "MeasuredRoof",
    "Saved",
    "cpu_fingerprint",
    "what_differs",
    "gpu_fingerprint",
    "load",
    "read_all",
    "save",
    "store_lock",
    "store_path",
    "take_notice",
]
