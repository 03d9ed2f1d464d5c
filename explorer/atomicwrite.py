"""Write a whole file or nothing: a temporary file in the same folder, fsync, then ``os.replace``.

Every file the app writes (settings, the last results, CSV / JSON / PNG exports) comes through
here, because a plain ``open(path, "w")`` truncates the good file first: a full disk, a crash or
a second writer then leaves a half file where the user's data was. The temporary file lives in
the target's own folder (``os.replace`` is atomic only within one file system) and is removed
whatever happens, so no ``.tmp`` litter is left behind, not even when the write fails.

No folder is created unless the caller says so: the app's own data folder may be made, a folder
the user typed wrongly must not be.

Nothing another user planted is written through. In a folder several people can write (``/tmp``,
a course share), another user can put a symbolic link where an export will go
(``ln -s ~victim/precious.txt /tmp/results.csv``) or leave a file of their own there. The kernel's
``fs.protected_symlinks`` stops the link only for programs that open the path; a program that
replaces the file (as this one does, with ``os.replace``) would replace the victim's file. So
``writable_target`` does what the kernel would and more: the last name is followed only when the
link is the writer's own (or root's), a link in a path's folders only as ``protected_symlinks``
allows (not another user's link in a sticky, world-writable folder), and a file that belongs to
someone else is never replaced. Each refusal is an ``UnsafeTarget`` whose message is one line
naming the link or file and its owner.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from pathlib import Path

#: the temporary file's name keeps this much of the target's name, so it stays under the file
#: system's name limit (255 bytes) when the target's own name is already long
TMP_NAME_KEEP = 64

#: how many links in a row are followed before the name is refused (the kernel's own limit)
MAX_LINK_HOPS = 40

_umask_lock = threading.Lock()


class UnsafeTarget(PermissionError):
    """Writing would follow another user's link or replace another user's file. ``strerror`` is
    one sentence that begins with the link's or file's path ("/tmp/r.csv is a symbolic link owned
    by user mallory (uid 1001), not by you; ..."), so every caller that shows ``strerror`` names it."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(errno.EPERM, f"{os.fspath(path)} {reason}", os.fspath(path))

    def __str__(self) -> str:
        return str(self.strerror)


def owner_name(uid: int) -> str:
    """'user alice (uid 1001)', or 'uid 1001' where the account has no name."""
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _is_shared_sticky(info: os.stat_result) -> bool:
    """A sticky folder anyone may write (``/tmp``): where ``protected_symlinks`` applies."""
    mode = info.st_mode
    return bool(mode & stat.S_ISVTX) and bool(mode & stat.S_IWOTH)


def _check_folders(path: Path, me: int) -> None:
    """The links among ``path``'s folders, as the kernel's ``protected_symlinks`` judges them: one
    in a sticky, world-writable folder is followed only when it is the writer's or that folder
    owner's."""
    absolute = Path(os.path.abspath(path))
    for folder in reversed(absolute.parents[:-1]):  # from the top; '/' itself is no link
        try:
            info = os.lstat(folder)
        except OSError:
            return  # a missing folder: the write itself says so
        if not stat.S_ISLNK(info.st_mode) or info.st_uid == me:
            continue
        try:
            holder = os.stat(folder.parent)
        except OSError:
            return
        if _is_shared_sticky(holder) and info.st_uid != holder.st_uid:
            raise UnsafeTarget(
                folder,
                f"is a symbolic link owned by {owner_name(info.st_uid)}, not by you, in the shared "
                f"folder {folder.parent}; another user's link there is never followed",
            )


def writable_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or where the user's own links lead.

    ``UnsafeTarget`` (one line naming the link or file and its owner) when that would follow a
    link of another user or replace a file of another user. Where the OS has no owners (Windows)
    a link is followed as before. Raises nothing for a path that does not exist yet."""
    path = Path(path)
    if os.name != "posix" or not hasattr(os, "geteuid"):
        return Path(os.path.realpath(path)) if path.is_symlink() else path
    me = os.geteuid()
    _check_folders(path, me)
    current = path
    for _ in range(MAX_LINK_HOPS):
        try:
            info = os.lstat(current)
        except OSError:
            return current  # nothing there yet (or unreadable): the write itself says why
        if stat.S_ISLNK(info.st_mode):
            if info.st_uid not in (me, 0):
                raise UnsafeTarget(
                    current,
                    f"is a symbolic link owned by {owner_name(info.st_uid)}, not by you; a link "
                    "another user made is never followed, so the file it points to is not replaced "
                    "(remove the link or choose another name)",
                )
            current = Path(os.path.join(os.path.dirname(current), os.readlink(current)))
            continue
        if info.st_uid != me:
            raise UnsafeTarget(
                current,
                f"belongs to {owner_name(info.st_uid)}, not to you, and is not replaced "
                "(choose another name)",
            )
        return current
    raise UnsafeTarget(path, f"leads through more than {MAX_LINK_HOPS} symbolic links")


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
    then untouched and no temporary file remains. The user's own symbolic link is followed, so the
    file it points to is replaced and the link stays a link; another user's link, or another
    user's file, is refused (``UnsafeTarget``, a ``PermissionError``: see ``writable_target``).
    """
    path = Path(path)
    if create_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    target = writable_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    mode = _new_file_mode(target)
    import tempfile  # only when writing: reading commands do not pay its imports

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


__all__ = ["UnsafeTarget", "owner_name", "writable_target", "write_atomic", "write_text_atomic"]
