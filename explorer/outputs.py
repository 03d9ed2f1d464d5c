"""Files the user asked for (``--csv``, ``--out``, File > Export): checked, locked, written whole.

``check_output`` runs before any work starts (``~`` expanded, the folder present and writable,
never created; one line naming the path and why). ``write_output`` writes through
``explorer.atomicwrite`` while holding the lock below, so a full disk leaves the old file and two
writers never interleave.

One writer per output file: an advisory lock held beside the file for a whole run.

Two ``device-explorer bench --csv same.csv`` started together used to both say "wrote", and the
first run's points were gone (nine in ten times the file was also interleaved). The atomic write
alone cannot fix that: the second ``os.replace`` silently wins. So a run that will write a file
takes a lock on ``.NAME.lock`` beside it *before* any work starts and keeps it until the file is
written; a second run finds it taken and is refused at once in one line naming the first run's
process id, before it spends minutes measuring. Nothing waits, nothing is lost.

The lock is ``fcntl.flock`` (released by the kernel when the process dies, even by SIGKILL, so a
crashed run never leaves a stale lock behind) and ``msvcrt.locking`` on Windows. The lock file
holds the owner's pid for the message and is removed when the lock is released; the
remove-then-relock race is closed by checking, after locking, that the file locked is still the
one at that path.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from explorer.atomicwrite import owner_name, write_atomic
from explorer.errors import UserError
from explorer.inputs import parse_output_path
from explorer.statefile import read_bounded

#: the locks this process holds (by lock-file path) and how deeply: a run that holds the lock
#: for ``--csv`` then writes through ``write_output``, which takes it again
_held: dict[str, int] = {}
_held_guard = threading.Lock()

#: the longest lock-file name that is still readable; longer output names get a hashed one
MAX_LOCK_NAME = 200


def lock_path_for(path: Path) -> Path:
    """``.NAME.lock`` beside ``path`` (a hash of the name where NAME is already very long)."""
    name = f".{path.name}.lock"
    if len(os.fsencode(name)) > MAX_LOCK_NAME:
        name = f".{hashlib.sha256(os.fsencode(path.name)).hexdigest()[:24]}.lock"
    return path.with_name(name)


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock without waiting; ``False`` when another process holds it."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(lock: Path) -> str:
    """Who holds the lock, for the message: 'process 1234', or 'another process'."""
    try:
        data = read_bounded(lock, 32) or b""  # never blocks, whatever was put there
    except (OSError, ValueError):
        data = b""
    text = data.decode("ascii", errors="replace").strip()
    return f"process {text}" if text.isascii() and text.isdigit() else "another process"


@contextlib.contextmanager
def output_lock(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the lock for ``path`` inside the ``with``; ``UserError`` (one line, naming the other
    run's pid) when another run holds it. Re-entrant within a process. The folder must exist
    (``check_output`` first)."""
    path = Path(path)
    lock = lock_path_for(path)
    key = os.path.realpath(lock)
    with _held_guard:
        if key in _held:
            _held[key] += 1
            nested = True
        else:
            nested = False
    if nested:
        try:
            yield path
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    fd = _acquire(path, lock)
    with _held_guard:
        _held[key] = 1
    try:
        yield path
    finally:
        with _held_guard:
            del _held[key]
        with contextlib.suppress(OSError):
            os.unlink(lock)  # while still holding it, so no one can be locking this file now
        os.close(fd)


def _acquire(path: Path, lock: Path) -> int:
    """The open, locked lock file (its pid written); ``UserError`` when another run holds it."""
    while True:
        # O_NOFOLLOW and the check below: in a shared folder someone else's link or pipe named
        # like our lock must not make us block, or truncate the file a link points to.
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(lock, flags | getattr(os, "O_NONBLOCK", 0), 0o644)
        except OSError as exc:
            if os.path.islink(lock):
                raise UserError(
                    f"cannot write {path}: {lock} is a link, not a lock file; remove it"
                ) from None
            raise UserError(
                f"cannot write {path}: no file can be made in {lock.parent} ({exc.strerror or exc})"
            ) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise UserError(f"cannot write {path}: {lock} is not a lock file this app made; remove it")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            # another user's file named like our lock (left by their run, or planted): never
            # written into, as no file of another user is (explorer.atomicwrite)
            os.close(fd)
            raise UserError(
                f"cannot write {path}: {lock} belongs to {owner_name(info.st_uid)}, not to you; "
                "choose another name or folder"
            )
        if not _try_lock(fd):
            os.close(fd)
            raise UserError(
                f"{path} is being written by another device-explorer run ({_holder(lock)}); "
                "wait for it to finish or choose another file"
            )
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except OSError:  # removed by the previous holder between our open and our lock
            same = False
        if same:
            break
        os.close(fd)  # we locked a file that is no longer at the path: take the new one
    with contextlib.suppress(OSError):  # the pid is for the other run's message only
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
    return fd


def check_output(text: str | os.PathLike[str], what: str, suffixes: tuple[str, ...] = ()) -> Path:
    """The path to write, checked before any work starts; one-line ``UserError`` otherwise."""
    return parse_output_path(os.fspath(text), what, suffixes)


def write_output(path: str | os.PathLike[str], data: bytes, what: str) -> Path:
    """Check ``path``, take its lock and replace it with ``data`` in one step; every failure is
    one ``UserError`` naming the path and why (the old file, if any, is then untouched)."""
    target = check_output(path, what)
    with output_lock(target):
        try:
            write_atomic(target, data)
        except OSError as exc:
            raise UserError(f"cannot write {what} to {target}: {exc.strerror or exc}") from None
    return target


__all__ = ["check_output", "lock_path_for", "output_lock", "write_output"]
