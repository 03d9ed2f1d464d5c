"""The remote machines the user added, remembered between runs (``remotes.json`` in the data folder).

A student adds the lab's GPU server once and finds it again on every start, so each remote is
kept as the user typed it: the ssh destination (``gpu-lab``), the launcher prefix for a cluster
(``srun --gres=gpu:1 --time=10``, empty for none) and the remote Python (``python3``, or a venv's
``~/dx/bin/python``). Each is checked with ``explorer.remote.target.parse_remote`` on the way in
and again on the way out: a file edited by hand cannot smuggle ``-oProxyCommand=...`` past the
check the Add dialog made.

Reading never fails and never blocks (``explorer.statefile``): a file that is not what the app
writes is moved aside, never deleted, and one sentence names both paths; when only some entries
are bad, the good ones are kept, the file as it was is copied aside (nothing the user had is
lost) and the sentence names the first bad entry and its reason. Writing is atomic (a crash
mid-write leaves the old list). Each change re-reads the file first, so two windows adding
remotes at once do not drop each other's. Qt-free.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.errors import UserError
from explorer.remote.target import DEFAULT_PYTHON, Remote, parse_remote
from explorer.statefile import Loaded, damaged_name, load_json, save_json
from explorer.userdirs import data_dir

log = logging.getLogger(__name__)

REMOTES_FILE = "remotes.json"
FORMAT_VERSION = 1
#: a list of remote machines bigger than this was not written by the app
MAX_REMOTES_BYTES = 256 * 1024
#: more remotes than anyone lists in a window; a file holding more was not the user's doing
MAX_REMOTES = 50
_FIELDS = ("destination", "prefix", "python")


@dataclass(frozen=True)
class SavedRemote:
    """One remembered remote, as the user typed it: ``prefix`` "" for none, ``python`` the remote
    interpreter (``python3`` unless the user named another)."""

    destination: str
    prefix: str = ""
    python: str = DEFAULT_PYTHON

    def remote(self) -> Remote:
        """The checked ``Remote`` (``UserError``, one line, when the entry is not acceptable)."""
        return parse_remote(self.destination, self.prefix or None, self.python or None)

    @property
    def same_as(self) -> tuple[str, tuple[str, ...]]:
        """What makes two entries the same machine for the list: the destination and the launcher's
        arguments (``gpu-lab`` alone and ``gpu-lab via srun ...`` are different ways in)."""
        return (self.destination, self.remote().prefix)

    def to_dict(self) -> dict[str, str]:
        return {"destination": self.destination, "prefix": self.prefix, "python": self.python}


def make_saved(destination: str, prefix: str = "", python: str = "") -> SavedRemote:
    """A ``SavedRemote`` from what the user typed (surrounding spaces dropped, the defaults filled
    in), checked: ``UserError`` with one line naming the value that is wrong."""
    entry = SavedRemote(destination.strip(), prefix.strip(), python.strip() or DEFAULT_PYTHON)
    entry.remote()
    return entry


def remotes_path() -> Path:
    return data_dir() / REMOTES_FILE


@dataclass(frozen=True)
class _Parsed:
    remotes: list[SavedRemote]
    #: why the first refused entry was refused ("" when every entry was good), and how many were
    problem: str = ""
    refused: int = 0


def _entry(data: Any, number: int) -> SavedRemote:
    if not isinstance(data, dict):
        raise UserError(f"remote {number} is not an object of destination, prefix and python")
    values: dict[str, str] = {}
    for name in _FIELDS:
        value = data.get(name, "" if name != "destination" else None)
        if not isinstance(value, str):
            raise UserError(f"remote {number}'s {name} is {type(value).__name__}, not text")
        values[name] = value
    try:
        return make_saved(values["destination"], values["prefix"], values["python"])
    except UserError as exc:
        raise UserError(f"remote {number}: {exc}") from None


def _parse(data: Any) -> _Parsed:
    """The file's remotes; ``ValueError`` when the file as a whole is not a list of remotes."""
    if not isinstance(data, dict) or not isinstance(data.get("remotes"), list):
        raise ValueError('it is not an object with a "remotes" list')
    entries = data["remotes"]
    if len(entries) > MAX_REMOTES:
        raise ValueError(f"it lists {len(entries)} remotes, more than the {MAX_REMOTES} it can hold")
    remotes: list[SavedRemote] = []
    problems: list[str] = []
    for number, raw in enumerate(entries, start=1):
        try:
            entry = _entry(raw, number)
        except UserError as exc:
            problems.append(str(exc))
            continue
        if entry.same_as not in {r.same_as for r in remotes}:
            remotes.append(entry)
    return _Parsed(remotes, problems[0] if problems else "", len(problems))


