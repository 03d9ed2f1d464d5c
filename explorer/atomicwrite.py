"""Write a whole file or nothing: a temporary file in the same folder, fsync, then ``os.replace``.

Every file the app writes (settings, the last results, CSV / JSON / PNG exports) comes through
here, because a plain ``open(path, "w")`` truncates the good file first: a full disk, a crash or
a second writer then leaves a half file where the user's data was. The temporary file lives in
the target's own folder (``os.replace`` is atomic only within one file system) and is removed
whatever happens, so no ``.tmp`` litter is left behind, not even when the write fails.

No folder is created unless the caller says so: the app's own data folder may be made, a folder
the user typed wrongly must not be.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from pathlib import Path

#: the temporary file's name keeps this much of the target's name, so it stays under the file
#: system's name limit (255 bytes) when the target's own name is already long
TMP_NAME_KEEP = 64

_umask_lock = threading.Lock()


def _current_umask() -> int:
    """The process's umask, read without changing it where the OS allows (``/proc``), else by
    setting and restoring it under a lock."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _new_file_mode(target: Path) -> int:
    """The mode a plain ``open(target, "w")`` would give: the old file's, or 0o666 less the umask
    (``mkstemp`` makes 0o600 files, which would hide an export from the user's group)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~_current_umask()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); best effort, and a no-op where folders cannot be
    opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike[str], data: bytes, *, create_folder: bool = False) -> Path:
    """Replace ``path`` with ``data`` in one step; returns the path written.

    Raises ``OSError`` when it cannot (the folder is missing, read-only or full); the old file is
    then untouched and no temporary file remains. A symbolic link is followed, so the file it
    points to is replaced and the link stays a link.
    """
    path = Path(path)
    if create_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    folder = target.parent if str(target.parent) else Path(".")
    mode = _new_file_mode(target)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name[:TMP_NAME_KEEP]}.", suffix=".tmp", dir=folder)
    try:
        try:
            _write_all(fd, data)
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_folder(folder)
    return path


def write_text_atomic(path: str | os.PathLike[str], text: str, *, create_folder: bool = False) -> Path:
    """``write_atomic`` for text, as UTF-8 with the line endings given."""
    return write_atomic(path, text.encode("utf-8"), create_folder=create_folder)


__all__ = ["write_atomic", "write_text_atomic"]
