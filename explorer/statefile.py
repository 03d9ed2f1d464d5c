"""Read the app's own files (settings, the last results) so that a damaged one costs nothing.

A file the app wrote can still come back damaged: a crash on a file system without journaling, a
copy from another machine, an editor, another version, a prank. Reading one must never hang (a
named pipe where the file was), never exhaust memory (a huge file), never raise into the window
(bytes that are not UTF-8, JSON nested 200,000 deep), and never lose what the user had. So:

* a non-regular file (named pipe, folder, device) is refused without opening it for a blocking read;
* the size is bounded, the text decoded strictly as UTF-8, the JSON parsed with every error caught,
  and the result checked by the caller's ``parse`` (types, ranges, finite numbers);
* a file that fails any of that is *moved aside*, never deleted
  (``settings.json.damaged-20261123T1801``), and the caller gets one sentence naming both paths to
  show the user once (the next start finds no damaged file, so it says nothing again).

Writing goes through ``explorer.atomicwrite``. Qt-free.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from explorer.atomicwrite import write_text_atomic

log = logging.getLogger(__name__)

T = TypeVar("T")

#: the suffix of a file moved aside, before its time stamp
DAMAGED_SUFFIX = ".damaged-"


class Damaged(ValueError):
    """The file is not what the app writes; the message says how, in words for the user."""


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """What ``load_json`` found: the value (``None`` when there was no usable file) and, when the
    file was damaged, the one sentence to show the user."""

    value: T | None
    notice: str = ""


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_bounded(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes; ``None`` when there is no file. Raises ``Damaged`` for anything but a
    regular file of at most ``max_bytes``, ``OSError`` when it cannot be read at all.

    ``O_NONBLOCK`` makes opening a named pipe return at once (a plain open waits for a writer
    forever); ``fstat`` on the opened descriptor then says what it really is, with no window for
    the file to be swapped between a check and the open.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except (IsADirectoryError, PermissionError):
        if path.is_dir():  # Windows refuses to open a folder at all
            raise Damaged("it is a folder, not a file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Damaged(f"it is {_kind_of(info.st_mode)}, not a file")
        if info.st_size > max_bytes:
            raise Damaged(f"it is {info.st_size:,} bytes, more than the {max_bytes:,} this file can hold")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # it grew while we read
                raise Damaged(f"it is more than the {max_bytes:,} bytes this file can hold")
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode_text(data: bytes) -> str:
    """Strict UTF-8 (a leading byte-order mark is allowed: Windows editors add one); ``Damaged``
    naming the first byte that is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Damaged(f"it is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def parse_json_bytes(data: bytes) -> Any:
    """JSON from strict UTF-8; every way it can fail is a ``Damaged`` naming what is wrong."""
    text = decode_text(data)
    if not text.strip():
        raise Damaged("it is empty")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise Damaged("its JSON is nested too deeply") from None
    except ValueError as exc:  # json.JSONDecodeError, and the NaN / Infinity refused below
        raise Damaged(f"it is not valid JSON ({exc})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def damaged_name(path: Path, now: datetime | None = None) -> Path:
    """``NAME.damaged-YYYYMMDDTHHMM`` beside ``path``, with ``-2``, ``-3``... when that is taken."""
    stamp = (now or datetime.now()).strftime("%Y%m%dT%H%M")
    base = path.with_name(f"{path.name}{DAMAGED_SUFFIX}{stamp}")
    candidate, n = base, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def move_aside(path: Path, now: datetime | None = None) -> Path:
    """Rename a damaged file out of the way (never delete it: it may be all the user has)."""
    aside = damaged_name(path, now)
    os.rename(path, aside)
    return aside


def load_json(
    path: str | os.PathLike[str],
    parse: Callable[[Any], T],
    *,
    what: str,
    instead: str,
    max_bytes: int,
) -> Loaded[T]:
    """Read ``path`` as JSON and give it to ``parse``, which returns the value or raises
    ``ValueError`` (``Damaged``, or a schema error) saying what is wrong.

    Never raises and never blocks. No file: ``Loaded(None)``. A damaged file: moved aside and
    ``Loaded(None, notice)``, the notice one sentence such as "The saved benchmark results in
    /x/last-bench-results.json could not be used (median_s of point 1 is 'fast', not a number),
    so the file was moved to /x/last-bench-results.json.damaged-20261123T1801; the panel starts
    empty." ``what`` names the file for the user, ``instead`` says what happens in its place.
    """
    path = Path(path)
    try:
        data = read_bounded(path, max_bytes)
        if data is None:
            return Loaded(None)
        value = parse(parse_json_bytes(data))
    except (ValueError, ArithmeticError) as exc:  # Damaged is one; an OverflowError of a parse too
        return Loaded(None, _set_aside(path, str(exc), what, instead))
    except RecursionError:  # a parse function walking deeply nested values
        return Loaded(None, _set_aside(path, "its values are nested too deeply", what, instead))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        log.info("%s not read from %s: %s", what, path, reason)
        return Loaded(None, _writable_text(f"The {what} in {path} could not be read ({reason}); {instead}."))
    return Loaded(value)


def _set_aside(path: Path, reason: str, what: str, instead: str) -> str:
    return _writable_text(_set_aside_words(path, reason, what, instead))


def _writable_text(text: str) -> str:
    """``text`` with what no log, terminal or window can hold (a lone surrogate, from a file name's
    undecodable byte or a JSON escape) written as its escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _set_aside_words(path: Path, reason: str, what: str, instead: str) -> str:
    try:
        aside = move_aside(path)
    except OSError as exc:
        log.info("damaged %s %s could not be moved aside: %s", what, path, exc)
        return (
            f"The {what} in {path} could not be used ({reason}) and could not be moved aside "
            f"({exc.strerror or exc}); {instead}."
        )
    log.info("damaged %s %s moved to %s: %s", what, path, aside, reason)
    return f"The {what} in {path} could not be used ({reason}), so the file was moved to {aside}; {instead}."


def save_json(path: str | os.PathLike[str], value: Any, *, create_folder: bool = True) -> Path:
    """Write ``value`` as indented JSON, atomically. NaN and infinities are refused
    (``ValueError``): the app would refuse to read them back. ``create_folder`` is for the app's
    own data and settings folders only."""
    text = json.dumps(value, indent=1, allow_nan=False) + "\n"
    return write_text_atomic(path, text, create_folder=create_folder)


__all__ = [
    "Damaged",
    "Loaded",
    "damaged_name",
    "decode_text",
    "load_json",
    "move_aside",
    "parse_json_bytes",
    "read_bounded",
    "save_json",
]