@dataclass(frozen=True)
class SavedList:
    """The remembered remotes and, when the file was damaged, the one sentence to show once."""

    remotes: list[SavedRemote]
    notice: str = ""


def load_remotes(path: Path | None = None) -> SavedList:
    """The remembered remotes (none when there is no file). Never raises, never blocks."""
    path = path or remotes_path()
    loaded: Loaded[_Parsed] = load_json(
        path,
        _parse,
        what="list of remote machines",
        instead="the Devices panel starts without them; add them again with Add remote machine…",
        max_bytes=MAX_REMOTES_BYTES,
    )
    if loaded.value is None:
        return SavedList([], loaded.notice)
    parsed = loaded.value
    if not parsed.problem:
        return SavedList(parsed.remotes)
    # some entries were refused: keep the file as it was beside the list, which is rewritten
    # with the good ones (so the refused entry is not re-read, and re-announced, on every start)
    aside = damaged_name(path)
    try:
        shutil.copy2(path, aside)
        save_json(path, _to_file(parsed.remotes), create_folder=True)
    except (OSError, ValueError) as exc:
        log.warning("remote list %s not rewritten: %s", path, exc)
        return SavedList(
            parsed.remotes,
            f"{_left_out(parsed)} in {path} could not be used ({parsed.problem}); {_listed(parsed)}.",
        )
    return SavedList(
        parsed.remotes,
        f"{_left_out(parsed)} in {path} could not be used ({parsed.problem}); the file as it was is kept "
        f"in {aside}, and {_listed(parsed)}.",
    )


def _left_out(parsed: _Parsed) -> str:
    return "One remote machine" if parsed.refused == 1 else f"{parsed.refused} remote machines"


def _listed(parsed: _Parsed) -> str:
    kept = len(parsed.remotes)
    if kept == 0:
        return "none is listed"
    return "the other is listed" if kept == 1 else f"the other {kept} are listed"


def _to_file(remotes: list[SavedRemote]) -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "remotes": [r.to_dict() for r in remotes]}


def save_remotes(remotes: list[SavedRemote], path: Path | None = None) -> Path:
    """Write the whole list atomically. ``OSError`` when the data folder cannot be written."""
    return save_json(path or remotes_path(), _to_file(remotes), create_folder=True)


def add_remote(entry: SavedRemote, path: Path | None = None) -> list[SavedRemote]:
    """Append ``entry`` to the list on disk (re-read first) and return the new list.

    ``UserError`` when the same machine is already listed (the same destination and launcher) or
    the list is full; ``OSError`` when it cannot be written.
    """
    current = load_remotes(path).remotes
    if entry.same_as in {r.same_as for r in current}:
        how = f" via {entry.prefix}" if entry.prefix else ""
        raise UserError(f"{entry.destination}{how} is already in the list of remote machines")
    if len(current) >= MAX_REMOTES:
        raise UserError(f"the list already holds {MAX_REMOTES} remote machines; remove one first")
    remotes = [*current, entry]
    save_remotes(remotes, path)
    return remotes


def remove_remote(entry: SavedRemote, path: Path | None = None) -> list[SavedRemote]:
    """Drop ``entry`` from the list on disk (re-read first) and return the new list; removing one
    that is not there (another window removed it) is not an error. ``OSError`` when it cannot
    be written."""
    current = load_remotes(path).remotes
    remotes = [r for r in current if r.same_as != entry.same_as]
    if len(remotes) != len(current):
        save_remotes(remotes, path)
    return remotes


__all__ = [
    "REMOTES_FILE",
    "SavedList",
    "SavedRemote",
    "add_remote",
    "load_remotes",
    "make_saved",
    "remotes_path",
    "remove_remote",
    "save_remotes",
]
